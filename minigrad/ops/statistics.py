# ruff: noqa: A001, A002  (PyTorch's parameter names: input, min, max)
"""Descriptive statistics: ``aminmax``, ``nanmedian``, ``cov``, ``corrcoef`` and ``histc``.

* ``aminmax`` is ``amin`` and ``amax`` at once (the same ``AMax`` op of
  ``minigrad.math_forms``): ties share the gradient evenly, as in PyTorch.
* ``nanmedian`` is the lower median of the values that are not NaN. Over all
  elements its op (``NanMedianAll``) shares the gradient among the elements
  equal to the median; along ``dim`` it picks one element per slice, the one
  PyTorch's CPU kernel picks: the element of rank ``(m - 1) // 2`` among the
  ``m`` non-NaN ones ordered by (value, position), and for a slice of NaN
  only the position ``std::nth_element`` leaves first (``_all_nan_position``).
* ``cov`` and ``corrcoef`` are compositions of recorded ops (so gradients of
  any order, also for ``aweights``), written in the order of PyTorch's formula
  so that the dtypes (integers give the default float dtype) and roundings follow it.
* ``histc`` counts into equal-width bins, computing each element's bin in the
  input's dtype as PyTorch's kernel does; it is not differentiable.
"""

from __future__ import annotations

import math
import warnings
from collections import namedtuple

import numpy as np

from minigrad import backend
from minigrad.math_forms import AMax, _select_along, write_out
from minigrad.ops._util import expect_flag, expect_tensor, normalize_axis
from minigrad.ops.sorting import sorted_indices
from minigrad.tensor import Tensor

__all__ = ["AminmaxResult", "NanMedianAll", "NanMedianResult", "aminmax", "corrcoef", "cov", "histc", "nanmedian"]

AminmaxResult = namedtuple("AminmaxResult", ["min", "max"])
NanMedianResult = namedtuple("NanMedianResult", ["values", "indices"])

_INTS = (int, np.integer)


def _const(xp, array) -> Tensor:
    return Tensor._make(xp.asarray(array), False, None, 0)


def _is_int(value) -> bool:
    return isinstance(value, _INTS) and not isinstance(value, (bool, np.bool_))


def _refuse_dtypes(input, fn: str, kinds: str) -> None:
    """NotImplementedError (PyTorch's class for a dtype a kernel lacks) when ``input``'s dtype kind is in ``kinds``."""
    if input.dtype.kind in kinds:
        raise NotImplementedError(f"{fn}(): not implemented for tensors of dtype {input.dtype}")


# -- aminmax ------------------------------------------------------------------------------------------------


def aminmax(input, *, dim=None, keepdim=False):
    """``(min, max)`` of ``input``: over all elements (``dim=None``) or along the int ``dim``.

    Ties share the gradient evenly (as ``amin``/``amax``); a slice holding NaN
    gives NaN. With ``dim=None`` and ``keepdim=True`` every dim is kept with size 1.

    Returns:
        ``AminmaxResult(min, max)``, both of ``input``'s dtype.

    Raises:
        TypeError: ``input`` is not a Tensor, ``dim`` not an int (or None), ``keepdim`` not a bool.
        IndexError: ``dim`` is out of range, or names a dim of size 0.
        RuntimeError: ``dim=None`` on an empty tensor (no identity to return).
        NotImplementedError: a complex ``input`` (as PyTorch's CPU kernel).
    """
    expect_tensor(input, "aminmax")
    keepdim = expect_flag(keepdim, "aminmax", "keepdim")
    _refuse_dtypes(input, "aminmax", "c")
    if dim is None:
        if input.array.size == 0:
            raise RuntimeError(
                f"aminmax(): cannot compute aminmax over an empty dimension (input of shape {list(input.shape)}) "
                "as the operation has no identity; pass a dim of nonzero size"
            )
        axes = None
    else:
        if not _is_int(dim):
            raise TypeError(f"aminmax(): argument 'dim' must be int, not {type(dim).__name__}")
        axes = normalize_axis(int(dim), input.ndim, "aminmax()")
        if input.ndim == 0:
            axes = None
        elif input.shape[axes[0]] == 0:
            raise IndexError(f"aminmax(): Expected reduction dim {dim} to have non-zero size (got shape "
                             f"{list(input.shape)})")
    with np.errstate(invalid="ignore"):  # a slice of NaN: NaN gradients, as in PyTorch
        return AminmaxResult(AMax(axes, keepdim, False)(input), AMax(axes, keepdim, True)(input))


# -- nanmedian ----------------------------------------------------------------------------------------------


class NanMedianAll(AMax):
    """the lower median of the non-NaN elements (NaN when all are NaN, or for no elements); the elements
    equal to it (or, all NaN, the NaNs) share the gradient evenly, as in PyTorch"""

    nan_shares = True

    def __init__(self):
        super().__init__(None, False, True)

    def select(self, a):
        xp = self.xp
        flat = xp.sort(a.reshape(-1))  # NaN last
        count = int((~xp.isnan(flat)).sum()) if a.dtype.kind == "f" else flat.size
        if count == 0:
            with np.errstate(invalid="ignore"):
                value = xp.asarray(np.nan).astype(a.dtype)  # an empty integer tensor: NaN cast, as PyTorch
        else:
            value = flat[(count - 1) // 2]
        return xp.asarray(value, dtype=a.dtype).reshape((1,) * a.ndim)

    def forward(self, a):
        if a.size == 0:
            self.in_shape = a.shape
            self.weights = self.xp.zeros(a.shape, dtype=np.float64)
            return self.select(a).reshape(())
        return super().forward(a)


def _all_nan_position(n: int) -> int:
    """The position ``std::nth_element`` (libstdc++) puts first when all ``n`` elements compare equal.

    PyTorch's CPU median reads the element there for a slice of NaN only. For
    equal elements each partition step of the introselect loop swaps the
    first element with the middle one, then reverses the rest, and goes on
    with the first ``ceil(size / 2)`` positions while more than three remain.
    """
    order = np.arange(n)
    hi = n
    while hi > 3:
        mid = hi // 2
        order[[0, mid]] = order[[mid, 0]]
        order[1:hi] = order[1:hi][::-1].copy()
        hi = (hi + 1) // 2
    return int(order[0])


def _nanmedian_index(data, axis):
    """Per slice along ``axis`` (kept), the index of the lower median of the non-NaN values (see the module)."""
    xp = backend.get_array_module(data)
    order = sorted_indices(data, axis, False)  # stable: ties in position order, NaN last
    n = data.shape[axis]
    if data.dtype.kind == "f":
        count = (~xp.isnan(data)).sum(axis=axis, keepdims=True)
    else:
        count = xp.full(data.shape[:axis] + (1,) + data.shape[axis + 1:], n)
    rank = xp.maximum(count - 1, 0) // 2
    index = xp.take_along_axis(order, rank.astype(np.int64), axis=axis)
    return xp.where(count == 0, _all_nan_position(n), index).astype(np.int64, copy=False)


def nanmedian(input, dim=None, keepdim=False):
    """The lower median of the values that are not NaN.

    ``dim=None``: a 0-d tensor, NaN when every element is NaN or there are
    none; the gradient is shared by the elements equal to the median.
    With an int ``dim``: ``(values, indices)`` per slice (NaN, at PyTorch's
    position, for a slice of NaN); the gradient goes to the chosen index.

    Raises:
        TypeError: ``input`` is not a Tensor, ``dim`` not an int, ``keepdim`` not a bool (or given without ``dim``).
        IndexError: ``dim`` is out of range, or its size is 0.
        NotImplementedError: a bool or complex ``input`` (as PyTorch).
    """
    expect_tensor(input, "nanmedian")
    expect_flag(keepdim, "nanmedian", "keepdim")
    _refuse_dtypes(input, "nanmedian", "bc")
    if dim is None:
        if keepdim:
            raise TypeError("nanmedian(): keepdim=True needs a dim: pass nanmedian(input, dim, keepdim=True)")
        return NanMedianAll()(input)
    return _select_along(input, dim, keepdim, "nanmedian", _nanmedian_index, NanMedianResult)


# -- cov and corrcoef ---------------------------------------------------------------------------------------


def _check_weights(w, name: str, num_observations: int, kinds: str, what: str):
    if w is None:
        return None
    if not isinstance(w, Tensor):
        raise TypeError(f"cov(): argument '{name}' must be a Tensor or None, not {type(w).__name__}")
    if w.ndim > 1:
        raise RuntimeError(f"cov(): expected {name} to have one or fewer dimensions but got {name} with "
                           f"{w.ndim} dimensions")
    if w.dtype.kind not in kinds:
        raise RuntimeError(f"cov(): expected {name} to have {what} dtype but got {name} with {w.dtype} dtype")
    if w.numel() != num_observations:
        raise RuntimeError(f"cov(): expected {name} to have the same numel as there are observations in the "
                           f"input but got {w.numel()} != {num_observations}")
    if num_observations and bool((w.array < 0).any()):
        raise RuntimeError(f"cov(): {name} cannot be negative")
    return w


def cov(input, *, correction=1, fweights=None, aweights=None):
    """The covariance matrix of the variables in the rows of ``input`` (observations in the columns).

    A 1-D ``input`` is one variable; the result is squeezed (one variable: a
    0-d tensor). ``fweights`` (integer counts) and ``aweights`` (float
    importances) weight the observations; ``correction`` is subtracted from
    the (weighted) number of observations, 1 giving the unbiased estimate.
    Where that leaves no degrees of freedom a UserWarning is given and the
    division is by 0 (inf or NaN), as in PyTorch. Integer inputs give the
    default float dtype. Differentiable in ``input`` and ``aweights``.

    Args:
        input: a 0-D, 1-D or 2-D tensor (variables, observations).
        correction: an int.
        fweights: None, or a 0-D or 1-D integer tensor of non-negative counts, one per observation.
        aweights: None, or a 0-D or 1-D float tensor of non-negative weights, one per observation.

    Raises:
        TypeError: ``input`` (or a weight) is not a Tensor, ``correction`` not an int.
        RuntimeError: ``input`` has more than 2 dims or is bool; a weight has more than 1 dim, the wrong
            dtype or length, a negative entry; the weights sum to zero.
        NotImplementedError: a complex ``input`` (not supported here).
    """
    expect_tensor(input, "cov")
    if not _is_int(correction):
        raise TypeError(f"cov(): argument 'correction' must be int, not {type(correction).__name__}")
    if input.ndim > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got an input with "
                           f"{input.ndim} dimensions")
    if input.dtype.kind == "b":
        raise RuntimeError("cov(): bool dtype is not supported for input; convert it with .float()")
    _refuse_dtypes(input, "cov", "c")
    x = input if input.ndim == 2 else input.reshape(1, -1)
    n = x.shape[1]
    fweights = _check_weights(fweights, "fweights", n, "iu", "integral")
    aweights = _check_weights(aweights, "aweights", n, "f", "floating point")
    w = fweights
    if aweights is not None:
        w = aweights if w is None else w * aweights
    xp = backend.get_array_module(x.array)
    w_sum = _const(xp, np.int64(n)) if w is None else w.sum()
    if w is not None and not bool(w_sum.array != 0):
        raise RuntimeError("cov(): weights sum to zero, can't be normalized")
    with np.errstate(divide="ignore", invalid="ignore"):  # no observations: NaN, as in PyTorch
        avg = (x if w is None else x * w).sum(1) / w_sum
    if w is not None and aweights is not None and correction != 0:
        norm_factor = w_sum - correction * (w * aweights).sum() / w_sum
    else:
        norm_factor = w_sum - correction
    if bool(norm_factor.array <= 0):
        warnings.warn("cov(): degrees of freedom is <= 0. Correction should be strictly less than the number "
                      "of observations.", UserWarning, stacklevel=2)
        norm_factor = norm_factor * 0 + 0  # +0, as PyTorch's zero_()
    centered = x - avg.unsqueeze(1)
    c = centered @ (centered if w is None else centered * w).t()
    with np.errstate(divide="ignore", invalid="ignore"):
        return (c / norm_factor).squeeze()


def corrcoef(input):
    """Pearson's correlation coefficients of the variables in the rows of ``input``: ``cov`` normalized by the
    standard deviations and clipped to [-1, 1] (a single variable: 1, or NaN for no variation).

    Raises:
        TypeError: ``input`` is not a Tensor. RuntimeError: more than 2 dims, or bool (as ``cov``).
        NotImplementedError: a complex ``input``.
    """
    expect_tensor(input, "corrcoef")
    if input.ndim > 2:
        raise RuntimeError(f"corrcoef(): expected input to have two or fewer dimensions but got an input with "
                           f"{input.ndim} dimensions")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # cov's no-degrees-of-freedom warning: the NaN result says it
        c = cov(input)
    with np.errstate(divide="ignore", invalid="ignore"):
        if c.ndim == 0:
            return c / c
        stddev = c.diagonal().sqrt()
        c = c / stddev.reshape(-1, 1)
        c = c / stddev.reshape(1, -1)
    return c.clip(-1, 1)


# -- histc --------------------------------------------------------------------------------------------------


def _number(value, name: str) -> float:
    if isinstance(value, Tensor) and value.ndim == 0 and value.dtype.kind in "biuf":
        return float(value.item())
    if isinstance(value, (complex, np.complexfloating)):
        raise RuntimeError(f"histc(): argument '{name}' ({value!r}) cannot be converted to a real number")
    if not isinstance(value, (int, float, np.number, np.bool_)):
        raise TypeError(f"histc(): argument '{name}' must be Number, not {type(value).__name__}")
    return float(value)


def histc(input, bins=100, min=0, max=0, *, out=None):
    """A histogram of ``input``'s elements: ``bins`` equal-width bins over [``min``, ``max``].

    ``min == max`` (the default) takes the range from the data (its smallest
    and largest elements), widened by 1 on each side if that is still a
    single point. Elements outside the range and NaN are not counted; an
    element equal to ``max`` goes in the last bin. Each element's bin is
    ``floor((x - min) * bins / (max - min))`` computed in ``input``'s dtype,
    as PyTorch's kernel does. The counts come back in ``input``'s dtype, as a
    1-D tensor of length ``bins``. Not differentiable.

    Raises:
        TypeError: ``input`` is not a Tensor, ``bins`` not an int, ``min``/``max`` not numbers.
        RuntimeError: ``bins`` <= 0; the range is not finite (a NaN or infinite element when the range
            comes from the data) or ``min`` > ``max``; a bound does not fit ``input``'s dtype; ``out`` has
            another dtype.
        NotImplementedError: ``input`` is not floating point (as PyTorch's CPU kernel).
    """
    expect_tensor(input, "histc")
    if isinstance(bins, Tensor) and bins.ndim == 0 and bins.dtype.kind in "iu":
        bins = int(bins.item())
    if not _is_int(bins):
        raise TypeError(f"histc(): argument 'bins' must be int, not {type(bins).__name__}")
    lo, hi = _number(min, "min"), _number(max, "max")
    if input.dtype.kind != "f":
        raise NotImplementedError(f"histc(): not implemented for tensors of dtype {input.dtype}; convert the "
                                  "input with .float()")
    if bins <= 0:
        raise RuntimeError(f"histc(): bins must be > 0, but got {bins}")
    data = input.array
    xp = backend.get_array_module(data)
    if lo == hi and data.size:
        lo, hi = float(data.min()), float(data.max())
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise RuntimeError(f"histc(): range of [{lo}, {hi}] is not finite")
    if not lo < hi:
        raise RuntimeError(f"histc(): max must be larger than min, got min={lo} and max={hi}")
    largest = float(np.finfo(input.dtype).max)
    if abs(lo) > largest or abs(hi) > largest:
        raise RuntimeError(f"histc(): the range [{lo}, {hi}] cannot be converted to {input.dtype} without overflow")
    if out is not None:
        if not isinstance(out, Tensor):
            raise TypeError(f"histc(): argument 'out' must be Tensor, not {type(out).__name__}")
        if out.dtype != input.dtype:
            raise RuntimeError(f"histc(): input tensor and out tensor should have the same dtype, but got "
                               f"input {input.dtype} and out {out.dtype}")
    dtype = input.dtype.type
    left, right, count = dtype(lo), dtype(hi), dtype(bins)
    with np.errstate(over="ignore", invalid="ignore"):
        width = right - left
        flat = data.reshape(-1)
        # A width that overflows makes PyTorch's bin edges NaN, and then no element is counted.
        inside = flat[(flat >= left) & (flat <= right)] if np.isfinite(width) else flat[:0]
        position = xp.floor((inside - left) * count / width).astype(np.int64)
    position = xp.minimum(position, bins - 1)  # an element equal to max goes in the last bin
    counts = xp.bincount(position, minlength=bins).astype(input.dtype)
    return write_out(_const(xp, counts), out, "histc")


# the ops of this module, for minigrad.ops.REGISTRY (aminmax reuses math_forms' AMax, registered as "amax")
OPS = {
    "nanmedian_all": NanMedianAll,
}
