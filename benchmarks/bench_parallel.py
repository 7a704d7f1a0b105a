"""Tensor and pipeline parallelism: minigrad (MPI) vs PyTorch (gloo) on 2 ranks, in one command.

    python benchmarks/bench_parallel.py [--quick] [--ranks 2]

One program, written once against the API the two libraries share, runs on
each side: ``nn.Sequential`` models, ``parallelize_module`` with
``ColwiseParallel`` / ``RowwiseParallel`` on a 1-D ``init_device_mesh("cpu",
...)``, ``PipelineStage`` + ``Schedule1F1B``, ``optim.SGD`` and
``mse_loss``. minigrad runs ``minigrad_dist.tensor_parallel`` and
``minigrad_dist.pipelining`` over MPI; PyTorch runs
``torch.distributed.tensor.parallel`` (DTensor) and
``torch.distributed.pipelining`` over gloo. float32, one BLAS thread per
rank; the weights and data are drawn with NumPy, the same on both sides.

1. **TP MLP block** (Megatron's): ``Linear(h, 4h)`` column-parallel, GELU,
   ``Linear(4h, h)`` row-parallel (``parallelize_module`` on a plain
   ``nn.Sequential``), on ``batch x seq`` tokens replicated on every rank;
   a step is forward, MSE loss, backward and an SGD step; h = 256, 512, 1024.
2. **1F1B pipeline**, one stage per rank: the MLP of ``ranks`` blocks
   ``Linear(h, 4h), GELU, Linear(4h, h), GELU``, one block per stage (the
   same work on each); batch 256 in m = 4 or 8 microbatches, h = 256, 512;
   a step is ``schedule.step`` and an SGD step on every stage.

Both libraries run in the same processes: every rank joins minigrad's MPI
process group and PyTorch's gloo group (``mpiexec`` starts the ranks, gloo
meets over loopback TCP), and the two sides' steps take turns in rounds
(``timing.alternate``: minigrad, PyTorch, minigrad, ...; a round is the
median of a few steps, every rank timing the same step at once). The
machine's speed drifts over seconds and other jobs share its two cores;
launching the sides one after the other (``timing.run_sides``) mixes those
swings into the ratio, taking turns inside one launch does not.

Each configuration also times a *local* step in both libraries, the same
way: the whole model on the whole batch in one process, run by every rank
at once (the cores as busy as in the parallel step). The local ratio says
how much of a gap is the single-process engine and BLAS; ``parallel /
local`` what each library's parallelism costs or saves.

Before timing, both sides' losses over three SGD steps from the same
weights are compared (``loss_problems``): parallel against local, and
minigrad against PyTorch, within ``RTOL``, and they must move by far more
than that (else a wrong gradient could pass). The driver launches
``mpiexec -n 2`` three times (once with ``--quick``), keeps medians, and
writes ``benchmarks/results/parallel.json`` (the shape of the other
two-sided reports) and ``parallel.png``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from types import SimpleNamespace

import numpy as np
from timing import alternate, entry, launch_ranks, merge_runs, side_parser, write_report

HERE = Path(__file__).resolve().parent
TP_WIDTHS = (256, 512, 1024)
TP_BATCH, TP_SEQ = 4, 64
PIPE_WIDTHS = (256, 512)
PIPE_BATCH = 256
PIPE_MICROBATCHES = (4, 8)
LR = 0.5
CHECK_STEPS = 3
RTOL = 1e-5  # float32: the two BLAS libraries sum in other orders
SIDES = ("minigrad", "torch")


# -- the program of the ranks (under mpiexec), written once for both libraries ----------------------------------


def framework(side: str) -> SimpleNamespace:
    """The names the program uses, from minigrad or from PyTorch, after joining that library's process group."""
    if side == "minigrad":
        import minigrad as lib  # noqa: PLC0415  (the driver process must not start MPI nor load torch)
        import minigrad_dist as dist  # noqa: PLC0415
        from minigrad_dist.device_mesh import init_device_mesh  # noqa: PLC0415
        from minigrad_dist.pipelining import PipelineStage, Schedule1F1B  # noqa: PLC0415
        from minigrad_dist.tensor_parallel import ColwiseParallel, RowwiseParallel, parallelize_module  # noqa: PLC0415

        dist.init_process_group()
        tensor = lib.tensor
    else:
        import torch as lib  # noqa: PLC0415
        import torch.distributed as dist  # noqa: PLC0415
        from torch.distributed.device_mesh import init_device_mesh  # noqa: PLC0415
        from torch.distributed.pipelining import PipelineStage, Schedule1F1B  # noqa: PLC0415
        from torch.distributed.tensor.parallel import (  # noqa: PLC0415
            ColwiseParallel,
            RowwiseParallel,
            parallelize_module,
        )

        lib.set_num_threads(1)
        dist.init_process_group(
            "gloo",
            init_method=f"tcp://127.0.0.1:{os.environ['BENCH_PORT']}",
            rank=int(os.environ["PMI_RANK"]),
            world_size=int(os.environ["PMI_SIZE"]),
        )
        tensor = lib.from_numpy
    return SimpleNamespace(
        lib=lib, nn=lib.nn, mse_loss=lib.nn.functional.mse_loss, dist=dist, tensor=tensor,
        init_device_mesh=init_device_mesh, parallelize_module=parallelize_module,
        ColwiseParallel=ColwiseParallel, RowwiseParallel=RowwiseParallel,
        PipelineStage=PipelineStage, Schedule1F1B=Schedule1F1B,
    )  # fmt: skip


def mlp(fw, width: int, blocks: int, gelu_after: bool = False):
    """``blocks`` MLP blocks ``Linear(h, 4h), GELU, Linear(4h, h)`` (each then a GELU with ``gelu_after``).

    Every Linear's weight and bias come from U(-1/sqrt(fan_in), 1/sqrt(fan_in)),
    drawn with NumPy: the same numbers in both libraries and on every rank.
    """
    layers = []
    for _ in range(blocks):
        layers += [fw.nn.Linear(width, 4 * width), fw.nn.GELU(), fw.nn.Linear(4 * width, width)]
        if gelu_after:
            layers.append(fw.nn.GELU())
    rng = np.random.default_rng(0)
    with fw.lib.no_grad():
        for layer in layers:
            if isinstance(layer, fw.nn.Linear):
                bound = 1 / np.sqrt(layer.in_features)
                for p in (layer.weight, layer.bias):
                    p.copy_(fw.tensor(rng.uniform(-bound, bound, tuple(p.shape)).astype(np.float32)))
    return fw.nn.Sequential(*layers)


def data(fw, shape):
    """Input and target of ``shape``, float32, the same on both sides and every rank.

    The target's mean is 1, not 0, so that the gradients do not average out
    over the batch and three SGD steps move the loss by far more than ``RTOL``.
    """
    rng = np.random.default_rng(1)
    x, y = rng.standard_normal(shape), rng.standard_normal(shape) + 1
    return fw.tensor(x.astype(np.float32)), fw.tensor(y.astype(np.float32))


def local_stepper(fw, model, x, y):
    """One step of ``model`` on the whole batch in this process; returns the loss."""
    opt = fw.lib.optim.SGD(model.parameters(), lr=LR)

    def step():
        opt.zero_grad()
        loss = fw.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        return float(loss.item())

    return step


def tp_stepper(fw, width, x, y):
    """One step of the Megatron MLP block, column- then row-parallel over every rank; returns the loss."""
    mesh = fw.init_device_mesh("cpu", (fw.dist.get_world_size(),), mesh_dim_names=("tp",))
    plan = {"0": fw.ColwiseParallel(), "2": fw.RowwiseParallel()}
    model = fw.parallelize_module(mlp(fw, width, blocks=1), mesh["tp"], plan)
    return local_stepper(fw, model, x, y)


def pipeline_stepper(fw, width, microbatches, x, y):
    """One ``Schedule1F1B`` step of the MLP cut into one block per rank, then SGD; returns the batch's loss."""
    rank, stages = fw.dist.get_rank(), fw.dist.get_world_size()
    layers = list(mlp(fw, width, blocks=stages, gelu_after=True))
    module = fw.nn.Sequential(*layers[4 * rank : 4 * rank + 4])  # block `rank`: the same work on every stage
    stage = fw.PipelineStage(module, rank, stages, "cpu")
    schedule = fw.Schedule1F1B(stage, n_microbatches=microbatches, loss_fn=fw.mse_loss)
    opt = fw.lib.optim.SGD(module.parameters(), lr=LR)
    last = stages - 1

    def step():
        opt.zero_grad()
        losses = []
        if rank == 0:
            schedule.step(x)
        elif rank == last:
            schedule.step(target=y, losses=losses)
        else:
            schedule.step()
        opt.step()
        return sum(float(loss.item()) for loss in losses) / microbatches if rank == last else None

    return step


def checked_losses(fw, step, steps=CHECK_STEPS, src=0) -> list:
    """The losses of ``steps`` calls of ``step`` on rank ``src``, sent to every rank."""
    losses = [step() for _ in range(steps)]
    box = [losses]
    fw.dist.broadcast_object_list(box, src)
    return box[0]


def configurations(world: int):
    """``(kind, name, build, loss_rank)`` per configuration; ``build(fw)`` gives its (parallel, local) steps."""

    def tp(width):
        def build(fw):
            x, y = data(fw, (TP_BATCH, TP_SEQ, width))
            return tp_stepper(fw, width, x, y), local_stepper(fw, mlp(fw, width, blocks=1), x, y)

        return build

    def pipeline(width, microbatches):
        def build(fw):
            x, y = data(fw, (PIPE_BATCH, width))
            parallel = pipeline_stepper(fw, width, microbatches, x, y)
            return parallel, local_stepper(fw, mlp(fw, width, blocks=world, gelu_after=True), x, y)

        return build

    for width in TP_WIDTHS:
        yield "tp", f"h{width}", tp(width), 0
    for width in PIPE_WIDTHS:
        for microbatches in PIPE_MICROBATCHES:
            yield "pipeline", f"h{width}_m{microbatches}", pipeline(width, microbatches), world - 1


def ranks_role(quick):
    """Check, then time, every configuration in both libraries; rank 0 returns ``{side: {kind: {name: ...}}}``.

    Per configuration: each side's losses of three parallel and three local
    steps, then the two sides' parallel steps in alternating rounds, then
    their local steps likewise (every rank timing the same step at once).
    """
    sides = {side: framework(side) for side in SIDES}
    ours = sides["minigrad"]
    world, rank = ours.dist.get_world_size(), ours.dist.get_rank()
    repeat, rounds = (2, 2) if quick else (3, 5)
    results = {side: {"tp": {}, "pipeline": {}} for side in SIDES}
    for kind, name, build, loss_rank in configurations(world):
        steps = {side: build(fw) for side, fw in sides.items()}
        for side, fw in sides.items():
            parallel, local = steps[side]
            results[side][kind][name] = {
                "losses": checked_losses(fw, parallel, src=loss_rank),
                "local_losses": checked_losses(fw, local),
            }
        for key, which in (("ms", 0), ("local_ms", 1)):
            times = alternate(steps["minigrad"][which], steps["torch"][which], rounds, repeat, ours.dist.barrier)
            for side, seconds in zip(SIDES, times):
                results[side][kind][name][key] = seconds * 1e3
    for fw in sides.values():
        fw.dist.destroy_process_group()
    return results if rank == 0 else None


# -- driver ---------------------------------------------------------------------------------------


def loss_problems(report, rtol=RTOL) -> list[str]:
    """What is wrong with the report's losses: each side's parallel vs local, minigrad vs PyTorch, and no progress.

    Returns one line per problem (empty when the two sides computed the
    same thing): the losses of a configuration's parallel run must equal
    its local run's and the other side's within ``rtol``, and must change
    over the checked steps by more than ``100 rtol`` (a check that a constant
    loss would pass cannot catch a wrong gradient).
    """
    problems = []
    for kind in ("tp", "pipeline"):
        for name, mine in report["minigrad"][kind].items():
            theirs = report["torch"][kind][name]
            pairs = {
                "minigrad parallel vs local": (mine["losses"], mine["local_losses"]),
                "torch parallel vs local": (theirs["losses"], theirs["local_losses"]),
                "minigrad vs torch": (mine["losses"], theirs["losses"]),
            }
            for what, (a, b) in pairs.items():
                if not np.allclose(a, b, rtol=rtol, atol=0):
                    problems.append(f"{kind} {name}: {what} losses differ: {a} vs {b}")
            first, final = mine["local_losses"][0], mine["local_losses"][-1]
            if abs(final - first) <= 100 * rtol * abs(first):
                problems.append(f"{kind} {name}: the loss barely moved ({first} -> {final}); raise LR")
    return problems


def summarize(report) -> dict:
    """Per configuration: both sides' parallel and local step times as ``timing.entry`` (ratio = ours/theirs)."""
    summary = {}
    for kind in ("tp", "pipeline"):
        for name, mine in report["minigrad"][kind].items():
            theirs = report["torch"][kind][name]
            summary[f"{kind}_{name}"] = {
                "step": entry(mine["ms"], theirs["ms"], "ms"),
                "local": entry(mine["local_ms"], theirs["local_ms"], "ms"),
                "minigrad_over_local": round(mine["ms"] / mine["local_ms"], 3),
                "torch_over_local": round(theirs["ms"] / theirs["local_ms"], 3),
            }
    return summary


def print_table(summary) -> None:
    print(
        f"{'configuration':18s} {'minigrad ms':>11s} {'torch ms':>9s} {'ratio':>6s} | {'local: minigrad':>15s} "
        f"{'torch':>7s} {'ratio':>6s} | parallel/local minigrad, torch"
    )
    for name, s in summary.items():
        step, local = s["step"], s["local"]
        print(
            f"{name:18s} {step['minigrad']:11.2f} {step['torch']:9.2f} {step['ratio']:6.2f} | "
            f"{local['minigrad']:15.2f} {local['torch']:7.2f} {local['ratio']:6.2f} | "
            f"{s['minigrad_over_local']:.2f}, {s['torch_over_local']:.2f}"
        )


def plot(summary, ranks, path):
    """Bars of minigrad / PyTorch per configuration, parallel and local steps (below 1: minigrad is faster)."""
    import matplotlib  # noqa: PLC0415  (only the driver draws)

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415

    names = list(summary)
    where = np.arange(len(names))
    fig, ax = plt.subplots(figsize=(8, 3.8))
    ax.bar(where - 0.2, [summary[n]["step"]["ratio"] for n in names], 0.4, label=f"parallel step ({ranks} ranks)")
    ax.bar(where + 0.2, [summary[n]["local"]["ratio"] for n in names], 0.4, label="local step", color="tab:gray")
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_xticks(where, names, rotation=20, fontsize=8)
    ax.set_ylabel("minigrad time / PyTorch time")
    ax.set_title("TP MLP block (tokens 4x64) and 1F1B pipeline (batch 256), float32, SGD", fontsize=10)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main(argv=None):
    args = side_parser(__doc__, HERE / "results" / "parallel.json", roles=("ranks",)).parse_args(argv)
    if args.role:
        result = ranks_role(args.quick)
        if result is not None:
            Path(args.part).write_text(json.dumps(result))
        return None
    extra = ["--quick"] if args.quick else []
    runs = [launch_ranks(__file__, "ranks", args.ranks, 29900 + n, extra) for n in range(1 if args.quick else 3)]
    from minigrad import blas  # noqa: PLC0415  (the driver imports no library at module level)

    report = {
        "benchmark": "parallel", "ranks": args.ranks, "threads_per_rank": 1,
        "fused_gradient_accumulation": blas.fused(),  # each micro-batch's weight gradient added in its gemm
        **merge_runs(runs),
    }  # fmt: skip
    problems = loss_problems(report)
    if problems:
        raise SystemExit("bench_parallel: the sides do not compute the same thing:\n" + "\n".join(problems))
    report["summary"] = summary = summarize(report)
    print_table(summary)
    out = write_report(report, args.out)
    plot(summary, args.ranks, out.with_name("parallel.png"))
    print(f"wrote {out} and parallel.png")
    return report


if __name__ == "__main__":
    main()
