"""Shape ops: reshape, permute, broadcast, squeeze/unsqueeze, cat, stack, device moves.

None of these change values, so each backward is the inverse rearrangement
of the gradient.
"""

from __future__ import annotations

import operator

import numpy as np

from minigrad import backend, promotion
from minigrad.function import FunctionNode, ViewNode
from minigrad.ops._util import expect_tensor, normalize_axis, unbroadcast


class _ShapeView(ViewNode):
    """A view op whose one parameter is the output's shape (Reshape, BroadcastTo); ``fresh`` rebuilds it from that."""

    def __init__(self, shape):
        self.shape = shape

    def fresh(self):
        return type(self)(self.shape)


class Reshape(_ShapeView):
    """a viewed with a new shape (a copy when NumPy cannot view it)"""

    def view_array(self, a):
        return a.reshape(self.shape)

    def forward(self, a):
        self.in_shape = a.shape
        return a.reshape(self.shape)

    def backward(self, g):
        return g.reshape(self.in_shape)


class Permute(ViewNode):
    """a with its axes reordered"""

    def __init__(self, axes):
        self.axes = axes

    def view_array(self, a):
        return a.transpose(self.axes)

    def fresh(self):
        return Permute(self.axes)

    def forward(self, a):
        return a.transpose(self.axes)

    def backward(self, g):
        inverse = [0] * len(self.axes)
        for i, a in enumerate(self.axes):
            inverse[a] = i
        return Permute(tuple(inverse))(g)


class BroadcastTo(_ShapeView):
    """a broadcast to a larger shape (a read-only view)"""

    def view_array(self, a):
        return backend.get_array_module(a).broadcast_to(a, self.shape)

    def forward(self, a):
        self.in_shape = a.shape
        return self.xp.broadcast_to(a, self.shape)

    def backward(self, g):
        return unbroadcast(g, self.in_shape)


class Cat(FunctionNode):
    """inputs joined along an existing axis, in PyTorch's result dtype (float32 with int64 stays float32)"""

    def __init__(self, axis):
        self.axis = axis

    def forward(self, *arrays):
        self.sizes = [a.shape[self.axis] for a in arrays]
        self.dtypes = [a.dtype for a in arrays]
        return self.xp.concatenate(arrays, axis=self.axis, dtype=_joined_dtype(arrays))

    def backward(self, g):
        grads = []
        start = 0
        lead = (slice(None),) * self.axis
        for size, dtype, need in zip(self.sizes, self.dtypes, self.needs_input_grad):
            grads.append(_in_dtype(g[lead + (slice(start, start + size),)], dtype) if need else None)
            start += size
        return tuple(grads)


class Stack(FunctionNode):
    """inputs joined along a new axis, in PyTorch's result dtype (as ``Cat``)"""

    def __init__(self, axis):
        self.axis = axis

    def forward(self, *arrays):
        self.dtypes = [a.dtype for a in arrays]
        return self.xp.stack(arrays, axis=self.axis, dtype=_joined_dtype(arrays))

    def backward(self, g):
        lead = (slice(None),) * self.axis
        return tuple(
            _in_dtype(g[lead + (i,)], dtype) if need else None
            for i, (dtype, need) in enumerate(zip(self.dtypes, self.needs_input_grad))
        )


def _joined_dtype(arrays):
    """``torch.result_type`` of the joined arrays: NumPy's own rule would make float32 and int64 float64."""
    if all(a.dtype == arrays[0].dtype for a in arrays):
        return arrays[0].dtype
    return promotion.result_type(*arrays)


def _in_dtype(grad, dtype):
    """An input's share of the gradient, in that input's dtype (a float16 input of a float64 join gets float16)."""
    return grad if grad.dtype == dtype else grad.to(dtype)


class ToDevice(FunctionNode):
    """a copied to another device; the gradient is copied back"""

    def __init__(self, device):
        self.device = device

    def forward(self, a):
        self.in_device = backend.device_of(a)
        return backend.to_device(a, self.device)

    def backward(self, g):
        return ToDevice(self.in_device)(g)


# -- public functions -----------------------------------------------------------


def _shape_arg(shape, op: str, what: str = "shape"):
    """``(2, 3)``, ``((2, 3),)``, ``([2, 3],)`` or ``3`` as a tuple of Python ints (NumPy ints accepted)."""
    if isinstance(shape, int) and not isinstance(shape, bool) or isinstance(shape, np.integer):
        shape = (shape,)
    if not isinstance(shape, (tuple, list)):
        raise TypeError(f"{op}: {what} must be a sequence of ints, got {shape!r}")
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    try:
        if any(isinstance(n, bool) for n in shape):
            raise TypeError
        return tuple(operator.index(n) for n in shape)
    except TypeError:
        raise TypeError(f"{op}: {what} entries must be ints, got {shape!r}") from None


def reshape(a, shape):
    """``a`` with a new shape (one entry may be -1).

    Raises:
        RuntimeError: the number of elements differs, or more than one entry is -1 (names both shapes),
            as PyTorch.
    """
    shape = _shape_arg(shape, "reshape")
    if shape == a.shape:
        return a
    known = 1
    for n in shape:
        if n != -1:
            known *= n
    total = a.array.size
    if shape.count(-1) > 1 or (-1 not in shape and known != total) or (
        -1 in shape and (known == 0 or total % known)
    ):
        raise RuntimeError(f"reshape: shape {shape} is invalid for a tensor of shape {a.shape} ({total} elements)")
    return Reshape(shape)(a)


def flatten(a, start_dim=0, end_dim=-1):
    """Merge dimensions ``start_dim``..``end_dim`` (inclusive) into one.

    Raises:
        IndexError: a dim is out of range. RuntimeError: ``start_dim`` comes after ``end_dim``, as PyTorch.
    """
    if a.ndim == 0:
        return reshape(a, (1,))
    start, end = normalize_axis((start_dim, end_dim), a.ndim, "flatten")
    if start > end:
        raise RuntimeError(f"flatten: start_dim {start_dim} comes after end_dim {end_dim}")
    shape = a.shape[:start] + (-1,) + a.shape[end + 1 :]
    if 0 in a.shape:
        merged = 1
        for n in a.shape[start : end + 1]:
            merged *= n
        shape = a.shape[:start] + (merged,) + a.shape[end + 1 :]
    return Reshape(shape)(a)


def permute(a, dims):
    """``a`` with its dimensions in the order ``dims``.

    Raises:
        IndexError: a dim is out of range. RuntimeError: ``dims`` is not a permutation of the dimensions
            (a repeat, or too few or too many), as PyTorch.
    """
    dims = _shape_arg(dims, "permute", "dims")
    axes = normalize_axis(dims, a.ndim, "permute") if dims else ()
    if sorted(axes) != list(range(a.ndim)):
        raise RuntimeError(f"permute: {dims} is not a permutation of the {a.ndim} dimensions of shape {a.shape}")
    return Permute(axes)(a)


def transpose(a, dim0=None, dim1=None):
    """``a`` with dimensions ``dim0`` and ``dim1`` swapped (a 2-D tensor: both, by default)."""
    if dim0 is None and dim1 is None:
        if a.ndim > 2:
            raise RuntimeError(f"transpose() without dims needs at most 2 dimensions, got shape {a.shape}")
        return Permute(tuple(reversed(range(a.ndim))))(a)
    d0, d1 = normalize_axis((dim0, dim1), a.ndim, "transpose")
    axes = list(range(a.ndim))
    axes[d0], axes[d1] = axes[d1], axes[d0]
    return Permute(tuple(axes))(a)


def unsqueeze(a, dim):
    """``a`` with a new size-1 dimension at ``dim`` (-1 appends).

    Raises:
        TypeError: ``dim`` is not an int. IndexError: it is out of range.
    """
    if not isinstance(dim, (int, np.integer)) or isinstance(dim, bool):
        raise TypeError(f"unsqueeze: dim must be an int, got {type(dim).__name__}")
    dim = int(dim)
    if not -a.ndim - 1 <= dim <= a.ndim:
        raise IndexError(f"unsqueeze: dim {dim} is out of range for a tensor with {a.ndim} dimensions")
    dim = dim % (a.ndim + 1)
    return Reshape(a.shape[:dim] + (1,) + a.shape[dim:])(a)


def squeeze(a, dim=None):
    """``a`` without its size-1 dimensions (only ``dim`` when given; no-op if that is not 1)."""
    if dim is None:
        return Reshape(tuple(n for n in a.shape if n != 1))(a)
    axes = normalize_axis(dim, a.ndim, "squeeze")
    shape = tuple(n for i, n in enumerate(a.shape) if not (i in axes and n == 1))
    return Reshape(shape)(a) if shape != a.shape else a


def expand(a, shape):
    """``a`` broadcast to ``shape``; -1 keeps that dimension.

    Raises:
        RuntimeError: the shapes are not broadcastable (names both), as PyTorch.
    """
    shape = _shape_arg(shape, "expand")
    lead = len(shape) - a.ndim
    if lead < 0:
        raise RuntimeError(f"expand: target shape {shape} has fewer dimensions than the tensor's {a.shape}")
    if -1 in shape[:lead]:
        raise RuntimeError(f"expand: -1 is not allowed for the new leading dimensions of {shape}")
    full = tuple(a.shape[i - lead] if n == -1 and i >= lead else n for i, n in enumerate(shape))
    for i, n in enumerate(a.shape):
        if n != 1 and n != full[lead + i]:
            raise RuntimeError(f"expand: shape {a.shape} cannot be broadcast to {shape}")
    if full == a.shape:
        return a
    return BroadcastTo(full)(a)


def cat(tensors, dim=0):
    """Join tensors of equal shape (except along ``dim``) along ``dim``.

    Raises:
        TypeError: ``tensors`` is not a sequence of Tensors, or ``dim`` is not an int.
        ValueError: the list is empty (PyTorch's class for cat).
        RuntimeError: a tensor is 0-d, or the shapes differ off ``dim`` (names them), as PyTorch.
    """
    tensors = _tensor_list(tensors, "cat")
    first = tensors[0]
    if not isinstance(dim, (int, np.integer)) or isinstance(dim, bool):
        raise TypeError(f"cat: dim must be an int, got {type(dim).__name__}")
    for i, t in enumerate(tensors):
        if t.ndim == 0:
            raise RuntimeError(f"cat: tensors[{i}] is 0-d and cannot be concatenated; unsqueeze it or use stack")
    (axis,) = normalize_axis(dim, first.ndim, "cat")
    for t in tensors[1:]:
        if t.ndim != first.ndim or any(
            i != axis and m != n for i, (m, n) in enumerate(zip(t.shape, first.shape))
        ):
            raise RuntimeError(
                f"cat: tensors must match in every dimension except {dim}: got shapes "
                f"{[tuple(x.shape) for x in tensors]}"
            )
    return Cat(axis)(*tensors)


def stack(tensors, dim=0):
    """Join tensors of equal shape along a new dimension ``dim``.

    Raises:
        TypeError: ``tensors`` is not a sequence of Tensors, or ``dim`` is not an int.
        RuntimeError: the list is empty or the shapes differ (names them), as PyTorch.
    """
    tensors = _tensor_list(tensors, "stack", RuntimeError)
    if not isinstance(dim, (int, np.integer)) or isinstance(dim, bool):
        raise TypeError(f"stack: dim must be an int, got {type(dim).__name__}")
    dim = int(dim)
    shapes = {tuple(t.shape) for t in tensors}
    if len(shapes) != 1:
        raise RuntimeError(f"stack: expects tensors of equal shape, got {[tuple(t.shape) for t in tensors]}")
    ndim = tensors[0].ndim + 1
    if not -ndim <= dim < ndim:
        raise IndexError(f"stack: dim {dim} is out of range for {ndim} dimensions")
    return Stack(dim % ndim)(*tensors)


def _tensor_list(tensors, op: str, empty_error: type[Exception] = ValueError) -> list:
    """``tensors`` as a non-empty list of Tensors, or TypeError/``empty_error`` naming ``op``.

    PyTorch rejects an empty list with ValueError in cat and RuntimeError in stack; the caller picks.
    """
    if not isinstance(tensors, (list, tuple)):
        raise TypeError(
            f"{op}(): argument 'tensors' must be a sequence of Tensors, got {type(tensors).__name__}"
        )
    if not tensors:
        raise empty_error(f"{op}: expected a non-empty sequence of tensors")
    for i, t in enumerate(tensors):
        expect_tensor(t, op, f"tensors[{i}]")
    return list(tensors)
