"""The test side of the distributed API fuzz tests: run a case's calls on the 2-rank pool, judge the outcomes.

Each area's ``test_fuzz_*.py`` walks its own table (``programs_fuzz_*.CASES``)
with these helpers; the rank side is ``fuzz_ranks.py``.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from minigrad_dist.testing.pool import PoolTimeout
from tests.dist import fuzz_ranks
from tests.dist.conftest import get_pool
from tests.test_fuzz_public_api import PROBLEM_WORDS, _value_words

TASK_TIMEOUT = 60.0

# Bugs found by these tests that need more than an argument check, expected to fail (strictly),
# keyed by (case name, argument, repr of the value). All reported so far are fixed.
KNOWN_BUGS = {}


def run_case(programs, name, items):
    """The per-rank outcomes of case ``name`` of the table module ``programs`` (see ``fuzz_ranks.run_calls``)."""
    try:
        return get_pool(2).run(fuzz_ranks.run_calls, programs.__name__, name, items, timeout=TASK_TIMEOUT)
    except PoolTimeout as error:
        pytest.fail(f"{name} with {items} hung (a rank waits in a collective another rank left?):\n{error}")


def check_outcomes(c, arg, value, per_rank, must_raise):
    """The ranks agree; a raise is documented, informative, and leaves nothing half initialized."""
    label = f"{c.name}({arg}={value!r})"
    raised = {o["raised"] for o in per_rank}
    assert len(raised) == 1, f"{label}: the ranks disagree: {per_rank}"
    first = per_rank[0]
    if first["raised"] is None:
        assert not must_raise, f"{label} raised nothing"
        return
    assert first["documented"], f"{label} raised {first['raised']}: {first['message']}"
    assert not any(o.get("left_initialized") for o in per_rank), f"{label} failed but left itself initialized"
    message = first["message"]
    assert message.strip(), f"{label} raised {first['raised']} with an empty message"
    words = [c.name.split(".")[-1].split("(")[0], arg, *c.names, *PROBLEM_WORDS, *_value_words(value)]
    assert any(w.lower() in message.lower() for w in words if w), (
        f"{label}: the message names neither the call nor {arg!r} nor the value: {first['raised']}: {message}"
    )


def bad_items(cases):
    """``pytest.param(case, argument, index)`` for every certainly wrong value of every case (known bugs xfail)."""
    for c in cases:
        for arg, values in c.bad.items():
            for index, value in enumerate(values):
                reason = KNOWN_BUGS.get((c.name, arg, repr(value)))
                marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
                yield pytest.param(c, arg, index, marks=marks, id=f"{c.name}-{arg}={value!r}"[:90])


def fuzzable(cases):
    """The cases with an argument the odd-values test may replace (not ``fixed``)."""
    return [c for c in cases if [a for a in c.valid if a not in c.fixed]]


def fuzz_tests(programs):
    """The three fuzz tests of the table module ``programs`` (its ``CASES`` and ``ODD_VALUES``), for a test file.

    Returns ``(valid, wrong, odd)``: every valid call works on every rank;
    every certainly wrong value raises the same documented error on every
    rank; odd values drawn by hypothesis work or raise so, and never hang.
    """
    cases = programs.CASES

    def run(name, items):
        return run_case(programs, name, items)

    @pytest.mark.parametrize("c", cases, ids=[c.name for c in cases])
    def test_valid_calls_work_on_every_rank(c):
        for outcome in run(c.name, [(None, "bad", 0)]):
            assert outcome[0]["raised"] is None, f"the valid call of {c.name} failed: {outcome[0]}"

    @pytest.mark.parametrize("c, arg, index", list(bad_items(cases)))
    def test_wrong_argument_raises_the_same_documented_error_on_every_rank(c, arg, index):
        per_rank = [outcomes[0] for outcomes in run(c.name, [(arg, "bad", index)])]
        check_outcomes(c, arg, c.bad[arg][index], per_rank, must_raise=True)

    odd_cases = fuzzable(cases)

    @pytest.mark.parametrize("c", odd_cases, ids=[c.name for c in odd_cases])
    @settings(max_examples=8, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
    @given(data=st.data())
    def test_odd_values_never_leak_undocumented_errors_or_hang(c, data):
        arg = data.draw(st.sampled_from([a for a in c.valid if a not in c.fixed]), label="argument")
        index = data.draw(st.integers(0, len(programs.ODD_VALUES) - 1), label="odd value")
        (outcome_rank0,), (outcome_rank1,) = run(c.name, [(arg, "odd", index)])
        check_outcomes(c, arg, programs.ODD_VALUES[index], [outcome_rank0, outcome_rank1], must_raise=False)

    return (test_valid_calls_work_on_every_rank, test_wrong_argument_raises_the_same_documented_error_on_every_rank,
            test_odd_values_never_leak_undocumented_errors_or_hang)
