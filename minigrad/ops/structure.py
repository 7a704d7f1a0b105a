"""Structural ops: ``repeat``/``tile``, ``tril``/``triu``, ``flip``, ``roll``, ``diagonal``, and the
splitting helpers ``chunk``, ``split``, ``unbind`` (plus ``unflatten`` and ``view_as``).

The splitting helpers return views made by basic indexing (``Index`` with
slices), as PyTorch's do: writing into a chunk writes into the tensor, and
each piece's gradient flows back to its own region. ``diagonal`` is a view
too; ``flip`` and ``roll`` copy, as in PyTorch.
"""

from __future__ import annotations

import numpy as np

from minigrad.function import FunctionNode
from minigrad.ops import indexing as _indexing
from minigrad.ops import shape as _shape
from minigrad.ops._util import expect_tensor, normalize_axis
from minigrad.ops._view_pairs import ParamsNode, ParamsView


class Repeat(FunctionNode):
    """a tiled ``reps[d]`` times along each dimension d (``len(reps) >= a.ndim``; new dims lead)"""

    def __init__(self, reps):
        self.reps = reps

    def forward(self, a):
        self.in_shape = a.shape
        return self.xp.tile(a, self.reps)

    def backward(self, g):
        # The output, seen as (r0, n0, r1, n1, ...), holds r0 * r1 * ... copies: sum them.
        padded = (1,) * (len(self.reps) - len(self.in_shape)) + tuple(self.in_shape)
        interleaved = tuple(x for r, n in zip(self.reps, padded) for x in (r, n))
        summed = g.reshape(interleaved).sum(tuple(range(0, len(interleaved), 2)))
        return summed.reshape(self.in_shape)


class Tril(FunctionNode):
    """the lower (``upper=True``: upper) triangle of the last two dimensions, from diagonal ``k``; its own adjoint"""

    def __init__(self, k, upper=False):
        self.k = k
        self.upper = upper

    def forward(self, a):
        return self.xp.triu(a, self.k) if self.upper else self.xp.tril(a, self.k)

    def backward(self, g):
        return Tril(self.k, self.upper)(g)


class Flip(FunctionNode):
    """a reversed along ``axes`` (a copy, as in PyTorch); its own adjoint"""

    def __init__(self, axes):
        self.axes = axes

    def forward(self, a):
        return self.xp.flip(a, self.axes).copy()

    def backward(self, g):
        return Flip(self.axes)(g)


class Roll(FunctionNode):
    """a shifted cyclically by ``shifts`` along ``axes`` (None: the flattened tensor); backward rolls back"""

    def __init__(self, shifts, axes):
        self.shifts = shifts
        self.axes = axes

    def forward(self, a):
        return self.xp.roll(a, self.shifts, self.axes)

    def backward(self, g):
        back = tuple(-s for s in self.shifts) if isinstance(self.shifts, tuple) else -self.shifts
        return Roll(back, self.axes)(g)


def _diagonal_view(a, offset, axis1, axis2):
    """The diagonal of ``a`` as a writable view (NumPy hands out read-only ones, for now, by policy)."""
    out = a.diagonal(offset, axis1, axis2)
    flags = out.flags
    if hasattr(flags, "writeable") and not flags.writeable and a.flags.writeable:
        flags.writeable = True
    return out


class Diagonal(ParamsView, params=("offset", "axis1", "axis2")):
    """the diagonal of ``axis1`` and ``axis2`` (moved to the end), a view; backward: ``DiagonalScatter``"""

    def view_array(self, a):
        return _diagonal_view(a, self.offset, self.axis1, self.axis2)

    def backward(self, g):
        return DiagonalScatter(self.offset, self.axis1, self.axis2, self.in_shape)(g)


class DiagonalScatter(ParamsNode, params=("offset", "axis1", "axis2", "shape")):
    """zeros of ``shape`` with ``g`` on the diagonal ``Diagonal`` reads (its adjoint)"""

    def forward(self, g):
        out = self.xp.zeros(self.shape, dtype=g.dtype)
        _diagonal_view(out, self.offset, self.axis1, self.axis2)[...] = g
        return out

    def backward(self, gg):
        return Diagonal(self.offset, self.axis1, self.axis2)(gg)


# -- public functions ------------------------------------------------------------------------------


def _int(value, fn: str, name: str) -> int:
    if not isinstance(value, (int, np.integer)) or isinstance(value, bool):
        raise TypeError(f"{fn}(): argument '{name}' must be an int, got {type(value).__name__}")
    return int(value)


def _ints(values, fn: str, name: str) -> tuple:
    """``(2, 3)``, ``((2, 3),)`` or ``([2, 3],)`` (varargs as given) as a tuple of ints."""
    if len(values) == 1 and isinstance(values[0], (tuple, list)):
        values = tuple(values[0])
    return tuple(_int(v, fn, name) for v in values)


def _axis(input, dim, fn: str) -> int:  # noqa: A002  (PyTorch's names)
    (axis,) = normalize_axis(_int(dim, fn, "dim"), input.ndim, fn)
    return axis


def repeat(input, *sizes):  # noqa: A002
    """``input`` tiled ``sizes[d]`` times along each dimension (PyTorch's ``Tensor.repeat``, NumPy's ``tile``).

    ``sizes`` (ints, or one tuple/list) has at least ``input.ndim`` entries;
    extra ones add leading dimensions.

    Raises:
        TypeError: a size is not an int.
        RuntimeError: fewer sizes than dimensions, or a negative size.
    """
    expect_tensor(input, "repeat")
    reps = _ints(sizes, "repeat", "sizes")
    if len(reps) < input.ndim:
        raise RuntimeError(
            f"repeat(): {len(reps)} repeat sizes {reps} for a tensor of {input.ndim} dimensions; "
            "give at least one per dimension"
        )
    if any(r < 0 for r in reps):
        raise RuntimeError(f"repeat(): repeat sizes must be non-negative, got {reps}")
    return Repeat(reps)(input)


def tile(input, dims):  # noqa: A002
    """``input`` tiled ``dims[d]`` times along each dimension; fewer ``dims`` than dimensions count as leading 1s.

    Raises:
        TypeError: an entry is not an int. RuntimeError: an entry is negative.
    """
    expect_tensor(input, "tile")
    reps = _ints((dims,) if isinstance(dims, (tuple, list)) else (dims,), "tile", "dims")
    return repeat(input, (1,) * (input.ndim - len(reps)) + reps)


def _triangle(input, diagonal, upper: bool):  # noqa: A002
    fn = "triu" if upper else "tril"
    expect_tensor(input, fn)
    k = _int(diagonal, fn, "diagonal")
    if input.ndim < 2:
        raise RuntimeError(f"{fn}(): input tensor must have at least 2 dimensions, got shape {tuple(input.shape)}")
    return Tril(k, upper)(input)


def tril(input, diagonal=0):  # noqa: A002
    """The lower triangle of the last two dimensions: elements with ``col - row <= diagonal``, zeros above.

    Raises:
        TypeError: ``diagonal`` is not an int. RuntimeError: fewer than 2 dimensions.
    """
    return _triangle(input, diagonal, False)


def triu(input, diagonal=0):  # noqa: A002
    """The upper triangle of the last two dimensions: elements with ``col - row >= diagonal``, zeros below.

    Raises:
        TypeError: ``diagonal`` is not an int. RuntimeError: fewer than 2 dimensions.
    """
    return _triangle(input, diagonal, True)


def _distinct_axes(input, dims, fn: str) -> tuple:  # noqa: A002
    axes = normalize_axis(dims, input.ndim, fn) if dims else ()
    for i, a in enumerate(axes):
        if a in axes[:i]:
            raise RuntimeError(f"{fn}(): dim {a} appears more than once in {tuple(dims)}")
    return axes


def flip(input, dims):  # noqa: A002
    """A copy of ``input`` reversed along ``dims`` (a tuple or list of ints, or one int).

    Raises:
        TypeError: a dim is not an int. IndexError: a dim is out of range.
        RuntimeError: a dim appears twice.
    """
    expect_tensor(input, "flip")
    dims = _ints(dims if isinstance(dims, (tuple, list)) else (dims,), "flip", "dims")
    axes = _distinct_axes(input, dims, "flip")
    return Flip(axes)(input) if axes and input.ndim else input.clone()  # a 0-d tensor takes dim 0 or -1


def roll(input, shifts, dims=None):  # noqa: A002
    """``input`` shifted cyclically by ``shifts`` along ``dims`` (without ``dims``: the flattened tensor).

    ``shifts`` and ``dims`` are ints or equally long tuples.

    Raises:
        TypeError: a shift or dim is not an int. IndexError: a dim is out of range.
        RuntimeError: ``shifts`` and ``dims`` differ in length.
    """
    expect_tensor(input, "roll")
    shifts = _ints(shifts if isinstance(shifts, (tuple, list)) else (shifts,), "roll", "shifts")
    if dims is None:
        if len(shifts) != 1:
            raise RuntimeError(f"roll(): shifts {shifts} and dims must align: give one dim per shift")
        return Roll(shifts[0], None)(input)
    dims = _ints(dims if isinstance(dims, (tuple, list)) else (dims,), "roll", "dims")
    if len(shifts) != len(dims):
        raise RuntimeError(f"roll(): shifts {shifts} and dims {dims} must align: give one dim per shift")
    return Roll(shifts, normalize_axis(dims, input.ndim, "roll"))(input)


def diagonal(input, offset=0, dim1=0, dim2=1):  # noqa: A002
    """The diagonal of dimensions ``dim1`` and ``dim2``, moved to the last dimension (a view).

    ``offset`` > 0 takes a diagonal above the main one, < 0 below; one that
    misses the matrix is empty.

    Raises:
        TypeError: an argument is not an int. IndexError: a dim is out of range.
        RuntimeError: ``dim1`` and ``dim2`` name the same dimension.
    """
    expect_tensor(input, "diagonal")
    offset = _int(offset, "diagonal", "offset")
    axis1, axis2 = normalize_axis((_int(dim1, "diagonal", "dim1"), _int(dim2, "diagonal", "dim2")), input.ndim,
                                  "diagonal")
    if axis1 == axis2 or input.ndim < 2:
        raise RuntimeError(f"diagonal(): dim1 and dim2 must name two different dimensions, got {dim1} and {dim2}")
    return Diagonal(offset, axis1, axis2)(input)


def _along(axis: int, item) -> tuple:
    return (slice(None),) * axis + (item,)


def chunk(input, chunks, dim=0):  # noqa: A002
    """``input`` split along ``dim`` into at most ``chunks`` views of ``ceil(size / chunks)`` (the last may be smaller).

    Raises:
        TypeError: ``chunks`` or ``dim`` is not an int. IndexError: ``dim`` is out of range.
        RuntimeError: ``chunks`` < 1, or ``input`` is 0-d.
    """
    expect_tensor(input, "chunk")
    chunks = _int(chunks, "chunk", "chunks")
    if chunks <= 0:
        raise RuntimeError(f"chunk(): chunks must be greater than 0, got {chunks}")
    if input.ndim == 0:
        raise RuntimeError("chunk(): expects a tensor with at least 1 dimension, got a 0-d tensor")
    axis = _axis(input, dim, "chunk")
    size = input.shape[axis]
    step = -(-size // chunks)
    if step == 0:  # an empty dimension: every chunk is empty, as in PyTorch
        return tuple(_indexing.index(input, _along(axis, slice(0, 0))) for _ in range(chunks))
    return tuple(_indexing.index(input, _along(axis, slice(i, i + step))) for i in range(0, size, step))


def split(input, split_size_or_sections, dim=0):  # noqa: A002
    """``input`` split along ``dim`` into views of ``split_size`` each (the last may be smaller) or of the listed sizes.

    Raises:
        TypeError: a size or ``dim`` is not an int. IndexError: ``dim`` is out of range.
        RuntimeError: a negative size, a size of 0 for a non-empty dimension, or
            listed sizes that do not sum to the dimension's size.
    """
    expect_tensor(input, "split")
    if input.ndim == 0:
        raise RuntimeError("split(): expects a tensor with at least 1 dimension, got a 0-d tensor")
    axis = _axis(input, dim, "split")
    size = input.shape[axis]
    if isinstance(split_size_or_sections, (tuple, list)):
        sections = _ints((split_size_or_sections,), "split", "split_size_or_sections")
        if any(s < 0 for s in sections):
            raise RuntimeError(f"split(): sizes must be non-negative, got {list(sections)}")
        if sum(sections) != size:
            raise RuntimeError(
                f"split(): sizes {list(sections)} must sum to the size {size} of dimension {dim}"
            )
        bounds = np.cumsum((0,) + sections).tolist()
        return tuple(_indexing.index(input, _along(axis, slice(a, b))) for a, b in zip(bounds, bounds[1:]))
    step = _int(split_size_or_sections, "split", "split_size")
    if step < 0:
        raise RuntimeError(f"split(): split_size must be non-negative, got {step}")
    if step == 0:
        if size:
            raise RuntimeError(f"split(): split_size can be 0 only for an empty dimension, dimension {dim} has {size}")
        return (_indexing.index(input, _along(axis, slice(0, 0))),)
    if size == 0:
        return (_indexing.index(input, _along(axis, slice(0, 0))),)
    return tuple(_indexing.index(input, _along(axis, slice(i, i + step))) for i in range(0, size, step))


def unbind(input, dim=0):  # noqa: A002
    """The slices of ``input`` along ``dim``, as a tuple of views without that dimension.

    Raises:
        TypeError: ``dim`` is not an int. IndexError: ``dim`` is out of range or ``input`` is 0-d.
    """
    expect_tensor(input, "unbind")
    if input.ndim == 0:
        raise IndexError("unbind(): a 0-d tensor has no dimension to unbind")
    axis = _axis(input, dim, "unbind")
    return tuple(_indexing.index(input, _along(axis, i)) for i in range(input.shape[axis]))


def unflatten(input, dim, sizes):  # noqa: A002
    """``input`` with dimension ``dim`` replaced by dimensions of ``sizes`` (one may be -1), a view.

    Raises:
        TypeError: a size or ``dim`` is not an int. IndexError: ``dim`` is out of range.
        RuntimeError: ``input`` is 0-d, or ``sizes`` is empty or does not multiply to the size of ``dim``.
    """
    expect_tensor(input, "unflatten")
    if input.ndim == 0:
        raise RuntimeError("unflatten(): a 0-d tensor has no dimension to unflatten")
    axis = _axis(input, dim, "unflatten")
    sizes = _ints((sizes,), "unflatten", "sizes") if isinstance(sizes, (tuple, list)) else None
    if sizes is None:
        raise TypeError("unflatten(): argument 'sizes' must be a tuple or list of ints")
    if not sizes:
        raise RuntimeError("unflatten(): sizes must be non-empty")
    size = input.shape[axis]
    known = 1
    for n in sizes:
        if n != -1:
            known *= n
    free = sizes.count(-1)
    if free > 1 or (free == 0 and known != size) or (free == 1 and (known == 0 or size % known)):
        raise RuntimeError(
            f"unflatten(): sizes {list(sizes)} don't multiply up to the size of dim {dim} ({size})"
        )
    if free:
        sizes = tuple(size // known if n == -1 else n for n in sizes)
    return _shape.Reshape(input.shape[:axis] + sizes + input.shape[axis + 1 :])(input)


def view_as(input, other):  # noqa: A002
    """``input`` reshaped to ``other``'s shape (a view when the memory allows, as ``view``).

    Raises:
        TypeError: ``other`` is not a Tensor. RuntimeError: the element counts differ (as PyTorch).
    """
    expect_tensor(input, "view_as")
    expect_tensor(other, "view_as", "other")
    return _shape.reshape(input, other.shape)


OPS = {
    "repeat": Repeat,
    "tril": Tril,
    "flip": Flip,
    "roll": Roll,
    "diagonal": Diagonal,
    "diagonal_scatter": DiagonalScatter,
}
