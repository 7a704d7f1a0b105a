"""Gather and scatter along one dimension: ``gather``, ``scatter``, ``scatter_add`` (and their
in-place forms), ``index_select``.

``gather(a, dim, index)`` reads, for every entry of ``index``, the element of ``a`` at that entry's
coordinates with coordinate ``dim`` replaced by the entry's value::

    out[i][j][k] = a[index[i][j][k]][j][k]      # dim == 0
    out[i][j][k] = a[i][index[i][j][k]][k]      # dim == 1

``scatter`` writes the other way round. ``index`` has the input's number of dimensions and may be
smaller than it (along ``dim``: any size), as in PyTorch. The two are each other's adjoints: the
backward of a gather scatter-adds its gradient into zeros (``GatherAdjoint``), and the backward of a
scatter gathers.
"""

from __future__ import annotations

import numpy as np

from minigrad import backend
from minigrad import inplace as _inplace
from minigrad.function import FunctionNode
from minigrad.ops import indexing as _indexing
from minigrad.ops._util import expect_tensor, normalize_axis
from minigrad.tensor import Tensor


def positions(xp, index_array, axis: int) -> tuple:
    """The advanced index addressing what ``gather`` reads (or ``scatter`` writes) for ``index_array``.

    Entry ``p`` of ``index_array`` addresses the element at ``p``'s coordinates
    with coordinate ``axis`` replaced by ``index_array[p]``.
    """
    ndim = index_array.ndim
    return tuple(
        index_array if d == axis else xp.arange(n).reshape((n,) + (1,) * (ndim - d - 1))
        for d, n in enumerate(index_array.shape)
    )


def _leading_block(shape) -> tuple:
    """The basic index of the block ``[:shape[0], :shape[1], ...]`` (the part of a source an index uses)."""
    return tuple(slice(0, n) for n in shape)


class Gather(FunctionNode):
    """a's elements at ``index`` along ``axis`` (inputs: a, index); backward: ``GatherAdjoint``"""

    def __init__(self, axis):
        self.axis = axis

    def forward(self, a, index_array):
        self.retain_inputs((1,))
        self.in_shape = a.shape
        return a[positions(self.xp, index_array, self.axis)]

    def backward(self, g):
        (index_t,) = self.saved_inputs
        return GatherAdjoint(self.axis, self.in_shape)(g, index_t), None


class GatherAdjoint(FunctionNode):
    """zeros of ``shape`` with ``g`` added where ``Gather`` read (repeated positions summed); gather's backward"""

    def __init__(self, axis, shape):
        self.axis = axis
        self.shape = shape

    def forward(self, g, index_array):
        self.retain_inputs((1,))
        out = self.xp.zeros(self.shape, dtype=g.dtype)
        backend.scatter_add(out, positions(self.xp, index_array, self.axis), g)
        return out

    def backward(self, gg):
        (index_t,) = self.saved_inputs
        return Gather(self.axis)(gg, index_t), None


def _source_grad(g, index_t, axis, src_shape):
    """The gradient of a scatter's source: ``g`` gathered at the index, zero where the source went unused.

    (PyTorch returns the gathered block alone, which fails its own shape
    check when the source is larger than the index; minigrad pads it.)
    """
    grad = Gather(axis)(g, index_t)
    if grad.shape != tuple(src_shape):
        grad = _indexing.IndexScatter(_leading_block(grad.shape), tuple(src_shape))(grad)
    return grad


class ScatterAdd(FunctionNode):
    """a with ``src`` added at ``index`` along ``axis`` (inputs: a, index, src; repeated positions summed)"""

    def __init__(self, axis):
        self.axis = axis

    def forward(self, a, index_array, src):
        self.retain_inputs((1,))
        self.src_shape = src.shape
        out = a.copy()
        backend.scatter_add(out, positions(self.xp, index_array, self.axis), src[_leading_block(index_array.shape)])
        return out

    def backward(self, g):
        need_a, _, need_src = self.needs_input_grad
        (index_t,) = self.saved_inputs
        return (
            g if need_a else None,
            None,
            _source_grad(g, index_t, self.axis, self.src_shape) if need_src else None,
        )


class Scatter(FunctionNode):
    """a with ``src`` (a tensor, or a number) written at ``index`` along ``axis`` (inputs: a, index, src)

    Where ``index`` repeats a position, one of the values written there wins.
    Gradients: ``a`` gets ``g`` with the written positions zeroed, a tensor
    ``src`` gets ``g`` gathered at the index (as in PyTorch).
    """

    def __init__(self, axis):
        self.axis = axis

    def forward(self, a, index_array, src):
        self.retain_inputs((1,))
        self.src_shape = getattr(src, "shape", None)
        out = a.copy()
        where = positions(self.xp, index_array, self.axis)
        out[where] = src[_leading_block(index_array.shape)] if self.src_shape is not None else src
        return out

    def backward(self, g):
        need_a, _, need_src = self.needs_input_grad
        (index_t,) = self.saved_inputs
        grad_a = Scatter(self.axis)(g, index_t, 0.0) if need_a else None
        grad_src = _source_grad(g, index_t, self.axis, self.src_shape) if need_src else None
        return grad_a, None, grad_src


SCATTER_MULTIPLY_GRAD_MESSAGE = (
    "the derivative of scatter with reduce='multiply' is not implemented (as in PyTorch); "
    "use scatter_add or an out-of-place product if you need gradients"
)


class ScatterMultiply(FunctionNode):
    """a with its elements at ``index`` multiplied by ``src`` (inputs: a, index, src); backward raises, as PyTorch's"""

    def __init__(self, axis):
        self.axis = axis

    def forward(self, a, index_array, src):
        out = a.copy()
        src = src[_leading_block(index_array.shape)] if hasattr(src, "shape") else src
        multiply_at(out, positions(self.xp, index_array, self.axis), src)
        return out

    def backward(self, g):
        raise RuntimeError(SCATTER_MULTIPLY_GRAD_MESSAGE)


def multiply_at(target, where, values) -> None:
    """``target[where] *= values`` with repeated positions all applied (NumPy's ``multiply.at``, also on CuPy)."""
    apply_at_in_rounds(target, where, values, backend.get_array_module(target).multiply)


def apply_at_in_rounds(target, where, values, ufunc) -> None:
    """``target[where] = ufunc(target[where], values)`` with repeated positions all applied (as ``ufunc.at``).

    Positions are sorted; the k-th occurrence of every position is applied in
    round k, so each round writes each position at most once.
    """
    xp = backend.get_array_module(target)
    where = xp.broadcast_arrays(*where)
    flat = xp.ravel_multi_index(where, target.shape).ravel()
    values = xp.broadcast_to(xp.asarray(values, dtype=target.dtype), where[0].shape).ravel()
    if flat.size == 0:
        return
    order = xp.argsort(flat, kind="stable")
    flat, values = flat[order], values[order]
    starts = xp.concatenate([xp.ones(1, dtype=bool), flat[1:] != flat[:-1]])
    group = xp.cumsum(starts) - 1
    rank = xp.arange(flat.size) - xp.flatnonzero(starts)[group]
    for k in range(int(rank.max()) + 1):
        chosen = rank == k
        spot = xp.unravel_index(flat[chosen], target.shape)
        target[spot] = ufunc(target[spot], values[chosen])


# -- argument checks --------------------------------------------------------------------------------


def _dim(a, dim, fn: str) -> int:
    if not isinstance(dim, (int, np.integer)) or isinstance(dim, bool):
        raise TypeError(f"{fn}(): argument 'dim' must be an int, got {type(dim).__name__}")
    (axis,) = normalize_axis(int(dim), a.ndim, fn)
    return axis


def _index_tensor(index_t, fn: str, dtypes="int32 or int64"):
    expect_tensor(index_t, fn, "index")
    if index_t.dtype not in (np.int32, np.int64):
        raise RuntimeError(f"{fn}(): expected dtype {dtypes} for index, got {index_t.dtype}")
    return index_t


def _check_bounds(index_array, size: int, axis: int, fn: str) -> None:
    if index_array.size == 0:
        return
    low, high = int(index_array.min()), int(index_array.max())
    bad = low if low < 0 else high if high >= size else None
    if bad is not None:
        raise RuntimeError(f"{fn}(): index {bad} is out of bounds for dimension {axis} with size {size}")


def _check_index_shape(a, index_t, axis, fn: str, src=None) -> None:
    if index_t.ndim != a.ndim:
        raise RuntimeError(
            f"{fn}(): index must have the input's number of dimensions ({a.ndim}), got shape {tuple(index_t.shape)}"
        )
    too_big = any(n > m for d, (n, m) in enumerate(zip(index_t.shape, a.shape)) if d != axis)
    if src is not None:
        too_big = too_big or any(n > m for n, m in zip(index_t.shape, src.shape))
    if too_big:
        extra = f" and no larger than src {tuple(src.shape)}" if src is not None else ""
        raise RuntimeError(
            f"{fn}(): index {tuple(index_t.shape)} must be no larger than the input {tuple(a.shape)} apart from "
            f"dimension {axis}{extra}"
        )


def check_index_add(tensor, dim, index, source, fn: str) -> int:
    """The axis for ``tensor.index_add_(dim, index, source)``, after PyTorch's checks with PyTorch's classes.

    Raises:
        TypeError: ``index`` is not a Tensor or ``dim`` not an int.
        IndexError: ``dim`` is out of range, or ``index`` has more than one dimension.
        RuntimeError: ``index`` is not int64/int32, an entry is outside ``[0, size of dim)``, or ``source``'s
            shape is not the tensor's with ``len(index)`` along ``dim``.
    """
    axis = _dim(tensor, dim, fn)
    _index_tensor(index, fn)
    if index.ndim > 1:
        raise IndexError(f"{fn}(): index must be a vector (1-D), got shape {tuple(index.shape)}")
    size = tensor.shape[axis] if tensor.ndim else 1
    _check_bounds(index.array, size, axis, fn)
    source_shape = tuple(source.shape) if isinstance(source, Tensor) else np.shape(source)
    expected = tuple(tensor.shape[:axis]) + (index.numel(),) + tuple(tensor.shape[axis + 1 :])
    if tensor.ndim and source_shape != expected:
        raise RuntimeError(
            f"{fn}(): source must have shape {expected} (the tensor's {tuple(tensor.shape)} with the {index.numel()} "
            f"indexed positions along dim {dim}), got {source_shape}"
        )
    return axis


def _as_1d(t):
    """A 0-d tensor as a 1-element one (PyTorch treats a scalar as having one dim of size 1 here)."""
    return t.reshape(1) if t.ndim == 0 else t


# -- public functions ----------------------------------------------------------------------------------


def gather(input, dim, index):  # noqa: A002  (PyTorch's names)
    """Elements of ``input`` along ``dim`` picked by ``index`` (see the module docstring).

    ``index`` is an int64 or int32 tensor with ``input``'s number of
    dimensions, no larger than ``input`` except along ``dim``; the result has
    ``index``'s shape. Differentiable in ``input``.

    Raises:
        TypeError: ``input`` or ``index`` is not a Tensor, or ``dim`` is not an int.
        IndexError: ``dim`` is out of range.
        RuntimeError: ``index`` has another dtype, another number of dimensions,
            a larger size, or an entry outside ``[0, input.size(dim))``.
    """
    expect_tensor(input, "gather")
    axis = _dim(input, dim, "gather")
    _index_tensor(index, "gather")
    if input.ndim == 0:
        return gather(_as_1d(input), 0, _as_1d(index)).reshape(index.shape)
    _check_index_shape(input, index, axis, "gather")
    _check_bounds(index.array, input.shape[axis], axis, "gather")
    return Gather(axis)(input, index)


def _scatter_args(fn, input, dim, index, src):  # noqa: A002
    """Check a scatter's arguments; return (axis, src) with a number ``src`` as a Python number."""
    expect_tensor(input, fn)
    axis = _dim(input, dim, fn)
    _index_tensor(index, fn)
    if isinstance(src, Tensor):
        if src.dtype != input.dtype:
            raise RuntimeError(
                f"{fn}(): expected src to have the input's dtype {input.dtype}, got {src.dtype}; "
                "convert it with .to(dtype)"
            )
        _check_index_shape(input, index, axis, fn, src)
        backend.get_array_module(input.array, index.array, src.array)
    elif isinstance(src, (int, float, bool, np.number, np.bool_)):
        _check_index_shape(input, index, axis, fn)
        src = src.item() if isinstance(src, np.generic) else src
    else:
        raise TypeError(f"{fn}(): src must be a Tensor or a number, got {type(src).__name__}")
    _check_bounds(index.array, input.shape[axis] if input.ndim else 1, axis, fn)
    return axis, src


_REDUCE_OPS = {None: Scatter, "add": ScatterAdd, "multiply": ScatterMultiply}


def _reduce_op(reduce, fn: str):
    try:
        return _REDUCE_OPS[reduce]
    except (KeyError, TypeError):
        raise RuntimeError(f"{fn}(): reduce must be None, 'add' or 'multiply', got {reduce!r}") from None


def _value_source(op, input, index, src):  # noqa: A002
    """ScatterAdd needs a tensor source: a number becomes a constant of the index's shape."""
    if op is ScatterAdd and not isinstance(src, Tensor):
        xp = backend.get_array_module(input.array)
        return Tensor._make(xp.full(index.shape, src, dtype=input.dtype), False, None, 0)
    return src


def scatter(input, dim, index, src=None, *, value=None, reduce=None):  # noqa: A002
    """A copy of ``input`` with ``src`` (a tensor, or the number ``value``) written at ``index`` along ``dim``.

    ``out[i][index[i][j]] = src[i][j]`` for ``dim == 1``. ``index`` follows
    ``gather``'s rules and must also be no larger than a tensor ``src``,
    which must have ``input``'s dtype (a number is cast to it). Where ``index``
    repeats a position, one of the values wins. ``reduce="add"`` or
    ``"multiply"`` combines instead of writing (PyTorch's deprecated
    argument); only ``"multiply"`` has no gradient, as in PyTorch.

    Raises:
        TypeError: a non-Tensor ``input``/``index``, ``src`` neither a Tensor nor a
            number, both or neither of ``src`` and ``value`` given.
        IndexError: ``dim`` is out of range.
        RuntimeError: see ``gather``; a ``src`` of another dtype; an unknown ``reduce``.
    """
    src = _src_or_value("scatter", src, value)
    op = _reduce_op(reduce, "scatter")
    axis, src = _scatter_args("scatter", input, dim, index, src)
    if input.ndim == 0:
        src1 = _as_1d(src) if isinstance(src, Tensor) else src
        return scatter(_as_1d(input), 0, _as_1d(index), src1, reduce=reduce).reshape(())
    return op(axis)(input, index, _value_source(op, input, index, src))


def scatter_add(input, dim, index, src):  # noqa: A002
    """A copy of ``input`` with the tensor ``src`` added at ``index`` along ``dim`` (repeats add up).

    Arguments and errors as ``scatter``; ``src`` must be a Tensor (as in PyTorch).
    """
    expect_tensor(src, "scatter_add", "src")
    axis, src = _scatter_args("scatter_add", input, dim, index, src)
    if input.ndim == 0:
        return scatter_add(_as_1d(input), 0, _as_1d(index), _as_1d(src)).reshape(())
    return ScatterAdd(axis)(input, index, src)


def _src_or_value(fn, src, value):
    if (src is None) == (value is None):
        raise TypeError(f"{fn}(): give exactly one of src (a Tensor or number) and value (a number)")
    return src if value is None else value


def scatter_inplace(tensor, dim, index, src=None, *, value=None, reduce=None, fn="scatter_"):
    """``tensor.scatter_(dim, index, src or value, reduce=...)``: ``scatter`` written into ``tensor``'s memory.

    Recorded for autograd like every in-place op (``minigrad.inplace``). Errors as ``scatter``.
    """
    src = _src_or_value(fn, src, value)
    op = _reduce_op(reduce, fn)
    axis, src = _scatter_args(fn, tensor, dim, index, src)
    if tensor.ndim == 0:
        scatter_inplace(tensor.reshape(1), 0, _as_1d(index), _as_1d(src) if isinstance(src, Tensor) else src,
                        reduce=reduce, fn=fn)
        return tensor
    src = _value_source(op, tensor, index, src)
    index_data = index.array
    src_data = src.array if isinstance(src, Tensor) else src

    def update(data):
        where = positions(backend.get_array_module(data), index_data, axis)
        block = src_data[_leading_block(index_data.shape)] if isinstance(src, Tensor) else src_data
        if op is Scatter:
            data[where] = block
        elif op is ScatterAdd:
            backend.scatter_add(data, where, block)
        else:
            multiply_at(data, where, block)

    return _inplace.apply_inplace(tensor, fn, update, lambda old: op(axis)(old, index, src), (src,))


def scatter_add_inplace(tensor, dim, index, src):
    """``tensor.scatter_add_(dim, index, src)``: ``scatter_add`` written into ``tensor``'s memory."""
    expect_tensor(src, "scatter_add_", "src")
    return scatter_inplace(tensor, dim, index, src, reduce="add", fn="scatter_add_")


def index_select(input, dim, index):  # noqa: A002
    """The slices of ``input`` at positions ``index`` (a 1-D int64/int32 tensor, repeats allowed) along ``dim``.

    The result is a new tensor whose size along ``dim`` is ``len(index)``; a
    0-d ``index`` counts as one position. Differentiable in ``input``
    (repeated positions sum their gradients).

    Raises:
        TypeError: ``input`` or ``index`` is not a Tensor, or ``dim`` is not an int.
        IndexError: ``dim`` is out of range, or ``index`` has more than one dimension.
        RuntimeError: ``index`` is not int64/int32, or an entry is outside ``[0, input.size(dim))``.
    """
    expect_tensor(input, "index_select")
    axis = _dim(input, dim, "index_select")
    _index_tensor(index, "index_select")
    if index.ndim > 1:
        raise IndexError(f"index_select(): index must be a vector (1-D), got shape {tuple(index.shape)}")
    if input.ndim == 0:
        if index.numel() != 1:
            raise RuntimeError(f"index_select(): an index into a 0-d tensor must have 1 value, got {index.numel()}")
        _check_bounds(index.array, 1, 0, "index_select")
        return input.clone()
    positions_1d = _as_1d(index).array
    _check_bounds(positions_1d, input.shape[axis], axis, "index_select")
    backend.get_array_module(input.array, positions_1d)
    return _indexing.index(input, (slice(None),) * axis + (positions_1d,))


OPS = {
    "gather": Gather,
    "gather_adjoint": GatherAdjoint,
    "scatter": Scatter,
    "scatter_add": ScatterAdd,
}
