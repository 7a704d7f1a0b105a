"""DDP overlap timeline: a Chrome trace Perfetto accepts, events in the order the algorithm promises."""

from __future__ import annotations

import json
from collections import defaultdict

import pytest

from tests.dist.conftest import get_pool
from tests.dist.ddp import programs_trace as programs

pytestmark = pytest.mark.timeout(300)

REQUIRED = {"X": {"name", "ph", "ts", "dur", "pid", "tid"}, "i": {"name", "ph", "ts", "pid", "tid", "s"},
            "M": {"name", "ph", "pid", "args"}}


def test_two_rank_trace_is_valid_and_allreduce_follows_bucket_ready(tmp_path):
    path = tmp_path / "ddp_trace.json"
    results = get_pool(2).run(programs.traced_training, {"steps": 3, "path": str(path)})
    json_path, png_path = results[0]["written"]
    assert results[1]["written"] is None
    trace = json.loads(open(json_path).read())
    events = trace["traceEvents"]
    assert isinstance(events, list) and events
    for event in events:
        assert REQUIRED[event["ph"]] <= set(event), event
        if event["ph"] != "M":
            assert isinstance(event["ts"], (int, float)) and event["ts"] >= 0
            assert event["ph"] != "X" or event["dur"] >= 0
    assert {e["pid"] for e in events} == {0, 1}
    lanes = {e["cat"] for e in events if e["ph"] != "M"}
    assert {"backward", "hooks", "buckets", "allreduce", "finalize"} <= lanes
    buckets = results[0]["buckets"]
    assert buckets >= 3
    for rank in (0, 1):
        ready = defaultdict(list)
        launched = defaultdict(list)
        for e in events:
            if e["pid"] != rank or e["ph"] == "M":
                continue
            if e["cat"] == "buckets":
                ready[e["args"]["bucket"]].append(e["ts"])
            elif e["cat"] == "allreduce":
                launched[e["args"]["bucket"]].append(e["ts"])
        assert sorted(ready) == sorted(launched) == list(range(buckets))
        for k in range(buckets):
            assert len(ready[k]) == len(launched[k]) == 3, "one ready event and one allreduce per step"
            for t_ready, t_launch in zip(sorted(ready[k]), sorted(launched[k])):
                assert t_launch >= t_ready, f"rank {rank}: bucket {k} reduced before it was ready"
    assert png_path is not None and open(png_path, "rb").read(8) == b"\x89PNG\r\n\x1a\n"
