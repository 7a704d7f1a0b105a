"""One Future for the whole library: ``minigrad_dist.futures`` re-exports ``minigrad.futures``.

(The torch-compared semantics of ``mg.futures`` are in tests/minigrad/test_names.py.)
"""

from __future__ import annotations

import threading

import pytest

import minigrad as mg
import minigrad_dist.futures as dist_futures


def test_dist_futures_reexport_the_one_future():
    assert dist_futures.Future is mg.futures.Future
    assert dist_futures.wait_all is mg.futures.wait_all
    assert dist_futures.collect_all is mg.futures.collect_all
    done = dist_futures.completed_future(7)
    assert isinstance(done, mg.futures.Future) and done.done() and done.wait() == 7


def test_poll_and_block_sources_positional_or_keyword():
    calls = []
    fut = mg.futures.Future(lambda: calls.append("poll"), lambda timeout: fut.set_result(timeout))
    assert not fut.done() and calls == ["poll"]
    assert fut.wait(0.5) == 0.5


class _DrivenFuture(mg.futures.Future):
    """A Future whose own ``wait`` produces the value (as an RPC reply's polls MPI meanwhile)."""

    def wait(self, timeout=None):
        if not self._done:
            self.set_result("driven")
        return super().wait(timeout)


def test_wait_all_uses_each_futures_own_wait():
    plain = mg.futures.Future()
    threading.Timer(0.01, lambda: plain.set_result("plain")).start()
    assert mg.futures.wait_all([_DrivenFuture(), plain]) == ["driven", "plain"]


def test_wait_all_waits_for_every_future_then_raises_the_first_error():
    first, second, late = mg.futures.Future(), mg.futures.Future(), mg.futures.Future()
    first.set_exception(KeyError("first"))
    second.set_exception(ValueError("second"))
    threading.Timer(0.01, lambda: late.set_result(3)).start()
    with pytest.raises(KeyError, match="first"):
        mg.futures.wait_all([first, second, late])
    assert late.done()
