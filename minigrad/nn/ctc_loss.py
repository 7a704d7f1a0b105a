"""The connectionist temporal classification loss: ``ctc_loss`` and ``CTCLoss``, as in PyTorch.

CTC scores an unsegmented label sequence (a transcript) against per-frame
class log-probabilities by summing over every alignment of the labels to the
frames (``minigrad.ops.ctc`` has the recursion and its gradient). This file
checks the arguments the way PyTorch does, brings the targets to one padded
layout, and applies the reduction:

* ``'none'``: one loss per sequence, ``(N,)`` (``()`` for an unbatched input);
* ``'sum'``: their sum;
* ``'mean'``: each loss divided by its target length (at least 1), then the
  mean over the batch.

Errors have PyTorch's classes: TypeError for arguments of the wrong kind,
ValueError for an unknown reduction, NotImplementedError for a log_probs dtype
other than float32/float64, IndexError for a 0-d log_probs, RuntimeError for
shapes, lengths and a blank out of range.
"""

from __future__ import annotations

import operator
import warnings

import numpy as np

from minigrad import backend
from minigrad._checks import is_int
from minigrad.nn.loss_base import _Loss
from minigrad.nn.loss_utils import check_reduction, expect_tensor
from minigrad.ops.ctc import CtcLoss
from minigrad.tensor import Tensor

__all__ = ["ctc_loss", "CTCLoss"]

_FN = "ctc_loss"


def _expect_blank(blank) -> int:
    """``blank`` as an int (Python, NumPy or a 0-d integer Tensor, as PyTorch takes); TypeError otherwise."""
    refused = isinstance(blank, (bool, np.bool_)) or (isinstance(blank, Tensor) and blank.dtype.kind == "b")
    try:
        if not refused:
            return operator.index(blank)
    except TypeError:
        pass
    raise TypeError(f"{_FN}(): argument 'blank' must be int, not {type(blank).__name__}")


def _expect_zero_infinity(zero_infinity) -> bool:
    """``zero_infinity`` if it is a Python bool (PyTorch refuses ints and NumPy bools too); TypeError otherwise."""
    if not isinstance(zero_infinity, bool):
        raise TypeError(f"{_FN}(): argument 'zero_infinity' must be bool, not {type(zero_infinity).__name__}")
    return zero_infinity


def _length_item(value, name: str) -> int:
    """One element of a lengths list: an int, or a 0-d integer Tensor."""
    if is_int(value):
        return int(value)
    if isinstance(value, Tensor) and value.ndim == 0 and value.dtype.kind in "iu":
        return int(value.item())
    raise TypeError(f"{_FN}(): argument '{name}' must be a tuple of ints or a Tensor, but found an element of "
                    f"type {type(value).__name__}")


def _lengths(input_lengths, target_lengths) -> tuple:
    """Both lengths as 1-D int64 NumPy arrays: both Tensors of an integer dtype, or both tuples/lists of ints.

    Raises:
        TypeError: a length argument is neither, or one is a Tensor and the other a sequence (as in PyTorch).
        RuntimeError: a lengths Tensor is not of an integer dtype.
    """
    named = (("input_lengths", input_lengths), ("target_lengths", target_lengths))
    if all(isinstance(v, Tensor) for _, v in named):
        for name, v in named:
            if v.dtype.kind not in "iu":
                raise RuntimeError(f"{_FN}(): {name} must be integral, got a tensor of dtype {v.dtype}; convert "
                                   "it with .long()")
        return tuple(backend.to_numpy(v.array).reshape(-1).astype(np.int64) for _, v in named)
    if all(isinstance(v, (tuple, list)) for _, v in named):
        return tuple(np.array([_length_item(x, name) for x in v], dtype=np.int64).reshape(-1) for name, v in named)
    kinds = ", ".join(f"{name} of type {type(v).__name__}" for name, v in named)
    raise TypeError(f"{_FN}(): input_lengths and target_lengths must both be Tensors or both tuples of ints, got "
                    f"{kinds}")


def _target_labels(targets: Tensor) -> np.ndarray:
    """The targets as int64 on the host, converted as PyTorch converts them (``.long()``: floats truncated)."""
    data = backend.to_numpy(targets.array)
    if data.dtype.kind == "c":
        warnings.warn(f"{_FN}(): casting complex targets to integers discards the imaginary part", UserWarning,
                      stacklevel=4)
        data = data.real
    with np.errstate(invalid="ignore", over="ignore"):
        return data.astype(np.int64)


def _padded_targets(labels: np.ndarray, target_lengths: np.ndarray, batch: int) -> np.ndarray:
    """``(N, max target length)`` labels from the padded ``(N, S)`` or the concatenated 1-D layout.

    Raises:
        RuntimeError: a negative target length, a targets tensor whose size
            does not fit the lengths (``N`` rows of at least the longest
            target, or exactly their sum when concatenated).
    """
    if (target_lengths < 0).any():
        bad = int(target_lengths[target_lengths < 0][0])
        raise RuntimeError(f"{_FN}(): target_lengths must be at least 0, but got value {bad}")
    longest = int(target_lengths.max()) if batch else 0
    positions = np.arange(longest)
    inside = positions < target_lengths[:, None]  # (N, longest): the real labels
    if labels.ndim == 1:
        total = int(target_lengths.sum())
        if labels.shape[0] != total:
            raise RuntimeError(f"{_FN}(): concatenated targets must hold sum(target_lengths) = {total} labels, "
                               f"got {labels.shape[0]}")
        starts = np.cumsum(target_lengths) - target_lengths
        return np.where(inside, labels[np.where(inside, starts[:, None] + positions, 0)] if total else 0, 0)
    if labels.shape[0] != batch:
        raise RuntimeError(f"{_FN}(): padded targets of shape {tuple(labels.shape)} need one row per sequence "
                           f"({batch})")
    if labels.shape[1] < longest:
        raise RuntimeError(f"{_FN}(): padded targets of shape {tuple(labels.shape)} are shorter than the longest "
                           f"target length {longest}")
    return np.where(inside, labels[:, :longest], 0)


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean",
             zero_infinity=False):
    """The connectionist temporal classification loss of target sequences given per-frame log-probabilities.

    For each sequence, the negative log of the total probability of all
    alignments of its target labels to its first ``input_lengths[n]`` frames
    (labels in order, each held one or more frames, blanks between and
    around them, a blank required between two equal labels in a row).
    Differentiable in ``log_probs`` with PyTorch's gradient, which assumes
    ``log_probs`` comes from ``log_softmax`` (see ``minigrad.ops.ctc``);
    frames past a sequence's input length get a zero gradient.

    Args:
        log_probs: ``(T, N, C)``, or ``(T, C)`` for one sequence: frames,
            batch, classes (blank included), float32 or float64.
        targets: padded ``(N, S)`` (row ``n`` holds ``target_lengths[n]``
            labels, the rest is ignored) or the concatenation of all targets,
            1-D of ``sum(target_lengths)`` labels. Any numeric dtype (converted
            like PyTorch's ``.long()``); labels in ``[0, C)``, normally not
            the blank.
        input_lengths: ``(N,)`` frames used per sequence, each in ``[0, T]``:
            an integer Tensor, or a tuple/list of ints (then
            ``target_lengths`` too). One element for an unbatched input.
        target_lengths: ``(N,)`` labels per sequence, each ``>= 0`` (and
            ``<= S`` for padded targets).
        blank: the blank's class index, in ``[0, C)``. Default 0.
        reduction: 'mean' (default: each loss over its target length, at
            least 1, then averaged), 'sum' or 'none'.
        zero_infinity: make infinite losses (input too short for its target)
            0, with a zero gradient. Otherwise they are inf with NaN gradients.

    Returns:
        A scalar, or with ``reduction='none'`` the ``(N,)`` losses (``()``
        for an unbatched input), of ``log_probs``'s dtype.

    Raises:
        TypeError: ``log_probs``/``targets`` are not Tensors, the lengths are
            neither both Tensors nor both tuples of ints, ``blank`` is not an
            int or ``zero_infinity`` not a bool.
        ValueError: an unknown reduction.
        NotImplementedError: ``log_probs`` is not float32/float64.
        IndexError: ``log_probs`` is 0-d.
        RuntimeError: lengths Tensors of a non-integer dtype; an empty
            ``log_probs`` or one not 2-D/3-D; targets not 1-D/2-D or of a size
            that does not fit the lengths; ``blank`` outside ``[0, C)``;
            lengths not of size N or out of range; a label (within its target
            length) outside ``[0, C)`` (PyTorch reads out of bounds there).
    """
    check_reduction(_FN, reduction)
    expect_tensor(_FN, "log_probs", log_probs)
    expect_tensor(_FN, "targets", targets)
    blank = _expect_blank(blank)
    zero_infinity = _expect_zero_infinity(zero_infinity)
    input_lengths, target_lengths = _lengths(input_lengths, target_lengths)
    if log_probs.numel() == 0:
        raise RuntimeError(f"{_FN}(): log_probs tensor must not be empty, got shape {tuple(log_probs.shape)}")
    if log_probs.ndim == 0:
        raise IndexError(f"{_FN}(): log_probs must be (T, N, C) or (T, C), got a 0-d tensor")
    if log_probs.dtype not in (np.float32, np.float64):
        raise NotImplementedError(f"{_FN}(): not implemented for log_probs of dtype {log_probs.dtype} "
                                  "(float32 or float64 only)")
    batched = log_probs.ndim == 3
    if log_probs.ndim not in (2, 3):
        raise RuntimeError(f"{_FN}(): log_probs must be (T, N, C) or (T, C), got shape {tuple(log_probs.shape)}")
    if targets.ndim not in (1, 2):
        raise RuntimeError(f"{_FN}(): targets must be (N, S) or 1-D concatenated, got shape {tuple(targets.shape)}")
    steps, classes = log_probs.shape[0], log_probs.shape[-1]
    batch = log_probs.shape[1] if batched else 1
    if not 0 <= blank < classes:
        raise RuntimeError(f"{_FN}(): blank must be in label range [0, {classes}), got {blank}")
    for name, lengths in (("input_lengths", input_lengths), ("target_lengths", target_lengths)):
        if lengths.shape[0] != batch:
            raise RuntimeError(f"{_FN}(): {name} must be of size batch_size ({batch}), got {lengths.shape[0]} "
                               "element(s)")
    padded = _padded_targets(_target_labels(targets), target_lengths, batch)
    if ((input_lengths < 0) | (input_lengths > steps)).any():
        bad = int(input_lengths[(input_lengths < 0) | (input_lengths > steps)][0])
        raise RuntimeError(f"{_FN}(): input_lengths must be in [0, {steps}] (the number of frames), got value {bad}")
    inside = np.arange(padded.shape[1]) < target_lengths[:, None]
    out_of_range = inside & ((padded < 0) | (padded >= classes))
    if out_of_range.any():
        raise RuntimeError(f"{_FN}(): target label {int(padded[out_of_range][0])} is out of range for {classes} "
                           "classes (labels must be in [0, C))")
    padded = np.where(inside, padded, blank)
    node = CtcLoss(padded, input_lengths, target_lengths, blank, zero_infinity)
    losses = node(log_probs if batched else log_probs.unsqueeze(1))
    if reduction == "mean":
        divisors = backend.as_array(np.maximum(target_lengths, 1), log_probs.dtype, backend.device_of(log_probs.array))
        return (losses / Tensor._make(divisors, False, None, 0)).mean()
    if reduction == "sum":
        return losses.sum()
    return losses if batched else losses.squeeze(0)


class CTCLoss(_Loss):
    """The connectionist temporal classification loss as a module (see ``ctc_loss``).

    Args:
        blank: the blank's class index. Default 0.
        reduction: 'mean' (default), 'sum' or 'none'.
        zero_infinity: zero the infinite losses and their gradients. Default False.

    Shapes: ``forward(log_probs, targets, input_lengths, target_lengths)``
    with log_probs ``(T, N, C)`` or ``(T, C)``, targets ``(N, S)`` or
    concatenated, lengths ``(N,)`` Tensors or tuples of ints; a scalar unless
    ``reduction='none'`` (then ``(N,)``, or ``()`` unbatched).

    Raises:
        ValueError: an unknown reduction (here, when the module is built).
        TypeError: ``blank`` is not an int or ``zero_infinity`` not a bool
            (here; PyTorch raises the same class at the first call).
    """

    def __init__(self, blank: int = 0, reduction: str = "mean", zero_infinity: bool = False):
        super().__init__(reduction=reduction)
        self.blank = _expect_blank(blank)
        self.zero_infinity = _expect_zero_infinity(zero_infinity)

    def forward(self, log_probs, targets, input_lengths, target_lengths):
        """The loss of ``targets`` given ``log_probs``, reduced as the module's ``reduction`` says."""
        return ctc_loss(log_probs, targets, input_lengths, target_lengths, self.blank, self.reduction,
                        self.zero_infinity)
