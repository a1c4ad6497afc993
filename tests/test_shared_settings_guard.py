"""A test that selects another device profile and does not put it back is named, and the profile is put back.

In CI the tests of a file run on one worker after other files' tests: a profile left selected (cudalab.set_device)
changes what every later whole program runs on. tests/conftest.py checks the settings after each test.
"""
import os
import shutil
import subprocess
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent

LEAKY = '''
import os
import cudalab
from cudalab.device import current


def test_selects_a_t4_and_forgets_it():
    cudalab.set_device("T4")


def test_runs_after_it():
    assert current().name == "A100"          # put back by the guard


def test_sets_the_connections_and_forgets_them():
    os.environ["CUDA_DEVICE_MAX_CONNECTIONS"] = "32"


def test_puts_its_profile_back():
    before = current()
    cudalab.set_device("H100")
    try:
        assert current().name == "H100"
    finally:
        cudalab.set_device(before)


def test_uses_monkeypatch(monkeypatch):
    monkeypatch.setenv("CUDALAB_DEVICE_PROFILE", "V100")
'''


def test_a_test_that_leaves_another_profile_selected_fails_by_name(tmp_path):
    shutil.copy(TESTS / "conftest.py", tmp_path / "conftest.py")
    (tmp_path / "test_leaky.py").write_text(LEAKY)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(TESTS.parent), os.environ.get("PYTHONPATH", "")]))
    env.pop("CUDA_DEVICE_MAX_CONNECTIONS", None)
    env.pop("CUDALAB_DEVICE_PROFILE", None)
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly",
                        str(tmp_path / "test_leaky.py")], capture_output=True, text=True, env=env, cwd=tmp_path,
                       timeout=300)
    out = r.stdout
    assert "test_leaky.py::test_selects_a_t4_and_forgets_it left device profile (cudalab.set_device) " \
           "'A100' -> 'T4'" in out, out
    assert "test_leaky.py::test_sets_the_connections_and_forgets_them left CUDA_DEVICE_MAX_CONNECTIONS " \
           "None -> '32'" in out, out
    assert "5 passed, 2 errors" in out, out          # the two that forgot; the one after the T4 ran on an A100
