"""Matrices built around diagonals: ``diag_embed``, ``diagflat`` and ``block_diag``.

``diag_embed`` is the adjoint of ``diagonal``: it writes the last dimension
of its input onto a diagonal of two new dimensions, zeros elsewhere. It is
``DiagonalScatter`` (``ops/structure.py``) itself, whose backward reads the
diagonal back::

    input (2, 3), offset=1, dim1=-2, dim2=-1  ->  out (2, 4, 4)
    out[b].diagonal(1) == input[b]

``diagflat`` embeds the flattened input as one matrix. ``block_diag`` places
matrices along the diagonal of a larger one; it is joined from the blocks
and zero fills with ``cat``, so each block's gradient is its slice of the
output's.
"""

from __future__ import annotations

from minigrad import promotion
from minigrad._checks import is_int
from minigrad.factory import zeros
from minigrad.ops._util import expect_tensor, normalize_axis
from minigrad.ops.shape import cat
from minigrad.ops.structure import DiagonalScatter

__all__ = ["block_diag", "diag_embed", "diagflat"]


def _int(value, fn: str, name: str) -> int:
    if not is_int(value):
        raise TypeError(f"{fn}(): argument '{name}' must be an int, got {type(value).__name__}")
    return int(value)


def diag_embed(input, offset=0, dim1=-2, dim2=-1):  # noqa: A002  (PyTorch's names)
    """A tensor with the last dimension of ``input`` on a diagonal of dimensions ``dim1`` and ``dim2``.

    The result has one dimension more than ``input``: its dimensions
    ``dim1`` and ``dim2`` (counted in the result, negative from its end) have
    size ``n + |offset|`` for ``n = input.size(-1)``, and the other
    dimensions are ``input``'s leading ones in order. ``offset`` > 0 puts the
    values above the main diagonal, < 0 below. Differentiable.

    Raises:
        TypeError: ``input`` is not a Tensor, or an argument is not an int.
        IndexError: ``dim1`` or ``dim2`` is out of range for ``input.ndim + 1`` dimensions (a 0-d input has
            no last dimension to embed, so its default dims are out of range).
        RuntimeError: ``dim1`` and ``dim2`` name the same dimension.
    """
    expect_tensor(input, "diag_embed")
    offset = _int(offset, "diag_embed", "offset")
    dim1 = _int(dim1, "diag_embed", "dim1")
    dim2 = _int(dim2, "diag_embed", "dim2")
    ndim = input.ndim + 1
    for value in (dim1, dim2):
        if not -ndim <= value < ndim:
            raise IndexError(f"diag_embed(): dim {value} is out of range for the result's {ndim} dimensions "
                             f"(input of shape {tuple(input.shape)})")
    axis1, axis2 = normalize_axis((dim1, dim2), ndim, "diag_embed")
    if axis1 == axis2:
        raise RuntimeError(f"diag_embed(): dim1 ({dim1}) and dim2 ({dim2}) name the same dimension; give two")
    size = input.shape[-1] + abs(offset)
    lead = list(input.shape[:-1])
    shape = []
    for d in range(ndim):
        shape.append(size if d in (axis1, axis2) else lead.pop(0))
    return DiagonalScatter(offset, axis1, axis2, tuple(shape))(input)


def diagflat(input, offset=0):  # noqa: A002
    """A square matrix with the flattened ``input`` on its ``offset``-th diagonal (``n + |offset|`` on a side).

    A 0-d input counts as one element. Differentiable.

    Raises:
        TypeError: ``input`` is not a Tensor, or ``offset`` is not an int.
    """
    expect_tensor(input, "diagflat")
    offset = _int(offset, "diagflat", "offset")
    return diag_embed(input.reshape(-1), offset, 0, 1)


def block_diag(*tensors):
    """The tensors placed as blocks along the diagonal of one matrix, zeros elsewhere.

    A 0-d tensor is a 1x1 block and a 1-D tensor of ``n`` elements a 1xn
    row. The result has the summed rows and columns of the blocks, in the
    dtype ``result_type`` gives all of them (0-d tensors count less, as in
    arithmetic), on their device. Without tensors: an empty 1x0 matrix of
    the default dtype. Differentiable; each block gets its gradient in its
    own dtype.

    Raises:
        TypeError: an argument is not a Tensor.
        RuntimeError: a tensor has more than 2 dimensions.
    """
    for k, item in enumerate(tensors):
        expect_tensor(item, "block_diag", f"tensors[{k}]")
        if item.ndim > 2:
            raise RuntimeError(f"block_diag(): tensors must have at most 2 dimensions, tensors[{k}] has shape "
                               f"{tuple(item.shape)}")
    if not tensors:
        return zeros(1, 0)
    dtype = promotion.result_type(*tensors)
    device = tensors[0].device
    blocks = [item.reshape(1, -1) if item.ndim < 2 else item for item in tensors]
    blocks = [block if block.dtype == dtype else block.to(dtype) for block in blocks]
    width = sum(block.shape[1] for block in blocks)
    rows, left = [], 0
    for block in blocks:
        r, c = block.shape
        row = [zeros(r, left, dtype=dtype, device=device), block,
               zeros(r, width - left - c, dtype=dtype, device=device)]
        rows.append(cat(row, 1))
        left += c
    return cat(rows, 0)
