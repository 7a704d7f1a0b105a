"""``Buffer``: a Tensor that a ``Module`` registers as a buffer when assigned as an attribute."""

from __future__ import annotations

import numpy as np

from minigrad.promotion import get_default_dtype
from minigrad.tensor import Tensor

__all__ = ["Buffer"]


class Buffer(Tensor):
    """A Tensor that a ``Module`` registers as a buffer when assigned as an attribute.

    ``module.running = nn.Buffer(mg.zeros(3))`` is ``module.register_buffer("running",
    ..., persistent=True)``; ``persistent=False`` keeps it out of ``state_dict``.
    The data is shared, not copied; ``requires_grad`` is kept.

    Args:
        data: a Tensor (default: an empty tensor of the default dtype).
        persistent: whether ``state_dict`` saves it.

    Raises:
        TypeError: ``data`` is not a Tensor.
    """

    __slots__ = ("persistent",)

    def __init__(self, data=None, *, persistent: bool = True):
        if data is None:
            data = Tensor(np.empty((0,), dtype=get_default_dtype()))
        if not isinstance(data, Tensor):
            raise TypeError(f"Buffer: data must be a Tensor, got {type(data).__name__}")
        super().__init__(data.array, requires_grad=data.requires_grad)
        self.persistent = bool(persistent)
