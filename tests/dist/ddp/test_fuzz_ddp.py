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

from minigrad_dist.algorithms.ddp_comm_hooks import PowerSGDState
from tests.dist.ddp import programs_fuzz_ddp as programs
from tests.dist.fuzz_checks import fuzz_tests
from tests.test_fuzz_public_api import NAN, _call, case, check_error

pytestmark = pytest.mark.timeout(300)

(
    test_valid_calls_work_on_every_rank,
    test_wrong_argument_raises_the_same_documented_error_on_every_rank,
    test_odd_values_never_leak_undocumented_errors_or_hang,
) = fuzz_tests(programs)


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
