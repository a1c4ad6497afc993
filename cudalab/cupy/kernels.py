"""CuPy's user kernels on cudalab: ``RawKernel``/``RawModule`` (CUDA C++ compiled by cudalab's NVRTC
and run on the emulator, like a ``%%cuda`` cell's kernels) and ``ElementwiseKernel``, whose C++
loop body is put into a grid-stride kernel written here, as CuPy writes one.

An ElementwiseKernel's parameters are ``"float32 x, T y"``: a numpy type or a type placeholder (T,
bound from the arguments' dtypes), ``raw`` for an array the body indexes itself (``x[i]``,
``_ind.size()``). Arrays of different shapes broadcast, as in numpy; scalars are passed by value.
"""
from __future__ import annotations

import os
import re

import numpy as np

from ..errors import UnsupportedError
from ..runtime.arrays import DeviceArray
from ..runtime.letgo import lets_arguments_go

# numpy's type names as CUDA C++ spells them (CuPy's own mapping)
C_TYPES = {"bool": "bool", "int8": "signed char", "uint8": "unsigned char", "int16": "short",
           "uint16": "unsigned short", "int32": "int", "uint32": "unsigned int", "int64": "long long",
           "uint64": "unsigned long long", "float32": "float", "float64": "double",
           "complex64": "complex<float>", "complex128": "complex<double>"}
# CuPy's headers a kernel may include (<cupy/complex.cuh>), in cudalab's own versions
INCLUDE = os.path.join(os.path.dirname(__file__), "include")


_OLD_STANDARD = re.compile(r"^--?std=c\+\+(03|11|14)$")


def _standard(code: str, options) -> tuple:
    """The options, with C++17 for a kernel that includes <cupy/complex.cuh> but asks for C++11 or 14:
    CuPy's own header compiles there, cudalab's is libcu++'s complex, which needs C++17."""
    if "cupy/complex.cuh" not in code:
        return tuple(options)
    return tuple("-std=c++17" if _OLD_STANDARD.match(str(o)) else o for o in options)


# what CuPy's carray.cuh, which its generated kernels include (a RawKernel's source does not), defines
# for them: M_PI (CuPy 14.2 on an H200: an ElementwiseKernel's and a ReductionKernel's code may use it,
# a RawKernel's may not)
_CARRAY_DEFINES = "#ifndef M_PI\n#define M_PI 3.1415926535897932384626433832795\n#endif\n"


def _generated_header(c_types, *code) -> str:
    """What CuPy puts before the code of the kernels it writes: carray.cuh's M_PI, and the include line for
    complex values, by type or in the user's code (a preamble's ``complex<float>``)."""
    wanted = any("complex" in t for t in c_types) or any("complex<" in (c or "") for c in code)
    return _CARRAY_DEFINES + ("#include <cupy/complex.cuh>\n" if wanted else "")


def _launch(kernel, grid, block, args, shared_mem, stream):
    from .cuda import get_current_stream
    grid = tuple(grid) if isinstance(grid, (tuple, list)) else (grid,)
    block = tuple(block) if isinstance(block, (tuple, list)) else (block,)
    kernel[grid, block, get_current_stream() if stream is None else stream, int(shared_mem)](*args)


class RawModule:
    """CUDA C++ source (``code=`` or ``path=``) with its kernels: ``get_function(name)``."""

    def __init__(self, code=None, *, path=None, options=(), backend="nvrtc", translate_cucomplex=False,
                 enable_cooperative_groups=False, name_expressions=None, jitify=False):
        from ..runtime.module import compile as compile_cuda
        if code is None:
            with open(path) as f:
                code = f.read()
        self.module = compile_cuda(code, options=(*_standard(code, options), f"-I{INCLUDE}"),
                                   name_expressions=tuple(name_expressions or ()))

    def get_function(self, name) -> "RawKernel":
        return RawKernel(None, name, _kernel=self.module.get_kernel(name))

    def compile(self, log_stream=None):
        """CuPy compiles a module on first use, or here; cudalab compiled it when it was made."""

    def get_global(self, name):
        """CuPy's pointer to a ``__constant__`` or ``__device__`` variable (its C++ name): a MemoryPointer
        (its ``mem.size`` is 0, as CuPy leaves it: the driver does not say); ``cupy.ndarray(shape, dtype,
        memptr=ptr)`` views it, so ``a[:] = value`` sets the variable for the module's kernels."""
        from . import cuda
        variable = self.module.get_global(name)
        return cuda.MemoryPointer(cuda.UnownedMemory(variable.device_ptr, 0, owner=self), 0)


class RawKernel:
    """One ``__global__`` function of CUDA C++ source, launched as CuPy does:
    ``kernel(grid, block, (arg, ...), shared_mem=0, stream=None)``. Compiled at the first call."""

    def __init__(self, code, name, options=(), backend="nvrtc", translate_cucomplex=False,
                 enable_cooperative_groups=False, jitify=False, *, _kernel=None):
        self.code, self.name, self.options, self._kernel = code, name, tuple(options), _kernel

    @property
    def kernel(self):
        if self._kernel is None:
            self._kernel = RawModule(code=self.code, options=self.options).module.get_kernel(self.name)
        return self._kernel

    @lets_arguments_go
    def __call__(self, grid, block, args, *, shared_mem=0, stream=None, enable_cooperative_groups=False):
        kernel = self.kernel
        _launch(kernel, grid, block, [_by_value(a) for a in _arguments(self.name, args, len(kernel.func.params))],
                shared_mem, stream)

    def compile(self, log_stream=None):
        """CuPy's ahead-of-first-launch compile: the kernel is compiled now."""
        self.kernel

    @property
    def attributes(self) -> dict:
        """CuPy's kernel attributes (cudaFuncGetAttributes, in CuPy's names), the emulated device's answers."""
        from ..runtime import device as devices, streams
        k = self.kernel
        core = streams.context().func_attributes(k._function_on(k.module.program(devices.get("emu"))))
        return {"binary_version": core["binaryVersion"], "cache_mode_ca": 0,
                **{name: core[key] for name, key in _ATTRIBUTES.items()}}

    def _set(self, name, value):
        """cudaFuncSetAttribute, as CuPy's settable attributes do."""
        self.kernel.set_attribute(_SETTABLE[name], value)


# CuPy's names of cudaFuncAttributes and the runtime's; the two a program may set, and their numbers
_ATTRIBUTES = {"const_size_bytes": "constSizeBytes", "local_size_bytes": "localSizeBytes",
               "max_dynamic_shared_size_bytes": "maxDynamicSharedSizeBytes",
               "max_threads_per_block": "maxThreadsPerBlock", "num_regs": "numRegs",
               "preferred_shared_memory_carveout": "preferredShmemCarveout", "ptx_version": "ptxVersion",
               "shared_size_bytes": "sharedSizeBytes"}
_SETTABLE = {"max_dynamic_shared_size_bytes": "MaxDynamicSharedMemorySize",
             "preferred_shared_memory_carveout": "PreferredSharedMemoryCarveout"}
for _name in (*_ATTRIBUTES, "binary_version", "cache_mode_ca"):
    setattr(RawKernel, _name, property(lambda self, n=_name: self.attributes[n],
                                       (lambda self, value, n=_name: self._set(n, value)) if _name in _SETTABLE else None))


class ExtraArgumentsWarning(UserWarning):
    """A raw kernel was given more arguments than it has parameters (the launch reads the first ones)."""


def _arguments(name, args, nparams) -> list:
    """The arguments of a raw kernel's launch as CuPy passes them: CuPy iterates ``args`` and hands
    cuLaunchKernel a pointer to each; the driver reads as many as the kernel has parameters and
    ignores the rest. So ``args=(x_gpu)`` -- the array itself, not the tuple ``(x_gpu,)`` -- runs on
    a GPU: its first element's address is the array's. It runs so here, with a warning that says
    what was meant; fewer arguments than parameters stay an error (a GPU would read garbage)."""
    from . import ndarray
    if isinstance(args, ndarray):                # CuPy iterates its first axis: views, not copies
        items = [args._view(args.shape[1:], args.strides[1:], offset=k * args.strides[0])
                 for k in range(min(len(args), nparams))]
        given, hint = len(args), (f" args=(x) is the array x itself, whose elements CuPy passes one "
                                  f"by one; a tuple of one is written args=(x,).")
    else:
        items = list(args)
        given, hint = len(items), ""
    if given > nparams:
        import warnings
        warnings.warn(f"{name} has {nparams} parameter{'s' * (nparams != 1)} but was given {given} arguments: "
                      f"the launch reads the first {nparams}, as CUDA's does.{hint}", ExtraArgumentsWarning,
                      stacklevel=3)
        items = items[:nparams]
    return items


def _by_value(a):
    """A raw kernel's argument as CuPy passes it: a numpy array of one element goes by value, its bytes
    (a struct such as ``rhs.view(double3)`` for a ``double3`` parameter, or a number); a larger one is
    CuPy's TypeError, since the kernel would want device memory (a cupy array) there."""
    if isinstance(a, complex):
        return np.complex128(a)     # CuPy's scalar for a Python complex (a complex<double> parameter)
    if hasattr(a, "_cupy_kernel_argument"):
        return a._cupy_kernel_argument()        # a texture or surface object: its handle
    if not isinstance(a, np.ndarray):
        return a
    if a.size == 1:
        return a.reshape(())[()]
    raise TypeError(f"You are trying to pass a numpy.ndarray of shape {a.shape} as a kernel parameter. Only "
                    "numpy.ndarrays of size one can be passed by value. If you meant to pass a pointer to "
                    "__global__ memory, you need to pass a cupy.ndarray instead (cupy.asarray(a)).")


_PARAM = re.compile(r"^\s*(raw\s+)?(\w+)\s+(\w+)\s*$")


def _params(spec: str) -> list:
    """``"raw T x, float32 y"`` as [(raw, type name, name), ...]."""
    out = []
    for p in filter(str.strip, spec.split(",")):
        m = _PARAM.match(p)
        if m is None:
            raise ValueError(f"cannot read the kernel parameter {p.strip()!r}: write it as 'float32 x', 'T x' or 'raw T x'")
        out.append((bool(m.group(1)), m.group(2), m.group(3)))
    return out


def _dtype(type_name, types) -> np.dtype:
    """A parameter's dtype: its numpy type, or what its placeholder is bound to."""
    return np.dtype(type_name) if type_name in C_TYPES else types[type_name]


def _bind(kernel, params, args) -> dict:
    """The type placeholders' dtypes, from the first argument each one is given (outputs too)."""
    types = {}
    for (_, t, name), a in zip(params, args):
        if t not in C_TYPES and t not in types:
            types[t] = a.dtype if hasattr(a, "dtype") else np.result_type(a)
    missing = [t for _, t, _ in params if t not in C_TYPES and t not in types]
    if missing:
        raise TypeError(f"{kernel}: the type {missing[0]} of an output is given by no input; pass the output array")
    for t, dt in types.items():
        if dt.name not in C_TYPES:
            raise UnsupportedError(f"{kernel}: {t} is {dt}, which cudalab writes in C++ only for "
                                   f"{', '.join(C_TYPES)}")
    return types


def _check_name(name):
    """CuPy names the kernel it writes after ``name``, so it must be a C identifier (an exercise's
    blank ``''`` is CuPy's ValueError at once, as on a GPU)."""
    if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        raise ValueError(f'Invalid kernel name: "{name}"')


class ElementwiseKernel:
    """CuPy's elementwise kernel: ``operation`` runs once per element ``i`` with each parameter bound to
    its element (``z = x * y``); called as ``kernel(x, y)`` or ``kernel(x, y, z)``; returns the output."""

    def __init__(self, in_params, out_params, operation, name="kernel", reduce_dims=True, preamble="",
                 no_return=False, return_tuple=False, loop_prep="", after_loop="", options=()):
        _check_name(name)
        self.inputs, self.outputs = _params(in_params), _params(out_params)
        self.operation, self.name, self.preamble = operation, name, preamble
        self.loop_prep, self.after_loop, self.options = loop_prep, after_loop, tuple(options)
        self.no_return, self.return_tuple = no_return, return_tuple
        self._compiled: dict = {}

    @lets_arguments_go
    def __call__(self, *args, size=None, block_size=128, stream=None):
        from . import _device, _host, ndarray
        n_in = len(self.inputs)
        if len(args) not in (n_in, n_in + len(self.outputs)):
            raise TypeError(f"{self.name} takes {n_in} inputs (and optionally {len(self.outputs)} outputs), "
                            f"not {len(args)} arguments")
        ins, outs = list(args[:n_in]), list(args[n_in:])
        host = next((a for a in args if isinstance(a, np.ndarray)), None)
        if host is not None:            # CuPy 14.2's words; the kernel runs on device memory only
            raise TypeError(f"Unsupported type {type(host)}: {self.name} was given a numpy array of shape "
                            f"{host.shape}; pass a cupy array (cp.asarray(a)), or a scalar")
        arrays = [a for (raw, _, _), a in zip(self.inputs, ins) if isinstance(a, DeviceArray) and not raw]
        if not (arrays or outs or size is not None):
            raise ValueError(f"Loop size is undecided: {self.name} was given no CuPy array (scalars say "
                             "nothing of the loop's length); pass cupy arrays (cp.asarray(a)) or size=")
        shape = np.broadcast_shapes(*(a.shape for a in arrays + outs)) if arrays or outs else (int(size),)
        types = _bind(self.name, self.inputs + self.outputs, ins + outs)
        for k, ((raw, _, _), a) in enumerate(zip(self.inputs, ins)):      # numpy's broadcasting, made real
            if isinstance(a, DeviceArray) and not raw and (a.shape != shape or not a.is_c_contiguous()):
                ins[k] = _device(np.broadcast_to(_host(a), shape), order="C")
        if not outs:
            outs = [ndarray(shape, _dtype(t, types), _filled=True) for _, t, _ in self.outputs]
        kinds = tuple(isinstance(a, DeviceArray) for a in ins)
        kernel = self._kernel(kinds, tuple(sorted(types.items())), ins)
        n = int(np.prod(shape))
        values = [a if isinstance(a, DeviceArray) else np.dtype(_dtype(t, types)).type(a)
                  for (_, t, _), a in zip(self.inputs, ins)]
        blocks = max(1, min(-(-n // block_size), 65535))
        _launch(kernel, blocks, block_size, [*values, *outs, np.int64(n)], 0, stream)
        if self.no_return:
            return None
        return tuple(outs) if self.return_tuple or len(outs) > 1 else outs[0]

    def _kernel(self, kinds, types, ins):
        key = (kinds, types)
        if key not in self._compiled:
            types = dict(types)
            c = {t: C_TYPES[dt.name] for t, dt in types.items()}
            c.update({t: C_TYPES[t] for _, t, _ in self.inputs + self.outputs if t in C_TYPES})
            params, loads = [], []
            for (raw, t, name), is_array in zip(self.inputs, kinds):
                if is_array:
                    params.append(f"{'' if raw else 'const '}{c[t]}* _p_{name}")
                    loads.append(f"{c[t]}* {name} = ({c[t]}*)_p_{name};" if raw else f"const {c[t]} {name} = _p_{name}[i];")
                else:
                    params.append(f"{c[t]} {name}")
            for raw, t, name in self.outputs:
                params.append(f"{c[t]}* _p_{name}")
                loads.append(f"{c[t]}* {name} = _p_{name};" if raw else f"{c[t]} &{name} = _p_{name}[i];")
            typedefs = "".join(f"typedef {ct} {t};\n" for t, ct in c.items() if t not in C_TYPES)
            source = (f"{_generated_header(c.values(), self.preamble, self.operation, self.loop_prep, self.after_loop)}"
                      f"{typedefs}{self.preamble}\n"
                      "struct _Index { long long n; __device__ long long size() const { return n; } };\n"
                      f'extern "C" __global__ void {self.name}({", ".join(params)}, long long _n) {{\n'
                      "    _Index _ind = {_n};\n"
                      f"    {self.loop_prep}\n"
                      "    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < _n;\n"
                      "         i += (long long)blockDim.x * gridDim.x) {\n"
                      + "".join(f"        {line}\n" for line in loads)
                      + f"        {self.operation};\n    }}\n    {self.after_loop}\n}}\n")
            self._compiled[key] = RawKernel(source, self.name, self.options).kernel
        return self._compiled[key]


class ReductionKernel:
    """CuPy's reduction kernel: each input element is mapped (``map_expr``), the values are combined
    pairwise (``reduce_expr`` over ``a`` and ``b``, starting from ``identity``) and the result written
    (``post_map_expr``, ``a`` the reduced value). One block per output value: each thread combines a
    strided share of the reduced elements, then the block combines its threads' values in shared
    memory, as CuPy's generated kernel does."""

    THREADS = 256

    def __init__(self, in_params, out_params, map_expr, reduce_expr, post_map_expr, identity, name="reduce_kernel",
                 reduce_type=None, reduce_dims=True, preamble="", options=()):
        _check_name(name)
        self.inputs, self.outputs = _params(in_params), _params(out_params)
        self.map_expr, self.reduce_expr, self.post_map_expr = map_expr, reduce_expr, post_map_expr
        self.identity, self.name, self.reduce_type = identity, name, reduce_type
        self.preamble, self.options = preamble, tuple(options)
        self._compiled: dict = {}

    @lets_arguments_go
    def __call__(self, *args, out=None, axis=None, keepdims=False, stream=None):
        from . import _device, _host, ndarray
        ins = list(args[:len(self.inputs)])
        outs = list(args[len(self.inputs):]) or ([out] if out is not None else [])
        arrays = [a for (raw, _, _), a in zip(self.inputs, ins) if isinstance(a, DeviceArray)]
        shape = np.broadcast_shapes(*(a.shape for a in arrays))
        axes = tuple(range(len(shape))) if axis is None else tuple(k % len(shape) for k in np.atleast_1d(axis))
        kept = [k for k in range(len(shape)) if k not in axes]
        order = kept + list(axes)             # the reduced axes last: each output's elements are consecutive
        for k, a in enumerate(ins):
            if isinstance(a, (DeviceArray, np.ndarray)):
                values = np.broadcast_to(_host(a) if isinstance(a, DeviceArray) else a, shape)
                ins[k] = _device(np.transpose(values, order), order="C")
        out_shape = tuple(1 if k in axes else n for k, n in enumerate(shape)) if keepdims else tuple(shape[k] for k in kept)
        types = _bind(self.name, self.inputs + self.outputs, ins + outs)
        if not outs:
            outs = [ndarray(out_shape, _dtype(t, types), _filled=True) for _, t, _ in self.outputs]
        kinds = tuple(isinstance(a, DeviceArray) for a in ins)
        kernel = self._kernel(kinds, tuple(sorted(types.items())))
        n_out = int(np.prod(out_shape))
        m = int(np.prod([shape[k] for k in axes]))
        values = [a if isinstance(a, DeviceArray) else np.dtype(_dtype(t, types)).type(a)
                  for (_, t, _), a in zip(self.inputs, ins)]
        _launch(kernel, max(1, min(n_out, 65535)), self.THREADS, [*values, *outs, np.int64(m), np.int64(n_out)], 0,
                stream)
        return outs[0] if len(outs) == 1 else tuple(outs)

    def _kernel(self, kinds, types):
        key = (kinds, types)
        if key not in self._compiled:
            types = dict(types)
            c = {t: C_TYPES[dt.name] for t, dt in types.items()}
            c.update({t: C_TYPES[t] for _, t, _ in self.inputs + self.outputs if t in C_TYPES})
            reduce_type = C_TYPES.get(self.reduce_type, self.reduce_type) or c[self.outputs[0][1]]
            params, loads, stores = [], [], []
            for (raw, t, name), is_array in zip(self.inputs, kinds):
                if is_array:
                    params.append(f"const {c[t]}* _p_{name}")
                    loads.append(f"const {c[t]} {name} = _p_{name}[i];")
                else:
                    params.append(f"{c[t]} {name}")
            for raw, t, name in self.outputs:
                params.append(f"{c[t]}* _p_{name}")
                stores.append(f"{c[t]} &{name} = _p_{name}[_j];")
            typedefs = "".join(f"typedef {ct} {t};\n" for t, ct in c.items() if t not in C_TYPES)
            # CuPy's own macros: the expressions' a and b are their parameters, whatever the inputs are named
            header = _generated_header([*c.values(), reduce_type], self.preamble, self.map_expr, self.reduce_expr,
                                     self.post_map_expr)
            source = (f"{header}"
                      f"{typedefs}typedef {reduce_type} type_reduce;\n"
                      f"{self.preamble}\n"
                      f"#define REDUCE(a, b) ({self.reduce_expr})\n#define POST_MAP(a) ({self.post_map_expr})\n"
                      f'extern "C" __global__ void {self.name}({", ".join(params)}, long long _m, long long _n_out) {{\n'
                      # raw bytes: a __shared__ array of a type with a constructor (complex) is not allowed
                      f"    __shared__ __align__(16) unsigned char _shared_bytes[{self.THREADS} * sizeof(type_reduce)];\n"
                      "    type_reduce* _shared = (type_reduce*)_shared_bytes;\n"
                      "    for (long long _j = blockIdx.x; _j < _n_out; _j += gridDim.x) {\n"
                      f"        type_reduce _acc = (type_reduce)({self.identity});\n"
                      "        for (long long _k = threadIdx.x; _k < _m; _k += blockDim.x) {\n"
                      "            long long i = _j * _m + _k;\n"
                      + "".join(f"            {line}\n" for line in loads)
                      + f"            _acc = REDUCE(_acc, (type_reduce)({self.map_expr}));\n"
                      "        }\n"
                      "        _shared[threadIdx.x] = _acc;\n        __syncthreads();\n"
                      "        for (int _s = blockDim.x / 2; _s > 0; _s >>= 1) {\n"
                      "            if (threadIdx.x < _s) _shared[threadIdx.x] = REDUCE(_shared[threadIdx.x], _shared[threadIdx.x + _s]);\n"
                      "            __syncthreads();\n        }\n"
                      "        if (threadIdx.x == 0) {\n"
                      + "".join(f"            {line}\n" for line in stores)
                      + "            POST_MAP(_shared[0]);\n        }\n        __syncthreads();\n    }\n}\n")
            self._compiled[key] = RawKernel(source, self.name, self.options).kernel
        return self._compiled[key]
