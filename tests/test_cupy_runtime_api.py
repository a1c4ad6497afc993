"""cupy.cuda.runtime by address, as lessons that show the CUDA runtime under CuPy's arrays use it:
malloc, memcpy between a numpy array's ctypes address and device memory, memset, streams and events
by handle, device attributes, and CuPy's CUDARuntimeError (CUDA's number and name) for a misuse."""
import numpy as np
import pytest


def test_malloc_memcpy_and_a_raw_kernel_on_the_address(cp):
    rt = cp.cuda.runtime
    host = np.arange(16, dtype=np.float32)
    ptr = rt.malloc(host.nbytes)
    rt.memcpy(ptr, host.ctypes.data, host.nbytes, rt.memcpyHostToDevice)
    view = cp.ndarray(host.shape, cp.float32, cp.cuda.MemoryPointer(cp.cuda.UnownedMemory(ptr, host.nbytes, None), 0))
    square = cp.RawKernel(r'''
    extern "C" __global__ void square(float *x, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) x[i] = x[i] * x[i];
    }''', "square")
    square((1,), (32,), (view, np.int32(16)))
    back = np.zeros_like(host)
    rt.memcpy(back.ctypes.data, ptr, back.nbytes, rt.memcpyDefault)      # the direction from the addresses
    assert back.tolist() == (host * host).tolist()
    rt.memset(ptr, 0, 8)                                                  # the first two floats
    rt.memcpy(back.ctypes.data, ptr, back.nbytes, rt.memcpyDeviceToHost)
    assert back[:3].tolist() == [0.0, 0.0, 4.0]
    rt.free(ptr)


def test_a_copy_of_the_wrong_kind_is_cudas_invalid_value(cp):
    rt = cp.cuda.runtime
    host = np.ones(4, np.float32)
    ptr = rt.malloc(host.nbytes)
    with pytest.raises(rt.CUDARuntimeError) as info:
        rt.memcpy(ptr, host.ctypes.data, host.nbytes, rt.memcpyDeviceToHost)    # dst and src swapped
    assert info.value.status == 1
    assert str(info.value).startswith("cudaErrorInvalidValue: invalid argument")
    assert "the source is not device memory" in str(info.value)
    with pytest.raises(rt.CUDARuntimeError):
        rt.memcpy(ptr, host.ctypes.data, 1 << 20, rt.memcpyHostToDevice)       # past the allocation
    rt.free(ptr)


def test_streams_and_events_by_handle_time_an_asynchronous_copy(cp):
    rt = cp.cuda.runtime
    pinned = rt.mallocHost(1 << 20)
    ptr = rt.malloc(1 << 20)
    stream, start, end = rt.streamCreate(), rt.eventCreate(), rt.eventCreate()
    rt.eventRecord(start, stream)
    rt.memcpyAsync(ptr, pinned, 1 << 20, rt.memcpyHostToDevice, stream)
    rt.eventRecord(end, stream)
    rt.eventSynchronize(end)
    assert rt.eventElapsedTime(start, end) > 0
    assert rt.streamQuery(stream) == 0
    rt.streamDestroy(stream)
    with pytest.raises(rt.CUDARuntimeError) as info:
        rt.streamSynchronize(stream)
    assert info.value.status == 400          # cudaErrorInvalidResourceHandle
    rt.eventDestroy(start)
    rt.eventDestroy(end)
    rt.freeHost(pinned)
    rt.free(ptr)


def test_device_attributes_by_number_agree_with_the_device(cp):
    rt = cp.cuda.runtime
    sms = rt.deviceGetAttribute(rt.cudaDevAttrMultiProcessorCount, 0)
    assert sms == cp.cuda.Device(0).attributes["MultiProcessorCount"]
    props = rt.getDeviceProperties(0)
    assert props["multiProcessorCount"] == sms and isinstance(props["name"], bytes)
    assert props["maxThreadsPerBlock"] == rt.deviceGetAttribute(rt.cudaDevAttrMaxThreadsPerBlock, 0)
    with pytest.raises(rt.CUDARuntimeError):
        rt.deviceGetAttribute(100000, 0)


def test_a_blank_kernel_name_is_cupys_value_error_when_the_kernel_is_made(cp):
    """An exercise that leaves ElementwiseKernel's four strings blank fails where it makes the
    kernel, in CuPy's words (the H200's CuPy 14: 'Invalid kernel name: ""')."""
    with pytest.raises(ValueError, match='Invalid kernel name: ""'):
        cp.ElementwiseKernel('', '', '', '')
    with pytest.raises(ValueError, match='Invalid kernel name: "my kernel"'):
        cp.ReductionKernel('T x', 'T y', 'x', 'a + b', 'y = a', '0', 'my kernel')


def test_cupys_runtime_error_imports_from_where_cupy_defines_it(cp):
    from cupy_backends.cuda.api.runtime import CUDARuntimeError
    assert CUDARuntimeError is cp.cuda.runtime.CUDARuntimeError
    with pytest.raises(CUDARuntimeError):
        cp.cuda.runtime.free(12345)              # not an address malloc gave


def test_a_memory_pointer_copies_by_host_address(cp):
    """The low-level spelling of copies: a MemoryPointer from cupy.cuda.alloc (or a managed pool) filled
    from a numpy array's address, read back, copied and set."""
    import ctypes
    cp.cuda.set_allocator(cp.cuda.MemoryPool(cp.cuda.malloc_managed).malloc)
    host = np.arange(4, dtype=np.float32)
    first = cp.cuda.alloc(16)
    first.copy_from_host(host.ctypes.data_as(ctypes.c_void_p), 16)
    assert cp.ndarray((4,), cp.float32, first).get().tolist() == [0, 1, 2, 3]
    second = cp.cuda.alloc(16)
    second.copy_from_device(first, 16)
    second.memset(0, 8)
    back = np.ones(4, np.float32)
    second.copy_to_host(back.ctypes.data, 16)
    assert back.tolist() == [0, 0, 2, 3]
    stream = cp.cuda.Stream()
    second.copy_from_host_async(host.ctypes.data, 16, stream)
    stream.synchronize()
    assert cp.ndarray((4,), cp.float32, second).get().tolist() == [0, 1, 2, 3]


def test_a_setup_check_reads_nvrtcs_version_and_the_bus_id(cp):
    major, minor = cp.cuda.nvrtc.getVersion()
    assert major >= 12 and minor >= 0
    assert cp.cuda.Device(0).pci_bus_id == "0000:00:00.0"
