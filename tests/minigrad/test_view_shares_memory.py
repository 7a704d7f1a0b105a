"""``Tensor.view`` returns a view or raises, as PyTorch: never a silent copy that writes would not reach."""

import pytest
import torch

import minigrad as mg

CASES = {
    "contiguous": lambda lib: lib.arange(6.0).reshape(2, 3).view(3, 2),
    "flatten a transpose": lambda lib: lib.arange(6.0).reshape(2, 3).t().view(6),
    "transpose, same shape": lambda lib: lib.arange(6.0).reshape(2, 3).t().view(3, 2),
    "split a sliced row dimension": lambda lib: lib.arange(24.0).reshape(4, 6)[:, :3].view(2, 2, 3),
    "merge sliced rows": lambda lib: lib.arange(24.0).reshape(4, 6)[:, :3].view(12),
    "every other row": lambda lib: lib.arange(24.0).reshape(4, 6)[::2].view(-1),
    "permuted, merged": lambda lib: lib.arange(24.0).reshape(2, 3, 4).permute(1, 0, 2).view(3, 8),
    "moved unit dimension": lambda lib: lib.arange(6.0).reshape(2, 1, 3).transpose(0, 1).view(6),
    "expanded": lambda lib: lib.arange(4.0).expand(3, 4).view(12),
    "expanded unit": lambda lib: lib.ones(1).expand(3).view(3, 1),
    "empty transpose": lambda lib: lib.zeros(0, 3).t().view(-1),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_view_succeeds_and_fails_where_pytorch_does(name):
    make = CASES[name]
    try:
        expected = make(torch)
    except RuntimeError:
        with pytest.raises(RuntimeError, match=r"use \.reshape"):
            make(mg)
        return
    got = make(mg)
    assert got.shape == tuple(expected.shape)
    assert got.tolist() == expected.tolist()


def test_writes_through_a_view_reach_the_base_and_reshape_still_copies_where_it_must():
    base = mg.zeros(4, 6)
    base[:, :3].view(2, 2, 3)[1, 0, 2] = 5.0
    assert base[2, 2].item() == 5.0
    flat = base.t().reshape(24)  # reshape copies here, as in PyTorch; view would raise
    flat[0] = 7.0
    assert base[0, 0].item() == 0.0
