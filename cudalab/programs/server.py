"""The emulator's side of a running program: answers the shim's runtime-API requests.

One request per API call (``op arg arg ...`` plus bytes), one reply (``code number ...`` plus
bytes). Device memory is a memfd both processes map: here it backs the emulator's
``DeviceMemory`` arena, in the program it is mapped at the same device addresses
(``GLOBAL_BASE``), so copies never cross the socket. Launches run on the emulator at once; the
times a program measures with events come from ``timeline.Timeline``.
"""
from __future__ import annotations

import mmap
import os
import socket
import struct
import subprocess
import time
from dataclasses import dataclass, field, replace

import numpy as np

from ..emulator.engine import Program, launch, shared_layout, stack_size
from ..emulator.memory import GLOBAL_BASE, DeviceMemory
from ..errors import CudaError, KernelError
from ..ptx import parse
from ..runtime import device as devices
from ..runtime.launch import DEFAULT_LIMITS, check_config
from ..runtime.record import LaunchRecord
from .errors import CODE, STICKY, code_of
from .props import PROFILE, props_text
from .server_textures import TextureRequests
from .timeline import Timeline, Stream

ARENA_SIZE = 4 << 30
H2H, H2D, D2H, D2D, DEFAULT = range(5)
LEGACY, PER_THREAD = 1, 2          # cudaStreamLegacy / cudaStreamPerThread handles
FIRST_HANDLE = 16
EVENT_DISABLE_TIMING = 2
SYNCHRONIZING = {"device_sync", "stream_sync", "event_sync", "host_func"}


class Reply(Exception):
    """A request answered with an error code (and a message for the student's stderr)."""

    def __init__(self, name: str, message: str = ""):
        super().__init__(message)
        self.code, self.message = code_of(name), message


@dataclass
class Event:
    flags: int = 0
    time: float | None = None


@dataclass
class Kernel:
    mangled: str
    name: str                       # the C++ name students wrote (demangled)
    params: list                    # [(size, align)]
    registers: int = 32
    max_dynamic_shared: int = 48 * 1024


@dataclass
class Session:
    """What one run of a program did: its launches, for the notebook and the tests."""

    launches: list = field(default_factory=list)


def demangle(names) -> dict:
    """Mangled -> readable kernel names (``vecAdd``, ``reduce<256>``) with c++filt when present."""
    names = list(names)
    try:
        out = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True,
                             timeout=10).stdout.splitlines()
    except (OSError, subprocess.SubprocessError):
        out = names
    result = {}
    for m, d in zip(names, out):
        depth, cut = 0, len(d)
        for i, ch in enumerate(d):      # cut at the parameter list's '(' (outside template brackets)
            depth += ch == "<"
            depth -= ch == ">"
            if ch == "(" and depth == 0:
                cut = i
                break
        head = d[:cut]
        result[m] = head.split(" ", 1)[1] if head.startswith(("void ", "static void ")) else head
    return result


class Server(TextureRequests):
    def __init__(self, ptx: str, registers: dict | None = None, profile_source: str | None = None):
        self.fd = os.memfd_create("cudalab-device-memory")
        os.ftruncate(self.fd, ARENA_SIZE)
        self._map = mmap.mmap(self.fd, ARENA_SIZE)
        self.memory = DeviceMemory(limit=ARENA_SIZE, initial=16)
        self.memory.data = np.frombuffer(self._map, np.uint8)
        self.memory._views.clear()
        # __managed__ variables: every global lives in the arena the program maps, so they are
        # plain globals here (the PTX parser does not know the .managed attribute)
        self.module = parse(ptx.replace(".attribute(.managed) ", ""))
        self.program = Program(self.module, self.memory, sm_count=PROFILE["multiProcessorCount"])
        entries = [f.name for f in self.module.entries]
        readable = demangle(entries)
        self.kernels = {m: Kernel(m, readable[m], [(p.size, p.align) for p in self.module.functions[m].params],
                                  (registers or {}).get(m, 32)) for m in entries}
        self.kinds: dict = {}            # allocation address -> "device" | "managed" | "host"
        self.registered: dict = {}       # host ranges registered with cudaHostRegister: start -> size
        self.timeline = Timeline()
        self.events: dict = {}
        self.next_handle = FIRST_HANDLE
        self.sticky = 0                  # the context is broken: every call returns this error
        self.fault = 0                   # a kernel fault the program has not synchronized with yet
        self.session = Session()
        self.profile_source = profile_source     # set: every launch is profiled (cudalab run --profile)

    # ------------------------------------------------------------------ plumbing
    def env(self) -> dict:
        return {"CUDALAB_ARENA_FD": str(self.fd), "CUDALAB_ARENA_BASE": hex(GLOBAL_BASE),
                "CUDALAB_ARENA_SIZE": str(ARENA_SIZE)}

    def serve(self, sock: socket.socket, deadline: float | None = None):
        """Answer requests until the program closes its end (it exited)."""
        while True:
            if deadline is not None:
                sock.settimeout(max(deadline - time.monotonic(), 0.01))
            head = _recv(sock, 4)
            if head is None:
                return
            msg = _recv(sock, struct.unpack("<I", head)[0])
            if msg is None:
                return
            text, _, blob = msg.partition(b"\0")
            op, *args = text.decode().split()
            if self.fault and (op in SYNCHRONIZING or args[-1:] == ["1"] and op in ("copy", "copy2d", "memset")):
                self.sticky, self.fault = self.fault, 0   # a kernel's fault shows at a synchronization
            sticky = self.sticky
            try:
                code, numbers, data = 0, getattr(self, "op_" + op)(*args, blob=blob) or (), b""
                if isinstance(numbers, tuple) and len(numbers) == 2 and isinstance(numbers[1], bytes):
                    numbers, data = numbers
            except Reply as r:
                code, numbers, data = r.code, (), (b"\0" + r.message.encode() if r.message else b"")
            if sticky and self.sticky and op not in ("func", "var", "params", "props", "device_reset"):
                code = code or self.sticky
            out = " ".join(str(int(x)) for x in (code, *numbers)).encode() + b"\0" + data
            sock.sendall(struct.pack("<I", len(out)) + out)

    def close(self):
        """Close the memfd; the mapping goes when the last numpy view of it does."""
        os.close(self.fd)

    # ------------------------------------------------------------------ helpers
    def stream(self, handle: str) -> int:
        h = _int(handle)
        if h in (0, LEGACY, PER_THREAD):
            return 0
        if h not in self.timeline.streams:
            raise Reply("cudaErrorInvalidResourceHandle",
                        f"cudalab: 0x{h:x} is not a stream this program created (or it was destroyed).")
        return h

    def event(self, handle: str) -> Event:
        ev = self.events.get(_int(handle))
        if ev is None:
            raise Reply("cudaErrorInvalidResourceHandle",
                        f"cudalab: {handle} is not an event this program created (or it was destroyed).")
        return ev

    def handle(self) -> int:
        self.next_handle += 1
        return self.next_handle

    def in_arena(self, addr: int, n: int = 1) -> bool:
        return GLOBAL_BASE <= addr and addr + n <= GLOBAL_BASE + ARENA_SIZE

    def check_device(self, addr: int, n: int, what: str):
        """A copy's device side must lie inside one live allocation (else CUDA says invalid argument)."""
        a = self.memory.find(addr)
        if a is None or a.freed or addr + n > a.address + max(a.size, 1) or addr < a.address:
            raise Reply("cudaErrorInvalidValue",
                        f"cudalab: {what}: {n:,} bytes at 0x{addr:x} do not fit in device memory "
                        f"(the address is {self.memory.describe(addr, n)}).")

    def pinned(self, addr: int) -> bool:
        return self.in_arena(addr) or any(s <= addr < s + n for s, n in self.registered.items())

    # ------------------------------------------------------------------ registration
    def op_func(self, host, name, blob=b""):
        if name not in self.kernels:
            raise Reply("cudaErrorInvalidDeviceFunction")

    def op_params(self, name, blob=b""):
        k = self.kernels.get(name)
        if k is None:
            raise Reply("cudaErrorInvalidDeviceFunction", f"cudalab: no kernel {name} in the program's PTX.")
        return (len(k.params), *(x for p in k.params for x in p))

    def op_var(self, host, name, size, managed, blob=b""):
        addr = self.program.globals.get(name)
        if addr is None:
            raise Reply("cudaErrorInvalidSymbol")
        if managed == "1":
            self.kinds[addr] = "managed"
        return (addr,)

    def op_props(self, blob=b""):
        return (), props_text(ARENA_SIZE).encode()

    def op_last_error(self, blob=b""):
        return ()

    # ------------------------------------------------------------------ memory
    def op_malloc(self, size, kind, blob=b""):
        try:
            addr = self.memory.alloc(int(size), label={"device": "cudaMalloc", "managed": "cudaMallocManaged",
                                                       "host": "cudaMallocHost"}[kind])
        except CudaError as e:
            raise Reply("cudaErrorMemoryAllocation", f"cudalab: {e.args[0]}") from None
        self.kinds[addr] = kind
        return (addr,)

    def op_free(self, ptr, kind, blob=b""):
        addr = _int(ptr)
        have = self.kinds.get(addr)
        if have is None or (kind == "host") != (have == "host") or self.memory.allocs[addr].freed:
            call = "cudaFreeHost" if kind == "host" else "cudaFree"
            raise Reply("cudaErrorInvalidValue",
                        f"cudalab: {call}(0x{addr:x}): not the start of a live "
                        f"{'cudaMallocHost' if kind == 'host' else 'cudaMalloc'} allocation.")
        self.memory.free(addr)
        del self.kinds[addr]

    def op_register(self, ptr, size, flags, blob=b""):
        addr = _int(ptr)
        if addr in self.registered:
            raise Reply("cudaErrorHostMemoryAlreadyRegistered")
        self.registered[addr] = int(size)

    def op_unregister(self, ptr, blob=b""):
        if self.registered.pop(_int(ptr), None) is None:
            raise Reply("cudaErrorHostMemoryNotRegistered")

    def op_meminfo(self, blob=b""):
        used = sum(a.size for a in self.memory.allocs.values() if not a.freed)
        return (ARENA_SIZE - used, ARENA_SIZE)

    def op_pointer(self, ptr, blob=b""):
        addr = _int(ptr)
        if not self.in_arena(addr):
            return (0,)
        a = self.memory.find(addr)
        kind = self.kinds.get(a.address, "device") if a is not None else "device"
        return ({"host": 1, "device": 2, "managed": 3}[kind],)

    def _direction(self, dst, src, kind):
        src_dev, dst_dev = self.in_arena(src), self.in_arena(dst)
        if kind == DEFAULT:
            return {(False, False): "h2h", (False, True): "h2d", (True, False): "d2h", (True, True): "d2d"}[
                (src_dev, dst_dev)]
        if kind not in (H2H, H2D, D2H, D2D):
            raise Reply("cudaErrorInvalidMemcpyDirection")
        want = ("h2h", "h2d", "d2h", "d2d")[kind]
        if (want[0] == "d" and not src_dev) or (want[2] == "d" and not dst_dev):
            side = "source" if want[0] == "d" and not src_dev else "destination"
            raise Reply("cudaErrorInvalidValue",
                        f"cudalab: cudaMemcpy{('HostToHost', 'HostToDevice', 'DeviceToHost', 'DeviceToDevice')[kind]}"
                        f": the {side} is not device memory. Check the order (dst, src, bytes, kind) and the kind.")
        return want

    def op_copy(self, dst, src, n, kind, stream, sync, blob=b""):
        dst, src, n = _int(dst), _int(src), int(n)
        sid = self.stream(stream)
        direction = self._direction(dst, src, int(kind))
        for addr, what in ((src, "source"), (dst, "destination")):
            if self.in_arena(addr):
                self.check_device(addr, n, f"cudaMemcpy {what}")
        host = dst if direction == "d2h" else src
        self.timeline.copy(sid, n, direction, self.pinned(host), sync == "1")

    def op_copy2d(self, dst, dpitch, src, spitch, width, height, kind, stream, sync, blob=b""):
        dst, src, dpitch, spitch, width, height = (_int(x) for x in (dst, src, dpitch, spitch, width, height))
        sid = self.stream(stream)
        direction = self._direction(dst, src, int(kind))
        for addr, pitch, what in ((src, spitch, "source"), (dst, dpitch, "destination")):
            if self.in_arena(addr):
                self.check_device(addr, pitch * (height - 1) + width, f"cudaMemcpy2D {what}")
        host = dst if direction == "d2h" else src
        self.timeline.copy(sid, width * height, direction, self.pinned(host), sync == "1")

    def op_memset(self, dst, n, stream, sync, blob=b""):
        dst, n = _int(dst), int(n)
        self.check_device(dst, n, "cudaMemset")
        self.timeline.copy(self.stream(stream), n, "d2d", True, sync == "1")

    # ------------------------------------------------------------------ launches
    def op_launch(self, name, gx, gy, gz, bx, by, bz, shmem, stream, blob=b"", cooperative=False):
        k = self.kernels.get(name)
        if k is None:
            raise Reply("cudaErrorInvalidDeviceFunction")
        sid = self.stream(stream)
        grid, block = (int(gx), int(gy), int(gz)), (int(bx), int(by), int(bz))
        df = self.program.function(name)
        _, static, _ = shared_layout(self.program, df, 0)
        try:
            limits = DEFAULT_LIMITS
            if k.max_dynamic_shared > limits.shared_per_block:     # opted in with cudaFuncSetAttribute
                limits = replace(limits, shared_per_block=min(limits.shared_per_block_optin,
                                                              static + k.max_dynamic_shared))
            check_config(k.name, grid, block, int(shmem), static, limits)
        except CudaError as e:
            # CUDA 13 answers every bad launch shape with cudaErrorInvalidValue (seen on an H100,
            # examples/launch_errors.cu), where older runtimes said cudaErrorInvalidConfiguration
            code = "cudaErrorInvalidValue" if e.code == "cudaErrorInvalidConfiguration" else e.code
            raise Reply(code, f"cudalab: {e.args[0]}") from None
        if cooperative and grid[0] * grid[1] * grid[2] > self.max_blocks(k, block, int(shmem)) * PROFILE[
                "multiProcessorCount"]:
            raise Reply("cudaErrorCooperativeLaunchTooLarge",
                        f"cudalab: {k.name}: a cooperative launch needs every block resident at once; "
                        f"{grid} blocks are more than the device holds.")
        rec = LaunchRecord(k.name, grid, block, int(shmem), "emu")
        t0 = time.perf_counter()
        observers = []
        if self.profile_source is not None:
            from ..analysis.metrics import MetricsObserver
            observers = [MetricsObserver(source=self.profile_source)]
        from ..analysis.sanitizer import observers_for        # cudalab.check(...) / cudalab run --check
        checks = observers_for(self.program)
        try:
            stats = launch(self.program, name, grid, block, int(shmem), bytes(blob),
                           timeout=devices.WATCHDOG_SECONDS, kernel_name=k.name,
                           observers=observers + list(checks))
        except KernelError as e:
            rec.findings.extend(e.findings)
            rec.wall_time = time.perf_counter() - t0
            self.session.launches.append(rec)
            # like the GPU, the launch itself succeeds; the error shows at the next synchronization
            self.fault = code_of(e.code) if e.code in STICKY else 0
            if not self.fault:
                raise Reply(e.code, f"cudalab: {e.args[0]}") from None
            return (), b"\0" + f"cudalab: {e.args[0]}".encode()
        except CudaError as e:
            raise Reply(e.code if e.code in CODE else "cudaErrorNotSupported", f"cudalab: {e.args[0]}") from None
        rec.wall_time = time.perf_counter() - t0
        rec.instructions, rec.thread_instructions = stats.instructions, stats.thread_instructions
        rec.printed = stats.printed
        if observers:
            from ..analysis.report import fill_profile
            fill_profile(rec, observers[0], self.profile_source)
        self.session.launches.append(rec)
        self.timeline.kernel(sid, stats.warp_instructions or stats.instructions)
        return (), "".join(stats.printed).encode()

    def op_launch_cooperative(self, *args, blob=b""):
        return self.op_launch(*args, blob=blob, cooperative=True)

    def op_host_func(self, stream, blob=b""):
        sid = self.stream(stream)
        self.timeline.wait_stream(sid)

    # ------------------------------------------------------------------ streams and events
    def op_stream_create(self, flags, priority, blob=b""):
        h = self.handle()
        self.timeline.streams[h] = Stream(int(flags), max(-5, min(0, int(priority))))
        return (h,)

    def op_stream_destroy(self, stream, blob=b""):
        sid = self.stream(stream)
        if sid:
            del self.timeline.streams[sid]

    def op_stream_sync(self, stream, blob=b""):
        self.timeline.wait_stream(self.stream(stream))

    def op_stream_query(self, stream, blob=b""):
        self.stream(stream)              # everything issued has already run

    def op_stream_info(self, stream, blob=b""):
        s = self.timeline.streams[self.stream(stream)]
        return (s.flags, s.priority & 0xFFFFFFFF if s.priority >= 0 else s.priority)

    def op_stream_wait(self, stream, event, blob=b""):
        sid, ev = self.stream(stream), self.event(event)
        if ev.time is not None:
            s = self.timeline.streams[sid]
            s.ready = max(s.ready, ev.time)

    def op_event_create(self, flags, blob=b""):
        h = self.handle()
        self.events[h] = Event(int(flags))
        return (h,)

    def op_event_destroy(self, event, blob=b""):
        self.event(event)
        del self.events[_int(event)]

    def op_event_record(self, event, stream, blob=b""):
        ev, sid = self.event(event), self.stream(stream)
        ev.time = self.timeline.run(sid, None, 0)

    def op_event_sync(self, event, blob=b""):
        ev = self.event(event)
        if ev.time is not None:
            self.timeline.host = max(self.timeline.host, ev.time)

    def op_event_query(self, event, blob=b""):
        self.event(event)

    def op_elapsed(self, start, end, blob=b""):
        a, b = self.event(start), self.event(end)
        if (a.flags | b.flags) & EVENT_DISABLE_TIMING or a.time is None or b.time is None:
            raise Reply("cudaErrorInvalidResourceHandle",
                        "cudalab: cudaEventElapsedTime needs two recorded events created with timing "
                        "(not cudaEventDisableTiming).")
        return (max(0, round(b.time - a.time)),)

    # ------------------------------------------------------------------ device
    def op_device_sync(self, blob=b""):
        self.timeline.wait_all()

    def op_device_reset(self, blob=b""):
        for addr, kind in list(self.kinds.items()):
            if kind in ("device", "host") or (kind == "managed" and addr not in self.program.globals.values()):
                self.memory.free(addr)
                del self.kinds[addr]
        self.timeline = Timeline()
        self.events.clear()
        self.sticky = self.fault = 0

    def max_blocks(self, k: Kernel, block, dynamic: int) -> int:
        """Resident blocks per SM (the occupancy calculator's rules for compute capability 8.0)."""
        threads = block[0] * block[1] * block[2] if isinstance(block, tuple) else int(block)
        if threads <= 0:
            return 0
        p = PROFILE
        warps = -(-threads // 32)
        by_threads = p["maxThreadsPerMultiProcessor"] // (warps * 32)
        regs_per_warp = -(-k.registers * 32 // 256) * 256
        by_regs = (p["regsPerMultiprocessor"] // regs_per_warp) // warps if regs_per_warp else 10**9
        _, static, _ = shared_layout(self.program, self.program.function(k.mangled), 0)
        smem = static + dynamic
        by_smem = p["sharedMemPerMultiprocessor"] // (smem + p["reservedSharedMemPerBlock"]) if smem else 10**9
        return max(0, min(p["maxBlocksPerMultiProcessor"], by_threads, by_regs, by_smem))

    def op_occupancy(self, name, block_size, dynamic, blob=b""):
        return (self.max_blocks(self.kernels[name], int(block_size), int(dynamic)),)

    def op_func_attrs(self, name, blob=b""):
        k = self.kernels[name]
        df = self.program.function(name)
        _, static, _ = shared_layout(self.program, df, 0)
        return (static, 0, stack_size(self.program, df), PROFILE["maxThreadsPerBlock"], k.registers, 80, 80,
                k.max_dynamic_shared)

    def op_func_set(self, name, attr, value, blob=b""):
        k = self.kernels[name]
        if int(attr) == 8:   # cudaFuncAttributeMaxDynamicSharedMemorySize
            _, static, _ = shared_layout(self.program, self.program.function(name), 0)
            if not 0 <= int(value) <= PROFILE["sharedMemPerBlockOptin"] - static:
                raise Reply("cudaErrorInvalidValue",
                            f"cudalab: {k.name} may use at most {PROFILE['sharedMemPerBlockOptin'] - static:,} bytes "
                            f"of dynamic shared memory on this device; {int(value):,} were asked for.")
            k.max_dynamic_shared = int(value)


def _int(token: str) -> int:
    """A number from the shim: decimal, 0x-hex, or glibc's "(nil)" for a null pointer."""
    return 0 if token == "(nil)" else int(token, 0)


def _recv(sock, n):
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            return None
        buf += chunk
    return bytes(buf)
