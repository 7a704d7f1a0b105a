"""``nn.ModuleDict``, ``nn.ParameterList``, ``nn.ParameterDict`` and ``nn.Buffer`` against PyTorch.

The same model is built with both libraries: the containers' items must be
registered (``parameters()``, ``named_parameters()``, ``state_dict()`` keys
and order, ``to()``), behave as dicts and lists do, print like PyTorch's,
and raise PyTorch's exception types.
"""

from __future__ import annotations

from collections import OrderedDict

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import minigrad as mg
from minigrad import nn as mnn

LIBS = {"minigrad": (mg, mnn), "torch": (torch, torch.nn)}


def _model(lib, nn):
    """A module holding every container: the same definition in both libraries."""

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.heads = nn.ModuleDict({"query": nn.Linear(2, 3), "key": nn.Linear(2, 3, bias=False)})
            self.scales = nn.ParameterList([nn.Parameter(lib.ones(3)), lib.zeros(2, 2)])
            self.extras = nn.ParameterDict(OrderedDict([("beta", lib.zeros(3)), ("alpha", nn.Parameter(lib.ones(1)))]))

        def forward(self, x):
            q = self.heads["query"](x) * self.scales[0]
            return q + self.heads["key"](x) + self.extras["beta"] + self.extras["alpha"] + self.scales[1].sum()

    return Model()


def test_registration_and_state_dict_keys_match_pytorch():
    mine, theirs = _model(*LIBS["minigrad"]), _model(*LIBS["torch"])
    assert list(mine.state_dict()) == list(theirs.state_dict())
    assert [n for n, _ in mine.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    assert [tuple(p.shape) for p in mine.parameters()] == [tuple(p.shape) for p in theirs.parameters()]
    # the plain tensors became parameters that require grad
    assert isinstance(mine.scales[1], mnn.Parameter) and mine.scales[1].requires_grad
    assert isinstance(mine.extras["beta"], mnn.Parameter)


def test_forward_backward_through_containers_matches_pytorch():
    torch.manual_seed(0)  # the same initial weights every run: the comparison is deterministic
    mine, theirs = _model(*LIBS["minigrad"]), _model(*LIBS["torch"])
    mine.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
    x = np.random.default_rng(0).standard_normal((4, 2)).astype(np.float32)
    out, expected = mine(mg.tensor(x)), theirs(torch.tensor(x))
    # atol: an output summed from terms of order 1 can cancel to near zero, where float32 rounding is absolute
    np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), rtol=1e-6, atol=1e-6)
    out.sum().backward()
    expected.sum().backward()
    for (name, p), (_, q) in zip(mine.named_parameters(), theirs.named_parameters()):
        # atol: a sum over the batch may cancel to near zero, where float32 rounding is relative to the terms
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-6, atol=1e-6, err_msg=name)


def test_to_double_reaches_container_parameters():
    model = _model(*LIBS["minigrad"]).double()
    assert all(p.dtype == np.float64 for p in model.parameters())
    assert model.scales[1].dtype == np.float64 and model.extras["alpha"].dtype == np.float64


def test_reprs_match_pytorch():
    for build in (
        lambda lib, nn: nn.ParameterList([lib.zeros(2, 3), "x", nn.Parameter(lib.zeros(1, dtype=lib.float64))]),
        lambda lib, nn: nn.ParameterList([lib.zeros(2)]),
        lambda lib, nn: nn.ParameterList(),
        lambda lib, nn: nn.ParameterDict({"b": lib.zeros(1), "a": lib.zeros(2, dtype=lib.float64)}),
        lambda lib, nn: nn.ParameterDict(),
        lambda lib, nn: nn.ModuleDict({"b": nn.ReLU(), "a": nn.Tanh()}),
        _model,
    ):
        assert repr(build(*LIBS["minigrad"])) == repr(build(*LIBS["torch"]))


def test_module_dict_behaves_as_an_ordered_dict():
    d = mnn.ModuleDict([("b", mnn.ReLU()), ("a", mnn.Tanh())])
    assert list(d) == list(d.keys()) == ["b", "a"] and len(d) == 2 and "a" in d and "c" not in d
    d["c"] = mnn.Linear(1, 1)
    d.update({"d": mnn.Identity()})
    d.update(mnn.ModuleDict({"e": mnn.Identity()}))
    assert list(d) == ["b", "a", "c", "d", "e"]
    assert [type(m).__name__ for m in d.values()] == ["ReLU", "Tanh", "Linear", "Identity", "Identity"]
    assert [k for k, _ in d.items()] == list(d)
    linear = d.pop("c")
    assert isinstance(linear, mnn.Linear) and "c" not in d and not list(d.parameters())
    del d["b"]
    assert list(d) == ["a", "d", "e"]
    d.clear()
    assert len(d) == 0


def test_parameter_list_behaves_as_a_list():
    p = mnn.ParameterList([mg.zeros(1), mg.zeros(2)])
    p.append(mg.zeros(3))
    p += [mg.zeros(4)]
    p.extend((mg.zeros(5),))
    assert len(p) == 5 and [t.shape[0] for t in p] == [1, 2, 3, 4, 5]
    assert p[-1].shape == (5,)
    head = p[1:4:2]
    assert isinstance(head, mnn.ParameterList) and [t.shape[0] for t in head] == [2, 4]
    assert head[0] is p[1]  # a slice shares the parameters
    replacement = mnn.Parameter(mg.ones(7))
    p[0] = replacement
    assert p[0] is replacement and next(iter(p.parameters())) is replacement
    assert [n for n, _ in p.named_parameters()] == ["0", "1", "2", "3", "4"]


def test_parameter_dict_behaves_as_a_dict():
    d = mnn.ParameterDict({"b": mg.zeros(1), "a": mg.zeros(2)})  # a plain dict is added in sorted order
    assert list(d) == ["a", "b"] and list(reversed(d)) == ["b", "a"]
    d.update([("z", mg.zeros(3)), ("c", mg.zeros(4))])  # pairs keep their order
    assert list(d) == ["a", "b", "z", "c"]
    assert d.get("missing") is None and d.get("a") is d["a"]
    assert d.setdefault("n", mg.ones(1)) is d["n"]
    key, value = d.popitem()
    assert key == "n" and value.shape == (1,) and "n" not in d
    assert d.pop("z").shape == (3,) and "z" not in d
    copy = d.copy()
    assert list(copy) == list(d) and all(copy[k] is d[k] for k in d)
    merged = d | {"m": mg.zeros(1)}
    assert list(merged) == ["a", "b", "c", "m"] and "m" not in d
    d |= {"q": mg.zeros(1)}
    assert "q" in d
    keys = mnn.ParameterDict().fromkeys(["x", "y"], mg.zeros(1))
    assert list(keys) == ["x", "y"]
    assert [k for k, _ in d.items()] == list(d.keys()) and len(list(d.values())) == len(d)
    d.clear()
    assert len(d) == 0 and not list(d.parameters())


@settings(max_examples=15, deadline=None)
@given(st.lists(st.tuples(st.sampled_from("abcde"), st.integers(1, 3)), max_size=6))
def test_parameter_dict_updates_like_pytorch(pairs):
    """The same sequence of assignments leaves the same keys, order and shapes in both libraries."""
    mine, theirs = mnn.ParameterDict(), torch.nn.ParameterDict()
    for key, size in pairs:
        mine[key] = mg.zeros(size)
        theirs[key] = torch.zeros(size)
    assert list(mine) == list(theirs)
    assert [tuple(v.shape) for v in mine.values()] == [tuple(v.shape) for v in theirs.values()]
    assert list(mine.state_dict()) == list(theirs.state_dict())


ERRORS = [
    lambda lib, nn: nn.ModuleDict({"a": nn.ReLU()})["b"],
    lambda lib, nn: nn.ModuleDict([("a", nn.ReLU(), 3)]),
    lambda lib, nn: nn.ModuleDict(3),
    lambda lib, nn: nn.ModuleDict([3]),
    lambda lib, nn: nn.ModuleDict().__setitem__("x", 3),
    lambda lib, nn: nn.ModuleDict().__setitem__(1, nn.ReLU()),
    lambda lib, nn: nn.ModuleDict().__setitem__("a.b", nn.ReLU()),
    lambda lib, nn: nn.ModuleDict()(lib.zeros(1)),
    lambda lib, nn: nn.ParameterList([lib.zeros(1)])[3],
    lambda lib, nn: nn.ParameterList([lib.zeros(1)])["0"],
    lambda lib, nn: nn.ParameterList(3),
    lambda lib, nn: nn.ParameterList(lib.zeros(2)),
    lambda lib, nn: nn.ParameterList()(lib.zeros(1)),
    lambda lib, nn: nn.ParameterDict({"a": lib.zeros(1)})[1],
    lambda lib, nn: nn.ParameterDict({"a": lib.zeros(1)})["b"],
    lambda lib, nn: nn.ParameterDict([(1,)]),
    lambda lib, nn: nn.ParameterDict(3),
    lambda lib, nn: nn.ParameterDict()(lib.zeros(1)),
    lambda lib, nn: nn.ParameterDict().pop("missing"),
]


@pytest.mark.parametrize("program", ERRORS, ids=range(len(ERRORS)))
def test_errors_match_pytorch(program):
    with pytest.raises(Exception) as expected:
        program(*LIBS["torch"])
    with pytest.raises(expected.type):
        program(*LIBS["minigrad"])


def test_buffer_assignment_registers_a_buffer():
    for lib, nn in LIBS.values():
        m = nn.Module()
        m.kept = nn.Buffer(lib.ones(2))
        m.scratch = nn.Buffer(lib.zeros(3), persistent=False)
        assert [name for name, _ in m.named_buffers()] == ["kept", "scratch"]
        assert list(m.state_dict()) == ["kept"]
        assert not list(m.parameters())
    m = mnn.Module()
    m.kept = mnn.Buffer(mg.ones(2))
    assert m.double().kept.dtype == np.float64
    assert mnn.Buffer().shape == (0,) and mnn.Buffer().dtype == np.float32
    grad_buffer = mnn.Buffer(mg.zeros(2, requires_grad=True))
    assert grad_buffer.requires_grad
    with pytest.raises(TypeError):
        mnn.Buffer(3)
    m.plain = 1
    with pytest.raises(KeyError):  # as register_buffer over an existing attribute
        m.plain = mnn.Buffer(mg.ones(1))


def test_reassigning_a_child_or_parameter_keeps_its_place_as_in_pytorch():
    """A Sequential whose layer 0 is replaced must still run it first (and state_dict keep its order)."""
    orders = []
    for lib, nn_ in (LIBS["minigrad"], LIBS["torch"]):
        seq = nn_.Sequential(nn_.Linear(2, 3), nn_.ReLU(), nn_.Linear(3, 1))
        seq[0] = nn_.Linear(2, 3)
        setattr(seq, "2", nn_.Linear(3, 1))
        layer = nn_.Linear(2, 2)
        layer.weight = nn_.Parameter(lib.ones(2, 2))
        orders.append((list(seq._modules), list(seq.state_dict()), [n for n, _ in layer.named_parameters()]))
    assert orders[0] == orders[1]
    assert orders[0][0] == ["0", "1", "2"]
