"""A scale model of DDP's step: calibrated and checked on this machine, then used to predict GPU clusters.

    python benchmarks/scale_model.py [--quick]

The arithmetic is ``cost_model.py`` (its docstring states the model as
numbered steps). This script, in order:

1. **Local step.** Times one process alone training the validation model (the
   MLP 512-2048-2048-512, float32, batch 32) and splits its step into
   forward, backward and optimizer (``t_local``; measured).
2. **Runs.** Launches ``mpiexec`` for each simulated topology and rank count:
   one node (every rank shares memory: ``SharedMemoryStrategy``) at 2, 4, 8,
   16 ranks; every rank its own node (``MPIR_CVAR_NOLOCAL=1``: MPI's network
   module, ``IallreduceStrategy``) at 2, 4, 8, 16; two nodes
   (``MPIR_CVAR_NUM_CLIQUES=2``: ``HierarchicalStrategy``) at 4, 8, 16. Each
   run alternates, round by round (this machine is shared and its speed
   drifts, so calibration and validation see the same load): a block of
   local steps on rank 0 alone (the others sleep), a block of local steps on
   every rank at once (the compute of step 1 of the model at that rank
   count; the ratio of the two is the run's slowdown), a block of DDP steps,
   and one reduction of a bucket of 64 KiB, 1, 4 and 16 MiB through the
   strategy DDP chose (all measured).
3. **Fit.** ``alpha`` and ``beta`` of the shared-memory level from the
   one-node reductions, and of the network level from the own-node ones
   (``cost_model.fit_level``; fitted from measurements). The reductions run
   on the compute cores here, so each one is fitted in units of its run's
   compute step (``comm_scale``): the load of the moment cancels out.
4. **Validate.** Predicts every run's DDP step: its measured compute plus its
   buckets' reductions from the fitted levels (two levels: the hierarchical
   formula from the same two fits, never fitted to two-node runs), without
   overlap (communication runs on the compute cores here); also the two-node
   reductions themselves. Prints predicted vs measured and the acceptance
   check (every step within 25%).
5. **Predict.** Scaling efficiency at 8..1024 GPUs (8 per node, NVLink inside,
   InfiniBand HDR or NDR between nodes) for ResNet-50 and BERT-large with
   several bucket sizes, from vendors' link figures, NCCL's own latency
   constants and NVIDIA's published per-GPU training throughput (all cited in
   ``CITATIONS``; the rest are stated assumptions).

Writes ``benchmarks/results/scale_model.json`` (every number tagged
``measured``, ``fitted``, ``predicted``, ``cited`` or ``assumption``) and
``scale_model.png``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np
from cost_model import (
    Level,
    bucket_sizes,
    fit_level,
    hierarchical_allreduce_time,
    oversubscription,
    ring_allreduce_time,
    scaling_efficiency,
    step_time,
)
from timing import launch_ranks, relu_mlp, run_role, sgd_stepper, write_report

HERE = Path(__file__).resolve().parent
SIZES = (512, 2048, 2048, 512)
BATCH = 32
BUCKET_CAP_MB = 4
REDUCTION_BYTES = (2**16, 2**20, 2**22, 2**24)
ACCEPTANCE = 0.25
SIMULATED_VARIABLES = ("MPIR_CVAR_NOLOCAL", "MPIR_CVAR_NUM_CLIQUES", "MPIR_CVAR_ODD_EVEN_CLIQUES")
TOPOLOGIES = {
    "one node": ({}, (2, 4, 8, 16)),
    "own node per rank": ({"MPIR_CVAR_NOLOCAL": "1"}, (2, 4, 8, 16)),
    "two nodes": ({"MPIR_CVAR_NUM_CLIQUES": "2"}, (4, 8, 16)),
}
QUICK_RANKS = {"one node": (2, 4), "own node per rank": (2, 4), "two nodes": (4,)}

# -- what the GPU predictions stand on (step 5) ------------------------------------------------------

CITATIONS = {
    "nvlink_a100": {
        "url": "https://www.nvidia.com/de-de/data-center/nvlink/",
        "says": "an A100 has up to 12 third-generation NVLinks, 600 GB/s in total (both directions)",
    },
    "infiniband_hdr": {
        "url": "https://docs.nvidia.com/networking/display/ConnectX6EN/Introduction",
        "says": "ConnectX-6 VPI: up to 200 Gb/s InfiniBand per port, sub-600 ns latency",
    },
    "infiniband_ndr": {
        "url": "https://docs.nvidia.com/networking/display/ConnectX7VPI/Introduction",
        "says": "ConnectX-7: single-port NDR 400 Gb/s InfiniBand",
    },
    "nic_per_gpu": {
        "url": "https://docs.nvidia.com/dgx-basepod/reference-architecture-infrastructure-foundation-enterprise-ai/"
        "latest/core-components.html",
        "says": "DGX H100/H200: eight GPUs and eight single-port ConnectX-7 for the compute fabric (one NIC per GPU)",
    },
    "nccl_latency": {
        "url": "https://github.com/NVIDIA/nccl/blob/01afd20a77b5804e0ecf1042509dd9d20ebf9e93/src/graph/tuning.cc",
        "says": "NCCL's tuning model, ring/Simple protocol: base latency 8.4 us per collective, 3.4 us per step "
        "over NVLink, 9.6 us per step over the network",
    },
    "resnet50_params": {
        "url": "https://pytorch.org/vision/stable/models/generated/torchvision.models.resnet50.html",
        "says": "ResNet-50: 25,557,032 parameters",
    },
    "bert_large_params": {
        "url": "https://arxiv.org/abs/1810.04805",
        "says": "BERT-large (L=24, H=1024, A=16): 340M parameters",
    },
    "resnet50_a100_throughput": {
        "url": "https://github.com/NVIDIA/DeepLearningExamples/blob/master/PyTorch/Classification/ConvNets/"
        "resnet50v1.5/README.md",
        "says": "ResNet-50 v1.5 training, DGX A100, 1 GPU, TF32: 938 img/s (batch 256 per GPU: ConvNets/configs.yml)",
    },
    "bert_large_a100_throughput": {
        "url": "https://github.com/NVIDIA/DeepLearningExamples/blob/master/PaddlePaddle/LanguageModeling/BERT/"
        "README.md",
        "says": "BERT-large pre-training phase 1 (sequence length 128), DGX A100, 1 GPU, TF32: 307 sequences/s",
    },
    "vldb_paper": {
        "url": "https://arxiv.org/abs/2006.15704",
        "says": "Li et al., PyTorch Distributed (VLDB 2020), abstract: DDP 'attains near-linear scalability using "
        "256 GPUs'. Its per-configuration scaling figures were not found in text form, so none are plotted.",
    },
}
GB = 1e9
NVLINK = Level.from_bandwidth("NVLink (A100)", 3.4e-6, 600 * GB / 2, base=8.4e-6)  # 600 GB/s both ways: 300 each
INTERCONNECTS = {
    "NVLink + InfiniBand HDR 200 Gb/s": Level.from_bandwidth("InfiniBand HDR", 9.6e-6, 200e9 / 8, base=8.4e-6),
    "NVLink + InfiniBand NDR 400 Gb/s": Level.from_bandwidth("InfiniBand NDR", 9.6e-6, 400e9 / 8, base=8.4e-6),
}
GPUS_PER_NODE = 8
GPU_COUNTS = (8, 16, 32, 64, 128, 256, 512, 1024)
BUCKET_CAPS_MB = (1, 5, 25, 100)
MODELS = {
    # compute_kind: ResNet-50's batch is the cited benchmark's; BERT-large's batch of 32 is an assumption.
    "ResNet-50": {"params": 25_557_032, "compute_s": 256 / 938, "batch": "256 images per GPU", "compute_kind": "cited"},
    "BERT-large": {
        "params": 340e6,
        "compute_s": 32 / 307,
        "batch": "32 sequences of 128 tokens per GPU",
        "compute_kind": "assumption",
    },
}
ASSUMPTIONS = [
    "gradients are float32 (4 bytes per parameter), one allreduce per step (no gradient accumulation)",
    "BERT-large's per-GPU batch is 32 sequences (the cited throughput was measured with accumulation)",
    "forward : backward = 1 : 2 of the compute; the optimizer step is not counted",
    "gradients become ready at a steady rate through the backward pass; buckets are cut evenly by size",
    "one NIC per GPU (as in DGX H100), used for HDR as for NDR; NVLink of an A100 in both cases",
    "each link's bandwidth is reached (no protocol overhead); NCCL's tree algorithm is not modelled",
    "communication overlaps compute without slowing it (NCCL on its own stream)",
]


# -- one rank (runs under mpiexec) ------------------------------------------------------------------


def mlp(sizes):
    """The validation model: Linear layers of ``sizes`` with ReLU between them, seeded."""
    import minigrad as mg
    from minigrad import nn

    mg.manual_seed(0)
    return relu_mlp(nn, sizes)


def batch(seed):
    """One rank's inputs ``(BATCH, SIZES[0])`` float32 and integer labels, from ``seed``."""
    rng = np.random.default_rng(seed)
    return rng.standard_normal((BATCH, SIZES[0])).astype(np.float32), rng.integers(0, SIZES[-1], size=BATCH)


def stepper(model, x, y):
    """A function running one training step (forward, backward, SGD) of ``model`` on ``(x, y)``."""
    import minigrad as mg

    return sgd_stepper(mg, model, x, y)


def rank_role(quick):
    """Step 2 on one rank: alternate rounds of local steps, DDP steps and bucket reductions."""
    import minigrad as mg
    import minigrad_dist as dist
    from minigrad_dist.ddp.bucket import Bucket
    from minigrad_dist.ddp.reduction_strategies import choose_strategy

    dist.init_process_group()
    group = dist.get_default_group()
    comm = group.comm
    x, y = batch(group.rank())
    local_step = stepper(mlp(SIZES), x, y)
    ddp = dist.DistributedDataParallel(mlp(SIZES), bucket_cap_mb=BUCKET_CAP_MB)
    ddp_step = stepper(ddp, x, y)
    reducers = {}
    for nbytes in REDUCTION_BYTES:
        param = mg.zeros(nbytes // 4)
        strategy = choose_strategy(group, [param], 120.0)
        bucket = Bucket(0, [param], [0])
        strategy.use_buckets([bucket])
        gradient = np.full(nbytes // 4, float(group.rank() + 1), dtype=np.float32)
        reducers[nbytes] = (strategy, bucket, gradient)
    rounds, steps = (2, 1) if quick else (7, 2)
    samples = {"solo": [], "local": [], "ddp": [], **{nbytes: [] for nbytes in REDUCTION_BYTES}}
    for round_index in range(rounds + 1):  # round 0 warms up (and lets DDP rebuild its buckets)
        times = {
            "solo": _solo_block(local_step, steps, comm),
            "local": _block(local_step, steps, comm),
            "ddp": _block(ddp_step, steps, comm),
        }
        for nbytes, (strategy, bucket, gradient) in reducers.items():
            times[nbytes] = _reduction(strategy, bucket, gradient, comm)
        if round_index:
            for key, value in times.items():
                samples[key].append(value)
    result = {
        "ranks": group.size(),
        "nodes": group.topology.num_nodes,
        "local_sizes": list(group.topology.local_sizes),
        "strategy": type(ddp.reducer.strategy).__name__,
        "reduction_strategy": type(reducers[REDUCTION_BYTES[0]][0]).__name__,
        "buckets": [int(b.nbytes) for b in ddp.reducer.buckets],
        "solo_s": statistics.median(samples["solo"]),
        "compute_s": statistics.median(samples["local"]),
        "ddp_step_s": statistics.median(samples["ddp"]),
        "compute_rounds_s": samples["local"],
        "ddp_rounds_s": samples["ddp"],
        "reductions_s": {str(n): statistics.median(samples[n]) for n in REDUCTION_BYTES},
    }
    for strategy, _, _ in reducers.values():
        strategy.close()
    ddp.close()
    return result if group.rank() == 0 else None


def _block(step, steps, comm) -> float:
    """Seconds per step of ``steps`` calls on every rank at once, barrier to barrier (the slowest rank's pace)."""
    comm.Barrier()
    start = time.perf_counter()
    for _ in range(steps):
        step()
    comm.Barrier()
    return (time.perf_counter() - start) / steps


def _solo_block(step, steps, comm) -> float:
    """Seconds per step of rank 0 alone while the other ranks sleep (not spin): one rank's compute right now."""
    comm.Barrier()
    start = time.perf_counter()
    if comm.Get_rank() == 0:
        for _ in range(steps):
            step()
    seconds = (time.perf_counter() - start) / steps
    request = comm.Ibarrier()
    while not request.Test():
        time.sleep(1e-3)
    return comm.bcast(seconds, root=0)


def _reduction(strategy, bucket, gradient, comm) -> float:
    """One bucket reduction as the Reducer launches and waits for it; the slowest rank's seconds."""
    from mpi4py import MPI

    strategy.copy_gradient(bucket, 0, gradient)  # not timed: in DDP the op computes it there
    comm.Barrier()
    start = time.perf_counter()
    bucket.future = strategy.launch(bucket)
    bucket.future.wait(120.0)
    return comm.allreduce(time.perf_counter() - start, op=MPI.MAX)


# -- driver: steps 1-5 ----------------------------------------------------------------------------


def tag(value, kind: str, unit: str = "") -> dict:
    """A number with where it comes from: ``measured``, ``fitted``, ``predicted``, ``cited`` or ``assumption``."""
    entry = {"value": float(f"{value:.6g}") if isinstance(value, float) else value, "kind": kind}  # 6 digits
    if unit:
        entry["unit"] = unit
    return entry


def cores() -> int:
    """The cores this process may run on (what the ranks share)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()


def local_step_phases(repeat: int) -> dict:
    """Step 1: one process alone, the validation model's step split into forward, backward and optimizer.

    Each phase is timed inside the same steps (medians over ``repeat`` steps after one warm-up), so that a
    slow moment of the machine does not fall on one phase only.
    """
    import minigrad as mg
    from minigrad.nn import functional as F

    model = mlp(SIZES)
    optimizer = mg.optim.SGD(model.parameters(), lr=0.01)
    x, y = batch(0)
    xs, ys = mg.tensor(x), mg.tensor(y)
    samples = []
    for _ in range(repeat + 1):
        start = time.perf_counter()
        optimizer.zero_grad()
        loss = F.cross_entropy(model(xs), ys)
        after_forward = time.perf_counter()
        loss.backward()
        after_backward = time.perf_counter()
        optimizer.step()
        end = time.perf_counter()
        samples.append((after_forward - start, after_backward - after_forward, end - after_backward, end - start))
    forward, backward, step_, whole = (statistics.median(column) for column in zip(*samples[1:]))
    return {"forward_s": forward, "backward_s": backward, "optimizer_s": step_, "step_s": whole}


def run_topologies(quick: bool) -> list:
    """Step 2: one ``mpiexec`` per topology and rank count; returns rank 0's results with the topology's name."""
    runs = []
    saved = {name: os.environ.pop(name) for name in SIMULATED_VARIABLES if name in os.environ}
    port = 29850
    try:
        for name, (variables, rank_counts) in TOPOLOGIES.items():
            for ranks in QUICK_RANKS[name] if quick else rank_counts:
                os.environ.update(variables)
                try:
                    result = launch_ranks(__file__, "ranks", ranks, port, ["--quick"] if quick else [], timeout=300)
                finally:
                    for variable in variables:
                        os.environ.pop(variable, None)
                port += 1
                result["topology"] = name
                runs.append(result)
                print(
                    f"  measured {name}, {ranks} ranks ({result['strategy']}): compute "
                    f"{result['compute_s'] * 1e3:.0f} ms, DDP step {result['ddp_step_s'] * 1e3:.0f} ms",
                    flush=True,
                )
    finally:
        os.environ.update(saved)
    return runs


def comm_scale(run) -> float:
    """The ``scale`` of a run's reductions (step 2 of the model): its measured compute step, in seconds.

    The reductions here run on the same cores as the compute (shared-memory
    sums, MPI's progress), so whatever slows one rank's compute (more ranks
    than cores: about ``max(1, ranks / cores)``; other jobs on the machine)
    slows its reductions as much. The levels' ``alpha`` and ``beta`` are
    therefore fitted as fractions of the compute step of the same run, which
    cancels the load of the moment out of the fit.
    """
    return run["compute_s"]


def measured_slowdown(run) -> float:
    """How much slower each rank computed with every rank busy than rank 0 alone (the others asleep in MPI)."""
    return run["compute_s"] / run["solo_s"]


def reference_step(runs) -> float:
    """The compute step of the one-node run with the fewest ranks (no more ranks than cores, on this machine):
    the unit in which the fitted alpha and beta are also reported in seconds."""
    return min((run for run in runs if run["topology"] == "one node"), key=lambda run: run["ranks"])["compute_s"]


def fit_levels(runs) -> dict:
    """Step 3: alpha and beta of each level from its topology's reductions (every size, every rank count)."""
    fitted = {}
    for level_name, topology in (("shared memory", "one node"), ("network module", "own node per rank")):
        samples = [
            (int(nbytes), run["ranks"], comm_scale(run), seconds)
            for run in runs
            if run["topology"] == topology
            for nbytes, seconds in run["reductions_s"].items()
        ]
        level, errors = fit_level(level_name, samples)
        fitted[level_name] = {"level": level, "samples": samples, "errors": errors}
    return fitted


def predict_reduction(nbytes, run, levels) -> float:
    """The model's seconds for one bucket of ``nbytes`` in ``run``'s topology (steps 2-3 of the model)."""
    scale = comm_scale(run)
    if run["topology"] == "one node":
        return ring_allreduce_time(nbytes, run["ranks"], levels["shared memory"], scale)
    if run["topology"] == "own node per rank":
        return ring_allreduce_time(nbytes, run["ranks"], levels["network module"], scale)
    local = max(run["local_sizes"])
    return hierarchical_allreduce_time(
        nbytes, local, run["nodes"], levels["shared memory"], levels["network module"], scale
    )


def validate(runs, levels, phases, machine_cores) -> list:
    """Step 4: every run's DDP step and reductions, predicted vs measured."""
    rows = []
    for run in runs:
        comm = [predict_reduction(b, run, levels) for b in run["buckets"]]
        # The measured compute, split in the local step's proportions (medians of phases need not add up
        # to the median step, so the split is by fractions).
        parts = [phases[k] for k in ("forward_s", "backward_s", "optimizer_s")]
        forward, backward, optimizer = (run["compute_s"] * part / sum(parts) for part in parts)
        serial = step_time(forward, backward, optimizer, run["buckets"], comm, overlap=False)
        overlapped = step_time(forward, backward, optimizer, run["buckets"], comm, overlap=True)
        measured_comm = [interpolate_reduction(b, run["reductions_s"]) for b in run["buckets"]]
        rule_compute = run["solo_s"] * oversubscription(run["ranks"], machine_cores)  # compute by the rule
        reductions = {
            nbytes: {
                "measured_ms": tag(seconds * 1e3, "measured", "ms"),
                "predicted_ms": tag(predict_reduction(int(nbytes), run, levels) * 1e3, "predicted", "ms"),
            }
            for nbytes, seconds in run["reductions_s"].items()
        }
        rows.append(
            {
                "topology": run["topology"],
                "ranks": run["ranks"],
                "nodes": run["nodes"],
                "strategy": run["strategy"],
                "bucket_bytes": run["buckets"],
                "compute_ms": tag(run["compute_s"] * 1e3, "measured", "ms"),
                "compute_slowdown": tag(measured_slowdown(run), "measured"),
                "solo_step_ms": tag(run["solo_s"] * 1e3, "measured", "ms"),
                "compute_slowdown_rule": tag(oversubscription(run["ranks"], machine_cores), "predicted"),
                "communication_ms": tag(sum(comm) * 1e3, "predicted", "ms"),
                "ddp_step_ms": tag(run["ddp_step_s"] * 1e3, "measured", "ms"),
                "predicted_step_ms": tag(serial["step"] * 1e3, "predicted", "ms"),
                "error": tag(serial["step"] / run["ddp_step_s"] - 1, "predicted"),
                "predicted_step_if_overlapped_ms": tag(overlapped["step"] * 1e3, "predicted", "ms"),
                "predicted_step_with_rule_compute_ms": tag((rule_compute + sum(comm)) * 1e3, "predicted", "ms"),
                # The composition alone: measured compute + this run's measured reductions (no alpha-beta fit).
                "step_from_measured_reductions_ms": tag(
                    (run["compute_s"] + sum(measured_comm)) * 1e3, "predicted", "ms"
                ),
                "ddp_rounds_ms": tag([round(t * 1e3, 3) for t in run["ddp_rounds_s"]], "measured", "ms"),
                "compute_rounds_ms": tag([round(t * 1e3, 3) for t in run["compute_rounds_s"]], "measured", "ms"),
                "reductions": reductions,
            }
        )
    return rows


def interpolate_reduction(nbytes, measured) -> float:
    """A bucket's reduction time from a run's measured ones: linear in bytes between the nearest sizes measured."""
    sizes = sorted(int(n) for n in measured)
    times = [measured[str(n)] for n in sizes]
    if nbytes >= sizes[-1]:  # beyond the largest: scale the largest by bytes
        return times[-1] * nbytes / sizes[-1]
    return float(np.interp(nbytes, sizes, times))


def predict_clusters() -> list:
    """Step 5: scaling efficiency of each model, interconnect and bucket size at ``GPU_COUNTS`` GPUs."""
    rows = []
    for model_name, model in MODELS.items():
        compute = model["compute_s"]
        forward, backward = compute / 3, 2 * compute / 3
        for interconnect, inter in INTERCONNECTS.items():
            for cap_mb in BUCKET_CAPS_MB:
                buckets = bucket_sizes(model["params"] * 4, cap_mb * 2**20)
                for gpus in GPU_COUNTS:
                    local, nodes = min(gpus, GPUS_PER_NODE), max(1, gpus // GPUS_PER_NODE)
                    comm = [hierarchical_allreduce_time(b, local, nodes, NVLINK, inter) for b in buckets]
                    step = step_time(forward, backward, 0.0, buckets, comm, overlap=True)
                    rows.append(
                        {
                            "model": model_name,
                            "interconnect": interconnect,
                            "bucket_cap_mb": cap_mb,
                            "buckets": len(buckets),
                            "gpus": gpus,
                            "compute_ms": tag(compute * 1e3, model["compute_kind"], "ms"),
                            "allreduce_ms": tag(sum(comm) * 1e3, "predicted", "ms"),
                            "step_ms": tag(step["step"] * 1e3, "predicted", "ms"),
                            "efficiency": tag(scaling_efficiency(compute, step["step"]), "predicted"),
                        }
                    )
    return rows


def plot(report, path):
    """Predicted vs measured DDP steps here, and predicted efficiency per model (one panel each)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(15, 4.4))
    ax = axes[0]
    markers = {"one node": "o", "own node per rank": "s", "two nodes": "^"}
    top = 0.0
    for row in report["validation"]["runs"]:
        measured, predicted = row["ddp_step_ms"]["value"], row["predicted_step_ms"]["value"]
        top = max(top, measured, predicted)
        ax.scatter(measured, predicted, marker=markers[row["topology"]], color="tab:blue")
        ax.annotate(str(row["ranks"]), (measured, predicted), textcoords="offset points", xytext=(4, 2), fontsize=7)
    line = np.array([0, top * 1.1])
    ax.plot(line, line, "k-", lw=0.8)
    ax.fill_between(line, line * (1 - ACCEPTANCE), line * (1 + ACCEPTANCE), color="gray", alpha=0.15, label="±25%")
    for name, marker in markers.items():
        ax.scatter([], [], marker=marker, color="tab:blue", label=name)
    ax.set_xlabel("measured DDP step (ms)")
    ax.set_ylabel("predicted DDP step (ms)")
    ax.set_title(f"This machine ({report['machine']['cores']['value']} cores): ranks labelled", fontsize=10)
    ax.legend(fontsize=7)
    styles = {1: ":", 5: "-.", 25: "-", 100: "--"}
    colors = dict(zip(INTERCONNECTS, ("tab:orange", "tab:green")))
    for ax, model in zip(axes[1:], MODELS):
        for interconnect in INTERCONNECTS:
            for cap in BUCKET_CAPS_MB:
                rows = [
                    r
                    for r in report["predictions"]["rows"]
                    if r["model"] == model and r["interconnect"] == interconnect and r["bucket_cap_mb"] == cap
                ]
                ax.plot(
                    [r["gpus"] for r in rows],
                    [r["efficiency"]["value"] for r in rows],
                    styles[cap],
                    color=colors[interconnect],
                    label=f"{interconnect.split('+ ')[1]}, {cap} MB buckets",
                )
        ax.set_xscale("log", base=2)
        ax.set_ylim(0, 1.05)
        ax.set_xlabel("GPUs (8 per node)")
        ax.set_ylabel("predicted scaling efficiency")
        ax.set_title(f"{model}: predicted (A100 compute, cited links)", fontsize=10)
        ax.text(
            0.02,
            0.04,
            "VLDB 2020: 'near-linear scalability using 256 GPUs'\n(per-point figures not found)",
            transform=ax.transAxes,
            fontsize=7,
        )
        ax.legend(fontsize=6, loc="center left")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def print_tables(report):
    """Print the fitted levels, predicted vs measured steps with the acceptance check, and the predictions."""
    val = report["validation"]
    reference = report["calibration"]["reference_compute_ms"]["value"]
    print("\nalpha/beta fitted (per ring step, as fractions of the run's compute step; in seconds at the 2-rank")
    print(f"compute step of {reference:.1f} ms):")
    for name, level in report["calibration"]["levels"].items():
        alpha, bandwidth = level["alpha_us"]["value"], level["bandwidth_GBps"]["value"]
        median, worst = level["fit_error_median"]["value"], level["fit_error_worst"]["value"]
        print(
            f"  {name:15s} alpha {alpha:9.2f} us  bandwidth {bandwidth:.3f} GB/s"
            f"  (fit errors: median {median:.0%}, worst {worst:.0%})"
        )
    print("\npredicted vs measured DDP step (MLP 512-2048-2048-512, batch 32/rank; times in ms; slowdown: measured")
    print("compute / rank 0 alone, rule: max(1, ranks/cores); comm(pred): the buckets' reductions, no overlap):")
    print(
        f"  {'topology':18s} {'ranks':>5s} {'slowdown':>8s} {'rule':>5s} {'compute':>8s} {'comm(pred)':>10s} "
        f"{'measured':>9s} {'predicted':>9s} "
        f"{'error':>7s} {'if overlapped':>13s} {'with measured reductions':>24s}"
    )
    for row in val["runs"]:
        print(
            f"  {row['topology']:18s} {row['ranks']:5d} {row['compute_slowdown']['value']:8.2f} "
            f"{row['compute_slowdown_rule']['value']:5.1f} {row['compute_ms']['value']:8.1f} "
            f"{row['communication_ms']['value']:10.1f} {row['ddp_step_ms']['value']:9.1f} "
            f"{row['predicted_step_ms']['value']:9.1f} {row['error']['value']:+7.1%} "
            f"{row['predicted_step_if_overlapped_ms']['value']:13.1f} "
            f"{row['step_from_measured_reductions_ms']['value']:24.1f}"
        )
    acc = val["acceptance"]
    print(
        f"  acceptance (every |error| <= {ACCEPTANCE:.0%}): {'PASS' if acc['passed'] else 'FAIL'} "
        f"(worst {acc['worst_error']['value']:+.1%})"
    )
    print("\npredicted scaling efficiency, 25 MB buckets:")
    gpus = GPU_COUNTS
    print(f"  {'model':11s} {'interconnect':34s} " + " ".join(f"{g:>6d}" for g in gpus))
    for model in MODELS:
        for interconnect in INTERCONNECTS:
            rows = {
                r["gpus"]: r
                for r in report["predictions"]["rows"]
                if r["model"] == model and r["interconnect"] == interconnect and r["bucket_cap_mb"] == 25
            }
            print(
                f"  {model:11s} {interconnect:34s} " + " ".join(f"{rows[g]['efficiency']['value']:6.3f}" for g in gpus)
            )


def main(argv=None):
    """Run steps 1-5 (or, with ``--role``, one rank of step 2) and write the report and the plot."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer rank counts and rounds (a smoke run)")
    parser.add_argument("--role", choices=["ranks"])
    parser.add_argument("--part")
    parser.add_argument("--out", default=str(HERE / "results" / "scale_model.json"))
    args = parser.parse_args(argv)
    if run_role(args, {"ranks": rank_role}):
        return None

    started = time.perf_counter()
    machine_cores = cores()
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    phases = local_step_phases(repeat=5 if args.quick else 15)
    print(
        f"step 1: local step {phases['step_s'] * 1e3:.1f} ms (forward {phases['forward_s'] * 1e3:.1f}, backward "
        f"{phases['backward_s'] * 1e3:.1f}, optimizer {phases['optimizer_s'] * 1e3:.1f}) on {machine_cores} cores"
    )
    print("step 2: runs")
    runs = run_topologies(args.quick)
    fitted = fit_levels(runs)
    levels = {name: entry["level"] for name, entry in fitted.items()}
    reference = reference_step(runs)
    rows = validate(runs, levels, phases, machine_cores)
    errors = [row["error"]["value"] for row in rows]
    worst = max(errors, key=abs)
    report = {
        "benchmark": "scale_model",
        "kinds": {
            "measured": "timed on this machine in this run",
            "fitted": "derived from this run's measurements by least squares",
            "predicted": "computed by the model (cost_model.py)",
            "cited": "from the source named in citations",
            "assumption": "chosen, not measured or cited (listed in predictions.assumptions)",
        },
        "machine": {"cores": tag(machine_cores, "measured"), "threads_per_rank": 1},
        "model": (Path(HERE / "cost_model.py").read_text().split('"""')[1]).strip(),
        "validation_model": {
            "sizes": list(SIZES),
            "batch_per_rank": BATCH,
            "bucket_cap_mb": BUCKET_CAP_MB,
            "parameters": sum(a * b + b for a, b in zip(SIZES[:-1], SIZES[1:])),
        },
        "local_step": {k.replace("_s", "_ms"): tag(v * 1e3, "measured", "ms") for k, v in phases.items()},
        "calibration": {
            "units": "alpha in compute steps per ring step, beta in compute steps per byte (fractions of the "
            "run's own compute step, see comm_scale); *_us and bandwidth_GBps: the same at reference_compute_ms",
            "reference_compute_ms": tag(reference * 1e3, "measured", "ms"),
            "levels": {
                name: {
                    "alpha_steps": tag(entry["level"].alpha, "fitted"),
                    "beta_steps_per_byte": tag(entry["level"].beta, "fitted"),
                    "alpha_us": tag(entry["level"].alpha * reference * 1e6, "fitted", "us"),
                    "bandwidth_GBps": tag(
                        1 / (entry["level"].beta * reference) / 1e9 if entry["level"].beta else float("inf"),
                        "fitted",
                        "GB/s",
                    ),
                    "fit_error_median": tag(float(np.median(np.abs(entry["errors"]))), "fitted"),
                    "fit_error_worst": tag(float(np.max(np.abs(entry["errors"]))), "fitted"),
                    "samples": [
                        {
                            "bytes": n,
                            "ranks": r,
                            "measured_ms": tag(s * 1e3, "measured", "ms"),
                            "fit_error": tag(e, "fitted"),
                        }
                        for (n, r, _, s), e in zip(entry["samples"], entry["errors"])
                    ],
                }
                for name, entry in fitted.items()
            },
        },
        "validation": {
            "runs": rows,
            "acceptance": {
                "rule": f"every |predicted / measured - 1| <= {ACCEPTANCE}",
                "worst_error": tag(worst, "predicted"),
                "passed": bool(abs(worst) <= ACCEPTANCE),
            },
            "note": "predicted step = measured compute (local steps on every rank at once, same run, alternating "
            "rounds) + each bucket's reduction from the fitted levels (alpha and beta as fractions of the run's "
            "compute step), with no overlap (reductions run on the compute cores here); two-node runs use the "
            "hierarchical formula with the one-node and own-node fits, never fitted to two-node data",
        },
        "predictions": {
            "links": {
                "intra_node": _level_entry(NVLINK),
                **{name: _level_entry(level) for name, level in INTERCONNECTS.items()},
            },
            "gpus_per_node": tag(GPUS_PER_NODE, "assumption"),
            "models": {
                name: {
                    "parameters": tag(m["params"], "cited"),
                    "compute_ms": tag(m["compute_s"] * 1e3, m["compute_kind"], "ms"),
                    "batch": m["batch"],
                }
                for name, m in MODELS.items()
            },
            "assumptions": ASSUMPTIONS,
            "rows": predict_clusters(),
        },
        "paper": {"reported": "near-linear scalability using 256 GPUs (abstract)", "per_point_figures": "not found"},
        "citations": CITATIONS,
        "quick": args.quick,
    }
    report["run_time_s"] = tag(time.perf_counter() - started, "measured", "s")
    print_tables(report)
    out = write_report(report, args.out)
    plot(report, out.with_name("scale_model.png"))
    print(f"\nwrote {out} and scale_model.png in {report['run_time_s']['value']:.0f} s")
    return report


def _level_entry(level: Level) -> dict:
    return {
        "name": level.name,
        "alpha_us": tag(level.alpha * 1e6, "cited", "us"),
        "bandwidth_GBps": tag(1 / level.beta / 1e9, "cited", "GB/s"),
        "base_us": tag(level.base * 1e6, "cited", "us"),
    }


if __name__ == "__main__":
    main()
    sys.exit(0)
