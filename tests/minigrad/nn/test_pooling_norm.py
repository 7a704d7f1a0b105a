"""Pooling, batch normalization, channel dropout, activations, ``Unflatten`` and ``EmbeddingBag`` against PyTorch.

Every module is built twice, with ``minigrad.nn`` and ``torch.nn``, with the
same weights (copied from the torch module through ``load_state_dict``), and
run on the same data: outputs, input and parameter gradients, buffers
(running statistics over several training steps), ``state_dict`` keys,
``repr`` and the exception types of bad calls must agree. The op-level
gradchecks and oracle cases of the pooling and batch-norm ops live in
``tests/minigrad/ops/cases_pooling.py``.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import minigrad as mg
import minigrad.nn.functional as F
from minigrad import backend
from minigrad import nn as mnn

TOL = {"rtol": 1e-10, "atol": 1e-12}
SETTINGS = settings(max_examples=15, deadline=None)


@pytest.fixture(params=("cpu", "cuda"))
def device(request) -> str:
    """The device the test runs on; "cuda" skips when no GPU can be used."""
    if request.param == "cuda" and not backend.cuda_is_available():
        pytest.skip(backend.cuda_unavailable_reason())
    return request.param


def _normal(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def _numpy(t):
    return t.detach().numpy() if isinstance(t, torch.Tensor) else backend.to_numpy(t.detach().array)


def _copy_weights(module, torch_module):
    """Load ``torch_module``'s state (parameters and buffers) into ``module``; return ``module``."""
    module.load_state_dict({k: v.detach().numpy() for k, v in torch_module.state_dict().items()})
    return module


def run_both(module, torch_module, arrays, device="cpu", seed=1, grad_inputs=True):
    """Run both modules on ``arrays``, backward a random upstream gradient, compare everything.

    Returns the two outputs (the first of a pair) for further checks.
    """
    mg_inputs = [mg.tensor(a, device=device, requires_grad=grad_inputs and a.dtype.kind == "f") for a in arrays]
    torch_inputs = [torch.tensor(a, requires_grad=grad_inputs and a.dtype.kind == "f") for a in arrays]
    out, expected = module(*mg_inputs), torch_module(*torch_inputs)
    if isinstance(expected, tuple):
        for mine, theirs in zip(out[1:], expected[1:]):
            np.testing.assert_array_equal(_numpy(mine), _numpy(theirs))
        out, expected = out[0], expected[0]
    np.testing.assert_allclose(_numpy(out), _numpy(expected), **TOL)
    assert out.dtype == np.dtype(str(expected.dtype).removeprefix("torch."))
    if expected.requires_grad:
        upstream = _normal(expected.shape, seed)
        (out * mg.tensor(upstream, dtype=out.dtype, device=device)).sum().backward()
        (expected * torch.tensor(upstream, dtype=expected.dtype)).sum().backward()
        for name, param in torch_module.named_parameters():
            np.testing.assert_allclose(_numpy(module.get_parameter(name).grad), param.grad.numpy(), **TOL,
                                       err_msg=name)
        for x, tx in zip(mg_inputs, torch_inputs):
            if tx.requires_grad:
                np.testing.assert_allclose(_numpy(x.grad), tx.grad.numpy(), **TOL)
    return out, expected


def same_error(mine, theirs):
    """Both calls raise, with the same exception type; returns minigrad's exception."""
    with pytest.raises(Exception) as expected:  # noqa: PT011  (any type: it is compared below)
        theirs()
    with pytest.raises(type(expected.value)) as raised:
        mine()
    return raised.value


# -- pooling ----------------------------------------------------------------------------------------


@st.composite
def max_pool_configs(draw):
    """kernel, stride, padding, dilation, ceil_mode and an input shape PyTorch accepts."""
    kernel = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    dilation = (draw(st.integers(1, 2)), draw(st.integers(1, 2)))
    padding = tuple(draw(st.integers(0, k // 2)) for k in kernel)
    size = tuple(draw(st.integers(max(1, d * (k - 1) + 1 - 2 * p), 7)) for k, d, p in zip(kernel, dilation, padding))
    stride = draw(st.one_of(st.none(), st.tuples(st.integers(1, 3), st.integers(1, 3))))
    shape = (draw(st.integers(1, 2)), draw(st.integers(1, 3))) + size
    return kernel, stride, padding, dilation, draw(st.booleans()), shape


@SETTINGS
@given(config=max_pool_configs())
def test_max_pool2d_module_matches_pytorch_with_indices(config):
    kernel, stride, padding, dilation, ceil_mode, shape = config
    args = {"kernel_size": kernel, "stride": stride, "padding": padding, "dilation": dilation, "ceil_mode": ceil_mode,
            "return_indices": True}
    module, reference = mnn.MaxPool2d(**args), torch.nn.MaxPool2d(**args)
    data = np.round(_normal(shape), 1)  # rounded: ties, whose gradient goes to the first maximum
    with torch.no_grad():
        # A dilated window wholly in the padding gives -inf; PyTorch then sends its gradient to an unrelated
        # element, minigrad sends none (test_max_pool2d_window_in_padding_gets_no_gradient).
        assume(not torch.isinf(reference(torch.tensor(data))[0]).any())
    run_both(module, reference, [data])
    assert repr(module) == repr(reference)


def test_max_pool2d_window_in_padding_gets_no_gradient():
    x = mg.tensor([[[[0.1]], [[-0.1]]]], requires_grad=True)
    out, _ = mnn.MaxPool2d((2, 1), padding=(1, 0), dilation=(2, 1), return_indices=True)(x)
    assert np.isneginf(out.array).all()
    out.sum().backward()
    np.testing.assert_array_equal(x.grad.array, np.zeros((1, 2, 1, 1)))


@SETTINGS
@given(config=max_pool_configs(), count_include_pad=st.booleans(), override=st.sampled_from([None, 1, 2, -3]))
def test_avg_pool2d_module_matches_pytorch(config, count_include_pad, override):
    kernel, stride, _, _, ceil_mode, shape = config
    padding = tuple(min(p, k // 2) for p, k in zip(config[2], kernel))
    args = {"kernel_size": kernel, "stride": stride, "padding": padding, "ceil_mode": ceil_mode,
            "count_include_pad": count_include_pad, "divisor_override": override}
    shape = shape[:2] + tuple(max(n, k) for n, k in zip(shape[2:], kernel))
    module, reference = mnn.AvgPool2d(**args), torch.nn.AvgPool2d(**args)
    run_both(module, reference, [_normal(shape)])
    assert repr(module) == repr(reference)


@SETTINGS
@given(shape=st.tuples(st.integers(1, 2), st.integers(1, 3), st.integers(1, 9), st.integers(1, 9)),
       size=st.one_of(st.integers(1, 5), st.tuples(st.one_of(st.none(), st.integers(1, 10)),
                                                   st.one_of(st.none(), st.integers(1, 10)))))
def test_adaptive_pool2d_modules_match_pytorch(shape, size):
    data = np.round(_normal(shape), 1)
    run_both(mnn.AdaptiveAvgPool2d(size), torch.nn.AdaptiveAvgPool2d(size), [data])
    run_both(mnn.AdaptiveMaxPool2d(size, return_indices=True), torch.nn.AdaptiveMaxPool2d(size, True), [data])
    assert repr(mnn.AdaptiveAvgPool2d(size)) == repr(torch.nn.AdaptiveAvgPool2d(size))


@SETTINGS
@given(shape=st.one_of(st.tuples(st.integers(1, 2), st.integers(1, 3), st.integers(3, 9)),
                       st.tuples(st.integers(1, 3), st.integers(3, 9))),
       kernel=st.integers(1, 3), stride=st.one_of(st.none(), st.integers(1, 3)), ceil_mode=st.booleans(),
       size=st.integers(1, 6))
def test_pool1d_modules_match_pytorch(shape, kernel, stride, ceil_mode, size):
    data = np.round(_normal(shape), 1)
    padding = kernel // 2
    run_both(mnn.MaxPool1d(kernel, stride, padding, ceil_mode=ceil_mode, return_indices=True),
             torch.nn.MaxPool1d(kernel, stride, padding, ceil_mode=ceil_mode, return_indices=True), [data])
    avg, torch_avg = mnn.AvgPool1d(kernel, stride, padding, ceil_mode), torch.nn.AvgPool1d(kernel, stride, padding,
                                                                                            ceil_mode)
    run_both(avg, torch_avg, [data])
    assert repr(avg) == repr(torch_avg)
    run_both(mnn.AdaptiveAvgPool1d(size), torch.nn.AdaptiveAvgPool1d(size), [data])
    run_both(mnn.AdaptiveMaxPool1d(size, True), torch.nn.AdaptiveMaxPool1d(size, True), [data])


def test_pooling_keeps_float32_and_runs_on_every_device(device):
    data = _normal((2, 3, 8, 8)).astype(np.float32)
    for module, reference in [(mnn.MaxPool2d(3, 2, 1), torch.nn.MaxPool2d(3, 2, 1)),
                              (mnn.AvgPool2d(2), torch.nn.AvgPool2d(2)),
                              (mnn.AdaptiveAvgPool2d((3, 5)), torch.nn.AdaptiveAvgPool2d((3, 5)))]:
        x = mg.tensor(data, device=device, requires_grad=True)
        out = module(x)
        assert out.dtype == np.float32 and out.device == x.device
        np.testing.assert_allclose(_numpy(out), reference(torch.tensor(data)).numpy(), rtol=1e-6, atol=1e-6)
        out.sum().backward()
        assert x.grad.dtype == np.float32


def test_max_pool_nan_ties_and_infinities_follow_pytorch():
    nan, inf = float("nan"), float("inf")
    cases = [
        ([[[[1.0, nan, 3.0, nan], [5.0, 6.0, 7.0, 8.0]]]], {"kernel_size": 2}),
        ([[[[2.0, 2.0, 1.0], [2.0, 0.0, 2.0]]]], {"kernel_size": 2, "stride": 1}),
        ([[[[-inf, -inf, -inf]] * 3]], {"kernel_size": 2, "padding": 1}),
        # A dilated window over padding only: -inf, and PyTorch's index outside the plane.
        ([[[[0.0]]]], {"kernel_size": (1, 2), "padding": (0, 1), "dilation": (1, 2)}),
    ]
    for values, args in cases:
        x, tx = mg.tensor(values, dtype=mg.float64, requires_grad=True), torch.tensor(values, requires_grad=True)
        (out, idx), (expected, expected_idx) = (F.max_pool2d(x, **args, return_indices=True),
                                                torch.nn.functional.max_pool2d(tx, **args, return_indices=True))
        np.testing.assert_array_equal(_numpy(out), _numpy(expected))
        np.testing.assert_array_equal(_numpy(idx), _numpy(expected_idx))
        out.sum().backward()
        expected.sum().backward()
        np.testing.assert_array_equal(_numpy(x.grad), _numpy(tx.grad))


def test_max_pool_gradient_of_a_padding_only_window_is_zero():
    # PyTorch routes this window's gradient to index 1, an unrelated element of the plane (row 1);
    # minigrad gives it none: the window's value (-inf) does not depend on the input.
    x = mg.zeros(1, 1, 2, 1, dtype=mg.float64, requires_grad=True)
    out, idx = F.max_pool2d(x, (1, 2), padding=(0, 1), dilation=(1, 2), return_indices=True)
    assert idx.tolist() == [[[[1], [2]]]] and np.isneginf(_numpy(out)).all()
    out.sum().backward()
    assert _numpy(x.grad).tolist() == [[[[0.0], [0.0]]]]


def test_integer_pooling_matches_pytorch():
    data = np.arange(-12, 13).reshape(1, 1, 5, 5) * 7
    x, tx = mg.tensor(data), torch.tensor(data)
    pairs = [
        (F.max_pool2d(x, 3, 2, 1, ceil_mode=True), torch.nn.functional.max_pool2d(tx, 3, 2, 1, ceil_mode=True)),
        (F.avg_pool2d(x, 3, 1, 1), torch.nn.functional.avg_pool2d(tx, 3, 1, 1)),
        (F.avg_pool2d(x, 2, 2, 1, True, False), torch.nn.functional.avg_pool2d(tx, 2, 2, 1, True, False)),
        (F.avg_pool2d(x, 2, divisor_override=-3), torch.nn.functional.avg_pool2d(tx, 2, divisor_override=-3)),
    ]
    for mine, theirs in pairs:
        assert mine.dtype == np.int64
        np.testing.assert_array_equal(_numpy(mine), _numpy(theirs))


def test_max_pool_gradient_sums_where_overlapping_windows_share_a_pick():
    x = mg.tensor([[[[0.0, 9.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]]], requires_grad=True)
    F.max_pool2d(x, 2, stride=1).sum().backward()
    assert x.grad.tolist() == [[[[0.0, 2.0, 0.0], [1.0, 1.0, 0.0], [0.0, 0.0, 0.0]]]]


def test_pooling_double_backward_matches_pytorch():
    data = _normal((2, 2, 5, 5))
    for name, args in [("max_pool2d", (3, 2, 1)), ("avg_pool2d", (3, 2, 1, True, False)),
                       ("adaptive_avg_pool2d", ((2, 3),)), ("adaptive_max_pool2d", (3,))]:
        x, tx = mg.tensor(data, requires_grad=True), torch.tensor(data, requires_grad=True)
        (g,) = mg.autograd.grad((getattr(F, name)(x, *args) ** 3).sum(), x, create_graph=True)
        (tg,) = torch.autograd.grad((getattr(torch.nn.functional, name)(tx, *args) ** 3).sum(), tx,
                                    create_graph=True)
        (g * g).sum().backward()
        (tg * tg).sum().backward()
        np.testing.assert_allclose(_numpy(x.grad), tx.grad.numpy(), **TOL, err_msg=name)


BAD_POOLING_CALLS = {
    "kernel_zero": lambda lib, x: lib.nn.functional.max_pool2d(x, 0, stride=1),
    "stride_negative": lambda lib, x: lib.nn.functional.max_pool2d(x, 2, stride=-1),
    "padding_too_large": lambda lib, x: lib.nn.functional.max_pool2d(x, 2, padding=2),
    "padding_too_large_dilated": lambda lib, x: lib.nn.functional.max_pool2d(x, 3, 1, 2, dilation=2),
    "padding_negative": lambda lib, x: lib.nn.functional.avg_pool2d(x, 2, padding=-1),
    "dilation_zero": lambda lib, x: lib.nn.functional.max_pool2d(x, 2, dilation=0),
    "output_too_small": lambda lib, x: lib.nn.functional.max_pool2d(x, 6),
    "avg_output_too_small": lambda lib, x: lib.nn.functional.avg_pool2d(x, 6),
    "kernel_float": lambda lib, x: lib.nn.functional.max_pool2d(x, 2.0),
    "kernel_bool": lambda lib, x: lib.nn.functional.max_pool2d(x, True),
    "kernel_three_entries": lambda lib, x: lib.nn.functional.max_pool2d(x, (2, 2, 2)),
    "input_2d": lambda lib, x: lib.nn.functional.max_pool2d(x[0, 0], 2),
    "input_5d": lambda lib, x: lib.nn.functional.avg_pool2d(x[None], 2),
    "no_channels": lambda lib, x: lib.nn.functional.max_pool2d(x[:, :0], 2),
    "divisor_zero": lambda lib, x: lib.nn.functional.avg_pool2d(x, 2, divisor_override=0),
    "divisor_float": lambda lib, x: lib.nn.functional.avg_pool2d(x, 2, divisor_override=2.5),
    "adaptive_negative": lambda lib, x: lib.nn.functional.adaptive_avg_pool2d(x, -1),
    "adaptive_float": lambda lib, x: lib.nn.functional.adaptive_avg_pool2d(x, 2.0),
    "adaptive_three_entries": lambda lib, x: lib.nn.functional.adaptive_max_pool2d(x, (2, 2, 2)),
    "adaptive_one_entry": lambda lib, x: lib.nn.functional.adaptive_avg_pool2d(x, (2,)),
    "adaptive_float_entry": lambda lib, x: lib.nn.functional.adaptive_avg_pool2d(x, (2.0, 3)),
    "adaptive_1d_none": lambda lib, x: lib.nn.functional.adaptive_avg_pool1d(x[0], (None,)),
    "adaptive_1d_two_entries": lambda lib, x: lib.nn.functional.adaptive_max_pool1d(x[0], (2, 2)),
    "adaptive_integer": lambda lib, x: lib.nn.functional.adaptive_avg_pool2d(x.long(), 2),
    "bool_input": lambda lib, x: lib.nn.functional.max_pool2d(x > 0, 2),
    "pool1d_on_1d": lambda lib, x: lib.nn.functional.max_pool1d(x[0, 0, 0], 2),
    "pool1d_two_entries": lambda lib, x: lib.nn.functional.max_pool1d(x[0], (2, 2)),
    "avg_pool1d_on_1d": lambda lib, x: lib.nn.functional.avg_pool1d(x[0, 0, 0], 2),
}


@pytest.mark.parametrize("name", BAD_POOLING_CALLS)
def test_bad_pooling_calls_raise_pytorchs_exception_types(name):
    data = _normal((2, 3, 5, 5))
    call = BAD_POOLING_CALLS[name]
    same_error(lambda: call(mg, mg.tensor(data)), lambda: call(torch, torch.tensor(data)))


def test_pooling_accepts_empty_batches_and_zero_adaptive_sizes():
    x = mg.zeros(0, 2, 4, 4)
    assert F.max_pool2d(x, 2).shape == (0, 2, 2, 2)
    assert F.avg_pool2d(x, 2).shape == (0, 2, 2, 2)
    y = mg.ones(1, 2, 4, 4, requires_grad=True)
    assert F.adaptive_avg_pool2d(y, (0, 2)).shape == (1, 2, 0, 2)
    out, idx = F.adaptive_max_pool2d(y, (2, 0), return_indices=True)
    assert out.shape == idx.shape == (1, 2, 2, 0)


# -- batch normalization -----------------------------------------------------------------------------

BATCH_NORMS = {
    "1d_2d_input": (mnn.BatchNorm1d, torch.nn.BatchNorm1d, (6, 3)),
    "1d_3d_input": (mnn.BatchNorm1d, torch.nn.BatchNorm1d, (4, 3, 5)),
    "2d": (mnn.BatchNorm2d, torch.nn.BatchNorm2d, (3, 2, 4, 5)),
    "3d": (mnn.BatchNorm3d, torch.nn.BatchNorm3d, (2, 2, 3, 2, 3)),
}
BATCH_NORM_OPTIONS = [
    {},
    {"momentum": None},
    {"momentum": 0.5, "eps": 1e-3},
    {"affine": False},
    {"bias": False},
    {"track_running_stats": False},
    {"affine": False, "track_running_stats": False, "momentum": None},
]


def _batch_norm_pair(kind, options):
    mine, theirs, shape = BATCH_NORMS[kind]
    channels = shape[1]
    reference = theirs(channels, **options).double()
    if reference.weight is not None:
        with torch.no_grad():  # not the default ones/zeros, so the affine map is checked
            reference.weight.copy_(torch.tensor(_normal(channels, 7)))
            if reference.bias is not None:
                reference.bias.copy_(torch.tensor(_normal(channels, 8)))
    module = _copy_weights(mine(channels, dtype=mg.float64, **options), reference)
    return module, reference, shape


@pytest.mark.parametrize("options", BATCH_NORM_OPTIONS, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items())
                         or "defaults")
@pytest.mark.parametrize("kind", BATCH_NORMS)
def test_batch_norm_trains_and_evaluates_like_pytorch(kind, options):
    module, reference, shape = _batch_norm_pair(kind, options)
    assert list(module.state_dict()) == list(reference.state_dict())
    assert repr(module) == repr(reference)
    for step in range(3):  # training steps: batch statistics, running statistics updated
        data = _normal(shape, step) * (step + 1) + step
        run_both(module, reference, [data], seed=step)
        for name, buffer in reference.named_buffers():
            mine = dict(module.named_buffers())[name]
            assert mine.dtype == np.dtype(str(buffer.dtype).removeprefix("torch."))
            np.testing.assert_allclose(_numpy(mine), buffer.numpy(), **TOL, err_msg=name)
        module.zero_grad()
        reference.zero_grad()
    module.eval()
    reference.eval()
    run_both(module, reference, [_normal((2,) + shape[1:], 9)])
    if module.track_running_stats:  # then one sample is fine in evaluation mode
        run_both(module, reference, [_normal((1,) + shape[1:], 10)])
    for name, buffer in reference.named_buffers():
        np.testing.assert_allclose(_numpy(dict(module.named_buffers())[name]), buffer.numpy(), **TOL)


def test_batch_norm_float32_statistics_and_state_dict_round_trip(device):
    reference = torch.nn.BatchNorm2d(4, momentum=0.3)
    module = mnn.BatchNorm2d(4, momentum=0.3).to(device)
    for step in range(4):
        data = (_normal((8, 4, 3, 3), step) * 2 + 1).astype(np.float32)
        out = module(mg.tensor(data, device=device))
        expected = reference(torch.tensor(data))
        np.testing.assert_allclose(_numpy(out), expected.detach().numpy(), rtol=1e-5, atol=1e-5)
    for key, value in reference.state_dict().items():
        mine = module.state_dict()[key]
        assert mine.dtype == np.dtype(str(value.dtype).removeprefix("torch.")), key
        np.testing.assert_allclose(_numpy(mine), value.numpy(), rtol=1e-5, atol=1e-6, err_msg=key)
    assert int(module.num_batches_tracked.item()) == 4
    fresh = mnn.BatchNorm2d(4).to(device)
    fresh.load_state_dict(module.state_dict())
    fresh.eval()
    module.eval()
    data = mg.tensor(_normal((2, 4, 3, 3)).astype(np.float32), device=device)
    np.testing.assert_array_equal(_numpy(fresh(data)), _numpy(module(data)))
    module.double()
    assert module.running_mean.dtype == np.float64 and module.num_batches_tracked.dtype == np.int64


def test_batch_norm_updates_running_statistics_in_place_with_a_new_version():
    module = mnn.BatchNorm1d(3)
    mean, count = module.running_mean, module.num_batches_tracked
    version = mean._version
    module(mg.tensor(_normal((5, 3)), dtype=mg.float32))
    assert module.running_mean is mean and module.num_batches_tracked is count
    assert mean._version > version and int(count.item()) == 1
    module.reset_running_stats()
    assert mean.tolist() == [0.0] * 3 and module.running_var.tolist() == [1.0] * 3 and int(count.item()) == 0


def test_functional_batch_norm_matches_pytorch_and_updates_given_statistics():
    data = _normal((5, 3, 4))
    mean, var = mg.zeros(3, dtype=mg.float64), mg.ones(3, dtype=mg.float64)
    torch_mean, torch_var = torch.zeros(3, dtype=torch.float64), torch.ones(3, dtype=torch.float64)
    out = F.batch_norm(mg.tensor(data), mean, var, training=True, momentum=0.25, eps=1e-4)
    expected = torch.nn.functional.batch_norm(torch.tensor(data), torch_mean, torch_var, training=True,
                                              momentum=0.25, eps=1e-4)
    np.testing.assert_allclose(_numpy(out), expected.numpy(), **TOL)
    np.testing.assert_allclose(_numpy(mean), torch_mean.numpy(), **TOL)
    np.testing.assert_allclose(_numpy(var), torch_var.numpy(), **TOL)
    # Without running statistics in training mode: batch statistics only.
    np.testing.assert_allclose(_numpy(F.batch_norm(mg.tensor(data), None, None, training=True)),
                               torch.nn.functional.batch_norm(torch.tensor(data), None, None, training=True).numpy(),
                               **TOL)


BAD_BATCH_NORM_CALLS = {
    "one_value_per_channel": lambda lib: lib.nn.BatchNorm1d(3)(lib.ones(1, 3)),
    "one_value_per_channel_3d": lambda lib: lib.nn.functional.batch_norm(lib.ones(1, 3, 1), None, None,
                                                                         training=True),
    "bn1d_4d_input": lambda lib: lib.nn.BatchNorm1d(3)(lib.ones(4, 3, 2, 2)),
    "bn1d_1d_input": lambda lib: lib.nn.BatchNorm1d(3)(lib.ones(3)),
    "bn2d_3d_input": lambda lib: lib.nn.BatchNorm2d(3)(lib.ones(4, 3, 2)),
    "bn2d_wrong_channels": lambda lib: lib.nn.BatchNorm2d(3)(lib.ones(4, 2, 2, 2)),
    "eval_without_running_mean": lambda lib: lib.nn.functional.batch_norm(lib.ones(4, 3), None, None),
    "running_mean_wrong_size": lambda lib: lib.nn.functional.batch_norm(lib.ones(4, 3), lib.zeros(2), lib.ones(2)),
    "weight_wrong_size": lambda lib: lib.nn.functional.batch_norm(lib.ones(4, 3), lib.zeros(3), lib.ones(3),
                                                                  lib.ones(2), training=True),
    "only_running_mean": lambda lib: lib.nn.functional.batch_norm(lib.ones(4, 3), lib.zeros(3), None,
                                                                  training=True),
    "mixed_dtypes": lambda lib: lib.nn.functional.batch_norm(lib.ones(4, 3, dtype=lib.float64), lib.zeros(3),
                                                             lib.ones(3)),
    "integer_input": lambda lib: lib.nn.functional.batch_norm(lib.ones(4, 3, dtype=lib.int64), lib.zeros(3),
                                                              lib.ones(3)),
    "momentum_none": lambda lib: lib.nn.functional.batch_norm(lib.ones(4, 3), None, None, training=True,
                                                              momentum=None),
    "negative_eps": lambda lib: lib.nn.functional.batch_norm(lib.ones(4, 3), None, None, training=True, eps=-1.0),
}


@pytest.mark.parametrize("name", BAD_BATCH_NORM_CALLS)
def test_bad_batch_norm_calls_raise_pytorchs_exception_types(name):
    error = same_error(lambda: BAD_BATCH_NORM_CALLS[name](mg), lambda: BAD_BATCH_NORM_CALLS[name](torch))
    if name.startswith("one_value"):
        assert "Expected more than 1 value per channel when training" in str(error)


def test_lenet_style_model_trains_like_pytorch():
    """Conv, BatchNorm2d, max and average pooling, dropout off: three SGD steps, then evaluation."""
    def build(lib):
        nn = lib.nn
        return nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(), nn.MaxPool2d(2),
                             nn.Conv2d(4, 6, 3), nn.LeakyReLU(0.1), nn.AvgPool2d(2, ceil_mode=True),
                             nn.Dropout2d(0.0), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(6, 3),
                             nn.LogSoftmax(dim=1))

    torch.manual_seed(0)
    reference = build(torch).double()
    model = _copy_weights(build(mg).double(), reference)
    optimizer = mg.optim.SGD(model.parameters(), lr=0.1)
    target = np.array([0, 2, 1, 1, 0, 2])
    for step in range(3):
        data = _normal((6, 1, 8, 8), step)
        loss = F.nll_loss(model(mg.tensor(data)), mg.tensor(target))
        expected = torch.nn.functional.nll_loss(reference(torch.tensor(data)), torch.tensor(target))
        np.testing.assert_allclose(loss.item(), expected.item(), rtol=1e-10)
        optimizer.zero_grad()
        reference.zero_grad()
        loss.backward()
        expected.backward()
        optimizer.step()
        with torch.no_grad():  # plain SGD (torch.optim is slow to import)
            for p in reference.parameters():
                p -= 0.1 * p.grad
    model.eval()
    reference.eval()
    data = _normal((2, 1, 8, 8), 5)
    np.testing.assert_allclose(_numpy(model(mg.tensor(data))), reference(torch.tensor(data)).detach().numpy(),
                               rtol=1e-9, atol=1e-12)
    for key, value in reference.state_dict().items():
        np.testing.assert_allclose(_numpy(model.state_dict()[key]), value.numpy(), rtol=1e-9, atol=1e-12,
                                   err_msg=key)


# -- channel dropout ---------------------------------------------------------------------------------


def test_dropout2d_zeros_whole_channels_and_scales_the_rest():
    mg.manual_seed(0)
    x = mg.ones(64, 8, 3, 3, dtype=mg.float64, requires_grad=True)
    out = mnn.Dropout2d(0.25)(x)
    values = _numpy(out).reshape(64, 8, 9)
    assert ((values == 0).all(axis=2) | (values == 1 / 0.75).all(axis=2)).all()  # one decision per channel
    dropped = (values[:, :, 0] == 0).mean()
    assert 0.15 < dropped < 0.35
    out.sum().backward()
    np.testing.assert_array_equal(_numpy(x.grad), _numpy(out))  # the gradient is the mask


def test_dropout1d_and_unbatched_inputs():
    mg.manual_seed(1)
    out = F.dropout1d(mg.ones(16, 5), 0.5)  # (C, L): one decision per channel
    values = _numpy(out)
    assert ((values == 0).all(axis=1) | (values == 2.0).all(axis=1)).all()
    out = mnn.Dropout1d(0.5)(mg.ones(2, 16, 5))
    values = _numpy(out)
    assert ((values == 0).all(axis=2) | (values == 2.0).all(axis=2)).all()


def test_channel_dropout_evaluation_p_zero_and_p_one():
    x = mg.tensor(_normal((2, 3, 4, 4)))
    module = mnn.Dropout2d(0.5).eval()
    assert module(x) is x
    assert F.dropout2d(x, 0.0) is x
    assert (_numpy(F.dropout2d(x, 1.0)) == 0).all()
    assert repr(mnn.Dropout2d()) == repr(torch.nn.Dropout2d())


def test_channel_dropout_warnings_and_errors_follow_pytorch():
    for lib in (mg, torch):
        with pytest.warns(UserWarning, match="3D input to dropout2d"):
            lib.nn.functional.dropout2d(lib.ones(3, 4, 5), 0.5)
        with pytest.warns(UserWarning, match="5-D input to dropout2d"):
            lib.nn.functional.dropout2d(lib.ones(2, 3, 4, 5, 6), 0.5)
    same_error(lambda: mnn.Dropout2d(1.5), lambda: torch.nn.Dropout2d(1.5))
    same_error(lambda: F.dropout1d(mg.ones(2, 3, 4, 5)), lambda: torch.nn.functional.dropout1d(torch.ones(2, 3, 4, 5)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        same_error(lambda: F.dropout2d(mg.ones(4)), lambda: torch.nn.functional.dropout2d(torch.ones(4)))


# -- activations and Unflatten -----------------------------------------------------------------------

ACTIVATIONS = {
    "softmax": lambda nn: nn.Softmax(dim=1),
    "log_softmax": lambda nn: nn.LogSoftmax(dim=-1),
    "softmin": lambda nn: nn.Softmin(dim=0),
    "leaky_relu": lambda nn: nn.LeakyReLU(),
    "leaky_relu_slope": lambda nn: nn.LeakyReLU(0.2),
    "elu": lambda nn: nn.ELU(),
    "elu_alpha": lambda nn: nn.ELU(alpha=0.5),
    "silu": lambda nn: nn.SiLU(),
    "hardtanh": lambda nn: nn.Hardtanh(-0.5, 1.5),
    "relu6": lambda nn: nn.ReLU6(),
}


@pytest.mark.parametrize("name", ACTIVATIONS)
def test_activations_match_pytorch_including_kinks(name):
    # Kinks (0, the bounds) and tails (exp overflow in the branch not taken) included.
    values = np.concatenate([_normal(12) * 3, [0.0, -0.5, 1.5, 6.0, 800.0, -800.0, 1e-12, -1e-12]]).reshape(4, 5)
    module, reference = ACTIVATIONS[name](mnn), ACTIVATIONS[name](torch.nn)
    run_both(module, reference, [values])
    assert repr(module) == repr(reference)


def test_activation_reprs_show_inplace_like_pytorch():
    for name in ("LeakyReLU", "ELU", "SiLU", "Hardtanh", "ReLU6"):
        assert repr(getattr(mnn, name)(inplace=True)) == repr(getattr(torch.nn, name)(inplace=True))


def test_activation_functions_are_in_functional_and_check_their_input():
    x = _normal((3, 4))
    for name in ("leaky_relu", "elu", "silu", "hardtanh", "relu6"):
        np.testing.assert_allclose(_numpy(getattr(F, name)(mg.tensor(x))),
                                   getattr(torch.nn.functional, name)(torch.tensor(x)).numpy(), **TOL)
    np.testing.assert_allclose(_numpy(F.softmin(mg.tensor(x), 1, dtype=mg.float32)),
                               torch.nn.functional.softmin(torch.tensor(x), 1, dtype=torch.float32).numpy(),
                               rtol=1e-6)
    with pytest.raises(TypeError, match="Tensor"):
        F.leaky_relu(x)
    same_error(lambda: F.elu(mg.ones(2, dtype=mg.int64)), lambda: torch.nn.functional.elu(torch.ones(2).long()))
    same_error(lambda: F.hardtanh(mg.ones(2), 1.0, -1.0),
               lambda: torch.nn.functional.hardtanh(torch.ones(2), 1.0, -1.0))


def test_softmax_module_without_dim_warns_like_pytorch():
    for lib in (mg, torch):
        with pytest.warns(UserWarning, match="Implicit dimension choice"):
            out = lib.nn.Softmax()(lib.ones(2, 3))
        assert tuple(out.shape) == (2, 3)


@pytest.mark.parametrize("dim, sizes, shape", [(1, (2, 3), (4, 6)), (-1, [2, -1], (4, 6)), (0, (1, 2, 2), (4, 3)),
                                               (-2, (2, 1, 2), (3, 4, 5))])
def test_unflatten_matches_pytorch(dim, sizes, shape):
    module, reference = mnn.Unflatten(dim, sizes), torch.nn.Unflatten(dim, sizes)
    run_both(module, reference, [_normal(shape)])
    assert repr(module) == repr(reference)


def test_unflatten_errors_follow_pytorch():
    same_error(lambda: mnn.Unflatten(1, 2), lambda: torch.nn.Unflatten(1, 2))
    same_error(lambda: mnn.Unflatten(1, (2, 2.0)), lambda: torch.nn.Unflatten(1, (2, 2.0)))
    same_error(lambda: mnn.Unflatten(1, (2, 4))(mg.ones(4, 6)), lambda: torch.nn.Unflatten(1, (2, 4))(torch.ones(4, 6)))
    same_error(lambda: mnn.Unflatten(3, (2, 3))(mg.ones(4, 6)), lambda: torch.nn.Unflatten(3, (2, 3))(torch.ones(4, 6)))


# -- EmbeddingBag -------------------------------------------------------------------------------------


@st.composite
def bags(draw):
    """Indices into 6 rows, cut into bags (some empty) by offsets, or a 2-D batch of equal bags."""
    if draw(st.booleans()):
        rows = draw(st.integers(1, 3))
        length = draw(st.integers(1, 4))
        flat = draw(st.lists(st.integers(0, 5), min_size=rows * length, max_size=rows * length))
        return np.array(flat).reshape(rows, length), None, False
    flat = draw(st.lists(st.integers(0, 5), max_size=8))
    cuts = sorted(draw(st.lists(st.integers(0, len(flat)), min_size=1, max_size=4)))
    cuts[0] = 0
    last = draw(st.booleans())
    if last:
        cuts.append(len(flat))
    return np.array(flat, dtype=np.int64), np.array(cuts, dtype=np.int64), last


@SETTINGS
@given(bag=bags(), mode=st.sampled_from(["sum", "mean", "max"]), padding_idx=st.one_of(st.none(), st.integers(-6, 5)),
       weighted=st.booleans())
def test_embedding_bag_matches_pytorch(bag, mode, padding_idx, weighted):
    indices, offsets, include_last = bag
    options = {"mode": mode, "padding_idx": padding_idx, "include_last_offset": include_last}
    reference = torch.nn.EmbeddingBag(6, 3, **options).double()
    with torch.no_grad():
        reference.weight.copy_(torch.tensor(np.round(_normal((6, 3), 3), 1)))  # rounded: ties in 'max'
    module = _copy_weights(mnn.EmbeddingBag(6, 3, dtype=mg.float64, **options), reference)
    arrays = [indices] + ([] if offsets is None else [offsets])
    if weighted and mode == "sum":
        weights = _normal(indices.shape, 4)
        mg_weights = mg.tensor(weights, requires_grad=True)
        torch_weights = torch.tensor(weights, requires_grad=True)
        out = module(*(mg.tensor(a) for a in arrays), per_sample_weights=mg_weights)
        expected = reference(*(torch.tensor(a) for a in arrays), per_sample_weights=torch_weights)
        np.testing.assert_allclose(_numpy(out), _numpy(expected), **TOL)
        out.sum().backward()
        expected.sum().backward()
        np.testing.assert_allclose(_numpy(mg_weights.grad), torch_weights.grad.numpy(), **TOL)
        np.testing.assert_allclose(_numpy(module.weight.grad), reference.weight.grad.numpy(), **TOL)
    else:
        run_both(module, reference, arrays)
    assert repr(module) == repr(reference)


def test_embedding_bag_max_mode_follows_pytorch_on_nan_and_infinity():
    weight = np.array([[1.0, 2.0], [1.0, 2.0], [np.nan, 5.0], [-np.inf, 0.0]])
    for indices in ([0, 1, 3], [2, 0], [0, 2], [3, 3]):
        w, tw = mg.tensor(weight, requires_grad=True), torch.tensor(weight, requires_grad=True)
        out = F.embedding_bag(mg.tensor(indices), w, mg.tensor([0]), mode="max")
        expected = torch.nn.functional.embedding_bag(torch.tensor(indices), tw, torch.tensor([0]), mode="max")
        np.testing.assert_array_equal(_numpy(out), _numpy(expected))
        out.sum().backward()
        expected.sum().backward()
        np.testing.assert_array_equal(_numpy(w.grad), tw.grad.numpy())


def test_embedding_bag_max_norm_renormalizes_looked_up_rows_in_place():
    weight = _normal((5, 3)) * 3
    module = mnn.EmbeddingBag(5, 3, max_norm=1.0, mode="sum", _weight=mg.tensor(weight, dtype=mg.float64))
    reference = torch.nn.EmbeddingBag(5, 3, max_norm=1.0, mode="sum", _weight=torch.tensor(weight))
    indices, offsets = np.array([0, 2, 2, 4]), np.array([0, 1])
    np.testing.assert_allclose(_numpy(module(mg.tensor(indices), mg.tensor(offsets))),
                               _numpy(reference(torch.tensor(indices), torch.tensor(offsets))), **TOL)
    np.testing.assert_allclose(_numpy(module.weight), _numpy(reference.weight), **TOL)
    assert repr(module) == repr(reference)


def test_embedding_bag_from_pretrained_and_initialization():
    weight = mg.tensor(_normal((4, 2)), dtype=mg.float32)
    bag = mnn.EmbeddingBag.from_pretrained(weight, mode="sum")
    assert bag.weight.requires_grad is False and bag.mode == "sum"
    assert mnn.EmbeddingBag.from_pretrained(weight, freeze=False).weight.requires_grad
    mg.manual_seed(0)
    padded = mnn.EmbeddingBag(50, 4, padding_idx=-1)
    assert (_numpy(padded.weight)[49] == 0).all() and padded.padding_idx == 49
    assert 0.5 < float(np.std(_numpy(padded.weight)[:49])) < 1.5


BAD_EMBEDDING_BAG_CALLS = {
    "offsets_not_starting_at_0": lambda lib, w: lib.nn.functional.embedding_bag(
        lib.tensor([1, 2, 3]), w, lib.tensor([1])),
    "offsets_past_the_end": lambda lib, w: lib.nn.functional.embedding_bag(
        lib.tensor([1, 2, 3]), w, lib.tensor([0, 2, 5])),
    "offsets_missing": lambda lib, w: lib.nn.functional.embedding_bag(lib.tensor([1, 2, 3]), w),
    "offsets_with_2d_input": lambda lib, w: lib.nn.functional.embedding_bag(
        lib.tensor([[1, 2, 3]]), w, lib.tensor([0])),
    "index_out_of_range": lambda lib, w: lib.nn.functional.embedding_bag(
        lib.tensor([1, 2, 7]), w, lib.tensor([0])),
    "float_indices": lambda lib, w: lib.nn.functional.embedding_bag(
        lib.tensor([1.0, 2.0]), w, lib.tensor([0])),
    "bad_mode": lambda lib, w: lib.nn.functional.embedding_bag(
        lib.tensor([1, 2]), w, lib.tensor([0]), mode="median"),
    "weights_with_mean": lambda lib, w: lib.nn.functional.embedding_bag(
        lib.tensor([1, 2]), w, lib.tensor([0]), mode="mean", per_sample_weights=lib.ones(2, dtype=w.dtype)),
    "weights_wrong_shape": lambda lib, w: lib.nn.functional.embedding_bag(
        lib.tensor([1, 2]), w, lib.tensor([0]), mode="sum", per_sample_weights=lib.ones(3, dtype=w.dtype)),
    "weights_wrong_dtype": lambda lib, w: lib.nn.functional.embedding_bag(
        lib.tensor([[1, 2]]), w, mode="sum", per_sample_weights=lib.ones(1, 2, dtype=lib.float32)),
    "padding_idx_out_of_range": lambda lib, w: lib.nn.functional.embedding_bag(
        lib.tensor([1, 2]), w, lib.tensor([0]), padding_idx=7),
    "weight_1d": lambda lib, w: lib.nn.functional.embedding_bag(lib.tensor([1, 2]), w[0], lib.tensor([0])),
}


@pytest.mark.parametrize("name", BAD_EMBEDDING_BAG_CALLS)
def test_bad_embedding_bag_calls_raise_pytorchs_exception_types(name):
    weight = _normal((5, 2))
    call = BAD_EMBEDDING_BAG_CALLS[name]
    same_error(lambda: call(mg, mg.tensor(weight)), lambda: call(torch, torch.tensor(weight)))
