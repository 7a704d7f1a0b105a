"""Tensors assembled from others: ``atleast_1d/2d/3d``, ``row_stack``, ``cartesian_prod``, ``combinations``
and ``vander``.

All are compositions of recorded ops (``reshape``, ``unsqueeze``, ``cat``,
``stack``, ``expand``, indexing, ``cumprod``), so their gradients need
nothing new:

* ``atleast_Nd`` returns views with leading (and, for 3-D, trailing) size-1
  dimensions; a tensor that already has N dimensions comes back as itself.
* ``cartesian_prod`` stacks the flattened ``meshgrid`` of its 1-D inputs:
  row ``k`` is the ``k``-th tuple of ``itertools.product``.
* ``combinations`` indexes the input with the table of ``itertools.combinations``
  (or ``combinations_with_replacement``), built in ``r`` vectorized steps.
* ``vander`` is ``[1, x, x*x, ...]`` by a running product (``cumprod``) in
  double precision, as PyTorch multiplies, so the values agree to the bit.
"""

from __future__ import annotations

import math

import numpy as np

from minigrad import promotion
from minigrad._checks import is_int
from minigrad.factory import ones, tensor, zeros
from minigrad.ops._util import expect_flag, expect_tensor
from minigrad.ops.scan import cumprod
from minigrad.ops.shape import cat, stack
from minigrad.shape_forms import _at_least, meshgrid
from minigrad.tensor import Tensor

__all__ = ["atleast_1d", "atleast_2d", "atleast_3d", "cartesian_prod", "combinations", "row_stack", "vander"]

# The most elements ``combinations`` builds (2**31 int64 indices take 16 GiB).
MAX_COMBINATION_ELEMENTS = 2**31


# -- atleast_Nd --------------------------------------------------------------------------------------------------


def _raised(item, ndim: int):
    """``item`` with at least ``ndim`` dimensions: NumPy's ``atleast_1d/2d/3d`` shapes, as views."""
    if item.ndim >= ndim:
        return item
    if ndim == 1 or item.ndim == 0:
        return item.reshape((1,) * ndim)
    if ndim == 2:  # (n,) -> (1, n)
        return item.unsqueeze(0)
    return item.unsqueeze(0).unsqueeze(-1) if item.ndim == 1 else item.unsqueeze(-1)  # (1, n, 1) or (a, b, 1)


def _atleast(tensors: tuple, ndim: int, fn: str):
    if len(tensors) == 1 and isinstance(tensors[0], Tensor):
        return _raised(tensors[0], ndim)
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    for k, item in enumerate(tensors):
        expect_tensor(item, fn, f"tensors[{k}]")
    return tuple(_raised(item, ndim) for item in tensors)


def atleast_1d(*tensors):
    """Each tensor with at least one dimension (a 0-d tensor becomes shape ``(1,)``).

    One tensor gives one tensor; several, or one list/tuple of them, give a
    tuple (empty for none). Tensors with enough dimensions come back as they
    are; the others as views.

    Raises:
        TypeError: an argument (or list element) is not a Tensor.
    """
    return _atleast(tensors, 1, "atleast_1d")


def atleast_2d(*tensors):
    """Each tensor with at least two dimensions: ``()`` -> ``(1, 1)``, ``(n,)`` -> ``(1, n)``.

    Arguments, results and errors as ``atleast_1d``.
    """
    return _atleast(tensors, 2, "atleast_2d")


def atleast_3d(*tensors):
    """Each tensor with at least three dimensions: ``()`` -> ``(1, 1, 1)``, ``(n,)`` -> ``(1, n, 1)``,
    ``(a, b)`` -> ``(a, b, 1)``.

    Arguments, results and errors as ``atleast_1d``.
    """
    return _atleast(tensors, 3, "atleast_3d")


def row_stack(tensors):
    """``vstack`` under its other name: join along dimension 0, 0-D and 1-D inputs taken as rows ``(1, n)``.

    Raises:
        TypeError: ``tensors`` is not a list or tuple of Tensors. RuntimeError: it is empty.
    """
    return cat(_at_least(tensors, 2, "row_stack"), 0)


# -- products of vectors -------------------------------------------------------------------------------------------


def _vector(item, fn: str, name: str):
    expect_tensor(item, fn, name)
    if item.ndim != 1:
        raise RuntimeError(f"{fn}(): {name} must be a 1-D vector, got shape {tuple(item.shape)}")


def cartesian_prod(*tensors):
    """The Cartesian product of 1-D tensors: one row per tuple, in ``itertools.product`` order.

    For ``k`` >= 2 tensors of ``n1, ..., nk`` elements the result has shape
    ``(n1 * ... * nk, k)``; a single tensor comes back as itself.
    Differentiable.

    Raises:
        TypeError: an argument is not a Tensor.
        RuntimeError: no tensors, a tensor that is not 1-D, or tensors of different dtypes.
    """
    for k, item in enumerate(tensors):
        _vector(item, "cartesian_prod", f"tensors[{k}]")
    if not tensors:
        raise RuntimeError("cartesian_prod(): expects at least one tensor")
    if len(tensors) == 1:
        return tensors[0]
    if len({item.dtype for item in tensors}) > 1:
        raise RuntimeError(f"cartesian_prod(): tensors must have one dtype, got {[str(t.dtype) for t in tensors]}")
    return stack([grid.reshape(-1) for grid in meshgrid(*tensors, indexing="ij")], 1)


def _combination_table(n: int, r: int, with_replacement: bool) -> np.ndarray:
    """The ``(count, r)`` int64 table of index tuples in ``itertools.combinations[_with_replacement]`` order.

    Each step extends every prefix by each admissible next index (greater
    than the last, or equal too with replacement), all prefixes at once.
    """
    table = np.arange(n, dtype=np.int64).reshape(n, 1)
    for _ in range(r - 1):
        first = table[:, -1] + (0 if with_replacement else 1)  # the smallest next index of each prefix
        counts = n - first
        rows = np.repeat(np.arange(table.shape[0]), counts)
        starts = np.cumsum(counts) - counts
        nxt = np.arange(rows.shape[0], dtype=np.int64) - starts[rows] + first[rows]
        table = np.concatenate([table[rows], nxt.reshape(-1, 1)], axis=1)
    return table


def combinations(input, r=2, with_replacement=False):  # noqa: A002  (PyTorch's names)
    """The ``r``-element combinations of the 1-D ``input``, one per row, as ``itertools.combinations``.

    With ``with_replacement`` an element may repeat
    (``itertools.combinations_with_replacement``). The result has shape
    ``(count, r)``, rows in lexicographic order of positions; ``r=0`` gives
    an empty 1-D tensor. Differentiable (repeated elements sum their
    gradients).

    Raises:
        TypeError: ``input`` is not a Tensor, ``r`` not an int, ``with_replacement`` not a bool.
        RuntimeError: ``input`` is not 1-D, ``r`` is negative, or the result would exceed
            ``MAX_COMBINATION_ELEMENTS`` elements.
    """
    expect_tensor(input, "combinations")
    if not is_int(r):
        raise TypeError(f"combinations(): argument 'r' must be an int, got {type(r).__name__}")
    with_replacement = expect_flag(with_replacement, "combinations", "with_replacement")
    if input.ndim != 1:
        raise RuntimeError(f"combinations(): input must be a 1-D vector, got shape {tuple(input.shape)}")
    r, n = int(r), input.shape[0]
    if r < 0:
        raise RuntimeError(f"combinations(): r must be non-negative, got {r}")
    if r == 0:
        return input[0:0]
    count = math.comb(n + r - 1, r) if with_replacement else math.comb(n, r)
    if count * r > MAX_COMBINATION_ELEMENTS:
        raise RuntimeError(f"combinations(): {count} combinations of {r} elements are too many to build "
                           f"(more than {MAX_COMBINATION_ELEMENTS} elements)")
    if count == 0:
        return input[0:0].reshape(0, r)
    table = tensor(_combination_table(n, r, with_replacement), device=input.device)
    return input.index_select(0, table.reshape(-1)).reshape(count, r)


# -- vander --------------------------------------------------------------------------------------------------------


def vander(x, N=None, increasing=False):  # noqa: N803  (PyTorch's names)
    """The Vandermonde matrix of the 1-D ``x``: columns ``x**(N-1), ..., x, 1`` (reversed if ``increasing``).

    ``N`` (default ``len(x)``) is the number of columns. Integer and bool
    inputs give int64 (wrapping on overflow, as PyTorch); floating and
    complex inputs keep their dtype. The powers are running products in double
    precision, rounded once to that dtype, as in PyTorch. Differentiable (for ``N`` >= 2; narrower results hold no
    power of ``x``).

    Raises:
        TypeError: ``x`` is not a Tensor, ``N`` neither None nor an int (or a 0-d integer tensor),
            ``increasing`` not a bool.
        RuntimeError: ``x`` is not 1-D, or ``N`` is negative.
    """
    expect_tensor(x, "vander", "x")
    if isinstance(N, Tensor) and N.ndim == 0 and N.dtype.kind in "iu":
        N = int(N.item())  # noqa: N806
    if N is not None and not is_int(N):
        raise TypeError(f"vander(): argument 'N' must be an int or None, got {type(N).__name__}")
    increasing = expect_flag(increasing, "vander", "increasing")
    if x.ndim != 1:
        raise RuntimeError(f"vander(): x must be a 1-D tensor, got shape {tuple(x.shape)}")
    rows = x.shape[0]
    columns = rows if N is None else int(N)
    if columns < 0:
        raise RuntimeError(f"vander(): N must be non-negative, got {columns}")
    dtype = promotion.promote_types(x.dtype, np.int64)
    if columns == 0:
        return zeros(rows, 0, dtype=dtype, device=x.device)
    result = ones(rows, 1, dtype=dtype, device=x.device)
    if columns > 1:
        # PyTorch multiplies in double precision (complex128 for complex) and rounds each power once.
        wide = np.dtype(np.complex128 if dtype.kind == "c" else np.float64 if dtype.kind == "f" else np.int64)
        base = x if x.dtype == wide else x.to(wide)
        powers = cumprod(base.unsqueeze(1).expand(rows, columns - 1), 1)
        result = cat([result, powers if powers.dtype == dtype else powers.to(dtype)], 1)
    return result if increasing else result.flip(1)
