"""``Future``: a value that arrives later, from an MPI request or from another thread.

Two kinds of sources complete a Future:

* an MPI request (``Work.get_future()``): nothing completes it in the
  background (MPICH progresses only inside MPI calls), so ``done()`` polls
  the request and ``wait()`` blocks on it;
* another thread (the RPC agent's listener): it calls ``set_result`` or
  ``set_exception`` and waiters wake up.

``then(callback)`` chains a Future that completes with ``callback(parent)``
once the parent completes, like ``torch.futures.Future.then``.
"""

from __future__ import annotations

import threading


class Future:
    """A placeholder for a result; see the module docstring.

    Args:
        poll: optional callable driving the source; it may complete the future.
        block: optional callable ``block(timeout)`` that waits for the source.
    """

    def __init__(self, poll=None, block=None):
        self._condition = threading.Condition()
        self._done = False
        self._value = None
        self._exception = None
        self._callbacks = []
        self._poll = poll
        self._block = block

    def done(self) -> bool:
        """True once a result or exception is set (polls an MPI source first)."""
        if not self._done and self._poll is not None:
            self._poll()
        return self._done

    def wait(self, timeout: float | None = None):
        """Block until complete and return the value (or raise the stored exception).

        Raises:
            TimeoutError: not complete within ``timeout`` seconds.
        """
        if not self._done and self._block is not None:
            self._block(timeout)
        with self._condition:
            if not self._done and not self._condition.wait_for(lambda: self._done, timeout):
                raise TimeoutError(f"future not completed within {timeout} s")
        return self.value()

    def value(self):
        """The result of a completed future (raises its exception if it failed).

        Raises:
            RuntimeError: the future is not complete yet.
        """
        if not self._done:
            raise RuntimeError("Future.value() called before the future completed; call wait() first")
        if self._exception is not None:
            raise self._exception
        return self._value

    def set_result(self, value) -> None:
        """Complete with ``value`` and run the callbacks.

        Raises:
            RuntimeError: the future was already completed.
        """
        self._complete(value, None)

    def set_exception(self, exception: BaseException) -> None:
        """Complete with an exception (re-raised by ``wait``/``value``)."""
        self._complete(None, exception)

    def then(self, callback) -> Future:
        """A new Future completed with ``callback(self)`` once this one completes.

        An exception raised by ``callback`` completes the new future with it.
        """
        child = Future(poll=self.done if self._poll is not None else None, block=self._wait_quietly)

        def run(parent):
            try:
                child.set_result(callback(parent))
            except BaseException as error:  # noqa: BLE001  (delivered to whoever waits)
                child.set_exception(error)

        self.add_done_callback(run)
        return child

    def add_done_callback(self, callback) -> None:
        """Run ``callback(self)`` when complete (at once if already complete)."""
        with self._condition:
            if not self._done:
                self._callbacks.append(callback)
                return
        callback(self)

    def _wait_quietly(self, timeout):
        try:
            self.wait(timeout)
        except TimeoutError:
            raise
        except BaseException:  # noqa: BLE001  (the child reports the parent's failure itself)
            pass

    def _complete(self, value, exception):
        with self._condition:
            if self._done:
                raise RuntimeError("this Future was already completed")
            self._value = value
            self._exception = exception
            self._done = True
            callbacks, self._callbacks = self._callbacks, []
            self._poll = self._block = None  # drop the source (a Work that holds this future: a cycle)
            self._condition.notify_all()
        for callback in callbacks:
            callback(self)


def wait_all(futures) -> list:
    """Wait for every future and return their results; then raise the first error, if any.

    Every future is awaited before anything is raised, so no work is left
    running unobserved behind an early failure.
    """
    errors, results = [], []
    for future in futures:
        try:
            results.append(future.wait())
        except BaseException as error:  # noqa: BLE001  (raised below, once all futures are done)
            errors.append(error)
    if errors:
        raise errors[0]
    return results


def completed_future(value) -> Future:
    """A Future that already holds ``value``."""
    future = Future()
    future.set_result(value)
    return future
