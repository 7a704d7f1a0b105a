"""Run one dual-run program under PyTorch or under minigrad and return the JSON it printed last.

``run("minigrad", program)`` runs the program with ``torch`` bound to minigrad
in every process it starts (``alias_site/sitecustomize.py`` installs
``torch_alias``); ``run("torch", program)`` runs it as written. A program may
report ``"library": torch.__name__`` from a spawned rank; the runner checks it
names the library of the run.
"""

from __future__ import annotations

import json
import os
import runpy
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PROGRAMS = Path(__file__).resolve().parent / "programs"
ALIAS_SITE = Path(__file__).resolve().parent / "alias_site"  # its sitecustomize installs the switch


def run(library: str, program: Path, timeout: float = 240) -> dict:
    """Run ``program`` in a fresh interpreter with ``library`` ("torch" or "minigrad") behind ``import torch``.

    Raises:
        RuntimeError: the program failed (its stderr is in the message) or printed no JSON line.
    """
    path = [str(ROOT)] if library == "torch" else [str(ALIAS_SITE), str(ROOT)]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(path), OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1",
               DUALRUN_TORCH=library)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"  # the venv's mpiexec
    done = subprocess.run(
        [sys.executable, "-m", "tests.dualrun.runner", library, str(program)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout, check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"{program.name} under {library} exited {done.returncode}:\n{done.stderr[-4000:]}")
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if not lines:
        raise RuntimeError(f"{program.name} under {library} printed no JSON result:\n{done.stdout[-2000:]}")
    result = json.loads(lines[-1])
    ran = result.pop("library", library)
    if ran != library:  # e.g. spawned ranks that imported the real torch in a minigrad run
        raise RuntimeError(f"{program.name}: the run under {library} executed {ran!r}")
    return result


def main() -> None:
    library, program = sys.argv[1], sys.argv[2]
    if library not in ("torch", "minigrad"):
        raise SystemExit(f"unknown library {library!r}: use torch or minigrad")
    from tests.dualrun.torch_alias import TorchAliasFinder  # noqa: PLC0415

    switched = any(isinstance(finder, TorchAliasFinder) for finder in sys.meta_path)
    if switched != (library == "minigrad"):
        raise SystemExit(f"the import switch does not match {library!r}: run programs through runner.run()")
    sys.argv = [program]
    runpy.run_path(program, run_name="__main__")


if __name__ == "__main__":
    main()
