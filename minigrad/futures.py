"""``mg.futures``: ``Future``, ``collect_all`` and ``wait_all``, with ``torch.futures``' semantics.

A ``Future`` is a value that arrives later. Whoever produces it calls
``set_result`` (or ``set_exception``) once, from any thread; consumers
``wait()`` for it, or attach callbacks that run when it completes::

    fut = mg.futures.Future()
    doubled = fut.then(lambda f: f.wait() * 2)   # a new Future, chained
    fut.set_result(21)                            # runs the callback here
    doubled.wait()                                # 42

Semantics, as in PyTorch:

* a Future completes once; completing it again raises RuntimeError;
* callbacks (``then``, ``add_done_callback``) run in the thread that
  completes the Future, in the order they were added, or at once in the
  caller's thread when it is complete already;
* an exception raised by a ``then`` callback completes the chained Future
  with a RuntimeError naming it (the original is its ``__cause__``); one
  raised by an ``add_done_callback`` callback is logged and dropped;
* ``collect_all`` completes when every Future has, with the list of the
  Futures, or with the first failed one's exception (in list order);
  ``wait_all`` waits for every Future, then returns their values or raises
  that first exception.

Beyond PyTorch: ``wait(timeout)`` raises TimeoutError after ``timeout``
seconds; ``set_exception`` also takes BaseExceptions that are not
Exceptions (KeyboardInterrupt, SystemExit); and a Future can be driven by a
source that completes it only when asked (``poll``/``block``: an MPI
request, which progresses only inside MPI calls, as minigrad_dist's
collectives and RPC need). This is the one Future class of the library:
``minigrad_dist.futures`` re-exports it for DDP's Work and bucket futures and
for RPC.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Generic, TypeVar

__all__ = ["Future", "collect_all", "wait_all"]

T = TypeVar("T")

_log = logging.getLogger(__name__)


class Future(Generic[T]):
    """A placeholder for a result that is set later; see the module docstring.

    Args:
        poll: optional callable that drives the source without blocking; it
            may complete this Future (``done()`` calls it).
        block: optional callable ``block(timeout)`` that waits for the source
            to complete this Future (``wait()`` calls it).

    ``Future[int]`` works in annotations, as ``torch.futures.Future[int]``.
    """

    def __init__(self, poll=None, block=None):
        self._condition = threading.Condition()
        self._done = False
        self._value = None
        self._exception = None
        self._callbacks = []
        self._poll = poll
        self._block = block

    def __repr__(self) -> str:
        if not self._done:
            state = "pending"
        elif self._exception is not None:
            state = f"failed with {type(self._exception).__name__}"
        else:
            state = f"done, value of type {type(self._value).__name__}"
        return f"<minigrad.futures.Future at {id(self):#x} {state}>"

    def done(self) -> bool:
        """True once a result or an exception is set (a failed Future is done too)."""
        if not self._done and self._poll is not None:
            self._poll()
        return self._done

    def wait(self, timeout: float | None = None) -> T:
        """Block until complete and return the value, or raise the exception it completed with.

        Args:
            timeout: seconds to wait at most (None: no limit).

        Raises:
            the Future's exception, if it failed.
            TimeoutError: not complete within ``timeout`` seconds.
        """
        if not self._done and self._block is not None:
            self._block(timeout)
        with self._condition:
            if not self._done and not self._condition.wait_for(lambda: self._done, timeout):
                raise TimeoutError(f"Future.wait(): not completed within {timeout} s")
        return self.value()

    def value(self) -> T:
        """The value of a completed Future (for callbacks and after ``wait``), or its exception raised.

        Raises:
            the Future's exception, if it failed.
            RuntimeError: the Future is not complete yet (call ``wait()``).
        """
        if not self._done:
            raise RuntimeError("Future.value() called before the Future completed; call wait() first")
        if self._exception is not None:
            raise self._exception
        return self._value

    def set_result(self, result: T) -> None:
        """Complete with ``result``, then run the callbacks (in this thread).

        Raises:
            RuntimeError: the Future is complete already.
        """
        self._complete(result, None)

    def set_exception(self, result: BaseException) -> None:
        """Complete with an exception, which ``wait()`` and ``value()`` raise; then run the callbacks.

        PyTorch takes only ``Exception`` instances; minigrad also takes the
        other ``BaseException`` ones (KeyboardInterrupt, SystemExit), so that
        code catching ``BaseException`` can hand on whatever it caught.

        Raises:
            AssertionError: ``result`` is not an exception instance (as in PyTorch).
            RuntimeError: the Future is complete already.
        """
        if not isinstance(result, BaseException):
            raise AssertionError(
                f"Future.set_exception(): {result!r} is of type {type(result).__name__}, not an exception"
            )
        self._complete(None, result)

    def then(self, callback) -> Future:
        """A new Future completed with ``callback(self)`` once this one completes.

        The callback gets this (completed) Future: ``f.wait()`` or
        ``f.value()`` give its value or raise its exception. If the callback
        raises, the new Future fails with a RuntimeError naming that error.

        Raises:
            TypeError: ``callback`` is not callable.
        """
        _check_callable(callback, "then")
        child = Future(poll=self.done if self._poll is not None else None, block=self._wait_quietly)

        def run(parent):
            try:
                result = callback(parent)
            except BaseException as error:  # noqa: BLE001  (delivered to whoever waits for the child)
                wrapped = RuntimeError(
                    f"the callback given to Future.then() raised {type(error).__name__}: {error}"
                )
                wrapped.__cause__ = error
                child.set_exception(wrapped)
                if not isinstance(error, Exception):
                    raise  # KeyboardInterrupt and the like still stop this thread
            else:
                child.set_result(result)

        self.add_done_callback(run)
        return child

    def add_done_callback(self, callback) -> None:
        """Run ``callback(self)`` when complete (now, in this thread, if complete already).

        An exception raised by the callback is logged and dropped, as in
        PyTorch; use ``then`` to get the callback's outcome.

        Raises:
            TypeError: ``callback`` is not callable.
        """
        _check_callable(callback, "add_done_callback")
        with self._condition:
            if not self._done:
                self._callbacks.append(callback)
                return
        self._run_callback(callback)

    def _run_callback(self, callback) -> None:
        try:
            callback(self)
        except Exception:
            _log.exception("a callback added to a Future with add_done_callback raised; the error is dropped")

    def _wait_quietly(self, timeout) -> None:
        """Wait for completion, ignoring the Future's own exception (its consumer reports it)."""
        try:
            self.wait(timeout)
        except TimeoutError:
            raise
        except BaseException:  # noqa: BLE001
            pass

    def _complete(self, value, exception) -> None:
        with self._condition:
            if self._done:
                raise RuntimeError("this Future is complete already; a Future can be completed only once")
            self._value = value
            self._exception = exception
            self._done = True
            callbacks, self._callbacks = self._callbacks, []
            self._poll = self._block = None  # drop the source (an MPI Work that holds this Future: a cycle)
            self._condition.notify_all()
        for callback in callbacks:
            self._run_callback(callback)


def _check_callable(callback, method: str) -> None:
    if not callable(callback):
        raise TypeError(f"Future.{method}(): callback must be callable, got {type(callback).__name__}")


def _checked_futures(futures, fn: str) -> list:
    futures = list(futures)
    for i, fut in enumerate(futures):
        if not isinstance(fut, Future):
            raise TypeError(f"{fn}(): expected a list of Futures, item {i} is a {type(fut).__name__}")
    return futures


def collect_all(futures) -> Future:
    """A Future that completes once every Future in ``futures`` has.

    Its value is the list of the given Futures (each complete); if any of
    them failed, it fails instead, with the exception of the first failed
    one in list order.

    Raises:
        TypeError: an item is not a Future.
    """
    futures = _checked_futures(futures, "collect_all")
    driven = [fut for fut in futures if fut._poll is not None or fut._block is not None]

    def poll():
        for fut in driven:
            fut.done()

    def block(timeout):
        deadline = None if timeout is None else time.monotonic() + timeout
        for fut in driven:
            fut._wait_quietly(None if deadline is None else max(0.0, deadline - time.monotonic()))

    combined = Future(poll=poll if driven else None, block=block if driven else None)
    remaining = [len(futures)]
    lock = threading.Lock()

    def finish():
        for fut in futures:
            if fut._exception is not None:
                combined.set_exception(fut._exception)
                return
        combined.set_result(futures)

    def count(_):
        with lock:
            remaining[0] -= 1
            last = remaining[0] == 0
        if last:
            finish()

    if not futures:
        combined.set_result([])
    for fut in futures:
        fut.add_done_callback(count)
    return combined


def wait_all(futures) -> list:
    """Wait for every Future in ``futures`` and return their values, in order.

    Every Future is waited for before anything is raised, so no work is left
    running unobserved behind an early failure. Each is waited for with its
    own ``wait()``, so a Future whose ``wait`` drives its source (an RPC
    reply's, which polls MPI meanwhile) makes progress here too.

    Raises:
        the exception of the first failed Future (in list order).
        TypeError: an item is not a Future.
    """
    futures = _checked_futures(futures, "wait_all")
    errors = []
    for fut in futures:
        try:
            fut.wait()
        except BaseException as error:  # noqa: BLE001  (raised below, once every Future is waited for)
            errors.append(error)
    if errors:
        raise errors[0]
    return [fut.value() for fut in futures]
