"""Programs written once in PyTorch's idiom, run with ``torch`` bound to PyTorch and then to minigrad.

Each program in ``programs/`` prints one JSON line of results (losses,
accuracies, parameter sums); both runs must agree within the tolerance the
program names (``"rtol"`` in its output, default 1e-6). This is how the
"port by changing imports" promise is kept honest.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.dualrun.runner import PROGRAMS, run

pytestmark = pytest.mark.timeout(600)


def _compare(mine, theirs, rtol, atol, where="result"):
    if isinstance(theirs, dict):
        assert set(mine) == set(theirs), f"{where}: keys {sorted(mine)} vs PyTorch's {sorted(theirs)}"
        for key in theirs:
            _compare(mine[key], theirs[key], rtol, atol, f"{where}.{key}")
    elif isinstance(theirs, (list, tuple)) and any(isinstance(t, (list, tuple, dict)) for t in theirs):
        assert len(mine) == len(theirs), f"{where}: length {len(mine)} vs PyTorch's {len(theirs)}"
        for i, (m, t) in enumerate(zip(mine, theirs)):
            _compare(m, t, rtol, atol, f"{where}[{i}]")
    elif isinstance(theirs, (list, tuple, int, float)) and not isinstance(theirs, bool):
        np.testing.assert_allclose(np.asarray(mine, dtype=float), np.asarray(theirs, dtype=float),
                                   rtol=rtol, atol=atol, err_msg=where)
    else:
        assert mine == theirs, f"{where}: {mine!r} vs PyTorch's {theirs!r}"


@pytest.mark.parametrize("program", sorted(PROGRAMS.glob("*.py")), ids=lambda p: p.stem)
def test_program_matches_pytorch(program):
    theirs = run("torch", program)
    mine = run("minigrad", program)
    tolerance = theirs.pop("tolerance", {})
    mine.pop("tolerance", None)
    _compare(mine, theirs, tolerance.get("rtol", 1e-6), tolerance.get("atol", 1e-9))
