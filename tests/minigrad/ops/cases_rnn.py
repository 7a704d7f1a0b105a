"""Op cases for the fused recurrent layers of ``minigrad.ops.rnn`` (``lstm_layer``, ``gru_layer``, ``rnn_layer``).

minigrad's program calls the op directly. PyTorch has no op taking the input
projections, so its program runs ``torch.lstm`` / ``torch.gru`` /
``torch.rnn_tanh`` / ``torch.rnn_relu`` (the functions behind ``nn.LSTM`` ...)
with an identity input weight and a zero input bias: then ``W_ih x + b_ih``
is exactly ``gi``. A reverse layer is PyTorch's forward layer on the flipped
sequence, with its output flipped back.

Programs named ``*_double_backward`` return first-order gradients taken with
``create_graph=True``: they check the recorded (Tensor-op) backward, and through
it second-order gradients; the others check the raw-array backward.
"""

# ruff: noqa: N803  (programs take the functional module as ``F``, as in ``import ... as F``)
from __future__ import annotations

from hypothesis import strategies as st

from tests.minigrad.ops.op_cases import case

GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}


def _is_torch(lib) -> bool:
    return lib.__name__ == "torch"


def _split(mode, inputs):
    """(gi, h0, c0, w_hh, b_hh, w_hr) from a program's inputs (optional ones told apart by their rank)."""
    gi, h0, *rest = inputs
    c0 = rest.pop(0) if mode == "LSTM" else None
    w_hh = rest.pop(0)
    b_hh = rest.pop(0) if rest and rest[0].ndim == 1 else None
    w_hr = rest.pop(0) if rest else None
    return gi, h0, c0, w_hh, b_hh, w_hr


def _torch_layer(torch, mode, gi, h0, c0, w_hh, b_hh, w_hr, reverse):
    """PyTorch's layer on the projections ``gi`` (identity input weight, zero input bias)."""
    gates = gi.shape[-1]
    params = [torch.eye(gates, dtype=gi.dtype, device=gi.device), w_hh]
    if b_hh is not None:
        params += [torch.zeros(gates, dtype=gi.dtype, device=gi.device), b_hh]
    if w_hr is not None:
        params.append(w_hr)
    seq = gi.flip(0) if reverse else gi
    if mode == "LSTM":
        out, h, c = torch.lstm(seq, (h0[None], c0[None]), params, b_hh is not None, 1, 0.0, True, False, False)
    else:
        run = {"GRU": torch.gru, "RNN_TANH": torch.rnn_tanh, "RNN_RELU": torch.rnn_relu}[mode]
        out, h = run(seq, h0[None], params, b_hh is not None, 1, 0.0, True, False, False)
        c = None
    out = out.flip(0) if reverse else out
    return (out, h[0], c[0]) if mode == "LSTM" else (out, h[0])


def _minigrad_layer(mode, gi, h0, c0, w_hh, b_hh, w_hr, reverse):
    from minigrad.ops import rnn  # noqa: PLC0415  (the op itself: minigrad's side only)

    if mode == "LSTM":
        return rnn.LSTMLayer(reverse)(gi, h0, c0, w_hh, b_hh, w_hr)
    if mode == "GRU":
        return rnn.GRULayer(reverse)(gi, h0, w_hh, b_hh)
    return rnn.RNNLayer(mode[4:].lower(), reverse)(gi, h0, w_hh, b_hh)


def layer(mode, recurrent_scale=None):
    """The program running one layer of ``mode``; ``params`` is the ``reverse`` flag.

    ``recurrent_scale`` multiplies ``w_hh`` and ``b_hh`` first (see the relu cases).
    """

    def program(lib, F, *inputs, params):
        parts = _split(mode, inputs)
        if recurrent_scale is not None:
            gi, h0, c0, w_hh, b_hh, w_hr = parts
            b_hh = None if b_hh is None else b_hh * recurrent_scale
            parts = (gi, h0, c0, w_hh * recurrent_scale, b_hh, w_hr)
        if _is_torch(lib):
            return _torch_layer(lib, mode, *parts, params)
        return _minigrad_layer(mode, *parts, params)

    return program


def layer_double_backward(mode, recurrent_scale=None):
    """First-order gradients of a loss over every output, taken with ``create_graph=True``."""

    def program(lib, F, *inputs, params):
        def loss():
            outputs = layer(mode, recurrent_scale)(lib, F, *inputs, params=params)
            total = (outputs[0] ** 2).sum()
            for state in outputs[1:]:
                total = total + (state * state.tanh()).sum()
            return total

        with lib.enable_grad():
            return lib.autograd.grad(loss(), inputs, create_graph=True)

    return program


@st.composite
def layer_shapes(draw, mode, bias=None, project=None, small=False):
    """Input shapes of one layer: gi (T, N, G*H), h0 (N, P), [c0 (N, H)], w_hh (G*H, P), [b_hh], [w_hr (P, H)].

    ``small``: at most 2 steps, batch 2 and hidden size 2 (second-order gradchecks cost a program run per
    input element and a backward per output element).
    """
    most = 2 if small else 3
    steps = draw(st.integers(1, 2 if small else 4))
    batch, size = draw(st.integers(1, most)), draw(st.integers(1, most))
    gates = GATES[mode] * size
    project = mode == "LSTM" and size > 1 and (draw(st.booleans()) if project is None else project)
    out = draw(st.integers(1, size - 1)) if project else size
    shapes = [(steps, batch, gates), (batch, out)]
    if mode == "LSTM":
        shapes.append((batch, size))
    shapes.append((gates, out))
    if draw(st.booleans()) if bias is None else bias:
        shapes.append((gates,))
    if project:
        shapes.append((out, size))
    return tuple(shapes)


REVERSE = {"params": lambda shapes: st.booleans()}
# relu has a kink at 0: inputs at least 0.5 from 0 and the recurrent part scaled to below 0.31 in size
# (|h| <= 2.2 when |gi| <= 2) keep every pre-activation at least 0.19 from it.
RELU = {"away_from": (0.0,), "margin": 0.5}

case("lstm_layer", layer("LSTM"), layer_shapes("LSTM"), extra=REVERSE)
case("lstm_layer", layer("LSTM"), layer_shapes("LSTM", bias=True, project=True), extra=REVERSE,
     name="lstm_layer_projected")
case("lstm_layer", layer_double_backward("LSTM"), layer_shapes("LSTM", small=True), extra=REVERSE,
     name="lstm_layer_double_backward")
case("gru_layer", layer("GRU"), layer_shapes("GRU"), extra=REVERSE)
case("gru_layer", layer_double_backward("GRU"), layer_shapes("GRU", small=True), extra=REVERSE,
     name="gru_layer_double_backward")
case("rnn_layer", layer("RNN_TANH"), layer_shapes("RNN_TANH"), extra=REVERSE, name="rnn_layer_tanh")
case("rnn_layer", layer("RNN_RELU", 0.02), layer_shapes("RNN_RELU"), extra=REVERSE, name="rnn_layer_relu", **RELU)
case("rnn_layer", layer_double_backward("RNN_TANH"), layer_shapes("RNN_TANH", small=True), extra=REVERSE,
     name="rnn_layer_tanh_double_backward")
case("rnn_layer", layer_double_backward("RNN_RELU", 0.02), layer_shapes("RNN_RELU", small=True), extra=REVERSE,
     name="rnn_layer_relu_double_backward", **RELU)
