"""The connectionist temporal classification (CTC) loss: the forward-backward recursion in log space.

A target ``l`` of length ``S`` is aligned to ``T`` frames through its
*extended* labels ``l' = (blank, l1, blank, l2, ..., lS, blank)`` (``2S + 1``
states). A path visits one state per frame; from state ``s`` it may stay,
move to ``s + 1``, or skip to ``s + 2`` when ``l'[s + 2] != l'[s]`` (a skip
over a blank between two different labels). With ``y[t, c] = log_probs[t, c]``:

1. ``alpha[0, 0] = y[0, blank]``, ``alpha[0, 1] = y[0, l1]``; then
   ``alpha[t, s] = logsumexp(alpha[t-1, s], alpha[t-1, s-1], alpha[t-1, s-2] if skip) + y[t, l'[s]]``;
2. the log-likelihood is ``logsumexp(alpha[L-1, 2S], alpha[L-1, 2S-1])`` at the
   sequence's input length ``L`` (only ``alpha[L-1, 0]`` when ``S = 0``; 0 or
   -inf when ``L = 0``), and the loss is its negative;
3. ``beta`` runs the same recursion from the end: ``beta[L-1, 2S] = y[L-1, blank]``,
   ``beta[L-1, 2S-1] = y[L-1, lS]``, ``beta[t, s] = logsumexp(beta[t+1, s],
   beta[t+1, s+1], beta[t+1, s+2] if skip) + y[t, l'[s]]``;
4. ``gamma[t, c] = exp(logsumexp_{s: l'[s] = c}(alpha[t, s] + beta[t, s]) + loss - y[t, c])``
   is the probability that frame ``t`` emits ``c``.

Each step is vectorized over the batch and the extended label axis; only
time is a Python loop. Sequences of different lengths share one padded state
axis, states past ``2S`` held at -inf.

The gradient is PyTorch's, ``exp(y[t, c]) - gamma[t, c]`` for ``t < L`` and 0
after, times the loss's gradient. The exact derivative of the loss in ``y`` is
``-gamma``; the extra ``exp(y)`` sums to 1 over the classes when ``y`` is a
``log_softmax`` output, so a ``log_softmax`` in front (the intended use) gets
exactly the true gradient of its logits, as in PyTorch. For other ``log_probs``
it is PyTorch's value, not the derivative. The gradient is not differentiable
again (``CtcLossGrad`` refuses, as PyTorch does).
"""

from __future__ import annotations

import numpy as np

from minigrad import backend
from minigrad.function import FunctionNode

__all__ = ["CtcLoss", "CtcLossGrad"]

_NEG_INF = -np.inf  # a Python float: NumPy and CuPy keep the arrays' dtype beside it

# Elements of the (time, batch, state, class) block of one step of the per-class sums (``_class_logsumexp``).
_BLOCK_ELEMENTS = 1 << 22


def _logaddexp(xp, *terms):
    """``log(sum(exp(terms)))`` elementwise, shifted by the largest term (0 where all are -inf, so no NaN)."""
    top = terms[0]
    for term in terms[1:]:
        top = xp.maximum(top, term)
    top = xp.where(top == -np.inf, 0, top)
    total = xp.exp(terms[0] - top)
    for term in terms[1:]:
        total = total + xp.exp(term - top)
    return xp.log(total) + top


def _shifted(xp, a, by: int, fill):
    """``a`` moved ``by`` places along the last axis (right for ``by > 0``), ``fill`` where nothing moved in."""
    out = xp.full(a.shape, fill, dtype=a.dtype)
    if by > 0 and by < a.shape[-1]:
        out[..., by:] = a[..., :-by]
    elif by < 0 and -by < a.shape[-1]:
        out[..., :by] = a[..., -by:]
    return out


class CtcLoss(FunctionNode):
    """Per-sequence CTC losses ``(N,)`` of ``log_probs`` ``(T, N, C)``; backward: ``CtcLossGrad``.

    The node is built with the batch's constants (arrays of any device; they
    are moved to ``log_probs``'s):

    * ``targets``: ``(N, S)`` int64 labels, ``S`` the longest target length,
      entries past a sequence's target length ignored;
    * ``input_lengths``, ``target_lengths``: ``(N,)`` int64, within ``[0, T]`` and ``[0, S]``;
    * ``blank``: the blank's class index; ``zero_infinity``: infinite losses
      (no alignment exists) become 0 and their gradients 0.

    The arguments are checked by ``minigrad.nn.ctc_loss.ctc_loss``, not here.
    ``forward`` keeps ``alpha`` for the backward.
    """

    def __init__(self, targets, input_lengths, target_lengths, blank: int, zero_infinity: bool):
        self.targets = targets
        self.input_lengths = input_lengths
        self.target_lengths = target_lengths
        self.blank = blank
        self.zero_infinity = zero_infinity

    def _states(self, log_probs):
        """Extended labels ``(N, 2S+1)``, skip-allowed and in-range masks, lengths on ``log_probs``'s device."""
        xp = self.xp
        targets = xp.asarray(self.targets, dtype=np.int64)
        n, s = targets.shape
        extended = xp.full((n, 2 * s + 1), self.blank, dtype=np.int64)
        extended[:, 1::2] = targets
        skips = xp.zeros(extended.shape, dtype=bool)
        skips[:, 2:] = extended[:, 2:] != extended[:, :-2]
        input_lengths = xp.asarray(self.input_lengths, dtype=np.int64)
        target_lengths = xp.asarray(self.target_lengths, dtype=np.int64)
        in_range = xp.arange(2 * s + 1) <= 2 * target_lengths[:, None]
        emissions = xp.take_along_axis(log_probs, xp.broadcast_to(extended, (log_probs.shape[0],) + extended.shape), 2)
        return extended, skips, in_range, input_lengths, target_lengths, emissions

    def forward(self, log_probs):
        self.retain_inputs((0,))
        with backend.device_context(backend.device_of(log_probs)):  # new arrays on log_probs's GPU
            return self._forward(log_probs)

    def _forward(self, log_probs):
        xp = self.xp
        extended, skips, in_range, input_lengths, target_lengths, emissions = self._states(log_probs)
        steps, batch, states = emissions.shape
        alpha = xp.full(emissions.shape, _NEG_INF, dtype=log_probs.dtype)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            alpha[0, :, 0] = emissions[0, :, 0]
            if states > 1:
                alpha[0, :, 1] = xp.where(target_lengths > 0, emissions[0, :, 1], _NEG_INF)
            for t in range(1, steps):
                before = alpha[t - 1]
                stay_or_move = _logaddexp(xp, before, _shifted(xp, before, 1, _NEG_INF),
                                          xp.where(skips, _shifted(xp, before, 2, _NEG_INF), _NEG_INF))
                alpha[t] = xp.where(in_range, stay_or_move + emissions[t], _NEG_INF)
            rows = xp.arange(batch)
            last = alpha[xp.maximum(input_lengths - 1, 0), rows]  # (N, states): each sequence's last frame
            final = last[rows, 2 * target_lengths]
            before_final = xp.where(target_lengths > 0, last[rows, xp.maximum(2 * target_lengths - 1, 0)], _NEG_INF)
            log_likelihood = _logaddexp(xp, final, before_final)
            empty = xp.where(target_lengths == 0, xp.zeros_like(final), _NEG_INF)
            log_likelihood = xp.where(input_lengths == 0, empty, log_likelihood)
        self.alpha, self.emissions = alpha, emissions
        self.extended, self.skips, self.in_range = extended, skips, in_range
        self.lengths = (input_lengths, target_lengths)
        self.nll = -log_likelihood
        if self.zero_infinity:
            return xp.where(self.nll == np.inf, xp.zeros_like(self.nll), self.nll)
        return self.nll.copy()

    def backward(self, g):
        (log_probs,) = self.saved_inputs
        return CtcLossGrad(self)(g, log_probs)


class CtcLossGrad(FunctionNode):
    """PyTorch's gradient of ``CtcLoss`` in ``log_probs`` for the upstream ``g`` ``(N,)`` (inputs: g, log_probs).

    Runs the beta recursion, sums ``alpha + beta`` per class, and returns
    ``(exp(y) - gamma) * g`` for frames before each input length, 0 after and
    for the sequences ``zero_infinity`` zeroed. Not differentiable: its
    backward raises RuntimeError, like PyTorch's ``_ctc_loss_backward``.
    """

    def __init__(self, loss: CtcLoss):
        self.loss = loss

    def _beta(self):
        loss, xp = self.loss, self.xp
        emissions, skips, in_range = loss.emissions, loss.skips, loss.in_range
        input_lengths, target_lengths = loss.lengths
        steps, batch, states = emissions.shape
        last_states = xp.arange(states)
        starts = (last_states == 2 * target_lengths[:, None]) | (
            (last_states == 2 * target_lengths[:, None] - 1) & (target_lengths[:, None] > 0))
        skip_from = _shifted(xp, skips, -2, False)  # a skip from s to s + 2 is allowed where l'[s + 2] != l'[s]
        beta = xp.full(emissions.shape, _NEG_INF, dtype=emissions.dtype)
        after = xp.full((batch, states), _NEG_INF, dtype=emissions.dtype)
        for t in range(steps - 1, -1, -1):
            stay_or_move = _logaddexp(xp, after, _shifted(xp, after, -1, _NEG_INF),
                                      xp.where(skip_from, _shifted(xp, after, -2, _NEG_INF), _NEG_INF))
            recursed = xp.where(in_range & (t < input_lengths[:, None] - 1), stay_or_move + emissions[t], _NEG_INF)
            beta[t] = xp.where(starts & (t == input_lengths[:, None] - 1), emissions[t], recursed)
            after = beta[t]
        return beta

    def _class_logsumexp(self, log_products, classes: int):
        """``out[t, n, c] = logsumexp`` of ``log_products[t, n, s]`` over the states ``s`` labelled ``c``.

        A masked (time block, N, states, C) array per block of frames, each
        class shifted by its own largest term, so a class far below the
        others keeps its exact value.
        """
        xp, loss = self.xp, self.loss
        steps, batch, states = log_products.shape
        labelled = (loss.extended[:, :, None] == xp.arange(classes)) & loss.in_range[:, :, None]  # (N, states, C)
        out = xp.empty((steps, batch, classes), dtype=log_products.dtype)
        block = max(1, _BLOCK_ELEMENTS // max(1, batch * states * classes))
        for start in range(0, steps, block):
            terms = xp.where(labelled, log_products[start:start + block, :, :, None], -np.inf)
            top = terms.max(axis=2)
            top = xp.where(top == -np.inf, 0, top)
            out[start:start + block] = xp.log(xp.exp(terms - top[:, :, None, :]).sum(axis=2)) + top
        return out

    def _last_label_as_blank(self, occupancy, log_products) -> None:
        """PyTorch's (CPU) sum at a sequence's last frame where its last label is the blank class itself.

        There only the two final states count, and PyTorch writes the last
        label's term over the blank's instead of adding them (it assumes the
        two classes differ); a target holding the blank is invalid input, but
        its gradient is PyTorch's all the same.
        """
        xp, loss = self.xp, self.loss
        input_lengths, target_lengths = loss.lengths
        rows = xp.arange(input_lengths.shape[0])
        label_state = xp.maximum(2 * target_lengths - 1, 0)
        overwritten = (input_lengths > 0) & (target_lengths > 0) & (loss.extended[rows, label_state] == loss.blank)
        if bool(overwritten.any()):
            frame = xp.maximum(input_lengths - 1, 0)[overwritten]
            rows = rows[overwritten]
            occupancy[frame, rows, loss.blank] = log_products[frame, rows, label_state[overwritten]]

    def forward(self, g, log_probs):
        with backend.device_context(backend.device_of(log_probs)):  # new arrays on log_probs's GPU
            return self._forward(g, log_probs)

    def _forward(self, g, log_probs):
        loss, xp = self.loss, self.xp
        input_lengths, _ = loss.lengths
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            log_products = loss.alpha + self._beta()  # log(alpha * beta) per frame and state
            occupancy = self._class_logsumexp(log_products, log_probs.shape[2])
            self._last_label_as_blank(occupancy, log_products)
            nll = loss.nll[None, :, None]
            grad = (xp.exp(log_probs) - xp.exp(occupancy + nll - log_probs)) * g[None, :, None]
        keep = xp.arange(log_probs.shape[0])[:, None] < input_lengths  # (T, N): frames inside each sequence
        if loss.zero_infinity:
            keep = keep & (loss.nll != np.inf)
        self.loss = None  # the loss node's alpha is freed with it; this node needs nothing more
        return xp.where(keep[:, :, None], grad, xp.zeros_like(grad))

    def backward(self, gg):
        raise RuntimeError("the gradient of ctc_loss is not differentiable (PyTorch does not implement the "
                           "derivative of its backward either); take first-order gradients of ctc_loss only")


OPS = {
    "ctc_loss": CtcLoss,
}
