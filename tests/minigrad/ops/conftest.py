"""Fixtures of the op test suite: the device parameter and the strategy of case examples.

Every op test runs once per device ("cpu", "cuda"); the CUDA run is skipped,
with the reason given by ``minigrad.backend``, where no GPU is usable.

``examples(case)`` is the hypothesis strategy of one example of an
``OpCase``: its input shapes, float64 input values that respect the case's
``low``/``high``, ``away_from``/``margin`` and ``distinct``, and, when the
case has ``extra["params"]`` (a function of the drawn shapes returning a
strategy), the keyword argument ``params`` its ``fn`` is called with.

Keys of ``OpCase.extra`` the runners understand:

* ``"params"``: see above;
* ``"gradcheck"``: keyword arguments for ``mg.autograd.gradcheck`` (``eps``, ...);
* ``"records_on_cpu"``: False when the op records no node on the CPU (a move
  to the CPU of a CPU tensor), so ``test_registry`` looks for it on CUDA only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pytest
import torch
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minigrad as mg
from minigrad import backend

DEVICES = ("cpu", "cuda")


@pytest.fixture(scope="session", params=DEVICES)
def device(request) -> str:
    """The device op tests run on; "cuda" skips when no GPU can be used."""
    if request.param == "cuda" and not backend.cuda_is_available():
        pytest.skip(backend.cuda_unavailable_reason())
    return request.param


@dataclass
class Example:
    """One drawn example of an op case: input values and the extra ``fn`` arguments."""

    arrays: list
    kwargs: dict

    def run(self, case, lib, functional, inputs):
        """``case.fn(lib, functional, *inputs)`` with this example's params."""
        return case.fn(lib, functional, *inputs, **self.kwargs)

    def minigrad_inputs(self, device: str) -> list:
        """Fresh minigrad leaves (float64, requires_grad) on ``device``."""
        return [mg.tensor(a, dtype=mg.float64, device=device, requires_grad=True) for a in self.arrays]

    def torch_inputs(self) -> list:
        """Fresh torch leaves (float64, requires_grad) with the same values."""
        return [torch.tensor(a, dtype=torch.float64, requires_grad=True) for a in self.arrays]


def _shifted_past(values: np.ndarray, points, margin: float) -> np.ndarray:
    """Move ``values`` out of every band (p - margin, p + margin) by a strictly increasing map.

    Values at or above a band's lower edge are shifted up by the band's width,
    point by point in increasing order, so order and gaps are preserved: ties
    stay ties and distinct values stay at least as far apart.
    """
    out = values.copy()
    for p in sorted(points):
        out[out >= p - margin] += 2 * margin
    return out


def _value_strategy(case, shape):
    """Float64 arrays of ``shape`` for ``case`` (see the module docstring)."""
    points = [p for p in case.away_from if case.low - case.margin < p < case.high + case.margin]
    # Draw from a range shortened by the excluded bands; shifting widens it back.
    high = case.high - 2 * case.margin * len(points)
    size = math.prod(shape)
    if case.distinct and size > 1:
        # Distinct ranks plus a jitter below half a slot: every gap is at least
        # (high - low) / (2 * size), far above the finite-difference step.
        base = st.tuples(
            st.permutations(range(size)),
            hnp.arrays(np.float64, size, elements=st.floats(0.0, 0.5)),
        ).map(lambda pj: case.low + (high - case.low) * (np.array(pj[0]) + pj[1]) / size)
    else:
        elements = st.floats(case.low, high, allow_nan=False, allow_infinity=False, allow_subnormal=False)
        base = hnp.arrays(np.float64, size, elements=elements)
    return base.map(lambda flat: _shifted_past(flat, points, case.margin).reshape(shape))


@st.composite
def _examples(draw, case) -> Example:
    shapes = draw(case.shapes)
    arrays = [draw(_value_strategy(case, tuple(shape))) for shape in shapes]
    kwargs = {"params": draw(case.extra["params"](shapes))} if "params" in case.extra else {}
    return Example(arrays, kwargs)


@pytest.fixture(scope="session")
def examples():
    """``examples(case)``: the strategy of ``Example``s of an op case (shapes, values, params)."""
    return _examples
