"""Every op in ``minigrad.ops.REGISTRY`` is covered by the op test suite.

Each case is run by both runners (gradcheck and the PyTorch oracle), so one
case per op gives both kinds of check. A case only counts if its program
really records the op's graph node for some drawn example.
"""

from __future__ import annotations

import pytest
from hypothesis import Phase, find, settings
from hypothesis import strategies as st
from hypothesis.errors import NoSuchExample

import minigrad as mg
import minigrad.nn.functional as F
from minigrad.ops import REGISTRY
from tests.minigrad.ops.op_cases import CASES, load_all_cases

load_all_cases()  # every cases_*.py module appends its cases to CASES

def test_every_op_has_a_case():
    missing = sorted(set(REGISTRY) - {c.op for c in CASES})
    assert not missing, f"ops of minigrad.ops.REGISTRY without a test case: {missing}"


def test_every_case_names_a_registered_op():
    unknown = sorted({c.op for c in CASES} - set(REGISTRY))
    assert not unknown, f"test cases name ops missing from minigrad.ops.REGISTRY: {unknown}"


def test_case_labels_are_unique():
    labels = [c.label for c in CASES]
    assert len(labels) == len(set(labels)), sorted({x for x in labels if labels.count(x) > 1})


def _recorded_node_types(outputs) -> set:
    """The types of every graph node reachable from ``outputs``."""
    types, seen = set(), set()
    stack = [o.grad_fn for o in outputs if o.grad_fn is not None]
    while stack:
        node = stack.pop()
        if id(node) not in seen:
            seen.add(id(node))
            types.add(type(node))
            stack.extend(edge[0] for edge in node.next_edges if edge is not None)
    return types


@pytest.mark.parametrize("op", sorted(REGISTRY))
def test_some_case_records_the_op(op, device, examples):
    cases = [c for c in CASES if c.op == op and (device != "cpu" or c.extra.get("records_on_cpu", True))]
    if not cases:
        if any(c.op == op for c in CASES):
            pytest.skip(f"{op} records no graph node on the CPU; its cases check it on CUDA")
        pytest.fail(f"{op} has no test case")
    node_type = REGISTRY[op]

    def records(drawn) -> bool:
        case, example = drawn
        result = example.run(case, mg, F, example.minigrad_inputs(device))
        outputs = tuple(result) if isinstance(result, tuple) else (result,)
        return node_type in _recorded_node_types(outputs)

    drawn = st.sampled_from(cases).flatmap(lambda c: examples(c).map(lambda ex: (c, ex)))
    try:
        # The first example found is enough: no shrinking.
        find(drawn, records, settings=settings(max_examples=100, database=None, phases=[Phase.generate]))
    except NoSuchExample:
        pytest.fail(f"no case of {op!r} records a {node_type.__name__} node in its graph")
