"""minigrad RPC (over MPI) vs PyTorch ``torch.distributed.rpc`` (TensorPipe) on 2 workers, in one command.

    python benchmarks/bench_rpc.py [--quick] [--rounds 3]

The driver launches ``mpiexec -n 2`` per side, alternating minigrad and
PyTorch for several rounds (the machine's speed drifts), and reports the
median over rounds of each launch's median. Worker 0 measures, worker 1
serves. Measured on loopback, one BLAS/OpenMP thread per worker:

* ``rpc_sync`` round-trip latency of ``echo``: no tensor (a call returning
  None), then float32 tensors of 3x3, 4 KB, 64 KB, 1 MB, 16 MB and 64 MB
  sent and returned (the payload crosses twice; fewer calls for the large
  ones);
* one forward + backward iteration of the design note's first example:
  inside a distributed autograd context, ``rpc_sync`` of ``my_add`` on two
  3x3 tensors, a local ``mul``, ``sum``, the distributed backward and
  ``get_gradients``.

PyTorch's side uses ``init_rpc`` with TensorPipe's default options
(``MASTER_ADDR=127.0.0.1``, a free port, rank and world size from
``PMI_RANK``/``PMI_SIZE`` set by our ``mpiexec``); TensorPipe may pick
shared-memory transports between processes on one host, as MPICH does.

Writes ``benchmarks/results/rpc.json`` and ``rpc_latency.png`` (a ``--quick``
smoke run writes to a temporary folder unless ``--out`` is given).
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

import numpy as np
from timing import median_time, write_report

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
# name -> (float32 elements, or None for the call without a tensor; calls; calls with --quick)
CASES = {
    "no tensor": (None, 500, 50),
    "3x3": (9, 500, 50),
    "4 KB": (1024, 300, 30),
    "64 KB": (16 * 1024, 200, 20),
    "1 MB": (256 * 1024, 100, 10),
    "16 MB": (4 * 1024 * 1024, 20, 3),
    "64 MB": (16 * 1024 * 1024, 8, 2),
}
EXAMPLE = "note example fwd+bwd"
EXAMPLE_CALLS = (300, 30)


# -- functions run on worker 1 (by name: both workers run this file as __main__) ------------------------


def noop():
    """The call without a tensor."""
    return None


def echo(x):
    """Send the payload back."""
    return x


def my_add(t1, t2):
    """The design note's remote function (works for both libraries' tensors)."""
    return t1 + t2


# -- measuring --------------------------------------------------------------------------------------------


def measure(rpc_sync, make_tensor, example_step, quick: bool) -> dict:
    """Every case for one library: median microseconds after 3 calls not timed; ``rpc_sync(func, args)`` calls
    worker 1."""
    results = {}
    for name, (elements, calls, quick_calls) in CASES.items():
        func, args = (noop, ()) if elements is None else (echo, (make_tensor(elements),))
        seconds = median_time(lambda f=func, a=args: rpc_sync(f, a), quick_calls if quick else calls, warmup=3)
        results[name] = seconds * 1e6
    seconds = median_time(example_step, EXAMPLE_CALLS[1] if quick else EXAMPLE_CALLS[0], warmup=3)
    results[EXAMPLE] = seconds * 1e6
    return results


# -- minigrad side (runs under mpiexec) -------------------------------------------------------------------


def minigrad_role(quick):
    """Worker 0 measures minigrad RPC; worker 1 serves until shutdown."""
    from mpi4py import MPI

    import minigrad as mg
    import minigrad_dist.autograd as dist_autograd
    import minigrad_dist.rpc as rpc

    rank = MPI.COMM_WORLD.Get_rank()
    rpc.init_rpc(f"worker{rank}")
    results = None
    if rank == 0:
        def example_step():
            with dist_autograd.context() as context_id:
                t1 = mg.rand(3, 3, requires_grad=True)
                t2 = mg.rand(3, 3, requires_grad=True)
                t3 = rpc.rpc_sync("worker1", my_add, args=(t1, t2))
                t4 = mg.rand(3, 3, requires_grad=True)
                loss = (t3 * t4).sum()
                dist_autograd.backward(context_id, [loss])
                dist_autograd.get_gradients(context_id)

        results = measure(lambda f, a: rpc.rpc_sync("worker1", f, args=a),
                          lambda n: mg.tensor(np.ones(n, dtype=np.float32)), example_step, quick)
    rpc.shutdown()
    return results


# -- PyTorch side (runs under mpiexec, TensorPipe over loopback) --------------------------------------------


def torch_role(quick):
    """Worker 0 measures torch.distributed.rpc; worker 1 serves until shutdown."""
    import torch
    import torch.distributed.autograd as dist_autograd
    import torch.distributed.rpc as rpc

    warnings.filterwarnings("ignore", category=UserWarning)
    torch.set_num_threads(1)
    rank, world = int(os.environ["PMI_RANK"]), int(os.environ["PMI_SIZE"])
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ["MASTER_PORT"] = os.environ["BENCH_PORT"]
    rpc.init_rpc(f"worker{rank}", rank=rank, world_size=world)
    results = None
    if rank == 0:
        def example_step():
            with dist_autograd.context() as context_id:
                t1 = torch.rand((3, 3), requires_grad=True)
                t2 = torch.rand((3, 3), requires_grad=True)
                t3 = rpc.rpc_sync("worker1", my_add, args=(t1, t2))
                t4 = torch.rand((3, 3), requires_grad=True)
                loss = torch.mul(t3, t4).sum()
                dist_autograd.backward(context_id, [loss])
                dist_autograd.get_gradients(context_id)

        results = measure(lambda f, a: rpc.rpc_sync("worker1", f, args=a),
                          lambda n: torch.ones(n, dtype=torch.float32), example_step, quick)
    rpc.shutdown()
    return results


# -- driver -------------------------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launch(role, quick) -> dict:
    """Run one side under ``mpiexec -n 2``; returns worker 0's medians."""
    out = Path(tempfile.mkstemp(suffix=".json")[1])
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", BENCH_PORT=str(free_port()),
               PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    mpiexec = Path(sys.executable).with_name("mpiexec")
    cmd = [str(mpiexec if mpiexec.exists() else "mpiexec"), "-n", "2", sys.executable, __file__,
           "--role", role, "--part", str(out)] + (["--quick"] if quick else [])
    try:
        subprocess.run(cmd, check=True, env=env, timeout=900)
        return json.loads(out.read_text())
    finally:
        out.unlink(missing_ok=True)


def payload_bytes(name) -> int:
    elements = CASES[name][0] if name in CASES else None
    return 0 if elements is None else 4 * elements


def summarize(runs) -> dict:
    """Median over rounds per case, with the rounds' spread."""
    return {case: {"median_us": statistics.median(r[case] for r in runs), "rounds_us": [r[case] for r in runs]}
            for case in runs[0]}


def report_table(report) -> str:
    lines = [f"{'case':22s} {'payload':>10s} {'minigrad':>11s} {'PyTorch':>11s} {'minigrad/PyTorch':>17s}"]
    for case, ratio in report["ratio_minigrad_over_torch"].items():
        mg_us = report["minigrad"][case]["median_us"]
        torch_us = report["torch"][case]["median_us"]
        size = report["payload_bytes"].get(case, 0)
        lines.append(f"{case:22s} {_bytes(size):>10s} {_time(mg_us):>11s} {_time(torch_us):>11s} {ratio:>17.2f}")
    return "\n".join(lines)


def _bytes(n) -> str:
    if n == 0:
        return "-"
    for unit, scale in (("MB", 2**20), ("KB", 2**10)):
        if n >= scale:
            return f"{n / scale:g} {unit}"
    return f"{n} B"


def _time(us) -> str:
    return f"{us / 1e3:.2f} ms" if us >= 1e3 else f"{us:.0f} us"


def plot(report, path) -> None:
    """Latency by payload size (log-log), both libraries; the no-tensor call as a dashed line."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cases = [c for c in CASES if CASES[c][0] is not None]
    sizes = [payload_bytes(c) for c in cases]
    fig, ax = plt.subplots(figsize=(6.5, 4.5))
    for side, label, color in (("minigrad", "minigrad RPC (MPI)", "tab:blue"),
                               ("torch", "torch.distributed.rpc (TensorPipe)", "tab:red")):
        times = [report[side][c]["median_us"] / 1e3 for c in cases]
        ax.plot(sizes, times, "o-", color=color, label=label)
        ax.axhline(report[side]["no tensor"]["median_us"] / 1e3, ls="--", color=color, lw=0.8,
                   label=f"{label.split(' ')[0]}: call without tensor")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("float32 payload, sent and returned (bytes)")
    ax.set_ylabel("rpc_sync round trip, median (ms)")
    ax.set_title("rpc_sync(echo) latency, 2 workers on one host")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="a smoke run: one round, few calls")
    parser.add_argument("--rounds", type=int, default=3, help="alternating launches per side")
    parser.add_argument("--role", choices=["minigrad", "torch"], help=argparse.SUPPRESS)
    parser.add_argument("--part", help=argparse.SUPPRESS)
    parser.add_argument("--out", help="JSON path (default benchmarks/results/rpc.json; a temp dir with --quick)")
    args = parser.parse_args(argv)

    if args.role:
        result = (minigrad_role if args.role == "minigrad" else torch_role)(args.quick)
        if result is not None:
            Path(args.part).write_text(json.dumps(result))
        return None

    rounds = 1 if args.quick else args.rounds
    runs = {"minigrad": [], "torch": []}
    for i in range(rounds):
        order = ("minigrad", "torch") if i % 2 == 0 else ("torch", "minigrad")
        for side in order:
            print(f"round {i + 1}/{rounds}: {side} ...", flush=True)
            runs[side].append(launch(side, args.quick))
    report = {
        "benchmark": "rpc",
        "workers": 2,
        "threads_per_worker": 1,
        "rounds": rounds,
        "quick": args.quick,
        "method": "median over rounds of each launch's median; echo payloads travel both ways",
        "payload_bytes": {case: payload_bytes(case) for case in CASES},
        "minigrad": summarize(runs["minigrad"]),
        "torch": summarize(runs["torch"]),
    }
    report["ratio_minigrad_over_torch"] = {
        case: round(report["minigrad"][case]["median_us"] / report["torch"][case]["median_us"], 3)
        for case in report["minigrad"]
    }
    print(report_table(report))
    default_dir = Path(tempfile.mkdtemp(prefix="bench_rpc_")) if args.quick else HERE / "results"
    out = write_report(report, args.out or default_dir / "rpc.json")
    plot(report, out.with_name("rpc_latency.png"))
    print(f"wrote {out} and {out.with_name('rpc_latency.png')}")
    return report


if __name__ == "__main__":
    main()
