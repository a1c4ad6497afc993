"""Shared pytest set-up: one function per concern, called from the hooks at the bottom."""
import pytest


def skip_gpu_tests_without_a_gpu(items):
    """Tests marked ``gpu`` run only where cudalab.gpu.backend.available() finds a driver and a GPU."""
    marked = [item for item in items if item.get_closest_marker("gpu")]
    if not marked:
        return
    from cudalab.gpu.backend import available
    if not available():
        for item in marked:
            item.add_marker(pytest.mark.skip(reason="needs an NVIDIA GPU"))


@pytest.fixture
def cp():
    """CuPy as a lesson imports it: cudalab's stand-in, put in place for the test and taken away after
    (a test file may give ``cp`` a set-up of its own)."""
    import cudalab.numba
    cudalab.numba.install()
    import cupy
    yield cupy
    cudalab.numba.uninstall()


# what a test may change for the ones after it on its worker, and must put back: the device profile the
# emulator and whole programs run on (cudalab.set_device; a program's server takes this process's), and
# the variables a program inherits that choose the same (CUDALAB_DEVICE_PROFILE) or the timeline's queues
SHARED_SETTINGS = ("CUDALAB_DEVICE_PROFILE", "CUDA_DEVICE_MAX_CONNECTIONS")


def shared_settings():
    """The process-wide settings a test must leave as it found them, as plain data."""
    import os

    from cudalab.device import current
    return {"device profile (cudalab.set_device)": current().name,
            **{name: os.environ.get(name) for name in SHARED_SETTINGS}}


@pytest.fixture(autouse=True)
def leaves_the_device_profile_as_it_found_it(request):
    """A test that selects another device profile (or sets a variable of SHARED_SETTINGS) and does not
    put it back changes what every later test on its worker runs on: a whole program's timeline, a
    kernel's limits (in CI a four-stream program once printed a speedup no A100 gives, and the test now
    pins its profile). The setting is put back and the test that left it fails, named."""
    before = shared_settings()
    yield
    after = shared_settings()
    if after != before:
        restore(before)
        changed = ", ".join(f"{k} {before[k]!r} -> {after[k]!r}" for k in before if before[k] != after[k])
        pytest.fail(f"{request.node.nodeid} left {changed}: put it back (try/finally, a fixture, monkeypatch)",
                    pytrace=False)


def restore(settings):
    import os

    from cudalab.device import set_device
    set_device(settings["device profile (cudalab.set_device)"])
    for name in SHARED_SETTINGS:
        if settings[name] is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = settings[name]


def pytest_collection_modifyitems(config, items):
    skip_gpu_tests_without_a_gpu(items)
