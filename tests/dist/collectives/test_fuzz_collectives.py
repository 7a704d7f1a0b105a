"""Wrong inputs to the collectives and process groups raise documented errors on every rank, never hang.

The calls run on the 2-rank pool (the table is
``programs_fuzz_collectives.CASES``): every rank must raise the same
documented exception (TypeError, ValueError, RuntimeError, IndexError, or a
documented subclass) with a message naming the call, the argument or the
value; a rank that raises while another waits in a collective is a hang,
caught by the pool's timeout. A failed ``init_process_group`` must leave
nothing half made. The rank side is ``tests/dist/fuzz_ranks.py``, the checks
``tests/dist/fuzz_checks.py``.
"""

from __future__ import annotations

import pytest

from tests.dist.collectives import programs_fuzz_collectives as programs
from tests.dist.fuzz_checks import fuzz_tests

pytestmark = pytest.mark.timeout(300)

(
    test_valid_calls_work_on_every_rank,
    test_wrong_argument_raises_the_same_documented_error_on_every_rank,
    test_odd_values_never_leak_undocumented_errors_or_hang,
) = fuzz_tests(programs)
