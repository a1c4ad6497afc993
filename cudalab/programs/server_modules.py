"""The server's requests for modules a driver-API program loads at run time (cuModuleLoad(Data)).

A mixin for ``programs.server.Server``. A loaded module is parsed and placed in device memory as an
emulator ``Program``, the same as the program's own PTX, and its kernels become core ``Function``s
in the server's one table, named ``@<module>:<mangled name>``: the shim's launch request, the
parameter layout, occupancy and attributes then treat them exactly as the program's own kernels
(one runtime, one launch path). Unloading drops the module's functions, and its ``Program`` gives
its globals back when the last reference goes.
"""
from __future__ import annotations

import itertools

from ..emulator.engine import Program
from ..errors import CudaError
from ..ptx import parse
from ..runtime.core import Function
from . import images
from .server_textures import _int


class ModuleRequests:
    """op_* handlers for cuModuleLoad(Data)(Ex), cuModuleGetFunction/GetGlobal and cuModuleUnload."""

    _module_ids = itertools.count(1)

    @property
    def modules(self) -> dict:
        if not hasattr(self, "_modules"):
            self._modules = {}
        return self._modules

    def _module(self, handle) -> Program:
        program = self.modules.get(_int(handle))
        if program is None:
            raise CudaError(f"module handle {handle} is not a loaded module (unloaded, or never loaded).",
                            "cudaErrorInvalidResourceHandle")
        return program

    def op_module_load(self, blob=b""):
        """The image's bytes come as the request's blob; answers the module's handle."""
        ptx = images.ptx_of(blob)
        from ..device import current
        from ..device.resources import ptxas
        major, minor = current().cc
        cubin, complaint = ptxas(ptx, f"sm_{major}{minor}")     # as a GPU driver's JIT does
        if complaint:
            raise CudaError(f"the module's PTX does not assemble for sm_{major}{minor} (a GPU's driver refuses it "
                            f"too):\n{complaint}", "cudaErrorInvalidPtx")
        try:
            module = parse(ptx.replace(".attribute(.managed) ", ""))
        except Exception as e:          # the PTX parser's own complaint, worded for the student
            raise CudaError(f"cudalab could not read the module's PTX: {e}", "cudaErrorInvalidPtx") from None
        program = self.ctx.bind(Program(module, self.program.memory))
        handle = next(self._module_ids)
        self.modules[handle] = program
        program.registers = {}
        if cubin is not None:
            from ..device.resources import cubin_resources
            for e in module.entries:
                try:
                    program.registers[e.name] = cubin_resources(cubin, e.name, 1024).registers
                except Exception:       # (a kernel ptxas left out of a relocatable cubin)
                    pass
        return (handle,)

    def op_module_func(self, handle, name, blob=b""):
        program = self._module(handle)
        f = program.module.functions.get(name)
        if f is None or name not in {e.name for e in program.module.entries}:
            raise CudaError(f"the module has no kernel named {name} (cuModuleGetFunction takes the name as the PTX "
                            "has it: a C++ kernel's mangled name, or declare it extern \"C\").",
                            "cudaErrorSymbolNotFound")
        key = f"@{_int(handle)}:{name}"
        if key not in self.functions:
            self.functions[key] = Function(program, name, name, [(p.size, p.align) for p in f.params],
                                           getattr(program, "registers", {}).get(name, 32))
        return ()

    def op_module_global(self, handle, name, blob=b""):
        program = self._module(handle)
        addr = program.globals.get(name)
        if addr is None:
            raise CudaError(f"the module has no __device__ or __constant__ variable named {name}.",
                            "cudaErrorSymbolNotFound")
        return addr, max(program.module.variables[name].size, 1)

    def op_module_unload(self, handle, blob=b""):
        self._module(handle)
        del self.modules[_int(handle)]
        prefix = f"@{_int(handle)}:"
        for key in [k for k in self.functions if k.startswith(prefix)]:
            del self.functions[key]

    def op_address_range(self, ptr, blob=b""):
        """cuMemGetAddressRange: the live allocation of device memory holding ``ptr`` (cudaMalloc's, a
        module's or the program's __device__ variable)."""
        a = self.program.memory.find(_int(ptr))
        if a is None or a.freed or not a.address <= _int(ptr) < a.address + max(a.size, 1):
            raise CudaError(f"{ptr} is not in any allocation of device memory (cuMemGetAddressRange).",
                            "cudaErrorSymbolNotFound")
        return a.address, a.size

    def op_link(self, count, blob=b""):
        """cuLinkComplete: the PTX inputs (each ending in a NUL) joined into one module's PTX, as a program's
        own .cu files are (ptx/link.py); answered as text."""
        from ..ptx.link import PtxLinkError, link
        inputs = [p.decode(errors="replace") for p in blob.split(b"\0") if p.strip()]
        if len(inputs) != int(count):
            raise CudaError("cuLinkComplete: a PTX input was empty.", "cudaErrorInvalidValue")
        try:
            return (), (inputs[0] if len(inputs) == 1 else link(inputs)).encode()
        except PtxLinkError as e:
            raise CudaError(f"cuLinkComplete could not join the PTX inputs: {e}", "cudaErrorInvalidPtx") from None
