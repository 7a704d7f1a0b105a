"""Op cases for ``F.group_norm`` (the ``layer_norm`` op over channel groups) and ``F.instance_norm``
(the ``batch_norm`` op over the input viewed as one sample of N * C channels), in ``minigrad.nn.group_norm``.

Each case is checked by gradcheck and against PyTorch; ``*_double_backward``
checks second-order gradients.
"""

# ruff: noqa: N803  (programs take the functional module as ``F``, as in ``import ... as F``)
from __future__ import annotations

import math

from hypothesis import strategies as st

from tests.minigrad.ops.op_cases import case


def grads_of(lib, loss_fn, inputs):
    """d loss / d inputs with ``create_graph=True`` (grad mode forced on: gradcheck may run under no_grad)."""
    with lib.enable_grad():
        return lib.autograd.grad(loss_fn(), inputs, create_graph=True)


@st.composite
def group_shapes(draw):
    """x (N, C, *spatial) with 0 to 2 spatial dims, weight and bias (C,)."""
    c = draw(st.sampled_from([1, 2, 3, 4, 6]))
    spatial = tuple(draw(st.lists(st.integers(1, 3), max_size=2)))
    n = draw(st.integers(1 if math.prod(spatial) > 1 else 2, 2))  # PyTorch refuses one value per group overall
    return (n, c) + spatial, (c,), (c,)


def group_params(drawn):
    """A number of groups dividing C."""
    c = drawn[0][1]
    return st.sampled_from([g for g in range(1, c + 1) if c % g == 0]).map(lambda g: {"groups": g})


def _group_norm(lib, F, x, w, b, params):
    return F.group_norm(x, params["groups"], w, b, eps=1e-3)


@st.composite
def instance_shapes(draw):
    """x (N, C, *spatial) with 1 or 2 spatial dims holding more than one value, weight and bias (C,)."""
    c = draw(st.integers(1, 3))
    spatial = tuple(draw(st.lists(st.integers(1, 3), min_size=1, max_size=2).filter(
        lambda s: s[0] * s[-1] > 1)))
    return (draw(st.integers(1, 2)), c) + spatial, (c,), (c,)


case("layer_norm", _group_norm, group_shapes(), extra={"params": group_params}, name="group_norm")
case("layer_norm",
     lambda lib, F, x, w, b, params: grads_of(lib, lambda: (_group_norm(lib, F, x, w, b, params) ** 3).sum(),
                                              (x, w, b)),
     group_shapes(), extra={"params": group_params}, name="group_norm_double_backward")
case("batch_norm", lambda lib, F, x, w, b: F.instance_norm(x, weight=w, bias=b, eps=1e-3), instance_shapes(),
     name="instance_norm")
case("batch_norm", lambda lib, F, x: F.instance_norm(x), instance_shapes().map(lambda s: s[:1]),
     name="instance_norm_no_affine")
