"""Distributed autograd's rows of the distributed API fuzz tests (test_fuzz_autograd.py), DistributedOptimizer's too.

The rank side (``DistCase``, the values, ``run_calls``) is ``tests/dist/fuzz_ranks.py``.
"""

from __future__ import annotations

import minigrad as mg
import minigrad_dist.autograd as dist_autograd
import minigrad_dist.rpc as rpc
from minigrad import nn
from minigrad_dist.optim import DistributedOptimizer
from tests.dist.fuzz_ranks import ODD_VALUES as ODD_VALUES  # the tests read programs.ODD_VALUES
from tests.dist.fuzz_ranks import DistCase, Make

OWN = "<the context's own id>"


def _get_gradients(env, context_id):
    with dist_autograd.context() as own:
        return dist_autograd.get_gradients(
            own if isinstance(context_id, str) and context_id == OWN else context_id
        )


def _param_rrefs(env):
    return [rpc.RRef(nn.Parameter(mg.ones(2)))]


def _dist_backward(env, roots, mode):
    with dist_autograd.context() as context_id:
        dist_autograd.backward(context_id, roots, mode=mode)


def _autograd_cases():
    return [
        DistCase(
            "dist_autograd.get_gradients",
            _get_gradients,
            dict(context_id=OWN),
            dict(context_id=[12345, "a", None, 1.5]),
            setup="rpc",
            names=("context",),
        ),
        DistCase(
            "dist_autograd.backward",
            _dist_backward,
            dict(roots=Make("[loss]", lambda env: [(mg.ones(2, requires_grad=True) * 2).sum()]), mode="fast"),
            dict(
                roots=[
                    [],
                    None,
                    ["a"],
                    Make("[ones(2)]", lambda env: [mg.ones(2)]),
                    Make("[vector]", lambda env: [mg.ones(2, requires_grad=True) * 2]),
                ],
                mode=["x", None],
            ),
            setup="rpc",
            names=("root", "mode"),
        ),
        DistCase(
            "DistributedOptimizer",
            lambda env, **kw: DistributedOptimizer(**kw),
            dict(optimizer_class=mg.optim.SGD, params_rref=Make("[RRef(param)]", _param_rrefs), lr=0.1),
            dict(params_rref=[[], None, [5], 5], optimizer_class=[5, None]),
            setup="rpc",
            names=("params_rref", "optimizer_class", "rref"),
        ),
    ]


CASES = _autograd_cases()
BY_NAME = {c.name: c for c in CASES}
