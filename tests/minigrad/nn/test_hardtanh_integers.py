"""``hardtanh`` and ``relu6`` of integer tensors, as PyTorch: the result stays integer, clipped into the
bounds truncated to ints; an unsigned input refuses a (truncated) negative lower bound; bool is refused.

They raised NotImplementedError before, where PyTorch computes.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import minigrad as mg
import minigrad.nn.functional as F

VALUES = np.array([-7, -1, 0, 1, 2, 3, 6, 8, 100])
BOUNDS = [(), (0.5, 2.5), (-2, 3), (-0.5, 2), (-1.5, 0), (3, 3)]


def _outcome(run):
    try:
        result = run()
    except Exception as error:  # noqa: BLE001  (the class is what is compared)
        return type(error).__name__
    return result.tolist(), str(result.dtype).replace("torch.", "")


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "int64", "uint8"])
@pytest.mark.parametrize("bounds", BOUNDS)
def test_hardtanh_of_integers_matches_pytorch(dtype, bounds):
    x = VALUES.astype(dtype)
    ours = _outcome(lambda: F.hardtanh(mg.tensor(x), *bounds))
    theirs = _outcome(lambda: torch.nn.functional.hardtanh(torch.tensor(x), *bounds))
    assert ours == theirs


@pytest.mark.parametrize("dtype", ["int8", "int64", "uint8"])
def test_relu6_and_the_modules_of_integers_match_pytorch(dtype):
    x = VALUES.astype(dtype)
    assert F.relu6(mg.tensor(x)).tolist() == torch.nn.functional.relu6(torch.tensor(x)).tolist()
    assert mg.nn.ReLU6()(mg.tensor(x)).tolist() == torch.nn.ReLU6()(torch.tensor(x)).tolist()
    if dtype != "uint8":  # the default lower bound -1 is refused for unsigned inputs, by both
        assert mg.nn.Hardtanh()(mg.tensor(x)).tolist() == torch.nn.Hardtanh()(torch.tensor(x)).tolist()


def test_relu6_of_integers_in_place_writes_the_input():
    ours, theirs = mg.tensor(VALUES.copy()), torch.tensor(VALUES.copy())
    assert F.relu6(ours, inplace=True) is ours
    torch.nn.functional.relu6(theirs, inplace=True)
    assert ours.tolist() == theirs.tolist()


def test_bool_input_is_a_runtime_error_as_in_pytorch():
    with pytest.raises(RuntimeError):
        torch.nn.functional.hardtanh(torch.tensor([True, False]))
    with pytest.raises(RuntimeError, match="Bool"):
        F.hardtanh(mg.tensor([True, False]))
