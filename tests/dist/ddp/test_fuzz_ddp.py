"""Wrong inputs to DistributedDataParallel raise documented errors on every rank, never hang.

The calls run on the 2-rank pool (the table is ``programs_fuzz_ddp.CASES``):
every rank must raise the same documented exception (TypeError, ValueError,
RuntimeError, IndexError, or a documented subclass) with a message naming
the call, the argument or the value; a rank that raises while another waits
in a collective is a hang, caught by the pool's timeout. The PowerSGD state
needs no MPI and is checked here too. The rank side is
``tests/dist/fuzz_ranks.py``, the checks ``tests/dist/fuzz_checks.py``.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from minigrad_dist.algorithms.ddp_comm_hooks import PowerSGDState
from tests.dist.ddp import programs_fuzz_ddp as programs
from tests.dist.fuzz_checks import bad_items, check_outcomes, fuzzable, run_case
from tests.test_fuzz_public_api import NAN, _call, case, check_error

pytestmark = pytest.mark.timeout(300)

CASES = programs.CASES


def _run(name, items):
    return run_case(programs, name, items)


@pytest.mark.parametrize("c", CASES, ids=[c.name for c in CASES])
def test_valid_calls_work_on_every_rank(c):
    for outcome in _run(c.name, [(None, "bad", 0)]):
        assert outcome[0]["raised"] is None, f"the valid call of {c.name} failed: {outcome[0]}"


@pytest.mark.parametrize("c, arg, index", list(bad_items(CASES)))
def test_wrong_argument_raises_the_same_documented_error_on_every_rank(c, arg, index):
    per_rank = [outcomes[0] for outcomes in _run(c.name, [(arg, "bad", index)])]
    check_outcomes(c, arg, c.bad[arg][index], per_rank, must_raise=True)


FUZZABLE = fuzzable(CASES)


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
