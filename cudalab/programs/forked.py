"""The emulator of a process that a program starts with fork(): ``python -m cudalab.programs.forked FD PID``.

On a GPU, a process forked before its parent's first CUDA call uses CUDA as any process does (MSU's
shmem_mmap_cuda forks a worker that computes on the GPU while the parent computes on the CPU). Such a
child cannot share its parent's emulator: one socket cannot tell whose request is whose, and its device
memory is the parent's. So the shim (``cudart.c``, ``start_own_emulator``) starts this module over a
socket of the child's own: a second server for the same build (``CUDALAB_PROGRAM_DIR``), on the same
device profile, watchdog and sanitizer checks, with an arena of its own, whose descriptor and the driver
thread's socket go back to the child with the first message; the child maps that arena at the device
addresses the parent's had.
It serves until the child exits.
"""
from __future__ import annotations

import os
import socket
import sys
import time
from pathlib import Path


def serve_forked(fd: int, pid: int, folder: Path, profile: str | None = None, watchdog: float | None = None,
                 checks=(), deadline: float | None = None):
    """Serve the forked process ``pid`` over descriptor ``fd`` until it exits, or until ``deadline``
    (time.monotonic(), the whole program's time limit) passes: then its next call finds the emulator gone
    and it ends, as the program it came from was ended."""
    from .. import check, device as profiles
    from ..runtime import device as devices
    from .blas_threads import one_blas_thread
    from .build import _registers
    from .heap import keep_freed_memory
    from .server import Server
    if profile:
        profiles.set_device(profile)
    if watchdog:
        devices.set_watchdog(watchdog)
    if checks:
        check(*checks)          # the parent's (cudalab run --check racecheck)
    sock = socket.socket(fileno=fd)
    server = Server((folder / "program.ptx").read_text(), _registers((folder / "build.log").read_text()))
    keep_freed_memory()
    one_blas_thread()
    try:
        socket.send_fds(sock, [b"+"], [server.fd, server._host_end.fileno()])
        server.pid = pid
        server.serve(sock, deadline, None if deadline is None else max(deadline - time.monotonic(), 0.0))
    except socket.timeout:
        pass
    finally:
        sock.close()
        server.close()


def main(argv=None):
    fd, pid = (int(a) for a in (argv or sys.argv[1:]))
    watchdog = os.environ.get("CUDALAB_WATCHDOG")
    checks = [c for c in os.environ.get("CUDALAB_CHECKS", "").split(",") if c]
    deadline = os.environ.get("CUDALAB_DEADLINE")
    serve_forked(fd, pid, Path(os.environ["CUDALAB_PROGRAM_DIR"]), os.environ.get("CUDALAB_DEVICE_PROFILE"),
                 float(watchdog) if watchdog else None, checks, float(deadline) if deadline else None)


if __name__ == "__main__":
    main()
