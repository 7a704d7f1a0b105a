"""RPC and RRefs on real MPI ranks (through the test pool)."""

from __future__ import annotations

import pytest

from tests.dist.conftest import get_pool
from tests.dist.rpc import programs_rpc as programs

pytestmark = pytest.mark.timeout(300)


@pytest.mark.parametrize("world_size", [2, 3])
def test_rpc_basics(world_size):
    out = get_pool(world_size).run(programs.rpc_basics, {"n": 1 << 17})[0]
    assert out["sync"] == [2.0, 2.0]
    assert out["kwargs"] == 9.0
    assert out["async"] == [6.0, 6.0] and out["then"] == 12.0 and out["done"]
    assert "missing key" in out["remote_error"] and "Remote traceback" in out["remote_error"]
    assert "fail" in out["remote_error"], "the remote traceback names the remote function"
    assert "did not complete within 0.2 s" in out["timeout"]
    assert out["big_ok"] and out["echo_ok"]
    assert out["worker_info"] == (f"worker{world_size - 1}", world_size - 1)
    assert "unknown worker 'nobody'" in out["bad_input"][0]
    assert "callable" in out["bad_input"][1]


def test_graceful_shutdown_finishes_in_flight_calls():
    assert get_pool(3).run(programs.graceful_shutdown_loses_nothing, {"n": 200})[0] == list(range(200))


@pytest.mark.parametrize("world_size", [2, 3])
def test_rref_basics(world_size):
    out = get_pool(world_size).run(programs.rref_basics, {})[0]
    assert out["to_here"] == [2.0, 2.0]
    assert out["owner"] == f"worker{world_size - 1}" and out["is_owner"] is False
    assert "only be called on the owner" in out["local_value_error"]
    assert out["proxy_async"] == 7 and out["proxy_remote"] == 8
    assert "late" in out["remote_error"]
    assert out["local"] == (True, [7.0, 7.0])
    assert out["forwarded"] == [4.0, 4.0]


def test_rref_create_and_drop_keeps_owner_memory_flat():
    before, after = get_pool(2).run(programs.rref_memory_flat, {"n": 2000})[0]
    assert after == before
