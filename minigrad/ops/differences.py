"""``diff``: the n-th forward difference along one dimension, composed of recorded ops.

``diff(x)[i] = x[i + 1] - x[i]``, applied ``n`` times; ``prepend`` and
``append`` are joined to ``x`` along ``dim`` first. Slicing, subtraction and
``cat`` are all differentiable, so ``diff`` needs no op class of its own:
its gradient is the (negated, shifted) difference of the output gradient,
which the recorded slices and subtractions give.
"""

from __future__ import annotations

from minigrad._checks import is_int
from minigrad.ops._util import expect_tensor, normalize_axis
from minigrad.ops.shape import cat
from minigrad.tensor import Tensor

__all__ = ["diff"]


def _check_int(value, fn: str, name: str) -> int:
    if not is_int(value):
        raise TypeError(f"{fn}(): argument '{name}' must be an int, got {type(value).__name__}")
    return int(value)


def _check_edge(input, edge, axis: int, name: str):  # noqa: A002  (PyTorch's names)
    """``prepend``/``append``: a Tensor with ``input``'s dims, equal to its shape off ``axis``."""
    if not isinstance(edge, Tensor):
        raise TypeError(f"diff(): argument '{name}' must be a Tensor, got {type(edge).__name__}")
    if edge.ndim != input.ndim:
        raise RuntimeError(
            f"diff: {name} must have as many dimensions as input ({input.ndim}), got shape {tuple(edge.shape)}"
        )
    for d, (m, n) in enumerate(zip(edge.shape, input.shape)):
        if d != axis and m != n:
            raise RuntimeError(
                f"diff: {name} of shape {tuple(edge.shape)} must match input's shape {tuple(input.shape)} "
                f"in every dimension but {axis}"
            )


def diff(input, n=1, dim=-1, prepend=None, append=None):  # noqa: A002
    """The ``n``-th forward difference of ``input`` along ``dim``: ``out[i] = input[i + 1] - input[i]``, n times.

    ``prepend`` and ``append`` (Tensors shaped like ``input`` except along
    ``dim``) are joined before and after ``input`` first, in the promoted
    dtype. The result is ``n`` shorter along ``dim`` (empty once ``n`` reaches
    its length); ``n=0`` returns (a copy of) the joined input. Integer tensors keep their
    dtype (and wrap around, as in PyTorch); for bool tensors the difference is
    ``!=`` (exclusive or). Differentiable in ``input``, ``prepend`` and ``append``.

    Raises:
        TypeError: ``input`` (or ``prepend``/``append``) is not a Tensor, or ``n``/``dim`` is not an int.
        IndexError: ``dim`` is out of range.
        RuntimeError: ``input`` is 0-d, ``n`` is negative, or ``prepend``/``append``
            differs from ``input`` in its number of dims or its shape off ``dim`` (as PyTorch).
    """
    expect_tensor(input, "diff")
    n, dim = _check_int(n, "diff", "n"), _check_int(dim, "diff", "dim")
    if input.ndim == 0:
        raise RuntimeError("diff: input must have at least one dimension; a 0-d tensor has no differences")
    (axis,) = normalize_axis(dim, input.ndim, "diff")
    if n < 0:
        raise RuntimeError(f"diff: the order n must be non-negative, got {n}")
    edges = [(name, edge) for name, edge in (("prepend", prepend), ("append", append)) if edge is not None]
    for name, edge in edges:
        _check_edge(input, edge, axis, name)
    out = input
    if edges:  # cat joins in PyTorch's result dtype
        out = cat([p for p in (prepend, input, append) if p is not None], axis)
    later = (slice(None),) * axis + (slice(1, None),)
    earlier = (slice(None),) * axis + (slice(None, -1),)
    for _ in range(min(n, out.shape[axis])):  # past the length the result stays empty
        out = out[later] != out[earlier] if out.dtype.kind == "b" else out[later] - out[earlier]
    return input.clone() if out is input else out  # n=0: a new tensor, as in PyTorch
