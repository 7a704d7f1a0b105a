"""Recurrent layers, as in ``torch.nn``: ``RNNCell``, ``LSTMCell``, ``GRUCell`` and the
multi-layer, optionally bidirectional ``RNN``, ``LSTM`` and ``GRU``.

Parameter names, shapes, gate order and initialization are PyTorch's, so a
``state_dict`` moves between the two libraries unchanged. With ``G`` gates
(1 for RNN, 4 for LSTM in the order i, f, g, o, 3 for GRU in the order
r, z, n) and ``H`` the hidden size, a layer holds ``weight_ih`` (G*H, in),
``weight_hh`` (G*H, H) and the biases ``bias_ih``, ``bias_hh`` (G*H,), all
drawn from U(-1/sqrt(H), 1/sqrt(H)). The equations, per time step::

    RNN:  h' = tanh(W_ih x + b_ih + W_hh h + b_hh)          (or relu)
    LSTM: i, f, g, o = split(W_ih x + b_ih + W_hh h + b_hh)
          c' = sigmoid(f) * c + sigmoid(i) * tanh(g)
          h' = sigmoid(o) * tanh(c')                         (then W_hr h' with proj_size)
    GRU:  r, z = sigmoid(W_i{r,z} x + b_i{r,z} + W_h{r,z} h + b_h{r,z})
          n = tanh(W_in x + b_in + r * (W_hn h + b_hn))
          h' = (1 - z) * n + z * h

How a layer runs over a sequence (``RNNBase._run_direction``), per layer and direction:

1. the input projection ``W_ih x + b_ih`` of every time step in one matmul;
2. the recurrence over all steps as one fused graph node (``minigrad.ops.rnn``:
   ``LSTMLayer``, ``GRULayer``, ``RNNLayer``), whose backward accumulates the
   recurrent weights' gradients in one matmul over all steps and stays
   differentiable under ``create_graph=True``.

A cell (``LSTMCell`` ...) is the same op run over a sequence of one step.
"""

from __future__ import annotations

import math
import numbers
import warnings

import numpy as np

from minigrad import backend
from minigrad.nn import functional as F
from minigrad.nn import init
from minigrad.nn.layers import _empty_parameter
from minigrad.nn.module import Module
from minigrad.ops import rnn as _rnn_ops
from minigrad.ops.nn import Linear as _LinearOp
from minigrad.ops.shape import cat, stack
from minigrad.tensor import Tensor

__all__ = ["RNNCellBase", "RNNCell", "LSTMCell", "GRUCell", "RNNBase", "RNN", "LSTM", "GRU"]

_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


# -- one layer over a sequence ------------------------------------------------------------------
#
# The fused ops are called directly: the arguments were validated once for the whole call.


def _run_layer(mode: str, gi: Tensor, h: Tensor, c, weights: tuple, reverse: bool = False):
    """The recurrence of one layer and direction over gi (T, N, G*H): returns (outputs (T, N, H_out), h_T, c_T).

    ``weights`` is (w_hh, b_hh, w_hr) (biases and projection None when absent);
    ``c`` and the returned c_T are None unless ``mode`` is "LSTM".
    """
    w_hh, b_hh, w_hr = weights
    if mode == "LSTM":
        return _rnn_ops.LSTMLayer(reverse)(gi, h, c, w_hh, b_hh, w_hr)
    if mode == "GRU":
        out, h = _rnn_ops.GRULayer(reverse)(gi, h, w_hh, b_hh)
    else:
        out, h = _rnn_ops.RNNLayer("tanh" if mode == "RNN_TANH" else "relu", reverse)(gi, h, w_hh, b_hh)
    return out, h, None


# -- argument checks ----------------------------------------------------------------------------


def _check_int(value, name: str, minimum: int, owner: str) -> int:
    if not isinstance(value, (int, np.integer)) or isinstance(value, bool):
        raise TypeError(f"{owner}: {name} should be of type int, got: {type(value).__name__}")
    if value < minimum:
        bound = "greater than zero" if minimum == 1 else f"at least {minimum}"
        raise ValueError(f"{owner}: {name} must be {bound}, got {value}")
    return int(value)


def _expect_tensor(owner: str, name: str, value) -> None:
    if not isinstance(value, Tensor):
        raise TypeError(f"{owner}: {name} must be a Tensor, got {type(value).__name__}")


def _expect_like(owner: str, name: str, t: Tensor, weight: Tensor) -> None:
    """``t`` has ``weight``'s dtype and device (RuntimeError naming both otherwise, as in PyTorch)."""
    if t.dtype != weight.dtype:
        raise RuntimeError(
            f"{owner}: {name} has dtype {t.dtype} but the weights have dtype {weight.dtype}; convert "
            f"one of them (tensor.to(dtype) or module.to(dtype))"
        )
    _expect_weights_device(owner, name, t, weight)


def _expect_weights_device(owner: str, name: str, t: Tensor, weight: Tensor) -> None:
    """``t`` is on ``weight``'s device (RuntimeError naming both otherwise)."""
    if t.device != weight.device:
        raise RuntimeError(f"{owner}: {name} is on {t.device} but the weights are on {weight.device}")


def _zeros(shape, like: Tensor) -> Tensor:
    """A constant zero tensor of ``shape`` with ``like``'s dtype and device."""
    xp = backend.get_array_module(like.array)
    with backend.device_context(like.device):
        return Tensor._make(xp.zeros(shape, dtype=like.dtype), False, None, 0)


# -- cells ----------------------------------------------------------------------------------------


class RNNCellBase(Module):
    """Base of the single-step cells: holds ``weight_ih``, ``weight_hh``, ``bias_ih``, ``bias_hh``.

    Args:
        input_size, hidden_size: features of the input ``x`` and the hidden state ``h``.
        bias: learn ``bias_ih`` and ``bias_hh`` (default True).
        num_chunks: gates stacked in the weights (1 RNN, 4 LSTM, 3 GRU).

    Raises:
        TypeError: a size is not an int. ValueError: a size is negative.
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool, num_chunks: int, device=None, dtype=None):
        super().__init__()
        name = type(self).__name__
        self.input_size = _check_int(input_size, "input_size", 0, name)
        self.hidden_size = _check_int(hidden_size, "hidden_size", 0, name)
        self.bias = bias
        gates = num_chunks * self.hidden_size
        self.weight_ih = _empty_parameter((gates, self.input_size), device, dtype)
        self.weight_hh = _empty_parameter((gates, self.hidden_size), device, dtype)
        if bias:
            self.bias_ih = _empty_parameter((gates,), device, dtype)
            self.bias_hh = _empty_parameter((gates,), device, dtype)
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Draw every parameter from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)), as PyTorch does."""
        bound = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0.0
        for param in self.parameters():
            init.uniform_(param, -bound, bound)

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if not self.bias:
            s += ", bias=False"
        nonlinearity = getattr(self, "nonlinearity", "tanh")
        if nonlinearity != "tanh":
            s += f", nonlinearity={nonlinearity}"
        return s

    def _check_input(self, x) -> bool:
        """Validate the input (1-D or 2-D, ``input_size`` features); return whether it is batched."""
        name = type(self).__name__
        _expect_tensor(name, "input", x)
        if x.ndim not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {x.ndim}D instead")
        if x.shape[-1] != self.input_size:
            raise RuntimeError(
                f"{name}: input has inconsistent input_size: got {x.shape[-1]} expected {self.input_size}"
            )
        _expect_like(name, "input", x, self.weight_ih)
        return x.ndim == 2

    def _check_state(self, x, state, index: int, size: int, batched: bool) -> Tensor:
        """Validate hidden state ``index`` (0: h, 1: c) against input ``x``; return it batched."""
        name = type(self).__name__
        what = f"hx[{index}]" if isinstance(self, LSTMCell) else "hx"
        _expect_tensor(name, what, state)
        if state.ndim != x.ndim:
            kind = "batched 2-D" if batched else "unbatched 1-D"
            raise RuntimeError(
                f"{name}: for {kind} input, {what} should be {x.ndim}-D too, got shape {state.shape}"
            )
        if batched and state.shape[0] != x.shape[0]:
            raise RuntimeError(
                f"{name}: Input batch size {x.shape[0]} doesn't match hidden{index} batch size {state.shape[0]}"
            )
        if state.shape[-1] != size:
            raise RuntimeError(
                f"{name}: hidden{index} has inconsistent hidden_size: got {state.shape[-1]}, expected {size}"
            )
        _expect_like(name, what, state, self.weight_ih)
        return state if batched else state.unsqueeze(0)

    def _step(self, mode, x, batched, h, c=None):
        """One step of ``mode`` from input ``x`` and states ``h`` (, ``c``), each (N, ...); returns (h', c')."""
        gi = _LinearOp()(x.unsqueeze(0) if batched else x.unsqueeze(0).unsqueeze(0), self.weight_ih, self.bias_ih)
        if h is None:
            h = _zeros(gi.shape[1:2] + (self.hidden_size,), x)
        if mode == "LSTM" and c is None:
            c = h
        _, h, c = _run_layer(mode, gi, h, c, (self.weight_hh, self.bias_hh, None))
        return h, c


class RNNCell(RNNCellBase):
    """One step of an Elman RNN: ``h' = tanh(W_ih x + b_ih + W_hh h + b_hh)`` (or relu).

    Args:
        input_size, hidden_size, bias: see ``RNNCellBase``.
        nonlinearity: "tanh" (default) or "relu".

    Call ``cell(input, hx=None)``: input (N, input_size) or (input_size,),
    hx of the same batching with ``hidden_size`` features (zeros if None).
    Returns h' (N, hidden_size) or (hidden_size,).

    Raises:
        ValueError: input not 1-D or 2-D.
        RuntimeError: unknown nonlinearity (raised here, where PyTorch only fails when called, with this
            class); feature, batch or dtype mismatches (names them).
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, nonlinearity: str = "tanh",
                 device=None, dtype=None):
        if nonlinearity not in ("tanh", "relu"):
            raise RuntimeError(f"RNNCell: Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or 'relu'.")
        super().__init__(input_size, hidden_size, bias, 1, device, dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):  # noqa: A002  (PyTorch's name)
        """Compute the next hidden state."""
        batched = self._check_input(input)
        h = None if hx is None else self._check_state(input, hx, 0, self.hidden_size, batched)
        h, _ = self._step("RNN_TANH" if self.nonlinearity == "tanh" else "RNN_RELU", input, batched, h)
        return h if batched else h.squeeze(0)


class LSTMCell(RNNCellBase):
    """One step of a long short-term memory cell (gates i, f, g, o, as in PyTorch).

    Call ``cell(input, hx=None)`` with hx = (h, c), each (N, hidden_size) or
    (hidden_size,) like the input (zeros if None). Returns (h', c').

    Raises:
        ValueError: input not 1-D or 2-D.
        TypeError: hx is not a pair of Tensors.
        RuntimeError: feature, batch or dtype mismatches (names them).
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 4, device, dtype)

    def forward(self, input, hx=None):  # noqa: A002
        """Compute the next (hidden, cell) state."""
        batched = self._check_input(input)
        h = c = None
        if hx is not None:
            if not isinstance(hx, (tuple, list)) or len(hx) != 2:
                raise TypeError(f"LSTMCell: hx must be a pair (h_0, c_0) of Tensors, got {type(hx).__name__}")
            h = self._check_state(input, hx[0], 0, self.hidden_size, batched)
            c = self._check_state(input, hx[1], 1, self.hidden_size, batched)
        h, c = self._step("LSTM", input, batched, h, c)
        return (h, c) if batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(RNNCellBase):
    """One step of a gated recurrent unit (gates r, z, n; ``n`` uses ``r * (W_hn h + b_hn)`` as PyTorch).

    Call ``cell(input, hx=None)`` like ``RNNCell``; returns h'.

    Raises:
        ValueError: input not 1-D or 2-D.
        RuntimeError: feature, batch or dtype mismatches (names them).
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 3, device, dtype)

    def forward(self, input, hx=None):  # noqa: A002
        """Compute the next hidden state."""
        batched = self._check_input(input)
        h = None if hx is None else self._check_state(input, hx, 0, self.hidden_size, batched)
        h, _ = self._step("GRU", input, batched, h)
        return h if batched else h.squeeze(0)


# -- multi-layer recurrent networks -------------------------------------------------------------------


class RNNBase(Module):
    """Base of ``RNN``, ``LSTM`` and ``GRU``: a stack of recurrent layers run over whole sequences.

    Args:
        mode: "RNN_TANH", "RNN_RELU", "LSTM" or "GRU".
        input_size: features of the input.
        hidden_size: features of the hidden state.
        num_layers: recurrent layers stacked (layer k+1 reads layer k's output). Default 1.
        bias: learn ``bias_ih_l{k}`` and ``bias_hh_l{k}`` (default True).
        batch_first: input and output are (N, T, F) instead of (T, N, F); the states are not affected.
        dropout: in training mode, dropout on the output of every layer but the last.
        bidirectional: run a second direction over the reversed sequence
            (parameters suffixed ``_reverse``); outputs are concatenated features.
        proj_size: LSTM only: project the hidden state to this size (``weight_hr_l{k}``).

    Parameters per layer k and direction, registered in PyTorch's order:
    ``weight_ih_l{k}`` (G*H, in_k), ``weight_hh_l{k}`` (G*H, H_out), ``bias_ih_l{k}``,
    ``bias_hh_l{k}`` (G*H,) and, with ``proj_size``, ``weight_hr_l{k}`` (proj_size, H);
    ``in_k`` is ``input_size`` for k = 0 and ``D * H_out`` after, ``H_out`` is
    ``proj_size`` or ``hidden_size``, D is 2 when bidirectional.

    Raises:
        TypeError: a size is not an int.
        ValueError: a size is not positive, ``dropout`` is not in [0, 1], or a bad ``proj_size``.
    """

    def __init__(self, mode: str, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False,
                 proj_size: int = 0, device=None, dtype=None):
        super().__init__()
        if mode not in _GATES:
            raise ValueError(f"RNNBase: unknown mode {mode!r}; expected one of {sorted(_GATES)}")
        name = type(self).__name__
        if (not isinstance(dropout, numbers.Real) or isinstance(dropout, bool)
                or not 0 <= dropout <= 1):
            raise ValueError(
                f"{name}: dropout should be a number in range [0, 1] representing the probability of an "
                f"element being zeroed, got {dropout!r}"
            )
        self.mode = mode
        self.input_size = _check_int(input_size, "input_size", 1, name)
        self.hidden_size = _check_int(hidden_size, "hidden_size", 1, name)
        self.num_layers = _check_int(num_layers, "num_layers", 1, name)
        self.proj_size = _check_int(proj_size, "proj_size", 0, name)
        if self.proj_size and mode != "LSTM":
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if self.proj_size >= self.hidden_size:
            raise ValueError(f"{name}: proj_size has to be smaller than hidden_size, got "
                             f"proj_size={self.proj_size} and hidden_size={self.hidden_size}")
        if dropout > 0 and self.num_layers == 1:
            warnings.warn(
                "dropout option adds dropout after all but last recurrent layer, so non-zero dropout expects "
                f"num_layers greater than 1, but got dropout={dropout} and num_layers={self.num_layers}",
                UserWarning, stacklevel=3,
            )
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        directions = 2 if bidirectional else 1
        gates = _GATES[mode] * self.hidden_size
        out_size = self.proj_size or self.hidden_size
        self._flat_weights_names = []
        self._all_weights = []
        for layer in range(self.num_layers):
            layer_input = self.input_size if layer == 0 else out_size * directions
            for direction in range(directions):
                suffix = f"_l{layer}" + ("_reverse" if direction == 1 else "")
                shapes = [("weight_ih", (gates, layer_input)), ("weight_hh", (gates, out_size))]
                if bias:
                    shapes += [("bias_ih", (gates,)), ("bias_hh", (gates,))]
                if self.proj_size:
                    shapes.append(("weight_hr", (self.proj_size, self.hidden_size)))
                names = []
                for stem, shape in shapes:
                    setattr(self, stem + suffix, _empty_parameter(shape, device, dtype))
                    names.append(stem + suffix)
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Draw every parameter from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)), as PyTorch does."""
        bound = 1.0 / math.sqrt(self.hidden_size)
        for param in self.parameters():
            init.uniform_(param, -bound, bound)

    @property
    def all_weights(self) -> list:
        """The parameters as one list per layer and direction, ``[[w_ih, w_hh, b_ih, b_hh, (w_hr)], ...]``."""
        return [[getattr(self, name) for name in names] for names in self._all_weights]

    def flatten_parameters(self) -> None:
        """Accepted for ported code: PyTorch packs the weights for cuDNN here; minigrad has nothing to pack."""

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s

    # -- forward ----------------------------------------------------------------------------------

    def forward(self, input, hx=None):  # noqa: A002  (PyTorch's name)
        """Run the layers over the whole sequence.

        Args:
            input: (T, N, input_size), or (N, T, input_size) with ``batch_first``,
                or (T, input_size) for one unbatched sequence.
            hx: the initial state: h_0 for RNN/GRU, (h_0, c_0) for LSTM, each
                (D * num_layers, N, H_out) (c_0: H = hidden_size), without the N
                dimension for unbatched input. Zeros if None.

        Returns:
            ``(output, h_n)`` (LSTM: ``(output, (h_n, c_n))``): output holds the last
            layer's hidden state at every step, (T, N, D * H_out) (batch_first:
            (N, T, D * H_out)); h_n and c_n hold every layer's and direction's
            final state, shaped like h_0 and c_0.

        Raises:
            ValueError: input is not 2-D or 3-D, or its dtype is not the weights'.
            RuntimeError: wrong feature count, empty sequence, or states of the wrong
                shape, dimension count or dtype (names expected and actual).
            TypeError: an LSTM state that is not a pair of Tensors, or a pair given to RNN/GRU.
        """
        x, batched = self._check_input(input)
        if batched and self.batch_first:
            x = x.transpose(0, 1)
        elif not batched:
            x = x.unsqueeze(1)
        h0, c0 = self._initial_state(hx, x, batched)
        directions = 2 if self.bidirectional else 1
        all_weights = self.all_weights
        finals_h, finals_c = [], []
        for layer in range(self.num_layers):
            outputs = []
            for direction in range(directions):
                index = layer * directions + direction
                out, h, c = self._run_direction(x, h0[index], None if c0 is None else c0[index],
                                                all_weights[index], reverse=direction == 1)
                outputs.append(out)
                finals_h.append(h)
                finals_c.append(c)
            x = outputs[0] if directions == 1 else cat(outputs, -1)
            if self.training and self.dropout > 0 and layer < self.num_layers - 1:
                x = F.dropout(x, self.dropout, True)
        h_n = stack(finals_h, 0)
        c_n = stack(finals_c, 0) if self.mode == "LSTM" else None
        if not batched:
            x = x.squeeze(1)
            h_n = h_n.squeeze(1)
            c_n = None if c_n is None else c_n.squeeze(1)
        elif self.batch_first:
            x = x.transpose(0, 1)
        return (x, (h_n, c_n)) if self.mode == "LSTM" else (x, h_n)

    def _run_direction(self, x, h, c, weights, reverse):
        """One layer in one direction over x (T, N, F): returns (outputs (T, N, H_out), h_T, c_T)."""
        w_ih, w_hh = weights[0], weights[1]
        b_ih, b_hh = (weights[2], weights[3]) if self.bias else (None, None)
        w_hr = weights[-1] if self.proj_size else None
        return _run_layer(self.mode, _LinearOp()(x, w_ih, b_ih), h, c, (w_hh, b_hh, w_hr), reverse)

    def _check_input(self, x):
        """Validate the input sequence; return it and whether it is batched."""
        name = type(self).__name__
        _expect_tensor(name, "input", x)
        if x.ndim not in (2, 3):
            raise ValueError(f"{name}: Expected input to be 2D or 3D, got {x.ndim}D instead")
        weight = self.weight_ih_l0
        if x.dtype != weight.dtype:
            raise ValueError(
                f"{name}: input dtype ({x.dtype}) does not match weight dtype ({weight.dtype}). Convert the "
                f"input: input.to({weight.dtype}), or the model: model.to({x.dtype})"
            )
        _expect_weights_device(name, "input", x, weight)
        if x.shape[-1] != self.input_size:
            raise RuntimeError(
                f"{name}: input.size(-1) must be equal to input_size. Expected {self.input_size}, "
                f"got {x.shape[-1]}"
            )
        batched = x.ndim == 3
        steps = x.shape[1 if batched and self.batch_first else 0]
        if steps == 0:
            raise RuntimeError(f"{name}: Expected sequence length to be larger than 0, got input of shape "
                               f"{x.shape}")
        return x, batched

    def _initial_state(self, hx, x, batched):
        """(h_0, c_0) as (D * num_layers, N, H) tensors (c_0 None unless LSTM), zeros when ``hx`` is None."""
        name = type(self).__name__
        layers = self.num_layers * (2 if self.bidirectional else 1)
        batch = x.shape[1]
        out_size = self.proj_size or self.hidden_size
        is_lstm = self.mode == "LSTM"
        if hx is None:
            h0 = _zeros((layers, batch, out_size), x)
            c0 = _zeros((layers, batch, self.hidden_size), x) if is_lstm else None
            return h0, c0
        if is_lstm:
            if not isinstance(hx, (tuple, list)) or len(hx) != 2:
                raise TypeError(f"{name}: hx must be a pair (h_0, c_0) of Tensors, got {type(hx).__name__}")
            states = [("hx[0]", hx[0], out_size), ("hx[1]", hx[1], self.hidden_size)]
        else:
            if not isinstance(hx, Tensor):
                raise TypeError(f"{name}: hx must be a Tensor (h_0), got {type(hx).__name__}")
            states = [("hx", hx, out_size)]
        for what, state, _ in states:
            _expect_tensor(name, what, state)
        wanted = 3 if batched else 2
        if any(state.ndim != wanted for _, state, _ in states):
            kind = "batched 3-D" if batched else "unbatched 2-D"
            got = ", ".join(f"{state.ndim}-D" for _, state, _ in states)
            raise RuntimeError(f"{name}: For {kind} input, hx should also be {wanted}-D but got ({got}) tensors")
        checked = []
        for i, (what, state, size) in enumerate(states):
            expected = (layers, batch, size) if batched else (layers, size)
            if state.shape != expected:
                label = f"hidden[{i}]" if is_lstm else "hidden"
                raise RuntimeError(f"{name}: Expected {label} size {expected}, got {list(state.shape)}")
            _expect_like(name, what, state, self.weight_ih_l0)
            checked.append(state if batched else state.unsqueeze(1))
        return checked[0], (checked[1] if is_lstm else None)


class RNN(RNNBase):
    """Multi-layer Elman RNN, ``h_t = tanh(W_ih x_t + b_ih + W_hh h_{t-1} + b_hh)`` (or relu).

    ``RNN(input_size, hidden_size, num_layers=1, nonlinearity="tanh", bias=True,
    batch_first=False, dropout=0.0, bidirectional=False)``; see ``RNNBase`` for
    the arguments, parameters, call and errors. Returns ``(output, h_n)``.

    Raises:
        ValueError: ``nonlinearity`` is neither "tanh" nor "relu", or a nonzero
            ``proj_size`` (LSTM only), and see ``RNNBase``.
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, nonlinearity: str = "tanh",
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False,
                 proj_size: int = 0, device=None, dtype=None):
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or 'relu'.")
        mode = "RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU"
        super().__init__(mode, input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         proj_size, device=device, dtype=dtype)
        self.nonlinearity = nonlinearity


class LSTM(RNNBase):
    """Multi-layer long short-term memory network (gates i, f, g, o, as in PyTorch).

    ``LSTM(input_size, hidden_size, num_layers=1, bias=True, batch_first=False,
    dropout=0.0, bidirectional=False, proj_size=0)``; see ``RNNBase``. Called as
    ``lstm(input, (h_0, c_0))`` (or without a state); returns ``(output, (h_n, c_n))``.
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False,
                 proj_size: int = 0, device=None, dtype=None):
        super().__init__("LSTM", input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         proj_size, device=device, dtype=dtype)


class GRU(RNNBase):
    """Multi-layer gated recurrent unit (gates r, z, n; ``n`` uses ``r * (W_hn h + b_hn)`` as in PyTorch).

    ``GRU(input_size, hidden_size, num_layers=1, bias=True, batch_first=False,
    dropout=0.0, bidirectional=False)``; see ``RNNBase``. Returns ``(output, h_n)``.
    A nonzero ``proj_size`` raises ValueError (LSTM only).
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False,
                 proj_size: int = 0, device=None, dtype=None):
        super().__init__("GRU", input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         proj_size, device=device, dtype=dtype)
