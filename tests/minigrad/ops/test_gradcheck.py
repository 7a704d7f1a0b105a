"""Every op case, checked against central finite differences in float64 (``mg.autograd.gradcheck``)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import minigrad as mg
import minigrad.nn.functional as F
from tests.minigrad.ops.op_cases import CASES, load_all_cases

load_all_cases()  # every cases_*.py module appends its cases to CASES

@pytest.mark.parametrize("case", CASES, ids=lambda c: c.label)
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_gradcheck(case, device, examples, data):
    example = data.draw(examples(case), label="example")
    inputs = example.minigrad_inputs(device)

    def program(*xs):
        return example.run(case, mg, F, xs)

    assert mg.autograd.gradcheck(program, inputs, **case.extra.get("gradcheck", {}))
