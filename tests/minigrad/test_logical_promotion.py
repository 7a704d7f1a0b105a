"""logical_and/or/xor take truth in PyTorch's promoted dtype (a 0-d tensor's tiny value can round to 0)."""

import pytest
import torch

import minigrad as mg

PAIRS = [
    (([0.0], "float16"), (3.4e-175, "float64")),  # 0-d float64 joins float16: the tiny value becomes 0
    (([0.0], "float16"), ([3.4e-175], "float64")),  # both dimensioned: float64, the value stays nonzero
    (([1e-30], "float32"), (1e-300, "float64")),
    (([5], "uint8"), (256.5, "float32")),
    (([1], "int8"), (0.25, "float32")),
    (([True, False], "bool"), ([0.5, 0.0], "float64")),
]


@pytest.mark.parametrize("fn", ["logical_and", "logical_or", "logical_xor"])
@pytest.mark.parametrize(("a", "b"), PAIRS)
def test_logical_ops_match_pytorch_on_mixed_dtypes(fn, a, b):
    mine = getattr(mg, fn)(mg.tensor(a[0], dtype=getattr(mg, a[1])), mg.tensor(b[0], dtype=getattr(mg, b[1])))
    theirs = getattr(torch, fn)(
        torch.tensor(a[0], dtype=getattr(torch, a[1])), torch.tensor(b[0], dtype=getattr(torch, b[1]))
    )
    assert mine.tolist() == theirs.tolist() and mine.dtype == mg.bool
