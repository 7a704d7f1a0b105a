"""Small models built from plain-data specs, for property tests.

A spec is a dict (what ``strategies.model_specs`` draws)::

    {"in_features": 3, "hidden": [5, 4], "classes": 3, "activation": "tanh", "unused_branch": False}

``mlp_from_spec(spec)`` builds it; ``functools.partial(mlp_from_spec, spec)``
is a ``model_fn`` that can travel to the ranks of a pool by name.
"""

from __future__ import annotations

import time

from minigrad import nn
from minigrad.autograd import Function

ACTIVATIONS = {"tanh": nn.Tanh, "relu": nn.ReLU, "sigmoid": nn.Sigmoid, "gelu": nn.GELU}


class SpecMLP(nn.Module):
    """An MLP ``in_features -> hidden... -> classes`` with one activation kind between layers.

    With ``spec["unused_branch"]`` it also owns a linear layer the forward
    never uses: DDP then needs ``find_unused_parameters=True``.

    Shapes: input ``(batch, in_features)``, output ``(batch, classes)``.

    Raises:
        KeyError: the spec lacks a key or names an unknown activation.
    """

    def __init__(self, spec: dict):
        super().__init__()
        widths = [spec["in_features"], *spec["hidden"], spec["classes"]]
        activation = ACTIVATIONS[spec["activation"]]
        layers = []
        for i, (a, b) in enumerate(zip(widths[:-1], widths[1:])):
            layers.append(nn.Linear(a, b))
            if i < len(widths) - 2:
                layers.append(activation())
        self.body = nn.Sequential(*layers)
        if spec.get("unused_branch"):
            self.unused = nn.Linear(spec["in_features"], 2)

    def forward(self, x):
        return self.body(x)


def mlp_from_spec(spec: dict, dtype: str = "float64") -> SpecMLP:
    """A ``SpecMLP`` with parameters of ``dtype`` (float64 by default, for tight comparisons).

    Raises:
        ValueError: ``dtype`` is not "float32" or "float64".
    """
    if dtype not in ("float32", "float64"):
        raise ValueError(f"mlp_from_spec: dtype must be 'float32' or 'float64', got {dtype!r}")
    model = SpecMLP(spec)
    return model.double() if dtype == "float64" else model.float()


class _Sleep(Function):
    """Stands in for compute: forward sleeps ``f`` seconds, backward ``b`` (the cores stay free for other ranks)."""

    @staticmethod
    def forward(ctx, x, f, b):
        ctx.b = b
        time.sleep(f)
        return x * 1.0

    @staticmethod
    def backward(ctx, grad):
        time.sleep(ctx.b)
        return grad * 1.0, None, None


class SleepingLinear(nn.Module):
    """A ``width -> width`` Linear whose forward also sleeps ``f`` seconds and backward ``b``.

    A balanced pipeline stage whose time does not depend on how many cores
    the ranks share: what a pipeline's bubble is measured with.
    """

    def __init__(self, width, f, b):
        super().__init__()
        self.linear = nn.Linear(width, width)
        self.f, self.b = f, b

    def forward(self, x):
        return _Sleep.apply(self.linear(x), self.f, self.b)
