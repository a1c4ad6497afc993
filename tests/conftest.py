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


def pytest_collection_modifyitems(config, items):
    skip_gpu_tests_without_a_gpu(items)
