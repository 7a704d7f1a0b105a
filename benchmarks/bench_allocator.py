"""What keeping freed memory in the process (``minigrad/allocator.py``) is worth, for minigrad and PyTorch.

    python benchmarks/bench_allocator.py [--quick]

The driver starts this script twice as a child process: once with
``MINIGRAD_KEEP_FREED_MEMORY=0`` (glibc's malloc defaults) and once with
minigrad's settings (the default). Each child imports both libraries (so
both allocate through the same malloc settings), and times, one BLAS thread,
minigrad and PyTorch taking turns (``timing.alternate``):

1. **chain**: four elementwise ops on 256 x 1024 float32 tensors,
   ``((x * x + 1) * x) / y``: each result a fresh 1 MiB array;
2. **GELU MLP step** (float32): ``Linear(h, 4h), GELU, Linear(4h, h), GELU``
   twice, batch 256, forward, MSE loss, backward and an SGD step; h = 256, 512.

and counts the page faults (``ru_minflt``) one call of each costs. Writes
``benchmarks/results/allocator.json``: per setting, each case's times, the
minigrad / PyTorch ratio, and faults per call.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
from timing import alternate, entry, write_report

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SETTINGS = {"glibc_defaults": "0", "minigrad_settings": "1"}
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


def child(quick: bool) -> dict:
    """Time every case with both libraries in this process (its malloc settings come from the environment)."""
    import torch  # noqa: PLC0415  (the driver imports neither library)

    import minigrad  # noqa: PLC0415

    torch.set_num_threads(1)
    rounds, repeat = (3, 5) if quick else (7, 10)
    libs = {"minigrad": minigrad, "torch": torch}
    cases = {"chain": {side: chain(lib, np.random.default_rng(0)) for side, lib in libs.items()}}
    for width in WIDTHS:
        cases[f"gelu_mlp_h{width}"] = {
            side: gelu_mlp_step(lib, np.random.default_rng(0), width) for side, lib in libs.items()
        }
    result = {"applied": minigrad.allocator.settings()}
    for name, fns in cases.items():
        mg_s, torch_s = alternate(fns["minigrad"], fns["torch"], rounds, repeat)
        row = entry(mg_s * 1e3, torch_s * 1e3, "ms")
        row["faults_per_call"] = {side: faults_per_call(fn) for side, fn in fns.items()}
        result[name] = row
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--part", help="(internal) where a child writes its result")
    parser.add_argument("--out", default=str(HERE / "results" / "allocator.json"))
    args = parser.parse_args()
    if args.part:
        Path(args.part).write_text(json.dumps(child(args.quick)))
        return
    report = {"benchmark": "allocator", "threads": 1}
    for name, keep in SETTINGS.items():
        part = Path(tempfile.mkstemp(suffix=".json")[1])
        env = dict(
            os.environ,
            MINIGRAD_KEEP_FREED_MEMORY=keep,
            OPENBLAS_NUM_THREADS="1",
            OMP_NUM_THREADS="1",
            PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
        )
        cmd = [sys.executable, __file__, "--part", str(part), *(["--quick"] if args.quick else [])]
        subprocess.run(cmd, check=True, env=env, timeout=1800)
        report[name] = json.loads(part.read_text())
        part.unlink()
    for name in report["glibc_defaults"]:
        if name == "applied":
            continue
        before, after = report["glibc_defaults"][name], report["minigrad_settings"][name]
        print(
            f"{name:>14}: glibc defaults minigrad {before['minigrad']:.2f} ms / PyTorch {before['torch']:.2f} ms "
            f"({before['ratio']:.2f}x); minigrad's settings {after['minigrad']:.2f} / {after['torch']:.2f} ms "
            f"({after['ratio']:.2f}x); faults per call {before['faults_per_call']['minigrad']:.0f} -> "
            f"{after['faults_per_call']['minigrad']:.0f}"
        )
    print(f"wrote {write_report(report, args.out)}")


if __name__ == "__main__":
    main()
