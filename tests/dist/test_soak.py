"""A short soak (benchmarks/soak.py with 200 iterations): DDP training and distributed autograd stay flat.

Between the soak's warm-up sample and its end, on every rank, the live
Tensors, graph nodes, distributed autograd contexts, RRefs, and the values
the RRef owners keep must not change at all, and nothing may be left
behind by the distributed autograd loop. RSS may wander by a few MiB.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.dist.mpi_pool import ROOT

pytestmark = pytest.mark.timeout(300)

SOAK = ROOT / "benchmarks" / "soak.py"
ITERATIONS = 200
COUNTS = ("tensors", "graph_nodes", "contexts", "rrefs", "live_contexts", "owned_rrefs")
RSS_BOUND_MB = 20.0


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    out = tmp_path_factory.mktemp("soak") / "soak.json"
    command = [
        sys.executable,
        str(SOAK),
        "--steps",
        str(ITERATIONS),
        "--contexts",
        str(ITERATIONS),
        "--out",
        str(out),
        "--timeout",
        "240",
    ]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=280)
    assert out.exists(), f"the soak wrote no report (exit status {done.returncode}):\n{done.stdout[-4000:]}"
    return json.loads(out.read_text())


def _phases(report, phase):
    entries = [e for e in report["phases"] if e["phase"] == phase]
    assert len(entries) == report["world_size"] == 2, "one entry per rank and phase"
    return entries


def _samples(entry):
    """The samples from the warm-up to the end."""
    labels = [s["label"] for s in entry["samples"]]
    return entry["samples"][labels.index("warmup") :]


@pytest.mark.parametrize("phase", ["ddp", "rpc"])
def test_live_object_counts_do_not_change_after_warmup(report, phase):
    for entry in _phases(report, phase):
        samples = _samples(entry)
        assert [s["label"] for s in samples] == ["warmup", "during", "during", "during", "end"]
        for key in COUNTS:
            values = [s[key] for s in samples]
            assert len(set(values)) == 1, (
                f"{phase} rank {entry['rank']}: {key} changed after the warm-up: {values} "
                f"(types that grew: {entry['growth_since_warmup']})"
            )


@pytest.mark.parametrize("phase", ["ddp", "rpc"])
def test_rss_stays_within_a_few_mib(report, phase):
    for entry in _phases(report, phase):
        samples = _samples(entry)
        growth = samples[-1]["rss_mb"] - samples[0]["rss_mb"]
        assert growth < RSS_BOUND_MB, (
            f"{phase} rank {entry['rank']}: RSS grew {growth:.1f} MiB after the warm-up"
        )


def test_distributed_autograd_leaves_no_context_or_owned_value_behind(report):
    for entry in _phases(report, "rpc"):
        end = entry["samples"][-1]
        assert end["live_contexts"] == 0 and end["contexts"] == 0, end
        assert end["owned_rrefs"] == 0 and end["rrefs"] == 0, end
        assert end["graph_nodes"] <= 1, f"only the local weight's accumulate-grad node may stay: {end}"


def test_distributed_autograd_creates_no_reference_cycles(report):
    for entry in _phases(report, "rpc"):
        samples = _samples(entry)
        assert samples[-1]["cycle_garbage_total"] == samples[0]["cycle_garbage_total"], samples


def test_ddp_steps_create_no_reference_cycles(report):
    for entry in _phases(report, "ddp"):
        samples = _samples(entry)
        assert samples[-1]["cycle_garbage_total"] == samples[0]["cycle_garbage_total"], samples


def test_the_soak_verdict_agrees(report):
    assert all(v["flat"] for v in report["verdict"].values()), report["verdict"]
