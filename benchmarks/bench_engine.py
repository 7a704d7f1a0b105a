"""minigrad vs PyTorch eager on the same work, in one run, at equal thread counts.

Measures:
  * per-op overhead on 16x16 float32 tensors: forward with grad recording,
    and forward+backward over a 100-op chain (time per op);
  * one training step (forward, backward, SGD) of an MLP 64-256-256-10 at
    batch 64 (overhead-bound) and 1024-4096-4096-1024 at batch 256 (compute-bound).

The machine's speed swings over seconds, so the two libraries are measured in
alternating rounds and each side reports its median; the ratio is
minigrad / PyTorch (lower is better, 1.0 is parity).

Usage:
    python benchmarks/bench_engine.py [--threads 1] [--quick] [--out benchmarks/results/engine.json]
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
from pathlib import Path

import numpy as np
import torch
from threadpoolctl import threadpool_info, threadpool_limits
from timing import alternate, entry, write_report

import minigrad as mg

HERE = Path(__file__).resolve().parent


# -- per-op overhead -----------------------------------------------------------

OPS = {
    "add": (lambda a, b: a + b),
    "mul": (lambda a, b: a * b),
    "matmul": (lambda a, b: a @ b),
    "tanh": (lambda a, b: a.tanh()),
    "relu": (lambda a, b: a.relu()),
    "sum": (lambda a, b: a.sum()),
    "index": (lambda a, b: a[2:10]),
}


def per_op_forward(rounds: int, n: int = 2000) -> dict:
    a, b = mg.randn(16, 16, requires_grad=True), mg.randn(16, 16, requires_grad=True)
    ta, tb = torch.randn(16, 16, requires_grad=True), torch.randn(16, 16, requires_grad=True)
    results = {}
    for name, op in OPS.items():

        def run_mg(op=op):
            for _ in range(n):
                op(a, b)

        def run_torch(op=op):
            for _ in range(n):
                op(ta, tb)

        t_mg, t_torch = alternate(run_mg, run_torch, rounds, 3)
        results[name] = entry(t_mg / n * 1e6, t_torch / n * 1e6, "us")
    return results


def chain_forward_backward(rounds: int, length: int = 100) -> dict:
    a, b = mg.randn(16, 16, requires_grad=True), mg.randn(16, 16, requires_grad=True)
    ta, tb = torch.randn(16, 16, requires_grad=True), torch.randn(16, 16, requires_grad=True)

    def chain(x, w):
        y = x
        for i in range(length):
            y = y * w if i % 2 else y + w
        y.sum().backward()

    t_mg, t_torch = alternate(lambda: chain(a, b), lambda: chain(ta, tb), rounds, 20)
    return entry(t_mg / length * 1e6, t_torch / length * 1e6, "us per op")


# -- MLP training step ---------------------------------------------------------


def mlp_step_pair(sizes, batch):
    """Identical MLPs (same weights) and one SGD training step for each library."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((batch, sizes[0])).astype(np.float32)
    y = rng.integers(0, sizes[-1], size=batch)

    layers, tlayers = [], []
    for i, (fan_in, fan_out) in enumerate(zip(sizes[:-1], sizes[1:])):
        tl = torch.nn.Linear(fan_in, fan_out)
        ml = mg.nn.Linear(fan_in, fan_out)
        with mg.no_grad():
            ml.weight.copy_(tl.weight.detach().numpy())
            ml.bias.copy_(tl.bias.detach().numpy())
        layers.append(ml)
        tlayers.append(tl)
        if i < len(sizes) - 2:
            layers.append(mg.nn.ReLU())
            tlayers.append(torch.nn.ReLU())
    model, tmodel = mg.nn.Sequential(*layers), torch.nn.Sequential(*tlayers)
    opt = mg.optim.SGD(model.parameters(), lr=0.01)
    topt = torch.optim.SGD(tmodel.parameters(), lr=0.01)
    mx, my = mg.tensor(x), mg.tensor(y)
    tx, ty = torch.from_numpy(x), torch.from_numpy(y)

    def step_mg():
        opt.zero_grad()
        loss = mg.nn.functional.cross_entropy(model(mx), my)
        loss.backward()
        opt.step()

    def step_torch():
        topt.zero_grad()
        loss = torch.nn.functional.cross_entropy(tmodel(tx), ty)
        loss.backward()
        topt.step()

    return step_mg, step_torch


def mlp_step(sizes, batch, rounds, repeat) -> dict:
    step_mg, step_torch = mlp_step_pair(sizes, batch)
    t_mg, t_torch = alternate(step_mg, step_torch, rounds, repeat)
    return entry(t_mg * 1e3, t_torch * 1e3, "ms")


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--threads", type=int, default=1, help="threads for both NumPy's BLAS and PyTorch")
    parser.add_argument("--quick", action="store_true", help="fewer rounds (a smoke run)")
    parser.add_argument("--out", default=str(HERE / "results" / "engine.json"))
    args = parser.parse_args(argv)

    torch.set_num_threads(args.threads)
    rounds = 3 if args.quick else 7
    with threadpool_limits(limits=args.threads):
        blas = [
            {k: info.get(k) for k in ("internal_api", "version", "num_threads", "architecture")}
            for info in threadpool_info()
        ]
        results = {
            "per_op_forward": per_op_forward(rounds),
            "chain100_forward_backward": chain_forward_backward(rounds),
            "mlp_small_step": mlp_step((64, 256, 256, 10), 64, rounds, 20),
            "mlp_large_step": mlp_step((1024, 4096, 4096, 1024), 256, 3 if args.quick else 5, 2),
        }
    report = {
        "benchmark": "engine",
        "threads": args.threads,
        "python": sys.version.split()[0],
        "numpy": np.__version__,
        "torch": torch.__version__,
        "machine": platform.machine(),
        "cpu_count": os.cpu_count(),
        "blas": blas,
        "results": results,
    }
    _print(report)
    out = write_report(report, args.out)
    print(f"wrote {out}")
    return report


def _print(report):
    print(f"threads={report['threads']}  numpy {report['numpy']}  torch {report['torch']}")
    print(f"{'benchmark':34s} {'minigrad':>12s} {'torch':>12s} {'ratio':>7s}")
    res = report["results"]
    rows = [(f"forward {k} (us/op)", v) for k, v in res["per_op_forward"].items()]
    rows += [
        ("fwd+bwd 100-op chain (us/op)", res["chain100_forward_backward"]),
        ("MLP 64-256-256-10 b64 (ms/step)", res["mlp_small_step"]),
        ("MLP 1024-4096-4096-1024 b256 (ms)", res["mlp_large_step"]),
    ]
    for name, e in rows:
        print(f"{name:34s} {e['minigrad']:12.3f} {e['torch']:12.3f} {e['ratio']:7.2f}")


if __name__ == "__main__":
    main()
