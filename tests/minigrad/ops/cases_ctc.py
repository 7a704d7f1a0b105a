# ruff: noqa: N803  (every program takes PyTorch's conventional name F for nn.functional)
"""Op cases for ``ctc_loss`` (``minigrad.ops.ctc.CtcLoss``, called through ``minigrad.nn.ctc_loss.ctc_loss``).

Each case runs by gradcheck and against PyTorch (see ``op_cases.py``). The
input is logits put through ``log_softmax``: there PyTorch's CTC gradient is
the exact derivative, so finite differences can check it (for other
log_probs PyTorch's gradient is not the derivative; ``test_ctc_loss.py``
compares those with PyTorch only). Targets, lengths, blank and reduction are
drawn per example; with ``zero_infinity`` the input lengths may be too short
for the targets (those losses are 0), without it they always fit.
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from tests.minigrad.ops.op_cases import case


def _ctc_loss(lib):
    """``F.ctc_loss`` of ``lib`` (minigrad's from its module until the name is wired into ``nn.functional``)."""
    if lib.__name__ == "torch":
        return lib.nn.functional.ctc_loss
    from minigrad.nn.ctc_loss import ctc_loss  # noqa: PLC0415

    return ctc_loss


def _needed_frames(labels) -> int:
    """The fewest frames that align ``labels``: one per label, plus a blank between equal neighbours."""
    return len(labels) + sum(a == b for a, b in zip(labels, labels[1:]))


@st.composite
def _ctc_params(draw, drawn):
    """Targets (padded or concatenated), input and target lengths, blank, reduction and zero_infinity."""
    shape = drawn[0]
    steps, classes = shape[0], shape[-1]
    batch = shape[1] if len(shape) == 3 else 1
    blank = draw(st.integers(0, classes - 1))
    zero_infinity = draw(st.booleans())
    labels = [c for c in range(classes) if c != blank]
    targets, input_lengths = [], []
    for _ in range(batch):
        target = draw(st.lists(st.sampled_from(labels), max_size=steps))
        while not zero_infinity and _needed_frames(target) > steps:
            target = target[:-1]
        targets.append(target)
        low = 0 if zero_infinity else _needed_frames(target)
        input_lengths.append(draw(st.integers(low, steps)))
    longest = max(len(t) for t in targets)
    concatenated = draw(st.booleans())
    if concatenated:
        target_array = np.array([c for t in targets for c in t], dtype=np.int64)
    else:
        target_array = np.array([t + [blank] * (longest - len(t)) for t in targets], dtype=np.int64)
    return {
        "targets": target_array,
        "input_lengths": input_lengths,
        "target_lengths": [len(t) for t in targets],
        "blank": blank,
        "reduction": draw(st.sampled_from(["mean", "sum", "none"])),
        "zero_infinity": zero_infinity,
        "tensor_lengths": draw(st.booleans()),
    }


def _ctc(lib, logits, params):
    """The CTC loss of ``log_softmax(logits)`` (classes on the last dim) for the drawn targets."""
    lengths = (params["input_lengths"], params["target_lengths"])
    if params["tensor_lengths"]:
        lengths = tuple(lib.tensor(v, dtype=lib.int64) for v in lengths)
    if logits.ndim == 2:  # unbatched: one sequence
        lengths = tuple(v[0] if not isinstance(v, list) else v for v in lengths)
    return _ctc_loss(lib)(logits.log_softmax(-1), lib.tensor(params["targets"]), *lengths, blank=params["blank"],
                          reduction=params["reduction"], zero_infinity=params["zero_infinity"])


_batched = st.tuples(st.integers(1, 6), st.integers(1, 3), st.integers(2, 4)).map(lambda s: (s,))
_unbatched = st.tuples(st.integers(1, 6), st.integers(2, 4)).map(lambda s: (s,))

case("ctc_loss", lambda lib, F, x, params: _ctc(lib, x, params), _batched, extra={"params": _ctc_params})
case("ctc_loss", lambda lib, F, x, params: _ctc(lib, x, params), _unbatched, extra={"params": _ctc_params},
     name="ctc_loss_unbatched")
