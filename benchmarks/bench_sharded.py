"""Sharded data parallelism: ZeRO-1, ZeRO-2 and FSDP vs DDP (minigrad) and PyTorch's FSDP2, in one command.

    python benchmarks/bench_sharded.py [--quick] [--ranks 2]

The large MLP of the DDP benchmark (1024-4096-4096-1024, float32, batch 256
per rank, Adam), every Linear a unit where a unit is wrapped. The driver
launches ``mpiexec -n 2`` per side, alternating minigrad and PyTorch (the
machine's speed drifts), three times (once with ``--quick``), and keeps
medians. Inside one minigrad launch the configurations take turns in
rounds (``timing.alternate``), each timed against DDP in the same rounds:

* ``ddp``: ``DistributedDataParallel`` + Adam (the baseline);
* ``zero1``: DDP + ``ZeroRedundancyOptimizer`` (optimizer state sharded);
* ``zero2``: DDP whose buckets are reduce-scattered (gradients sharded too);
* ``fsdp``: ``fully_shard`` on every Linear and the root (parameters sharded).

PyTorch runs DDP and ``fully_shard`` (FSDP2) on gloo, the same model and
wrapping. Besides step times the minigrad side records each configuration's
memory per rank (``minigrad_dist.memory``). Writes
``benchmarks/results/sharded.json`` and ``sharded.png``.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
from timing import alternate, median_time, relu_mlp, run_sides, side_parser, write_report

HERE = Path(__file__).resolve().parent
SIZES = (1024, 4096, 4096, 1024)
BATCH = 256
LR = 1e-4


def batch(n, seed):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n, SIZES[0])).astype(np.float32), rng.integers(0, SIZES[-1], size=n)


# -- minigrad side (runs under mpiexec) -----------------------------------------------


def minigrad_role(quick):
    import minigrad as mg
    import minigrad_dist as dist
    from minigrad import nn
    from minigrad.nn import functional as F
    from minigrad_dist import memory

    dist.init_process_group()
    rank = dist.get_rank()
    comm = dist.get_default_group().comm
    x, y = batch(BATCH, seed=rank)
    xs, ys = mg.tensor(x), mg.tensor(y)

    def mlp():
        mg.manual_seed(0)
        return relu_mlp(nn, SIZES)

    def stepper(model, opt):
        def step():
            opt.zero_grad()
            F.cross_entropy(model(xs), ys).backward()
            opt.step()

        return step

    configurations = build_minigrad_configurations(mlp, dist, mg)
    repeat, rounds = (2, 2) if quick else (3, 4)
    results = {}
    ddp_model, ddp_opt = configurations.pop("ddp")
    ddp_step = stepper(ddp_model, ddp_opt)
    def measured_step(model, opt):
        """One step; the memory report is taken after its backward (gradients as the step finds them)."""
        opt.zero_grad()
        memory.reset_peaks()
        F.cross_entropy(model(xs), ys).backward()
        report = memory.memory_report(model, opt)
        opt.step()
        return report

    for name, (model, opt) in configurations.items():
        step = stepper(model, opt)
        t_ddp, t_config = alternate(ddp_step, step, rounds, repeat, comm.Barrier)
        results[name] = {"ms": t_config * 1e3, "ddp_ms": t_ddp * 1e3, "over_ddp": t_config / t_ddp,
                         "memory": measured_step(model, opt)}
    results["ddp"] = {"ms": median_time(ddp_step, repeat) * 1e3, "memory": measured_step(ddp_model, ddp_opt)}
    return results if rank == 0 else None


def build_minigrad_configurations(mlp, dist, mg) -> dict:
    """``{name: (model, optimizer)}`` for DDP, ZeRO-1, ZeRO-2 and FSDP, every one built from the same seed."""
    from minigrad_dist.algorithms.ddp_comm_hooks import allreduce_hook
    from minigrad_dist.algorithms.ddp_zero_hook import hook_with_zero_step
    from minigrad_dist.fsdp import fully_shard
    from minigrad_dist.optim import ZeroRedundancyOptimizer

    configurations = {}
    model = dist.DistributedDataParallel(mlp())
    configurations["ddp"] = (model, mg.optim.Adam(model.parameters(), lr=LR))
    model = dist.DistributedDataParallel(mlp())
    configurations["zero1"] = (model, ZeroRedundancyOptimizer(model.parameters(), optimizer_class=mg.optim.Adam,
                                                              lr=LR))
    model = dist.DistributedDataParallel(mlp())
    zero = ZeroRedundancyOptimizer(model.parameters(), optimizer_class=mg.optim.Adam, overlap_with_ddp=True, lr=LR)
    model.register_comm_hook(None, hook_with_zero_step(allreduce_hook, model, zero, shard_gradients=True))
    configurations["zero2"] = (model, zero)
    model = mlp()
    for layer in model:
        if isinstance(layer, mg.nn.Linear):
            fully_shard(layer)
    fully_shard(model)
    configurations["fsdp"] = (model, mg.optim.Adam(model.parameters(), lr=LR))
    return configurations


# -- PyTorch side (runs under mpiexec, gloo over loopback) ------------------------------------


def torch_role(quick):
    import torch
    import torch.distributed as tdist
    import torch.nn.functional as F
    from torch.distributed.fsdp import fully_shard

    rank, world = int(os.environ["PMI_RANK"]), int(os.environ["PMI_SIZE"])
    torch.set_num_threads(1)
    tdist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{os.environ['BENCH_PORT']}",
                             rank=rank, world_size=world)
    x, y = batch(BATCH, seed=rank)
    xs, ys = torch.from_numpy(x), torch.from_numpy(y)

    def mlp():
        torch.manual_seed(0)
        return relu_mlp(torch.nn, SIZES)

    def stepper(model):
        opt = torch.optim.Adam(model.parameters(), lr=LR)

        def step():
            opt.zero_grad()
            F.cross_entropy(model(xs), ys).backward()
            opt.step()

        return step

    ddp_step = stepper(torch.nn.parallel.DistributedDataParallel(mlp()))
    sharded = mlp()
    for layer in sharded:
        if isinstance(layer, torch.nn.Linear):
            fully_shard(layer)
    fully_shard(sharded)
    fsdp_step = stepper(sharded)
    repeat, rounds = (2, 2) if quick else (3, 4)
    t_ddp, t_fsdp = alternate(ddp_step, fsdp_step, rounds, repeat, tdist.barrier)
    tdist.destroy_process_group()
    return {"ddp": {"ms": t_ddp * 1e3}, "fsdp": {"ms": t_fsdp * 1e3, "over_ddp": t_fsdp / t_ddp}} if rank == 0 else None


# -- driver ---------------------------------------------------------------------------------------


def summarize(report) -> dict:
    mgr, tr = report["minigrad"], report["torch"]
    summary = {name: {"ms": round(mgr[name]["ms"], 2), "over_our_ddp": round(mgr[name]["over_ddp"], 3)}
               for name in ("zero1", "zero2", "fsdp")}
    summary["fsdp"]["over_torch_fsdp2"] = round(mgr["fsdp"]["ms"] / tr["fsdp"]["ms"], 3)
    summary["ddp_ms"] = round(mgr["ddp"]["ms"], 2)
    summary["torch"] = {"ddp_ms": round(tr["ddp"]["ms"], 2), "fsdp2_ms": round(tr["fsdp"]["ms"], 2)}
    ddp_memory = mgr["ddp"]["memory"]
    for name in ("zero1", "zero2", "fsdp"):
        mem = mgr[name]["memory"]
        summary[name]["optimizer_state_over_ddp"] = round(mem["optimizer_state"] / ddp_memory["optimizer_state"], 4)
        summary[name]["gradients_over_ddp"] = round(mem["gradients"] / ddp_memory["gradients"], 4)
        summary[name]["parameters_over_ddp"] = round(mem["parameters"] / ddp_memory["parameters"], 4)
        summary[name]["peak_gathered_MiB"] = round(mem["peak"]["gathered_parameters"] / 2**20, 2)
    return summary


def plot(report, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    mgr, tr = report["minigrad"], report["torch"]
    labels = ["minigrad DDP", "ZeRO-1", "ZeRO-2", "FSDP", "PyTorch DDP", "PyTorch FSDP2"]
    values = [mgr["ddp"]["ms"], mgr["zero1"]["ms"], mgr["zero2"]["ms"], mgr["fsdp"]["ms"],
              tr["ddp"]["ms"], tr["fsdp"]["ms"]]
    colors = ["tab:blue", "tab:cyan", "tab:green", "tab:purple", "tab:red", "tab:orange"]
    fig, ax = plt.subplots(figsize=(8, 3.8))
    ax.bar(labels, values, color=colors)
    ax.set_ylabel(f"step time (ms), {report['ranks']} ranks")
    ax.set_title("MLP 1024-4096-4096-1024, batch 256/rank, Adam", fontsize=10)
    ax.tick_params(axis="x", labelrotation=20, labelsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main(argv=None):
    args = side_parser(__doc__, HERE / "results" / "sharded.json").parse_args(argv)
    sides = run_sides(__file__, args, {"minigrad": minigrad_role, "torch": torch_role}, 29700)
    if sides is None:
        return None
    report = {"benchmark": "sharded", "ranks": args.ranks, "threads_per_rank": 1,
              **sides}
    report["summary"] = summary = summarize(report)
    print(f"DDP {summary['ddp_ms']:.0f} ms (PyTorch DDP {summary['torch']['ddp_ms']:.0f} ms, "
          f"FSDP2 {summary['torch']['fsdp2_ms']:.0f} ms)")
    for name in ("zero1", "zero2", "fsdp"):
        s = summary[name]
        extra_ratio = f", over PyTorch FSDP2 {s['over_torch_fsdp2']:.2f}" if name == "fsdp" else ""
        print(f"{name:5s} {s['ms']:8.0f} ms  over our DDP {s['over_our_ddp']:.2f}{extra_ratio}  |  memory over DDP: "
              f"optimizer state {s['optimizer_state_over_ddp']:.3f}, gradients {s['gradients_over_ddp']:.3f}, "
              f"parameters {s['parameters_over_ddp']:.3f}")
    out = write_report(report, args.out)
    plot(report, out.with_name("sharded.png"))
    print(f"wrote {out} and sharded.png")
    return report


if __name__ == "__main__":
    main()
