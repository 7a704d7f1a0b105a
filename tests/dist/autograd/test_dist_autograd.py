"""Distributed autograd vs the same computation run locally, FAST and SMART modes, optimizer."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.dist.autograd import programs_autograd as programs
from tests.dist.conftest import get_pool

pytestmark = pytest.mark.timeout(600)

OPS = sorted(programs.OPS)


def program_strategy(world_size, unused_outputs):
    step = st.tuples(st.sampled_from(OPS), st.lists(st.integers(0, 20), min_size=2, max_size=2),
                     st.integers(0, world_size - 1), st.sampled_from(["rpc", "remote"]))
    return st.fixed_dictionaries({
        "seed": st.integers(0, 2**16),
        "n": st.integers(1, 3),
        "leaves": st.integers(1, 3),
        "steps": st.lists(step, min_size=1, max_size=6),
        "loss_uses": st.lists(st.integers(0, 20), min_size=1, max_size=3) if unused_outputs else st.none(),
    })


def check(result):
    res = result[0]["result"]
    np.testing.assert_allclose(res["loss"][0], res["loss"][1], rtol=1e-12)
    for got, want in zip(res["dist"], res["local"]):
        if want is None:
            assert got is None or not np.any(got)
        else:
            np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    assert all(r["contexts_left"] == 0 for r in result), "contexts must be released on every worker"


@pytest.mark.parametrize("world_size", [2, 3])
def test_fast_mode_matches_local_when_every_rpc_output_is_used(world_size):
    pool = get_pool(world_size)

    @settings(max_examples=10, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
    @given(spec=program_strategy(world_size, unused_outputs=False))
    def run(spec):
        check(pool.run(programs.dist_autograd_vs_local, dict(spec, mode="fast")))

    run()


@pytest.mark.parametrize("world_size", [2, 3])
def test_smart_mode_matches_local_with_unused_rpc_outputs(world_size):
    pool = get_pool(world_size)

    @settings(max_examples=10, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
    @given(spec=program_strategy(world_size, unused_outputs=True))
    def run(spec):
        check(pool.run(programs.dist_autograd_vs_local, dict(spec, mode="smart")))

    run()


def test_fast_mode_detects_the_unused_rpc_case_and_suggests_smart():
    out = get_pool(2).run(programs.fast_mode_unused_rpc, {"mode": "fast"})[0]
    assert "mode='smart'" in out["error"] and "received only part of their gradients" in out["error"]


def test_smart_mode_gives_local_gradients_for_the_unused_rpc_case():
    grads = get_pool(2).run(programs.fast_mode_unused_rpc, {"mode": "smart"})[0]["grads"]
    assert grads["a"] == [[1.0] * 3] * 3 and grads["b"] == [[1.0] * 3] * 3
    assert grads["c"] is None


def test_error_on_a_remote_worker_during_backward_reaches_the_caller():
    out = get_pool(2).run(programs.remote_error_in_backward, {})[0]
    assert "backward exploded on worker1" in out["error"]


def test_contexts_are_released_on_every_worker_after_1000_iterations():
    assert get_pool(3).run(programs.contexts_released_everywhere, {"n": 1000}, timeout=240) == [0, 0, 0]


@pytest.mark.parametrize("world_size", [2, 3])
def test_nested_rpcs_in_one_context(world_size):
    results = get_pool(world_size).run(programs.nested_rpcs, {"seed": 3})
    res = results[0]["result"]
    for got, want in zip(res["dist"], res["local"]):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    assert all(r["contexts_left"] == 0 for r in results)


@pytest.mark.parametrize("world_size", [2, 3])
def test_concurrent_contexts_from_every_worker(world_size):
    results = get_pool(world_size).run(programs.concurrent_contexts, {"n": 40}, timeout=240)
    assert [r["mismatches"] for r in results] == [0] * world_size
    assert all(r["contexts_left"] == 0 and r["owned_left"] == 0 for r in results), results


def test_retain_graph_allows_a_second_distributed_backward():
    out = get_pool(2).run(programs.retain_graph_twice, {})[0]
    np.testing.assert_allclose(out["second"], 2 * out["first"], rtol=1e-12)
    assert "second time" in out["third"]


def test_distributed_optimizer_constructor_raises_what_an_owner_raised():
    results = get_pool(2).run(programs.distributed_optimizer_bad_lr, {})
    assert results[0] is not None and "learning rate" in results[0] and "worker1" in results[0], results[0]


@pytest.mark.parametrize("world_size", [2, 3])
def test_distributed_optimizer_steps_remote_parameters(world_size):
    for delta in get_pool(world_size).run(programs.distributed_optimizer, {"lr": 0.05}):
        np.testing.assert_allclose(delta, np.full((3, 3), 0.05), rtol=1e-6)


def test_optimizer_step_on_the_owner_makes_a_pending_distributed_backward_raise():
    out = get_pool(3).run(programs.stale_parameter_in_distributed_backward, {})[1]
    assert "error" in out, f"the backward used the stepped weight silently: {out}"
    assert "modified by an inplace operation" in out["error"], out["error"]
    assert "is at version 1; expected version 0" in out["error"], out["error"]


def test_concurrent_grad_accumulation_from_rpc_threads_loses_no_update():
    out = get_pool(3).run(programs.concurrent_grad_accumulation, {"trials": 100, "calls": 10})[1]
    assert out == {"lost": 0, "same_object": True}
