"""What keeping freed memory in the process (``minigrad/allocator.py``) is worth, against PyTorch.

    python benchmarks/bench_allocator.py [--quick]

glibc's thresholds slide up as a program frees ever larger blocks, so what a
run sees depends on what it did before: every measurement here is a fresh
process that does one case with one library. Three kinds of process per case:
minigrad with glibc's defaults (``MINIGRAD_KEEP_FREED_MEMORY=0``), minigrad
with its settings (the default), and PyTorch alone (it never imports
minigrad, as a PyTorch user's program). The driver starts them in turn,
round after round (this machine's speed drifts), and keeps each kind's
median of the per-process medians. One BLAS thread. The cases:

1. **chain**: four elementwise ops on 256 x 1024 float32 tensors,
   ``((x * x + 1) * x) / y``: each result a fresh 1 MiB array;
2. **GELU MLP step** (float32): ``Linear(h, 4h), GELU, Linear(4h, h), GELU``
   twice, batch 256, forward, MSE loss, backward and an SGD step; h = 256, 512.

Each process also counts the page faults (``ru_minflt``) one call costs.
Writes ``benchmarks/results/allocator.json``: per case, each kind's time and
faults per call, and the minigrad / PyTorch ratio with either setting.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
from timing import median_time, write_report

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
KINDS = {  # name: (library, MINIGRAD_KEEP_FREED_MEMORY)
    "minigrad_glibc_defaults": ("minigrad", "0"),
    "minigrad_settings": ("minigrad", "1"),
    "torch": ("torch", "1"),
}
CASES = ("chain", "gelu_mlp_h256", "gelu_mlp_h512")
WIDTHS = (256, 512)
BATCH = 256


def chain(lib, rng):
    """A call that runs four elementwise ops on ``lib``'s float32 tensors, each making a 1 MiB result."""
    x, y = (lib.tensor(rng.random((256, 1024), dtype=np.float32) + 0.5) for _ in range(2))
    return lambda: ((x * x + 1) * x) / y


def gelu_mlp_step(lib, rng, width):
    """A call that runs one SGD step of the float32 GELU MLP (see the module docstring) in ``lib``."""
    nn = lib.nn
    sizes = [(width, 4 * width), (4 * width, width)] * 2
    layers = []
    for fan_in, fan_out in sizes:
        linear = nn.Linear(fan_in, fan_out)
        with lib.no_grad():
            linear.weight.copy_(lib.tensor(rng.standard_normal((fan_out, fan_in), dtype=np.float32) / fan_in**0.5))
            linear.bias.zero_()
        layers += [linear, nn.GELU()]
    model = nn.Sequential(*layers)
    opt = lib.optim.SGD(model.parameters(), lr=0.01)
    x, y = (lib.tensor(rng.standard_normal((BATCH, width), dtype=np.float32)) for _ in range(2))

    def step():
        opt.zero_grad()
        nn.functional.mse_loss(model(x), y).backward()
        opt.step()

    return step


def faults_per_call(fn, calls=5):
    """Minor page faults per call of ``fn``, after one call not counted."""
    fn()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(calls):
        fn()
    return (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before) / calls


def child(library: str, case: str, quick: bool) -> dict:
    """Time ``case`` with ``library`` alone in this fresh process: ``{"ms": ..., "faults_per_call": ...}``."""
    if library == "torch":
        import torch as lib  # noqa: PLC0415  (each process imports one library)

        lib.set_num_threads(1)
    else:
        import minigrad as lib  # noqa: PLC0415
    rng = np.random.default_rng(0)
    fn = chain(lib, rng) if case == "chain" else gelu_mlp_step(lib, rng, int(case.rsplit("_h", 1)[1]))
    faults = faults_per_call(fn)
    times = [median_time(fn, 5 if quick else 10) for _ in range(3)]
    result = {"ms": statistics.median(times) * 1e3, "faults_per_call": faults}
    if library == "minigrad":
        result["applied"] = lib.allocator.settings()
    return result


def launch(kind: str, case: str, quick: bool) -> dict:
    """Run ``child`` for ``kind`` and ``case`` in a fresh Python process and return its result."""
    library, keep = KINDS[kind]
    part = Path(tempfile.mkstemp(suffix=".json")[1])
    env = dict(
        os.environ,
        MINIGRAD_KEEP_FREED_MEMORY=keep,
        OPENBLAS_NUM_THREADS="1",
        OMP_NUM_THREADS="1",
        PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
    )
    cmd = [sys.executable, __file__, "--part", str(part), "--library", library, "--case", case]
    subprocess.run([*cmd, *(["--quick"] if quick else [])], check=True, env=env, timeout=600)
    result = json.loads(part.read_text())
    part.unlink()
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--part", help="(internal) where a child writes its result")
    parser.add_argument("--library", choices=("minigrad", "torch"), help="(internal) the child's library")
    parser.add_argument("--case", choices=CASES, help="(internal) the child's case")
    parser.add_argument("--out", default=str(HERE / "results" / "allocator.json"))
    args = parser.parse_args()
    if args.part:
        Path(args.part).write_text(json.dumps(child(args.library, args.case, args.quick)))
        return
    rounds = 1 if args.quick else 3
    runs = {case: {kind: [] for kind in KINDS} for case in CASES}
    for _ in range(rounds):
        for case in CASES:
            for kind in KINDS:
                runs[case][kind].append(launch(kind, case, args.quick))
    report = {"benchmark": "allocator", "threads": 1, "rounds": rounds, "cases": {}}
    for case, kinds in runs.items():
        row = {kind: {"ms": round(statistics.median(r["ms"] for r in results), 3),
                      "faults_per_call": statistics.median(r["faults_per_call"] for r in results)}
               for kind, results in kinds.items()}  # fmt: skip
        for kind in ("minigrad_glibc_defaults", "minigrad_settings"):
            row[kind]["ratio_to_torch"] = round(row[kind]["ms"] / row["torch"]["ms"], 3)
        report["cases"][case] = row
        before, after, torch = row["minigrad_glibc_defaults"], row["minigrad_settings"], row["torch"]
        print(
            f"{case:>14}: minigrad {before['ms']:.2f} ms with glibc's defaults ({before['faults_per_call']:.0f} "
            f"faults/call), {after['ms']:.2f} ms with its settings ({after['faults_per_call']:.0f}); PyTorch "
            f"{torch['ms']:.2f} ms ({torch['faults_per_call']:.0f}); ratio {before['ratio_to_torch']:.2f} -> "
            f"{after['ratio_to_torch']:.2f}"
        )
    print(f"wrote {write_report(report, args.out)}")


if __name__ == "__main__":
    main()
