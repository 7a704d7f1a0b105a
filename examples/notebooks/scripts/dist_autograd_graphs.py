"""The distributed autograd design note's examples on 2 workers, with their graphs (notebook 03).

    mpiexec -n 2 python examples/notebooks/scripts/dist_autograd_graphs.py OUT.pickle

Worker 0 runs three distributed autograd contexts; worker 1 only serves RPCs.

1. ``"rpc_example"``, the note's first example: ``t3 = rpc_sync("worker1",
   my_add, (t1, t2))`` on worker 1, then ``t5 = t3 * t4`` and ``loss =
   t5.sum()`` on worker 0, and a FAST-mode backward.
2. ``"unused_rpc"``, the note's dependency example: ``d = a + b`` and
   ``e = b * c`` both computed on worker 1, ``loss = d.sum()``: ``e`` is never
   used, and the FAST-mode backward fails.
3. ``"smart"``: the same computation in a new context, backward with ``mode="smart"``.

Before each backward, every worker describes its share of the context: a
table of its send/recv nodes and their ``autograd_message_id``, and a
``minigrad.viz.GraphPart`` with FAST-mode dependency counts (plain data:
worker 1's comes back to worker 0 as an RPC result). Each backward's
gradients (from ``get_gradients``) are compared with the same computation
done locally with ordinary autograd.

Rank 0 pickles a dict to OUT.pickle (``"rpc_example"``, ``"unused_rpc"``,
``"smart"``; each with ``"shares"``: ``[(GraphPart, messages), ...]`` one per
worker where described, ``"grads"`` and ``"local"``: ``{name: list or None}``,
and ``"error"``: the text of the backward's error or None), then prints
``RESULT {"contexts": [...names]}``.
"""

from __future__ import annotations

import json
import pickle
import sys

import numpy as np

import minigrad as mg
import minigrad_dist.autograd as dist_autograd
import minigrad_dist.rpc as rpc
from minigrad import viz
from minigrad_dist.autograd.context import id_text, registry
from minigrad_dist.mpi import load_mpi

# -- run on worker 1 by RPC (they travel by name: every rank runs this same script) ------------


def my_add(t1, t2):
    """The note's remote function."""
    return t1 + t2


def my_mul(t1, t2):
    """The product the note's second example never uses."""
    return t1 * t2


def describe_share(context_id: int, roots=(), params=None):
    """This worker's share of a context: ``(GraphPart, [message rows])``, plain picklable data.

    Send and recv nodes are named ``"send <id>"`` / ``"recv <id>"`` after their
    ``autograd_message_id``, so the parts of all workers can be joined by name.
    """
    context = registry.get(context_id)
    me = rpc.get_worker_info().name
    with context.lock:
        named = {f"send {id_text(m)}": node for m, node in context.send_nodes.items()}
        named.update({f"recv {id_text(m)}": node for m, node in context.recv_nodes.items()})
        messages = [{"worker": me, "node": node.name(), "message_id": id_text(m), "kind": "send",
                     "peer": f"worker{node.dst}", "tensors": node.num_outputs}
                    for m, node in sorted(context.send_nodes.items())]
        messages += [{"worker": me, "node": node.name(), "message_id": id_text(m), "kind": "recv",
                      "peer": f"worker{node.src}", "tensors": node.num_outputs}
                     for m, node in sorted(context.recv_nodes.items())]
    part = viz.describe(viz.WorkerGraph(me, list(roots), named), params=params, show_dependencies=True)
    return part, messages


# -- worker 0 -------------------------------------------------------------------------------------


def leaves(seed: int, names: str) -> dict:
    """3x3 float64 leaves that require grad, one per letter of ``names``."""
    rng = np.random.default_rng(seed)
    return {name: mg.tensor(rng.uniform(-1, 1, (3, 3)), requires_grad=True) for name in names}


def on_worker1(fn, *args):
    """``fn(*args)`` computed on worker 1 by RPC."""
    return rpc.rpc_sync("worker1", fn, args=args)


def here(fn, *args):
    """``fn(*args)`` computed locally."""
    return fn(*args)


def local_gradients(values: dict, forward) -> dict:
    """The gradients of the same computation done in this process with ordinary autograd."""
    copies = {name: mg.tensor(t.detach().numpy(), requires_grad=True) for name, t in values.items()}
    forward(copies, here).backward()
    return {name: None if t.grad is None else t.grad.numpy().tolist() for name, t in copies.items()}


def run_context(values: dict, forward, mode: str, describe: bool) -> dict:
    """Forward in a new context, describe every worker's share, distributed backward; gradients and error."""
    out = {"shares": [], "error": None, "grads": None}
    with dist_autograd.context() as context_id:
        loss = forward(values, on_worker1)
        loss.name = "loss"
        if describe:
            out["shares"] = [describe_share(context_id, [loss], values),
                             rpc.rpc_sync("worker1", describe_share, args=(context_id,))]
        try:
            dist_autograd.backward(context_id, [loss], mode=mode)
        except RuntimeError as error:
            out["error"] = str(error)
        else:
            grads = dist_autograd.get_gradients(context_id)
            out["grads"] = {name: None if grads.get(t) is None else grads[t].numpy().tolist()
                            for name, t in values.items()}
    out["local"] = local_gradients(values, forward)
    return out


def rpc_example(v, remote):
    """The note's first example; ``remote`` runs ``my_add`` (on worker 1, or here for the local check)."""
    t3 = remote(my_add, v["t1"], v["t2"])
    t5 = t3 * v["t4"]  # computed on worker 0
    return t5.sum()


def unused_rpc(v, remote):
    """The note's dependency example: ``e`` is computed and never used."""
    d = remote(my_add, v["a"], v["b"])
    remote(my_mul, v["b"], v["c"])  # e = b * c
    return d.sum()


def main() -> None:
    out_path = sys.argv[1]
    rank = load_mpi().COMM_WORLD.Get_rank()
    rpc.init_rpc(f"worker{rank}")
    if rank == 0:
        results = {
            "rpc_example": run_context(leaves(0, ["t1", "t2", "t4"]), rpc_example, "fast", describe=True),
            "unused_rpc": run_context(leaves(1, "abc"), unused_rpc, "fast", describe=True),
            "smart": run_context(leaves(1, "abc"), unused_rpc, "smart", describe=False),
        }
        with open(out_path, "wb") as file:
            pickle.dump(results, file)
        print("RESULT " + json.dumps({"contexts": list(results)}), flush=True)
    rpc.shutdown()


if __name__ == "__main__":
    main()
