"""Margin losses over class scores: multi-class hinge, multi-label hinge and multi-label logistic,
as functions and as modules.

Names, defaults, results and error types mirror PyTorch's
``F.multi_margin_loss``, ``F.multilabel_margin_loss``,
``F.multilabel_soft_margin_loss`` and ``nn.MultiMarginLoss``,
``nn.MultiLabelMarginLoss``, ``nn.MultiLabelSoftMarginLoss``. The arguments
after PyTorch's deprecated ``size_average``/``reduce`` are keyword-only here.

Each is a composition of registered ops. The hinge losses count a term only
where its margin violation z is strictly positive (z > 0), as PyTorch's
kernels do: a term at exactly z = 0, or a NaN score, adds nothing and passes
no gradient. For a row x with classes i (C of them):

    multi_margin:      sum_{i != y} w[y] max(0, margin - x[y] + x[i])^p / C
    multilabel_margin: sum_{j in targets} sum_{i not in targets} max(0, 1 - x[j] + x[i]) / C
    multilabel_soft:   -sum_i w[i] (y[i] log sigmoid(x[i]) + (1 - y[i]) log sigmoid(-x[i])) / C
"""

from __future__ import annotations

import numpy as np

from minigrad import backend
from minigrad.nn.embedding_losses import real_number
from minigrad.nn.loss_base import _Loss
from minigrad.nn.loss_utils import (
    check_reduction,
    expect_no_grad,
    expect_same_device,
    expect_tensor,
    reduce_loss,
)
from minigrad.ops import elementwise
from minigrad.ops.logistic import LogSigmoid
from minigrad.tensor import Tensor

__all__ = ["multi_margin_loss", "multilabel_margin_loss", "multilabel_soft_margin_loss", "MultiMarginLoss",
           "MultiLabelMarginLoss", "MultiLabelSoftMarginLoss"]

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))  # the dtypes PyTorch's CPU kernels are built for


def _constant(array) -> Tensor:
    return Tensor._make(array, False, None, 0)


def _frames(fn: str, input: Tensor) -> tuple[int, int]:  # noqa: A002
    """(rows, classes) of a hinge loss's input: (C,) and 0-d are one row; (N, C) with C > 0 is N rows."""
    if not ((input.ndim == 2 and input.shape[1] != 0) or (input.ndim == 1 and input.shape[0] != 0)
            or input.ndim == 0):
        raise RuntimeError(f"{fn}(): expected a non-empty vector (C,) or matrix (N, C) (N may be 0), "
                           f"got an input of shape {tuple(input.shape)}")
    if input.ndim == 2:
        return input.shape[0], input.shape[1]
    return 1, (input.shape[0] if input.ndim else 1)


def _expect_kernel_dtypes(fn: str, input: Tensor, target: Tensor) -> None:  # noqa: A002
    """PyTorch's NotImplementedError for an input that is not float32/float64, RuntimeError for a non-int64 target."""
    if input.dtype not in _FLOATS:
        raise NotImplementedError(f"{fn}(): not implemented for input of dtype {input.dtype} "
                                  "(float32 or float64 only; convert it with .float())")
    if target.dtype != np.int64:
        raise RuntimeError(f"{fn}(): expected a target of class indices of dtype int64, got {target.dtype} "
                           "(convert it with .long())")


def _row_losses(loss: Tensor, classes: int, keep_rows: bool) -> Tensor:
    """Each row's sum of ``loss`` divided by the number of classes: (N,) if ``keep_rows``, else 0-d."""
    per_row = loss.sum(tuple(range(1, loss.ndim))) / classes
    return per_row if keep_rows else per_row.reshape(())


def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, *, reduction="mean"):  # noqa: A002
    """Multi-class hinge loss: for each row, sum_{i != y} w[y] max(0, margin - x[y] + x[i])^p / C, reduced.

    Args:
        input: (N, C) or (C,) scores (0-d: one class), float32 or float64.
        target: int64 class indices in [0, C): (N,) ((1,) or 0-d for one row).
        p: 1 or 2.
        margin: the margin (any real number).
        weight: optional 1-D (C,) class weights in the input's dtype; the loss of a
            row is scaled by its target's weight. Not differentiable, as in PyTorch.
        reduction: 'mean' (default), 'sum' or 'none' ((N,) for a 1-D target, else 0-d).

    An empty batch (N = 0) gives 0 with 'sum' and NaN with 'mean' (PyTorch
    returns an uninitialized value there).

    Raises:
        TypeError: an argument has the wrong type.
        ValueError: an unknown reduction, p other than 1 or 2, or a weight that is not 1-D.
        NotImplementedError: an input that is not float32/float64 (PyTorch's type).
        RuntimeError: an input of another shape or with no classes, a target of
            another size or dtype or out of range, a weight of another size or
            dtype or that requires grad, or devices that differ.
    """
    fn = "multi_margin_loss"
    check_reduction(fn, reduction)
    if p != 1 and p != 2:
        raise ValueError(f"{fn}(): only p == 1 and p == 2 are supported, got p={p!r}")
    p = 1 if p == 1 else 2
    if weight is not None:
        expect_tensor(fn, "weight", weight)
        if weight.ndim != 1:
            raise ValueError(f"{fn}(): weight must be one-dimensional (C,), got shape {tuple(weight.shape)}")
    expect_tensor(fn, "input", input)
    expect_tensor(fn, "target", target)
    if isinstance(margin, (complex, np.complexfloating)):
        raise RuntimeError(f"{fn}(): margin {margin} cannot be converted to a real number")
    margin = real_number(fn, "margin", margin)
    rows, classes = _frames(fn, input)
    if target.ndim > 1 or target.numel() != rows:
        raise RuntimeError(f"{fn}(): target must be 1-D with one class index per input row: expected "
                           f"({rows},), got shape {tuple(target.shape)} for input of shape {tuple(input.shape)}")
    if weight is not None and weight.numel() != classes:
        raise RuntimeError(f"{fn}(): weight must have one entry per class: expected ({classes},), "
                           f"got shape {tuple(weight.shape)}")
    _expect_kernel_dtypes(fn, input, target)
    expect_same_device(fn, input, "input", target, "target")
    if weight is not None:
        if weight.dtype != input.dtype:
            raise RuntimeError(f"{fn}(): weight of dtype {weight.dtype} must have the input's dtype {input.dtype}")
        expect_same_device(fn, input, "input", weight, "weight")
        expect_no_grad(fn, "weight", weight)
    xp = backend.get_array_module(input.array)
    labels = target.array.reshape(rows, 1)
    if labels.size and bool(((labels < 0) | (labels >= classes)).any()):
        raise RuntimeError(f"{fn}(): target out of range: class indices must be in [0, {classes})")
    x = input.reshape(rows, classes)
    z = (margin - x.gather(1, _constant(labels))) + x
    keep = (z.array > 0) & (xp.arange(classes)[None, :] != labels)
    loss = elementwise.where(keep, z, 0.0)  # masked first: no gradient (not even NaN * 0) where z <= 0
    if p == 2:
        loss = loss * loss
    if weight is not None:
        loss = elementwise.where(keep, loss * _constant(weight.array[labels]), 0.0)
    return reduce_loss(_row_losses(loss, classes, target.ndim > 0), reduction)


def multilabel_margin_loss(input, target, *, reduction="mean"):  # noqa: A002
    """Multi-label hinge loss: for each row, sum over its target classes j and other classes i of
    max(0, 1 - x[j] + x[i]) / C, reduced.

    Each row of ``target`` lists the row's target classes, ended by the first
    -1 (a row without -1 lists C classes; entries after the -1 are ignored,
    but must still be in [-1, C)). A class listed twice counts twice.

    Args:
        input: (N, C) or (C,) scores (0-d: one class), float32 or float64.
        target: int64, the input's shape ((C,) or 0-d for a 0-d input).
        reduction: 'mean' (default), 'sum' or 'none' ((N,) for (N, C), else 0-d).

    Builds an (N, C, C) tensor of the pairs (PyTorch loops over them).
    An empty batch gives 0 with 'sum' and NaN with 'mean'.

    Raises:
        TypeError: an argument is not a Tensor.
        ValueError: an unknown reduction.
        NotImplementedError: an input that is not float32/float64 (PyTorch's type).
        RuntimeError: an input of another shape or with no classes, a target of
            another shape or dtype or out of range, or devices that differ.
    """
    fn = "multilabel_margin_loss"
    check_reduction(fn, reduction)
    expect_tensor(fn, "input", input)
    expect_tensor(fn, "target", target)
    rows, classes = _frames(fn, input)
    fits = (target.ndim <= 1 and target.numel() == classes) if input.ndim <= 1 else \
        (target.ndim == 2 and tuple(target.shape) == (rows, classes))
    if not fits:
        raise RuntimeError(f"{fn}(): target must have the input's shape, got target of shape "
                           f"{tuple(target.shape)} for input of shape {tuple(input.shape)}")
    _expect_kernel_dtypes(fn, input, target)
    expect_same_device(fn, input, "input", target, "target")
    xp = backend.get_array_module(input.array)
    labels = target.array.reshape(rows, classes)
    if labels.size and bool(((labels < -1) | (labels >= classes)).any()):
        raise RuntimeError(f"{fn}(): target is out of range: entries must be class indices in [0, {classes}) "
                           "or -1 (the end of a row's list)")
    listed = xp.cumsum(labels < 0, axis=1) == 0  # entries before the row's first -1
    safe = xp.where(listed, labels, 0)
    is_target = ((safe[:, :, None] == xp.arange(classes)) & listed[:, :, None]).any(axis=1)
    x = input.reshape(rows, classes)
    z = (1 - x.gather(1, _constant(safe))).reshape(rows, classes, 1) + x.reshape(rows, 1, classes)
    keep = listed[:, :, None] & ~is_target[:, None, :] & (z.array > 0)
    return reduce_loss(_row_losses(elementwise.where(keep, z, 0.0), classes, target.ndim == 2), reduction)


def _operand(fn: str, name: str, value):
    """A Tensor or a real number (PyTorch's arithmetic accepts both); TypeError otherwise."""
    if isinstance(value, Tensor) or (isinstance(value, (bool, int, float, np.bool_, np.integer, np.floating))):
        return value
    raise TypeError(f"{fn}(): argument '{name}' must be a Tensor or a number, got {type(value).__name__}")


def multilabel_soft_margin_loss(input, target, weight=None, *, reduction="mean"):  # noqa: A002
    """Multi-label logistic loss: for each row, the mean over classes of the binary cross-entropy of
    sigmoid(input) against the 0/1 ``target``, optionally weighted, reduced.

    loss = -(target log sigmoid(x) + (1 - target) log sigmoid(-x)) * weight,
    summed over the input's last dimension and divided by its size C. The
    target and weight broadcast with the input (as in PyTorch, a weight with
    more dimensions adds them to the result); dtypes promote. Differentiable in
    ``input``, ``target`` and ``weight``.

    Args:
        input: (N, C) or (C,) (any number of leading dimensions) float scores.
        target: 0/1 labels (or probabilities) of the input's shape.
        weight: optional per-class weights, e.g. (C,).
        reduction: 'mean' (default), 'sum' or 'none' (the input's shape without its last dimension).

    Raises:
        TypeError: ``input`` is not a Tensor, ``target`` or ``weight`` is neither
            a Tensor nor a number, or ``reduction`` is not a string.
        ValueError: an unknown reduction.
        NotImplementedError: an integer input (PyTorch's type).
        IndexError: a 0-d input (it has no class dimension).
        RuntimeError: a bool target, shapes that do not broadcast, or devices that differ.
    """
    fn = "multilabel_soft_margin_loss"
    expect_tensor(fn, "input", input)
    target = _operand(fn, "target", target)
    if weight is not None:
        weight = _operand(fn, "weight", weight)
    if input.dtype.kind != "f":
        raise NotImplementedError(f"{fn}(): not implemented for input of dtype {input.dtype} "
                                  "(log_sigmoid needs a floating point input; convert it with .float())")
    for name, other in (("target", target), ("weight", weight)):
        if isinstance(other, Tensor):
            expect_same_device(fn, input, "input", other, name)
    if isinstance(target, Tensor) and target.dtype.kind == "b":
        raise RuntimeError(f"{fn}(): a bool target is not supported (1 - target subtracts a bool tensor); "
                           "convert it with .float()")
    loss = -(target * LogSigmoid()(input) + (1 - target) * LogSigmoid()(-input))
    if weight is not None:
        loss = loss * weight
    if input.ndim == 0:
        raise IndexError(f"{fn}(): the input is 0-d, so it has no class dimension (dimension -1); "
                         "give scores of shape (C,) or (N, C)")
    class_dim, classes = input.ndim - 1, input.shape[-1]
    loss = loss.sum(class_dim) / classes if classes else loss.sum(class_dim) * float("nan")
    if not isinstance(reduction, str):
        raise TypeError(f"{fn}(): reduction must be a string ('none', 'mean' or 'sum'), "
                        f"got {type(reduction).__name__}")
    return reduce_loss(loss, check_reduction(fn, reduction))


# -- modules ---------------------------------------------------------------------------------------


class _WeightedLoss(_Loss):
    """A loss module with an optional ``weight`` Tensor, kept as a buffer (it moves with ``to()``)."""

    def __init__(self, weight=None, *, reduction: str = "mean"):
        super().__init__(reduction=reduction)
        self.register_buffer("weight", weight)


class MultiMarginLoss(_WeightedLoss):
    """Multi-class hinge loss: see ``multi_margin_loss``.

    Args:
        p: 1 (default) or 2. margin: default 1.
        weight: optional 1-D (C,) class weights (a buffer).
        reduction: 'mean' (default), 'sum' or 'none'.

    Raises:
        TypeError: ``weight`` is neither a Tensor nor None.
        ValueError: an unknown reduction, p other than 1 or 2, or a weight that is not 1-D.
    """

    def __init__(self, p: int = 1, margin: float = 1.0, weight=None, *, reduction: str = "mean"):
        super().__init__(weight, reduction=reduction)
        if p != 1 and p != 2:
            raise ValueError(f"MultiMarginLoss: only p == 1 and p == 2 are supported, got p={p!r}")
        if weight is not None and weight.ndim != 1:
            raise ValueError(f"MultiMarginLoss: expected weight to be None or a 1-D tensor, got {weight.ndim}-D")
        self.p = p
        self.margin = margin

    def forward(self, input, target):  # noqa: A002
        """The loss of the scores ``input`` for the class indices ``target``."""
        return multi_margin_loss(input, target, self.p, self.margin, self.weight, reduction=self.reduction)


class MultiLabelMarginLoss(_Loss):
    """Multi-label hinge loss: see ``multilabel_margin_loss``.

    Raises:
        ValueError: an unknown reduction.
    """

    def forward(self, input, target):  # noqa: A002
        """The loss of the scores ``input`` for the -1-ended class lists ``target``."""
        return multilabel_margin_loss(input, target, reduction=self.reduction)


class MultiLabelSoftMarginLoss(_WeightedLoss):
    """Multi-label logistic loss: see ``multilabel_soft_margin_loss``.

    Args:
        weight: optional per-class weights (a buffer).
        reduction: 'mean' (default), 'sum' or 'none'.

    Raises:
        TypeError: ``weight`` is neither a Tensor nor None.
        ValueError: an unknown reduction.
    """

    def forward(self, input, target):  # noqa: A002
        """The loss of the scores ``input`` for the 0/1 labels ``target``."""
        return multilabel_soft_margin_loss(input, target, self.weight, reduction=self.reduction)
