"""Op cases for ``minigrad.ops.logistic``: the stable log-sigmoid and the fused binary cross-entropy.

Both ops are reached through the public functions (``F.binary_cross_entropy``,
``F.binary_cross_entropy_with_logits``, which records ``LogSigmoid``);
programs named ``*_double_backward`` check each backward as a function.
"""

# ruff: noqa: N803  (programs take the functional module as ``F``)
from __future__ import annotations

from hypothesis import strategies as st

from tests.minigrad.ops.cases_nn import const, grads_of, same_shape
from tests.minigrad.ops.op_cases import case

REDUCTIONS = st.sampled_from(["mean", "sum", "none"])


def _weight_params(shapes):
    """A reduction and maybe a positive weight of the input's shape or of its last dimension."""
    shape = shapes[0]
    weights = st.one_of(
        st.none(),
        st.lists(st.floats(0.5, 2.0), min_size=shape[-1], max_size=shape[-1]),
    )
    return st.fixed_dictionaries({"reduction": REDUCTIONS, "weight": weights, "pos_weight": weights})


def _bce(lib, F, x, y, params):
    weight = None if params["weight"] is None else const(lib, x, params["weight"], float_dtype=True)
    return F.binary_cross_entropy(x, y, weight, reduction=params["reduction"])


def _bce_logits(lib, F, x, y, params):
    weight = None if params["weight"] is None else const(lib, x, params["weight"], float_dtype=True)
    pos = None if params["pos_weight"] is None else const(lib, x, params["pos_weight"], float_dtype=True)
    return F.binary_cross_entropy_with_logits(x, y, weight, reduction=params["reduction"], pos_weight=pos)


# Probabilities and targets are drawn in (0.05, 0.95): the loss is smooth there.
case("binary_cross_entropy", _bce, same_shape(2), low=0.05, high=0.95, extra={"params": _weight_params})
case("binary_cross_entropy",
     lambda lib, F, x, y, w: grads_of(lib, lambda: (F.binary_cross_entropy(x, y, reduction="none") * w).sum(),
                                      (x, y)),
     # PyTorch's second derivative adds 1e-12 to x(1 - x) in a denominator, so each term of size up to
     # w / (x(1 - x)) <= 11 is off by up to 1.2e-11 relative; where two terms cancel (x = y) its sum is
     # about 1e-10 from the exact one minigrad computes (hypothesis found x = y = w = 0.5 at 1.6e-11).
     same_shape(3), low=0.1, high=0.9, name="binary_cross_entropy_double_backward", grad_atol=1e-9)
case("log_sigmoid", _bce_logits, same_shape(2), low=-4.0, high=4.0, extra={"params": _weight_params},
     name="binary_cross_entropy_with_logits")
case("log_sigmoid",
     lambda lib, F, x, y: grads_of(lib, lambda: F.binary_cross_entropy_with_logits(x, y, reduction="sum"),
                                   (x, y)),
     same_shape(2), low=-4.0, high=4.0, name="binary_cross_entropy_with_logits_double_backward")
case("log_sigmoid", lambda lib, F, x: F.logsigmoid(x), same_shape(1), low=-30.0, high=30.0, name="logsigmoid")
case("log_sigmoid",
     lambda lib, F, x, w: grads_of(lib, lambda: (F.logsigmoid(x) * w).sum(), (x,))[0],
     same_shape(2), low=-6.0, high=6.0, name="logsigmoid_double_backward")
