"""The distributions built on ``_BroadcastDistribution`` (Normal, Uniform, Gamma, Beta): one constructor and one
``expand`` for all, with each class keeping PyTorch's signature, attributes, reprs and subclassing rules."""

from __future__ import annotations

import inspect

import numpy as np
import pytest
import torch
import torch.distributions as TD

import minigrad as mg
import minigrad.distributions as D

# name -> two valid parameter values
FAMILY = {"Normal": (0.5, 2.0), "Uniform": (0.5, 2.0), "Gamma": (0.5, 2.0), "Beta": (0.5, 2.0)}


def _names_and_defaults(cls) -> list:
    return [(p.name, p.kind, p.default) for p in inspect.signature(cls).parameters.values()]


@pytest.mark.parametrize("name", FAMILY)
def test_signature_and_keywords_are_pytorchs(name):
    ours, theirs = getattr(D, name), getattr(TD, name)
    assert _names_and_defaults(ours) == _names_and_defaults(theirs)  # PyTorch's carry annotations too
    names = list(inspect.signature(theirs).parameters)[:2]
    keywords = dict(zip(names, FAMILY[name]))
    by_keyword = ours(**keywords)
    assert repr(by_keyword) == repr(ours(*FAMILY[name]))
    assert {param: getattr(by_keyword, param).item() for param in names} == keywords
    assert ours.has_rsample is theirs.has_rsample is True


@pytest.mark.parametrize("name", FAMILY)
def test_parameters_broadcast_to_the_batch_shape(name):
    first, second = FAMILY[name]
    cls = getattr(D, name)
    names = list(inspect.signature(cls).parameters)[:2]
    scalar = cls(first, second)
    assert scalar.batch_shape == () and scalar.event_shape == ()
    batched = cls(mg.full((3, 1), first), mg.full((2,), second))
    reference = getattr(TD, name)(torch.full((3, 1), first), torch.full((2,), second))
    assert batched.batch_shape == tuple(reference.batch_shape) == (3, 2)
    for param in names:
        assert tuple(getattr(batched, param).shape) == (3, 2)
    assert sorted(vars(batched)) == sorted(["_batch_shape", "_event_shape", *names])


@pytest.mark.parametrize("name", FAMILY)
def test_expand_gives_views_and_keeps_the_validation_setting(name):
    first, second = FAMILY[name]
    cls = getattr(D, name)
    base = cls(mg.tensor([first]), mg.tensor([second]), validate_args=False)
    expanded = base.expand((4, 1))
    assert type(expanded) is cls and expanded.batch_shape == (4, 1) and expanded._validate_args is False
    for param in list(inspect.signature(cls).parameters)[:2]:
        assert tuple(getattr(expanded, param).shape) == (4, 1)
        assert np.shares_memory(getattr(expanded, param).numpy(), getattr(base, param).numpy())


@pytest.mark.parametrize("name", FAMILY)
def test_subclasses_expand_as_in_pytorch(name):
    args = FAMILY[name]

    class Plain(getattr(D, name)):
        pass

    class CustomInit(getattr(D, name)):
        def __init__(self, *values):
            super().__init__(*values)

    class TorchCustomInit(getattr(TD, name)):
        def __init__(self, *values):
            super().__init__(*values)

    assert type(Plain(*args).expand((2,))) is Plain
    with pytest.raises(NotImplementedError) as theirs:
        TorchCustomInit(*args).expand((2,))
    with pytest.raises(NotImplementedError) as ours:
        CustomInit(*args).expand((2,))
    assert str(ours.value) == str(theirs.value).replace("TorchCustomInit", "CustomInit")
