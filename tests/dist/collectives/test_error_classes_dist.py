"""Bad collective calls raise the exception classes torch.distributed raises (a ported ``except`` still catches).

The messages are minigrad's own (they name the problem and the fix); the
classes are PyTorch's, checked by running each call with both libraries in
one process (``programs_error_classes.py``, a world of one rank).
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(180)

ROOT = Path(__file__).resolve().parents[3]


def free_port() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return str(s.getsockname()[1])


@pytest.fixture(scope="module")
def outcomes() -> dict:
    run = subprocess.run(
        [sys.executable, "-m", "tests.dist.collectives.programs_error_classes", free_port()],
        cwd=ROOT, capture_output=True, text=True, timeout=150, check=False,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-3000:]
    return json.loads(run.stdout.strip().splitlines()[-1])


def test_every_case_raises_in_pytorch(outcomes):
    """Each case is bad input to PyTorch too: else it does not test an error class."""
    assert [name for name, (theirs, _) in outcomes.items() if theirs == "no error"] == []


def test_minigrad_raises_pytorchs_class(outcomes):
    differ = {name: pair for name, pair in outcomes.items() if pair[0] != pair[1]}
    assert differ == {}, f"[PyTorch's class, minigrad's] where they differ: {differ}"
