"""Polite waiting: how every wait loop of minigrad_dist polls without taking a core.

A blocking MPI call busy-waits: it holds a core until the message comes
(MPI_NOTES.md, "Blocking MPI calls spin"). Where ranks share the cores, a
spinning rank slows down the very rank it waits for, and a spinning RPC
listener slows down its own process's compute. So our waits poll a
nonblocking test instead, and between two tests they give the CPU away,
in two or three phases:

1. **yield** (``os.sched_yield``) for a short window after the wait starts
   (or after the last progress): the event usually comes within it, and a
   yield hands the CPU to whoever wants it and returns at once otherwise,
   while a thread woken from a sleep first waits for its timer and then to
   be scheduled again;
2. **sleep**, each sleep twice as long as the previous one up to a cap, so
   a long wait wakes rarely and leaves the CPU to the ranks that still work.
   ``yields_per_sleep`` mixes yields in between the sleeps, for waits where
   the other side needs us to keep polling (a large message crosses shared
   memory in chunks, each needing both ranks to poll);
3. **idle** (only with ``patience``, and only where the node's ranks
   outnumber its cores: ``set_oversubscribed``): once a wait has lasted
   ``patience`` seconds, the peer is computing, not moving chunks: pauses
   only sleep, doubling up to ``idle_sleep``. Where every rank has a core
   a waiting rank's polls take nobody's CPU, and MPI's nonblocking
   collectives progress only inside them: with 1 ms sleeps, Open MPI's
   96 MB ``Iallreduce`` between 2 ranks took 1.2 s instead of 0.07 s.
   Where ranks outnumber the cores, mixed yields make a waiting rank nearly
   as busy as a spinning one (16 ranks on 2 cores: 15 ranks waiting in a
   barrier or in DDP's backward for one that computed took 1.0-1.1 of the
   2 cores with ``yields_per_sleep=63``, 0.26-0.32 with this phase after 20 ms).

The pieces:

* ``Backoff``: that schedule, an immutable policy; each user builds its
  own once, as a module constant, with the reason for its numbers;
* ``Pauses``: one wait's place in its schedule, for loops that do more
  than test one thing (the RPC agent's pollers);
* ``wait_until(done, timeout, backoff)``: the whole loop, for the rest;
* ``fine_timer_slack()``: makes a thread's short sleeps last what they ask;
* ``spin_requested()``: reads the one setting that turns polite waits off;
* ``set_oversubscribed(flag)`` / ``oversubscribed()``: whether this
  process's node holds more ranks than cores, recorded once at init (the
  one piece of process-wide state here: where the process runs).

Example::

    request = comm.Ibarrier()
    if not wait_until(request.Test, timeout=30.0):
        raise TimeoutError("barrier: some rank did not arrive within 30 s")
"""

from __future__ import annotations

import os
import threading
import time

__all__ = [
    "Backoff",
    "DEFAULT_BACKOFF",
    "LONG_SLEEP",
    "Pauses",
    "SHORT_SLEEP",
    "SPIN_VARIABLE",
    "YIELD_WINDOW",
    "fine_timer_slack",
    "spin_requested",
    "oversubscribed",
    "set_oversubscribed",
    "wait_until",
]

YIELD_WINDOW = 1e-3  # seconds of yielding before the first sleep (a reply or a peer usually comes within it)
SHORT_SLEEP = 2e-5  # the first sleep, in seconds
LONG_SLEEP = 5e-4  # the longest sleep, in seconds: an idle wait wakes 2000 times a second

SPIN_VARIABLE = "MINIGRAD_DIST_WAIT"

# Where this process runs, recorded once at init by set_oversubscribed.
_placement = {"oversubscribed": False}


class Backoff:
    """A schedule of pauses between the polls of a wait: yield for a window, then sleep, doubling up to a cap.

    With ``patience``, a wait that lasts longer enters an idle phase of
    sleeps only (steps 1-3 of the module docstring).

    A ``Backoff`` is an immutable policy, built once (a module constant of
    its user) and shared by any number of waits; ``start()`` gives one wait
    its own ``Pauses``.

    Args:
        yield_window: seconds, counted from the start of the wait (or its
            last ``restart``), during which a pause only yields the CPU
            (0: sleep at once).
        first_sleep: seconds of the first sleep after the window.
        longest_sleep: the cap of the doubling sleeps (>= ``first_sleep``).
        yields_per_sleep: after the window, pauses that yield between two
            sleeps (0: every pause sleeps).
        patience: seconds, counted like ``yield_window`` (>= it), after which
            a wait that is still going enters the idle phase: no more yields,
            only sleeps doubling from ``first_sleep`` up to ``idle_sleep``
            (None: no idle phase).
        idle_sleep: the cap of the idle phase's sleeps (>= ``first_sleep``;
            None: ``longest_sleep``).

    Raises:
        ValueError: a negative or NaN duration, ``longest_sleep`` or
            ``idle_sleep`` shorter than ``first_sleep``, ``patience`` shorter
            than ``yield_window``, or a negative ``yields_per_sleep``.
        TypeError: ``yields_per_sleep`` is not an int.
    """

    __slots__ = ("yield_window", "first_sleep", "longest_sleep", "yields_per_sleep", "patience", "idle_sleep")

    def __init__(
        self,
        yield_window: float = YIELD_WINDOW,
        first_sleep: float = SHORT_SLEEP,
        longest_sleep: float = LONG_SLEEP,
        yields_per_sleep: int = 0,
        patience: float | None = None,
        idle_sleep: float | None = None,
    ):
        idle_sleep = longest_sleep if idle_sleep is None else idle_sleep
        durations = {
            "yield_window": yield_window,
            "first_sleep": first_sleep,
            "longest_sleep": longest_sleep,
            "idle_sleep": idle_sleep,
        }
        if patience is not None:
            durations["patience"] = patience
        negative = [f"{name}={seconds!r}" for name, seconds in durations.items() if not seconds >= 0]
        if negative:
            raise ValueError(f"Backoff: durations must be >= 0 seconds, got {', '.join(negative)}")
        for name, cap in (("longest_sleep", longest_sleep), ("idle_sleep", idle_sleep)):
            if cap < first_sleep:
                raise ValueError(f"Backoff: {name} ({cap}) must be >= first_sleep ({first_sleep})")
        if patience is not None and patience < yield_window:
            raise ValueError(
                f"Backoff: patience ({patience}) must be >= yield_window ({yield_window}): the idle phase "
                "follows the yield window"
            )
        if isinstance(yields_per_sleep, bool) or not isinstance(yields_per_sleep, int):
            raise TypeError(f"Backoff: yields_per_sleep must be an int, got {type(yields_per_sleep).__name__}")
        if yields_per_sleep < 0:
            raise ValueError(f"Backoff: yields_per_sleep must be >= 0, got {yields_per_sleep}")
        self.yield_window, self.first_sleep, self.longest_sleep = yield_window, first_sleep, longest_sleep
        self.yields_per_sleep = yields_per_sleep
        self.patience, self.idle_sleep = patience, idle_sleep

    def start(self, since: float | None = None) -> Pauses:
        """The pauses of one wait whose yield window starts at ``since`` (a ``time.monotonic()`` value; default now)."""
        return Pauses(self, since)

    def __repr__(self):
        return (
            f"Backoff(yield_window={self.yield_window}, first_sleep={self.first_sleep}, "
            f"longest_sleep={self.longest_sleep}, yields_per_sleep={self.yields_per_sleep}, "
            f"patience={self.patience}, idle_sleep={self.idle_sleep})"
        )


class Pauses:
    """Where one wait is in its ``Backoff``: call ``pause()`` after each poll that found nothing.

    Belongs to one loop of one thread (it is not thread-safe). Made by ``Backoff.start``.
    """

    __slots__ = ("_backoff", "_yield_until", "_idle_from", "_sleep", "_idle_sleep", "_polls")

    def __init__(self, backoff: Backoff, since: float | None = None):
        self._backoff = backoff
        self.restart(since)

    def restart(self, since: float | None = None) -> None:
        """Progress was made: the window, the sleeps and the patience start again from ``since`` (default now)."""
        start = time.monotonic() if since is None else since
        backoff = self._backoff
        self._yield_until = start + backoff.yield_window
        idle = backoff.patience is not None and _placement["oversubscribed"]
        self._idle_from = start + backoff.patience if idle else None
        self._sleep = self._idle_sleep = backoff.first_sleep
        self._polls = 0

    def pause(self) -> None:
        """Give the CPU away once: a yield inside the window, the next idle sleep once patience ran out, else
        the next sleep (or a mixed-in yield)."""
        now = time.monotonic()
        if now < self._yield_until:
            os.sched_yield()
            return
        backoff = self._backoff
        if self._idle_from is not None and now >= self._idle_from:
            time.sleep(self._idle_sleep)
            self._idle_sleep = min(self._idle_sleep * 2, backoff.idle_sleep)
            return
        if backoff.yields_per_sleep:
            self._polls += 1
            if self._polls % (backoff.yields_per_sleep + 1):
                os.sched_yield()
                return
        time.sleep(self._sleep)
        self._sleep = min(self._sleep * 2, backoff.longest_sleep)


DEFAULT_BACKOFF = Backoff()


def wait_until(done, timeout: float | None = None, backoff: Backoff = DEFAULT_BACKOFF) -> bool:
    """Call ``done()`` until it returns True, pausing politely in between; False if ``timeout`` passed first.

    Args:
        done: a function of no arguments, e.g. an MPI request's ``Test``;
            it is called at least once (a wait that needs no pause costs
            one call), and last right before a True return.
        timeout: seconds to wait at most (None: forever).
        backoff: the schedule of pauses (default ``DEFAULT_BACKOFF``); its
            yield window starts when the first test finds ``done()`` False.
    """
    if done():
        return True
    pauses = backoff.start()
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        if deadline is not None and time.monotonic() >= deadline:
            return False
        pauses.pause()
        if done():
            return True


class _TimerSlack(threading.local):
    done = False


_timer_slack = _TimerSlack()
_PR_SET_TIMERSLACK = 29


def fine_timer_slack() -> None:
    """Let the calling thread's short sleeps last what they ask (Linux rounds them up by 50 us by default).

    Sets the thread's timer slack to 1 us, once per thread; does nothing
    where ``prctl`` is not available (not Linux).
    """
    if _timer_slack.done:
        return
    _timer_slack.done = True
    try:
        import ctypes  # noqa: PLC0415  (Linux only, best effort)

        ctypes.CDLL(None).prctl(_PR_SET_TIMERSLACK, 1000, 0, 0, 0)  # in nanoseconds
    except (OSError, AttributeError):
        pass


def set_oversubscribed(flag: bool) -> None:
    """Record whether this process's node holds more ranks than cores (``Topology.oversubscribed``).

    ``init_process_group`` and ``init_rpc`` call it once they know where the
    ranks sit; until then nothing counts as oversubscribed. It decides whether
    the ``patience`` of every ``Backoff`` applies (step 3).
    """
    _placement["oversubscribed"] = bool(flag)


def oversubscribed() -> bool:
    """Whether this process shares its node's cores with more ranks than there are (see ``set_oversubscribed``)."""
    return _placement["oversubscribed"]


def spin_requested(environ=None) -> bool:
    """True when ``MINIGRAD_DIST_WAIT=spin``: untimed waits may then block inside MPI.

    Spinning is faster when every rank has a core of its own and nothing
    else to run. Read by whoever owns the waits when it is built (a
    ``ProcessGroup``), never at import.

    Args:
        environ: the mapping to read (default ``os.environ``).
    """
    environ = os.environ if environ is None else environ
    return environ.get(SPIN_VARIABLE, "yield").strip().lower() == "spin"
