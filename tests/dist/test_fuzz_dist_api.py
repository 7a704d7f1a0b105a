"""Wrong inputs to minigrad_dist's public API raise documented errors on every rank, never hang.

The calls that need a process group or RPC run on the 2-rank pool (the
table is ``programs_fuzz.CASES``): every rank must raise the same
documented exception (TypeError, ValueError, RuntimeError, IndexError, or
a documented subclass such as ``RpcTimeoutError``) with a message naming
the call, the argument or the value; a rank that raises while another
waits in a collective is a hang, caught by the pool's timeout. A failed
``init_process_group``/``init_rpc`` must leave nothing half made. The
sampler and the PowerSGD state need no MPI and are checked here.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from minigrad_dist import DistributedSampler
from minigrad_dist.algorithms.ddp_comm_hooks import PowerSGDState
from minigrad_dist.testing.pool import PoolTimeout
from tests.dist import programs_fuzz as programs
from tests.dist.conftest import get_pool
from tests.test_fuzz_public_api import NAN, PROBLEM_WORDS, _call, _value_words, case, check_error

pytestmark = pytest.mark.timeout(300)

TASK_TIMEOUT = 60.0
CASES = programs.CASES


def _run(name, items):
    try:
        return get_pool(2).run(programs.run_calls, name, items, timeout=TASK_TIMEOUT)
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


@pytest.mark.parametrize("c", CASES, ids=[c.name for c in CASES])
def test_valid_calls_work_on_every_rank(c):
    for outcome in _run(c.name, [(None, "bad", 0)]):
        assert outcome[0]["raised"] is None, f"the valid call of {c.name} failed: {outcome[0]}"


# Bugs found by this suite that need more than an argument check, expected to fail (strictly).
# All reported so far are fixed.
KNOWN_BUGS = {}


def _bad_items():
    for c in CASES:
        for arg, values in c.bad.items():
            for index, value in enumerate(values):
                reason = KNOWN_BUGS.get((c.name, arg, repr(value)))
                marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
                yield pytest.param(c, arg, index, marks=marks, id=f"{c.name}-{arg}={value!r}"[:90])


@pytest.mark.parametrize("c, arg, index", list(_bad_items()))
def test_wrong_argument_raises_the_same_documented_error_on_every_rank(c, arg, index):
    per_rank = [outcomes[0] for outcomes in _run(c.name, [(arg, "bad", index)])]
    check_outcomes(c, arg, c.bad[arg][index], per_rank, must_raise=True)


FUZZABLE = [c for c in CASES if [a for a in c.valid if a not in c.fixed]]


@pytest.mark.parametrize("c", FUZZABLE, ids=[c.name for c in FUZZABLE])
@settings(max_examples=8, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_odd_values_never_leak_undocumented_errors_or_hang(c, data):
    arg = data.draw(st.sampled_from([a for a in c.valid if a not in c.fixed]), label="argument")
    index = data.draw(st.integers(0, len(programs.ODD_VALUES) - 1), label="odd value")
    (outcome_rank0,), (outcome_rank1,) = _run(c.name, [(arg, "odd", index)])
    check_outcomes(c, arg, programs.ODD_VALUES[index], [outcome_rank0, outcome_rank1], must_raise=False)


# -- no MPI needed -------------------------------------------------------------------------------------


LOCAL_CASES = [
    case(
        "DistributedSampler",
        DistributedSampler,
        dict(dataset_or_length=10, num_replicas=2, rank=1, shuffle=True, seed=0, drop_last=False),
        dict(
            dataset_or_length=[-1, None, 1.5, object()],
            num_replicas=[0, -1, 1.5, "a"],
            rank=[2, -1, "a", 1.5],
            seed=["a", 1.5, None],
        ),
        names=("dataset", "length", "num_replicas", "rank", "seed"),
    ),
    case(
        "PowerSGDState",
        PowerSGDState,
        dict(process_group=None, matrix_approximation_rank=1, start_powerSGD_iter=10, random_seed=0),
        dict(
            process_group=[5, "abc"],
            matrix_approximation_rank=[0, -1, 1.5, "a", NAN],
            start_powerSGD_iter=[-1, "a", 1.5],
            random_seed=[-1, "a", 1.5],
        ),
        names=("process_group", "matrix_approximation_rank", "start_powerSGD_iter", "random_seed"),
    ),
]


@pytest.mark.parametrize("c", LOCAL_CASES, ids=[c.name for c in LOCAL_CASES])
def test_local_objects_reject_wrong_arguments(c):
    _call(c)
    for arg, values in c.bad.items():
        for value in values:
            with pytest.raises(BaseException) as info:
                _call(c, {arg: value})
            check_error(info.value, c, arg, value)
