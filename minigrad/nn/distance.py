"""Vector norms along a dimension and what is built on them: ``normalize``, ``cosine_similarity``,
``pairwise_distance``, ``pdist`` and the modules ``CosineSimilarity`` and ``PairwiseDistance``.

Names, signatures, defaults, values, gradients and error types mirror
PyTorch's. Everything is a composition of registered ops. The p-norm is
taken so that its gradient at a zero vector is 0 (as PyTorch's is) instead
of the 0 * inf = NaN a plain ``sum(|x|**p) ** (1/p)`` would give; the
infinity norm shares its gradient evenly among tied maxima, as PyTorch's does.
``pdist`` follows PyTorch's own pdist gradient instead: every tied maximum
gets the whole gradient, and a zero difference gets none for any p.
"""

from __future__ import annotations

import math

import numpy as np

from minigrad import backend
from minigrad.grad_mode import _state as _grad_state
from minigrad.nn.loss_utils import broadcast_shape, expect_number, expect_same_device, mask
from minigrad.nn.module import Module
from minigrad.ops import elementwise
from minigrad.promotion import promote_types
from minigrad.tensor import Tensor

__all__ = ["normalize", "cosine_similarity", "pairwise_distance", "pdist", "CosineSimilarity", "PairwiseDistance"]


def _expect_tensor(fn: str, name: str, x) -> None:
    if not isinstance(x, Tensor):
        raise TypeError(f"{fn}(): argument '{name}' must be a Tensor, got {type(x).__name__}")


def _dim(fn: str, dim, ndim: int) -> int:
    """``dim`` as a non-negative int for a tensor of ``ndim`` dimensions (0-d counts as 1-d), or IndexError."""
    if not isinstance(dim, (int, np.integer)) or isinstance(dim, bool):
        raise TypeError(f"{fn}(): dim must be an int, got {type(dim).__name__}")
    size = max(ndim, 1)
    if not -size <= dim < size:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-size}, {size - 1}], but got {dim})")
    return int(dim) % size


def vector_norm(x: Tensor, p: float, dim: int, keepdim: bool = False) -> Tensor:
    """The p-norm of ``x`` along ``dim`` (p may be inf, -inf, 0 or any other real number).

    p = 0 counts the nonzero entries (no gradient); p = +-inf is the largest
    (smallest) absolute value, its gradient shared evenly by ties; otherwise
    (sum |x|^p)^(1/p), whose gradient at a zero vector is 0 for p >= 1
    (for 0 < p < 1 the slope of |x|^p at 0 is infinite and the gradient there is NaN).
    """
    magnitude = x.abs() if p != 2 else None
    if p == 0:  # a count: in the graph (as in PyTorch) with a zero gradient
        count = (x.detach() != 0).sum(dim, keepdim=keepdim).to(x.dtype)
        total = x.sum(dim, keepdim=keepdim)
        return elementwise.where(mask(count.array == count.array), count, total) if x.requires_grad else count
    if math.isinf(p):
        values = magnitude.detach().array
        extreme = values.max(axis=dim, keepdims=True) if p > 0 else values.min(axis=dim, keepdims=True)
        ties = mask(values == extreme)
        count = ties.sum(axis=dim, keepdims=keepdim)
        return elementwise.where(ties, magnitude, 0.0).sum(dim, keepdim=keepdim) / Tensor._make(
            count.astype(x.dtype), False, None, 0)
    powered = x * x if p == 2 else magnitude ** p
    total = powered.sum(dim, keepdim=keepdim)
    zero = mask(total.array == 0)  # not ``total <= 0``: a NaN total must give a NaN norm, as in PyTorch
    safe = elementwise.where(zero, 1.0, total)  # the root is not differentiated at 0 (infinite slope)
    root = safe.sqrt() if p == 2 else safe ** (1.0 / p)
    return elementwise.where(zero, 0.0 if p > 0 else math.inf, root)


def _expect_p(fn: str, p) -> float:
    p = expect_number(fn, "p", p)
    if math.isnan(p):
        raise ValueError(f"{fn}(): p must be a number, got nan")
    return p


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):  # noqa: A002  (PyTorch's names)
    """``input`` divided by max(its p-norm along ``dim``, ``eps``): unit vectors along ``dim``.

    Args:
        input: a floating point Tensor of any shape.
        p: the norm's exponent (2: Euclidean; inf and 0 allowed).
        dim: the dimension of the vectors (default 1).
        eps: the smallest divisor (a zero vector stays zero).
        out: optional Tensor the result is copied into (and returned); only
            when no gradient is being recorded, as in PyTorch.

    Raises:
        TypeError: an argument has the wrong type.
        IndexError: ``dim`` is out of range.
        RuntimeError: an integer input, or ``out`` given while recording a graph.
    """
    fn = "normalize"
    _expect_tensor(fn, "input", input)
    p = _expect_p(fn, p)
    eps = expect_number(fn, "eps", eps)
    if input.dtype.kind != "f":
        raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor as input. "
                           f"Got {input.dtype} ({fn}())")
    axis = _dim(fn, dim, input.ndim)
    x = input if input.ndim else input.reshape(1)
    norm = vector_norm(x, p, axis, keepdim=True)
    result = x / elementwise.clamp(norm, min=eps)
    if not input.ndim:
        result = result.reshape(())
    if out is None:
        return result
    _expect_tensor(fn, "out", out)
    if _grad_state.enabled and (input.requires_grad or out.requires_grad):
        raise RuntimeError("normalize(): functions with out=... arguments don't support automatic differentiation, "
                           "but one of the arguments requires grad.")
    return out.copy_(result)


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """Cosine of the angle between ``x1`` and ``x2`` along ``dim``: x1 . x2 / (max(|x1|, eps) max(|x2|, eps)).

    The two broadcast together; dtypes promote (an integer tensor with a float
    one gives the float dtype), and at least one must be floating point.

    Returns:
        The broadcast shape without ``dim``.

    Raises:
        TypeError: an argument has the wrong type.
        IndexError: ``dim`` is out of range.
        RuntimeError: neither is floating point (PyTorch's type), the shapes do not
            broadcast, or devices differ.
    """
    fn = "cosine_similarity"
    _expect_tensor(fn, "x1", x1)
    _expect_tensor(fn, "x2", x2)
    eps = expect_number(fn, "eps", eps)
    expect_same_device(fn, x1, "x1", x2, "x2")
    shape = broadcast_shape(fn, ("x1", x1), ("x2", x2))
    axis = _dim(fn, dim, len(shape))
    dtype = promote_types(x1.dtype, x2.dtype)
    if dtype.kind != "f":
        raise RuntimeError(
            f"{fn}(): x1 of dtype {x1.dtype} and x2 of dtype {x2.dtype} promote to {dtype}; "
            "one of them must be floating point (convert it with .float())"
        )
    x1, x2 = (t if t.dtype == dtype else t.to(dtype) for t in (x1, x2))
    if not shape:
        x1, x2 = x1.reshape(1), x2.reshape(1)
    x1, x2 = (t if t.shape == shape else t.expand(shape or (1,)) for t in (x1, x2))
    unit1 = x1 / elementwise.clamp(vector_norm(x1, 2, axis, keepdim=True), min=eps)
    unit2 = x2 / elementwise.clamp(vector_norm(x2, 2, axis, keepdim=True), min=eps)
    return (unit1 * unit2).sum(axis)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """The p-norm distance between rows: ||x1 - x2 + eps||_p along the last dimension.

    ``eps`` keeps the distance (and its gradient) finite when x1 equals x2.
    The two broadcast together (a (D,) against (N, D) gives (N,)).

    Raises:
        TypeError: an argument has the wrong type.
        RuntimeError: the shapes do not broadcast, or devices differ.
    """
    fn = "pairwise_distance"
    _expect_tensor(fn, "x1", x1)
    _expect_tensor(fn, "x2", x2)
    p = _expect_p(fn, p)
    eps = expect_number(fn, "eps", eps)
    if not isinstance(keepdim, (bool, np.bool_)):
        raise TypeError(f"{fn}(): argument 'keepdim' must be bool, not {type(keepdim).__name__}")
    expect_same_device(fn, x1, "x1", x2, "x2")
    shape = broadcast_shape(fn, ("x1", x1), ("x2", x2))
    diff = x1 - x2 + eps
    if not shape:
        diff = diff.reshape(1)
        return vector_norm(diff, p, 0, keepdim=keepdim)
    return vector_norm(diff, p, diff.ndim - 1, keepdim=keepdim)


def _pdist_p(p) -> float:
    """pdist's ``p`` as a float: a real number (a bool counts as 0 or 1, as in PyTorch), else TypeError."""
    if isinstance(p, (bool, np.bool_)):
        return float(p)
    if not isinstance(p, (int, float, np.integer, np.floating)):
        raise TypeError(f"pdist(): argument 'p' must be a number (float), got {type(p).__name__}")
    return float(p)


def _row_norms(diff: Tensor, p: float) -> Tensor:
    """The p-norm of each row of ``diff`` (P, M) with pdist's gradient (PyTorch's ``_pdist_backward``).

    p = 0 counts the nonzero entries (in the graph, gradient 0); p = inf is the
    largest absolute entry, and each entry tied with it gets the row's whole
    gradient; otherwise (sum |d|^p)^(1/p), whose gradient is 0 at a zero row
    and at each zero entry (for p < 1 too, where the plain formula gives NaN).
    NaN entries make the distance NaN for every p.
    """
    xp = backend.get_array_module(diff.array)
    magnitude = diff.abs()
    values = magnitude.detach().array
    if p == 0:
        count = Tensor._make(xp.minimum(xp.ceil(values), 1).sum(axis=1), False, None, 0)  # NaN stays NaN
        if not diff.requires_grad:
            return count
        return elementwise.where(mask(xp.ones(count.shape, dtype=bool)), count, diff.sum(1))
    if math.isinf(p):
        if diff.shape[1] == 0:
            return magnitude.sum(1)  # zeros: the largest of no entries is 0 here, as in PyTorch
        largest = values.max(axis=1, keepdims=True)  # NaN propagates
        # Value: the maximum itself. Gradient: 1 at every finite entry tied with it (z - z.detach() is an exact
        # zero whose derivative is that mask), so the sum of ties is never formed and cannot round or overflow.
        ties = mask((values == largest) & xp.isfinite(values))
        tied = elementwise.where(ties, magnitude, 0.0)
        return Tensor._make(largest[:, 0], False, None, 0) + (tied - tied.detach()).sum(1)
    if p == 1:
        return magnitude.sum(1)
    if p == 2:
        total = (diff * diff).sum(1)
    else:
        nonzero = mask(values != 0)
        total = elementwise.where(nonzero, elementwise.where(nonzero, magnitude, 1.0) ** p, 0.0).sum(1)
    zero = mask(total.detach().array == 0)
    safe = elementwise.where(zero, 1.0, total)  # the root is not differentiated at 0 (infinite slope)
    return elementwise.where(zero, 0.0, safe.sqrt() if p == 2 else safe ** (1.0 / p))


def pdist(input, p=2):  # noqa: A002  (PyTorch's names)
    """The p-norm distances between every pair of rows of ``input``, condensed.

    For an (N, M) input the result has N * (N - 1) / 2 entries, the distance
    of rows (i, j) for i < j in row-major order: (0, 1), (0, 2), ..., (0, N-1),
    (1, 2), ... (the upper triangle of ``cdist(input, input)``, as in
    ``torch.nn.functional.pdist``). ``p`` may be 0 (count of differing
    entries), any positive number, or inf (largest absolute difference).

    Gradients are PyTorch's: 0 for rows that coincide and for p = 0; for
    p = inf every tied largest difference gets the whole gradient.

    Raises:
        TypeError: ``input`` is not a Tensor, or ``p`` is not a number.
        RuntimeError (PyTorch's type): ``input`` is not 2-D, not floating point, or
            ``p`` is negative or NaN.
    """
    fn = "pdist"
    _expect_tensor(fn, "input", input)
    p = _pdist_p(p)
    if input.ndim != 2:
        raise RuntimeError(f"pdist(): only supports 2-D (N, M) input, got {input.ndim}-D of shape {input.shape}")
    if input.dtype.kind != "f":
        raise RuntimeError(f"pdist(): only supports floating point input, got {input.dtype} (convert with .float())")
    if not p >= 0:
        raise RuntimeError(f"pdist(): p must be non-negative, got {p}")
    xp = backend.get_array_module(input.array)
    first, second = xp.triu_indices(input.shape[0], 1)
    diff = input[first] - input[second]
    return _row_norms(diff, p)


class CosineSimilarity(Module):
    """Cosine similarity along ``dim`` (default 1): see ``cosine_similarity``."""

    def __init__(self, dim: int = 1, eps: float = 1e-8):
        super().__init__()
        self.dim = dim
        self.eps = eps

    def forward(self, x1, x2):
        """The cosine similarity of ``x1`` and ``x2``."""
        return cosine_similarity(x1, x2, self.dim, self.eps)


class PairwiseDistance(Module):
    """p-norm distance between rows (default p=2, eps=1e-6): see ``pairwise_distance``."""

    def __init__(self, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False):
        super().__init__()
        self.norm = p
        self.eps = eps
        self.keepdim = keepdim

    def forward(self, x1, x2):
        """The distance between ``x1`` and ``x2``."""
        return pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)
