"""cupy.testing: numpy.testing's assertions over device arrays' values."""
from __future__ import annotations

import numpy.testing as nt

from . import _host_args


def _checked(name):
    check = getattr(nt, name)

    def assertion(*args, **kwargs):
        return check(*_host_args(args), **_host_args(kwargs))
    assertion.__name__ = name
    return assertion


for _name in ("assert_array_equal", "assert_allclose", "assert_array_almost_equal", "assert_array_less",
              "assert_array_max_ulp", "assert_equal", "assert_almost_equal"):
    globals()[_name] = _checked(_name)
