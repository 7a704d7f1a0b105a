"""The design note's figures: the script draws each kind of graph with the expected nodes and edges."""

from __future__ import annotations

import re

import pytest

from tests.dist.mpi_pool import ROOT, run_script


def nodes_and_edges(dot: str):
    labels = dict(re.findall(r'^\s*(n\d+) \[label="([^"]*)"', dot, re.M))
    edges = re.findall(r"(n\d+) -> (n\d+)( \[[^\]]*\])?;", dot)
    named = [(labels[a].split("\\n")[0], labels[b].split("\\n")[0], "dashed" in attrs) for a, b, attrs in edges]
    return labels, named


@pytest.mark.timeout(120)
def test_design_note_figures(tmp_path):
    out = run_script(ROOT / "examples" / "figures" / "design_note_figures.py", 2, ["--out", tmp_path], timeout=100)
    assert out.returncode == 0, out.stdout[-3000:]
    dots = {p.stem: p.read_text() for p in tmp_path.glob("*.dot")}
    assert set(dots) == {"rpc_send_recv", "local_dependencies", "distributed_dependencies", "fast_mode_example"}

    labels, edges = nodes_and_edges(dots["local_dependencies"])
    titles = set(labels.values())
    assert any(t.startswith("AddBackward (1)") for t in titles)
    assert any(t.startswith("MulBackward (0)") for t in titles)

    labels, edges = nodes_and_edges(dots["fast_mode_example"])
    assert "cluster_0" in dots["fast_mode_example"] and "cluster_1" in dots["fast_mode_example"]
    dashed = [(a, b) for a, b, is_dashed in edges if is_dashed]
    assert len(dashed) == 2, "one dashed edge per send/recv pair"
    for src, dst in dashed:
        assert src.startswith("RecvRpcBackward") and dst.startswith("SendRpcBackward")
        assert src.split("[")[1].split("]")[0] == dst.split("[")[1].split("]")[0], "same autograd_message_id"
    titles = [t.split("\\n")[0] for t in labels.values()]
    assert "MulBackward (1)" in titles and "AddBackward (1)" in titles
    assert sum(t.startswith("SendRpcBackward") and t.endswith("(1)") for t in titles) == 2

    labels, edges = nodes_and_edges(dots["distributed_dependencies"])
    titles = [t.split("\\n")[0] for t in labels.values()]
    assert sum(t.startswith("SendRpcBackward") for t in titles) == 4, "two RPCs, each with a reply"
    assert any(t.startswith("MulBackward") for t in titles)
