"""cudalab: write CUDA C++ in Jupyter, run it on an emulated GPU (or a real one), see what the threads did.

The host API follows numba.cuda's names::

    mod = cudalab.compile(source)            # NVRTC -> PTX
    k = mod.get_kernel("vecAdd")             # or mod.vecAdd
    rec = k[grid, block](a, b, c, n)         # numpy arrays are copied in and back
    d = cudalab.to_device(x); d.copy_to_host()

Heavy pieces (NVRTC, the emulator, cuda.core) load on first use, so ``import cudalab`` is quick.
"""
from .errors import CompileError, CudaError, KernelError, LaunchError, UnsupportedError  # noqa: F401
from .jupyter import load_ipython_extension  # noqa: F401
from .runtime.arrays import DeviceArray, device_array, device_array_like, to_device  # noqa: F401
from .runtime.device import set_watchdog, use  # noqa: F401
from .runtime.module import Kernel, Module, compile  # noqa: F401
from .runtime.progress import set_progress  # noqa: F401
from .runtime.record import LaunchRecord, last_launch  # noqa: F401
from .runtime.streams import (Event, Stream, default_stream, device_attribute, device_limit,  # noqa: F401
                              device_properties, event, pinned, pinned_array, record_timeline,
                              set_device_limit, stream, timeline)
from .runtime.textures import cuda_array, mipmapped_array, surface, texture  # noqa: F401
from .device import set_device  # noqa: F401
from .device.occupancy import max_potential_block_size, occupancy  # noqa: F401
from .device.clusters import max_active_clusters, max_potential_cluster_size  # noqa: F401
from .pykernels import jit  # noqa: F401

__version__ = "0.1.0"


def check(*names):
    """Turn on compute-sanitizer-like checks ("racecheck", "initcheck"; memcheck and synccheck always
    run): ``cudalab.check("racecheck")`` for the session, ``with cudalab.check("racecheck"):`` for a
    block, ``cudalab.check()`` to turn them off. Findings print as warnings and go to ``rec.findings``.
    ``cudalab.check("memcheck")`` also stops a kernel at an out-of-bounds access that a GPU runs
    (one element past an array's end), as compute-sanitizer does; without it that is a warning."""
    from .analysis.sanitizer import check as _check
    return _check(*names)


def profile(kernel, grid, block, args=(), shared=0):
    """Run one launch on the emulator with the per-line profile (Nsight Compute's metric names);
    returns the LaunchRecord with ``metrics`` and ``reports["profile"]``. See analysis/report.py."""
    from .analysis.report import profile as _profile
    return _profile(kernel, grid, block, args, shared)


def synchronize():
    """Wait for all launched work (the emulator runs launches to completion, so this returns at once;
    on the timeline, the host waits for every stream: cudaDeviceSynchronize)."""
    from .runtime import device, streams
    streams.device_synchronized()
    dev = device.current()
    if dev.kind == "gpu":
        dev.backend.synchronize()


if __import__("os").environ.get("CUDALAB_NUMBA") == "1":     # numba.cuda programs run on cudalab
    from . import numba as _numba
    _numba.install_on_import()
