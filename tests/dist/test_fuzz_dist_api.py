"""Wrong inputs to minigrad_dist's cross-cutting API raise documented errors on every rank, never hang.

Checkpoints and the debug level run on the 2-rank pool (the table is
``programs_fuzz.CASES``): every rank must raise the same documented
exception (TypeError, ValueError, RuntimeError, IndexError, or a documented
subclass) with a message naming the call, the argument or the value; a rank
that raises while another waits in a collective is a hang, caught by the
pool's timeout. The sampler needs no MPI and is checked here. The rank side
is ``fuzz_ranks.py``, the checks ``fuzz_checks.py``. Each area's fuzz tests
are beside its other tests: ``collectives/test_fuzz_collectives.py``,
``ddp/test_fuzz_ddp.py``, ``rpc/test_fuzz_rpc.py``,
``autograd/test_fuzz_autograd.py``.
"""

from __future__ import annotations

import pytest

from minigrad_dist import DistributedSampler
from tests.dist import programs_fuzz as programs
from tests.dist.fuzz_checks import fuzz_tests
from tests.test_fuzz_public_api import _call, case, check_error

pytestmark = pytest.mark.timeout(300)

(
    test_valid_calls_work_on_every_rank,
    test_wrong_argument_raises_the_same_documented_error_on_every_rank,
    test_odd_values_never_leak_undocumented_errors_or_hang,
) = fuzz_tests(programs)


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
]


@pytest.mark.parametrize("c", LOCAL_CASES, ids=[c.name for c in LOCAL_CASES])
def test_local_objects_reject_wrong_arguments(c):
    _call(c)
    for arg, values in c.bad.items():
        for value in values:
            with pytest.raises(BaseException) as info:
                _call(c, {arg: value})
            check_error(info.value, c, arg, value)
