"""``_Loss``: what every loss module of ``regression_losses`` and ``margin_losses`` shares.

A loss module holds the options of its loss function and hands them over in
``forward``. One option they all have is PyTorch's ``reduction`` ('mean',
'sum' or 'none'), checked here when the module is built, so a misspelled
reduction fails at construction and not at the first batch.
"""

from __future__ import annotations

from minigrad.nn.loss_utils import check_reduction
from minigrad.nn.module import Module

__all__ = ["_Loss"]


class _Loss(Module):
    """A loss module with its checked ``reduction`` (a base, like PyTorch's ``_Loss``).

    Raises:
        ValueError: an unknown reduction (the message names the loss class).
    """

    def __init__(self, *, reduction: str = "mean"):
        super().__init__()
        self.reduction = check_reduction(type(self).__name__, reduction)
