"""Every broken cell or call in tests/bad_inputs gets a clear error, and the next launch still works."""
import numpy as np
import pytest

import cudalab
from bad_inputs.cases import ADD, CASES


@pytest.fixture(autouse=True)
def short_watchdog():
    cudalab.set_watchdog(1)
    yield
    cudalab.set_watchdog(10)
    cudalab.use("emu")
    cudalab.check()


def run(case):
    ns = {"np": np, "cudalab": cudalab, "a": np.ones(64, np.float32), "c": np.zeros(64, np.float32),
          "ia": np.zeros(64, np.int32)}
    if case.source is not None:
        mod = ns["mod"] = cudalab.compile(case.source)
        if mod.kernels:
            ns["k"] = mod.get_kernel(mod.kernels[0])
    exec(case.call, ns)


def the_next_launch_works():
    a = np.arange(100, dtype=np.float32)
    c = np.zeros(100, np.float32)
    cudalab.compile(ADD).add[1, 128](a, a, c, 100)
    assert (c == 2 * a).all()


def params():
    return [pytest.param(c, id=c.name, marks=[pytest.mark.xfail(reason=f"bad message: {c.bad}", run=not c.slow)]
                         if c.bad else []) for c in CASES]


@pytest.mark.parametrize("case", params())
def test_bad_input(case):
    if case.error is None:
        run(case)
    else:
        with pytest.raises(case.error) as e:
            run(case)
        text = str(e.value)
        for s in case.contains:
            assert s in text, f"{s!r} is not in the message:\n{text}"
        if case.code:
            assert e.value.code == case.code
        assert "Traceback" not in text
    the_next_launch_works()


def test_there_are_enough_cases():
    assert len(CASES) >= 60
