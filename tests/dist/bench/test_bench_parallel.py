"""The fairness gate of benchmarks/bench_parallel.py: ``loss_problems`` refuses sides that compute different things.

The benchmark times minigrad's and PyTorch's tensor and pipeline parallelism
only after both sides' losses over three SGD steps agree with each other
and with a local run. These tests give the gate reports that agree, and
reports where one thing differs, and check that it names exactly that.
"""

from __future__ import annotations

import copy
import importlib

import pytest

from tests.dist.mpi_pool import ROOT

LOSSES = [2.0388433, 1.9895708, 1.9425753]


@pytest.fixture
def bench(monkeypatch):
    """The benchmark module (it imports its driver ``timing`` by name, from its own folder)."""
    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))
    return importlib.import_module("bench_parallel")


def report_with(losses=LOSSES):
    """A report in which every configuration of both sides had ``losses``, in parallel and locally."""
    side = {
        "tp": {"h256": {"ms": 1.0, "local_ms": 2.0, "losses": list(losses), "local_losses": list(losses)}},
        "pipeline": {"h256_m4": {"ms": 1.0, "local_ms": 2.0, "losses": list(losses), "local_losses": list(losses)}},
    }
    return {"minigrad": side, "torch": copy.deepcopy(side)}


def test_agreeing_sides_pass(bench):
    report = report_with()
    report["torch"]["tp"]["h256"]["losses"][1] *= 1 + 1e-7  # float32 rounding of another BLAS
    assert bench.loss_problems(report) == []


@pytest.mark.parametrize(
    ("side", "key", "expected"),
    [
        ("minigrad", "losses", ["minigrad parallel vs local", "minigrad vs torch"]),
        ("minigrad", "local_losses", ["minigrad parallel vs local"]),
        ("torch", "losses", ["torch parallel vs local", "minigrad vs torch"]),
    ],
)
def test_a_differing_loss_is_named(bench, side, key, expected):
    report = report_with()
    report[side]["pipeline"]["h256_m4"][key][2] *= 1 + 1e-3  # e.g. one microbatch's gradient lost
    problems = bench.loss_problems(report)
    assert [p.split(": ")[1].removesuffix(" losses differ") for p in problems] == expected
    assert all(p.startswith("pipeline h256_m4: ") for p in problems)


def test_a_loss_that_does_not_move_cannot_pass(bench):
    problems = bench.loss_problems(report_with([2.0, 2.0 - 1e-6, 2.0 - 2e-6]))
    assert problems == [
        f"{kind} {name}: the loss barely moved (2.0 -> {2.0 - 2e-6}); raise LR"
        for kind, name in (("tp", "h256"), ("pipeline", "h256_m4"))
    ]
