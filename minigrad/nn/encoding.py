"""``one_hot``: class indices as one-hot int64 vectors, as ``torch.nn.functional.one_hot``."""

from __future__ import annotations

import numpy as np

from minigrad import backend
from minigrad.tensor import Tensor

__all__ = ["one_hot"]


def one_hot(tensor, num_classes=-1):
    """An int64 tensor of shape ``tensor.shape + (num_classes,)`` with a 1 at each index, 0 elsewhere.

    Args:
        tensor: an int64 Tensor of class indices (any shape, 0-d included).
        num_classes: the length of each vector; -1 (default) takes the largest
            index plus one.

    Returns:
        An int64 Tensor on the input's device, outside any graph.

    Raises:
        TypeError: ``tensor`` is not a Tensor, or ``num_classes`` is not an int.
        RuntimeError: the indices are not int64, an index is negative or not
            below ``num_classes``, or ``num_classes`` is -1 for an empty tensor
            (PyTorch's messages).
    """
    if not isinstance(tensor, Tensor):
        raise TypeError(f"one_hot(): argument 'tensor' must be a Tensor, got {type(tensor).__name__}")
    if not isinstance(num_classes, (int, np.integer)) or isinstance(num_classes, bool):
        raise TypeError(f"one_hot(): num_classes must be an int, got {type(num_classes).__name__}")
    indices = tensor.array
    if indices.dtype != np.int64:
        raise RuntimeError(f"one_hot is only applicable to index tensor of type LongTensor (got {indices.dtype}).")
    xp = backend.get_array_module(indices)
    if num_classes == -1:
        if indices.size == 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        num_classes = int(indices.max()) + 1
    if indices.size:
        if int(indices.min()) < 0:
            raise RuntimeError("Class values must be non-negative.")
        if int(indices.max()) >= num_classes:
            raise RuntimeError(f"Class values must be smaller than num_classes ({num_classes}).")
    elif num_classes < 0:
        raise RuntimeError(f"num_classes must be non-negative, got {num_classes}.")
    classes = xp.arange(int(num_classes), dtype=np.int64)
    return Tensor._make((indices[..., None] == classes).astype(np.int64), False, None, 0)
