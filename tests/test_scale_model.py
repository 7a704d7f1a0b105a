"""The scale model's arithmetic (benchmarks/cost_model.py) on made-up numbers and against a simulated ring.

The ring and two-level formulas are checked against an explicit step-by-step
simulation of the algorithms on NumPy arrays (which must also produce the
right sums), the overlap rule against timelines worked out by hand, and the
fit against data made from known constants.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

from cost_model import (  # noqa: E402  (benchmarks/ is not a package)
    Level,
    bucket_sizes,
    fit_level,
    hierarchical_allreduce_time,
    oversubscription,
    ring_allreduce_time,
    scaling_efficiency,
    step_time,
)

INTRA = Level("intra", alpha=1e-6, beta=1e-10)
INTER = Level("inter", alpha=1e-5, beta=1e-9)


# -- a simulated ring: every step, every rank sends one chunk to the next rank ---------------------------


def simulate_ring_allreduce(buffers, level):
    """Ring allreduce of equal-length float64 buffers (one per rank); returns (results, modelled seconds).

    The time of a step is ``alpha + (largest message of the step) * beta``;
    reduce-scatter then allgather, ``n - 1`` steps each.
    """
    n = len(buffers)
    chunks = [np.array_split(b.copy(), n) for b in buffers]
    seconds = 0.0
    for phase in ("reduce-scatter", "allgather"):
        for step in range(n - 1):
            sends = []
            for rank in range(n):
                index = (rank - step - (0 if phase == "reduce-scatter" else -1)) % n
                sends.append((rank, index, chunks[rank][index].copy()))
            for rank, index, data in sends:
                receiver = (rank + 1) % n
                if phase == "reduce-scatter":
                    chunks[receiver][index] = chunks[receiver][index] + data
                else:
                    chunks[receiver][index] = data
            seconds += level.alpha + max(data.nbytes for _, _, data in sends) * level.beta
    return [np.concatenate(c) for c in chunks], seconds


def simulate_two_level(buffers, local, nodes, intra, inter):
    """Reduce-scatter in each node, ring allreduce of each slice across nodes, allgather in each node."""
    ranks_of = [[node * local + r for r in range(local)] for node in range(nodes)]
    slices = {}
    seconds = 0.0
    # Steps 1 and 3 inside a node cost what a ring allreduce over the node's ranks costs.
    node_results = []
    for members in ranks_of:
        results, node_seconds = simulate_ring_allreduce([buffers[r] for r in members], intra)
        node_results.append(results[0])
    seconds += node_seconds
    # Step 2: local rank l of every node owns slice l of its node's sum and allreduces it across the nodes.
    for slot in range(local):
        pieces = [np.array_split(node_sum, local)[slot] for node_sum in node_results]
        summed, across_seconds = simulate_ring_allreduce(pieces, inter)
        slices[slot] = summed[0]
    seconds += across_seconds  # the slices cross on their own ranks' links at the same time
    return np.concatenate([slices[s] for s in range(local)]), seconds


# -- step 2: one level ---------------------------------------------------------------------------------


def test_ring_time_by_hand():
    # 4 ranks, 1 MB: 6 steps of 10 us and 6/4 MB at 1 GB/s
    level = Level("x", alpha=1e-5, beta=1e-9, base=2e-6)
    assert ring_allreduce_time(1e6, 4, level) == pytest.approx(2e-6 + 6e-5 + 1.5e-3)
    assert ring_allreduce_time(1e6, 4, level, scale=3) == pytest.approx(3 * (2e-6 + 6e-5 + 1.5e-3))
    with pytest.raises(ValueError, match="scale must be > 0"):
        ring_allreduce_time(1e6, 4, level, scale=0.0)
    assert ring_allreduce_time(1e6, 1, level) == 0.0


@settings(max_examples=12, derandomize=True, deadline=None)
@given(ranks=st.integers(2, 9), chunk=st.integers(1, 64))
def test_ring_formula_matches_simulated_ring(ranks, chunk):
    rng = np.random.default_rng(ranks * 100 + chunk)
    buffers = [rng.standard_normal(ranks * chunk) for _ in range(ranks)]
    results, seconds = simulate_ring_allreduce(buffers, INTER)
    for result in results:
        np.testing.assert_allclose(result, np.sum(buffers, axis=0), rtol=1e-12)
    assert ring_allreduce_time(buffers[0].nbytes, ranks, INTER) == pytest.approx(seconds, rel=1e-12)


# -- step 3: two levels --------------------------------------------------------------------------------


def test_two_level_time_by_hand():
    # inside: 6 steps of 1 us + 6/4 * 8 MB at 10 GB/s; across: 2 steps of 10 us + 2/2 * 2 MB at 1 GB/s
    expected = (6e-6 + 1.2e-3) + (2e-5 + 2e-3)
    assert hierarchical_allreduce_time(8e6, 4, 2, INTRA, INTER) == pytest.approx(expected)


def test_two_level_reduces_to_one_level():
    assert hierarchical_allreduce_time(5e6, 1, 6, INTRA, INTER) == pytest.approx(ring_allreduce_time(5e6, 6, INTER))
    assert hierarchical_allreduce_time(5e6, 8, 1, INTRA, INTER) == pytest.approx(ring_allreduce_time(5e6, 8, INTRA))


@pytest.mark.parametrize(("local", "nodes"), [(2, 2), (4, 2), (2, 3), (3, 4)])
def test_two_level_formula_matches_simulation(local, nodes):
    rng = np.random.default_rng(local * 10 + nodes)
    buffers = [rng.standard_normal(local * nodes * 12) for _ in range(local * nodes)]
    result, seconds = simulate_two_level(buffers, local, nodes, INTRA, INTER)
    np.testing.assert_allclose(result, np.sum(buffers, axis=0), rtol=1e-12)
    predicted = hierarchical_allreduce_time(buffers[0].nbytes, local, nodes, INTRA, INTER)
    assert predicted == pytest.approx(seconds, rel=1e-12)


# -- step 4: overlap -------------------------------------------------------------------------------------


def test_overlap_rule_by_hand():
    # forward 1, backward 2, optimizer 0.5; buckets ready at 1 + 2 * (1/4, 2/4, 4/4) = 1.5, 2, 3
    sizes = [1, 1, 2]
    partly_hidden = step_time(1.0, 2.0, 0.5, sizes, [0.5, 0.5, 0.5], overlap=True)
    assert partly_hidden["ends"] == pytest.approx([2.0, 2.5, 3.5])
    assert partly_hidden["step"] == pytest.approx(4.0)  # the last bucket's tail (0.5) shows
    hidden = step_time(1.0, 2.0, 0.5, sizes, [0.1, 0.1, 0.1], overlap=True)
    assert hidden["step"] == pytest.approx(3.6)
    bound = step_time(1.0, 2.0, 0.5, sizes, [2.0, 2.0, 2.0], overlap=True)
    assert bound["ends"] == pytest.approx([3.5, 5.5, 7.5])  # each waits for the one before
    assert bound["exposed_comm"] == pytest.approx(4.5)


def test_without_overlap_communication_adds_up():
    serial = step_time(1.0, 2.0, 0.5, [1, 1, 2], [0.5, 0.5, 0.5], overlap=False)
    assert serial["step"] == pytest.approx(5.0)
    assert serial["compute"] == pytest.approx(3.5)


def test_step_time_rejects_mismatched_lists():
    with pytest.raises(ValueError, match="3 bucket sizes but 2"):
        step_time(1.0, 1.0, 0.0, [1, 2, 3], [0.1, 0.2], overlap=True)


def test_bucket_sizes_first_bucket_then_caps():
    mib = 2**20
    assert bucket_sizes(10 * mib, 4 * mib) == [mib, 4 * mib, 4 * mib, mib]
    assert bucket_sizes(0.5 * mib, 4 * mib) == [0.5 * mib]
    with pytest.raises(ValueError, match="must be > 0"):
        bucket_sizes(0, 4 * mib)


# -- steps 1, 5, 6: slowdown, fit, efficiency ---------------------------------------------------------


def test_oversubscription_rule():
    assert oversubscription(1, 2) == 1.0
    assert oversubscription(2, 2) == 1.0
    assert oversubscription(16, 2) == 8.0
    with pytest.raises(ValueError, match="ranks must be an integer >= 1"):
        oversubscription(0, 2)


def test_fit_recovers_known_constants():
    truth = Level("truth", alpha=3e-5, beta=2e-10)
    samples = [
        (nbytes, n, oversubscription(n, 2), ring_allreduce_time(nbytes, n, truth, oversubscription(n, 2)))
        for nbytes in (2**16, 2**20, 2**24)
        for n in (2, 4, 8)
    ]
    level, errors = fit_level("fitted", samples)
    assert level.alpha == pytest.approx(3e-5, rel=1e-9)
    assert level.beta == pytest.approx(2e-10, rel=1e-9)
    assert max(abs(e) for e in errors) < 1e-9


def test_fit_is_not_pulled_by_one_slowed_down_point():
    truth = Level("truth", alpha=3e-5, beta=2e-10)
    samples = [
        (nbytes, n, 1.0, ring_allreduce_time(nbytes, n, truth)) for nbytes in (2**16, 2**20, 2**24) for n in (2, 4)
    ]
    nbytes, n, scale, seconds = samples[2]
    samples[2] = (nbytes, n, scale, 10 * seconds)  # another job took the cores during this one
    robust, errors = fit_level("robust", samples)
    assert robust.alpha == pytest.approx(3e-5, rel=1e-3)
    assert robust.beta == pytest.approx(2e-10, rel=1e-3)
    assert errors[2] == pytest.approx(-0.9, rel=1e-3)
    assert max(abs(e) for i, e in enumerate(errors) if i != 2) < 1e-4  # the clean points fit exactly
    _, plain_errors = fit_level("least squares", samples, iterations=1)
    assert max(abs(e) for i, e in enumerate(plain_errors) if i != 2) > 0.01  # least squares bends to the outlier


def test_fit_reports_relative_errors_and_stays_nonnegative():
    # pure bandwidth data with one point 10% slow: alpha must not go negative to chase it
    samples = [(nbytes, 2, 1.0, nbytes * 1e-9) for nbytes in (1e6, 2e6, 4e6)] + [(8e6, 2, 1.0, 8e6 * 1.1e-9)]
    level, errors = fit_level("bw", samples)
    assert level.alpha >= 0 and level.beta > 0
    assert len(errors) == 4 and max(abs(e) for e in errors) < 0.1


def test_fit_rejects_data_that_cannot_separate_latency_from_bandwidth():
    with pytest.raises(ValueError, match="at least 2 samples"):
        fit_level("x", [(1e6, 2, 1.0, 1e-3)])
    with pytest.raises(ValueError, match="two different sizes"):
        fit_level("x", [(1e6, 2, 1.0, 1e-3), (1e6, 2, 1.0, 1.1e-3)])
    with pytest.raises(ValueError, match="must be > 0"):
        fit_level("x", [(1e6, 2, 1.0, 0.0), (2e6, 2, 1.0, 1e-3)])


def test_scaling_efficiency_and_level_checks():
    assert scaling_efficiency(1.0, 1.25) == pytest.approx(0.8)
    with pytest.raises(ValueError, match="compute <= step"):
        scaling_efficiency(2.0, 1.0)
    with pytest.raises(ValueError, match="alpha must be a finite number >= 0"):
        Level("bad", alpha=-1.0, beta=1e-9)
    assert Level.from_bandwidth("ib", 1e-6, 25e9).beta == pytest.approx(4e-11)
