"""DistributedDataParallel's row of the distributed API fuzz tests (test_fuzz_ddp.py).

The rank side (``DistCase``, the values, ``run_calls``) is ``tests/dist/fuzz_ranks.py``.
"""

from __future__ import annotations

import minigrad_dist as dist
from minigrad import nn
from tests.dist.fuzz_ranks import BAD_GROUPS, NAN, DistCase, Make
from tests.dist.fuzz_ranks import ODD_VALUES as ODD_VALUES  # the tests read programs.ODD_VALUES


def _ddp_cases():
    return [
        DistCase(
            "DistributedDataParallel",
            lambda env, **kw: dist.DistributedDataParallel(**kw),
            dict(
                module=Make("Linear(2, 2)", lambda env: nn.Linear(2, 2)), bucket_cap_mb=25, process_group=None
            ),
            dict(
                module=[None, 5, "abc", Make("ReLU() (no parameters)", lambda env: nn.ReLU())],
                bucket_cap_mb=[0, -1, NAN, "a", None],
                process_group=BAD_GROUPS,
            ),
            names=("module", "bucket_cap_mb", "process_group", "parameter"),
            cleanup=lambda ddp: ddp.close(),
        ),
    ]


CASES = _ddp_cases()
BY_NAME = {c.name: c for c in CASES}
