"""Recurrent layers (``minigrad.nn.rnn``) against PyTorch.

Every comparison builds the layer in both libraries, copies PyTorch's
weights into minigrad's through ``load_state_dict`` (float64), runs both on
the same inputs and compares every output, the gradients of every parameter
and of the inputs and initial states.
"""

from __future__ import annotations

import copy
import math
import warnings

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import minigrad as mg
from minigrad import backend
from minigrad import nn as mnn

TOL = {"rtol": 1e-8, "atol": 1e-10}
MODES = ("RNN_TANH", "RNN_RELU", "LSTM", "GRU")


@pytest.fixture(params=("cpu", "cuda"))
def device(request) -> str:
    """The device a test runs on; "cuda" skips when no GPU can be used."""
    if request.param == "cuda" and not backend.cuda_is_available():
        pytest.skip(backend.cuda_unavailable_reason())
    return request.param


# -- running the same call in both libraries -----------------------------------------------------


def _convert(value, make):
    if isinstance(value, np.ndarray):
        return make(value)
    if isinstance(value, (tuple, list)):
        return type(value)(_convert(v, make) for v in value)
    return value


def _flatten(value) -> list:
    if isinstance(value, (tuple, list)):
        return [x for v in value for x in _flatten(v)]
    return [value]


def _leaves(value) -> list:
    return [x for x in _flatten(value) if isinstance(x, (mg.Tensor, torch.Tensor)) and x.requires_grad]


def twin(module, reference):
    """``module`` (float64) holding ``reference``'s weights; ``reference`` is made float64 too."""
    reference.double()
    module.load_state_dict({k: v.detach().numpy() for k, v in reference.state_dict().items()})
    return module


def run_twins(module, reference, args, device="cpu", **kwargs):
    """Call both modules on ``args``/``kwargs`` (NumPy arrays, nested in tuples) and compare everything.

    Float arrays become tensors that require grad. Returns minigrad's output.
    """
    module.to(device)
    mg_args = _convert(args, lambda a: mg.tensor(a, device=device, requires_grad=a.dtype.kind == "f"))
    mg_kwargs = _convert(kwargs, lambda a: mg.tensor(a, device=device, requires_grad=a.dtype.kind == "f"))
    torch_args = _convert(args, lambda a: torch.tensor(a, requires_grad=a.dtype.kind == "f"))
    torch_kwargs = _convert(kwargs, lambda a: torch.tensor(a, requires_grad=a.dtype.kind == "f"))
    out = module(*mg_args, **mg_kwargs)
    expected = reference(*torch_args, **torch_kwargs)
    outs, exps = _flatten(out), _flatten(expected)
    assert len(outs) == len(exps)
    rng = np.random.default_rng(1)
    mg_loss, torch_loss = 0.0, 0.0
    for mine, theirs in zip(outs, exps):
        assert (mine is None) == (theirs is None)
        if theirs is None:
            continue
        assert mine.shape == tuple(theirs.shape)
        np.testing.assert_allclose(backend.to_numpy(mine.data), theirs.detach().numpy(), **TOL)
        upstream = rng.standard_normal(theirs.shape)
        mg_loss = mg_loss + (mine * mg.tensor(upstream, device=device)).sum()
        torch_loss = torch_loss + (theirs * torch.tensor(upstream)).sum()
    mg_loss.backward()
    torch_loss.backward()
    for name, param in reference.named_parameters():
        mine = module.get_parameter(name).grad
        assert mine is not None, name
        np.testing.assert_allclose(backend.to_numpy(mine.data), param.grad.numpy(), **TOL, err_msg=name)
    for mine, theirs in zip(_leaves((mg_args, mg_kwargs)), _leaves((torch_args, torch_kwargs))):
        np.testing.assert_allclose(backend.to_numpy(mine.grad.data), theirs.grad.numpy(), **TOL)
    return out


def make(lib, mode, *args, **kwargs):
    """``lib.nn``'s RNN/LSTM/GRU for ``mode`` (RNN_TANH and RNN_RELU are RNN with that nonlinearity)."""
    nn = lib.nn
    if mode.startswith("RNN"):
        return nn.RNN(*args, nonlinearity=mode[4:].lower(), **kwargs)
    return getattr(nn, mode)(*args, **kwargs)


def _normal(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


# -- multi-layer networks -------------------------------------------------------------------------


@settings(max_examples=25, deadline=None)
@given(
    mode=st.sampled_from(MODES), num_layers=st.integers(1, 2), bidirectional=st.booleans(),
    batch_first=st.booleans(), bias=st.booleans(), steps=st.integers(1, 9), batch=st.sampled_from([None, 1, 3]),
    sizes=st.tuples(st.integers(1, 3), st.integers(2, 3)), with_state=st.booleans(), project=st.booleans(),
)
def test_rnn_lstm_gru_match_pytorch(mode, num_layers, bidirectional, batch_first, bias, steps, batch, sizes,
                                    with_state, project):
    input_size, hidden = sizes
    proj_size = 1 if project and mode == "LSTM" else 0
    options = dict(num_layers=num_layers, bias=bias, batch_first=batch_first, bidirectional=bidirectional)
    if proj_size:
        options["proj_size"] = proj_size
    reference = make(torch, mode, input_size, hidden, **options)
    module = twin(make(mg, mode, input_size, hidden, dtype=mg.float64, **options), reference)
    lead = (steps,) if batch is None else ((batch, steps) if batch_first else (steps, batch))
    args = [_normal((*lead, input_size))]
    if with_state:
        layers = num_layers * (2 if bidirectional else 1)
        state_lead = (layers,) if batch is None else (layers, batch)
        h0 = _normal((*state_lead, proj_size or hidden), seed=2)
        args.append((h0, _normal((*state_lead, hidden), seed=3)) if mode == "LSTM" else h0)
    run_twins(module, reference, args)


def test_long_sequence_matches_pytorch(device):
    """37 steps: the halving split of the input projection runs several levels deep."""
    reference = torch.nn.LSTM(2, 3, num_layers=2, bidirectional=True)
    module = twin(mnn.LSTM(2, 3, num_layers=2, bidirectional=True, dtype=mg.float64), reference)
    run_twins(module, reference, [_normal((37, 2, 2))], device)


def test_empty_batch_gives_empty_outputs():
    output, (h_n, c_n) = mnn.LSTM(2, 3, num_layers=2)(mg.zeros(4, 0, 2))
    assert output.shape == (4, 0, 3) and h_n.shape == (2, 0, 3) and c_n.shape == (2, 0, 3)


def test_second_order_gradients_match_pytorch():
    reference = torch.nn.GRU(2, 3, bidirectional=True)
    module = twin(mnn.GRU(2, 3, bidirectional=True, dtype=mg.float64), reference)
    data = _normal((4, 2, 2))
    x, tx = mg.tensor(data, requires_grad=True), torch.tensor(data, requires_grad=True)
    (g,) = mg.autograd.grad(module(x)[0].sum(), x, create_graph=True)
    (tg,) = torch.autograd.grad(reference(tx)[0].sum(), tx, create_graph=True)
    (g**2).sum().backward()
    (tg**2).sum().backward()
    for name, param in reference.named_parameters():
        np.testing.assert_allclose(module.get_parameter(name).grad.numpy(), param.grad.numpy(), **TOL)


# -- cells ----------------------------------------------------------------------------------------


@settings(max_examples=25, deadline=None)
@given(kind=st.sampled_from(["RNNCell_tanh", "RNNCell_relu", "LSTMCell", "GRUCell"]), bias=st.booleans(),
       batch=st.sampled_from([None, 1, 3]), sizes=st.tuples(st.integers(1, 3), st.integers(1, 3)),
       with_state=st.booleans())
def test_cells_match_pytorch(kind, bias, batch, sizes, with_state):
    name, _, nonlinearity = kind.partition("_")
    options = dict(bias=bias, nonlinearity=nonlinearity) if nonlinearity else dict(bias=bias)
    reference = getattr(torch.nn, name)(*sizes, **options)
    module = twin(getattr(mnn, name)(*sizes, dtype=mg.float64, **options), reference)
    lead = () if batch is None else (batch,)
    args = [_normal((*lead, sizes[0]))]
    if with_state:
        h = _normal((*lead, sizes[1]), seed=2)
        args.append((h, _normal((*lead, sizes[1]), seed=3)) if name == "LSTMCell" else h)
    run_twins(module, reference, args)


def test_cell_on_every_device(device):
    reference = torch.nn.LSTMCell(3, 2)
    module = twin(mnn.LSTMCell(3, 2, dtype=mg.float64), reference)
    run_twins(module, reference, [_normal((4, 3)), (_normal((4, 2), 1), _normal((4, 2), 2))], device)


# -- parameters, initialization, repr -------------------------------------------------------------


@pytest.mark.parametrize("mode, options", [
    ("RNN_TANH", {}), ("RNN_RELU", dict(num_layers=3, bias=False)),
    ("GRU", dict(num_layers=2, bidirectional=True)), ("LSTM", dict(num_layers=2, bidirectional=True, proj_size=2)),
    ("LSTM", dict(batch_first=True, dropout=0.25, num_layers=2)),
])
def test_parameters_state_dict_and_repr_match_pytorch(mode, options):
    module, reference = make(mg, mode, 3, 4, **options), make(torch, mode, 3, 4, **options)
    assert [(k, tuple(v.shape)) for k, v in module.state_dict().items()] == [
        (k, tuple(v.shape)) for k, v in reference.state_dict().items()]
    assert [n for n, _ in module.named_parameters()] == [n for n, _ in reference.named_parameters()]
    assert module._flat_weights_names == reference._flat_weights_names
    assert [[tuple(p.shape) for p in ps] for ps in module.all_weights] == [
        [tuple(p.shape) for p in ps] for ps in reference.all_weights]
    assert repr(module) == repr(reference)
    for name, param in module.named_parameters():
        assert param.dtype == np.float32 and param.requires_grad
        assert np.abs(param.data).max() <= 1 / math.sqrt(4), name


@pytest.mark.parametrize("build", [lambda: mnn.GRU(20, 30, num_layers=2), lambda: mnn.LSTMCell(20, 30)])
def test_initialization_is_uniform_within_one_over_sqrt_hidden(build):
    mg.manual_seed(0)
    weights = np.concatenate([p.data.ravel() for p in build().parameters()])
    bound = 1 / math.sqrt(30)
    assert np.abs(weights).max() <= bound and np.abs(weights).max() > 0.99 * bound
    assert abs(weights.mean()) < 0.01 * bound
    np.testing.assert_allclose(weights.std(), bound / math.sqrt(3), rtol=0.02)  # U(-b, b) has std b / sqrt(3)


@pytest.mark.parametrize("name, options", [
    ("RNNCell", {}), ("RNNCell", dict(bias=False, nonlinearity="relu")), ("LSTMCell", {}), ("GRUCell", {}),
])
def test_cell_parameters_and_repr_match_pytorch(name, options):
    module, reference = getattr(mnn, name)(3, 4, **options), getattr(torch.nn, name)(3, 4, **options)
    assert [(k, tuple(v.shape)) for k, v in module.state_dict().items()] == [
        (k, tuple(v.shape)) for k, v in reference.state_dict().items()]
    assert repr(module) == repr(reference)
    assert max(np.abs(p.data).max() for p in module.parameters()) <= 0.5


def test_deepcopy_gives_an_independent_equal_network():
    module = mnn.LSTM(2, 3, num_layers=2, dtype=mg.float64)
    clone = copy.deepcopy(module)
    x = mg.tensor(_normal((4, 1, 2)))
    np.testing.assert_array_equal(clone(x)[0].detach().numpy(), module(x)[0].detach().numpy())
    assert clone.weight_ih_l1 is not module.weight_ih_l1
    clone.weight_ih_l1.data[...] = 0
    assert module.weight_ih_l1.data.any()


# -- dropout between layers -----------------------------------------------------------------------


def test_dropout_applies_between_layers_in_training_only():
    reference = torch.nn.LSTM(2, 3, num_layers=2, dropout=1.0)
    module = twin(mnn.LSTM(2, 3, num_layers=2, dropout=1.0, dtype=mg.float64), reference)
    x = _normal((5, 2, 2))
    reference.eval()
    module.eval()
    run_twins(module, reference, [x])
    # Training with p=1: the second layer sees zeros, so the output is that layer run alone on zeros.
    module.train()
    output, (h_n, _) = module(mg.tensor(x))
    second = mnn.LSTM(3, 3, dtype=mg.float64)
    second.load_state_dict({k.replace("_l1", "_l0"): v for k, v in module.state_dict().items() if "_l1" in k})
    expected, _ = second(mg.zeros(5, 2, 3, dtype=mg.float64))
    np.testing.assert_allclose(output.detach().numpy(), expected.detach().numpy(), **TOL)
    assert h_n.shape == (2, 2, 3)


def test_dropout_is_random_in_training_and_reproducible_with_a_seed():
    module = mnn.GRU(3, 4, num_layers=2, dropout=0.5, dtype=mg.float64)
    x = mg.tensor(_normal((6, 2, 3)))
    mg.manual_seed(3)
    first = module(x)[0].detach().numpy()
    mg.manual_seed(3)
    np.testing.assert_array_equal(module(x)[0].detach().numpy(), first)
    module.eval()
    evaluated = module(x)[0].detach().numpy()
    np.testing.assert_array_equal(module(x)[0].detach().numpy(), evaluated)
    assert not np.allclose(first, evaluated)


def test_single_layer_dropout_warns_like_pytorch():
    with pytest.warns(UserWarning, match="num_layers greater than 1"):
        mnn.GRU(2, 3, dropout=0.5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mnn.GRU(2, 3, num_layers=2, dropout=0.5)


# -- errors ---------------------------------------------------------------------------------------

_F32 = np.float32


def _state(shape, dtype=np.float64):
    return np.zeros(shape, dtype=dtype)


# (description, build(lib), input array, hx built from arrays or None): PyTorch raises the same type.
CALL_ERRORS = [
    ("4-D input", lambda nn: nn.LSTM(3, 4), _state((5, 2, 3, 4)), None),
    ("input features", lambda nn: nn.LSTM(3, 4), _state((5, 2, 5)), None),
    ("empty sequence", lambda nn: nn.GRU(3, 4), _state((0, 2, 3)), None),
    ("input dtype", lambda nn: nn.GRU(3, 4), _state((5, 2, 3)), None),
    ("h0 batch", lambda nn: nn.GRU(3, 4), _state((5, 2, 3), _F32), _state((1, 3, 4), _F32)),
    ("c0 batch", lambda nn: nn.LSTM(3, 4), _state((5, 2, 3), _F32), (_state((1, 2, 4), _F32), _state((1, 3, 4), _F32))),
    ("h0 size with projections", lambda nn: nn.LSTM(3, 4, proj_size=2), _state((5, 2, 3), _F32),
     (_state((1, 2, 4), _F32), _state((1, 2, 4), _F32))),
    ("2-D state for batched input", lambda nn: nn.RNN(3, 4), _state((5, 2, 3), _F32), _state((2, 4), _F32)),
    ("3-D state for unbatched input", lambda nn: nn.LSTM(3, 4), _state((5, 3), _F32),
     (_state((1, 2, 4), _F32), _state((1, 2, 4), _F32))),
    ("state dtype", lambda nn: nn.RNN(3, 4), _state((5, 2, 3), _F32), _state((1, 2, 4))),
    ("cell 3-D input", lambda nn: nn.LSTMCell(3, 4), _state((2, 2, 3), _F32), None),
    ("cell input features", lambda nn: nn.GRUCell(3, 4), _state((2, 5), _F32), None),
    ("cell batch", lambda nn: nn.RNNCell(3, 4), _state((2, 3), _F32), _state((3, 4), _F32)),
    ("cell hidden size", lambda nn: nn.LSTMCell(3, 4), _state((2, 3), _F32),
     (_state((2, 5), _F32), _state((2, 4), _F32))),
    ("cell input dtype", lambda nn: nn.GRUCell(3, 4), _state((2, 3)), None),
    ("cell state dtype", lambda nn: nn.RNNCell(3, 4), _state((2, 3), _F32), _state((2, 4))),
]


@pytest.mark.parametrize("case", CALL_ERRORS, ids=[c[0] for c in CALL_ERRORS])
def test_call_errors_match_pytorch(case):
    _, build, x, hx = case
    with pytest.raises(Exception) as expected:
        build(torch.nn)(*_convert([x, hx], torch.tensor))
    with pytest.raises(expected.type) as raised:
        build(mnn)(*_convert([x, hx], mg.tensor))
    assert type(raised.value) is expected.type
    assert type(build(mnn)).__name__ in str(raised.value), "the message names the layer"


CONSTRUCTOR_ERRORS = [
    ("nonlinearity", lambda nn: nn.RNN(3, 4, nonlinearity="gelu")),
    ("zero hidden_size", lambda nn: nn.GRU(3, 0)),
    ("zero input_size", lambda nn: nn.GRU(0, 3)),
    ("zero num_layers", lambda nn: nn.LSTM(3, 4, num_layers=0)),
    ("float hidden_size", lambda nn: nn.LSTM(3, 4.0)),
    ("float input_size", lambda nn: nn.RNN(3.0, 4)),
    ("dropout above 1", lambda nn: nn.LSTM(3, 4, dropout=2)),
    ("bool dropout", lambda nn: nn.LSTM(3, 4, dropout=True)),
    ("proj_size on RNN", lambda nn: nn.RNN(3, 4, proj_size=2)),
    ("proj_size too large", lambda nn: nn.LSTM(3, 4, proj_size=4)),
    ("negative proj_size", lambda nn: nn.LSTM(3, 4, proj_size=-1)),
]


@pytest.mark.parametrize("case", CONSTRUCTOR_ERRORS, ids=[c[0] for c in CONSTRUCTOR_ERRORS])
def test_constructor_errors_match_pytorch(case):
    _, build = case
    with pytest.raises(Exception) as expected:
        build(torch.nn)
    with pytest.raises(expected.type):
        build(mnn)


def test_clearer_errors_where_pytorch_fails_by_accident():
    """PyTorch raises IndexError/AttributeError here (from indexing a Tensor or a tuple); minigrad a TypeError."""
    x = mg.zeros(5, 2, 3)
    with pytest.raises(TypeError, match=r"pair \(h_0, c_0\)"):
        mnn.LSTM(3, 4)(x, mg.zeros(1, 2, 4))
    with pytest.raises(TypeError, match="hx must be a Tensor"):
        mnn.GRU(3, 4)(x, (mg.zeros(1, 2, 4),))
    with pytest.raises(TypeError, match="input must be a Tensor"):
        mnn.RNN(3, 4)([1.0, 2.0])
    with pytest.raises(ValueError, match="nonlinearity"):  # PyTorch accepts it here and fails when called
        mnn.RNNCell(3, 4, nonlinearity="sigmoid")
