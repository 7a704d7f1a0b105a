# ruff: noqa: N803  (error cases take the library module as ``L``: torch or minigrad)
"""``ctc_loss`` and ``CTCLoss`` (``minigrad.nn.ctc_loss``) against PyTorch.

Losses and gradients in log_probs are compared with PyTorch's on drawn
batches (repeated labels, any blank index, input lengths too short for their
targets, both target layouts, lengths as Tensors or tuples, float32 and
float64, normalized and arbitrary log_probs), on unbatched inputs and on
edge cases; the gradient through a ``log_softmax`` is checked by finite
differences; bad arguments raise PyTorch's exception classes.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as TF
from hypothesis import given, settings
from hypothesis import strategies as st

import minigrad as mg
from minigrad.nn import ctc_loss as ctc_module
from minigrad.nn.ctc_loss import CTCLoss, ctc_loss
from tests.error_classes import assert_same_class_as_torch

FEW = settings(max_examples=60, deadline=None, derandomize=True)
REDUCTIONS = ("none", "sum", "mean")


def fn(L, name):
    """PyTorch's ``F.<name>``/``nn.<name>`` for torch, this module's for minigrad (until the names are wired)."""
    if L is torch:
        return getattr(torch.nn, name) if name[0].isupper() else getattr(TF, name)
    return getattr(ctc_module, name)


def log_softmax(a, axis=-1):
    return a - np.log(np.exp(a - a.max(axis, keepdims=True)).sum(axis, keepdims=True)) - a.max(axis, keepdims=True)


def lib_value(value, L):
    """A NumPy array as a tensor of ``L`` (other values as they are)."""
    return L.tensor(value) if isinstance(value, np.ndarray) else value


def compare(log_probs, targets, input_lengths, target_lengths, dtype=np.float64, seed=0, **kwargs):
    """The loss and its gradient in log_probs (for a random upstream gradient) equal PyTorch's; returns the loss."""
    x = mg.tensor(log_probs.astype(dtype), requires_grad=True)
    tx = torch.tensor(log_probs.astype(dtype), requires_grad=True)
    out = ctc_loss(x, lib_value(targets, mg), lib_value(input_lengths, mg), lib_value(target_lengths, mg), **kwargs)
    expected = TF.ctc_loss(tx, lib_value(targets, torch), lib_value(input_lengths, torch),
                           lib_value(target_lengths, torch), **kwargs)
    rtol, atol = (1e-10, 1e-12) if dtype == np.float64 else (2e-5, 2e-5)
    assert out.dtype == np.dtype(dtype) and tuple(out.shape) == tuple(expected.shape)
    np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), rtol=rtol, atol=atol)
    upstream = np.random.default_rng(seed).standard_normal(tuple(expected.shape)).astype(dtype)
    out.backward(mg.tensor(upstream))
    expected.backward(torch.tensor(upstream))
    assert x.grad.dtype == np.dtype(dtype)
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=rtol, atol=atol * 10)
    return out


@st.composite
def batches(draw, normalized=True):
    """A random batch: log_probs (T, N, C), padded targets, input and target lengths, blank."""
    steps, batch, classes = draw(st.integers(1, 8)), draw(st.integers(1, 4)), draw(st.integers(2, 5))
    blank = draw(st.integers(0, classes - 1))
    longest = draw(st.integers(0, 5))
    labels = [c for c in range(classes) if c != blank]
    target_lengths = np.array([draw(st.integers(0, longest)) for _ in range(batch)], dtype=np.int64)
    # Few classes: repeated labels in a row are common; padding past a target's length is -1 (ignored).
    targets = np.array([[draw(st.sampled_from(labels)) if j < n else -1 for j in range(longest)]
                        for n in target_lengths], dtype=np.int64).reshape(batch, longest)
    input_lengths = np.array([draw(st.integers(0, steps)) for _ in range(batch)], dtype=np.int64)
    seed = draw(st.integers(0, 2**16))
    log_probs = np.random.default_rng(seed).normal(0, 2, (steps, batch, classes))
    return (log_softmax(log_probs) if normalized else log_probs), targets, input_lengths, target_lengths, blank


def concatenated(targets, target_lengths):
    return np.concatenate([row[:n] for row, n in zip(targets, target_lengths)]).astype(np.int64)


@FEW
@given(batch=batches(), reduction=st.sampled_from(REDUCTIONS), zero_infinity=st.booleans(),
       layout=st.sampled_from(["padded", "concatenated"]), as_tuples=st.booleans(),
       dtype=st.sampled_from([np.float64, np.float32]))
def test_matches_torch_on_random_batches(batch, reduction, zero_infinity, layout, as_tuples, dtype):
    log_probs, targets, input_lengths, target_lengths, blank = batch
    if layout == "concatenated":
        targets = concatenated(targets, target_lengths)
    lengths = (tuple(input_lengths.tolist()), list(target_lengths.tolist())) if as_tuples else (
        input_lengths, target_lengths)
    compare(log_probs, targets, *lengths, dtype=dtype, blank=blank, reduction=reduction,
            zero_infinity=zero_infinity)


@settings(max_examples=15, deadline=None, derandomize=True)
@given(batch=batches(normalized=False), reduction=st.sampled_from(REDUCTIONS))
def test_gradient_of_arbitrary_log_probs_is_torchs(batch, reduction):
    """Not log_softmax outputs: PyTorch's gradient is exp(log_probs) - occupancy, not the derivative."""
    log_probs, targets, input_lengths, target_lengths, blank = batch
    compare(log_probs, targets, input_lengths, target_lengths, blank=blank, reduction=reduction)


def test_gradient_differs_from_the_derivative_without_log_softmax():
    log_probs = np.random.default_rng(3).normal(size=(4, 1, 3))
    x = mg.tensor(log_probs, requires_grad=True)
    ctc_loss(x, mg.tensor([[1, 2]]), (4,), (2,), reduction="sum").backward()
    eps, derivative = 1e-6, np.zeros_like(log_probs)
    for index in np.ndindex(log_probs.shape):
        up, down = log_probs.copy(), log_probs.copy()
        up[index] += eps
        down[index] -= eps
        values = [float(ctc_loss(mg.tensor(v), mg.tensor([[1, 2]]), (4,), (2,), reduction="sum").item())
                  for v in (up, down)]
        derivative[index] = (values[0] - values[1]) / (2 * eps)
    np.testing.assert_allclose(x.grad.numpy() - np.exp(log_probs), derivative, atol=1e-6)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_gradcheck_through_log_softmax(reduction):
    """Behind a log_softmax, PyTorch's gradient is the exact derivative: finite differences agree."""
    logits = mg.tensor(np.random.default_rng(1).normal(size=(6, 3, 4)), requires_grad=True)
    targets = mg.tensor([[1, 1, 2], [3, 0, 0], [2, 3, 2]])

    def loss(x):
        return ctc_loss(x.log_softmax(2), targets, mg.tensor([6, 4, 5]), mg.tensor([3, 1, 3]), reduction=reduction)

    assert mg.autograd.gradcheck(loss, (logits,))


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("lengths", ["tensor0d", "tensor1", "tuple"])
@pytest.mark.parametrize("layout", ["concatenated", "padded"])
def test_unbatched_input(reduction, lengths, layout):
    log_probs = log_softmax(np.random.default_rng(2).normal(size=(7, 5)))
    targets = np.array([1, 3, 3, 4]) if layout == "concatenated" else np.array([[1, 3, 3, 4, 2]])
    il, tl = {"tensor0d": (np.array(6), np.array(4)), "tensor1": (np.array([6]), np.array([4])),
              "tuple": ((6,), (4,))}[lengths]
    out = compare(log_probs, targets, il, tl, reduction=reduction)
    assert out.shape == ()


def test_blank_inside_targets_gets_torchs_gradient():
    """A label equal to the blank (invalid, but accepted): PyTorch's CPU sums at the last frame, reproduced."""
    log_probs = log_softmax(np.random.default_rng(4).normal(size=(9, 3, 4)))
    targets = np.array([[1, 2, 2, 3], [3, 3, 3, 0], [3, 1, 1, 0]])
    for blank in (3, 1):
        compare(log_probs, targets, np.array([9, 8, 9]), np.array([4, 3, 3]), blank=blank, reduction="none")


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("zero_infinity", [False, True])
def test_impossible_alignments(reduction, zero_infinity):
    """Too few frames (a repeated label needs a blank between): inf and NaN gradients, or 0 with zero_infinity."""
    log_probs = log_softmax(np.random.default_rng(5).normal(size=(5, 3, 4)))
    targets = np.array([[1, 1, 2], [1, 2, 3], [2, 2, 2]])
    out = compare(log_probs, targets, np.array([3, 5, 4]), np.array([3, 3, 3]), reduction=reduction,
                  zero_infinity=zero_infinity)
    assert np.isfinite(out.detach().numpy()).all() == zero_infinity


def test_empty_inputs_and_targets():
    log_probs = log_softmax(np.random.default_rng(6).normal(size=(4, 4, 3)))
    targets = np.array([[1, 2], [0, 0], [2, 0], [1, 1]])
    for reduction in REDUCTIONS:
        compare(log_probs, targets, np.array([0, 0, 4, 3]), np.array([0, 2, 0, 2]), reduction=reduction,
                zero_infinity=reduction == "sum")
    compare(log_probs, np.zeros((4, 0), dtype=np.int64), np.array([4, 1, 2, 0]), np.zeros(4, dtype=np.int64))
    compare(log_probs, np.zeros(0, dtype=np.int64), (4, 1, 2, 3), (0, 0, 0, 0), reduction="none")


def test_tiny_probabilities_keep_each_class_exact():
    """Each class's sum of alpha * beta is shifted by its own maximum, as PyTorch's running log-add is.

    Sequence 0 (target [1], two frames) has three alignments: (1, 1) of
    probability e^-1600 and (1, blank), (blank, 1) of e^-800 each. At frame 0
    label 1 and the blank are then equally likely (occupancy 1/2 each), yet
    alpha * beta is e^-1600 for label 1 and e^-800 for the blank: shifted by
    the blank's term, label 1's would underflow to 0 and lose its gradient.
    """
    log_probs = log_softmax(np.random.default_rng(7).normal(size=(2, 2, 3)))
    log_probs[:, 0] = log_softmax(np.array([[0.0, -800.0, -5.0], [0.0, -800.0, -5.0]]))
    out = compare(log_probs, np.array([[1, 2], [2, 1]]), np.array([2, 2]), np.array([1, 2]), reduction="sum")
    assert out.item() > 800  # about 800 - log 2 for sequence 0, plus sequence 1
    x = mg.tensor(log_probs, requires_grad=True)
    ctc_loss(x, mg.tensor([[1, 2], [2, 1]]), (2, 2), (1, 2), reduction="sum").backward()
    np.testing.assert_allclose(x.grad.numpy()[0, 0, 1], -0.5, rtol=1e-6)


@pytest.mark.parametrize("dtype", [np.int32, np.uint8, np.float64, np.float32, np.bool_])
def test_targets_of_other_dtypes_are_converted_as_in_torch(dtype):
    log_probs = log_softmax(np.random.default_rng(8).normal(size=(6, 2, 4)))
    targets = (np.array([[1.7, 3.2, 2.0], [3.0, 1.0, 0.0]]) if dtype != np.bool_ else np.ones((2, 3))).astype(dtype)
    compare(log_probs, targets, np.array([6, 5]), np.array([3, 2]), reduction="none")


@pytest.mark.parametrize("dtype", [np.int32, np.uint8, np.int16])
def test_lengths_of_other_integer_dtypes(dtype):
    log_probs = log_softmax(np.random.default_rng(9).normal(size=(6, 2, 4)))
    compare(log_probs, np.array([[1, 3, 2], [3, 1, 0]]), np.array([6, 5], dtype=dtype), np.array([3, 2], dtype=dtype))


def test_grad_fn_double_backward_and_retain_graph():
    log_probs = log_softmax(np.random.default_rng(10).normal(size=(5, 2, 3)))
    x, tx = mg.tensor(log_probs, requires_grad=True), torch.tensor(log_probs, requires_grad=True)
    args = (np.array([[1, 2], [2, 0]]), np.array([5, 4]), np.array([2, 1]))
    loss = ctc_loss(x, *(mg.tensor(a) for a in args))
    (grad,) = mg.autograd.grad(loss, x, create_graph=True)
    (expected,) = torch.autograd.grad(TF.ctc_loss(tx, *(torch.tensor(a) for a in args)), tx, create_graph=True)
    np.testing.assert_allclose(grad.detach().numpy(), expected.detach().numpy(), rtol=1e-10)
    assert grad.requires_grad and expected.requires_grad
    with pytest.raises(RuntimeError):
        expected.sum().backward()
    with pytest.raises(RuntimeError, match="not differentiable"):
        grad.sum().backward()
    x.grad = None
    again = ctc_loss(x, *(mg.tensor(a) for a in args), reduction="sum")
    again.backward(retain_graph=True)
    first = x.grad.numpy().copy()
    again.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * first, rtol=1e-12)
    with pytest.raises(RuntimeError, match="second time"):
        again.backward()


def test_no_graph_without_grad_and_modified_input_is_detected():
    x = mg.tensor(log_softmax(np.random.default_rng(11).normal(size=(4, 1, 3))))
    assert not ctc_loss(x, mg.tensor([[1]]), (4,), (1,)).requires_grad
    y = mg.tensor(x.numpy(), requires_grad=True)
    z = y * 1.0
    loss = ctc_loss(z, mg.tensor([[1]]), (4,), (1,))
    z.add_(1.0)
    with pytest.raises(RuntimeError):
        loss.backward()


def test_module_matches_functional_and_torch():
    log_probs = log_softmax(np.random.default_rng(12).normal(size=(6, 3, 5)))
    args = (np.array([[1, 4, 4], [2, 0, 0], [3, 3, 1]]), np.array([6, 2, 5]), np.array([3, 1, 3]))
    for kwargs in ({}, {"blank": 4, "reduction": "sum"}, {"reduction": "none", "zero_infinity": True}):
        module, expected_module = CTCLoss(**kwargs), torch.nn.CTCLoss(**kwargs)
        assert (module.blank, module.reduction, module.zero_infinity) == (
            expected_module.blank, expected_module.reduction, expected_module.zero_infinity)
        x = mg.tensor(log_probs, requires_grad=True)
        tx = torch.tensor(log_probs, requires_grad=True)
        out = module(x, *(mg.tensor(a) for a in args))
        expected = expected_module(tx, *(torch.tensor(a) for a in args))
        np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), rtol=1e-10)
        out.sum().backward()
        expected.sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-10, atol=1e-12)
    assert repr(CTCLoss()) == "CTCLoss()"
    assert not list(CTCLoss().parameters())


def test_out_of_range_labels_raise():
    """PyTorch reads out of bounds for such a label; minigrad refuses it (labels past a target's length are ignored)."""
    x = mg.tensor(log_softmax(np.random.default_rng(13).normal(size=(5, 2, 3))))
    for bad in (3, -1):
        with pytest.raises(RuntimeError, match="out of range"):
            ctc_loss(x, mg.tensor([[1, bad], [2, 1]]), (5, 5), (2, 2))
    ctc_loss(x, mg.tensor([[1, 7], [2, -1]]), (5, 5), (1, 1))


# -- bad arguments: PyTorch's exception classes ------------------------------------------------------------------


def _good(L, dtype=None):
    """Valid arguments in library ``L``: log_probs (5, 2, 4), padded targets, lengths."""
    log_probs = L.tensor(log_softmax(np.random.default_rng(14).normal(size=(5, 2, 4))))
    return log_probs, L.tensor([[1, 2, 2], [3, 1, 0]]), L.tensor([5, 4]), L.tensor([3, 2])


def _with(L, **changes):
    """``F.ctc_loss`` on the valid arguments with some replaced (callables get ``L``)."""
    log_probs, targets, input_lengths, target_lengths = _good(L)
    kwargs = dict(log_probs=log_probs, targets=targets, input_lengths=input_lengths, target_lengths=target_lengths)
    kwargs.update({k: v(L) if callable(v) else v for k, v in changes.items()})
    return fn(L, "ctc_loss")(**kwargs)


ERROR_CASES = {
    "log_probs_not_tensor": lambda L: _with(L, log_probs=[[[0.0]]]),
    "targets_not_tensor": lambda L: _with(L, targets=[[1, 2]]),
    "lengths_plain_int": lambda L: _with(L, input_lengths=5),
    "lengths_mixed_kinds": lambda L: _with(L, input_lengths=(5, 4)),
    "lengths_tuple_of_floats": lambda L: _with(L, input_lengths=(5.0, 4.0), target_lengths=(3, 2)),
    "lengths_tuple_of_bools": lambda L: _with(L, input_lengths=(True, True), target_lengths=(3, 2)),
    "lengths_none": lambda L: _with(L, target_lengths=None),
    "float_input_lengths": lambda L: _with(L, input_lengths=lambda L: L.tensor([5.0, 4.0])),
    "bool_target_lengths": lambda L: _with(L, target_lengths=lambda L: L.tensor([True, True])),
    "blank_float": lambda L: _with(L, blank=1.0),
    "blank_bool": lambda L: _with(L, blank=True),
    "blank_negative": lambda L: _with(L, blank=-1),
    "blank_too_large": lambda L: _with(L, blank=4),
    "zero_infinity_int": lambda L: _with(L, zero_infinity=1),
    "zero_infinity_str": lambda L: _with(L, zero_infinity="yes"),
    "bad_reduction": lambda L: _with(L, reduction="avg"),
    "reduction_none_value": lambda L: _with(L, reduction=None),
    "integer_log_probs": lambda L: _with(L, log_probs=lambda L: L.zeros(5, 2, 4, dtype=L.int64)),
    "bool_log_probs": lambda L: _with(L, log_probs=lambda L: L.zeros(5, 2, 4, dtype=L.bool)),
    "float16_log_probs": lambda L: _with(L, log_probs=lambda L: L.zeros(5, 2, 4, dtype=L.float16)),
    "empty_log_probs": lambda L: _with(L, log_probs=lambda L: L.zeros(0, 2, 4)),
    "empty_classes": lambda L: _with(L, log_probs=lambda L: L.zeros(5, 2, 0)),
    "scalar_log_probs": lambda L: _with(L, log_probs=lambda L: L.tensor(0.5)),
    "1d_log_probs": lambda L: _with(L, log_probs=lambda L: L.zeros(4)),
    "4d_log_probs": lambda L: _with(L, log_probs=lambda L: L.zeros(5, 2, 4, 1)),
    "3d_targets": lambda L: _with(L, targets=lambda L: L.ones(2, 3, 1, dtype=L.int64)),
    "0d_targets": lambda L: _with(L, targets=lambda L: L.tensor(1)),
    "targets_wrong_rows": lambda L: _with(L, targets=lambda L: L.tensor([[1, 2, 2]])),
    "targets_too_short": lambda L: _with(L, target_lengths=lambda L: L.tensor([4, 2])),
    "concatenated_wrong_sum": lambda L: _with(L, targets=lambda L: L.tensor([1, 2, 2, 3])),
    "input_lengths_too_long": lambda L: _with(L, input_lengths=lambda L: L.tensor([6, 4])),
    "input_lengths_negative": lambda L: _with(L, input_lengths=lambda L: L.tensor([-1, 4])),
    "target_lengths_negative": lambda L: _with(L, target_lengths=lambda L: L.tensor([-1, 2])),
    "input_lengths_wrong_size": lambda L: _with(L, input_lengths=lambda L: L.tensor([5, 4, 3])),
    "target_lengths_wrong_size": lambda L: _with(L, target_lengths=lambda L: L.tensor([3])),
    "lengths_tuple_wrong_size": lambda L: _with(L, input_lengths=(5,), target_lengths=(3,)),
    "unbatched_two_lengths": lambda L: _with(L, log_probs=lambda L: L.zeros(5, 4)),
    "unbatched_plain_ints": lambda L: _with(L, log_probs=lambda L: L.zeros(5, 4), targets=lambda L: L.tensor([1]),
                                            input_lengths=5, target_lengths=1),
    "unbatched_concatenated_size": lambda L: _with(L, log_probs=lambda L: L.zeros(5, 4),
                                                   targets=lambda L: L.tensor([1, 2, 3]),
                                                   input_lengths=lambda L: L.tensor(5),
                                                   target_lengths=lambda L: L.tensor(2)),
    "module_bad_blank_at_call": lambda L: fn(L, "CTCLoss")(blank=9)(*_good(L)),
    "module_bad_reduction": lambda L: fn(L, "CTCLoss")(reduction="avg")(*_good(L)),
    "module_float_blank": lambda L: fn(L, "CTCLoss")(blank=1.5)(*_good(L)),
    "module_str_zero_infinity": lambda L: fn(L, "CTCLoss")(zero_infinity="a")(*_good(L)),
}


@pytest.mark.parametrize("name", sorted(ERROR_CASES))
def test_error_classes_match_torch(name):
    assert_same_class_as_torch(name, ERROR_CASES[name])


def test_accepted_argument_forms_match_torch():
    """Forms PyTorch takes: NumPy ints and 0-d tensors as blank and lengths, a lengths list of 0-d tensors."""
    log_probs = log_softmax(np.random.default_rng(15).normal(size=(5, 2, 4)))
    targets = np.array([[1, 2, 2], [3, 1, 0]])
    compare(log_probs, targets, (np.int64(5), 4), [3, np.int32(2)], blank=np.int64(3), reduction="none")
    x = mg.tensor(log_probs, requires_grad=True)
    out = ctc_loss(x, mg.tensor(targets), [mg.tensor(5), mg.tensor(4)], (3, 2), blank=mg.tensor(3))
    expected = TF.ctc_loss(torch.tensor(log_probs), torch.tensor(targets), [torch.tensor(5), torch.tensor(4)],
                           (3, 2), blank=torch.tensor(3))
    np.testing.assert_allclose(out.item(), expected.item(), rtol=1e-12)
