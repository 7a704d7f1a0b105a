"""The benchmarks' one timer (the median wall time of a call, two sides timed in alternating rounds) and report writer.

This machine's speed drifts over seconds, so every benchmark here compares two
things (minigrad and PyTorch, a local and a DDP step, ...) in alternating rounds
and keeps medians, and all of them time through these functions. The scripts
import it by name (``from timing import alternate``): Python puts a script's own
folder first on ``sys.path``, also for the ranks that ``mpiexec`` starts.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def median_time(fn, repeat: int, warmup: int = 1) -> float:
    """The median wall time of ``fn()`` in seconds over ``repeat`` calls, after ``warmup`` calls not timed."""
    for _ in range(warmup):
        fn()
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def relu_mlp(nn, sizes):
    """``nn.Sequential`` of ``nn.Linear`` layers of ``sizes`` with ``nn.ReLU`` between them.

    ``nn`` is ``minigrad.nn`` or ``torch.nn``, so both sides build the same model; seed first.
    """
    layers = []
    for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:])):
        layers.append(nn.Linear(a, b))
        if i < len(sizes) - 2:
            layers.append(nn.ReLU())
    return nn.Sequential(*layers)


def sgd_stepper(lib, model, x, y, lr: float = 0.01):
    """A function running one SGD step of ``model`` on NumPy ``(x, y)`` with cross-entropy, in ``lib``.

    ``lib`` is ``minigrad`` or ``torch``; the arrays become tensors once (``lib.as_tensor``).
    """
    optimizer = lib.optim.SGD(model.parameters(), lr=lr)
    xs, ys = lib.as_tensor(x), lib.as_tensor(y)

    def step():
        optimizer.zero_grad()
        lib.nn.functional.cross_entropy(model(xs), ys).backward()
        optimizer.step()

    return step


def alternate(first, second, rounds: int, repeat: int, before_each=None) -> tuple[float, float]:
    """Each side's median of ``rounds`` round medians, ``first`` and ``second`` taking turns.

    A round times ``first`` then ``second`` with ``median_time(fn, repeat)``;
    ``before_each()``, when given, runs before each side's turn (the DDP
    benchmark passes a barrier, so that every rank times the same side at once).
    """
    times_first, times_second = [], []
    for _ in range(rounds):
        if before_each is not None:
            before_each()
        times_first.append(median_time(first, repeat))
        if before_each is not None:
            before_each()
        times_second.append(median_time(second, repeat))
    return statistics.median(times_first), statistics.median(times_second)


def entry(mg_value: float, torch_value: float, unit: str) -> dict:
    """One result row of the JSON reports: both values (rounded), ``ratio`` = minigrad / PyTorch, and the unit."""
    return {
        "minigrad": round(mg_value, 4),
        "torch": round(torch_value, 4),
        "ratio": round(mg_value / torch_value, 3),
        "unit": unit,
    }


def write_report(report: dict, out) -> Path:
    """Write ``report`` as indented JSON to ``out`` (folders made as needed) and return its path."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n")
    return out


def launch_ranks(script, role: str, ranks: int, port: int, args=(), timeout: float = 1800) -> dict:
    """Run ``mpiexec -n ranks python script --role role --part FILE *args`` and return rank 0's JSON from FILE.

    Every rank gets one BLAS/OpenMP thread and ``BENCH_PORT`` (a free TCP port
    for PyTorch's gloo rendezvous); the ``mpiexec`` beside this Python is
    preferred (the ``mpich`` wheel puts it in the virtual environment).
    """
    out = Path(tempfile.mkstemp(suffix=".json")[1])
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", BENCH_PORT=str(port),
               PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    mpiexec = Path(sys.executable).with_name("mpiexec")
    cmd = [str(mpiexec if mpiexec.exists() else "mpiexec"), "-n", str(ranks), sys.executable, str(script),
           "--role", role, "--part", str(out), *args]
    subprocess.run(cmd, check=True, env=env, timeout=timeout)
    data = json.loads(out.read_text())
    out.unlink()
    return data


def merge_runs(runs):
    """The median over ``runs`` (reports of one shape) of every numeric leaf; other leaves from the first run."""
    first = runs[0]
    if isinstance(first, dict):
        return {k: merge_runs([r[k] for r in runs]) for k in first}
    if isinstance(first, (int, float)) and not isinstance(first, bool):
        return statistics.median(runs)
    return first


def side_parser(doc: str, out, roles=("minigrad", "torch")) -> argparse.ArgumentParser:
    """The command line every two-sided benchmark takes: ``--quick``, ``--ranks``, ``--out``, and the driver's
    ``--role`` (one of ``roles``) and ``--part`` for the ranks it launches."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--role", choices=list(roles))
    parser.add_argument("--part")
    parser.add_argument("--out", default=str(out))
    return parser


def run_role(args, roles: dict) -> bool:
    """For a rank that ``launch_ranks`` started (``--role``): run ``roles[args.role](args.quick)`` and write
    its result (rank 0's; the other ranks return None) to ``--part``. Returns whether this was such a rank."""
    if not args.role:
        return False
    result = roles[args.role](args.quick)
    if result is not None:
        Path(args.part).write_text(json.dumps(result))
    return True


def run_sides(script, args, roles: dict, port: int) -> dict | None:
    """Run a two-sided benchmark's command line.

    With ``--role`` (a rank ``launch_ranks`` started): run that side's
    function from ``roles`` and write rank 0's result to ``--part``; returns
    None. Otherwise (the driver): launch the minigrad and the PyTorch side in
    turn, three times (once with ``--quick``), and return each side's runs
    merged by ``merge_runs``.
    """
    if run_role(args, roles):
        return None
    runs = {"minigrad": [], "torch": []}
    extra = ["--quick"] if args.quick else []
    for attempt in range(1 if args.quick else 3):
        runs["minigrad"].append(launch_ranks(script, "minigrad", args.ranks, port + attempt, extra))
        runs["torch"].append(launch_ranks(script, "torch", args.ranks, port + 100 + attempt, extra))
    return {side: merge_runs(side_runs) for side, side_runs in runs.items()}
