"""The schedules as data: every rank's action list checked and simulated, no MPI (fast, many examples)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from minigrad_dist.pipelining import actions as A

SETTINGS = settings(max_examples=150, deadline=None, derandomize=True)


@st.composite
def schedules(draw):
    kind = draw(st.sampled_from(["gpipe", "1f1b", "interleaved"]))
    pp = draw(st.integers(1, 8))
    v = draw(st.integers(1, 4)) if kind == "interleaved" else 1
    m = draw(st.integers(1, 5)) * pp if kind == "interleaved" else draw(st.integers(1, 16))
    return kind, pp, v, m


def full_orders(kind, pp, v, m, forward_only=False):
    orders = A.pipeline_order(kind, pp, m, v, forward_only=forward_only)
    return {rank: A.with_communication(order, pp * v) for rank, order in orders.items()}


@SETTINGS
@given(case=schedules(), forward_only=st.booleans())
def test_every_schedule_keeps_the_rules_and_runs_to_the_end(case, forward_only):
    """Each microbatch's F and B once per stage on its rank, F before B, sends matched by receives, no deadlock."""
    kind, pp, v, m = case
    A.validate_order(full_orders(kind, pp, v, m, forward_only), pp * v, m, forward_only=forward_only)


@SETTINGS
@given(case=schedules())
def test_activation_peaks_gpipe_holds_m_1f1b_at_most_pp(case):
    kind, pp, v, m = case
    peak = A.validate_order(full_orders(kind, pp, v, m), pp * v, m).peak_live
    for stage in range(pp * v):
        if kind == "gpipe":
            assert peak[stage] == m
        elif kind == "1f1b":
            assert peak[stage] == min(pp - stage, m) <= pp
        else:
            assert peak[stage] <= m


@SETTINGS
@given(case=schedules(), backward_cost=st.sampled_from([1.0, 2.0, 3.0]))
def test_simulated_bubble_is_p_minus_1_over_m_plus_p_minus_1(case, backward_cost):
    """GPipe and 1F1B idle exactly (p-1)/(m+p-1) of the step on every rank; interleaving idles no more than that."""
    kind, pp, v, m = case
    simulation = A.simulate(full_orders(kind, pp, v, m), pp * v, 1.0, backward_cost)
    theory = (pp - 1) / (m + pp - 1)
    for rank in range(pp):
        if kind == "interleaved":
            assert simulation.idle_fraction(rank) <= theory + 1e-12
        else:
            assert simulation.idle_fraction(rank) == pytest.approx(theory, abs=1e-12)


def test_printed_lists_read_as_the_papers_schedules():
    orders = A.pipeline_order("1f1b", 4, 4)
    assert [str(a) for a in orders[3]] == ["3F0", "3B0", "3F1", "3B1", "3F2", "3B2", "3F3", "3B3"]
    assert [str(a) for a in orders[0]] == ["0F0", "0F1", "0F2", "0F3", "0B0", "0B1", "0B2", "0B3"]
    assert [str(a) for a in orders[1]] == ["1F0", "1F1", "1F2", "1B0", "1F3", "1B1", "1B2", "1B3"]
    full = A.with_communication(orders[1], 4)
    assert [str(a) for a in full[:4]] == ["1RECV_F0", "1F0", "1SEND_F0", "1RECV_F1"]
    assert [str(a) for a in A.pipeline_order("gpipe", 2, 2)[1]] == ["1F0", "1F1", "1B0", "1B1"]


def test_validation_catches_broken_schedules():
    good = full_orders("1f1b", 2, 1, 3)
    backward_first = {0: good[0], 1: [a for a in good[1] if a.kind != A.FORWARD] + [A.Action(1, A.FORWARD, 0)]}
    with pytest.raises(A.ScheduleError):
        A.validate_order(backward_first, 2, 3)
    missing_receive = {0: good[0], 1: [a for a in good[1] if a != A.Action(1, A.RECV_F, 2)]}
    with pytest.raises(A.ScheduleError, match="sent by ranks"):
        A.validate_order(missing_receive, 2, 3)
    # Rank 0 runs its backwards before its forwards: it waits for gradients that need its own activations.
    reversed_rank0 = {0: sorted(good[0], key=lambda a: a.kind != A.RECV_B), 1: good[1]}
    with pytest.raises(A.ScheduleError, match="deadlock"):
        A.simulate(reversed_rank0, 2)
    wrong_rank = {0: good[1], 1: good[0]}
    with pytest.raises(A.ScheduleError, match="lives on rank"):
        A.validate_order(wrong_rank, 2, 3)


def test_interleaved_needs_a_multiple_of_pp_microbatches():
    with pytest.raises(ValueError, match="multiple of the number of ranks"):
        A.pipeline_order("interleaved", 4, 6, 2)


def test_the_pictures_in_the_package_docstring_are_the_simulated_schedules():
    import minigrad_dist.pipelining as pipelining

    for kind in ("gpipe", "1f1b"):
        drawing = A.draw(A.simulate(full_orders(kind, 4, 1, 4), 4))
        assert "\n".join("    " + line for line in drawing.splitlines()) in pipelining.__doc__, drawing
    interleaved = A.pipeline_order("interleaved", 2, 4, 2)
    for rank, order in interleaved.items():
        assert f"rank {rank}  " + " ".join(map(str, order)) in pipelining.__doc__
