"""The public conformance cases (a copy is in tests/conformance_public; ../shared has the live set)."""
import os
import sys

import numpy as np
import pytest

HERE = os.path.dirname(__file__)
SHARED = os.path.join(HERE, "..", "..", "shared", "conformance")
SRC = SHARED if os.path.isdir(SHARED) else os.path.join(HERE, "conformance_public")
sys.path.insert(0, SRC)
from cases import CASES  # noqa: E402
from run import check, run_cudalab  # noqa: E402


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_conformance_case(case):
    args = case["make"]()
    inputs = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    err = check(case, run_cudalab(case, args), case["ref"](*inputs))
    assert err is None, err
