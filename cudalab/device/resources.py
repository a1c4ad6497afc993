"""What the real compiler gives a kernel: registers per thread, static shared memory, local memory.

The occupancy of a kernel depends on how many registers ptxas allocates, which the PTX does not
say (PTX has unlimited virtual registers). So we ask NVIDIA's compiler for real machine code:
NVRTC compiles the CUDA source with ``--gpu-architecture=sm_XX`` straight to a cubin (SASS in an
ELF file, no GPU or driver needed), and the cubin's ``.nv.info`` attributes carry, per kernel,
EIATTR_REGCOUNT (registers per thread) and EIATTR_FRAME_SIZE (local memory per thread); the size
of the ``.nv.shared.<kernel>`` section is its static shared memory. These are the numbers
``cuFuncGetAttribute`` (NUM_REGS, SHARED_SIZE_BYTES, LOCAL_SIZE_BYTES) reports on a real GPU.

PTX text needs ptxas instead of NVRTC: the nvidia-cuda-nvcc wheel's ptxas, else nvJitLink (pip
``nvidia-nvjitlink``).
"""
from __future__ import annotations

import struct
from dataclasses import dataclass
from functools import lru_cache

# .nv.info attribute ids and formats (the CUDA ELF "EIATTR" records).
EIATTR_FRAME_SIZE = 0x11
EIATTR_REGCOUNT = 0x2F
EIATTR_MAX_THREADS = 0x05      # __launch_bounds__(maxThreadsPerBlock): (x, y, z)
EIFMT_NVAL, EIFMT_BVAL, EIFMT_HVAL, EIFMT_SVAL = 1, 2, 3, 4
SHT_SYMTAB, SHT_NOBITS = 2, 8


@dataclass(frozen=True)
class Resources:
    """Per-thread and per-block resources of one compiled kernel."""

    registers: int             # 32-bit registers per thread
    static_shared: int         # bytes of __shared__ arrays declared in the kernel
    local: int                 # bytes of local memory per thread (stack frame: spills, local arrays)
    max_threads: int | None = None   # from __launch_bounds__, if given
    arch: str = ""

    def as_dict(self):
        return {"registers": self.registers, "static_shared": self.static_shared, "local": self.local}

    def __getitem__(self, key):       # resources(...)["registers"] works as well as .registers
        return self.as_dict()[key] if key != "max_threads" else self.max_threads


def _sections(elf: bytes):
    """(name, type, offset, size, link, info) of every section of an ELF64 little-endian file."""
    shoff, = struct.unpack_from("<Q", elf, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", elf, 0x3A)
    raw = [struct.unpack_from("<IIQQQQIIQQ", elf, shoff + i * shentsize) for i in range(shnum)]
    names_at = raw[shstrndx][4]
    out = []
    for name, typ, _flags, _addr, off, size, link, info, _align, _ent in raw:
        out.append((_cstr(elf, names_at + name), typ, off, size, link, info))
    return out


def _cstr(buf, at):
    return buf[at:buf.index(b"\0", at)].decode()


def _symbols(elf, secs):
    sym = next(s for s in secs if s[1] == SHT_SYMTAB)
    strings = secs[sym[4]][2]
    return [_cstr(elf, strings + struct.unpack_from("<I", elf, sym[2] + 24 * i)[0]) for i in range(sym[3] // 24)]


def _attributes(elf, off, size):
    """Yield (attribute, payload bytes) of an .nv.info section."""
    end = off + size
    while off < end:
        fmt, attr = elf[off], elf[off + 1]
        if fmt == EIFMT_SVAL:
            n, = struct.unpack_from("<H", elf, off + 2)
            yield attr, elf[off + 4:off + 4 + n]
            off += 4 + n
        else:                     # NVAL, BVAL, HVAL: the value sits in the record's last 2 bytes
            yield attr, elf[off + 2:off + 4]
            off += 4


def cubin_resources(cubin: bytes, kernel: str, reserved_shared: int = 1024) -> Resources:
    """Read one kernel's resources from a cubin (ELF). ``kernel``: its mangled name.

    From sm_90 on, ptxas puts the driver's reserved 1 KiB at the start of each kernel's shared
    section (the cubin then has ``.nv.shared.reserved.*``); that is not the kernel's own."""
    secs = _sections(cubin)
    syms = _symbols(cubin, secs)
    names = {s[0] for s in secs}
    if f".text.{kernel}" not in names:
        known = sorted(n[len(".text."):] for n in names if n.startswith(".text."))
        raise KeyError(f"the cubin has no kernel {kernel!r} (it has {', '.join(known)})")
    regs = frame = 0
    max_threads = None
    for name, _typ, off, size, _link, _info in secs:
        if name == ".nv.info":
            for attr, data in _attributes(cubin, off, size):
                if attr in (EIATTR_REGCOUNT, EIATTR_FRAME_SIZE):
                    sym, value = struct.unpack_from("<II", data)
                    if syms[sym] == kernel:
                        if attr == EIATTR_REGCOUNT:
                            regs = value
                        else:
                            frame = value
        elif name == f".nv.info.{kernel}":
            for attr, data in _attributes(cubin, off, size):
                if attr == EIATTR_MAX_THREADS:
                    x, y, z = struct.unpack_from("<III", data)
                    max_threads = x * max(y, 1) * max(z, 1)
    shared = next((s[3] for s in secs if s[0] == f".nv.shared.{kernel}"), 0)
    if shared and any(n.startswith(".nv.shared.reserved") for n in names):
        shared = max(shared - reserved_shared, 0)
    return Resources(regs, shared, frame, max_threads)


def _looks_like_ptx(text: str) -> bool:
    return ".version" in text and (".entry" in text or ".target" in text)


def _arch(arch) -> str:
    from .profiles import get
    return get(arch).arch


def resources(ptx_or_source, kernel_mangled: str, arch="sm_80", options=(), name_expressions=()) -> Resources:
    """Registers, static shared memory and local memory of one kernel as the real compiler builds it
    for ``arch`` (a profile name like "sm_90" or "H100").

    ``ptx_or_source`` is CUDA C++ (compiled by NVRTC) or PTX text (assembled by nvJitLink).
    ``kernel_mangled`` is the kernel's lowered name as in the PTX (``_Z6vecAddPKfS0_Pfi``); a
    plain ``extern "C"`` kernel's name is just its name."""
    sm = _arch(arch)
    if _looks_like_ptx(ptx_or_source):
        cubin = _ptx_to_cubin(ptx_or_source, sm)
    else:
        cubin = _source_to_cubin(ptx_or_source, sm, tuple(options), tuple(name_expressions))
    from .profiles import get
    r = cubin_resources(cubin, kernel_mangled, get(sm).shared_reserved_per_block or 1024)
    return Resources(r.registers, r.static_shared, r.local, r.max_threads, sm)


def ptx_cubin(ptx: str, arch="sm_80") -> bytes:
    """The cubin (SASS in an ELF file) the real assembler makes of ``ptx`` for ``arch`` (a profile
    name like "sm_90" or "H100")."""
    return _ptx_to_cubin(ptx, _arch(arch))


def kernel_resources(kernel, arch="sm_80") -> Resources:
    """Resources of a cudalab Kernel: its module's source recompiled to a cubin for ``arch`` (a Python
    kernel's PTX assembled, there being no C++ behind it)."""
    cs = kernel.module.compiled
    if getattr(kernel, "source_language", "cuda") == "python":
        return resources(cs.ptx, kernel.mangled, arch)
    opts = tuple(o for o in cs.options if not o.startswith(("-arch", "--gpu-architecture", "-lineinfo")))
    return resources(cs.source, kernel.mangled, arch, opts, tuple(cs.lowered))


@lru_cache(maxsize=64)
def _source_to_cubin(source: str, sm: str, options: tuple, names: tuple) -> bytes:
    from ..errors import CompileError
    from ..frontend.libnvrtc import compile_program
    from ..frontend.nvrtc import _name_expressions, include_dirs
    opts = [*options, f"--gpu-architecture={sm}"]
    if not any(o.startswith(("-std", "--std")) for o in opts):
        opts.append("-std=c++17")
    res = compile_program(source, "cell.cu", opts + [f"-I{d}" for d in include_dirs()],
                          _name_expressions(source, names), cubin=True)
    if not res.ok:
        raise CompileError(f"compiling for {sm} failed:\n{res.log}", log=res.log)
    return res.cubin


def _ptxas_path():
    """Where ptxas is: the nvidia-cuda-nvcc wheel's first (the version NVRTC's PTX is made for), else a
    CUDA toolkit's; None without either."""
    import os
    import shutil
    try:
        import nvidia
        wheel = [os.path.join(base, "cu13", "bin", "ptxas") for base in nvidia.__path__]
    except ImportError:
        wheel = []
    toolkits = [os.path.join(os.environ[v], "bin", "ptxas") for v in ("CUDA_HOME", "CUDA_PATH") if os.environ.get(v)]
    found = shutil.which("ptxas")
    for exe in [*wheel, *toolkits, *([found] if found else []), "/usr/local/cuda/bin/ptxas"]:
        if os.path.exists(exe):
            return exe
    return None


def _ptxas_cubin(ptx: str, sm: str):
    """The cubin from ptxas (Python kernels' PTX without nvJitLink), or None: the nvidia-cuda-nvcc wheel's,
    else a CUDA toolkit's (``CUDA_HOME``, ``PATH``, /usr/local/cuda), as on a GPU machine without the wheel,
    where nvJitLink's whole-program link refuses PTX that calls the device runtime (a grid sync)."""
    return ptxas(ptx, sm)[0]


def ptxas(ptx: str, sm: str) -> tuple:
    """(cubin or None, ptxas's complaint) of ``ptx`` for ``sm``; (None, "") where no ptxas is installed.
    A driver-API program's module goes through it as through a GPU driver's JIT, so a module the
    driver would refuse is refused too (CUDA_ERROR_INVALID_PTX), with ptxas's words."""
    import os
    import subprocess
    import tempfile
    exe = _ptxas_path()
    if exe is None:
        return None, ""
    with tempfile.TemporaryDirectory() as d:
        src, out = os.path.join(d, "module.ptx"), os.path.join(d, "module.cubin")
        with open(src, "w") as f:
            f.write(ptx)
        if not os.access(exe, os.X_OK):       # some installers drop the executable bit
            os.chmod(exe, os.stat(exe).st_mode | 0o111)
        # whole-program first, as a GPU's loader links a kernel: relocatable code (-c) leaves numba's
        # module-scope shared arrays to the linker, and the kernel's static shared memory reads 0;
        # PTX that calls functions defined elsewhere (linked files) assembles only relocatable
        complaint = ""
        for flags in ([], ["-c"]):
            r = subprocess.run([exe, f"-arch={sm}", *flags, "-o", out, src], capture_output=True, text=True, errors="replace")
            if not r.returncode:
                with open(out, "rb") as f:
                    return f.read(), ""
            complaint = complaint or (r.stderr or r.stdout).replace(src, "module.ptx").strip()
        return None, complaint


@lru_cache(maxsize=64)
def _ptx_to_cubin(ptx: str, sm: str) -> bytes:
    """ptxas of the nvcc wheel (a dependency) first, nvJitLink only without it: a notebook's Python
    matmul with two shared tiles got static_shared 0 from nvJitLink's linked cubin where ptxas's
    (and a GPU's cuFuncGetAttribute) give 2048; the same kernel outside the notebook gave 2048 from
    both, which is not understood, so the one route that was always right comes first."""
    cubin = _ptxas_cubin(ptx, sm)
    if cubin is not None:
        return cubin
    try:
        from cuda.bindings import nvjitlink
        handle = nvjitlink.create(1, [f"-arch={sm}"])
    except Exception as e:  # the library ships in the nvidia-nvjitlink wheel
        raise RuntimeError("reading registers from PTX needs ptxas (pip install nvidia-cuda-nvcc) or nvJitLink; "
                           "pass the CUDA C++ source instead, which NVRTC compiles without it") from e
    try:
        data = ptx.encode()
        nvjitlink.add_data(handle, nvjitlink.InputType.PTX, data, len(data), "kernel.ptx")
        nvjitlink.complete(handle)
        buf = bytearray(nvjitlink.get_linked_cubin_size(handle))
        nvjitlink.get_linked_cubin(handle, buf)
        return bytes(buf)
    finally:
        nvjitlink.destroy(handle)
