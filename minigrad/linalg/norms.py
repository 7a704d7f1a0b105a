"""Norms and products of ``torch.linalg``: ``vector_norm``, ``matrix_norm``, ``norm``, ``cross``, ``vecdot``,
``multi_dot``, and ``det``, ``slogdet``, ``matrix_power`` under their ``linalg`` names.

Everything here composes recorded ops, so gradients of any order follow:

* ``vector_norm``: the ``VectorNorm`` op of ``minigrad/math_forms.py`` (gradient 0
  at a zero vector, the inf-norm's gradient shared evenly by ties).
* ``matrix_norm``, as PyTorch defines each order on a matrix ``A`` (``m x n``):

  ====================  =========================================================
  ``'fro'``             the 2-norm of all entries
  ``'nuc'``             the sum of the singular values
  ``2`` / ``-2``        the largest / smallest singular value
  ``1`` / ``-1``        the largest / smallest column sum of ``|A|``
  ``inf`` / ``-inf``    the largest / smallest row sum of ``|A|``
  ====================  =========================================================

  Singular values come from ``minigrad.linalg.decompositions.svdvals`` (its
  gradient is ``U diag(g) Vh``); the largest or smallest of several is taken with
  ``amax``/``amin``, so ties share the gradient evenly, as PyTorch's.
* ``norm`` picks one of the two from ``ord`` and ``dim`` as ``torch.linalg.norm`` does.
* ``cross`` and ``vecdot`` are products and sums over one dimension; ``multi_dot``
  chains matrix products in the cheapest order (the classic dynamic programme,
  as PyTorch's), so results round as PyTorch's.

Complex tensors are not supported.
"""

from __future__ import annotations

import math
from numbers import Number

import numpy as np

from minigrad.linalg.decompositions import svdvals
from minigrad.math_forms import VectorNorm, amax, amin, write_out
from minigrad.math_forms import cross as _cross_along
from minigrad.ops import determinants as _determinants
from minigrad.ops._util import expect_flag, expect_tensor, normalize_axis
from minigrad.ops.determinants import SlogdetResult, matrix_power  # matrix_power: torch.linalg's is torch's
from minigrad.tensor import Tensor

__all__ = [
    "SlogdetResult",
    "cross",
    "det",
    "matrix_norm",
    "matrix_power",
    "multi_dot",
    "norm",
    "slogdet",
    "vecdot",
    "vector_norm",
]

_MATRIX_ORDERS = (1.0, 2.0, math.inf)


# -- argument checks ------------------------------------------------------------------------------------


def _expect_int(value, fn: str, name: str) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{fn}(): argument '{name}' must be int, not {type(value).__name__}")
    return int(value)


def _number_ord(ord, fn: str) -> float:  # noqa: A002  (PyTorch's name)
    """``ord`` as a float: a real number (a bool counts as 0 or 1) or a one-element Tensor, else TypeError."""
    if isinstance(ord, Tensor) and ord.array.size == 1 and ord.dtype.kind in "biuf":
        return float(ord.item())
    if isinstance(ord, (bool, np.bool_)):
        return float(ord)
    if not isinstance(ord, Number) or isinstance(ord, complex):
        raise TypeError(f"{fn}(): argument 'ord' must be a real number, not {type(ord).__name__}")
    return float(ord)


def _expect_floating(input, fn: str, low_precision: bool = True) -> None:  # noqa: A002
    """RuntimeError unless ``input`` is float (float16 only when ``low_precision``), as PyTorch's check."""
    if input.dtype.kind == "c":
        raise NotImplementedError(f"{fn}: complex tensors are not supported here; use float32 or float64")
    if input.dtype.kind != "f":
        raise RuntimeError(
            f"{fn}: Expected a floating point tensor as input. Got {input.dtype}; convert it with .float()"
        )
    if not low_precision and input.dtype.itemsize < 4:
        raise RuntimeError(f"{fn}: Low precision dtypes not supported. Got {input.dtype}; use float32 or float64")


def _result_dtype(input, dtype, fn: str):  # noqa: A002
    """``dtype`` checked as PyTorch's ``dtype=`` of a norm: floating, and no narrower than ``input``'s."""
    if dtype is None:
        return None
    try:
        wanted = np.dtype(dtype)
    except TypeError:
        raise TypeError(f"{fn}(): argument 'dtype' must be a dtype such as float64, not {dtype!r}") from None
    if wanted.kind != "f":
        raise RuntimeError(f"{fn}: dtype should be floating point, but got {wanted}")
    if not np.can_cast(input.dtype, wanted, "safe"):
        raise RuntimeError(
            f"{fn}: the dtype of the input ({input.dtype}) should be convertible without narrowing to the "
            f"specified dtype ({wanted}); pass a wider dtype or leave it out"
        )
    return wanted


def _distinct_axes(dim, ndim: int, fn: str):
    """``dim`` (None, an int, or a tuple/list; empty means all) as a tuple of distinct axes, or None for all."""
    if dim is None or (isinstance(dim, (tuple, list)) and len(dim) == 0):
        return None
    if isinstance(dim, (bool, np.bool_)) or not isinstance(dim, (int, np.integer, tuple, list)):
        raise TypeError(f"{fn}(): argument 'dim' must be an int or a tuple of ints, not {type(dim).__name__}")
    if isinstance(dim, (tuple, list)) and any(isinstance(d, (bool, np.bool_)) for d in dim):
        raise TypeError(f"{fn}(): argument 'dim' must be a tuple of ints, got {dim!r}")
    axes = normalize_axis(dim, ndim, f"{fn}()")
    if len(set(axes)) != len(axes):
        raise RuntimeError(f"{fn}: dim {dim!r} names a dimension more than once; list each dim once")
    return axes if ndim else None  # a 0-d tensor's dim 0 (or -1) is the tensor itself


# -- vector_norm ----------------------------------------------------------------------------------------


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None, out=None):  # noqa: A002  (PyTorch's names)
    """The ``ord``-norm of the vectors of ``x`` along ``dim`` (None: all its entries as one vector).

    ``ord``: any real number; ``inf``/``-inf`` give the largest/smallest
    magnitude, ``0`` the count of non-zero entries, and otherwise
    ``sum(|x|**ord) ** (1/ord)``. ``dim``: an int or a tuple of ints. ``keepdim``
    keeps the reduced dims with size 1. ``dtype`` computes in (and returns)
    that floating dtype; it must be at least as wide as ``x``'s. The result has
    ``x``'s dtype otherwise. Differentiable: the gradient at a zero vector is 0,
    and ties of the inf-norm share the gradient evenly, as in PyTorch.

    Raises:
        TypeError: ``x`` is not a Tensor; ``ord`` is not a number; ``dim`` or ``keepdim`` has the wrong type.
        RuntimeError: ``x`` is not floating point; a bad ``dtype``; a dim repeated; ``ord`` is inf or
            negative and a reduced dim is empty (the reduction has no identity).
        IndexError: a dim is out of range.
    """
    fn = "linalg.vector_norm"
    expect_tensor(x, fn, "x")
    order = _number_ord(ord, fn)
    axes = _distinct_axes(dim, x.ndim, fn)
    keepdim = expect_flag(keepdim, fn, "keepdim")
    _expect_floating(x, fn)
    wanted = _result_dtype(x, dtype, fn)
    if wanted is not None and wanted != x.dtype:
        x = x.to(wanted)
    return write_out(_vector_norm(x, order, axes, keepdim, fn), out, fn)


def _vector_norm(x: Tensor, order: float, axes, keepdim: bool, fn: str) -> Tensor:
    """The checked norm: an empty reduction is an error where the norm has no identity (inf, negative ord)."""
    if x.array.size:
        return VectorNorm(order, axes, keepdim)(x)
    if order < 0 or order == math.inf:
        empty = [a for a in (range(x.ndim) if axes is None else axes) if x.shape[a] == 0]
        if axes is None or empty:
            where = "an empty tensor" if axes is None else f"dimension {empty[0]}, which is empty"
            raise RuntimeError(
                f"{fn}: cannot compute the {order:g} norm over {where}: that reduction has no identity; "
                "reduce over non-empty dims or use a positive finite ord"
            )
    return VectorNorm(2.0, axes, keepdim)(x)  # an empty result (or zeros): every order gives the same


# -- matrix_norm ----------------------------------------------------------------------------------------


def _matrix_ord(ord, fn: str):  # noqa: A002
    """``ord`` as ``'fro'``, ``'nuc'`` or one of +-1, +-2, +-inf (a float), else PyTorch's error."""
    if isinstance(ord, str):
        if ord not in ("fro", "nuc"):
            raise RuntimeError(f"{fn}: Order {ord} not supported; use 'fro', 'nuc', 1, -1, 2, -2, inf or -inf")
        return ord
    order = _number_ord(ord, fn)
    if abs(order) not in _MATRIX_ORDERS:
        raise RuntimeError(f"{fn}: Order {order:g} not supported; use 'fro', 'nuc', 1, -1, 2, -2, inf or -inf")
    return order


def _matrix_dims(dim, ndim: int, fn: str) -> tuple:
    """``dim`` as two different non-negative axes of a tensor of ``ndim`` (>= 2) dims."""
    if not isinstance(dim, (tuple, list)):
        raise TypeError(f"{fn}(): argument 'dim' must be a tuple of two ints, not {type(dim).__name__}")
    if len(dim) != 2:
        raise RuntimeError(f"{fn}: dim must be a 2-tuple. Got {tuple(dim)!r}")
    for d in dim:
        if isinstance(d, (bool, np.bool_)) or not isinstance(d, (int, np.integer)):
            raise TypeError(f"{fn}(): argument 'dim' must be a tuple of two ints, got {tuple(dim)!r}")
    first, second = normalize_axis(tuple(dim), ndim, f"{fn}()")
    if first == second:
        raise RuntimeError(f"{fn}: dims must be different. Got ({first}, {second}); name two different dims")
    return first, second


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None, out=None):  # noqa: A002, N803
    """The ``ord``-norm of the matrices of ``A`` held in its dims ``dim`` (default the last two).

    ``ord``: ``'fro'`` (default: the 2-norm of the entries), ``'nuc'`` (sum of
    the singular values), ``2``/``-2`` (largest/smallest singular value),
    ``1``/``-1`` (largest/smallest column sum of ``|A|``), ``inf``/``-inf``
    (largest/smallest row sum). The result has ``A``'s shape without ``dim``
    (kept with size 1 when ``keepdim``), in ``A``'s dtype or ``dtype``.
    An empty matrix has norm 0 for the positive orders, as in PyTorch.
    Differentiable; ties of a largest/smallest value share the gradient.

    Raises:
        TypeError: ``A`` is not a Tensor; ``ord`` is neither a string nor a number; ``dim`` is not a tuple.
        RuntimeError: ``ord`` not one of the above; ``A`` has fewer than 2 dims or is not floating point
            (float16 only for 'fro', +-1 and +-inf); ``dim`` not two different dims; a bad ``dtype``.
        IndexError: a dim is out of range; a negative order over an empty dim (no identity, as PyTorch).
        LinAlgError: ``'nuc'``/``+-2`` of a matrix holding inf or NaN (the SVD does not converge).
    """
    fn = "linalg.matrix_norm"
    expect_tensor(A, fn, "A")
    order = _matrix_ord(ord, fn)
    keepdim = expect_flag(keepdim, fn, "keepdim")
    return write_out(_matrix_norm(A, order, dim, keepdim, dtype, fn), out, fn)


def _matrix_norm(A: Tensor, order, dim, keepdim: bool, dtype, fn: str) -> Tensor:  # noqa: N803
    """``matrix_norm`` past the argument types: PyTorch's checks, in its order, then the norm."""
    if A.ndim < 2:
        raise RuntimeError(
            f"{fn}: The input tensor A must have at least 2 dimensions, got shape {list(A.shape)}; "
            "use vector_norm for vectors"
        )
    uses_svd = order == "nuc" or order in (2.0, -2.0)
    _expect_floating(A, fn, low_precision=not uses_svd)
    first, second = _matrix_dims(dim, A.ndim, fn)
    wanted = _result_dtype(A, dtype, fn)
    if wanted is not None and wanted != A.dtype:
        A = A.to(wanted)
    empty = A.shape[first] == 0 or A.shape[second] == 0
    if order == "fro" or (empty and (order == "nuc" or order > 0)):
        return _vector_norm(A, 2.0, (first, second), keepdim, fn)  # an empty matrix: 0
    if uses_svd:
        if empty:
            raise IndexError(f"{fn}: the smallest singular value of an empty matrix does not exist (dim {second})")
        rest = [d for d in range(A.ndim) if d not in (first, second)]
        values = svdvals(A.permute(*rest, first, second))
        if order == "nuc":
            result = values.sum(-1)
        else:
            result = amax(values, -1) if order > 0 else amin(values, -1)
        if keepdim:
            for d in sorted((first, second)):
                result = result.unsqueeze(d)
        return result
    summed, extreme = (second, first) if order in (math.inf, -math.inf) else (first, second)
    sums = _vector_norm(A, 1.0, (summed,), keepdim, fn)
    if not keepdim and summed < extreme:
        extreme -= 1
    return amax(sums, extreme, keepdim) if order > 0 else amin(sums, extreme, keepdim)


# -- norm -----------------------------------------------------------------------------------------------


def norm(input, ord=None, dim=None, keepdim=False, *, out=None, dtype=None):  # noqa: A002
    """A vector or matrix norm of ``input``, chosen as ``torch.linalg.norm`` chooses it.

    * ``dim`` an int or a 1-tuple: the vector norm along it (``ord`` a number, default 2).
    * ``dim`` a 2-tuple: the matrix norm over those dims (``ord`` as ``matrix_norm``; None: 'fro').
    * ``dim`` None: with ``ord`` None, the 2-norm of all entries (any shape); with ``ord``
      given, ``input`` must be 1-D (vector norm) or 2-D (matrix norm).

    Raises:
        As ``vector_norm`` and ``matrix_norm``; also RuntimeError for ``dim`` of another length, or for an
        ``ord`` with no ``dim`` on an input that is not 1-D or 2-D.
    """
    fn = "linalg.norm"
    expect_tensor(input, fn)
    if dim is not None:
        if isinstance(dim, (tuple, list)):
            dims = tuple(dim)
        elif isinstance(dim, (int, np.integer)) and not isinstance(dim, (bool, np.bool_)):
            dims = (dim,)
        else:
            raise TypeError(f"{fn}(): argument 'dim' must be an int or a tuple of ints, not {type(dim).__name__}")
        if len(dims) not in (1, 2):
            raise RuntimeError(f"{fn}: If dim is specified, it must be of length 1 or 2. Got {list(dims)}")
    elif ord is not None and input.ndim not in (1, 2):
        raise RuntimeError(
            f"{fn}: If dim is not specified but ord is, the input must be 1D or 2D. Got {input.ndim}D; "
            "pass dim"
        )
    if isinstance(ord, str):
        return matrix_norm(input, ord, dims if dim is not None else (0, 1), keepdim, dtype=dtype, out=out)
    if ord is not None and ((dim is not None and len(dims) == 2) or (dim is None and input.ndim == 2)):
        return matrix_norm(input, ord, dims if dim is not None else (0, 1), keepdim, dtype=dtype, out=out)
    return vector_norm(input, 2.0 if ord is None else ord, dim, keepdim, dtype=dtype, out=out)


# -- products -------------------------------------------------------------------------------------------


def cross(input, other, *, dim=-1, out=None):  # noqa: A002
    """The cross product of the 3-vectors of ``input`` and ``other`` along ``dim`` (default the last).

    The two must have the same number of dims and the same dtype (integers
    work; bool does not), and broadcast together; ``dim`` has size 3 in both.

    Raises:
        TypeError: an argument is not a Tensor, ``dim`` not an int.
        RuntimeError: different numbers of dims or dtypes; ``dim`` not of size 3 in both; shapes that
            do not broadcast. IndexError: ``dim`` out of range (or a 0-d input).
        NotImplementedError: bool tensors (as PyTorch).
    """
    fn = "linalg.cross"
    expect_tensor(input, fn)
    expect_tensor(other, fn, "other")
    dim = _expect_int(dim, fn, "dim")
    if input.ndim != other.ndim:
        raise RuntimeError(
            f"{fn}: inputs must have the same number of dimensions, got {input.ndim} and {other.ndim}; "
            "unsqueeze the smaller one"
        )
    if input.ndim == 0:
        raise IndexError(f"{fn}: Dimension specified as {dim} but the tensors have no dimensions")
    if input.dtype != other.dtype:
        raise RuntimeError(f"{fn}: expected both inputs of one dtype, got {input.dtype} and {other.dtype}")
    if input.dtype.kind == "b":
        raise NotImplementedError(f"{fn}: not implemented for bool tensors; convert them with .int()")
    if input.dtype.kind == "c":
        raise NotImplementedError(f"{fn}: complex tensors are not supported here")
    (axis,) = normalize_axis(dim, input.ndim, f"{fn}()")
    if input.shape[axis] != 3 or other.shape[axis] != 3:
        raise RuntimeError(
            f"{fn}: inputs dimension {dim} must have length 3. Got {input.shape[axis]} and {other.shape[axis]}"
        )
    return write_out(_cross_along(input, other, axis), out, fn)


def _broadcast(fn: str, x: Tensor, y: Tensor) -> tuple:
    try:
        return np.broadcast_shapes(x.shape, y.shape)
    except ValueError:
        raise RuntimeError(f"{fn}: shapes {list(x.shape)} and {list(y.shape)} do not broadcast together") from None


def vecdot(x, y, *, dim=-1, out=None):
    """The dot products of the vectors of ``x`` and ``y`` along ``dim``: ``(x * y).sum(dim)``.

    The two broadcast together and must share one floating dtype. Two 1-D
    tensors give their dot product whatever ``dim`` is (as PyTorch).

    Raises:
        TypeError: an argument is not a Tensor, ``dim`` not an int.
        RuntimeError: ``x`` not floating point; different dtypes; shapes that do not broadcast (or
            1-D tensors of different lengths). IndexError: ``dim`` out of range.
    """
    fn = "linalg.vecdot"
    expect_tensor(x, fn, "x")
    expect_tensor(y, fn, "y")
    dim = _expect_int(dim, fn, "dim")
    _expect_floating(x, fn)
    if x.dtype != y.dtype:
        raise RuntimeError(
            f"{fn}: Expected x and y to have the same dtype, but found x of type {x.dtype} and y of type "
            f"{y.dtype}; convert one of them"
        )
    if x.ndim == 1 and y.ndim == 1:
        if x.shape != y.shape:
            raise RuntimeError(f"{fn}: 1-D tensors of different lengths {x.shape[0]} and {y.shape[0]}")
        return write_out((x * y).sum(), out, fn)
    shape = _broadcast(fn, x, y)
    (axis,) = normalize_axis(dim, len(shape), f"{fn}()")
    product = x * y
    return write_out(product.sum(axis) if shape else product, out, fn)


def _chain_order(sizes: list) -> list:
    """``split[i][j]``: where the cheapest product of matrices ``i..j`` splits (matrix ``k`` is ``sizes[k] x
    sizes[k + 1]``), by the classic dynamic programme over chain lengths."""
    n = len(sizes) - 1
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = math.inf
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + sizes[i] * sizes[k + 1] * sizes[j + 1]
                if c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k
    return split


def _chain_product(matrices: list, split: list, i: int, j: int) -> Tensor:
    if i == j:
        return matrices[i]
    k = split[i][j]
    return _chain_product(matrices, split, i, k) @ _chain_product(matrices, split, k + 1, j)


def multi_dot(tensors, *, out=None):
    """The product ``tensors[0] @ tensors[1] @ ... @ tensors[-1]``, multiplied in the cheapest order.

    At least two tensors, all of one dtype; the first may be 1-D (a row
    vector) and the last 1-D (a column vector), every other one 2-D; the
    result drops the dims of 1-D ends. The order of the products follows the
    sizes (fewest multiplications), as PyTorch's, so results round alike.

    Raises:
        TypeError: ``tensors`` is not a list or tuple of Tensors.
        RuntimeError: fewer than two tensors; a tensor of the wrong number of dims; different dtypes;
            neighbours whose sizes do not match.
        NotImplementedError: bool tensors (as PyTorch).
    """
    fn = "linalg.multi_dot"
    if not isinstance(tensors, (list, tuple)):
        raise TypeError(f"{fn}(): argument 'tensors' must be a list or tuple of Tensors, not {type(tensors).__name__}")
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"{fn}(): expected a Tensor as element {i} of 'tensors', but got {type(t).__name__}")
    n = len(tensors)
    if n < 2:
        raise RuntimeError(f"{fn}(): expected at least 2 tensors but got {n}")
    for i, t in enumerate(tensors):
        allowed = (1, 2) if i in (0, n - 1) else (2,)
        if t.ndim not in allowed:
            which = "the first tensor" if i == 0 else "the last tensor" if i == n - 1 else f"tensor {i}"
            raise RuntimeError(f"{fn}(): {which} must be {' or '.join(f'{a}D' for a in allowed)} but got {t.ndim}D")
    dtype = tensors[0].dtype
    for i, t in enumerate(tensors):
        if t.dtype != dtype:
            raise RuntimeError(
                f"{fn}(): all tensors must have the same dtype but tensor 0 is {dtype} and tensor {i} {t.dtype}"
            )
    if dtype.kind == "b":
        raise NotImplementedError(f"{fn}(): matrix products of bool tensors are not implemented; use .int()")
    if dtype.kind == "c":
        raise NotImplementedError(f"{fn}(): complex tensors are not supported here")
    first_vector, last_vector = tensors[0].ndim == 1, tensors[-1].ndim == 1
    matrices = list(tensors)
    if first_vector:
        matrices[0] = matrices[0].unsqueeze(0)
    if last_vector:
        matrices[-1] = matrices[-1].unsqueeze(-1)
    for i in range(n - 1):
        if matrices[i].shape[1] != matrices[i + 1].shape[0]:
            raise RuntimeError(
                f"{fn}(): tensors {i} and {i + 1} with shapes {list(tensors[i].shape)} and "
                f"{list(tensors[i + 1].shape)} cannot be multiplied"
            )
    sizes = [m.shape[0] for m in matrices] + [matrices[-1].shape[1]]
    if n == 3:  # PyTorch compares the two orders directly (ties: left to right)
        a, b, c, d = sizes
        left_first = a * c * (b + d) <= b * d * (a + c)
        result = (matrices[0] @ matrices[1]) @ matrices[2] if left_first else matrices[0] @ (matrices[1] @ matrices[2])
    else:
        result = _chain_product(matrices, _chain_order(sizes), 0, n - 1)
    if first_vector and last_vector:
        result = result.reshape(())
    elif first_vector:
        result = result.squeeze(0)
    elif last_vector:
        result = result.squeeze(-1)
    return write_out(result, out, fn)


# -- determinants under their linalg names --------------------------------------------------------------


def det(A, *, out=None):  # noqa: N803
    """The determinant of each square matrix of ``A`` (``(*, n, n)`` -> ``(*)``); see ``minigrad.ops.determinants``.

    0 (and gradient 0) for a singular matrix, as PyTorch's.

    Raises:
        TypeError: ``A`` is not a Tensor. RuntimeError: fewer than 2 dims, not square, not floating point.
        NotImplementedError: float16 (as PyTorch's LU) or complex.
    """
    return write_out(_determinants.det(A), out, "linalg.det")


def slogdet(A, *, out=None):  # noqa: N803
    """``SlogdetResult(sign, logabsdet)`` of each square matrix of ``A``: ``det = sign * exp(logabsdet)``.

    ``sign`` is -1, 0 or 1 (0 and ``logabsdet = -inf`` for a singular matrix);
    only ``logabsdet`` is differentiable. ``out``: an optional pair of tensors
    the two are written into.

    Raises:
        TypeError: ``A`` is not a Tensor, ``out`` not a pair of Tensors.
        RuntimeError: fewer than 2 dims, not square, not floating point, float16.
        NotImplementedError: complex.
    """
    result = _determinants.slogdet(A)
    if out is None:
        return result
    if not isinstance(out, (tuple, list)) or len(out) != 2:
        raise TypeError(f"linalg.slogdet(): argument 'out' must be a pair of Tensors, not {type(out).__name__}")
    return SlogdetResult(*(write_out(r, o, "linalg.slogdet") for r, o in zip(result, out)))
