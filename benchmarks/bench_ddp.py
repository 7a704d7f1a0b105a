"""minigrad DDP (MPI) vs PyTorch DDP (gloo) on 2 ranks, in one command.

    python benchmarks/bench_ddp.py [--quick] [--ranks 2]

The driver launches ``mpiexec -n 2`` three times per side, alternating minigrad and
PyTorch (the machine's speed drifts), and merges the medians:

* step time (forward, backward, SGD) of DDP and of the same model trained
  locally by one process, for the MLPs of the engine benchmark:
  64-256-256-10 at batch 64 per rank and 1024-4096-4096-1024 at batch 256;
  the DDP/local ratio says what data parallelism costs. Every rank times
  its local steps at the same moment as the others (the machine's cores are
  shared as during DDP); ``local_ms`` is rank 0's, ``local_slowest_ms`` the
  slowest rank's. The ranks' speeds differ here (by up to a third), and a
  synchronous data-parallel step cannot beat its slowest rank, so
  DDP/slowest-local isolates what DDP itself adds;
* a bucket-size sweep on the large MLP (the VLDB paper's experiment) and
  overlap on vs off (off: backward under ``no_sync``, then one allreduce of
  all gradients);
* the Reducer's achieved allreduce throughput (its buckets launched
  asynchronously in order and waited for) vs a raw mpi4py ``Allreduce`` of
  the same number of bytes.

Also times the teaching ring allreduce (``algorithms.ring_allreduce``) beside
MPI's Allreduce. Writes ``benchmarks/results/ddp.json``, ``ddp_bucket_sweep.png``
and ``ddp_vs_local.png``.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
from timing import alternate, median_time, relu_mlp, run_sides, sgd_stepper, side_parser, write_report

HERE = Path(__file__).resolve().parent
SMALL = ((64, 256, 256, 10), 64)
LARGE = ((1024, 4096, 4096, 1024), 256)


def batch(sizes, n, seed):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n, sizes[0])).astype(np.float32), rng.integers(0, sizes[-1], size=n)


# -- minigrad side (runs under mpiexec) -----------------------------------------------


def minigrad_role(quick):
    import minigrad as mg
    import minigrad_dist as dist
    from minigrad import nn
    from minigrad.nn import functional as F

    dist.init_process_group()
    rank = dist.get_rank()
    comm = dist.get_default_group().comm

    def mlp(sizes):
        mg.manual_seed(0)
        return relu_mlp(nn, sizes)

    def stepper(model, x, y, opt, overlap=True, ddp=None):
        xs, ys = mg.tensor(x), mg.tensor(y)

        def step():
            opt.zero_grad()
            if overlap or ddp is None:
                F.cross_entropy(model(xs), ys).backward()
            else:
                with ddp.no_sync():
                    F.cross_entropy(model(xs), ys).backward()
                grads = [p.grad.array for p in ddp.module.parameters()]
                flat = np.concatenate([g.reshape(-1) for g in grads]) / dist.get_world_size()
                dist.all_reduce(flat)
                start = 0
                for p, g in zip(ddp.module.parameters(), grads):
                    p.grad = mg.Tensor(flat[start : start + g.size].reshape(g.shape))
                    start += g.size
            opt.step()

        return step

    results = {}
    for name, (sizes, n) in {"small": SMALL, "large": LARGE}.items():
        x, y = batch(sizes, n, seed=rank)
        repeat, rounds = ((5, 3) if quick else (20, 7)) if name == "small" else ((2, 2) if quick else (2, 4))
        local = mlp(sizes)
        model = mlp(sizes)
        ddp = dist.DistributedDataParallel(model)
        local_step = stepper(local, x, y, mg.optim.SGD(local.parameters(), lr=0.01))
        ddp_step = stepper(ddp, x, y, mg.optim.SGD(ddp.parameters(), lr=0.01))
        t_local, t_ddp = alternate(local_step, ddp_step, rounds, repeat, comm.Barrier)
        results[name] = {"local_ms": t_local * 1e3, "local_slowest_ms": max(comm.allgather(t_local)) * 1e3,
                         "ddp_ms": t_ddp * 1e3}
        if name == "large":
            no_overlap = stepper(ddp, x, y, mg.optim.SGD(ddp.parameters(), lr=0.01), overlap=False, ddp=ddp)
            t_overlap, t_no_overlap = alternate(ddp_step, no_overlap, rounds, repeat, comm.Barrier)
            results[name]["overlap_ms"] = t_overlap * 1e3
            results[name]["no_overlap_ms"] = t_no_overlap * 1e3
            results["throughput"] = reducer_throughput(ddp, comm, repeat=3 if quick else 8)
            sweep = {}
            for cap in ([1, 25, 100] if quick else [1, 5, 10, 25, 50, 100]):
                m = mlp(sizes)
                d = dist.DistributedDataParallel(m, bucket_cap_mb=cap)
                t = median_time(stepper(d, x, y, mg.optim.SGD(d.parameters(), lr=0.01)), repeat)
                sweep[str(cap)] = {"ddp_ms": t * 1e3, "buckets": len(d.reducer.buckets)}
                d.close()
            results["bucket_sweep"] = sweep
        ddp.close()
    results["ring_allreduce"] = ring_vs_mpi(comm, quick)
    return results if rank == 0 else None


def ring_vs_mpi(comm, quick):
    """The teaching ring allreduce vs MPI's Allreduce on the same float32 buffers."""
    from mpi4py import MPI

    import minigrad_dist as dist
    from minigrad_dist.algorithms import ring_allreduce

    group = dist.get_default_group()
    out = {}
    for size in [2**12, 2**18, 2**22] + ([] if quick else [2**24]):
        buf = np.ones(size // 4, dtype=np.float32)
        repeat = 20 if size < 2**20 else 5
        comm.Barrier()
        t_ring = median_time(lambda buf=buf: ring_allreduce(buf, group), repeat)
        comm.Barrier()
        t_mpi = median_time(lambda buf=buf: comm.Allreduce(MPI.IN_PLACE, buf, MPI.SUM), repeat)
        out[str(size)] = {"ring_ms": t_ring * 1e3, "mpi_ms": t_mpi * 1e3, "ring_over_mpi": t_ring / t_mpi}
    return out


def reducer_throughput(ddp, comm, repeat):
    """The Reducer's buckets reduced in order (as a backward launches them) vs one raw Allreduce of equal bytes.

    With all ranks on one node the Reducer reduces through shared memory, so
    this also compares that path with MPI's own ``Allreduce``.
    """
    from mpi4py import MPI

    reducer = ddp.reducer
    total = sum(b.nbytes for b in reducer.buckets)

    def reduce_buckets():
        reducer.reduce_all_buckets()

    flat = np.ones(total // 4, dtype=np.float32)

    def raw():
        comm.Allreduce(MPI.IN_PLACE, flat, MPI.SUM)

    comm.Barrier()
    t_reducer = median_time(reduce_buckets, repeat)
    comm.Barrier()
    t_raw = median_time(raw, repeat)
    return {
        "bytes": total,
        "reducer_GBps": total / t_reducer / 1e9,
        "raw_mpi4py_GBps": total / t_raw / 1e9,
        "ratio": t_raw / t_reducer,
    }


# -- PyTorch side (runs under mpiexec, gloo over loopback) ------------------------------------


def torch_role(quick):
    import torch
    import torch.distributed as tdist

    rank, world = int(os.environ["PMI_RANK"]), int(os.environ["PMI_SIZE"])
    torch.set_num_threads(1)
    tdist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{os.environ['BENCH_PORT']}",
                             rank=rank, world_size=world)

    def mlp(sizes):
        torch.manual_seed(0)
        return relu_mlp(torch.nn, sizes)

    def stepper(model, x, y):
        return sgd_stepper(torch, model, x, y)

    results = {}
    for name, (sizes, n) in {"small": SMALL, "large": LARGE}.items():
        x, y = batch(sizes, n, seed=rank)
        repeat = (5 if quick else 20) if name == "small" else (2 if quick else 4)
        tdist.barrier()
        t_local = median_time(stepper(mlp(sizes), x, y), repeat)
        ddp = torch.nn.parallel.DistributedDataParallel(mlp(sizes))
        t_ddp = median_time(stepper(ddp, x, y), repeat)
        locals_ = [None] * world
        tdist.all_gather_object(locals_, t_local)
        results[name] = {"local_ms": t_local * 1e3, "local_slowest_ms": max(locals_) * 1e3, "ddp_ms": t_ddp * 1e3}
    tdist.destroy_process_group()
    return results if rank == 0 else None


# -- driver ---------------------------------------------------------------------------------------


def plot_sweep(report, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sweep = report["minigrad"]["bucket_sweep"]
    caps = [float(c) for c in sweep]
    times = [v["ddp_ms"] for v in sweep.values()]
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.plot(caps, times, "o-", label="minigrad DDP step")
    ax.axhline(report["minigrad"]["large"]["local_ms"], ls="--", c="gray", label="local step (1 process)")
    ax.axhline(report["torch"]["large"]["ddp_ms"], ls=":", c="tab:red", label="PyTorch DDP (gloo), 25 MB")
    ax.set_xscale("log")
    ax.set_xlabel("bucket_cap_mb")
    ax.set_ylabel("step time (ms)")
    ax.set_title("MLP 1024-4096-4096-1024, batch 256/rank, 2 ranks")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def plot_ddp_vs_local(report, path):
    """Bars: local step and DDP step of both libraries, both MLPs."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(9, 3.6))
    titles = ("MLP 64-256-256-10, b64/rank", "MLP 1024-4096-4096-1024, b256/rank")
    for ax, name, title in zip(axes, ("small", "large"), titles):
        labels = ["minigrad local", "minigrad DDP", "PyTorch local", "PyTorch DDP (gloo)"]
        values = [report["minigrad"][name]["local_ms"], report["minigrad"][name]["ddp_ms"],
                  report["torch"][name]["local_ms"], report["torch"][name]["ddp_ms"]]
        ax.bar(labels, values, color=["tab:blue", "tab:cyan", "tab:red", "tab:orange"])
        ax.set_title(title, fontsize=10)
        ax.set_ylabel("step time (ms), 2 ranks")
        ax.tick_params(axis="x", labelrotation=25, labelsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main(argv=None):
    args = side_parser(__doc__, HERE / "results" / "ddp.json").parse_args(argv)
    sides = run_sides(__file__, args, {"minigrad": minigrad_role, "torch": torch_role}, 29500)
    if sides is None:
        return None
    report = {"benchmark": "ddp", "ranks": args.ranks, "threads_per_rank": 1,
              **sides}
    mgr, tr = report["minigrad"], report["torch"]
    summary = {}
    for name in ("small", "large"):
        summary[name] = {
            "minigrad_ddp_ms": round(mgr[name]["ddp_ms"], 3),
            "torch_ddp_ms": round(tr[name]["ddp_ms"], 3),
            "ddp_ratio_minigrad_over_torch": round(mgr[name]["ddp_ms"] / tr[name]["ddp_ms"], 3),
            "minigrad_ddp_over_local": round(mgr[name]["ddp_ms"] / mgr[name]["local_ms"], 3),
            "torch_ddp_over_local": round(tr[name]["ddp_ms"] / tr[name]["local_ms"], 3),
            "minigrad_ddp_over_slowest_local": round(mgr[name]["ddp_ms"] / mgr[name]["local_slowest_ms"], 3),
            "torch_ddp_over_slowest_local": round(tr[name]["ddp_ms"] / tr[name]["local_slowest_ms"], 3),
        }
    summary["large"]["no_overlap_ms"] = round(mgr["large"]["no_overlap_ms"], 3)
    summary["reducer_throughput_vs_raw"] = round(mgr["throughput"]["ratio"], 3)
    report["summary"] = summary
    for name in ("small", "large"):
        s = summary[name]
        print(f"{name:5s} MLP: minigrad DDP {s['minigrad_ddp_ms']:9.2f} ms  torch DDP {s['torch_ddp_ms']:9.2f} ms  "
              f"ratio {s['ddp_ratio_minigrad_over_torch']:.2f}  |  DDP/local minigrad "
              f"{s['minigrad_ddp_over_local']:.2f}, torch {s['torch_ddp_over_local']:.2f}  |  DDP/slowest-rank "
              f"local minigrad {s['minigrad_ddp_over_slowest_local']:.2f}, "
              f"torch {s['torch_ddp_over_slowest_local']:.2f}")
    print(f"large MLP overlap on {mgr['large']['overlap_ms']:.1f} ms vs off (allreduce after backward) "
          f"{summary['large']['no_overlap_ms']:.1f} ms")
    print("ring allreduce / MPI Allreduce: " + ", ".join(
        f"{int(k) // 1024} KiB {v['ring_over_mpi']:.2f}x" for k, v in mgr["ring_allreduce"].items()))
    th = mgr["throughput"]
    print(f"reducer allreduce {th['reducer_GBps']:.2f} GB/s vs raw mpi4py {th['raw_mpi4py_GBps']:.2f} GB/s "
          f"({th['ratio']:.0%}) on {th['bytes'] / 2**20:.0f} MiB")
    print("bucket sweep (large MLP): " + ", ".join(f"{c} MB: {v['ddp_ms']:.0f} ms ({v['buckets']} buckets)"
                                                  for c, v in mgr["bucket_sweep"].items()))
    out = write_report(report, args.out)
    plot_sweep(report, out.with_name("ddp_bucket_sweep.png"))
    plot_ddp_vs_local(report, out.with_name("ddp_vs_local.png"))
    print(f"wrote {out}, ddp_bucket_sweep.png and ddp_vs_local.png")
    return report


if __name__ == "__main__":
    main()
