"""minigrad_dist.waiting: the schedule of polite waits (no MPI needed)."""

from __future__ import annotations

import time

import pytest

from minigrad_dist import waiting


class Recorder:
    """Replaces sched_yield and sleep, recording what a wait did instead of doing it."""

    def __init__(self, monkeypatch):
        self.events = []
        monkeypatch.setattr(waiting.os, "sched_yield", lambda: self.events.append("yield"))
        monkeypatch.setattr(waiting.time, "sleep", lambda seconds: self.events.append(seconds))


def test_pauses_yield_inside_the_window_then_sleep_doubling_up_to_the_cap(monkeypatch):
    recorder = Recorder(monkeypatch)
    backoff = waiting.Backoff(yield_window=60.0, first_sleep=1e-5, longest_sleep=3e-5)
    pauses = backoff.start()
    pauses.pause()
    assert recorder.events == ["yield"]
    pauses.restart(since=time.monotonic() - 120.0)  # the window is over
    for _ in range(4):
        pauses.pause()
    assert recorder.events[1:] == [1e-5, 2e-5, 3e-5, 3e-5]


def test_restart_starts_the_window_and_the_short_sleeps_again(monkeypatch):
    recorder = Recorder(monkeypatch)
    pauses = waiting.Backoff(yield_window=0.0, first_sleep=1e-5, longest_sleep=1e-3).start()
    pauses.pause()
    pauses.pause()
    pauses.restart()
    pauses.pause()
    assert recorder.events == [1e-5, 2e-5, 1e-5]


def test_yields_per_sleep_mixes_yields_between_the_sleeps(monkeypatch):
    recorder = Recorder(monkeypatch)
    pauses = waiting.Backoff(yield_window=0.0, first_sleep=5e-5, longest_sleep=5e-5, yields_per_sleep=3).start()
    for _ in range(8):
        pauses.pause()
    assert recorder.events == ["yield", "yield", "yield", 5e-5] * 2


@pytest.fixture
def oversubscribed(monkeypatch):
    """This process counts as sharing its node's cores with more ranks than there are (patience applies)."""
    monkeypatch.setitem(waiting._placement, "oversubscribed", True)


def test_after_patience_a_wait_only_sleeps_doubling_up_to_the_idle_cap(monkeypatch, oversubscribed):
    recorder = Recorder(monkeypatch)
    backoff = waiting.Backoff(
        yield_window=0.0, first_sleep=1e-5, longest_sleep=1e-5, yields_per_sleep=3, patience=60.0, idle_sleep=4e-5
    )
    pauses = backoff.start()
    for _ in range(4):
        pauses.pause()
    assert recorder.events == ["yield", "yield", "yield", 1e-5], "before its patience ran out the wait mixes yields"
    pauses.restart(since=time.monotonic() - 120.0)  # the patience ran out
    for _ in range(5):
        pauses.pause()
    assert recorder.events[4:] == [1e-5, 2e-5, 4e-5, 4e-5, 4e-5], "idle: no yield, sleeps double up to idle_sleep"


def test_restart_leaves_the_idle_phase(monkeypatch, oversubscribed):
    recorder = Recorder(monkeypatch)
    backoff = waiting.Backoff(yield_window=1e-3, first_sleep=1e-5, longest_sleep=1e-5, patience=60.0, idle_sleep=1e-3)
    pauses = backoff.start(since=time.monotonic() - 120.0)
    pauses.pause()
    pauses.pause()
    pauses.restart()
    pauses.pause()
    assert recorder.events == [1e-5, 2e-5, "yield"]


def test_the_window_comes_before_the_idle_phase(monkeypatch, oversubscribed):
    recorder = Recorder(monkeypatch)
    backoff = waiting.Backoff(yield_window=60.0, first_sleep=1e-5, patience=60.0)
    pauses = backoff.start(since=time.monotonic() - 30.0)
    pauses.pause()
    assert recorder.events == ["yield"]
    assert backoff.idle_sleep == backoff.longest_sleep, "idle_sleep defaults to longest_sleep"


def test_wait_until_returns_true_once_done_and_tests_at_least_once(monkeypatch):
    recorder = Recorder(monkeypatch)
    polls = []
    assert waiting.wait_until(lambda: polls.append(1) or True)
    assert polls == [1] and recorder.events == [], "a wait that needs no pause costs one test"
    countdown = iter([False, False, True])
    assert waiting.wait_until(lambda: next(countdown), timeout=60.0, backoff=waiting.Backoff(yield_window=60.0))
    assert recorder.events == ["yield", "yield"]


def test_wait_until_gives_up_after_the_timeout():
    start = time.monotonic()
    assert not waiting.wait_until(lambda: False, timeout=0.05)
    assert 0.05 <= time.monotonic() - start < 5.0
    assert not waiting.wait_until(lambda: False, timeout=0.0)


@pytest.mark.parametrize(
    ("kwargs", "error", "words"),
    [
        ({"yield_window": -1.0}, ValueError, "yield_window=-1.0"),
        ({"first_sleep": float("nan")}, ValueError, "first_sleep=nan"),
        ({"first_sleep": 1e-3, "longest_sleep": 1e-4}, ValueError, "longest_sleep"),
        ({"yields_per_sleep": 1.5}, TypeError, "yields_per_sleep must be an int"),
        ({"yields_per_sleep": -1}, ValueError, "yields_per_sleep must be >= 0"),
        ({"patience": -1.0, "yield_window": 0.0}, ValueError, "patience=-1.0"),
        ({"patience": 1e-4, "yield_window": 1e-3}, ValueError, "patience .* must be >= yield_window"),
        ({"first_sleep": 1e-3, "longest_sleep": 1e-3, "idle_sleep": 1e-4}, ValueError, "idle_sleep .* first_sleep"),
        ({"idle_sleep": float("nan")}, ValueError, "idle_sleep=nan"),
    ],
)
def test_backoff_refuses_bad_schedules(kwargs, error, words):
    with pytest.raises(error, match=words):
        waiting.Backoff(**kwargs)


def test_spin_requested_reads_the_given_environment():
    assert waiting.spin_requested({"MINIGRAD_DIST_WAIT": "Spin"})
    assert not waiting.spin_requested({"MINIGRAD_DIST_WAIT": "yield"})
    assert not waiting.spin_requested({})


def test_patience_applies_only_where_ranks_outnumber_the_cores(monkeypatch):
    # Where every rank has a core, polls cost nobody and MPI's nonblocking collectives progress only inside
    # them: no idle phase there.
    recorder = Recorder(monkeypatch)
    backoff = waiting.Backoff(yield_window=0.0, first_sleep=1e-5, longest_sleep=1e-5, patience=0.0, idle_sleep=1e-3)
    monkeypatch.setitem(waiting._placement, "oversubscribed", False)
    assert not waiting.oversubscribed()
    pauses = backoff.start()
    pauses.pause()
    pauses.pause()
    waiting.set_oversubscribed(True)
    assert waiting.oversubscribed()
    pauses = backoff.start()
    pauses.pause()
    pauses.pause()
    assert recorder.events == [1e-5, 1e-5, 1e-5, 2e-5]


def test_fine_timer_slack_is_harmless_to_call_twice():
    waiting.fine_timer_slack()
    waiting.fine_timer_slack()
