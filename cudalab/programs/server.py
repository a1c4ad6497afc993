"""The emulator's side of a running program: answers the shim's runtime-API requests.

A thin adapter over the runtime core (``cudalab.runtime.core.Context``), which implements what
each call means. One request per API call (``op arg arg ...`` plus bytes), one reply (``code
number ...`` plus bytes). Device memory is a memfd both processes map: here it backs the
emulator's ``DeviceMemory`` arena, in the program it is mapped at the same device addresses
(``GLOBAL_BASE``), so copies never cross the socket: the shim moves the bytes, the core checks
them and puts them on the timeline (an asynchronous copy within the arena the core queues and
moves itself). Launches wait in their streams (``runtime.core.queues``) until
a call needs them done; the kernels' printf text and the explanation of a fault go to the program
ahead of that call's reply. Graph launches run their kernels here and hand their memcpy and memset
nodes back to the shim one at a time.

Host functions (cudaLaunchHostFunc, cudaStreamAddCallback, graph host nodes) wait in their streams
too; when one's turn comes the core calls ``call_host``, which sends "function data" over a second
socket (CUDALAB_HOST_FD) to the shim's driver thread and waits for its answer (the function's CPU
microseconds). The program's thread that asked for the work (a synchronization, say) is waiting
for its reply meanwhile, as it would on a GPU; the function runs on the driver thread, where the
shim answers every runtime call cudaErrorNotPermitted, as an H200 did.
"""
from __future__ import annotations

import collections
import mmap
import os
import re
import select
import socket
import struct
import subprocess
import time
from dataclasses import dataclass, field

import numpy as np

from ..analysis.sanitizer import observers_for
from ..emulator import slack
from ..emulator import graphcalls  # noqa: F401 - cudaGraphSetConditional in kernels
from ..emulator.engine import Program
from ..emulator.memory import DEVICE_MEMORY, GLOBAL_BASE, DeviceMemory
from ..errors import CudaError
from ..ptx import parse
from ..runtime.core import Context, Function
from ..runtime.core.errors import code_of
from ..runtime.core.graphs import TYPES
from .collector import FrozenWhileServing
from .server_libraries import LibraryRequests
from .server_modules import ModuleRequests
from .server_textures import TextureRequests, _int     # _int: the one parser of the shim's numbers

HOST_ROOM = DEVICE_MEMORY          # page-locked host memory (cudaMallocHost) beside the device's
ARENA_SIZE = DEVICE_MEMORY + HOST_ROOM
SYNCHRONIZING = {"device_sync", "stream_sync", "event_sync", "host_func", "graph_launch"}
# what a broken context (a sticky error) still answers on an H100: registration, properties and
# attributes, pointer attributes, cudaGraphCreate, cudaGetLastError (it reports the error once, through
# the call that returned it) and cudaDeviceReset (tests/test_programs_robust.py)
UNSTICKY = {"func", "var", "params", "props", "device_reset", "attr", "pointer", "graph_create", "last_error"}
# argument errors the runtime finds before it looks at the context
BEFORE_STICKY_CODES = {code_of("cudaErrorInvalidMemcpyDirection")}
# requests that leave the queued work queued: they queue work themselves, run just the work they follow
# (the core's copies, memsets, host functions, synchronizations), or touch nothing a kernel uses; any
# other request first runs everything queued, as cudaFree, cudaDeviceSetLimit or cudaDeviceReset do
QUEUED = {"func", "params", "var", "props", "attr", "last_error", "malloc", "meminfo", "pointer", "copy", "copy2d",
          "memset", "launch", "host_func", "stream_create", "stream_destroy", "stream_sync", "stream_query",
          "stream_info", "stream_wait", "stream_attr_get", "event_create", "event_destroy", "event_record",
          "event_sync", "event_query", "elapsed", "device_sync", "limit_get", "cache_get", "occupancy",
          "occupancy_clusters", "potential_cluster", "avail_smem", "func_attrs", "pool_default", "pool_get",
          "pool_attr_get", "pool_access_get", "malloc_async", "free_async", "graph_mem_attr", "capture_begin",
          "capture_end", "capture_info", "capture_update", "capture_mode", "graph_create", "graph_clone",
          "graph_nodes", "graph_edges", "node_info", "node_add", "node_params", "node_set", "exec_node_set",
          "node_destroy", "node_find", "edges", "cond_create", "instantiate", "exec_update", "node_enable",
          "graph_launch", "graph_next", "graph_dot", "array_info", "tex_create", "tex_desc", "tex_resource",
          "surf_create", "surf_resource", "module_func", "module_global", "address_range", "settle"}
STEP_DONE, STEP_COPY, STEP_MEMSET = 0, 1, 2
IDLE_SECONDS = 0.5      # a program busy this long (CPU time) without a request, work queued: the work runs
NODE_KINDS = {v: k for k, v in TYPES.items()}
# the numbers of a node's parameters, in the order the shim sends and takes them (its node_params())
NODE_FIELDS = {"memcpy": ("dst", "src", "width", "height", "depth", "dpitch", "spitch", "dheight", "sheight", "kind"),
               "memset": ("dst", "value", "element", "width", "height", "pitch"), "host": ("fn", "data"),
               "event_record": ("event",), "wait_event": ("event",), "mem_alloc": ("size",), "mem_free": ("address",),
               "graph": ("graph",)}
# libcudadevrt (linked with -rdc=true) registers kernels and variables of its own (device-side
# memcpy/memset helpers, its error tables); they come as SASS only, so the program's PTX lacks them,
# and the program never names them: their registration is let pass without a word
NV_STATIC = re.compile(r"^__nv_static_\w*?_(?=_Z)")
DEVICE_RUNTIME_SYMBOL = re.compile(r"__nv_static_\w*_cuda_device_runtime_|cudartError(Table|CnpMap)(EntryCount)?$|"
                                   r"__CNPRT_VERSION_NUMBER__$")


@dataclass
class Session:
    """What one run of a program did: its launches, for the notebook and the tests."""

    launches: list = field(default_factory=list)


def demangle(names) -> dict:
    """Mangled -> readable kernel names (``vecAdd``, ``reduce<256>``) with c++filt when present."""
    names = list(names)
    try:
        # a kernel with internal linkage (static, or in an anonymous namespace) gets nvcc's prefix
        # __nv_static_<n>__<file id>_ before its C++ name, which c++filt does not know
        out = subprocess.run(["c++filt"], input="\n".join(NV_STATIC.sub("", n) for n in names), capture_output=True,
                             text=True, timeout=10).stdout.splitlines()
    except (OSError, subprocess.SubprocessError):
        out = names
    result = {}
    for m, d in zip(names, out):
        d = d.replace("(anonymous namespace)", "\0")     # those parentheses are no parameter list
        depth, cut = 0, len(d)
        for i, ch in enumerate(d):      # cut at the parameter list's '(' (outside template brackets)
            depth += ch == "<"
            depth -= ch == ">"
            if ch == "(" and depth == 0:
                cut = i
                break
        head = d[:cut].replace("\0", "(anonymous namespace)")
        result[m] = head.split(" ", 1)[1] if head.startswith(("void ", "static void ")) else head
    return result


# profiling every launch of a program that has taken this much CPU so far: say how to pick a few
PROFILE_HINT_SECONDS = 20.0


class Server(TextureRequests, LibraryRequests, ModuleRequests):
    def __init__(self, ptx: str, registers: dict | None = None, profile_source: str | None = None,
                 profile_selection=None):
        self.fd = os.memfd_create("cudalab-device-memory")
        os.ftruncate(self.fd, ARENA_SIZE)
        self._map = mmap.mmap(self.fd, ARENA_SIZE)
        memory = DeviceMemory(limit=DEVICE_MEMORY, initial=16, host_room=HOST_ROOM)
        memory.data = np.frombuffer(self._map, np.uint8)
        memory._views.clear()
        from ..device import current
        self.ctx = Context(memory, profile=current())
        # __managed__ variables: every global lives in the arena the program maps, so they are
        # plain globals here (the PTX parser does not know the .managed attribute)
        self.module = parse(ptx.replace(".attribute(.managed) ", ""))
        self.program = self.ctx.bind(Program(self.module, memory))
        entries = [f.name for f in self.module.entries]
        readable = demangle(entries)
        self.functions = {m: Function(self.program, m, readable[m],
                                      [(p.size, p.align) for p in self.module.functions[m].params],
                                      (registers or {}).get(m, 32)) for m in entries}
        self.session = Session(self.ctx.launches)
        self.profile_source = profile_source     # set: launches are profiled (cudalab run --profile)
        self.profile_selection = profile_selection   # which ones (a LaunchSelection; None: all)
        self.profiled_seconds = 0.0              # CPU time of the profiled launches so far
        self.ctx.observers = self._observers
        self.ctx.after_launch = self._after_launch
        self.running = None                      # the graph launch in progress (a generator)
        self.printed: list = []                  # device printf text not yet sent to the program
        self.warned: set = set()                 # memcheck warnings told the program (slack.py)
        self._seen = 0                           # launch records whose printf text was sent
        self.late = None                         # a CudaError of work run while the program was quiet
        self.answered = True                     # does the program wait for the request being answered?
        self.calls = collections.Counter()      # the program's requests by name (a stopped benchmark's account)
        self.serving_since = None                # when serve() began
        self.pid = None                          # the program's process, once it runs
        self._cpu_at_request = 0.0               # its CPU time at its latest request
        self.host_sock, self._host_end = socket.socketpair()    # to the shim's driver thread (host functions)
        self.ctx.call_host = self._call_host
        self._stat = None                        # its /proc/PID/stat, open (_program_cpu)

    # ------------------------------------------------------------------ plumbing
    def env(self) -> dict:
        """The program's environment: its connection, and how a process it forks starts an emulator of
        its own (programs/forked.py: this Python, this package, this device profile, watchdog and checks)."""
        import sys
        from ..analysis.sanitizer.check import _active as asked     # (memcheck and synccheck always run)
        from ..device import current
        from ..runtime import device as devices
        return {"CUDALAB_ARENA_FD": str(self.fd), "CUDALAB_ARENA_BASE": hex(GLOBAL_BASE),
                "CUDALAB_ARENA_SIZE": str(ARENA_SIZE), "CUDALAB_HOST_FD": str(self._host_end.fileno()),
                "CUDALAB_PYTHON": sys.executable, "CUDALAB_DEVICE_PROFILE": current().name,
                "CUDALAB_WATCHDOG": str(devices.WATCHDOG_SECONDS), "CUDALAB_CHECKS": ",".join(sorted(asked)),
                "CUDALAB_PACKAGE_ROOT": os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))}

    def fds(self) -> tuple:
        """The descriptors the program inherits (the arena, the driver thread's socket)."""
        return self.fd, self._host_end.fileno()

    def serve(self, sock: socket.socket, deadline: float | None = None, time_limit: float | None = None):
        """Answer requests until the program closes its end (it exited). ``deadline``
        (time.monotonic()) also stops a kernel that is running when it passes; so does its CPU-time
        limit, which moves ``ctx.deadline`` to the moment it ran out (programs.cpu_limit_stops)."""
        self.ctx.deadline, self.ctx.time_limit = deadline, time_limit
        self.serving_since = time.monotonic()
        self._host_end.close()          # the program has its copy
        self.ctx.host_memory = ProgramMemory.open(self.pid)
        with FrozenWhileServing() as frozen:        # (the cycle collector's walks: collector.py)
            return self._serve(sock, frozen)

    def _serve(self, sock: socket.socket, frozen):
        ctx = self.ctx
        inbox = Inbox(sock)
        while True:
            deadline = ctx.deadline
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0:               # time is up (a kernel was stopped for it): no more answers
                    raise socket.timeout("the program's time limit ran out")
                sock.settimeout(left)
            if ctx.pending and not inbox.ready() and not select.select(
                    [sock], [], [], IDLE_SECONDS if deadline is None else min(IDLE_SECONDS, left))[0]:
                if self._program_cpu() - self._cpu_at_request >= IDLE_SECONDS or self._asleep():
                    self._run_while_idle()
                continue
            self._cpu_at_request = self._program_cpu()
            msg = inbox.request()
            if msg is None:
                return self._exited()
            frozen.answered()
            if msg[:1] == b"!":             # a launch the program goes on from without an answer (the shim's rpc)
                self._answer(msg[1:], answered=False)
                continue
            try:
                sock.sendall(self._answer(msg))
            except (BrokenPipeError, ConnectionResetError):     # another of its threads called exit()
                return self._exited()

    def _answer(self, msg: bytes, nested: bool = False, answered: bool = True) -> bytes:
        """The frames that answer one request: a "P" frame of what the kernels it ran printed, if any,
        then the reply. ``nested``: a request a graph's host node sends while the graph runs (a
        library call captured into it), answered in that work's place. Not ``answered``: a launch, event
        record or asynchronous copy within the arena the shim sent without waiting, the same text as one
        that succeeded with nothing but launches, event records and asynchronous copies since (cudart.c,
        rpc_blob); should it fail now
        (an error of work that ran meanwhile), the program hears it at its next request, as it hears
        an asynchronous error, and the printf text waits for that request's answer."""
        ctx = self.ctx
        text, _, blob = msg.partition(b"\0")
        op, *args = text.decode().split()
        ctx.caller = (0, False)
        if op.startswith("~"):      # "~microseconds": the program's own CPU time since its last call
            ctx.timeline.host(float(op[1:]), "host code")
            op, *args = args
        if op.startswith("@"):      # "@thread,per-thread": not the first host thread, or a _ptsz/_ptds call
            thread, per_thread = op[1:].split(",")
            ctx.caller = (int(thread), per_thread == "1")
            op, *args = args
        if ctx.fault and (op in SYNCHRONIZING or args[-1:] == ["1"] and op in ("copy", "copy2d", "memset")):
            ctx.sticky, ctx.fault = ctx.fault, None   # a kernel's fault shows at a synchronization
        self.calls[op] += 1
        self.answered = answered
        handler, failure = getattr(self, "op_" + op, None), None
        try:
            if handler is None:
                raise CudaError(f"the runtime call behind request {op!r} is not known to this emulator "
                                "(a shim and server of different versions?).", "cudaErrorNotSupported")
            if self.late is not None:
                late, self.late = self.late, None
                raise late
            if op not in QUEUED and not nested:
                ctx.finish_all()
            code, numbers, data = 0, handler(*args, blob=blob) or (), b""
            if isinstance(numbers, tuple) and len(numbers) == 2 and isinstance(numbers[1], bytes):
                numbers, data = numbers
        except CudaError as e:
            code, numbers, failure = code_of(e.code), getattr(e, "numbers", ()), e
            data = b"\0" + f"cudalab: {e.args[0]}".encode() if e.args and e.args[0] else b""
        except Exception as e:          # a bug in cudalab: the program gets an error, not a hang
            code, numbers = code_of("cudaErrorNotSupported"), ()
            data = b"\0" + (f"cudalab: internal error while answering the request {op!r} ({type(e).__name__}: "
                             f"{e}). This is a bug in cudalab; please report it with the program.").encode()
            failure = CudaError(data[10:].decode(), "cudaErrorNotSupported")
        if ctx.sticky and op not in UNSTICKY and code not in BEFORE_STICKY_CODES:
            code, data = code_of(ctx.sticky), b""  # a broken context answers its error to (almost) every call
            if ctx.sticky_news:
                data, ctx.sticky_news = b"\0" + f"cudalab: {ctx.sticky_news}".encode(), ""
        if ctx.deadline is not None and time.monotonic() >= ctx.deadline:
            raise socket.timeout("the program's time limit ran out")    # while a queued kernel ran
        if not answered:
            if code and not ctx.sticky:         # (a broken context answers its error to the next request anyway)
                self.late = failure
            return b""
        ran = b"" if nested else self._ran()
        out = " ".join(str(int(x)) for x in (code, *numbers)).encode() + b"\0" + data
        return (struct.pack("<I", len(ran)) + ran if ran else b"") + struct.pack("<I", len(out)) + out

    def close(self):
        """Close the memfd (the mapping goes when the last numpy view of it does), the driver thread's
        socket and the view of the program's memory."""
        os.close(self.fd)
        self.host_sock.close()
        self._host_end.close()
        if self.ctx.host_memory is not None:
            os.close(self.ctx.host_memory.fd)
        if self._stat is not None:
            os.close(self._stat)

    def _observers(self, program, kernel: str = ""):
        """The observers of a launch of ``kernel``: the profiler's (for a launch the selection picks) and the
        sanitizer checks'. A launch with none runs in the compiled tier."""
        observers = list(observers_for(program))             # cudalab.check(...) / cudalab run --check
        if self.profile_source is not None and (self.profile_selection is None or
                                                self.profile_selection.wants(kernel)):
            from ..analysis.metrics import MetricsObserver
            observers.insert(0, MetricsObserver(source=self.profile_source))
        return observers

    def _after_launch(self, rec, observers):
        if self.profile_source is None or not observers:
            return
        from ..analysis.metrics import MetricsObserver
        if isinstance(observers[0], MetricsObserver):
            from ..analysis.report import fill_profile
            fill_profile(rec, observers[0], self.profile_source)
            before, self.profiled_seconds = self.profiled_seconds, self.profiled_seconds + rec.cpu_time
            if self.profile_selection is None and before <= PROFILE_HINT_SECONDS < self.profiled_seconds:
                import sys
                n = len(self.ctx.launches) + 1
                sys.stderr.write(f"cudalab profile: {n} launch{'es' if n > 1 else ''} profiled so far, "
                                 f"{self.profiled_seconds:.0f} s of CPU time: a profiled launch runs in the interpreter, "
                                 "every instruction counted. As with Nsight Compute, --kernel-name K, --launch-skip N "
                                 "and --launch-count N pick the launches to profile (ncu -k, -s, -c); the others then "
                                 "run at full speed.\n")
                sys.stderr.flush()

    def function(self, name: str, missing: str = "cudaErrorInvalidResourceHandle") -> Function:
        fn = self.functions.get(name)
        if fn is None:
            raise CudaError(f"{name} is not a kernel of this program.", missing)
        return fn

    def _call_host(self, fn: int, data: int, status: int = 0) -> float:
        """Run the program's host function ``fn(data)`` on the shim's driver thread and wait until it
        returns (the core's ``call_host``; ``status``: what a stream callback is told). The printf text
        of kernels that ran before it goes first, so
        it comes out before what the function prints. A host node that replays a library call captured
        into a graph sends that call's request ("?" first) over the same socket. Returns the function's
        CPU time in microseconds."""
        self._new_records()                      # their printf text goes first
        msg = f"{fn} {data} {status}\0".encode() + self._flush()
        sock, caller = self.host_sock, self.ctx.caller
        try:
            sock.sendall(struct.pack("<I", len(msg)) + msg)
        except OSError:
            raise CudaError("the program ended before its host function could run.", "cudaErrorUnknown") from None
        while True:
            while not select.select([sock], [], [], 0.5)[0]:
                if self.ctx.deadline is not None and time.monotonic() >= self.ctx.deadline:
                    raise CudaError("the program's time ran out while a host function was running.",
                                    "cudaErrorLaunchTimeout")
            head = _recv(sock, 4)
            reply = None if head is None else _recv(sock, struct.unpack("<I", head)[0])
            if reply is None:
                raise CudaError("the program ended while one of its host functions was running.",
                                "cudaErrorUnknown")
            if not reply.startswith(b"?"):
                self.ctx.caller = caller
                return float(reply.decode())
            sock.sendall(self._answer(reply[1:], nested=True))

    def _flush(self) -> bytes:
        text = "".join(self.printed).encode()
        self.printed.clear()
        return text

    def _exited(self):
        """The program ended with work queued. A GPU's context teardown runs it, but its printf text
        is lost; it runs here only for the reports of a sanitizer check besides the ones always on, or
        of the profiler, which see such kernels on a GPU too."""
        from ..analysis.sanitizer import active
        if self.ctx.pending and (self.profile_source is not None or active() - {"memcheck", "synccheck"}):
            try:
                self.ctx.finish_all()
            except CudaError:
                pass            # the program is gone: nobody to answer

    def _program_cpu(self) -> float:
        """The program's CPU time in seconds (all its threads; 0 before it runs or where /proc is not).
        Asked at every request, so from the process's CPU-time clock, a system call (Linux numbers it
        ``~pid << 3 | 2``: CPUCLOCK_SCHED of the whole thread group); where that is refused, from its
        /proc/PID/stat, kept open and read again in place (35 us a read here against 5: opened each
        time, it made 20,001 null launches cost 12.7 s of CPU in all, 9.8 s so)."""
        if self.pid is not None:
            try:
                return time.clock_gettime((~self.pid << 3) | 2)
            except OSError:
                pass
        try:
            if self._stat is None:
                self._stat = os.open(f"/proc/{self.pid}/stat", os.O_RDONLY)
            fields = os.pread(self._stat, 1024, 0).rsplit(b")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")     # utime + stime
        except (OSError, TypeError, ValueError, IndexError):
            return 0.0

    def _asleep(self) -> bool:
        """Is every thread of the program blocked (state S or D: on a lock, a barrier, a sleep)? With work
        queued and no request for ``IDLE_SECONDS``, such a program waits for that work, which a GPU would
        be running meanwhile: NVIDIA's simpleCallback waits on a barrier that threads started by its
        stream callbacks reach. (One that is runnable, only waiting for a CPU, may be about to set a flag
        a queued kernel waits for: it keeps its work queued.)"""
        try:
            tasks = os.listdir(f"/proc/{self.pid}/task")
            states = []
            for t in tasks:
                with open(f"/proc/{self.pid}/task/{t}/stat") as f:
                    states.append(f.read().rsplit(")", 1)[1].split()[0])
        except (OSError, TypeError, IndexError):
            return False
        return bool(states) and all(state in ("S", "D") for state in states)

    def _run_while_idle(self):
        """The program spent ``IDLE_SECONDS`` of CPU time without a request while work was queued: host
        work, or a wait for a flag that a queued kernel (or host function) sets, which on a GPU ends
        when the work runs; or all its threads sleep (``_asleep``). (A program that is only waiting its
        turn for a CPU keeps its work queued: it may be about to set a flag a queued kernel waits for.)
        The queued work runs now, the
        program running on beside it; an error it meets is the answer to the program's next request,
        as an asynchronous error is."""
        try:
            self.ctx.finish_all()
        except CudaError as e:
            self.late = e

    def _ran(self) -> bytes:
        """Kernels ran while answering a request: their printf text and the explanation of a fault
        one of them hit, as a frame ("P", text, message) the shim takes before the reply."""
        records = self._new_records()
        text = self._flush() + self._fault_note(records)
        return b"P\0" + text if text else b""

    def _fault_note(self, records) -> bytes:
        """The explanation of a fault a kernel of ``records`` hit (the watchdog, an illegal address),
        after the printf text; the shim tells it to the student at once, though CUDA reports the
        error later. A stopped program hears it from run_program instead. Before it, memcheck's
        warnings of those kernels not told yet (accesses a GPU runs, emulator/slack.py): the shim
        writes them to the program's stderr, so `cudalab run` and %%cuda show them in order."""
        notes = [slack.text(f) for rec in records for f in slack.new_warnings(rec.findings, self.warned)]
        error = next((rec.error for rec in records if getattr(rec, "error", None)), None)
        if error and not self.ctx.stopped:
            notes.append(f"cudalab: {error}")
        return b"\0" + "\n".join(notes).encode() if notes else b""

    # ------------------------------------------------------------------ registration
    def op_func(self, host, name, blob=b""):
        if name not in self.functions and not DEVICE_RUNTIME_SYMBOL.match(name):
            raise CudaError(f"no kernel {name} in the program's PTX.", "cudaErrorInvalidDeviceFunction")

    def op_params(self, name, blob=b""):
        fn = self.function(name, "cudaErrorInvalidDeviceFunction")
        return (len(fn.params), *(x for p in fn.params for x in p))

    def op_var(self, host, name, size, managed, blob=b""):
        addr = self.program.globals.get(name)
        if addr is None and DEVICE_RUNTIME_SYMBOL.match(name):
            raise CudaError("", "cudaErrorInvalidSymbol")       # not registered, quietly
        if addr is None:
            raise CudaError(f"no __device__ variable {name} in the program's PTX.", "cudaErrorInvalidSymbol")
        if managed == "1":
            self.ctx.memory.adopt(addr, "managed")
        return (addr,)

    def op_props(self, blob=b""):
        lines = [f"{k}={','.join(map(str, v)) if isinstance(v, tuple) else v}" for k, v in self.ctx.props.items()]
        return (), "\n".join(lines).encode()

    def op_attr(self, attr, device, blob=b""):
        return (self.ctx.attribute(int(attr), int(device)) & 0xFFFFFFFF,)

    def op_last_error(self, blob=b""):
        return ()

    # ------------------------------------------------------------------ memory
    def op_malloc(self, size, kind, blob=b""):
        return (self.ctx.malloc(int(size), kind),)

    def op_free(self, ptr, kind, blob=b""):
        if _int(ptr):                   # cudaFree(NULL) does nothing, but answers a broken context's error
            self.ctx.free(_int(ptr), host=kind == "host")

    def op_register(self, ptr, size, flags, blob=b""):
        self.ctx.pinned_host.register(_int(ptr), int(size))

    def op_unregister(self, ptr, blob=b""):
        self.ctx.pinned_host.unregister(_int(ptr))

    def op_meminfo(self, blob=b""):
        return self.ctx.memory.info()

    def op_pointer(self, ptr, blob=b""):
        return (self.ctx.memory.pointer_type(_int(ptr)),)

    def op_copy(self, dst, src, n, kind, stream, sync, blob=b""):
        # sent unanswered (an asynchronous copy within the arena, the same as one that succeeded): the
        # shim does not move its bytes, so the core takes it even with nothing before it in its stream
        return (int(self.ctx.copy(_int(dst), _int(src), int(n), int(kind), _int(stream), sync == "1",
                                  take=not self.answered)),)

    def op_copy2d(self, dst, dpitch, src, spitch, width, height, kind, stream, sync, blob=b""):
        dst, src, dpitch, spitch, width, height = (_int(x) for x in (dst, src, dpitch, spitch, width, height))
        taken = self.ctx.copy(dst, src, width, int(kind), _int(stream), sync == "1", rows=height, dpitch=dpitch,
                              spitch=spitch, call="cudaMemcpy2D")
        return (int(taken),)

    def op_memset(self, dst, value, n, rows, pitch, stream, sync, blob=b""):
        return (int(self.ctx.memset(_int(dst), int(n), _int(stream), sync == "1", rows=int(rows), pitch=int(pitch),
                                    value=int(value))),)

    # ------------------------------------------------------------------ launches
    def op_launch(self, name, gx, gy, gz, bx, by, bz, shmem, stream, *options, blob=b""):
        fn = self.function(name, "cudaErrorInvalidDeviceFunction")
        opts = dict(o.split("=", 1) for o in options)
        cluster = tuple(int(x) for x in opts["cluster"].split(",")) if "cluster" in opts else None
        shown = {k: v for k, v in opts.items() if k not in ("cooperative", "cluster")}
        self.ctx.launch(fn, (int(gx), int(gy), int(gz)), (int(bx), int(by), int(bz)), int(shmem), blob,
                        _int(stream), cooperative=opts.get("cooperative") == "1", cluster=cluster, attributes=shown)

    def op_host_func(self, stream, fn, data, callback="0", blob=b""):
        return (int(self.ctx.host_function(self.ctx.stream(_int(stream)), _int(fn), _int(data),
                                           callback=callback == "1")),)

    # ------------------------------------------------------------------ streams and events
    def op_stream_create(self, flags, priority, blob=b""):
        return (self.ctx.stream_create(int(flags), int(priority)).handle,)

    def op_stream_destroy(self, stream, blob=b""):
        self.ctx.stream_destroy(self.ctx.stream(_int(stream)))

    def op_stream_sync(self, stream, blob=b""):
        self.ctx.stream_synchronize(self.ctx.stream(_int(stream)))

    def op_stream_query(self, stream, blob=b""):
        if not self.ctx.stream_query(self.ctx.stream(_int(stream))):
            raise CudaError("", "cudaErrorNotReady")

    def op_stream_info(self, stream, blob=b""):
        s = self.ctx.stream(_int(stream))
        return (s.flags, s.priority & 0xFFFFFFFF, s.handle)

    def op_stream_wait(self, stream, event, flags, blob=b""):
        self.ctx.stream_wait_event(self.ctx.stream(_int(stream)), self.ctx.event(_int(event)), int(flags))

    def op_stream_attr_set(self, stream, attr, *value, blob=b""):
        s, attr = self.ctx.stream(_int(stream)), int(attr)
        if attr == 1:
            v = (_int(value[0]), int(value[1]), float(value[2]), int(value[3]), int(value[4]))
        else:
            v = int(value[0])
        self.ctx.stream_set_attribute(s, attr, v)

    def op_stream_attr_get(self, stream, attr, blob=b""):
        v = self.ctx.stream_get_attribute(self.ctx.stream(_int(stream)), int(attr))
        if int(attr) == 1:
            base, nbytes, ratio, hit, miss = v
            return (base, nbytes, round(ratio * 1e6), hit, miss)
        return (v & 0xFFFFFFFF,)

    def op_event_create(self, flags, blob=b""):
        return (self.ctx.event_create(int(flags)).handle,)

    def op_event_destroy(self, event, blob=b""):
        self.ctx.event_destroy(self.ctx.event(_int(event)))

    def op_event_record(self, event, stream, blob=b""):
        self.ctx.event_record(self.ctx.event(_int(event)), self.ctx.stream(_int(stream)))

    def op_event_sync(self, event, blob=b""):
        self.ctx.event_synchronize(self.ctx.event(_int(event)))

    def op_event_query(self, event, blob=b""):
        if not self.ctx.event_query(self.ctx.event(_int(event))):
            raise CudaError("", "cudaErrorNotReady")

    def op_elapsed(self, start, end, blob=b""):
        ms = self.ctx.elapsed_time(self.ctx.event(_int(start)), self.ctx.event(_int(end)))
        return (round(ms * 1e6),)          # nanoseconds, negative where end came first: the shim divides

    # ------------------------------------------------------------------ device
    def op_settle(self, blob=b""):
        """The program touched a page-locked buffer that a queued asynchronous copy writes or reads (the shim
        guards such pages: stackguard.c): the queued work a GPU would have run meanwhile runs now
        (``Context.settle``); it is no synchronization (no error turns sticky here)."""
        self.ctx.settle()

    def op_device_sync(self, blob=b""):
        self.ctx.device_synchronize()

    def op_device_reset(self, blob=b""):
        keep = {a for a, k in self.ctx.memory.kinds.items() if k == "managed" and a in self.program.globals.values()}
        self.ctx.device_reset(keep)

    def op_limit_get(self, limit, blob=b""):
        return (self.ctx.get_limit(int(limit)),)

    def op_limit_set(self, limit, value, blob=b""):
        self.ctx.set_limit(int(limit), int(value))

    def op_cache_get(self, blob=b""):
        return (self.ctx.cache_config,)

    def op_cache_set(self, config, blob=b""):
        self.ctx.set_cache_config(int(config))

    def op_occupancy(self, name, block_size, dynamic, blob=b""):
        return (self.ctx.occupancy(self.function(name), int(block_size), int(dynamic)),)

    def op_occupancy_clusters(self, name, bx, by, bz, cx, cy, cz, dynamic, blob=b""):
        fn = self.function(name, "cudaErrorInvalidDeviceFunction")
        block = int(bx) * int(by) * int(bz)
        return (self.ctx.max_active_clusters(fn, block, (int(cx), int(cy), int(cz)), int(dynamic)),)

    def op_potential_cluster(self, name, bx, by, bz, dynamic, blob=b""):
        fn = self.function(name, "cudaErrorInvalidDeviceFunction")
        return (self.ctx.max_potential_cluster_size(fn),)

    def op_avail_smem(self, name, blocks, block_size, blob=b""):
        return (self.ctx.available_dynamic_shared(self.function(name), int(blocks), int(block_size)),)

    def op_func_attrs(self, name, blob=b""):
        a = self.ctx.func_attributes(self.function(name))
        return (a["sharedSizeBytes"], a["constSizeBytes"], a["localSizeBytes"], a["maxThreadsPerBlock"],
                a["numRegs"], a["ptxVersion"], a["binaryVersion"], a["maxDynamicSharedSizeBytes"],
                a["preferredShmemCarveout"] & 0xFFFFFFFF)

    def op_func_set(self, name, attr, value, blob=b""):
        self.ctx.func_set_attribute(self.function(name), int(attr), int(value))

    # ------------------------------------------------------------------ memory pools
    def op_pool_default(self, device, blob=b""):
        self.ctx.check_device(int(device))
        return (self.ctx.default_pool.handle,)

    def op_pool_get(self, device, blob=b""):
        self.ctx.check_device(int(device))
        return (self.ctx.current_pool.handle,)

    def op_pool_set(self, device, pool, blob=b""):
        self.ctx.check_device(int(device))
        self.ctx.current_pool = self.ctx.mem_pool(_int(pool))

    def op_pool_create(self, alloc_type, location_type, location_id, handle_types, blob=b""):
        return (self.ctx.pool_create(int(alloc_type), int(location_type), int(location_id), int(handle_types)).handle,)

    def op_pool_destroy(self, pool, blob=b""):
        self.ctx.pool_destroy(self.ctx.mem_pool(_int(pool)))

    def op_pool_attr_get(self, pool, attr, blob=b""):
        return (self.ctx.mem_pool(_int(pool)).get(int(attr)),)

    def op_pool_attr_set(self, pool, attr, value, blob=b""):
        self.ctx.mem_pool(_int(pool)).set(int(attr), int(value))

    def op_pool_trim(self, pool, keep, blob=b""):
        self.ctx.mem_pool(_int(pool)).trim(self.ctx.memory, int(keep))

    def op_pool_access_set(self, pool, location_id, flags, blob=b""):
        self.ctx.pool_access(self.ctx.mem_pool(_int(pool)), int(location_id), int(flags))

    def op_pool_access_get(self, pool, location_id, blob=b""):
        return (self.ctx.pool_access(self.ctx.mem_pool(_int(pool)), int(location_id)),)

    def op_malloc_async(self, size, stream, pool, blob=b""):
        p = self.ctx.mem_pool(_int(pool)) if _int(pool) else None
        return (self.ctx.malloc_async(int(size), _int(stream), p),)

    def op_free_async(self, ptr, stream, blob=b""):
        self.ctx.free_async(_int(ptr), _int(stream))

    def op_graph_mem_attr(self, attr, blob=b""):
        return (self.ctx.graph_memory.get(int(attr)),)

    def op_graph_mem_trim(self, blob=b""):
        self.ctx.graph_memory.trim()

    # ------------------------------------------------------------------ stream capture
    def op_capture_begin(self, stream, mode, graph, *deps, blob=b""):
        g = self.ctx.graph(_int(graph)) if _int(graph) else None
        self.ctx.begin_capture(self.ctx.stream(_int(stream)), int(mode), g, [self.ctx.node(_int(d)) for d in deps])

    def op_capture_end(self, stream, blob=b""):
        return (self.ctx.end_capture(self.ctx.stream(_int(stream))).handle,)

    def op_capture_info(self, stream, blob=b""):
        info = self.ctx.capture_info(self.ctx.stream(_int(stream)))
        if info is None:
            return (0,)
        status, capture_id, graph, deps = info
        return (status, capture_id, graph.handle, len(deps), *(n.handle for n in deps))

    def op_capture_update(self, stream, flags, *nodes, blob=b""):
        self.ctx.update_capture_dependencies(self.ctx.stream(_int(stream)), [self.ctx.node(_int(n)) for n in nodes],
                                             replace=int(flags) == 1)

    def op_capture_mode(self, mode, blob=b""):
        old, self.ctx.capture_mode = self.ctx.capture_mode, int(mode)
        return (old,)

    # ------------------------------------------------------------------ graphs
    def op_graph_create(self, blob=b""):
        return (self.ctx.graph_create().handle,)

    def op_graph_destroy(self, graph, blob=b""):
        self.ctx.graph_destroy(self.ctx.graph(_int(graph)))

    def op_graph_clone(self, graph, blob=b""):
        return (self.ctx.clone(self.ctx.graph(_int(graph))).handle,)

    def op_graph_nodes(self, graph, which, blob=b""):
        g = self.ctx.graph(_int(graph))
        nodes = g.roots() if which == "roots" else g.nodes
        return (len(nodes), *(n.handle for n in nodes))

    def op_graph_edges(self, graph, blob=b""):
        edges = self.ctx.graph(_int(graph)).edges
        return (len(edges), *(a.handle for a, _ in edges), *(b.handle for _, b in edges))

    def op_node_info(self, node, blob=b""):
        n = self.ctx.node(_int(node))
        deps, dependents = n.graph.deps(n), n.graph.dependents(n)
        return (TYPES[n.type], n.graph.handle, len(deps), len(dependents), *(d.handle for d in deps + dependents))

    def op_node_add(self, graph, kind, ndeps, *rest, blob=b""):
        g = self.ctx.graph(_int(graph))
        deps = [self.ctx.node(_int(d)) for d in rest[:int(ndeps)]]
        kind = NODE_KINDS[int(kind)]
        if kind == "conditional":
            handle, ctype, size = (_int(x) for x in rest[int(ndeps):])
            n = self.ctx.add_conditional_node(g, handle, ctype, size, deps)
            return (n.handle, *(b.handle for b in n.params["bodies"]))
        n = self.ctx.add_node(g, kind, self._node_params(kind, rest[int(ndeps):], blob), deps)
        return (n.handle, *((n.params["address"],) if kind == "mem_alloc" else ()))

    def _node_params(self, kind, a, blob) -> dict:
        """Node parameters from the shim's numbers (the layout is the shim's node_params()); the core checks them."""
        if kind == "kernel":
            fields = dict(function=self.function(a[0], "cudaErrorInvalidDeviceFunction"), grid=tuple(int(x) for x in a[1:4]),
                          block=tuple(int(x) for x in a[4:7]), shared=int(a[7]), args=bytes(blob))
        else:
            fields = dict(zip(NODE_FIELDS.get(kind, ()), (_int(x) for x in a)))
            if kind == "graph":
                fields["graph"] = self.ctx.graph(fields["graph"])
        return self.ctx.node_params(kind, fields)

    def _params_out(self, n):
        """A node's parameters as the shim's numbers (and the kernel arguments as bytes)."""
        p = n.params
        if n.type == "kernel":
            fn = p["function"]
            return (TYPES[n.type], *p["grid"], *p["block"], p["shared"]), fn.mangled.encode() + b"\0" + p["args"]
        if n.type == "graph":
            self.ctx.graphs.setdefault(p["graph"].handle, p["graph"])     # the shim may name the child graph
            return (TYPES[n.type], p["graph"].handle)
        keys = ("address", "size") if n.type == "mem_alloc" else NODE_FIELDS.get(n.type, ())
        return (TYPES[n.type], *(p[k] for k in keys))

    def op_node_params(self, node, kind, blob=b""):
        return self._params_out(self.ctx.typed_node(_int(node), None if kind == "any" else NODE_KINDS[int(kind)]))

    def op_node_set(self, node, *rest, blob=b""):
        n = self.ctx.node(_int(node))
        n.params = self._node_params(n.type, rest, blob)

    def op_exec_node_set(self, exec_, node, *rest, blob=b""):
        e = self.ctx.graph_exec(_int(exec_))
        n = self.ctx.exec_node(e, self.ctx.node(_int(node)))
        n.params = self._node_params(n.type, rest, blob)

    def op_node_destroy(self, node, blob=b""):
        self.ctx.destroy_node(self.ctx.node(_int(node)))

    def op_node_find(self, node, clone, blob=b""):
        return (self.ctx.find_in_clone(self.ctx.node(_int(node)), self.ctx.graph(_int(clone))).handle,)

    def op_edges(self, graph, add, n, *ends, blob=b""):
        g, n = self.ctx.graph(_int(graph)), int(n)
        pairs = [(self.ctx.node(_int(a)), self.ctx.node(_int(b))) for a, b in zip(ends[:n], ends[n:])]
        (self.ctx.add_edges if add == "1" else self.ctx.remove_edges)(g, pairs)

    def op_cond_create(self, graph, default, flags, blob=b""):
        return (self.ctx.conditional_create(self.ctx.graph(_int(graph)), int(default), int(flags)),)

    def op_instantiate(self, graph, flags, blob=b""):
        return (self.ctx.instantiate(self.ctx.graph(_int(graph)), int(flags)).handle,)

    def op_exec_destroy(self, exec_, blob=b""):
        self.ctx.exec_destroy(self.ctx.graph_exec(_int(exec_)))

    def op_exec_update(self, exec_, graph, blob=b""):
        try:
            return (self.ctx.exec_update(self.ctx.graph_exec(_int(exec_)), self.ctx.graph(_int(graph))),)
        except CudaError as e:
            e.numbers = (getattr(e, "result", 1),)
            raise

    def op_node_enable(self, exec_, node, on, blob=b""):
        n = self.ctx.exec_node(self.ctx.graph_exec(_int(exec_)), self.ctx.node(_int(node)))
        return (int(self.ctx.node_enabled(n, None if on == "?" else on == "1")),)

    def op_graph_launch(self, exec_, stream, blob=b""):
        self.running = self.ctx.graph_launch(self.ctx.graph_exec(_int(exec_)), self.ctx.stream(_int(stream)))
        if self.running is None:            # launched into a capture: a child graph node, nothing to run
            return (STEP_DONE,)
        return self.op_graph_next()

    def op_graph_next(self, blob=b""):
        """The next memcpy or memset node of the graph launch in progress, for the shim."""
        try:
            n = next(self.running) if self.running is not None else None
        except StopIteration:
            n = None
        except CudaError:
            self.running = None
            raise
        finally:
            records = self._new_records()
        if n is None:
            self.running = None
            return (STEP_DONE,), self._flush() + self._fault_note(records)
        p = n.params
        if n.type == "memcpy":
            step = (STEP_COPY, p["dst"], p["src"], p["width"], p["height"], p["depth"], p["dpitch"], p["spitch"],
                    p["dheight"], p["sheight"])
        else:
            step = (STEP_MEMSET, p["dst"], p["value"], p["element"], p["width"], p["height"], p["pitch"])
        return step, self._flush() + self._fault_note(records)

    def _new_records(self):
        """Launch records made since the last look; their printf text is queued for the program
        (``printed``), to go before whatever answer or host function comes next."""
        seen, self._seen = self._seen, len(self.ctx.launches)
        records = self.ctx.launches[seen:]
        self.printed.extend(t for rec in records for t in rec.printed)
        return records

    def op_graph_dot(self, graph, blob=b""):
        return (), self.ctx.debug_dot(self.ctx.graph(_int(graph))).encode()


class ProgramMemory:
    """The program's own memory, read and written through /proc/PID/mem (its parent may): an
    asynchronous copy to or from cudaHostRegister'ed memory queued behind a kernel moves its bytes
    when its turn comes, as a GPU's copy engine would, not when it was issued."""

    def __init__(self, fd: int):
        self.fd = fd

    @classmethod
    def open(cls, pid):
        """None where the system does not let a parent see its child's memory: such copies then
        run at issue, after the work they follow, as before."""
        try:
            return cls(os.open(f"/proc/{pid}/mem", os.O_RDWR))
        except (OSError, TypeError):
            return None

    def read(self, addr: int, n: int) -> np.ndarray:
        return np.frombuffer(os.pread(self.fd, n, addr), np.uint8)

    def write(self, addr: int, data):
        os.pwrite(self.fd, bytes(np.asarray(data, np.uint8)), addr)


class Inbox:
    """The program's requests (4 bytes of length, then the request), read from its socket in large
    pieces: a run of launches sent without waiting for answers costs one system call, not two each."""

    def __init__(self, sock):
        self.sock, self.data, self.start = sock, bytearray(), 0

    def ready(self) -> bool:
        """Is a whole request here already?"""
        have = len(self.data) - self.start
        return have >= 4 and have - 4 >= struct.unpack_from("<I", self.data, self.start)[0]

    def request(self) -> bytes | None:
        """The next request, or None once the program has gone (as ``_recv``)."""
        while not self.ready():
            if self.start:
                del self.data[:self.start]
                self.start = 0
            try:
                chunk = self.sock.recv(1 << 16)
            except ConnectionResetError:
                return None
            if not chunk:
                return None
            self.data += chunk
        n = struct.unpack_from("<I", self.data, self.start)[0]
        msg = bytes(self.data[self.start + 4:self.start + 4 + n])
        self.start += 4 + n
        return msg


def _recv(sock, n):
    """n bytes of the program's request, or None once it has gone (exited, or one of its threads called
    exit() while another waited for an answer: the connection is reset then, not closed)."""
    buf = bytearray()
    while len(buf) < n:
        try:
            chunk = sock.recv(n - len(buf))
        except ConnectionResetError:
            return None
        if not chunk:
            return None
        buf += chunk
    return bytes(buf)
