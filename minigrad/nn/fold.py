"""``Fold`` and ``Unfold``: the sliding-block rearrangements ``F.fold`` (col2im) and ``F.unfold`` (im2col) as layers.

As in PyTorch, the constructors store their arguments as given (an int or a
pair each) and check nothing; the forward passes them to the functions,
which raise for bad values (TypeError or RuntimeError, see ``F.unfold``).
"""

from __future__ import annotations

from minigrad.nn import functional as F
from minigrad.nn.module import Module

__all__ = ["Fold", "Unfold"]


class Fold(Module):
    """Sum sliding local blocks into an image: ``F.fold`` with this layer's settings.

    Args:
        output_size: (H, W) of the image (an int for both).
        kernel_size: size of each block (an int or a pair).
        dilation, padding, stride: as in ``F.fold`` (defaults 1, 0, 1).

    Shapes: input (N, C * kh * kw, L) or (C * kh * kw, L), where L is the number
    of block positions in the padded output; output (N, C, H, W) or (C, H, W).
    """

    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.output_size = output_size
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input):  # noqa: A002  (PyTorch's name)
        """``F.fold(input, output_size, kernel_size, dilation, padding, stride)``."""
        return F.fold(input, self.output_size, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        return (f"output_size={self.output_size}, kernel_size={self.kernel_size}, dilation={self.dilation}, "
                f"padding={self.padding}, stride={self.stride}")


class Unfold(Module):
    """Extract sliding local blocks (im2col): ``F.unfold`` with this layer's settings.

    Args:
        kernel_size: size of each block (an int or a pair).
        dilation, padding, stride: as in ``F.unfold`` (defaults 1, 0, 1).

    Shapes: input (N, C, H, W) or (C, H, W); output (N, C * kh * kw, L) or
    (C * kh * kw, L), L the number of block positions.
    """

    def __init__(self, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input):  # noqa: A002
        """``F.unfold(input, kernel_size, dilation, padding, stride)``."""
        return F.unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, dilation={self.dilation}, padding={self.padding}, "
                f"stride={self.stride}")
