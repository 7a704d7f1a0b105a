"""One process runs the same bad collective calls with minigrad_dist and with torch.distributed (world of 1).

``python -m tests.dist.collectives.programs_error_classes PORT`` prints a JSON
object: case name -> [PyTorch's exception class, minigrad's]. Both libraries
join a one-rank group in this process (gloo over loopback on PORT for PyTorch,
MPI's singleton for minigrad). Cases whose PyTorch call would hang (a receive
from a rank that does not exist) are not run.
"""

from __future__ import annotations

import json
import os
import sys
import warnings

from tests.error_classes import raised_class


def cases(lib, dist, init_device_mesh) -> dict:
    """Bad calls written once in PyTorch's idiom; ``lib`` is torch or minigrad, ``dist`` its distributed package."""
    ones = lib.ones
    return {
        "all_gather_list_length": lambda: dist.all_gather([ones(2), ones(2)], ones(2)),
        "all_gather_entry_shape": lambda: dist.all_gather([ones(3)], ones(2)),
        "all_gather_entry_dtype": lambda: dist.all_gather([ones(2, dtype=lib.float64)], ones(2)),
        "all_gather_not_a_list": lambda: dist.all_gather(ones(2), ones(2)),
        "reduce_scatter_list_length": lambda: dist.reduce_scatter(ones(2), [ones(2), ones(2)]),
        "gather_list_length": lambda: dist.gather(ones(2), [ones(2)] * 2, dst=0),
        "gather_entry_shape": lambda: dist.gather(ones(2), [ones(3)], dst=0),
        "gather_list_missing_on_dst": lambda: dist.gather(ones(2), None, dst=0),
        "scatter_list_length": lambda: dist.scatter(ones(2), [ones(2)] * 2, src=0),
        "scatter_entry_shape": lambda: dist.scatter(ones(2), [ones(3)], src=0),
        "scatter_list_missing_on_src": lambda: dist.scatter(ones(2), None, src=0),
        "all_to_all_list_length": lambda: dist.all_to_all([ones(2)] * 2, [ones(2)] * 2),
        "all_to_all_single_split_sum": lambda: dist.all_to_all_single(
            ones(4), ones(4), output_split_sizes=[3], input_split_sizes=[4]
        ),
        "all_reduce_avg_of_ints": lambda: dist.all_reduce(ones(2, dtype=lib.int64), op=dist.ReduceOp.AVG),
        "all_reduce_op_not_a_reduce_op": lambda: dist.all_reduce(ones(2), op="max"),
        "group_not_a_group": lambda: dist.get_rank("world"),
        "barrier_group_not_a_group": lambda: dist.barrier(group=3),
        "new_group_rank_out_of_range": lambda: dist.new_group([0, 3]),
        "send_to_self": lambda: dist.send(ones(2), dst=0),
        "mesh_larger_than_world": lambda: init_device_mesh("cpu", (2,)),
        "mesh_names_length": lambda: init_device_mesh("cpu", (1,), mesh_dim_names=("a", "b")),
        "mesh_names_repeat": lambda: init_device_mesh("cpu", (1, 1), mesh_dim_names=("a", "a")),
        "mesh_unknown_name": lambda: init_device_mesh("cpu", (1,), mesh_dim_names=("a",))["b"],
    }


def outcome(call) -> str:
    """The name of the builtin class of the error ``call()`` raises, or "no error"."""
    raised = raised_class(lambda _: call(), None)
    return "no error" if raised is None else raised.__name__


def main(port: str) -> None:
    warnings.simplefilter("ignore")
    import torch  # noqa: PLC0415
    import torch.distributed as torch_dist  # noqa: PLC0415
    from torch.distributed.device_mesh import init_device_mesh as torch_mesh  # noqa: PLC0415

    import minigrad  # noqa: PLC0415
    import minigrad_dist  # noqa: PLC0415
    from minigrad_dist.device_mesh import init_device_mesh as minigrad_mesh  # noqa: PLC0415

    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=port)
    torch_dist.init_process_group("gloo", rank=0, world_size=1)
    minigrad_dist.init_process_group()
    theirs = cases(torch, torch_dist, torch_mesh)
    mine = cases(minigrad, minigrad_dist, minigrad_mesh)
    print(json.dumps({name: [outcome(theirs[name]), outcome(mine[name])] for name in theirs}))


if __name__ == "__main__":
    main(sys.argv[1])
