"""The collectives' and process groups' rows of the distributed API fuzz tests (test_fuzz_collectives.py).

The rank side (``DistCase``, the values, ``run_calls``) is ``tests/dist/fuzz_ranks.py``.
"""

from __future__ import annotations

import minigrad as mg
import minigrad_dist as dist
from tests.dist.fuzz_ranks import BAD_GROUPS, BAD_OPS, BAD_RANKS, BAD_TENSORS, NAN, DistCase, Make, make_ones
from tests.dist.fuzz_ranks import ODD_VALUES as ODD_VALUES  # the tests read programs.ODD_VALUES


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
            dict(tensor=make_ones(3), op=dist.ReduceOp.SUM, group=None),
            dict(tensor=BAD_TENSORS, op=BAD_OPS, group=BAD_GROUPS),
            names=("tensor", "op", "group"),
        ),
        DistCase(
            "all_reduce(AVG, int)",
            lambda env, **kw: dist.all_reduce(op=dist.ReduceOp.AVG, **kw),
            dict(tensor=make_ones(3)),
            dict(tensor=[make_ones(3, dtype=mg.int64)]),
            names=("avg", "dtype"),
        ),
        DistCase(
            "broadcast",
            lambda env, **kw: dist.broadcast(**kw),
            dict(tensor=make_ones(3), src=0, group=None),
            dict(tensor=BAD_TENSORS, src=BAD_RANKS, group=BAD_GROUPS),
            names=("tensor", "src", "group"),
        ),
        DistCase(
            "all_gather",
            lambda env, **kw: dist.all_gather(**kw),
            dict(tensor_list=per_rank, tensor=make_ones(3)),
            dict(tensor_list=wrong_lists, tensor=BAD_TENSORS),
            names=("tensor_list", "tensor"),
        ),
        DistCase(
            "reduce_scatter",
            lambda env, **kw: dist.reduce_scatter(**kw),
            dict(output=make_ones(3), input_list=per_rank, op=dist.ReduceOp.SUM),
            dict(output=BAD_TENSORS, input_list=wrong_lists, op=BAD_OPS),
            names=("output", "input_list", "op"),
        ),
        DistCase(
            "reduce",
            lambda env, **kw: dist.reduce(**kw),
            dict(tensor=make_ones(3), dst=0, op=dist.ReduceOp.SUM),
            dict(tensor=BAD_TENSORS, dst=BAD_RANKS, op=BAD_OPS),
            names=("tensor", "dst", "op"),
        ),
        DistCase(
            "gather",
            lambda env, **kw: dist.gather(**kw),
            dict(tensor=make_ones(3), dst=0, gather_list=on_rank0),
            dict(tensor=BAD_TENSORS, dst=BAD_RANKS),
            names=("tensor", "dst"),
            fixed=("gather_list",),
        ),
        DistCase(
            "scatter",
            lambda env, **kw: dist.scatter(**kw),
            dict(tensor=make_ones(3), src=0, scatter_list=on_rank0),
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
    ]


def _destroy_group(group):
    if isinstance(group, dist.ProcessGroup):
        dist.destroy_process_group(group)


CASES = _collective_cases()
BY_NAME = {c.name: c for c in CASES}
