"""Jupyter side of cudalab: ``%load_ext cudalab`` registers the ``%%cuda`` cell magic."""


def load_ipython_extension(ipython):
    """Called by ``%load_ext cudalab`` (and ``%load_ext cudalab.jupyter``)."""
    from .magic import CudaMagics
    ipython.register_magics(CudaMagics)
    from ..errors import CudaError
    ipython.set_custom_exc((CudaError,), show_cuda_error)


def show_cuda_error(shell, etype, evalue, tb, tb_offset=None):
    """A CudaError raised in any cell (a launch, a copy, a compile) is shown as its message alone:
    what happened, where, what to try. The frames inside cudalab are not the student's business."""
    import sys
    name = etype.__name__
    sys.stderr.write(f"{name}: {evalue}\n")
    findings = getattr(evalue, "findings", None)
    if findings:
        sys.stderr.write(f"({len(findings)} finding(s) as data: cudalab.last_launch().findings)\n")
    return None
