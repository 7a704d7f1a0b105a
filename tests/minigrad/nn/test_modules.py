"""``minigrad.nn``: the Module API, Parameter, init, layers and losses, with PyTorch as oracle.

The same model definitions are built with ``minigrad.nn`` and ``torch.nn``
(``build(lib)``): names, orders and error reports must agree. Layers are
checked forward and backward against PyTorch in float64 with the weights
copied from the torch layer through ``load_state_dict``.
"""

from __future__ import annotations

import copy
import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import minigrad as mg
from minigrad import backend
from minigrad import nn as mnn
from minigrad.nn import init

DEVICES = ("cpu", "cuda")
TOL = {"rtol": 1e-10, "atol": 1e-10}


@pytest.fixture(params=DEVICES)
def device(request) -> str:
    """The device layer tests run on; "cuda" skips when no GPU can be used."""
    if request.param == "cuda" and not backend.cuda_is_available():
        pytest.skip(backend.cuda_unavailable_reason())
    return request.param


# -- one model definition, built with either library ------------------------------------------


def build(lib):
    """A model exercising every registration path, for ``lib`` = ``minigrad`` or ``torch``."""
    nn = lib.nn

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.scale = nn.Parameter(lib.ones(3, dtype=lib.float64))
            self.fc = nn.Linear(3, 3, dtype=lib.float64)
            self.register_buffer("running", lib.zeros(3, dtype=lib.float64))
            self.register_buffer("scratch", lib.zeros(1, dtype=lib.float64), persistent=False)

        def forward(self, x):
            return self.fc(x) * self.scale + self.running

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(5, 3, dtype=lib.float64)
            self.blocks = nn.ModuleList([Block(), Block()])
            self.head = nn.Sequential(nn.Linear(3, 4, dtype=lib.float64), nn.Tanh(),
                                      nn.Linear(4, 2, dtype=lib.float64))
            self.tied = self.head[0]  # the same module under a second name
            self.register_parameter("unused", None)

        def forward(self, idx):
            x = self.embed(idx)
            for block in self.blocks:
                x = block(x)
            return self.head(x)

    return Net()


def copy_from_torch(model, torch_model):
    """Load ``torch_model``'s state into ``model`` (as NumPy arrays) and return ``model``."""
    state = {k: v.detach().numpy() for k, v in torch_model.state_dict().items()}
    model.load_state_dict(state)
    return model


def test_names_and_orders_match_pytorch():
    model, reference = build(mg), build(torch)
    assert [n for n, _ in model.named_parameters()] == [n for n, _ in reference.named_parameters()]
    assert [n for n, _ in model.named_parameters(remove_duplicate=False)] == [
        n for n, _ in reference.named_parameters(remove_duplicate=False)
    ]
    assert [n for n, _ in model.named_buffers()] == [n for n, _ in reference.named_buffers()]
    assert list(model.state_dict()) == list(reference.state_dict())
    assert [n for n, _ in model.named_modules()] == [n for n, _ in reference.named_modules()]
    assert [n for n, _ in model.named_children()] == [n for n, _ in reference.named_children()]
    assert [n for n, _ in model.blocks[0].named_parameters(prefix="b", recurse=False)] == ["b.scale"]


def test_parameters_are_the_registered_objects_each_once():
    model = build(mg)
    params = list(model.parameters())
    assert len(params) == len({id(p) for p in params}) == 11
    assert params[0] is model.embed.weight and params[-1] is model.head[2].bias
    assert all(isinstance(p, mnn.Parameter) and p.requires_grad and p.is_leaf for p in params)
    assert list(model.blocks[1].parameters(recurse=False)) == [model.blocks[1].scale]
    assert [type(m).__name__ for m in model.children()] == ["Embedding", "ModuleList", "Sequential", "Linear"]
    assert sum(1 for _ in model.modules()) == len(list(build(torch).modules()))
    assert list(model.buffers()) == [model.blocks[0].running, model.blocks[0].scratch,
                                     model.blocks[1].running, model.blocks[1].scratch]


def test_state_dict_shares_memory_and_skips_non_persistent_buffers():
    model = build(mg)
    state = model.state_dict()
    assert "blocks.0.scratch" not in state and "blocks.0.running" in state
    assert "tied.weight" in state and state["tied.weight"].array is model.head[0].weight.array
    assert type(state["embed.weight"]) is mg.Tensor and not state["embed.weight"].requires_grad
    assert state["embed.weight"].array is model.embed.weight.array
    assert model.state_dict(keep_vars=True)["embed.weight"] is model.embed.weight
    assert list(model.state_dict(prefix="net."))[0] == "net.embed.weight"


def test_load_state_dict_round_trip_gives_the_same_function():
    reference = build(torch)
    model = copy_from_torch(build(mg), reference)
    idx = np.array([[0, 4, 2], [1, 1, 3]])
    expected = reference(torch.tensor(idx)).detach().numpy()
    np.testing.assert_allclose(model(mg.tensor(idx)).array, expected, **TOL)
    clone = build(mg)
    result = clone.load_state_dict(model.state_dict())
    assert result.missing_keys == [] and result.unexpected_keys == []
    assert repr(result) == "<All keys matched successfully>"
    np.testing.assert_array_equal(clone(mg.tensor(idx)).array, model(mg.tensor(idx)).array)


def test_load_state_dict_copies_into_existing_arrays_with_their_dtype():
    model = mnn.Linear(2, 3)  # float32
    weight_array = model.weight.array
    model.load_state_dict({"weight": np.ones((3, 2)), "bias": mg.tensor([1.0, 2.0, 3.0], dtype=mg.float64)})
    assert model.weight.array is weight_array and model.weight.dtype == np.float32
    np.testing.assert_array_equal(model.bias.array, [1, 2, 3])
    model.load_state_dict({"weight": np.zeros((3, 2)), "bias": np.zeros(3)}, assign=True)
    assert model.weight.array is not weight_array and model.weight.requires_grad


def test_strict_load_reports_missing_unexpected_and_shape_errors_like_pytorch():
    state = {k: v.detach().numpy() for k, v in build(torch).state_dict().items()}
    del state["head.2.bias"]
    state["blocks.0.extra"] = np.zeros(1)
    state["blocks.1.fc.weight"] = np.zeros((3, 5))
    reference_state = {k: torch.tensor(v) for k, v in state.items()}
    with pytest.raises(RuntimeError) as reference_error:
        build(torch).load_state_dict(reference_state)
    with pytest.raises(RuntimeError) as error:
        build(mg).load_state_dict(state)
    message = str(error.value)
    assert message.startswith("Error(s) in loading state_dict for Net:")
    assert 'Missing key(s) in state_dict: "head.2.bias"' in message
    assert 'Unexpected key(s) in state_dict: "blocks.0.extra"' in message
    assert "size mismatch for blocks.1.fc.weight" in message
    assert "(3, 5)" in message and "(3, 3)" in message
    assert message.count("\n\t") == str(reference_error.value).count("\n\t") == 3


def test_non_strict_load_returns_the_keys_but_still_refuses_shape_mismatches():
    state = {k: v.detach().numpy() for k, v in build(torch).state_dict().items()}
    del state["head.2.bias"]
    state["blocks.0.extra"] = np.zeros(1)
    reference = build(torch).load_state_dict({k: torch.tensor(v) for k, v in state.items()}, strict=False)
    result = build(mg).load_state_dict(state, strict=False)
    assert result.missing_keys == reference.missing_keys
    assert result.unexpected_keys == reference.unexpected_keys
    state["embed.weight"] = np.zeros((2, 2))
    with pytest.raises(RuntimeError, match="size mismatch for embed.weight"):
        build(mg).load_state_dict(state, strict=False)
    with pytest.raises(RuntimeError, match="expected a Tensor or array"):
        mnn.Linear(1, 1).load_state_dict({"weight": [[1.0]], "bias": np.zeros(1)})


def test_zero_grad_sets_to_none_or_zeroes_in_place():
    model = mnn.Linear(3, 2)
    model(mg.randn(4, 3)).sum().backward()
    grad_array = model.weight.grad.array
    model.zero_grad(set_to_none=False)
    assert model.weight.grad.array is grad_array and not grad_array.any()
    model.zero_grad()
    assert model.weight.grad is None and model.bias.grad is None


def test_train_and_eval_propagate_to_every_descendant():
    model = build(mg)
    assert all(m.training for m in model.modules())
    assert model.eval() is model
    assert not any(m.training for m in model.modules())
    model.blocks.train()
    assert model.blocks[1].fc.training and not model.training and not model.head.training
    with pytest.raises(ValueError, match="boolean"):
        model.train("yes")


def test_to_casts_in_place_keeping_parameter_identity():
    model = mnn.Linear(3, 2)
    model.register_buffer("count", mg.tensor([1, 2]))
    weight = model.weight
    model(mg.randn(2, 3)).sum().backward()
    assert model.to(mg.float64) is model
    assert model.weight is weight and weight.dtype == np.float64 and weight.grad.dtype == np.float64
    assert model.count.dtype == np.int64, "integer buffers are not cast"
    assert model.to("cpu").weight is weight and weight.device == "cpu"
    assert model.float().weight.dtype == np.float32
    with pytest.raises(TypeError, match="floating point"):
        model.to(mg.int32)


def test_to_moves_parameters_and_buffers_to_a_device(device):
    model = build(mg).to(device)
    # "cuda" names the current device: tensors report "cuda:0" (as in PyTorch), so compare the types
    assert all(p.device.type == device for p in model.parameters())
    assert all(b.device.type == device for b in model.buffers())
    out = model(mg.tensor(np.array([[1, 2]]), device=device))
    assert out.device.type == device


def test_registration_errors_name_the_problem():
    model = mnn.Linear(2, 2)
    with pytest.raises(KeyError, match="contain"):
        model.register_buffer("a.b", mg.zeros(1))
    with pytest.raises(TypeError, match="Tensor or None"):
        model.register_buffer("b", np.zeros(1))
    with pytest.raises(KeyError, match="already exists"):
        model.register_buffer("weight", mg.zeros(1))
    with pytest.raises(TypeError, match="as parameter 'weight'"):
        model.weight = mg.zeros(2, 2)
    with pytest.raises(TypeError, match="Parameter or None"):
        model.register_parameter("w2", mg.zeros(2))
    with pytest.raises(TypeError, match="not a Module subclass"):
        model.add_module("child", "linear")
    with pytest.raises(AttributeError, match="no attribute 'missing'"):
        _ = model.missing


def test_attribute_assignment_moves_between_registries():
    model = mnn.Module()
    model.w = mnn.Parameter(mg.zeros(2))
    model.register_buffer("b", mg.zeros(2))
    model.b = mg.ones(2)
    assert list(model._buffers) == ["b"] and model.b.array.sum() == 2
    model.w = None
    assert model.w is None and list(model.parameters()) == []
    model.b = mnn.Parameter(mg.zeros(1))  # a Parameter replaces the buffer
    assert list(model._buffers) == [] and [n for n, _ in model.named_parameters()] == ["b"]
    del model.b
    assert not hasattr(model, "b")
    model.sub = mnn.ReLU()
    assert dict(model.named_children()) == {"sub": model.sub}
    assert "sub" in dir(model)


def test_a_module_without_forward_raises():
    with pytest.raises(NotImplementedError, match=r'Module \[Module\] is missing the required "forward"'):
        mnn.Module()(mg.zeros(1))
    with pytest.raises(NotImplementedError, match="forward"):
        mnn.ModuleList([mnn.ReLU()])(mg.zeros(1))


def _hook_log(lib):
    log = []
    layer = lib.nn.Linear(2, 2)
    layer.register_forward_pre_hook(lambda m, args: log.append("pre1"))
    layer.register_forward_pre_hook(lambda m, args: log.append("pre0"), prepend=True)
    layer.register_forward_hook(lambda m, args, out: log.append("post1"))
    layer.register_forward_hook(lambda m, args, kwargs, out: log.append(f"post2 {sorted(kwargs)}"),
                                with_kwargs=True)
    layer(lib.zeros(1, 2))
    return log


def test_hooks_run_in_pytorchs_order():
    assert _hook_log(mg) == _hook_log(torch) == ["pre0", "pre1", "post1", "post2 []"]


def test_hooks_can_replace_inputs_and_outputs_and_be_removed():
    layer = mnn.Identity()
    seen = []
    pre = layer.register_forward_pre_hook(lambda m, args: args[0] * 2)
    post = layer.register_forward_hook(lambda m, args, out: (seen.append(args[0].item()), out + 1)[1])
    assert layer(mg.tensor(3.0)).item() == 7.0 and seen == [6.0]
    pre.remove()
    assert layer(mg.tensor(3.0)).item() == 4.0
    post.remove()
    assert layer(mg.tensor(3.0)).item() == 3.0
    with layer.register_forward_pre_hook(lambda m, a, k: ((a[0] * 10,), k), with_kwargs=True):
        assert layer(mg.tensor(1.0)).item() == 10.0
    assert layer(mg.tensor(1.0)).item() == 1.0


def test_pre_hook_with_kwargs_must_return_a_pair():
    layer = mnn.Identity()
    layer.register_forward_pre_hook(lambda m, a, k: a, with_kwargs=True)
    with pytest.raises(RuntimeError, match=r"tuple of \(new_args, new_kwargs\)"):
        layer(mg.tensor(1.0), mg.tensor(2.0), mg.tensor(3.0))


def test_always_call_hooks_run_when_forward_raises():
    class Failing(mnn.Module):
        def forward(self, x):
            raise ValueError("boom")

    calls = []
    module = Failing()
    module.register_forward_hook(lambda m, a, out: calls.append(("always", out)), always_call=True)
    module.register_forward_hook(lambda m, a, out: calls.append(("normal", out)))
    with pytest.raises(ValueError, match="boom"):
        module(mg.zeros(1))
    assert calls == [("always", None)]


def test_sequential_and_module_list_containers():
    seq = mnn.Sequential(mnn.Linear(2, 3), mnn.ReLU(), mnn.Linear(3, 1))
    assert len(seq) == 3 and isinstance(seq[-1], mnn.Linear) and seq[0] is list(seq)[0]
    head = seq[1:]
    assert isinstance(head, mnn.Sequential) and len(head) == 2 and head[0] is seq[1]
    del seq[1]
    assert [n for n, _ in seq.named_children()] == ["0", "1"]
    seq.insert(1, mnn.Tanh())
    seq.append(mnn.Sigmoid())
    assert [type(m).__name__ for m in seq] == ["Linear", "Tanh", "Linear", "Sigmoid"]
    with pytest.raises(IndexError, match="out of range"):
        seq[4]
    layers = mnn.ModuleList([mnn.Linear(1, 1) for _ in range(3)])
    layers.insert(0, mnn.ReLU())
    layers += [mnn.Tanh()]
    del layers[1]
    assert [n for n, _ in layers.named_children()] == ["0", "1", "2", "3"]
    assert [type(m).__name__ for m in layers[::2]] == ["ReLU", "Linear"]
    assert [n for n, _ in layers.named_parameters()] == ["1.weight", "1.bias", "2.weight", "2.bias"]
    named = mnn.Sequential(dict(first=mnn.ReLU(), second=mnn.Tanh()))
    assert [n for n, _ in named.named_children()] == ["first", "second"]


def test_submodule_lookup_apply_and_deepcopy():
    model = build(mg)
    assert model.get_submodule("blocks.1.fc") is model.blocks[1].fc
    assert model.get_parameter("head.2.bias") is model.head[2].bias
    with pytest.raises(AttributeError, match="no submodule `nope`"):
        model.get_submodule("blocks.nope")
    visited, reference_visited = [], []
    model.apply(lambda m: visited.append(type(m).__name__))
    build(torch).apply(lambda m: reference_visited.append(type(m).__name__))
    assert visited == reference_visited and visited[-1] == "Net"
    clone = copy.deepcopy(model)
    assert clone.embed.weight is not model.embed.weight
    assert isinstance(clone.embed.weight, mnn.Parameter) and clone.embed.weight.requires_grad
    np.testing.assert_array_equal(clone.embed.weight.array, model.embed.weight.array)
    assert clone.tied is clone.head[0], "deepcopy keeps modules shared"


def test_repr_matches_pytorch():
    for lib in (mg, torch):
        lib.manual_seed(0)
    kwargs = dict(kernel_size=3, stride=2, padding=1, groups=2, bias=False)
    assert repr(mnn.Conv2d(4, 6, **kwargs)) == repr(torch.nn.Conv2d(4, 6, **kwargs))
    assert repr(mnn.Sequential(mnn.Linear(2, 3), mnn.GELU("tanh"), mnn.Dropout(0.1))) == repr(
        torch.nn.Sequential(torch.nn.Linear(2, 3), torch.nn.GELU("tanh"), torch.nn.Dropout(0.1))
    )
    assert repr(mnn.LayerNorm((2, 3))) == repr(torch.nn.LayerNorm((2, 3)))
    assert repr(mnn.Embedding(5, 2, padding_idx=-1)) == repr(torch.nn.Embedding(5, 2, padding_idx=-1))


# -- Parameter -------------------------------------------------------------------------------


def test_parameter_is_a_leaf_that_requires_grad_even_under_no_grad():
    with mg.no_grad():
        p = mnn.Parameter(mg.zeros(2))
    assert p.requires_grad and p.is_leaf and p.grad_fn is None
    out = p * 2
    assert type(out) is mg.Tensor and out.grad_fn is not None
    assert mnn.Parameter(np.arange(3), requires_grad=False).dtype == np.int64
    assert mnn.Parameter().shape == (0,)
    assert repr(mnn.Parameter(mg.zeros(1))).startswith("Parameter containing:\ntensor(")
    with pytest.raises(RuntimeError, match="floating point"):
        mnn.Parameter(np.arange(3))


# -- initialization ----------------------------------------------------------------------------


@pytest.mark.parametrize("nonlinearity, param", [
    ("linear", None), ("conv2d", None), ("sigmoid", None), ("tanh", None), ("relu", None),
    ("leaky_relu", None), ("leaky_relu", 0.2), ("selu", None),
])
def test_calculate_gain_matches_pytorch(nonlinearity, param):
    assert init.calculate_gain(nonlinearity, param) == torch.nn.init.calculate_gain(nonlinearity, param)


def test_fan_in_and_fan_out_match_pytorch():
    for shape in [(3, 4), (6, 2, 3, 5), (2, 7, 1)]:
        expected = torch.nn.init._calculate_fan_in_and_fan_out(torch.empty(shape))
        assert init.calculate_fan_in_and_fan_out(mg.empty(*shape)) == expected
    with pytest.raises(ValueError, match="fewer than 2 dimensions"):
        init.calculate_fan_in_and_fan_out(mg.empty(3))


def _assert_uniform(values, bound):
    """Samples fill (-bound, bound) with the uniform distribution's standard deviation."""
    values = np.asarray(values, dtype=np.float64).ravel()
    assert np.abs(values).max() <= bound
    assert np.abs(values).max() > 0.95 * bound
    assert abs(values.std() - bound / math.sqrt(3)) < 0.05 * bound
    assert abs(values.mean()) < 0.05 * bound


def test_default_initializations_follow_pytorchs_distributions():
    mg.manual_seed(0)
    linear = mnn.Linear(200, 100)
    _assert_uniform(linear.weight.array, 1 / math.sqrt(200))
    _assert_uniform(linear.bias.array, 1 / math.sqrt(200))
    assert linear.weight.dtype == np.float32
    conv = mnn.Conv2d(8, 64, (3, 5), groups=2, dtype=mg.float64)
    fan_in = 4 * 3 * 5
    assert conv.weight.shape == (64, 4, 3, 5) and conv.weight.dtype == np.float64
    _assert_uniform(conv.weight.array, 1 / math.sqrt(fan_in))
    _assert_uniform(conv.bias.array, 1 / math.sqrt(fan_in))
    embedding = mnn.Embedding(400, 50, padding_idx=3)
    assert not embedding.weight.array[3].any()
    rows = np.delete(embedding.weight.array, 3, axis=0)
    assert abs(rows.mean()) < 0.02 and abs(rows.std() - 1) < 0.02
    norm = mnn.LayerNorm((2, 3), bias=False)
    assert (norm.weight.array == 1).all() and norm.bias is None


def test_initializers_are_reproducible_under_manual_seed():
    mg.manual_seed(7)
    first = mnn.Linear(5, 4).weight.array.copy()
    mg.manual_seed(7)
    np.testing.assert_array_equal(mnn.Linear(5, 4).weight.array, first)


def test_init_functions_fill_in_place_with_their_bounds():
    mg.manual_seed(1)
    t = mg.empty(300, 200, dtype=mg.float64)
    array = t.array
    assert init.xavier_uniform_(t, gain=2.0) is t and t.array is array
    _assert_uniform(t.array, 2.0 * math.sqrt(6 / 500))
    init.kaiming_uniform_(t, mode="fan_out", nonlinearity="relu")
    _assert_uniform(t.array, math.sqrt(2.0) * math.sqrt(3 / 300))
    init.uniform_(t, -3.0, -1.0)
    assert t.array.min() >= -3.0 and t.array.max() < -1.0
    init.normal_(t, mean=2.0, std=0.5)
    assert abs(t.array.mean() - 2.0) < 0.01 and abs(t.array.std() - 0.5) < 0.01
    init.kaiming_normal_(t)
    assert abs(t.array.std() - math.sqrt(2 / (1 + 0.01**2)) / math.sqrt(200)) < 0.01
    init.xavier_normal_(t)
    assert abs(t.array.std() - math.sqrt(2 / 500)) < 0.005
    assert init.zeros_(t).array.sum() == 0 and init.ones_(t).array.sum() == t.numel()
    with pytest.raises(ValueError, match="mode"):
        init.kaiming_uniform_(t, mode="fan_avg")
    with pytest.raises(ValueError, match="nonlinearity"):
        init.kaiming_uniform_(t, nonlinearity="swish")
    with pytest.raises(NotImplementedError, match="floating point"):  # PyTorch's type
        init.uniform_(mg.zeros(2, dtype=mg.int64))


# -- layers against PyTorch ----------------------------------------------------------------------


def torch_twin(module, torch_module):
    """``module`` with ``torch_module``'s parameters (float64), for a forward/backward comparison."""
    return copy_from_torch(module, torch_module.double())


def compare(module, torch_module, inputs, device, *, grad_inputs=True):
    """Run both modules on ``inputs`` (NumPy arrays) and compare outputs and all gradients."""
    module.to(device)
    float_inputs = [a.dtype.kind == "f" for a in inputs]
    mg_inputs = [mg.tensor(a, device=device, requires_grad=f and grad_inputs)
                 for a, f in zip(inputs, float_inputs)]
    torch_inputs = [torch.tensor(a, requires_grad=f and grad_inputs) for a, f in zip(inputs, float_inputs)]
    out = module(*mg_inputs)
    expected = torch_module(*torch_inputs)
    np.testing.assert_allclose(backend.to_numpy(out.array), expected.detach().numpy(), **TOL)
    upstream = np.random.default_rng(0).standard_normal(expected.shape)
    (out * mg.tensor(upstream, device=device)).sum().backward()
    (expected * torch.tensor(upstream)).sum().backward()
    for name, param in torch_module.named_parameters():
        mine = module.get_parameter(name).grad
        np.testing.assert_allclose(backend.to_numpy(mine.array), param.grad.numpy(), **TOL, err_msg=name)
    for x, tx in zip(mg_inputs, torch_inputs):
        if tx.requires_grad:
            np.testing.assert_allclose(backend.to_numpy(x.grad.array), tx.grad.numpy(), **TOL)


def _normal(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


@settings(max_examples=20, deadline=None)
@given(batch=st.tuples(st.integers(1, 3), st.integers(1, 3)),
       sizes=st.tuples(st.integers(1, 5), st.integers(1, 5)), bias=st.booleans())
def test_linear_matches_pytorch(batch, sizes, bias):
    reference = torch.nn.Linear(*sizes, bias=bias)
    module = torch_twin(mnn.Linear(*sizes, bias=bias, dtype=mg.float64), reference)
    compare(module, reference, [_normal((*batch, sizes[0]))], "cpu")


def test_linear_on_every_device(device):
    reference = torch.nn.Linear(4, 3)
    compare(torch_twin(mnn.Linear(4, 3, dtype=mg.float64), reference), reference, [_normal((2, 4))], device)


@settings(max_examples=20, deadline=None)
@given(
    groups=st.sampled_from([1, 2]), kernel=st.sampled_from([1, 2, 3, (2, 3)]),
    stride=st.sampled_from([1, 2, (2, 1)]),
    padding=st.sampled_from([0, 1, (1, 2), "valid"]), dilation=st.sampled_from([1, 2]), bias=st.booleans(),
    size=st.tuples(st.integers(5, 7), st.integers(5, 7)),
)
def test_conv2d_matches_pytorch(groups, kernel, stride, padding, dilation, bias, size):
    args = dict(kernel_size=kernel, stride=stride, padding=padding, dilation=dilation, groups=groups,
                bias=bias)
    reference = torch.nn.Conv2d(2, 4, **args)
    module = torch_twin(mnn.Conv2d(2, 4, dtype=mg.float64, **args), reference)
    compare(module, reference, [_normal((2, 2, *size))], "cpu")


def test_conv2d_same_padding_on_every_device(device):
    reference = torch.nn.Conv2d(3, 6, (2, 3), padding="same", groups=3, dilation=(2, 1))
    module = torch_twin(mnn.Conv2d(3, 6, (2, 3), padding="same", groups=3, dilation=(2, 1), dtype=mg.float64),
                        reference)
    compare(module, reference, [_normal((2, 3, 5, 6))], device)


def test_conv2d_rejects_bad_configurations():
    with pytest.raises(ValueError, match="divisible by groups"):
        mnn.Conv2d(3, 4, 3, groups=2)
    with pytest.raises(ValueError, match="strided"):
        mnn.Conv2d(2, 2, 3, stride=2, padding="same")
    with pytest.raises(ValueError, match="padding_mode"):
        mnn.Conv2d(2, 2, 3, padding_mode="reflect")
    with pytest.raises(RuntimeError, match="kernel_size"):  # PyTorch's forward raises this type
        mnn.Conv2d(2, 2, (1, 2, 3))


@pytest.mark.parametrize("shape, affine, bias", [
    ((4,), True, True), ((3, 4), True, True), ((4,), False, True), ((3, 4), True, False),
])
def test_layer_norm_matches_pytorch(shape, affine, bias, device):
    reference = torch.nn.LayerNorm(shape, eps=1e-3, elementwise_affine=affine, bias=bias)
    with torch.no_grad():
        for p in reference.parameters():
            p.copy_(torch.randn(p.shape))
    module = torch_twin(mnn.LayerNorm(shape, eps=1e-3, elementwise_affine=affine, bias=bias,
                                      dtype=mg.float64), reference)
    compare(module, reference, [_normal((2, 3, 4))], device)


@pytest.mark.parametrize("padding_idx", [None, 0, -1])
def test_embedding_matches_pytorch_and_skips_the_padding_row(padding_idx, device):
    reference = torch.nn.Embedding(6, 3, padding_idx=padding_idx)
    module = torch_twin(mnn.Embedding(6, 3, padding_idx=padding_idx, dtype=mg.float64), reference)
    indices = np.array([[0, 5, 2, 0], [5, 5, 1, 3]])
    compare(module, reference, [indices], device)
    if padding_idx is not None:
        row = module.padding_idx
        assert not backend.to_numpy(module.weight.grad.array)[row].any()


def test_embedding_from_pretrained_and_unsupported_options():
    weights = mg.tensor(_normal((4, 2)))
    frozen = mnn.Embedding.from_pretrained(weights)
    assert frozen.weight.array is weights.array and not frozen.weight.requires_grad
    assert mnn.Embedding.from_pretrained(weights, freeze=False).weight.requires_grad
    with pytest.raises(ValueError, match="max_norm"):
        mnn.Embedding(4, 2, max_norm=1.0)
    with pytest.raises(AssertionError, match="padding_idx"):
        mnn.Embedding(4, 2, padding_idx=4)
    with pytest.raises(AssertionError, match="_weight"):
        mnn.Embedding(4, 3, _weight=weights)


@pytest.mark.parametrize("make", [
    lambda nn: nn.ReLU(), lambda nn: nn.Tanh(), lambda nn: nn.Sigmoid(), lambda nn: nn.GELU(),
    lambda nn: nn.GELU(approximate="tanh"), lambda nn: nn.Identity(), lambda nn: nn.Flatten(),
    lambda nn: nn.Flatten(0, 1), lambda nn: nn.Dropout(0.3).eval(),
], ids=["relu", "tanh", "sigmoid", "gelu", "gelu_tanh", "identity", "flatten", "flatten01", "dropout_eval"])
def test_parameterless_layers_match_pytorch(make, device):
    compare(make(mnn), make(torch.nn), [_normal((2, 3, 4))], device)


def test_dropout_in_training_zeroes_and_rescales():
    mg.manual_seed(0)
    layer = mnn.Dropout(0.25)
    x = mg.ones(200, 100, dtype=mg.float64, requires_grad=True)
    out = layer(x)
    values = np.unique(out.array)
    np.testing.assert_allclose(values, [0.0, 1 / 0.75])
    assert abs((out.array == 0).mean() - 0.25) < 0.02
    out.sum().backward()
    np.testing.assert_array_equal(x.grad.array, out.array)
    assert layer.eval()(x) is x
    with pytest.raises(ValueError, match="between 0 and 1"):
        mnn.Dropout(1.5)


def _class_problem(seed, shape=(5, 4)):
    rng = np.random.default_rng(seed)
    logits = rng.standard_normal(shape)
    target = rng.integers(0, shape[1], size=(shape[0], *shape[2:]))
    target[0] = 1  # at least one target that is not ignored
    return logits, target


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("smoothing", [0.0, 0.2])
def test_cross_entropy_loss_matches_pytorch(reduction, weighted, smoothing):
    logits, target = _class_problem(1)
    target[3] = 2
    weight = np.array([0.5, 2.0, 1.0, 3.0]) if weighted else None
    kwargs = dict(ignore_index=2, reduction=reduction, label_smoothing=smoothing)
    reference = torch.nn.CrossEntropyLoss(weight=None if weight is None else torch.tensor(weight), **kwargs)
    module = mnn.CrossEntropyLoss(weight=None if weight is None else mg.tensor(weight), **kwargs)
    compare(module, reference, [logits, target], "cpu")


def test_cross_entropy_loss_with_spatial_targets(device):
    logits, target = _class_problem(2, shape=(2, 3, 4, 2))
    compare(mnn.CrossEntropyLoss(), torch.nn.CrossEntropyLoss(), [logits, target], device)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_nll_loss_matches_pytorch(reduction, device):
    logits, target = _class_problem(3)
    log_probs = logits - np.log(np.exp(logits).sum(1, keepdims=True))
    weight = np.array([1.0, 0.5, 2.0, 1.5])
    reference = torch.nn.NLLLoss(weight=torch.tensor(weight), ignore_index=0, reduction=reduction)
    module = mnn.NLLLoss(weight=mg.tensor(weight), ignore_index=0, reduction=reduction)
    compare(module, reference, [log_probs, target], device)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_mse_loss_matches_pytorch(reduction, device):
    compare(mnn.MSELoss(reduction), torch.nn.MSELoss(reduction=reduction),
            [_normal((3, 4), 0), _normal((3, 4), 1)], device)


def test_loss_weight_is_a_buffer_and_options_are_checked():
    loss = mnn.CrossEntropyLoss(weight=mg.tensor([1.0, 2.0]))
    assert [n for n, _ in loss.named_buffers()] == ["weight"]
    assert mnn.NLLLoss().weight is None
    with pytest.raises(ValueError, match="reduction"):
        mnn.MSELoss("average")
    with pytest.raises(RuntimeError, match="label_smoothing"):
        mnn.CrossEntropyLoss(label_smoothing=1.5)
    with pytest.raises(TypeError, match="weight must be a Tensor"):
        mnn.NLLLoss(weight=[1.0, 2.0])


def test_a_small_model_trains_like_pytorch():
    """End to end: the same MLP, the same data, five SGD steps, the same losses."""
    torch.manual_seed(0)
    reference = torch.nn.Sequential(torch.nn.Linear(3, 8), torch.nn.GELU(), torch.nn.LayerNorm(8),
                                    torch.nn.Linear(8, 2)).double()
    model = copy_from_torch(mnn.Sequential(mnn.Linear(3, 8), mnn.GELU(), mnn.LayerNorm(8), mnn.Linear(8, 2)),
                            reference).double()
    x, y = _normal((6, 3)), np.array([0, 1, 1, 0, 1, 0])
    optimizer = mg.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    reference_optimizer = torch.optim.SGD(reference.parameters(), lr=0.1, momentum=0.9)
    loss_fn, reference_loss_fn = mnn.CrossEntropyLoss(), torch.nn.CrossEntropyLoss()
    for _ in range(5):
        optimizer.zero_grad()
        reference_optimizer.zero_grad()
        loss = loss_fn(model(mg.tensor(x)), mg.tensor(y))
        reference_loss = reference_loss_fn(reference(torch.tensor(x)), torch.tensor(y))
        loss.backward()
        reference_loss.backward()
        optimizer.step()
        reference_optimizer.step()
        assert loss.item() == pytest.approx(reference_loss.item(), rel=1e-10)
