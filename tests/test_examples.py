"""The example scripts run end to end and reach what their docstrings promise."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from tests.dist.mpi_pool import run_script

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples"))


@pytest.mark.timeout(120)
def test_train_digits_mlp_reaches_95_percent():
    import train_digits

    results = train_digits.main(["--model", "mlp"])
    assert results["mlp"] >= 0.95


@pytest.mark.timeout(120)
def test_train_digits_cnn_learns():
    import train_digits

    results = train_digits.main(["--model", "cnn", "--epochs", "3"])
    assert results["cnn"] >= 0.8


@pytest.mark.timeout(120)
def test_train_digits_lenet_with_batchnorm_reaches_95_percent():
    import train_digits

    results = train_digits.main(["--model", "lenet", "--epochs", "4"])
    assert results["lenet"] >= 0.95


@pytest.mark.timeout(180)
def test_train_ddp_two_ranks_matches_single_process():
    out = run_script(ROOT / "examples" / "train_ddp.py", 2, timeout=150)
    assert out.returncode == 0, out.stdout[-3000:]
    accuracy = float(re.search(r"test accuracy ([\d.]+)%", out.stdout).group(1))
    assert accuracy >= 93.0
    assert "final weights equal the single-process run" in out.stdout


@pytest.mark.timeout(240)
def test_char_lstm_language_model_learns():
    import train_char_lstm

    results = train_char_lstm.main(["--steps", "60", "--hidden", "64", "--sample", "20"])
    assert results["after"] < results["before"] - 1.0, results
