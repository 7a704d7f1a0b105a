"""Soak test: long runs of DDP training and of distributed autograd with RRefs must stay flat.

    python benchmarks/soak.py [--steps N] [--contexts M] [--quick] [--out PATH]

The driver launches ``mpiexec -n 2`` on this script. Each rank runs two phases:

1. ``ddp``: N training steps (default 2000) of a small MLP wrapped in
   ``DistributedDataParallel``, with SGD and momentum;
2. ``rpc``: M iterations (default 2000) that each open a distributed
   autograd context, create a tensor on the other rank with ``rpc.remote``,
   fetch it with ``to_here``, run ``dist_autograd.backward`` through it,
   read ``get_gradients``, and drop everything.

At the start, at a warm-up point (a tenth of the way, at least 10
iterations in), a few times in between and at the end, each rank collects
garbage and records: its RSS, the live objects of the kinds that leak when
something holds on to the graph (Tensors, graph nodes, distributed autograd
contexts, RRefs), the contexts and owned RRef values the library says are
alive (``live_context_count``, ``owned_count``), how many unreachable
objects the collection freed (reference cycles), and the object types that
grew most since the warm-up. Between the warm-up and the end every count
must be unchanged; the RSS may wander a little (allocator, caches).

Writes ``benchmarks/results/soak.json`` (``--out`` to change) and prints a
summary; exits with status 1 when a count grew.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import resource
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np

import minigrad as mg
import minigrad_dist as dist
import minigrad_dist.autograd as dist_autograd
import minigrad_dist.rpc as rpc
from minigrad import nn
from minigrad.function import Node
from minigrad.nn import functional as F
from minigrad_dist.autograd.context import DistAutogradContext
from minigrad_dist.mpi import load_mpi
from minigrad_dist.rpc import rref as rref_module

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DEFAULT_OUT = HERE / "results" / "soak.json"
COUNTS = ("tensors", "graph_nodes", "contexts", "rrefs", "live_contexts", "owned_rrefs")
# What the summary holds to "unchanged from the warm-up to the end" (RSS gets a tolerance instead).
RSS_TOLERANCE_MB = 20.0
SETTLE_ROUNDS = 50


# -- measuring (on each rank) ----------------------------------------------------------------------


def rss_mb() -> float:
    """Resident set size of this process in MiB (/proc/self/statm, else the peak from getrusage)."""
    try:
        with open("/proc/self/statm") as f:
            resident_pages = int(f.read().split()[1])
        return resident_pages * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, ValueError, IndexError):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def census() -> tuple[dict, Counter]:
    """Collect garbage, then count live objects: (the tracked kinds, every type by name)."""
    gc.collect()
    counts = dict.fromkeys(("tensors", "graph_nodes", "contexts", "rrefs"), 0)
    by_type = Counter()
    for obj in gc.get_objects():
        kind = type(obj)
        by_type[kind.__qualname__] += 1
        if isinstance(obj, mg.Tensor):
            counts["tensors"] += 1
        elif isinstance(obj, Node):
            counts["graph_nodes"] += 1
        elif isinstance(obj, DistAutogradContext):
            counts["contexts"] += 1
        elif isinstance(obj, rref_module.RRef):
            counts["rrefs"] += 1
    counts["live_contexts"] = dist_autograd.live_context_count()
    counts["owned_rrefs"] = rref_module.owned_count()
    # Every object the cyclic collector freed so far (automatic collections included): garbage
    # that reference counting alone would have kept, i.e. reference cycles.
    counts["cycle_garbage_total"] = sum(generation["collected"] for generation in gc.get_stats())
    counts["rss_mb"] = round(rss_mb(), 2)
    return counts, by_type


class Recorder:
    """Samples of one phase on one rank, with the type census of the warm-up sample."""

    def __init__(self, phase: str, rank: int):
        self.phase = phase
        self.rank = rank
        self.samples = []
        self.warmup_types = None
        self.growth = []
        self.start = time.perf_counter()

    def sample(self, iteration: int, label: str) -> None:
        counts, by_type = census()
        sample = {
            "iteration": iteration,
            "label": label,
            "seconds": round(time.perf_counter() - self.start, 3),
            **counts,
        }
        self.samples.append(sample)
        if label == "warmup":
            # Kept as JSON text: a str is not tracked by the collector, so keeping the
            # census does not add to the next one (a Counter would count itself).
            self.warmup_types = json.dumps(by_type)
        if label == "end" and self.warmup_types is not None:
            grown = by_type - Counter(json.loads(self.warmup_types))
            self.growth = [(name, n) for name, n in grown.most_common(8)]
        fields = " ".join(f"{k}={sample[k]}" for k in (*COUNTS, "cycle_garbage_total", "rss_mb"))
        print(f"[rank {self.rank}] {self.phase:>3} {label:>7} it={iteration:<6} {fields}", flush=True)


def checkpoints(total: int, warmup: int, between: int = 3) -> dict:
    """Iteration -> label: start, warm-up, ``between`` evenly spaced samples, end."""
    points = {0: "start", warmup: "warmup"}
    for k in range(1, between + 1):
        points.setdefault(warmup + (total - warmup) * k // (between + 1), "during")
    points[total] = "end"
    return points


def warmup_of(total: int) -> int:
    return min(total, max(10, total // 10))


# -- phase 1: DDP ------------------------------------------------------------------------------------


def ddp_phase(steps: int, rank: int) -> Recorder:
    mg.manual_seed(rank)
    model = nn.Sequential(nn.Linear(32, 64), nn.Tanh(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 10))
    ddp = dist.DistributedDataParallel(model, bucket_cap_mb=0.01)  # several buckets: more hooks and views
    optimizer = mg.optim.SGD(ddp.parameters(), lr=0.01, momentum=0.9)
    rng = np.random.default_rng(rank)
    batches = [
        (mg.tensor(rng.standard_normal((16, 32)).astype(np.float32)), mg.tensor(rng.integers(0, 10, 16)))
        for _ in range(8)
    ]

    def step(i):
        x, y = batches[i % len(batches)]
        optimizer.zero_grad()
        loss = F.cross_entropy(ddp(x), y)
        loss.backward()
        optimizer.step()

    recorder = Recorder("ddp", rank)
    points = checkpoints(steps, warmup_of(steps))
    for i in range(steps + 1):
        if i in points:
            recorder.sample(i, points[i])
        if i < steps:
            step(i)
    ddp.close()
    return recorder


# -- phase 2: distributed autograd contexts with RRefs ----------------------------------------------


def owned_leaf(n: int):
    """Runs on the owner of an RRef: a fresh leaf tensor that requires grad."""
    return mg.ones(n, requires_grad=True)


def noop() -> None:
    """An RPC whose reply proves that the peer handled everything this worker sent before it."""


def settle(peer: str, comm) -> None:
    """Let reference-count releases in flight land before a census.

    An RRef dropped here is released by a one-way message that the agent's
    listener sends shortly after; a round trip to the peer after that
    proves the peer handled it (messages between two workers stay in
    order). Repeated until every rank's owned-value count is the same twice
    in a row (at most ``SETTLE_ROUNDS`` times: a real leak must not hang it).
    """
    previous = None
    for _ in range(SETTLE_ROUNDS):
        gc.collect()
        time.sleep(0.05)
        rpc.rpc_sync(peer, noop)
        comm.Barrier()
        current = rref_module.owned_count()
        agreed = comm.allreduce(int(current == previous))
        if agreed == comm.Get_size():
            return
        previous = current


def rpc_phase(iterations: int, rank: int, world: int, comm) -> Recorder:
    rpc.init_rpc(f"worker{rank}")
    peer = f"worker{(rank + 1) % world}"
    weight = mg.ones(4, requires_grad=True)

    def iteration():
        with dist_autograd.context() as context_id:
            rref = rpc.remote(peer, owned_leaf, args=(4,))
            loss = (rref.to_here() * weight).sum()
            dist_autograd.backward(context_id, [loss])
            gradient = dist_autograd.get_gradients(context_id)[weight]
        assert float(gradient.sum().item()) == 4.0

    recorder = Recorder("rpc", rank)
    points = checkpoints(iterations, warmup_of(iterations))
    for i in range(iterations + 1):
        if i in points:
            settle(peer, comm)
            recorder.sample(i, points[i])
            comm.Barrier()  # no rank starts the next iteration (and registers an RRef) before all counted
        if i < iterations:
            iteration()
    rpc.shutdown()
    return recorder


# -- one rank ------------------------------------------------------------------------------------------


def worker(args) -> None:
    comm = load_mpi().COMM_WORLD
    rank, world = comm.Get_rank(), comm.Get_size()
    dist.init_process_group(backend="mpi")
    phases = [ddp_phase(args.steps, rank), rpc_phase(args.contexts, rank, world, comm)]
    dist.destroy_process_group()
    mine = [
        {"phase": p.phase, "rank": rank, "samples": p.samples, "growth_since_warmup": p.growth}
        for p in phases
    ]
    everyone = comm.gather(mine, root=0)
    if rank == 0:
        report = {
            "world_size": world,
            "steps": args.steps,
            "contexts": args.contexts,
            "phases": [entry for per_rank in everyone for entry in per_rank],
        }
        report["verdict"] = verdict(report)
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(report, indent=1) + "\n")


def verdict(report: dict) -> dict:
    """Per phase and rank: the counts that changed between the warm-up and the end, and the RSS growth.

    ``rss_bytes_per_iteration`` is the RSS slope after the warm-up; a steady
    slope that stays under the tolerance in a short run still adds up in a
    long one, so it is reported even when the phase counts as flat.
    """
    out = {}
    for entry in report["phases"]:
        by_label = {s["label"]: s for s in entry["samples"]}
        warm, end = by_label["warmup"], by_label["end"]
        changed = {k: [warm[k], end[k]] for k in COUNTS if warm[k] != end[k]}
        rss_growth = round(end["rss_mb"] - warm["rss_mb"], 2)
        iterations = max(1, end["iteration"] - warm["iteration"])
        out[f"{entry['phase']}/rank{entry['rank']}"] = {
            "changed_counts": changed,
            "rss_growth_mb": rss_growth,
            "rss_bytes_per_iteration": round(rss_growth * 2**20 / iterations),
            "flat": not changed and rss_growth < RSS_TOLERANCE_MB,
            "ms_per_iteration": round(1000 * (end["seconds"] - warm["seconds"]) / iterations, 3),
            "cycle_garbage_per_iteration": round(
                (end["cycle_garbage_total"] - warm["cycle_garbage_total"]) / iterations, 2
            ),
        }
    return out


# -- the driver ----------------------------------------------------------------------------------------


def launch(args) -> int:
    mpiexec = Path(sys.executable).with_name("mpiexec")
    command = [str(mpiexec if mpiexec.exists() else "mpiexec"), "-n", str(args.ranks), sys.executable, "-u"]
    command += [__file__, "--worker", "--steps", str(args.steps), "--contexts", str(args.contexts)]
    command += ["--out", str(args.out)]
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    return subprocess.run(command, env=env, cwd=ROOT, timeout=args.timeout).returncode


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=None, help="DDP training steps (default 2000)")
    parser.add_argument(
        "--contexts", type=int, default=None, help="distributed autograd iterations (default 2000)"
    )
    parser.add_argument("--quick", action="store_true", help="200 of each instead of 2000")
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--out", default=str(DEFAULT_OUT))
    parser.add_argument("--timeout", type=float, default=3600.0, help="seconds before the ranks are killed")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    default = 200 if args.quick else 2000
    args.steps = default if args.steps is None else args.steps
    args.contexts = default if args.contexts is None else args.contexts
    if args.worker:
        worker(args)
        return 0
    code = launch(args)
    if code != 0:
        print(f"soak: the ranks failed (exit status {code})", file=sys.stderr)
        return code
    report = json.loads(Path(args.out).read_text())
    print(
        f"\nsoak: {args.steps} DDP steps, {args.contexts} distributed autograd contexts, {args.ranks} ranks"
    )
    for name, v in report["verdict"].items():
        state = "flat" if v["flat"] else "GREW"
        print(
            f"  {name:>10}: {state}; RSS {v['rss_growth_mb']:+.2f} MiB since warm-up "
            f"({v['rss_bytes_per_iteration']} B/iteration); "
            f"{v['ms_per_iteration']:.2f} ms/iteration; {v['cycle_garbage_per_iteration']} objects in "
            f"reference cycles per iteration; changed counts: {v['changed_counts'] or 'none'}"
        )
    print(f"wrote {args.out}")
    return 0 if all(v["flat"] for v in report["verdict"].values()) else 1


if __name__ == "__main__":
    sys.exit(main())
