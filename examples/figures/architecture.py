"""Draw the architecture pictures of README.md, section "Architecture".

    python examples/figures/architecture.py [--out examples/figures]

Writes two PNGs (matplotlib only, no MPI):

1. ``architecture_layers.png``: the layers, bottom up, each with the files
   that hold it: arrays (NumPy/CuPy), Tensor and graph nodes, the engine,
   nn/optim; then process groups and collectives over MPI, DDP's Reducer
   beside RPC, and distributed autograd on top of RPC.
2. ``architecture_gradient_path.png``: one parameter's gradient from
   ``loss.backward()`` to a reduced bucket, step by step, with the file and
   function of each step.

The steps are data (``LAYERS``, ``GRADIENT_PATH``) so that the pictures and
the README's text can be checked against each other.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after choosing the file-only backend)
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch  # noqa: E402

HERE = Path(__file__).resolve().parent
MINIGRAD, DIST = "#dbe9f6", "#fde2c8"  # box colours of the two packages

# (row from the bottom, first column, columns wide (of 2), title, files, colour)
LAYERS = [
    (0, 0, 2, "Arrays: NumPy on the CPU, CuPy on a GPU", "minigrad/backend.py (the only file that knows CuPy)",
     MINIGRAD),
    (1, 0, 2, "Tensor and graph nodes: every op records a FunctionNode, leaves an AccumulateGrad",
     "minigrad/tensor.py, function.py, views.py, inplace.py, ops/ (forward beside backward)", MINIGRAD),
    (2, 0, 2, "Engine: dependency counts, ready queue, hooks, gradient destinations",
     "minigrad/engine.py, destinations.py, graph.py; autograd.py (grad, backward, Function, gradcheck)", MINIGRAD),
    (3, 0, 2, "nn and optim: modules, layers, losses; optimizers", "minigrad/nn/, minigrad/optim/", MINIGRAD),
    (4, 0, 2, "Process groups and collectives over MPI (mpi4py)",
     "minigrad_dist/process_group.py, collectives.py, p2p.py", DIST),
    (5, 0, 1, "DDP: buckets, Reducer, reduction strategies",
     "minigrad_dist/ddp/distributed.py, reducer.py,\nbucket.py, reduction_strategies.py, shared_memory.py", DIST),
    (5, 1, 1, "RPC: rpc_sync, rpc_async, remote, RRef", "minigrad_dist/rpc/agent.py, api.py, rref.py", DIST),
    (6, 1, 1, "Distributed autograd (FAST, SMART), DistributedOptimizer",
     "minigrad_dist/autograd/context.py, send_recv.py,\nengine.py; minigrad_dist/optim.py", DIST),
]

# (what happens, where: file and function; "step N" is the step of the Reducer's docstring)
GRADIENT_PATH = [
    ("loss.backward()", "minigrad/tensor.py Tensor.backward -> minigrad/engine.py run_backward"),
    ("the engine computes the parameter's gradient\n(an op's backward, once its dependencies are met)",
     "minigrad/engine.py GraphTask; the op (minigrad/ops/) may compute it\n"
     "straight into the bucket slot: minigrad/destinations.py set_grad_destination"),
    ("AccumulateGrad: tensor hooks, then .grad", "minigrad/function.py AccumulateGrad.accumulate"),
    ("post-accumulate-grad hook", "minigrad_dist/ddp/reducer.py Reducer._on_grad_ready (step 3)"),
    ("Reducer marks it ready: copies it into its bucket slot,\nthe bucket's pending count drops by one",
     "minigrad_dist/ddp/reducer.py Reducer._mark_ready,\nminigrad_dist/ddp/reduction_strategies.py copy_gradient"),
    ("pending == 0: buckets launch in bucket-index order",
     "minigrad_dist/ddp/reducer.py Reducer._launch_ready_buckets (step 4)"),
    ("allreduce of the bucket (a Future)",
     "minigrad_dist/ddp/reduction_strategies.py launch: MPI Iallreduce\n(minigrad_dist/process_group.py), "
     "shared memory\n(minigrad_dist/ddp/shared_memory.py) or a comm hook"),
    ("finalize at the end of the backward: wait in order,\n.grad becomes a view of the reduced bucket",
     "minigrad_dist/ddp/reducer.py Reducer._finalize_backward,\nreduction_strategies.py finish (step 6)"),
]


def _box(ax, x, y, width, height, color):
    ax.add_patch(FancyBboxPatch((x, y), width, height, boxstyle="round,pad=0.02,rounding_size=0.08",
                                facecolor=color, edgecolor="#555555", linewidth=1))


def _save(fig, ax, xlim, ylim, title: str, path: Path) -> Path:
    ax.set_xlim(*xlim)
    ax.set_ylim(*ylim)
    ax.set_title(title, fontsize=12)
    ax.axis("off")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def draw_layers(path: Path) -> Path:
    """The layer picture: one box per layer, bottom up; DDP and RPC side by side."""
    column, row_height, gap = 5.2, 1.0, 0.18
    fig, ax = plt.subplots(figsize=(11, 7.4))
    for row, first, columns, title, files, color in LAYERS:
        x, y = first * (column + gap), row * (row_height + gap)
        width = columns * column + (columns - 1) * gap
        _box(ax, x, y, width, row_height, color)
        ax.text(x + width / 2, y + row_height * 0.66, title, ha="center", va="center", fontsize=9, weight="bold")
        ax.text(x + width / 2, y + row_height * 0.28, files, ha="center", va="center", fontsize=7.5,
                family="monospace", color="#333333")
    ax.text(-0.25, 1.5 * (row_height + gap), "minigrad", rotation=90, ha="center", va="center", fontsize=11)
    ax.text(-0.25, 5.0 * (row_height + gap), "minigrad_dist", rotation=90, ha="center", va="center", fontsize=11)
    rows = len({layer[0] for layer in LAYERS})
    return _save(fig, ax, (-0.5, 2 * column + gap + 0.1), (-0.1, rows * (row_height + gap)),
                 "minigrad's layers: each builds on the ones below it", path)


def draw_gradient_path(path: Path) -> Path:
    """The gradient's way: one box per step, top to bottom, joined by arrows; the code's place beside each."""
    step_height, gap, width = 0.9, 0.3, 4.6
    fig, ax = plt.subplots(figsize=(11.5, 9.5))
    top = len(GRADIENT_PATH) * (step_height + gap)
    for i, (what, where) in enumerate(GRADIENT_PATH):
        y = top - (i + 1) * (step_height + gap)
        _box(ax, 0, y, width, step_height, MINIGRAD if where.startswith("minigrad/") else DIST)
        ax.text(0.15, y + step_height / 2, f"{i + 1}", ha="left", va="center", fontsize=12, weight="bold")
        ax.text(width / 2 + 0.15, y + step_height / 2, what, ha="center", va="center", fontsize=9.5)
        ax.text(width + 0.25, y + step_height / 2, where, ha="left", va="center", fontsize=8, family="monospace",
                color="#333333")
        if i:
            ax.add_patch(FancyArrowPatch((width / 2, y + step_height + gap), (width / 2, y + step_height),
                                         arrowstyle="-|>", mutation_scale=14, color="#555555"))
    return _save(fig, ax, (-0.1, 11.6), (-0.1, top),
                 "One gradient's way from loss.backward() to a reduced bucket (DDP)", path)


def main(argv=None) -> list:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default=str(HERE))
    args = parser.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    written = [draw_layers(out / "architecture_layers.png"), draw_gradient_path(out / "architecture_gradient_path.png")]
    for path in written:
        print(f"wrote {path}")
    return written


if __name__ == "__main__":
    main()
