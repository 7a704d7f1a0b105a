"""Run one dual-run program under PyTorch or under minigrad and return the JSON it printed last.

``python -m tests.dualrun.runner minigrad path/to/program.py`` runs the program
with ``torch`` bound to minigrad (``torch_alias``); ``torch`` instead of
``minigrad`` runs it as written.
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


def run(library: str, program: Path, timeout: float = 240) -> dict:
    """Run ``program`` in a fresh interpreter with ``library`` ("torch" or "minigrad") behind ``import torch``.

    Raises:
        RuntimeError: the program failed (its stderr is in the message) or printed no JSON line.
    """
    env = dict(os.environ, PYTHONPATH=str(ROOT), OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
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
    return json.loads(lines[-1])


def main() -> None:
    library, program = sys.argv[1], sys.argv[2]
    if library == "minigrad":
        from tests.dualrun import torch_alias  # noqa: PLC0415

        torch_alias.install()
    elif library != "torch":
        raise SystemExit(f"unknown library {library!r}: use torch or minigrad")
    sys.argv = [program]
    runpy.run_path(program, run_name="__main__")


if __name__ == "__main__":
    main()
