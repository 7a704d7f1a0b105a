"""``_Loss``: the loss modules of regression_losses and margin_losses check their ``reduction`` when built."""

from __future__ import annotations

import pytest

from minigrad import nn
from minigrad.nn.loss_base import _Loss

LOSSES = [(nn.L1Loss, ()), (nn.SmoothL1Loss, ()), (nn.HuberLoss, ()), (nn.GaussianNLLLoss, ()),
          (nn.PoissonNLLLoss, ()), (nn.SoftMarginLoss, ()), (nn.MarginRankingLoss, (0.5,)),
          (nn.CosineEmbeddingLoss, (0.5,))]  # fmt: skip


@pytest.mark.parametrize(("loss", "args"), LOSSES, ids=lambda v: getattr(v, "__name__", ""))
def test_loss_modules_check_their_reduction_by_name(loss, args):
    assert issubclass(loss, _Loss)
    assert loss(*args, reduction="sum").reduction == "sum"
    with pytest.raises(ValueError, match=rf"^{loss.__name__}\(\): 'average' is not a valid value for reduction"):
        loss(*args, reduction="average")
