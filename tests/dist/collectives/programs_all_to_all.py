"""Programs run on every rank of a pool by test_all_to_all.py: all_to_all and all_to_all_single."""

from __future__ import annotations

import numpy as np

import minigrad as mg
import minigrad_dist as dist
from tests.dist.programs_common import ensure_init, message_of

# -- all-to-all -------------------------------------------------------------------------


def all_to_all_exchanges():
    """all_to_all with per-peer sizes, all_to_all_single with equal and uneven splits, async; vs the definition."""
    r, n = ensure_init()
    # Rank i sends rank j (i + 1) * (j + 1) values of 100 * i + j.
    inputs = [mg.full(((r + 1) * (j + 1),), 100.0 * r + j) for j in range(n)]
    outputs = [mg.zeros((i + 1) * (r + 1)) for i in range(n)]
    dist.all_to_all(outputs, inputs)
    for i, out in enumerate(outputs):
        assert np.all(out.array == 100.0 * i + r), (i, out.array)
    # Outputs may be strided views (here the columns of one array): they are written in place.
    columns = np.zeros((2, n))
    dist.all_to_all([columns[:, i] for i in range(n)], [np.full(2, 10.0 * r + j) for j in range(n)])
    assert np.array_equal(columns, np.tile(10.0 * np.arange(n) + r, (2, 1))), columns
    # Equal splits of a (2n, 3) tensor: row block j goes to rank j.
    x = np.arange(2 * n * 3, dtype=np.float64).reshape(2 * n, 3) + 1000 * r
    y = np.zeros_like(x)
    dist.all_to_all_single(y, x)
    for i in range(n):
        expected = np.arange(2 * n * 3, dtype=np.float64).reshape(2 * n, 3)[2 * r : 2 * r + 2] + 1000 * i
        assert np.array_equal(y[2 * i : 2 * i + 2], expected), (i, y)
    # Uneven splits: rank i sends j + 1 rows to rank j (so rank r receives r + 1 rows from each).
    in_splits = [j + 1 for j in range(n)]
    x = np.repeat(np.arange(n, dtype=np.int64)[:, None] + 10 * r, in_splits, axis=0).repeat(2, axis=1)
    y = np.zeros(((r + 1) * n, 2), dtype=np.int64)
    work = dist.all_to_all_single(y, x, output_split_sizes=[r + 1] * n, input_split_sizes=in_splits, async_op=True)
    work.wait()
    assert work.is_completed()
    expected = np.repeat(np.array([10 * i + r for i in range(n)]), r + 1)[:, None].repeat(2, axis=1)
    assert np.array_equal(y, expected), y
    return r


def all_to_all_mismatch():
    """Rank 0 expects one more value from the last rank than it sends: rank 0 raises, nobody hangs."""
    r, n = ensure_init()
    inputs = [np.full(2, float(r)) for _ in range(n)]
    outputs = [np.zeros(3 if (r == 0 and i == n - 1) else 2) for i in range(n)]
    problem = message_of(lambda: dist.all_to_all(outputs, inputs))
    check = np.ones(1)
    dist.all_reduce(check)  # the group still works afterwards
    return problem, float(check[0])


def all_to_all_bad_arguments():
    """Local argument errors of the all-to-all collectives: (type name, message) per call."""
    r, n = ensure_init()
    calls = {
        "a2a_list_length": lambda: dist.all_to_all([np.zeros(2)] * (n + 1), [np.zeros(2)] * n),
        "a2a_dtypes": lambda: dist.all_to_all([np.zeros(2)] * n, [np.zeros(2, np.float32)] * n),
        "single_not_divisible": lambda: dist.all_to_all_single(np.zeros(n + 1), np.zeros(n + 1)),
        "single_split_sum": lambda: dist.all_to_all_single(np.zeros(n), np.zeros(n), [1] * n, [2] * n),
        "single_dtypes": lambda: dist.all_to_all_single(np.zeros(n), np.zeros(n, np.float32)),
    }
    return {name: message_of(call) for name, call in calls.items()}


# -- drawn cases ------------------------------------------------------------------------


def all_to_all_single_splits(spec):
    """all_to_all_single with the drawn split matrix ``spec["splits"][i][j]`` (rows rank i sends rank j)."""
    r, n = ensure_init()
    splits = spec["splits"]
    width = spec["width"]
    in_splits = splits[r]
    out_splits = [splits[i][r] for i in range(n)]
    x = np.concatenate([np.full((in_splits[j], width), 100 * r + j, dtype=np.float32) for j in range(n)])
    y = np.full((sum(out_splits), width), -1, dtype=np.float32)
    dist.all_to_all_single(y, x, output_split_sizes=out_splits, input_split_sizes=in_splits)
    return y
