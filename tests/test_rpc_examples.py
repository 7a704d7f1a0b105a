"""The RPC examples (examples/rpc/) run under mpiexec and print what their docstrings promise."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.dist.mpi_pool import run_script

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "rpc"


def run_example(name, ranks, args=(), timeout=60):
    out = run_script(EXAMPLES / name, ranks, args, timeout=timeout)
    assert out.returncode == 0, out.stdout[-3000:]
    return out.stdout


def number_after(label, text):
    match = re.search(re.escape(label) + r"\s*([-+\d.e]+)", text)
    assert match, f"{label!r} not found in:\n{text[-3000:]}"
    return float(match.group(1))


@pytest.mark.timeout(90)
def test_design_note_examples():
    out = run_example("design_note_examples.py", 2)
    assert "(a) OK: gradients equal a local autograd run" in out
    assert "FAST mode raised RuntimeError" in out and "mode='smart'" in out
    assert "SMART mode: d loss / d c: no gradient" in out
    assert "(b) OK" in out
    assert out.count("tensors on worker") == 2
    assert "(c) OK: every owner applied the gradients" in out


@pytest.mark.timeout(90)
def test_parameter_server_three_ranks_learns_digits():
    out = run_example("parameter_server.py", 3)
    assert "trainer1 epoch 10/10" in out and "trainer2 epoch 10/10" in out
    assert re.search(r"updates from 2 trainer\(s\) \(trainer1: \d+, trainer2: \d+\)", out), out[-2000:]
    assert number_after("test accuracy", out) >= 90.0


@pytest.mark.timeout(90)
def test_parameter_server_single_trainer():
    out = run_example("parameter_server.py", 2, ["--epochs", "3"])
    assert "updates from 1 trainer(s)" in out
    assert number_after("test accuracy", out) >= 80.0


@pytest.mark.timeout(90)
@pytest.mark.parametrize("ranks, epochs, min_accuracy", [(3, 10, 90.0), (2, 3, 80.0)])
def test_model_parallel_mlp_matches_local_and_learns(ranks, epochs, min_accuracy):
    out = run_example("model_parallel_mlp.py", ranks, ["--epochs", str(epochs)])
    assert number_after("max |distributed grad - local grad| over 6 parameters:", out) <= 1e-12
    assert number_after("max |weights after DistributedOptimizer step - local SGD step|:", out) <= 1e-12
    stage1 = "worker1" if ranks == 3 else "worker0"
    final = re.search(rf"model parallel MLP \({stage1}: stage 1, worker{ranks - 1}: stage 2\): test accuracy ([\d.]+)%",
                      out)
    assert final, out[-2000:]
    assert float(final.group(1)) >= min_accuracy
