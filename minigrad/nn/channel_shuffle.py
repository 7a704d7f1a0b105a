"""``channel_shuffle`` (``torch.nn.functional.channel_shuffle``, also ``torch.channel_shuffle``) and the
layer ``ChannelShuffle``: interleave the channels of ``groups`` groups (ShuffleNet).

A reshape, a transpose and a reshape, so the gradient (the inverse
permutation) comes from those ops. As in PyTorch the result is always a new
tensor, never a view of the input.
"""

from __future__ import annotations

import numpy as np

from minigrad.nn.module import Module
from minigrad.ops._util import expect_tensor

__all__ = ["channel_shuffle", "ChannelShuffle"]


def channel_shuffle(input, groups):  # noqa: A002  (PyTorch's names)
    """Split the C channels of (N, C, *) into ``groups`` groups and interleave them.

    The channels, seen as a (groups, C / groups) grid, are read out column
    by column: output channel ``k * groups + g`` is input channel
    ``g * (C / groups) + k``. Any dtype; the shape is unchanged.

    Raises:
        TypeError: ``input`` is not a Tensor, or ``groups`` is not an int.
        RuntimeError (PyTorch's type): ``input`` has fewer than 3 dimensions, ``groups``
            is not positive, or C is not divisible by ``groups``.
    """
    fn = "channel_shuffle"
    expect_tensor(input, fn, "input")
    if not isinstance(groups, (int, np.integer)) or isinstance(groups, (bool, np.bool_)):
        raise TypeError(f"{fn}(): argument 'groups' must be an int, got {type(groups).__name__}")
    groups = int(groups)
    if input.ndim < 3:
        raise RuntimeError(f"{fn}(): expects an input of 3 or more dimensions (N, C, *), got shape {input.shape}")
    if groups <= 0:
        raise RuntimeError(f"{fn}(): the number of groups must be positive, got groups={groups}")
    n, channels, *rest = input.shape
    if channels % groups:
        raise RuntimeError(
            f"{fn}(): the number of channels must be divisible by groups, got {channels} channels "
            f"(input of shape {input.shape}) and groups={groups}"
        )
    if groups == 1 or groups == channels:  # the identity permutation; a copy, as PyTorch returns
        return input.clone()
    grid = input.reshape(n, groups, channels // groups, *rest)
    return grid.transpose(1, 2).reshape(input.shape)


class ChannelShuffle(Module):
    """Interleave the channels of ``groups`` groups: see ``channel_shuffle``.

    Args:
        groups: the number of groups (checked when called, as in PyTorch).

    Shapes: input (N, C, *), C divisible by ``groups``; output the same shape.
    """

    def __init__(self, groups: int):
        super().__init__()
        self.groups = groups

    def forward(self, input):  # noqa: A002
        """``channel_shuffle(input, groups)``."""
        return channel_shuffle(input, self.groups)

    def extra_repr(self) -> str:
        return f"groups={self.groups}"
