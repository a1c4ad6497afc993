"""``%load_ext nvcc_plugin``: the line Colab CUDA courses put before their ``%%cu`` cells.

nvcc_plugin is the module name of nvcc4jupyter's first releases (installed from its git repository,
never from PyPI). Courses of the Colab years (2019-2023) start with ``!pip install git+...nvcc4jupyter.git``
and ``%load_ext nvcc_plugin``, then write every program as a ``%%cu`` cell. With cudalab installed the
notebook runs unchanged: this module loads cudalab's magics, where ``%%cu`` runs a cell as ``%%cuda`` does,
on the emulated GPU or a real one. Where the real plugin is installed too, whichever comes first on
sys.path wins, as for any two modules of one name; ``%load_ext cudalab`` is the unambiguous spelling.
"""


def load_ipython_extension(ipython):
    from cudalab.jupyter import load_ipython_extension as load_cudalab
    load_cudalab(ipython)
    print("nvcc_plugin: cudalab's %%cu and %%cuda magics are loaded "
          "(cells run on cudalab's emulated GPU unless a real one is chosen).")
