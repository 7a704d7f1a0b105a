"""Op cases for padding (``F.pad``): the ``constant_pad`` op, and the gathering modes (``index``).

Constant padding draws amounts in [-2, 3] for up to every dimension, with
crops never larger than the dimension (PyTorch's limit); the other modes
draw amounts each mode accepts for inputs of 2 to 5 dimensions. Each is
checked by gradcheck and against PyTorch; ``*_double_backward`` checks the
backward of the backward (constant padding's backward is itself a
``ConstantPad``).
"""

# ruff: noqa: N803  (programs take the functional module as ``F``, as in ``import ... as F``)
from __future__ import annotations

from hypothesis import strategies as st

from tests.minigrad.ops.op_cases import case


def grads_of(lib, loss_fn, inputs):
    """d loss / d inputs with ``create_graph=True`` (grad mode forced on: gradcheck may run under no_grad)."""
    with lib.enable_grad():
        return lib.autograd.grad(loss_fn(), inputs, create_graph=True)


any_shape = st.lists(st.integers(1, 4), min_size=1, max_size=4).map(lambda s: (tuple(s),))


@st.composite
def _constant_pads(draw, shape):
    """Amounts for the last k dimensions (k drawn), last dimension first, crops within each size."""
    pads = []
    for size in reversed(shape[len(shape) - draw(st.integers(1, len(shape))):]):
        before = draw(st.integers(max(-2, -size + 1), 3))
        after = draw(st.integers(max(-2, -(size + min(before, 0)) + 1), 3))
        pads += [before, after]
    return {"pad": tuple(pads), "value": draw(st.sampled_from([0.0, 1.5, -2.0]))}


def constant_params(drawn):
    return _constant_pads(drawn[0])


@st.composite
def gather_shapes(draw):
    """(N, C, *spatial) or (C, *spatial) with 1 to 3 spatial dims, and amounts ``mode`` accepts for them."""
    dims = draw(st.integers(1, 3))
    spatial = tuple(draw(st.lists(st.integers(2, 4 if dims == 1 else 3), min_size=dims, max_size=dims)))
    lead = (draw(st.integers(1, 2)),) * draw(st.integers(1, 2)) if dims < 3 else (1,) * draw(st.integers(1, 2))
    return (lead + spatial,)


@st.composite
def _gather_pads(draw, shape, dims, mode):
    pads = []
    for size in reversed(shape[len(shape) - dims:]):
        top = {"reflect": size - 1, "replicate": 3, "circular": size}[mode]
        before = draw(st.integers(-1, top))
        after = draw(st.integers(0 if before < 0 else -1, top))  # at least one position left
        if mode == "circular":  # wrap at most once around what the crop leaves
            kept = size + min(before, 0) + min(after, 0)
            before, after = min(before, kept), min(after, kept)
        pads += [before, after]
    return {"pad": tuple(pads)}


def gather_params(mode):
    def params(drawn):
        shape = drawn[0]
        rank = len(shape)  # PyTorch pads d dims of a (d + 1)- or (d + 2)-dimensional input
        dims = st.sampled_from([d for d in (1, 2, 3) if rank in (d + 1, d + 2)])
        return dims.flatmap(lambda d: _gather_pads(shape, d, mode))
    return params


def _pad(lib, F, x, params):
    return F.pad(x, params["pad"], value=params["value"])


case("constant_pad", _pad, any_shape, extra={"params": constant_params})
case("constant_pad", lambda lib, F, x, params: grads_of(lib, lambda: (_pad(lib, F, x, params) ** 3).sum(), (x,)),
     any_shape, extra={"params": constant_params}, name="constant_pad_double_backward")
for _mode in ("reflect", "replicate", "circular"):
    case("index", lambda lib, F, x, params, mode=_mode: F.pad(x, params["pad"], mode=mode),
         gather_shapes(), extra={"params": gather_params(_mode)}, name=f"pad_{_mode}")
