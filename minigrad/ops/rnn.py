"""Fused recurrent layers: one graph node runs a whole RNN, LSTM or GRU layer over a sequence.

A recurrent layer built from ordinary ops records about ten graph nodes per
time step (a matmul, gate slices, sigmoids, products), and for short steps
the per-node cost of recording and running the backward dominates. Here the
recurrence of one layer in one direction is a single op:

``LSTMLayer(reverse)(gi, h0, c0, w_hh, b_hh, w_hr) -> (out, h_T, c_T)``
``GRULayer(reverse)(gi, h0, w_hh, b_hh) -> (out, h_T)``
``RNNLayer(nonlinearity, reverse)(gi, h0, w_hh, b_hh) -> (out, h_T)``

with ``gi`` (T, N, G*H) the input projections ``W_ih x_t + b_ih`` of every
step (computed by the caller in one matmul), ``h0`` (N, P) and ``c0`` (N, H)
the initial states, ``w_hh`` (G*H, P), ``b_hh`` (G*H,) or None, and, for an
LSTM with projections, ``w_hr`` (P, H) or None (P = H without projections).
``out`` (T, N, P) holds the hidden state of every step in time order;
``reverse`` runs the recurrence from the last step to the first. Gate order
and equations are PyTorch's (see ``minigrad.nn.rnn``).

How the work is arranged:

1. forward: per step one matmul ``h @ w_hh.T`` and in-place elementwise
   work on preallocated (T, ...) buffers, which keep the gate activations and
   the states for the backward (the outputs are copies: writing to them in
   place does not disturb the backward);
2. backward (first order, raw arrays): the per-step coefficients of the
   gate derivatives are computed for all steps at once, then a reverse loop
   does one matmul and a few products per step, writing the gradient of the
   pre-activations into a (T, N, G*H) buffer; ``w_hh``'s gradient is one
   matmul over all steps at the end, ``gi``'s is that buffer;
3. backward with ``create_graph=True`` (grad mode is on inside the backward):
   the forward is recomputed and the same backward formulas are evaluated
   with recorded Tensor ops, so the gradients are themselves differentiable.

The ops assume valid input (``minigrad.nn.rnn`` checks shapes, dtypes and
devices). They keep every input for the backward, so an in-place write to
any of them before the backward raises there.
"""

from __future__ import annotations

import numpy as np

from minigrad.function import FunctionNode
from minigrad.grad_mode import _state as _grad_state
from minigrad.ops.nn import Linear
from minigrad.ops.shape import cat, stack
from minigrad.tensor import Tensor

__all__ = ["LSTMLayer", "GRULayer", "RNNLayer", "time_steps"]

# Blocks of at most this many steps are indexed step by step; larger ones are halved first.
_LEAF_STEPS = 4


def time_steps(x: Tensor) -> list:
    """``[x[0], ..., x[T-1]]`` for a Tensor ``x`` of shape (T, ...), split by halves.

    Indexing ``x[t]`` T times directly would make the backward scatter T
    gradients of x's full size (O(T^2) work); halving first makes each level
    of the split cost one full-size scatter, O(T log T) in all.
    """
    steps = []
    pending = [x]
    while pending:
        block = pending.pop()
        n = block.shape[0]
        if n <= _LEAF_STEPS:
            steps.extend(block[t] for t in range(n))
        else:
            half = n // 2
            pending.append(block[half:])
            pending.append(block[:half])  # popped first: steps come out in order
    return steps


def _sigmoid(x, out, xp):
    """sigmoid(x) written into ``out`` (``x`` itself allowed); e**-x may overflow to inf, giving the exact 0."""
    xp.negative(x, out=out)
    xp.exp(out, out=out)
    out += 1
    return xp.reciprocal(out, out=out)


def _constant(array) -> Tensor:
    return Tensor._make(array, False, None, 0)


class _RecurrentLayer(FunctionNode):
    """Shared machinery of the fused layers: time order, state buffers, the two backward paths.

    State buffers have T + 1 slots in time order; the initial state sits in
    the slot before the first step processed (slot 0, or slot T in reverse),
    and step t reads slot ``t + self._read`` and writes slot ``t + self._write``.

    Subclasses define ``forward`` and ``_array_backward`` (raw arrays), and
    ``_tensor_step`` / ``_tensor_step_backward`` (one step with Tensor ops, for
    ``create_graph``); ``_parts``/``_pack`` map their own input list to and
    from (gi, h0, c0, w_hh, b_hh, w_hr).
    """

    _W_HH = 2  # index of w_hh among the inputs (b_hh follows it)

    def __init__(self, reverse: bool = False):
        self.reverse = bool(reverse)
        self._read, self._write = (1, 0) if self.reverse else (0, 1)

    def _order(self, steps: int):
        return range(steps - 1, -1, -1) if self.reverse else range(steps)

    def _states(self, initial, steps: int):
        """A (T + 1, ...) state buffer holding ``initial`` in its first slot in processing order."""
        buffer = self.xp.empty((steps + 1,) + initial.shape, dtype=initial.dtype)
        buffer[steps if self.reverse else 0] = initial
        return buffer

    def _read_span(self, buffer):
        """The (T, ...) states read by the steps, in time order."""
        return buffer[1:] if self.reverse else buffer[:-1]

    def _written(self, buffer):
        """(every state written, in time order; the last one written), both new arrays."""
        return (buffer[:-1] if self.reverse else buffer[1:]).copy(), self._last(buffer)

    def _last(self, buffer):
        """The last state written, as a new array."""
        return buffer[0 if self.reverse else buffer.shape[0] - 1].copy()

    def _weight_grads(self, d_gh, read):
        """Gradients of ``w_hh`` (sum over steps of d_gh_t^T h_{t-1}: one matmul) and ``b_hh``, as needed."""
        need = self.needs_input_grad
        flat = d_gh.reshape(-1, d_gh.shape[-1])
        grad_w = _constant(flat.T @ read.reshape(-1, read.shape[-1])) if need[self._W_HH] else None
        grad_b = _constant(flat.sum(0)) if need[self._W_HH + 1] else None
        return grad_w, grad_b

    def backward(self, *grads):
        if _grad_state.enabled:  # create_graph: the gradients must be differentiable
            return self._tensor_backward(*grads)
        return self._array_backward(*grads)

    # -- the recorded formulation (create_graph) ---------------------------------------------------

    def _tensor_backward(self, g_out, g_h, g_c=None):
        gi, h0, c0, w_hh, b_hh, w_hr = self._parts(self.saved_inputs)
        steps = time_steps(gi)
        order = self._order(len(steps))
        caches, previous = [None] * len(steps), [None] * len(steps)
        h, c = h0, c0
        for t in order:
            previous[t] = h
            h, c, caches[t] = self._tensor_step(steps[t], h, c, w_hh, b_hh, w_hr)
        upstream = time_steps(g_out)
        d_gi, d_gh, d_h = [None] * len(steps), [None] * len(steps), [None] * len(steps)
        dh, dc = g_h, g_c
        for t in reversed(order):
            dh = dh + upstream[t]
            d_h[t] = dh
            d_gi[t], d_gh[t], direct, dc = self._tensor_step_backward(caches[t], dh, dc, w_hr)
            dh = d_gh[t] @ w_hh
            if direct is not None:
                dh = dh + direct
        need = self._parts(self.needs_input_grad, False)
        d_gh_all = stack(d_gh, 0)
        flat = d_gh_all.reshape(-1, d_gh_all.shape[-1])
        grad_w_hh = flat.mT @ stack(previous, 0).reshape(-1, w_hh.shape[1]) if need[3] else None
        grad_b_hh = flat.sum(0) if need[4] else None
        grad_w_hr = None
        if w_hr is not None and need[5]:
            members = stack([cache[-1] for cache in caches], 0)  # the unprojected states o * tanh(c)
            grad_w_hr = stack(d_h, 0).reshape(-1, w_hr.shape[0]).mT @ members.reshape(-1, w_hr.shape[1])
        grad_gi = (d_gh_all if d_gi[0] is None else stack(d_gi, 0)) if need[0] else None
        return self._pack(grad_gi, dh if need[1] else None, dc if need[2] else None, grad_w_hh, grad_b_hh,
                          grad_w_hr)

    @staticmethod
    def _parts(inputs, default=None):
        """This op's inputs (gi, h0, w_hh, b_hh) as (gi, h0, c0, w_hh, b_hh, w_hr), ``default`` for the absent."""
        gi, h0, w_hh, b_hh = inputs
        return gi, h0, default, w_hh, b_hh, default

    @staticmethod
    def _pack(grad_gi, grad_h0, grad_c0, grad_w_hh, grad_b_hh, grad_w_hr):
        """The inverse of ``_parts`` for the gradients."""
        return grad_gi, grad_h0, grad_w_hh, grad_b_hh


class LSTMLayer(_RecurrentLayer):
    """A whole LSTM layer: (gi, h0, c0, w_hh, b_hh, w_hr) -> (out, h_T, c_T); see the module docstring.

    Per step, with gates i, f, g, o of ``gi_t + h w_hh^T + b_hh``:
    ``c' = sigmoid(f) c + sigmoid(i) tanh(g)``, ``h' = sigmoid(o) tanh(c')``,
    then ``h' w_hr^T`` with projections.
    """

    _W_HH = 3

    def forward(self, gi, h0, c0, w_hh, b_hh, w_hr):
        self.retain_inputs((0, 1, 2, 3, 4, 5))
        xp = self.xp
        steps, batch, gates = gi.shape
        size = gates // 4
        pre = gi if b_hh is None else gi + b_hh
        w_t = w_hh.T
        acts = xp.empty_like(pre)  # sigmoid(i), sigmoid(f), tanh(g), sigmoid(o) of every step
        hidden, cells = self._states(h0, steps), self._states(c0, steps)
        tanh_c = xp.empty((steps, batch, size), dtype=gi.dtype)
        members = None if w_hr is None else xp.empty_like(tanh_c)  # o * tanh(c), before the projection
        read, write = self._read, self._write
        with np.errstate(over="ignore"):
            for t in self._order(steps):
                z = hidden[t + read] @ w_t
                z += pre[t]
                a = acts[t]
                _sigmoid(z, a, xp)  # the g block is overwritten with its tanh next
                xp.tanh(z[:, 2 * size : 3 * size], out=a[:, 2 * size : 3 * size])
                c = xp.multiply(a[:, size : 2 * size], cells[t + read], out=cells[t + write])
                c += a[:, :size] * a[:, 2 * size : 3 * size]
                tc = xp.tanh(c, out=tanh_c[t])
                if w_hr is None:
                    xp.multiply(a[:, 3 * size :], tc, out=hidden[t + write])
                else:
                    xp.multiply(a[:, 3 * size :], tc, out=members[t])
                    xp.matmul(members[t], w_hr.T, out=hidden[t + write])
        self.acts, self.hidden, self.cells, self.tanh_c, self.members = acts, hidden, cells, tanh_c, members
        out, h_last = self._written(hidden)
        return out, h_last, self._last(cells)

    def _array_backward(self, g_out, g_h, g_c):
        _, _, _, w_hh, _, w_hr = self.saved_inputs
        xp = self.xp
        acts, tanh_c, members = self.acts, self.tanh_c, self.members
        steps, batch, gates = acts.shape
        size = gates // 4
        i, f, g, o = (acts[..., k * size : (k + 1) * size] for k in range(4))
        c_prev = self._read_span(self.cells)
        # The gradient of each pre-activation is a coefficient times dc (i, f, g) or dm (o), for all steps at once.
        coef = xp.empty((steps, batch, 3, size), dtype=acts.dtype)
        coef[:, :, 0] = g * i * (1 - i)
        coef[:, :, 1] = c_prev * f * (1 - f)
        coef[:, :, 2] = i * (1 - g * g)
        coef_o = tanh_c * o * (1 - o)
        dc_dm = o * (1 - tanh_c * tanh_c)
        d_gates = xp.empty((steps, batch, 4, size), dtype=acts.dtype)
        d_h = None if w_hr is None else xp.empty((steps,) + g_h.shape, dtype=acts.dtype)
        upstream, whh = g_out.array, w_hh.array
        dh, dc = g_h.array.copy(), g_c.array.copy()
        for t in reversed(self._order(steps)):
            dh += upstream[t]
            if w_hr is None:
                dm = dh
            else:
                d_h[t] = dh
                dm = dh @ w_hr.array
            dc += dm * dc_dm[t]
            d = d_gates[t]
            xp.multiply(coef[t], dc[:, None, :], out=d[:, :3])
            xp.multiply(dm, coef_o[t], out=d[:, 3])
            dc *= f[t]
            dh = d.reshape(batch, gates) @ whh
        need = self.needs_input_grad
        d_gates = d_gates.reshape(steps, batch, gates)
        grad_w, grad_b = self._weight_grads(d_gates, self._read_span(self.hidden))
        grad_w_hr = None
        if w_hr is not None and need[5]:
            grad_w_hr = _constant(d_h.reshape(-1, d_h.shape[-1]).T @ members.reshape(-1, size))
        return (_constant(d_gates) if need[0] else None, _constant(dh) if need[1] else None,
                _constant(dc) if need[2] else None, grad_w, grad_b, grad_w_hr)

    @staticmethod
    def _parts(inputs, default=None):
        return tuple(inputs)

    @staticmethod
    def _pack(grad_gi, grad_h0, grad_c0, grad_w_hh, grad_b_hh, grad_w_hr):
        return grad_gi, grad_h0, grad_c0, grad_w_hh, grad_b_hh, grad_w_hr

    @staticmethod
    def _tensor_step(gi_t, h, c, w_hh, b_hh, w_hr):
        size = c.shape[-1]
        gates = gi_t + Linear()(h, w_hh, b_hh)
        i = gates[:, :size].sigmoid()
        f = gates[:, size : 2 * size].sigmoid()
        g = gates[:, 2 * size : 3 * size].tanh()
        o = gates[:, 3 * size :].sigmoid()
        c_next = f * c + i * g
        tc = c_next.tanh()
        m = o * tc
        h_next = m if w_hr is None else Linear()(m, w_hr, None)
        return h_next, c_next, (i, f, g, o, c, tc, m)

    @staticmethod
    def _tensor_step_backward(cache, dh, dc, w_hr):
        i, f, g, o, c_prev, tc, _ = cache
        dm = dh if w_hr is None else dh @ w_hr
        dc = dc + dm * o * (1 - tc * tc)
        d_gates = cat([dc * g * i * (1 - i), dc * c_prev * f * (1 - f), dc * i * (1 - g * g),
                       dm * tc * o * (1 - o)], 1)
        return None, d_gates, None, dc * f


class GRULayer(_RecurrentLayer):
    """A whole GRU layer: (gi, h0, w_hh, b_hh) -> (out, h_T); see the module docstring.

    Per step, with ``gh = h w_hh^T + b_hh`` split into r, z, n like ``gi``:
    ``r, z = sigmoid(gi_rz + gh_rz)``, ``n = tanh(gi_n + r gh_n)``, ``h' = n + z (h - n)``.
    """

    def forward(self, gi, h0, w_hh, b_hh):
        self.retain_inputs((0, 1, 2, 3))
        xp = self.xp
        steps = gi.shape[0]
        size = gi.shape[2] // 3
        w_t = w_hh.T
        acts = xp.empty_like(gi)  # r, z, n of every step
        recurrent = xp.empty_like(gi)  # gh = h w_hh^T + b_hh of every step (its n part is kept for backward)
        hidden = self._states(h0, steps)
        read, write = self._read, self._write
        with np.errstate(over="ignore"):
            for t in self._order(steps):
                h = hidden[t + read]
                gh = xp.matmul(h, w_t, out=recurrent[t])
                if b_hh is not None:
                    gh += b_hh
                a = acts[t]
                rz = xp.add(gi[t, :, : 2 * size], gh[:, : 2 * size], out=a[:, : 2 * size])
                _sigmoid(rz, rz, xp)
                n = xp.multiply(rz[:, :size], gh[:, 2 * size :], out=a[:, 2 * size :])
                n += gi[t, :, 2 * size :]
                xp.tanh(n, out=n)
                h_next = xp.subtract(h, n, out=hidden[t + write])
                h_next *= rz[:, size:]
                h_next += n
        self.acts, self.hidden, self.recurrent_n = acts, hidden, recurrent[..., 2 * size :]
        return self._written(hidden)

    def _array_backward(self, g_out, g_h):
        _, _, w_hh, _ = self.saved_inputs
        xp = self.xp
        acts = self.acts
        steps, size = acts.shape[0], acts.shape[2] // 3
        r, z, n = (acts[..., k * size : (k + 1) * size] for k in range(3))
        read = self._read_span(self.hidden)
        coef_n = (1 - z) * (1 - n * n)
        coef_z = (read - n) * z * (1 - z)
        coef_r = self.recurrent_n * r * (1 - r)
        d_gh = xp.empty_like(acts)  # gradient of gh; that of gi differs only in the n part
        d_n = xp.empty_like(n)
        upstream, whh = g_out.array, w_hh.array
        dh = g_h.array.copy()
        for t in reversed(self._order(steps)):
            dh += upstream[t]
            d = d_gh[t]
            dn = xp.multiply(dh, coef_n[t], out=d_n[t])
            xp.multiply(dn, coef_r[t], out=d[:, :size])
            xp.multiply(dh, coef_z[t], out=d[:, size : 2 * size])
            xp.multiply(dn, r[t], out=d[:, 2 * size :])
            dh = d @ whh + dh * z[t]
        need = self.needs_input_grad
        grad_gi = None
        if need[0]:
            grad_gi = d_gh.copy()
            grad_gi[..., 2 * size :] = d_n
            grad_gi = _constant(grad_gi)
        grad_w, grad_b = self._weight_grads(d_gh, read)
        return grad_gi, _constant(dh) if need[1] else None, grad_w, grad_b

    @staticmethod
    def _tensor_step(gi_t, h, c, w_hh, b_hh, w_hr):
        size = h.shape[-1]
        gh = Linear()(h, w_hh, b_hh)
        rz = (gi_t[:, : 2 * size] + gh[:, : 2 * size]).sigmoid()
        r, z = rz[:, :size], rz[:, size:]
        gh_n = gh[:, 2 * size :]
        n = (gi_t[:, 2 * size :] + r * gh_n).tanh()
        return n + z * (h - n), None, (r, z, n, gh_n, h)

    @staticmethod
    def _tensor_step_backward(cache, dh, dc, w_hr):
        r, z, n, gh_n, h_prev = cache
        dn = dh * (1 - z) * (1 - n * n)
        dr = dn * gh_n * r * (1 - r)
        dz = dh * (h_prev - n) * z * (1 - z)
        return cat([dr, dz, dn], 1), cat([dr, dz, dn * r], 1), dh * z, None


class RNNLayer(_RecurrentLayer):
    """A whole Elman RNN layer: (gi, h0, w_hh, b_hh) -> (out, h_T), ``h' = act(gi_t + h w_hh^T + b_hh)``.

    Args:
        nonlinearity: "tanh" or "relu" (relu's gradient is 0 at 0, as in PyTorch).
        reverse: run from the last step to the first.

    Raises:
        ValueError: another nonlinearity.
    """

    def __init__(self, nonlinearity: str = "tanh", reverse: bool = False):
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"RNNLayer: unknown nonlinearity {nonlinearity!r}; expected 'tanh' or 'relu'")
        super().__init__(reverse)
        self.nonlinearity = nonlinearity

    def forward(self, gi, h0, w_hh, b_hh):
        self.retain_inputs((0, 1, 2, 3))
        xp = self.xp
        pre = gi if b_hh is None else gi + b_hh
        w_t = w_hh.T
        hidden = self._states(h0, gi.shape[0])
        read, write = self._read, self._write
        tanh = self.nonlinearity == "tanh"
        for t in self._order(gi.shape[0]):
            z = hidden[t + read] @ w_t
            z += pre[t]
            if tanh:
                xp.tanh(z, out=hidden[t + write])
            else:
                xp.maximum(z, 0, out=hidden[t + write])
        self.hidden = hidden
        return self._written(hidden)

    def _array_backward(self, g_out, g_h):
        _, _, w_hh, _ = self.saved_inputs
        xp = self.xp
        hidden = self.hidden
        written = hidden[:-1] if self.reverse else hidden[1:]
        slope = 1 - written * written if self.nonlinearity == "tanh" else (written > 0).astype(written.dtype)
        d_pre = xp.empty_like(slope)
        upstream, whh = g_out.array, w_hh.array
        dh = g_h.array.copy()
        for t in reversed(self._order(slope.shape[0])):
            dh += upstream[t]
            dh = xp.multiply(dh, slope[t], out=d_pre[t]) @ whh
        need = self.needs_input_grad
        grad_w, grad_b = self._weight_grads(d_pre, self._read_span(hidden))
        return _constant(d_pre) if need[0] else None, _constant(dh) if need[1] else None, grad_w, grad_b

    def _tensor_step(self, gi_t, h, c, w_hh, b_hh, w_hr):
        pre = gi_t + Linear()(h, w_hh, b_hh)
        h_next = pre.tanh() if self.nonlinearity == "tanh" else pre.relu()
        return h_next, None, (h_next,)

    def _tensor_step_backward(self, cache, dh, dc, w_hr):
        (h,) = cache
        if self.nonlinearity == "tanh":
            return None, dh * (1 - h * h), None, None
        return None, dh * (h.detach() > 0).to(dh.dtype), None, None


OPS = {
    "lstm_layer": LSTMLayer,
    "gru_layer": GRULayer,
    "rnn_layer": RNNLayer,
}
