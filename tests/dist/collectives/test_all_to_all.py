"""all_to_all and all_to_all_single on real MPI ranks (through the test pool).

Exception types are compared with PyTorch's (a one-process gloo group in
this process is the oracle: the ``torch_errors`` fixture of conftest.py).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.dist.collectives import programs_all_to_all as programs
from tests.dist.conftest import get_pool

pytestmark = pytest.mark.timeout(120)


@pytest.mark.parametrize("world_size", [2, 3])
def test_all_to_all_and_all_to_all_single(world_size):
    assert get_pool(world_size).run(programs.all_to_all_exchanges, timeout=60) == list(range(world_size))


@settings(max_examples=10, deadline=None)
@given(data=st.data())
def test_all_to_all_single_drawn_splits(data):
    n = 3
    splits = data.draw(st.lists(st.lists(st.integers(0, 3), min_size=n, max_size=n), min_size=n, max_size=n))
    width = data.draw(st.integers(1, 3))
    outputs = get_pool(n).run(programs.all_to_all_single_splits, {"splits": splits, "width": width}, timeout=20)
    for r, y in enumerate(outputs):
        expected = np.concatenate(
            [np.full((splits[i][r], width), 100 * i + r, dtype=np.float32) for i in range(n)]
        )
        np.testing.assert_array_equal(y, expected)


def test_all_to_all_size_mismatch_fails_only_the_receiver_and_hangs_nobody():
    results = get_pool(3).run(programs.all_to_all_mismatch, timeout=60)
    problem, check = results[0]
    assert problem[0] == "RuntimeError"
    assert "rank 2 sent 16 bytes of float64, expected 24 bytes of float64" in problem[1]
    assert [r[0] for r in results[1:]] == [None, None]
    assert [r[1] for r in results] == [3.0, 3.0, 3.0]


def test_all_to_all_argument_errors_match_pytorch(pool2, torch_errors):
    errors = pool2.run(programs.all_to_all_bad_arguments, timeout=60)[0]
    for name in ("a2a_dtypes", "a2a_list_length", "single_split_sum", "single_dtypes"):
        assert errors[name][0] == torch_errors[name], (name, errors[name])
    assert errors["single_not_divisible"][0] == "RuntimeError" and "divide equally" in errors["single_not_divisible"][1]
