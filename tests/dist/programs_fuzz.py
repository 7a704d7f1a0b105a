"""Cross-cutting rows of the distributed API fuzz tests (test_fuzz_dist_api.py): checkpoints, the debug level.

The rank side (``DistCase``, the values, ``run_calls``) is ``fuzz_ranks.py``;
each area's rows are beside its tests (``collectives/programs_fuzz_collectives.py``, ...).
"""

from __future__ import annotations

import os
import tempfile

import minigrad_dist as dist
from minigrad import nn
from tests.dist.fuzz_ranks import ODD_VALUES as ODD_VALUES  # the tests read programs.ODD_VALUES
from tests.dist.fuzz_ranks import DistCase, Make


def _cross_cutting_cases():
    return [
        DistCase(
            "save_checkpoint",
            _save_checkpoint,
            dict(model=_linear(), step=0),
            dict(model=[None, 5, "abc"], step=[-1, 1.5, "a", None]),
            names=("model", "step"),
        ),
        DistCase(
            "load_checkpoint",
            _load_checkpoint,
            dict(model=_linear(), path="fuzz.ckpt"),
            dict(model=[None, 5], path=[5, None, "missing.ckpt", "garbage.ckpt"]),
            extra=(FileNotFoundError,),
            names=("model", "path", "checkpoint", "missing"),
        ),
        DistCase(
            "set_debug_level",
            lambda env, **kw: dist.set_debug_level(**kw),
            dict(level="off"),
            dict(level=["loud", 5, None]),
            names=("level",),
        ),
    ]


def _linear():
    return Make("Linear(2, 2)", lambda env: nn.Linear(2, 2))


def _checkpoint_dir(env):
    """A directory shared by the ranks (they run on one machine), with a garbage file."""
    directory = os.path.join(tempfile.gettempdir(), f"minigrad_fuzz_{os.getppid()}")
    if env.rank == 0:
        os.makedirs(directory, exist_ok=True)
        with open(os.path.join(directory, "garbage.ckpt"), "wb") as f:
            f.write(b"no checkpoint here")
    dist.barrier()
    return directory


def _save_checkpoint(env, model, step):
    dist.save_checkpoint(os.path.join(_checkpoint_dir(env), "fuzz.ckpt"), model, None, step=step)


def _load_checkpoint(env, model, path):
    directory = _checkpoint_dir(env)
    dist.save_checkpoint(os.path.join(directory, "fuzz.ckpt"), nn.Linear(2, 2), None)
    target = os.path.join(directory, path) if isinstance(path, str) else path
    return dist.load_checkpoint(target, model)


CASES = _cross_cutting_cases()
BY_NAME = {c.name: c for c in CASES}
