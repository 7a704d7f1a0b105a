"""Draw the figures missing from the distributed autograd design note (shared/seeds/000).

    mpiexec -n 2 python examples/figures/design_note_figures.py [--out examples/figures]

Writes a ``.dot`` file per figure and, when Graphviz's ``dot`` program is
installed (``apt-get install graphviz``), an ``.svg`` next to it:

1. ``rpc_send_recv``: the first example (``t3 = rpc_sync(my_add, t1, t2)``,
   ``t5 = t3 * t4``): send and recv nodes on both workers.
2. ``local_dependencies``: ``d = a + b; e = b * c`` on one machine, dependency
   counts from the root ``d``: ``AddBackward (1)``, ``MulBackward (0)``.
3. ``distributed_dependencies``: the same with both ops run by RPC and only
   ``d`` in the loss: the graph FAST mode cannot count correctly.
4. ``fast_mode_example``: the complete FAST mode example with its dependency
   counts (``send (1)``, ``mul (1)`` on worker 0, ...), as the note walks it.
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

import minigrad as mg
import minigrad_dist.autograd as dist_autograd
import minigrad_dist.rpc as rpc
from minigrad import viz
from minigrad_dist.autograd.pictures import context_dot, describe_context
from minigrad_dist.mpi import load_mpi

HERE = Path(__file__).resolve().parent


def my_add(t1, t2):
    return t1 + t2


def my_mul(t1, t2):
    return t1 * t2


def leaf(name):
    t = mg.rand(3, 3, requires_grad=True)
    t.name = name
    return t


def save(out: Path, name: str, dot: str) -> list:
    """Write ``name.dot`` and, with Graphviz installed, ``name.svg``; return the paths."""
    out.mkdir(parents=True, exist_ok=True)
    written = [out / f"{name}.dot"]
    written[0].write_text(dot)
    if shutil.which("dot"):
        written.append(viz.render(dot, out / f"{name}.svg", format="svg"))
    return written


def whole_context(cid, roots, params, dependencies):
    """Every worker's share of context ``cid`` (this one's with ``roots``) as one picture."""
    parts = [describe_context(cid, roots=roots, params=params, show_dependencies=dependencies)]
    parts.append(rpc.rpc_sync("worker1", describe_context, args=(cid, (), None, dependencies)))
    return context_dot(parts)


def figures(out: Path) -> dict:
    """Run the note's examples on worker 0 and draw them; returns {figure: DOT text}."""
    dots = {}
    with dist_autograd.context() as cid:
        t1, t2, t4 = leaf("t1"), leaf("t2"), leaf("t4")
        t3 = rpc.rpc_sync("worker1", my_add, args=(t1, t2))
        t5 = t3 * t4
        t5.name = "t5"
        dots["rpc_send_recv"] = whole_context(cid, [t5], None, dependencies=False)

    a, b, c = leaf("a"), leaf("b"), leaf("c")
    d, e = a + b, b * c
    d.name, e.name = "d", "e"
    dots["local_dependencies"] = viz.to_dot(d, e, show_dependencies=True, backward_from=[d])

    with dist_autograd.context() as cid:
        a, b, c = leaf("a"), leaf("b"), leaf("c")
        d = rpc.rpc_sync("worker1", my_add, args=(a, b))
        rpc.rpc_sync("worker1", my_mul, args=(b, c))
        loss = d.sum()
        loss.name = "loss"
        dots["distributed_dependencies"] = whole_context(cid, [loss], None, dependencies=True)

    with dist_autograd.context() as cid:
        t1, t2, t4 = leaf("t1"), leaf("t2"), leaf("t4")
        t3 = rpc.rpc_sync("worker1", my_add, args=(t1, t2))
        loss = (t3 * t4).sum()
        loss.name = "loss"
        dots["fast_mode_example"] = whole_context(cid, [loss], None, dependencies=True)
        dist_autograd.backward(cid, [loss])
    for name, dot in dots.items():
        for path in save(out, name, dot):
            print(f"wrote {path}")
    return dots


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default=str(HERE))
    args = parser.parse_args(argv)
    rank = load_mpi().COMM_WORLD.Get_rank()
    mg.manual_seed(0)
    rpc.init_rpc(f"worker{rank}")
    if rank == 0:
        figures(Path(args.out))
    rpc.shutdown()


if __name__ == "__main__":
    main()
