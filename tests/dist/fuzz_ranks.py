"""The rank side of the distributed API fuzz tests: a table entry (``DistCase``), values, and running a call.

Each area's ``programs_fuzz_*.py`` (``collectives/``, ``ddp/``, ``rpc/``,
``autograd/``, and ``programs_fuzz.py`` here for checkpoints and the debug
level) lists public calls that need a process group or RPC in ``CASES``: a
valid call and, per argument, values that are certainly wrong.
``ODD_VALUES`` are values of any kind to put anywhere. The test process
picks a case, an argument and a value by name and index (hypothesis draws
them, or the test walks the whole table); every rank builds the same call
(``run_calls``) and reports what came out, so the test can check that
every rank raised the same documented exception with a message that names
the problem, and a wrong argument that makes one rank raise while another
enters a collective shows up as a hang (the pool's timeout).

Only mistakes made alike on every rank are listed. A wrong ``gather_list``
is checked on the destination rank alone (the others have none to check,
as in PyTorch), so the other ranks wait in the gather; the remedy there is
``init_process_group(timeout=...)``, tested in test_reliability.py. Two
hangs of that kind found by the fuzz tests are reported rather than listed:
an unpicklable object in ``broadcast_object_list``/``scatter_object_list``
(only the source pickles it), and ``init_rpc(rank=r)`` given the same r on
every rank (it is right on rank r, which then waits for the others forever).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass

import numpy as np

import minigrad as mg
import minigrad_dist as dist
import minigrad_dist.rpc as rpc
from minigrad import nn
from tests.dist.programs_common import ensure_init

ALLOWED = (TypeError, ValueError, RuntimeError, IndexError)
NAN, INF = float("nan"), float("inf")


@dataclass(frozen=True)
class Env:
    """Where a call runs: this rank, the world size, and the name of the next worker."""

    rank: int
    world: int

    @property
    def peer(self) -> str:
        return f"worker{(self.rank + 1) % self.world}"


class Make:
    """A value built on the rank for each call (tensors, RRefs, values that depend on the rank)."""

    def __init__(self, label, make):
        self.label = label
        self.make = make

    def __repr__(self):
        return self.label


def _value(value, env):
    return value.make(env) if isinstance(value, Make) else value


@dataclass(frozen=True)
class DistCase:
    """``call(env, **kwargs)`` with ``valid`` kwargs; ``bad[arg]`` lists certainly wrong values.

    ``setup`` is "group" (the default process group exists), "no_group"
    (it does not: for ``init_process_group``), "rpc" (RPC runs) or
    "no_rpc" (it does not: for ``init_rpc``). ``cleanup(result)`` releases
    what a call that returned made (collective, so it runs on every rank).
    ``names``: words an error message may use to name the problem.
    ``fixed``: arguments the odd-values test leaves alone (rank-asymmetric ones).
    """

    name: str
    call: object
    valid: dict
    bad: dict
    setup: str = "group"
    names: tuple = ()
    extra: tuple = ()
    cleanup: object = None
    fixed: tuple = ()


def make_ones(*shape, dtype=mg.float32):
    """``Make`` of ``mg.ones(*shape, dtype=dtype)``."""
    return Make(f"ones{shape}", lambda env: mg.ones(*shape, dtype=dtype))


BAD_GROUPS = [5, "abc", object(), dist.NON_GROUP_MEMBER]
BAD_RANKS = [7, -1, 1.5, "0", None, True]
BAD_OPS = ["sum", 5, None, "SUM"]
BAD_TENSORS = [None, "abc", [1.0, 2.0, 3.0], 3.0, Make("non-contiguous", lambda env: np.ones((3, 4))[:, ::2])]

ODD_VALUES = [
    None,
    True,
    0,
    -1,
    7,
    1.5,
    NAN,
    INF,
    "",
    "abc",
    "worker0",
    b"x",
    [],
    [1, "a"],
    (),
    {},
    object(),
    print,
    np.float32(2.0),
    np.ones(2),
    Make("ones(7, 5)", lambda env: mg.ones(7, 5)),
    Make("0-d", lambda env: mg.ones(())),
    Make("int64 tensor", lambda env: mg.ones(3, dtype=mg.int64)),
    Make("Linear", lambda env: nn.Linear(2, 2)),
]


# -- running a call on every rank -------------------------------------------------------------------------


def _env() -> Env:
    from minigrad_dist.mpi import load_mpi

    comm = load_mpi().COMM_WORLD
    return Env(comm.Get_rank(), comm.Get_size())


def _prepare(setup: str, env: Env) -> None:
    if setup in ("group", "rpc"):
        ensure_init()
    if setup == "no_group" and dist.is_initialized():
        dist.destroy_process_group()
    if setup == "rpc":
        rpc.init_rpc(f"worker{env.rank}")


def _finish(setup: str) -> None:
    if setup == "rpc":
        rpc.shutdown()
    if setup == "no_group":
        ensure_init()


def _outcome(c: DistCase, kwargs: dict, env: Env) -> dict:
    """Run the call; describe what came out in plain data."""
    try:
        result = c.call(env, **kwargs)
    except Exception as error:  # noqa: BLE001  (every exception is reported)
        kind = type(error)
        allowed = ALLOWED + c.extra
        documented = kind in allowed or (
            kind.__module__.startswith("minigrad") and isinstance(error, allowed)
        )
        return {
            "raised": f"{kind.__module__}.{kind.__qualname__}",
            "documented": documented,
            "message": str(error).split("\n\nRemote traceback")[0][:2000],
        }
    if c.cleanup is not None:
        c.cleanup(result)
    return {"raised": None}


def run_calls(cases_module: str, case_name: str, items: list) -> list:
    """Every rank: the outcome of case ``case_name`` of module ``cases_module`` for each ``(arg, source, index)``.

    ``cases_module`` names a module with a ``BY_NAME`` table of ``DistCase``
    (``tests.dist.collectives.programs_fuzz_collectives``, ...): the ranks
    import it by that name. The argument ``arg`` is replaced by
    ``bad[arg][index]`` (source "bad") or ``ODD_VALUES[index]`` (source
    "odd"); ``arg=None`` runs the valid call. For ``init_process_group`` and
    ``init_rpc`` an outcome also says whether a call that raised left the
    group or the agent half made.
    """
    c = importlib.import_module(cases_module).BY_NAME[case_name]
    env = _env()
    _prepare(c.setup, env)
    try:
        return [_run_one(c, env, arg, source, index) for arg, source, index in items]
    finally:
        _finish(c.setup)


def _run_one(c: DistCase, env: Env, arg, source, index) -> dict:
    if c.setup == "no_group" and dist.is_initialized():
        dist.destroy_process_group()
    kwargs = {k: _value(v, env) for k, v in c.valid.items()}
    if arg is not None:
        values = c.bad[arg] if source == "bad" else ODD_VALUES
        kwargs[arg] = _value(values[index], env)
    outcome = _outcome(c, kwargs, env)
    if c.setup == "no_group":
        outcome["left_initialized"] = outcome["raised"] is not None and dist.is_initialized()
    if c.setup == "no_rpc":
        outcome["left_initialized"] = outcome["raised"] is not None and rpc.is_initialized()
        if rpc.is_initialized():
            rpc.shutdown()
    return outcome
