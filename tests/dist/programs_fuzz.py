"""Wrong arguments to minigrad_dist's public API, run on every rank of a pool by test_fuzz_dist_api.py.

``CASES`` lists public calls that need a process group or RPC: a valid
call and, per argument, values that are certainly wrong. ``ODD_VALUES``
are values of any kind to put anywhere. The test process picks a case,
an argument and a value by name and index (hypothesis draws them, or the
test walks the whole table); every rank builds the same call here and
reports what came out, so the test can check that every rank raised the
same documented exception with a message that names the problem, and a
wrong argument that makes one rank raise while another enters a
collective shows up as a hang (the pool's timeout).

Only mistakes made alike on every rank are listed. A wrong ``gather_list``
is checked on the destination rank alone (the others have none to check,
as in PyTorch), so the other ranks wait in the gather; the remedy there is
``init_process_group(timeout=...)``, tested in test_reliability.py. Two
hangs of that kind found here are reported rather than listed: an
unpicklable object in ``broadcast_object_list``/``scatter_object_list``
(only the source pickles it), and ``init_rpc(rank=r)`` given the same r on
every rank (it is right on rank r, which then waits for the others forever).
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass

import numpy as np

import minigrad as mg
import minigrad_dist as dist
import minigrad_dist.autograd as dist_autograd
import minigrad_dist.rpc as rpc
from minigrad import nn
from minigrad_dist.optim import DistributedOptimizer
from tests.dist.programs_collectives import ensure_init

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


def _ones(*shape, dtype=mg.float32):
    return Make(f"ones{shape}", lambda env: mg.ones(*shape, dtype=dtype))


BAD_GROUPS = [5, "abc", object(), dist.NON_GROUP_MEMBER]
BAD_RANKS = [7, -1, 1.5, "0", None, True]
BAD_OPS = ["sum", 5, None, "SUM"]
BAD_TENSORS = [None, "abc", [1.0, 2.0, 3.0], 3.0, Make("non-contiguous", lambda env: np.ones((3, 4))[:, ::2])]


def _collective_cases():
    per_rank = Make("[ones(3)] * world", lambda env: [mg.ones(3) for _ in range(env.world)])
    on_rank0 = Make(
        "[ones(3)] * world on rank 0",
        lambda env: [mg.ones(3) for _ in range(env.world)] if env.rank == 0 else None,
    )
    wrong_lists = [
        None,
        "ab",
        5,
        Make("[ones(3)] (one short)", lambda env: [mg.ones(3) for _ in range(env.world - 1)]),
        Make("[ones(2)] * world (shape)", lambda env: [mg.ones(2) for _ in range(env.world)]),
        Make("[int64] * world (dtype)", lambda env: [mg.ones(3, dtype=mg.int64) for _ in range(env.world)]),
        Make("[None] * world", lambda env: [None] * env.world),
    ]
    return [
        DistCase(
            "all_reduce",
            lambda env, **kw: dist.all_reduce(**kw),
            dict(tensor=_ones(3), op=dist.ReduceOp.SUM, group=None),
            dict(tensor=BAD_TENSORS, op=BAD_OPS, group=BAD_GROUPS),
            names=("tensor", "op", "group"),
        ),
        DistCase(
            "all_reduce(AVG, int)",
            lambda env, **kw: dist.all_reduce(op=dist.ReduceOp.AVG, **kw),
            dict(tensor=_ones(3)),
            dict(tensor=[_ones(3, dtype=mg.int64)]),
            names=("avg", "dtype"),
        ),
        DistCase(
            "broadcast",
            lambda env, **kw: dist.broadcast(**kw),
            dict(tensor=_ones(3), src=0, group=None),
            dict(tensor=BAD_TENSORS, src=BAD_RANKS, group=BAD_GROUPS),
            names=("tensor", "src", "group"),
        ),
        DistCase(
            "all_gather",
            lambda env, **kw: dist.all_gather(**kw),
            dict(tensor_list=per_rank, tensor=_ones(3)),
            dict(tensor_list=wrong_lists, tensor=BAD_TENSORS),
            names=("tensor_list", "tensor"),
        ),
        DistCase(
            "reduce_scatter",
            lambda env, **kw: dist.reduce_scatter(**kw),
            dict(output=_ones(3), input_list=per_rank, op=dist.ReduceOp.SUM),
            dict(output=BAD_TENSORS, input_list=wrong_lists, op=BAD_OPS),
            names=("output", "input_list", "op"),
        ),
        DistCase(
            "reduce",
            lambda env, **kw: dist.reduce(**kw),
            dict(tensor=_ones(3), dst=0, op=dist.ReduceOp.SUM),
            dict(tensor=BAD_TENSORS, dst=BAD_RANKS, op=BAD_OPS),
            names=("tensor", "dst", "op"),
        ),
        DistCase(
            "gather",
            lambda env, **kw: dist.gather(**kw),
            dict(tensor=_ones(3), dst=0, gather_list=on_rank0),
            dict(tensor=BAD_TENSORS, dst=BAD_RANKS),
            names=("tensor", "dst"),
            fixed=("gather_list",),
        ),
        DistCase(
            "scatter",
            lambda env, **kw: dist.scatter(**kw),
            dict(tensor=_ones(3), src=0, scatter_list=on_rank0),
            dict(tensor=BAD_TENSORS, src=BAD_RANKS),
            names=("tensor", "src"),
            fixed=("scatter_list",),
        ),
        DistCase(
            "barrier",
            lambda env, **kw: dist.barrier(**kw),
            dict(group=None),
            dict(group=BAD_GROUPS),
            names=("group",),
        ),
        DistCase(
            "all_gather_object",
            lambda env, **kw: dist.all_gather_object(**kw),
            dict(object_list=Make("[None] * world", lambda env: [None] * env.world), obj={"a": 1}),
            dict(object_list=[None, "ab", 5, [None]], obj=[Make("lambda", lambda env: lambda: 1)]),
            names=("object_list", "obj", "pickle"),
        ),
        DistCase(
            "broadcast_object_list",
            lambda env, **kw: dist.broadcast_object_list(**kw),
            dict(object_list=Make("[1, 2]", lambda env: [1, 2]), src=0),
            dict(object_list=[None, "ab", 5], src=BAD_RANKS),
            names=("object_list", "src"),
        ),
        DistCase(
            "get_rank",
            lambda env, **kw: dist.get_rank(**kw),
            dict(group=None),
            dict(group=BAD_GROUPS),
            names=("group",),
        ),
        DistCase(
            "get_world_size",
            lambda env, **kw: dist.get_world_size(**kw),
            dict(group=None),
            dict(group=BAD_GROUPS),
            names=("group",),
        ),
        DistCase(
            "new_group",
            lambda env, **kw: dist.new_group(**kw),
            dict(ranks=[0]),
            dict(ranks=[[7], [0, 0], ["a"], [-1], 5, "ab", [1.5], [None]]),
            names=("ranks",),
            cleanup=_destroy_group,
        ),
        DistCase(
            "init_process_group",
            lambda env, **kw: dist.init_process_group(**kw),
            dict(backend="mpi", comm=None, timeout=None, round_robin_channels=0),
            dict(
                backend=["smoke-signals", 5, 1.5],
                comm=[5, "abc", object()],
                timeout=[-1, 0, NAN, "a"],
                round_robin_channels=["a", 1.5, -2],
            ),
            setup="no_group",
            names=("backend", "comm", "timeout", "round_robin_channels"),
        ),
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


def _destroy_group(group):
    if isinstance(group, dist.ProcessGroup):
        dist.destroy_process_group(group)


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


# -- RPC -----------------------------------------------------------------------------------------------


def add(a, b):
    """Called remotely."""
    return a + b


def _rref_to_peer():
    return Make("rpc.remote(peer, ones)", lambda env: rpc.remote(env.peer, mg.ones, args=(2,)))


def _rpc_cases():
    call_bad = dict(
        to=["nobody", 7, -1, 1.5, None, object()],
        func=[5, None, "abc", Make("lambda", lambda env: lambda a, b: a)],
        args=[5, "ab", None],
        kwargs=[[], "ab", 5],
        timeout=["a", -1, NAN, -INF],
    )
    valid = dict(to=Make("peer", lambda env: env.peer), func=add, args=(1, 2), kwargs=None, timeout=5)
    names = ("to", "func", "args", "kwargs", "timeout", "worker", "pickle", "callable")
    return [
        DistCase("rpc_sync", lambda env, **kw: rpc.rpc_sync(**kw), valid, call_bad, setup="rpc", names=names),
        DistCase(
            "rpc_async",
            lambda env, **kw: rpc.rpc_async(**kw).wait(),
            valid,
            call_bad,
            setup="rpc",
            names=names,
        ),
        DistCase(
            "remote", lambda env, **kw: rpc.remote(**kw).to_here(), valid, call_bad, setup="rpc", names=names
        ),
        DistCase(
            "get_worker_info",
            lambda env, **kw: rpc.get_worker_info(**kw),
            dict(worker_name=None),
            dict(worker_name=["nobody", 5, object()]),
            setup="rpc",
            names=("worker",),
        ),
        DistCase(
            "RRef.to_here",
            lambda env, rref, timeout: rref.to_here(timeout=timeout),
            dict(rref=_rref_to_peer(), timeout=5),
            dict(timeout=["a", -1, NAN]),
            setup="rpc",
            names=("timeout",),
            fixed=("rref",),
        ),
        DistCase(
            "init_rpc",
            _init_rpc,
            dict(
                name=Make("worker<rank>", lambda env: f"worker{env.rank}"),
                rank=None,
                world_size=None,
                rpc_timeout=60.0,
            ),
            dict(
                name=["", None, 5, "same"],
                rank=[7, -2, "a"],
                world_size=[7, 0, "a"],
                rpc_timeout=[-1, NAN, "a", None],
            ),
            setup="no_rpc",
            names=("name", "rank", "world_size", "rpc_timeout", "unique"),
            # rank=1 is right on rank 1 only: rank 0 raises and rank 1 waits in the agent's
            # start-up allgather forever (reported), so the odd-values test leaves both alone.
            fixed=("rank", "world_size"),
        ),
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


OWN = "<the context's own id>"


def _get_gradients(env, context_id):
    with dist_autograd.context() as own:
        return dist_autograd.get_gradients(
            own if isinstance(context_id, str) and context_id == OWN else context_id
        )


def _param_rrefs(env):
    return [rpc.RRef(nn.Parameter(mg.ones(2)))]


def _init_rpc(env, **kwargs):
    rpc.init_rpc(**kwargs)
    rpc.shutdown()


def _dist_backward(env, roots, mode):
    with dist_autograd.context() as context_id:
        dist_autograd.backward(context_id, roots, mode=mode)


CASES = _collective_cases() + _rpc_cases()
BY_NAME = {c.name: c for c in CASES}

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


def run_calls(case_name: str, items: list) -> list:
    """Every rank: the outcome of case ``case_name`` for each ``(arg, source, index)`` of ``items``.

    The argument ``arg`` is replaced by ``bad[arg][index]`` (source "bad")
    or ``ODD_VALUES[index]`` (source "odd"); ``arg=None`` runs the valid
    call. For ``init_process_group`` and ``init_rpc`` an outcome also says
    whether a call that raised left the group or the agent half made.
    """
    c = BY_NAME[case_name]
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
