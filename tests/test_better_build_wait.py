"""The wait for the better build (compiled._wait_for_better) judges the build by the CPU time it has had.

A launch running quick code may wait, before a batch, for the child process that builds the kernel's
better code. Whether and how long to wait compares CPU seconds with CPU seconds: the build's expected
cost less the CPU time the child has used, against what the launch's rest needs at the quick pace. These
tests give the wait a stand-in child and a clock of their own, so they read the same on an idle machine
and on one at a load of 24: the "busy machine" below is a child that gets a quarter of a core.
"""
import os
import types

import pytest

from cudalab.emulator import compiled


class Machine:
    """A clock and a child process that gets ``share`` of a core and needs ``cost`` CPU seconds in all."""

    def __init__(self, cost, share, had=0.0, started=0.0):
        self.now, self.cost, self.share, self.cpu = 100.0, cost, share, had
        self.started = started
        self.child = types.SimpleNamespace(pid_of_parent=os.getpid(), seconds=cost, pid=-1,
                                           poll=lambda: 0 if self.cpu >= self.cost else None)

    def sleep(self, dt):
        self.now += dt
        self.cpu = min(self.cost, self.cpu + dt * self.share)


@pytest.fixture
def machine(monkeypatch):
    def make(cost, share, had=0.0, wall_since_start=0.0):
        m = Machine(cost, share, had)
        monkeypatch.setattr(compiled, "time", types.SimpleNamespace(monotonic=lambda: m.now, sleep=m.sleep))
        monkeypatch.setattr(compiled, "_child_cpu_seconds", lambda child, st: m.cpu)
        monkeypatch.setattr(compiled.pace, "time_is_up", lambda: False)
        st = compiled._Tier(better=m.child, better_since=m.now - wall_since_start)
        return m, st
    return make


def test_on_a_busy_machine_the_batch_waits_until_the_build_is_done(machine):
    """The child needs 2 CPU s and has had 0.5 in the 5 wall seconds since it started (a quarter of a
    core); the launch's rest is 3 CPU s of quick code. The build's 1.5 CPU s left are less than that, so
    the batch waits, 6 wall seconds, until the better code is in. (Judged by wall time, the build looked
    overdue, and the wait stopped after 3 s with the child unfinished.)"""
    m, st = machine(cost=2.0, share=0.25, had=0.5, wall_since_start=5.0)
    compiled._wait_for_better(st, rest=3.0)
    assert m.child.poll() == 0
    assert m.now - 100.0 == pytest.approx(6.0, abs=0.05)


def test_a_rest_shorter_than_the_build_left_does_not_wait(machine):
    m, st = machine(cost=2.0, share=0.25, had=0.5, wall_since_start=5.0)
    compiled._wait_for_better(st, rest=1.0)
    assert m.now == 100.0 and m.child.poll() is None


def test_the_wait_ends_once_the_child_has_had_the_rest_in_cpu_time(machine):
    """A build slower than expected (10 CPU s where 1 was expected): the batch waits while the child uses
    as much CPU as the quick code would have needed for the rest (1.5 s, 3 wall seconds at half a core),
    then runs quick code."""
    m, st = machine(cost=10.0, share=0.5)
    m.child.seconds = 1.0
    compiled._wait_for_better(st, rest=1.5)
    assert m.child.poll() is None
    assert m.now - 100.0 == pytest.approx(3.0, abs=0.05)
    assert m.cpu == pytest.approx(1.5, abs=0.02)


def test_a_child_that_gets_no_cpu_is_not_waited_for_forever(machine):
    m, st = machine(cost=2.0, share=0.0)
    compiled._wait_for_better(st, rest=3.0)
    assert m.now - 100.0 == pytest.approx(compiled.WAIT_WALL_FACTOR * 3.0, abs=0.05)


def test_the_childs_cpu_time_is_read_from_proc():
    """A real child that burns CPU: what _child_cpu_seconds reads grows with the CPU it used (its own
    process clock, not the wall: this holds at any load)."""
    import subprocess
    import sys
    child = subprocess.Popen([sys.executable, "-c", "import time\nt=time.process_time()\n"
                              "while time.process_time() - t < 0.3: pass\nimport sys; sys.stdin.read()"],
                             stdin=subprocess.PIPE)
    try:
        st = compiled._Tier(better_since=0.0)
        seen = 0.0
        import time
        deadline = time.monotonic() + 120
        while seen < 0.3 and time.monotonic() < deadline:
            time.sleep(0.05)
            seen = compiled._child_cpu_seconds(child, st)
        assert 0.3 <= seen < 5
    finally:
        child.stdin.close()
        child.wait()
