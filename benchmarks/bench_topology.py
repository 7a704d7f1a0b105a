"""Two-level (hierarchical) reduction vs flat MPI on 4 ranks as 2 simulated nodes, in one command.

    python benchmarks/bench_topology.py [--quick]

The driver sets ``MPIR_CVAR_NUM_CLIQUES=2`` (MPICH then sees two "nodes" of
two ranks: 0,2 and 1,3; see ``minigrad_dist/topology.py``), launches
``mpiexec -n 4`` three times (once with ``--quick``) and merges the medians.
Each run checks the topology first, then times, the two sides in
alternating rounds (the machine's speed drifts, and other jobs share it):

1. **bucket reduction** of one float32 bucket of 1, 4, 16 and 64 MiB, as the
   DDP Reducer launches and waits for it: ``HierarchicalStrategy`` (each
   node sums through shared memory, each rank allreduces its slice with
   its peer on the other node, each node gathers) vs ``IallreduceStrategy``
   (one flat MPI ``Iallreduce``); the gradients are in the slots already
   (an op computes them there), so only the reduction is timed;
2. **all_reduce** of the same buffers through a group with two levels vs a
   flat one (``MINIGRAD_DIST_HIERARCHICAL=1`` / ``0`` when each was built):
   blocking calls, as a user makes them, so the flat side is one blocking
   MPI ``Allreduce`` (which spins: 4 ranks on 2 cores suffer from it);
3. **DDP step** (forward, backward, SGD) of the MLP 1024-4096-4096-1024,
   float32, batch 64 per rank, with the Reducer on two levels vs flat.

Throughput is bytes reduced per second (the buffer's size over the time).
Writes ``benchmarks/results/topology.json`` and ``topology.png``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

import numpy as np
from timing import alternate, launch_ranks, merge_runs, run_role, write_report

HERE = Path(__file__).resolve().parent
RANKS = 4
SIMULATED_NODES = {"MPIR_CVAR_NUM_CLIQUES": "2"}
SIZES_MIB = (1, 4, 16, 64)
LARGE = ((1024, 4096, 4096, 1024), 64)
NOTE = (
    "4 ranks on a 2-core machine that other jobs share: absolute numbers swing; each comparison alternates "
    "its two sides round by round, and the values are medians over rounds and runs"
)


# -- one rank (runs under mpiexec) ------------------------------------------------------------


def rank_role(quick):
    import minigrad_dist as dist

    dist.init_process_group()
    group = dist.get_default_group()
    topology = dist.get_topology()
    if topology.num_nodes != 2 or topology.local_sizes != (2, 2):
        raise SystemExit(f"expected 2 simulated nodes of 2 ranks, got {topology}: is MPIR_CVAR_NUM_CLIQUES set?")
    results = {"topology": {"node_of": list(topology.node_of), "local_rank_of": list(topology.local_rank_of)}}
    rounds, repeat = (3, 3) if quick else (5, 5)
    results["bucket"] = {str(mib): bucket_reduction(group, mib, rounds, repeat) for mib in SIZES_MIB}
    results["all_reduce"] = {str(mib): all_reduce(mib, rounds, repeat) for mib in SIZES_MIB}
    results["ddp_step"] = ddp_step(group, rounds=2 if quick else 4, repeat=2)
    return results if dist.get_rank() == 0 else None


def bucket_reduction(group, mib, rounds, repeat):
    """One bucket of ``mib`` MiB reduced by each strategy, launched and waited for as the Reducer does."""
    import minigrad as mg
    from minigrad_dist.ddp.bucket import Bucket
    from minigrad_dist.ddp.reduction_strategies import HierarchicalStrategy, IallreduceStrategy
    from minigrad_dist.ddp.shared_memory import node_hierarchy

    elements = mib * 2**20 // 4
    param = mg.zeros(elements)
    hierarchy = node_hierarchy(group.comm, True, True, group.topology)
    sides = {"hierarchical": HierarchicalStrategy(group, hierarchy, 60.0), "flat": IallreduceStrategy(group)}
    gradient = np.full(elements, float(group.rank() + 1), dtype=np.float32)
    timers = {}
    for name, strategy in sides.items():
        bucket = Bucket(0, [param], [0])
        strategy.use_buckets([bucket])
        timers[name] = _reduction_timer(strategy, bucket, gradient)
    times = {name: [] for name in sides}
    for _ in range(rounds):  # alternating rounds, each the median of ``repeat`` reductions
        for name, timer in timers.items():
            group.comm.Barrier()
            times[name].append(statistics.median(timer() for _ in range(repeat)))
    for strategy in sides.values():
        strategy.close()
    return _throughputs(mib, statistics.median(times["hierarchical"]), statistics.median(times["flat"]))


def _reduction_timer(strategy, bucket, gradient):
    """A function that fills the bucket's slot (not timed), then returns the seconds from launch to result."""

    def reduce_once() -> float:
        strategy.copy_gradient(bucket, 0, gradient)
        start = time.perf_counter()
        bucket.future = strategy.launch(bucket)
        bucket.future.wait(60.0)
        return time.perf_counter() - start

    return reduce_once


def all_reduce(mib, rounds, repeat):
    """``dist.all_reduce`` of ``mib`` MiB through a two-level group vs a flat one."""
    import minigrad_dist as dist
    from minigrad_dist.testing.oracles import environment

    with environment({"MINIGRAD_DIST_HIERARCHICAL": "1"}):
        two_level = dist.new_group()
    with environment({"MINIGRAD_DIST_HIERARCHICAL": "0"}):
        flat = dist.new_group()
    buffer = np.ones(mib * 2**20 // 4, dtype=np.float32)
    t_hier, t_flat = alternate(
        lambda: dist.all_reduce(buffer, group=two_level),
        lambda: dist.all_reduce(buffer, group=flat),
        rounds,
        repeat,
        flat.comm.Barrier,
    )
    dist.destroy_process_group(two_level)
    dist.destroy_process_group(flat)
    return _throughputs(mib, t_hier, t_flat)


def ddp_step(group, rounds, repeat):
    """A DDP training step of the large MLP with two-level vs flat bucket reduction (the same data and model)."""
    import minigrad as mg
    import minigrad_dist as dist
    from minigrad import nn
    from minigrad.nn import functional as F
    from minigrad_dist.testing.oracles import environment

    sizes, rows = LARGE
    rng = np.random.default_rng(group.rank())
    x = mg.tensor(rng.standard_normal((rows, sizes[0])).astype(np.float32))
    y = mg.tensor(rng.integers(0, sizes[-1], size=rows))

    def build(setting):
        mg.manual_seed(0)
        layers = []
        for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:])):
            layers += [nn.Linear(a, b)] + ([nn.ReLU()] if i < len(sizes) - 2 else [])
        with environment({"MINIGRAD_DIST_HIERARCHICAL": setting}):
            ddp = dist.DistributedDataParallel(nn.Sequential(*layers))
        optimizer = mg.optim.SGD(ddp.parameters(), lr=0.01)

        def step():
            optimizer.zero_grad()
            F.cross_entropy(ddp(x), y).backward()
            optimizer.step()

        return ddp, step

    hier, step_hier = build("1")
    flat, step_flat = build("0")
    strategies = [type(d.reducer.strategy).__name__ for d in (hier, flat)]
    t_hier, t_flat = alternate(step_hier, step_flat, rounds, repeat, group.comm.Barrier)
    buckets = len(hier.reducer.buckets)
    hier.close()
    flat.close()
    return {
        "hierarchical_ms": t_hier * 1e3,
        "flat_ms": t_flat * 1e3,
        "flat_over_hierarchical": t_flat / t_hier,
        "strategies": strategies,
        "buckets": buckets,
        "batch_per_rank": rows,
        "sizes": list(sizes),
    }


def _throughputs(mib, t_hier, t_flat):
    nbytes = mib * 2**20
    return {
        "hierarchical_GBps": nbytes / t_hier / 1e9,
        "flat_GBps": nbytes / t_flat / 1e9,
        "hierarchical_over_flat": t_flat / t_hier,
        "hierarchical_ms": t_hier * 1e3,
        "flat_ms": t_flat * 1e3,
    }


# -- driver ------------------------------------------------------------------------------------------


def plot(report, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8))
    ax = axes[0]
    sizes = [int(s) for s in report["results"]["bucket"]]
    for kind, marker in (("bucket", "o"), ("all_reduce", "s")):
        rows = report["results"][kind]
        ax.plot(sizes, [rows[str(s)]["hierarchical_GBps"] for s in sizes], marker + "-", label=f"{kind}: two levels")
        flat = "flat Iallreduce" if kind == "bucket" else "flat (blocking Allreduce)"
        ax.plot(sizes, [rows[str(s)]["flat_GBps"] for s in sizes], marker + "--", label=f"{kind}: {flat}")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("buffer (MiB, float32)")
    ax.set_ylabel("throughput (GB/s)")
    ax.set_title("4 ranks as 2 simulated nodes", fontsize=10)
    ax.legend(fontsize=8)
    ax = axes[1]
    step = report["results"]["ddp_step"]
    ax.bar(
        ["two levels", "flat Iallreduce"], [step["hierarchical_ms"], step["flat_ms"]], color=["tab:blue", "tab:gray"]
    )
    ax.set_ylabel("DDP step (ms)")
    ax.set_title("MLP 1024-4096-4096-1024, batch 64/rank", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--role", choices=["ranks"])
    parser.add_argument("--part")
    parser.add_argument("--out", default=str(HERE / "results" / "topology.json"))
    args = parser.parse_args(argv)
    if run_role(args, {"ranks": rank_role}):
        return None

    os.environ.update(SIMULATED_NODES)
    extra = ["--quick"] if args.quick else []
    runs = [launch_ranks(__file__, "ranks", RANKS, 29700 + attempt, extra) for attempt in range(1 if args.quick else 3)]
    results = merge_runs(runs)
    report = {
        "benchmark": "topology",
        "ranks": RANKS,
        "simulated_nodes": SIMULATED_NODES,
        "threads_per_rank": 1,
        "runs": len(runs),
        "note": NOTE,
        "results": results,
    }
    for kind in ("bucket", "all_reduce"):
        print(
            f"{kind}: "
            + ", ".join(
                f"{mib} MiB {row['hierarchical_GBps']:.2f} vs {row['flat_GBps']:.2f} GB/s "
                f"({row['hierarchical_over_flat']:.2f}x)"
                for mib, row in results[kind].items()
            )
        )
    step = results["ddp_step"]
    print(
        f"DDP step (large MLP): two levels {step['hierarchical_ms']:.0f} ms, flat {step['flat_ms']:.0f} ms "
        f"(flat / two levels {step['flat_over_hierarchical']:.2f})"
    )
    out = write_report(report, args.out)
    plot(report, out.with_name("topology.png"))
    print(f"wrote {out} and topology.png")
    return report


if __name__ == "__main__":
    main()
