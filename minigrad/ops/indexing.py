"""Indexing: ``t[index]`` with basic (ints, slices, None, ...) and advanced (integer or
boolean arrays) indices. The backward scatters the gradient back, summing
repeated indices (``backend.scatter_add``).
"""

from __future__ import annotations

import numpy as np

from minigrad import backend
from minigrad.function import FunctionNode, ViewNode
from minigrad.tensor import Tensor


def unwrap_index(index, device=None):
    """Replace Tensors and lists inside an index by arrays NumPy/CuPy understand.

    With ``device``, index arrays are moved there (a CPU index tensor may
    index a CUDA tensor, as in PyTorch); without it lists become CPU arrays.
    """
    if isinstance(index, tuple):
        return tuple(_unwrap_one(i, device) for i in index)
    return _unwrap_one(index, device)


def _unwrap_one(i, device):
    if isinstance(i, Tensor):
        i = i.array
    elif isinstance(i, list):
        i = backend.as_array(i)
    if device is not None and backend.is_array(i):
        i = backend.to_device(i, device)
    return i


def is_advanced(index) -> bool:
    """True when ``index`` holds an index array (integer or boolean): NumPy then copies instead of viewing."""
    items = index if isinstance(index, tuple) else (index,)
    return any(backend.is_array(i) for i in items)


class Index(ViewNode):
    """a[index] (a view for basic indices, a copy for advanced ones)"""

    def __init__(self, index):
        self.index = index

    def view_array(self, a):
        return a[self.index]

    def fresh(self):
        return Index(self.index)

    def forward(self, a):
        self.in_shape = a.shape
        return a[self.index]

    def backward(self, g):
        return IndexScatter(self.index, self.in_shape)(g)


class IndexScatter(FunctionNode):
    """zeros of ``shape`` with ``g`` added at ``index`` (repeated indices summed)"""

    def __init__(self, index, shape):
        self.index = index
        self.shape = shape

    def forward(self, g):
        out = self.xp.zeros(self.shape, dtype=g.dtype)
        if is_advanced(self.index):
            backend.scatter_add(out, self.index, g)
        else:
            out[self.index] = g
        return out

    def backward(self, gg):
        return Index(self.index)(gg)


# Index items NumPy answers with a view: the common case, handled without unwrapping anything.
_BASIC_ITEMS = (int, slice, type(None), type(Ellipsis))


def _basic_view_index(idx):
    """``idx`` as a basic index that makes NumPy return a view, or None when it is not basic.

    ``a[0, 1]`` gives a NumPy scalar (a copy); ``a[0, 1, ...]`` gives a 0-d view,
    which PyTorch's ``t[0, 1]`` is (``t[0, 1] += 1`` changes ``t``).
    """
    kind = type(idx)
    if kind is int or kind is slice:
        return (idx, Ellipsis)
    if kind is not tuple:
        return None
    has_ellipsis = False
    for item in idx:
        item_kind = type(item)
        if item_kind not in _BASIC_ITEMS:
            return None
        if item is Ellipsis:
            has_ellipsis = True
    return idx if has_ellipsis else idx + (Ellipsis,)


def index(a, idx):
    """``a[idx]``: differentiable basic and advanced indexing (basic indices give views).

    Raises:
        IndexError: the index is out of range (names the shape), or a boolean
            mask does not match the tensor's shape.
        TypeError: the index holds a string. ValueError: a slice step is zero (PyTorch's classes).
    """
    view_index = _basic_view_index(idx)
    if view_index is None:
        idx = unwrap_index(idx, a.device)
        xp = backend.get_array_module(a.array)
        if backend.is_array(idx) and idx.dtype == xp.bool_ and idx.shape != a.shape[: idx.ndim]:
            raise IndexError(f"boolean mask of shape {idx.shape} does not match the tensor's shape {a.shape}")
        view_index = idx if is_advanced(idx) else _basic_view_index(_plain(idx))
        if view_index is None:
            view_index = idx
    try:
        return Index(view_index)(a)
    except IndexError as error:
        items = idx if isinstance(idx, tuple) else (idx,)
        kind = TypeError if any(isinstance(item, str) for item in items) else IndexError  # PyTorch's classes
        raise kind(f"index {idx!r} is invalid for a tensor of shape {a.shape}: {error}") from None
    except RuntimeError as error:
        if not isinstance(error.__cause__, ValueError):
            raise
        # NumPy's ValueError here is a zero slice step, which PyTorch also refuses with ValueError.
        raise ValueError(f"index {idx!r} is invalid for a tensor of shape {a.shape}: {error.__cause__}") from None


def _plain(idx):
    """NumPy integers in a basic index as Python ints (so ``_basic_view_index`` recognizes them)."""
    if isinstance(idx, tuple):
        return tuple(int(i) if isinstance(i, np.integer) else i for i in idx)
    return int(idx) if isinstance(idx, np.integer) else idx
