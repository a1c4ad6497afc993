"""Jupyter side of cudalab: ``%load_ext cudalab`` registers the ``%%cuda`` cell magic."""


def load_ipython_extension(ipython):
    """Called by ``%load_ext cudalab`` (and ``%load_ext cudalab.jupyter``)."""
    from .magic import CudaMagics
    ipython.register_magics(CudaMagics)
