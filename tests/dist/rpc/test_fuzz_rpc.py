"""Wrong inputs to RPC (calls, RRefs, init_rpc) raise documented errors on every rank, never hang.

The calls run on the 2-rank pool (the table is ``programs_fuzz_rpc.CASES``):
every rank must raise the same documented exception (TypeError, ValueError,
RuntimeError, IndexError, or a documented subclass such as
``RpcTimeoutError``) with a message naming the call, the argument or the
value; a rank that raises while another waits is a hang, caught by the
pool's timeout. A failed ``init_rpc`` must leave nothing half made. The rank
side is ``tests/dist/fuzz_ranks.py``, the checks ``tests/dist/fuzz_checks.py``.
"""

from __future__ import annotations

import pytest

from tests.dist.fuzz_checks import fuzz_tests
from tests.dist.rpc import programs_fuzz_rpc as programs

pytestmark = pytest.mark.timeout(300)

(
    test_valid_calls_work_on_every_rank,
    test_wrong_argument_raises_the_same_documented_error_on_every_rank,
    test_odd_values_never_leak_undocumented_errors_or_hang,
) = fuzz_tests(programs)
