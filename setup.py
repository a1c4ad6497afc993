"""The one thing pyproject.toml cannot say: ``cudalab-numba.pth`` goes into site-packages itself, where
Python runs its line at every start, so that CUDALAB_NUMBA=1 reaches a program that imports only numba
(cudalab/numba). setuptools has no option for a file at the top of site-packages; as numba-cuda
does for its own ``.pth`` (its setup.py), a wheel gets it from build_py, and an editable install
(``pip install -e .``, which writes no build_py output) from the strategy that writes its wheel."""
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.command.editable_wheel import editable_wheel

PTH = "cudalab-numba.pth"


class build_py_with_pth(build_py):   # noqa: N801 (setuptools' command names)
    def run(self):
        super().run()
        self.copy_file(PTH, str(Path(self.build_lib, PTH)), preserve_mode=False)

    def get_source_files(self):      # what an sdist carries
        return [*super().get_source_files(), PTH]


class _StrategyWithPth:
    """setuptools' editable strategy (a callable that writes the editable wheel), plus the .pth."""

    def __init__(self, strategy):
        self.strategy = strategy

    def __call__(self, wheel, files, mapping):
        self.strategy(wheel, files, mapping)
        wheel.writestr(PTH, Path(PTH).read_bytes())

    def __enter__(self):
        self.strategy.__enter__()
        return self

    def __exit__(self, *exc):
        return self.strategy.__exit__(*exc)


class editable_wheel_with_pth(editable_wheel):   # noqa: N801
    def _select_strategy(self, *args, **kwargs):
        return _StrategyWithPth(super()._select_strategy(*args, **kwargs))


setup(cmdclass={"build_py": build_py_with_pth, "editable_wheel": editable_wheel_with_pth})
