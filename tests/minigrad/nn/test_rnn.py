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
        np.testing.assert_allclose(backend.to_numpy(mine.array), theirs.detach().numpy(), **TOL)
        upstream = rng.standard_normal(theirs.shape)
        mg_loss = mg_loss + (mine * mg.tensor(upstream, device=device)).sum()
        torch_loss = torch_loss + (theirs * torch.tensor(upstream)).sum()
    mg_loss.backward()
    torch_loss.backward()
    for name, param in reference.named_parameters():
        mine = module.get_parameter(name).grad
        assert mine is not None, name
        np.testing.assert_allclose(backend.to_numpy(mine.array), param.grad.numpy(), **TOL, err_msg=name)
    for mine, theirs in zip(_leaves((mg_args, mg_kwargs)), _leaves((torch_args, torch_kwargs))):
        np.testing.assert_allclose(backend.to_numpy(mine.grad.array), theirs.grad.numpy(), **TOL)
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
        assert np.abs(param.array).max() <= 1 / math.sqrt(4), name


@pytest.mark.parametrize("build", [lambda: mnn.GRU(20, 30, num_layers=2), lambda: mnn.LSTMCell(20, 30)])
def test_initialization_is_uniform_within_one_over_sqrt_hidden(build):
    mg.manual_seed(0)
    weights = np.concatenate([p.array.ravel() for p in build().parameters()])
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
    assert max(np.abs(p.array).max() for p in module.parameters()) <= 0.5


def test_deepcopy_gives_an_independent_equal_network():
    module = mnn.LSTM(2, 3, num_layers=2, dtype=mg.float64)
    clone = copy.deepcopy(module)
    x = mg.tensor(_normal((4, 1, 2)))
    np.testing.assert_array_equal(clone(x)[0].detach().numpy(), module(x)[0].detach().numpy())
    assert clone.weight_ih_l1 is not module.weight_ih_l1
    clone.weight_ih_l1.array[...] = 0
    assert module.weight_ih_l1.array.any()


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
    with pytest.raises(RuntimeError, match="nonlinearity"):  # PyTorch accepts it here; its call raises this
        mnn.RNNCell(3, 4, nonlinearity="sigmoid")


# -- the fused layers (minigrad.ops.rnn) through the modules ------------------------------------------


def _second_order(module, reference, data, state=None):
    """Backward of a function of the input gradient (taken with create_graph=True), in both libraries."""
    x, tx = mg.tensor(data, requires_grad=True), torch.tensor(data, requires_grad=True)

    def loss(output):
        out, final = output
        final = final[0] if isinstance(final, tuple) else final
        return (out * out).sum() + final.tanh().sum()

    args = () if state is None else (_convert(state, mg.tensor),)
    targs = () if state is None else (_convert(state, torch.tensor),)
    (g,) = mg.autograd.grad(loss(module(x, *args)), x, create_graph=True)
    (tg,) = torch.autograd.grad(loss(reference(tx, *targs)), tx, create_graph=True)
    np.testing.assert_allclose(g.detach().numpy(), tg.detach().numpy(), **TOL)
    (g**2).sum().backward()
    (tg**2).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), **TOL)
    for name, param in reference.named_parameters():
        np.testing.assert_allclose(module.get_parameter(name).grad.numpy(), param.grad.numpy(), **TOL,
                                   err_msg=name)


@pytest.mark.parametrize("mode, options", [
    ("LSTM", dict(num_layers=2, bidirectional=True)), ("LSTM", dict(bidirectional=True, proj_size=2)),
    ("RNN_TANH", dict(num_layers=2, bidirectional=True)), ("RNN_RELU", dict(bidirectional=True, bias=False)),
    ("GRU", dict(num_layers=2)),
])
def test_second_order_gradients_of_every_mode_match_pytorch(mode, options):
    reference = make(torch, mode, 2, 3, **options)
    module = twin(make(mg, mode, 2, 3, dtype=mg.float64, **options), reference)
    _second_order(module, reference, _normal((4, 2, 2)))


@pytest.mark.parametrize("name", ["RNNCell", "LSTMCell", "GRUCell"])
def test_second_order_gradients_of_cells_match_pytorch(name):
    reference = getattr(torch.nn, name)(2, 3)
    module = twin(getattr(mnn, name)(2, 3, dtype=mg.float64), reference)
    data = _normal((4, 2))
    x, tx = mg.tensor(data, requires_grad=True), torch.tensor(data, requires_grad=True)

    def loss(out):
        return (out[0] * out[1]).sum() if isinstance(out, tuple) else (out**3).sum()

    (g,) = mg.autograd.grad(loss(module(x)), x, create_graph=True)
    (tg,) = torch.autograd.grad(loss(reference(tx)), tx, create_graph=True)
    g.sum().backward()
    tg.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), **TOL)
    for pname, param in reference.named_parameters():
        np.testing.assert_allclose(module.get_parameter(pname).grad.numpy(), param.grad.numpy(), **TOL)


def test_first_order_gradients_agree_with_and_without_create_graph():
    """The raw-array backward and the recorded one (create_graph) compute the same gradients."""
    module = mnn.LSTM(3, 4, num_layers=2, bidirectional=True, proj_size=2, dtype=mg.float64)
    x = mg.tensor(_normal((6, 2, 3)), requires_grad=True)
    params = [x, *module.parameters()]
    plain = mg.autograd.grad(module(x)[0].tanh().sum(), params)
    recorded = mg.autograd.grad(module(x)[0].tanh().sum(), params, create_graph=True)
    for a, b in zip(plain, recorded):
        assert b.requires_grad
        np.testing.assert_allclose(a.numpy(), b.detach().numpy(), rtol=1e-12, atol=1e-14)


def _graph_nodes(tensor) -> list:
    nodes, seen, pending = [], set(), [tensor.grad_fn]
    while pending:
        node = pending.pop()
        if id(node) not in seen:
            seen.add(id(node))
            nodes.append(node)
            pending.extend(edge[0] for edge in node.next_edges if edge is not None)
    return nodes


@pytest.mark.parametrize("mode", MODES)
def test_graph_size_does_not_grow_with_the_sequence(mode):
    """One fused node per layer and direction, whatever the length: no per-step nodes."""
    module = make(mg, mode, 3, 4, num_layers=2, bidirectional=True)
    fused = {"LSTM": "LSTMLayer", "GRU": "GRULayer"}.get(mode, "RNNLayer")
    counts = []
    for steps in (2, 40):
        nodes = _graph_nodes(module(mg.randn(steps, 2, 3))[0].sum())
        assert sum(type(n).__name__ == fused for n in nodes) == 4
        counts.append(len(nodes))
    assert counts[0] == counts[1]


def test_in_place_write_to_the_output_leaves_the_backward_intact():
    """As in PyTorch, the layer's backward does not read its output tensor: writing to it is allowed."""
    reference = torch.nn.LSTM(2, 3)
    module = twin(mnn.LSTM(2, 3, dtype=mg.float64), reference)
    data = _normal((5, 2, 2))
    x, tx = mg.tensor(data, requires_grad=True), torch.tensor(data, requires_grad=True)
    (out, (h, _)), (tout, (th, _)) = module(x), reference(tx)
    loss, tloss = out.sum() + h.sum(), tout.sum() + th.sum()
    out.mul_(0)
    h.mul_(0)
    tout.mul_(0)
    th.mul_(0)
    loss.backward()
    tloss.backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), **TOL)
    np.testing.assert_allclose(module.weight_hh_l0.grad.numpy(), reference.weight_hh_l0.grad.numpy(), **TOL)


@pytest.mark.parametrize("lib", [torch, mg], ids=["torch", "minigrad"])
def test_in_place_write_to_the_initial_state_raises_at_backward(lib):
    lstm = lib.nn.LSTM(2, 3)
    h0 = lib.zeros(1, 2, 3, requires_grad=True).clone()
    out, _ = lstm(lib.ones(4, 2, 2), (h0, lib.zeros(1, 2, 3)))
    h0.add_(1)
    with pytest.raises(RuntimeError, match="inplace|in-place"):
        out.sum().backward()


def test_in_place_write_to_a_recurrent_weight_raises_at_backward():
    gru = mnn.GRU(2, 3)
    out, _ = gru(mg.ones(4, 2, 2))
    with mg.no_grad():
        gru.weight_hh_l0.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.sum().backward()


def test_backward_twice_with_retain_graph_accumulates_like_pytorch():
    reference = torch.nn.GRU(2, 3, bidirectional=True)
    module = twin(mnn.GRU(2, 3, bidirectional=True, dtype=mg.float64), reference)
    data = _normal((4, 2, 2))
    loss, tloss = module(mg.tensor(data))[0].sum(), reference(torch.tensor(data))[0].sum()
    for _ in range(2):
        loss.backward(retain_graph=True)
        tloss.backward(retain_graph=True)
    for name, param in reference.named_parameters():
        np.testing.assert_allclose(module.get_parameter(name).grad.numpy(), param.grad.numpy(), **TOL)
    with pytest.raises(RuntimeError, match="second time"):
        loss.backward()
        loss.backward()


@pytest.mark.parametrize("mode", MODES)
def test_saturated_gates_match_pytorch_without_warnings(mode):
    """Pre-activations of +-1e4: sigmoid's e**-x overflows to inf internally, which must give exact 0 quietly."""
    reference = make(torch, mode, 2, 3)
    module = twin(make(mg, mode, 2, 3, dtype=mg.float64), reference)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        run_twins(module, reference, [_normal((5, 2, 2)) * 1e4])


@pytest.mark.parametrize("mode", MODES)
def test_float32_language_model_step_matches_pytorch(mode):
    """The benchmark's shapes in float32: outputs and gradients within float32 rounding."""
    reference = make(torch, mode, 16, 32, num_layers=2)
    module = make(mg, mode, 16, 32, num_layers=2)
    module.load_state_dict({k: v.detach().numpy() for k, v in reference.state_dict().items()})
    data = _normal((12, 5, 16)).astype(np.float32)
    out, tout = module(mg.tensor(data))[0], reference(torch.tensor(data))[0]
    np.testing.assert_allclose(out.detach().numpy(), tout.detach().numpy(), rtol=1e-4, atol=1e-5)
    (out * out).sum().backward()
    (tout * tout).sum().backward()
    for name, param in reference.named_parameters():
        np.testing.assert_allclose(module.get_parameter(name).grad.numpy(), param.grad.numpy(), rtol=1e-3,
                                   atol=1e-4, err_msg=name)


def test_fused_layer_rejects_an_unknown_nonlinearity():
    from minigrad.ops.rnn import RNNLayer  # noqa: PLC0415

    with pytest.raises(ValueError, match="RNNLayer: unknown nonlinearity 'gelu'"):
        RNNLayer("gelu")
