"""``@rpc.functions.async_execution``: a remote function returns a Future, and its RPC replies when that completes.

::

    @rpc.functions.async_execution
    def add_later(to, x, y, z):
        # runs on the callee: start another RPC and reply once it is done, without holding a thread meanwhile
        return rpc.rpc_async(to, add, args=(x, y)).then(lambda fut: fut.wait() + z)

    ret = rpc.rpc_sync("worker1", add_later, args=("worker2", x, y, z))

It works with ``rpc_sync``, ``rpc_async`` and ``remote``. Called locally,
the decorated function simply returns its Future. Where the decorator
meets ``@staticmethod``, put ``@staticmethod`` outside.

How (two messages, so that no thread of the callee waits for the Future):

1. The caller registers the call under a token and sends a request that
   runs the function on the callee (``_start``). The function returns its
   Future; the request returns at once, freeing the callee's worker thread.
2. When the Future completes, a callback on the callee sends the value (or
   the exception) back in a second request (``_deliver``), inside the
   distributed autograd context of the call if it had one, so gradients flow
   back through the result as through an ordinary reply.
3. ``_deliver`` completes the caller's Future. A timer fails calls that
   outlive their timeout (``rpc_timeout`` by default); a late value is then
   dropped. A graceful ``rpc.shutdown()`` first waits for this worker's
   calls to complete.

``remote()`` with such a function sets the owner's value when the Future
completes, also without holding a thread.
"""

from __future__ import annotations

import contextlib
import functools
import heapq
import itertools
import threading
import time
import traceback

from minigrad_dist.autograd.context import registry
from minigrad_dist.futures import Future
from minigrad_dist.rpc import api
from minigrad_dist.rpc import rref as rref_module
from minigrad_dist.rpc.agent import RpcTimeoutError, _portable, _rebuild_remote_error

__all__ = ["async_execution"]


def async_execution(fn):
    """Mark ``fn`` as returning a ``Future`` whose value is the RPC's result (see the module docstring).

    Raises:
        TypeError: ``fn`` is not callable.
    """
    if not callable(fn):
        raise TypeError(f"async_execution: expected a function, got {type(fn).__name__}")

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)

    wrapper._wrapped_async_rpc_function = fn
    return wrapper


def is_async(func) -> bool:
    """True for functions decorated with ``async_execution``."""
    return getattr(func, "_wrapped_async_rpc_function", None) is not None


def _check_future(result, func):
    if not isinstance(result, Future):
        name = getattr(func, "__qualname__", repr(func))
        raise TypeError(
            f"{name} is decorated with @rpc.functions.async_execution, so it must return a Future "
            f"(minigrad_dist.rpc.Future), got {type(result).__name__}"
        )


# -- the caller's side -----------------------------------------------------------------------


class _AsyncCallFuture(Future):
    """The caller's Future of an async call: a thread waiting for it polls MPI meanwhile (no hand-off)."""

    def __init__(self, agent):
        super().__init__()
        self._agent = agent

    def wait(self, timeout: float | None = None):
        if not self._done:
            start = time.monotonic()
            self._agent.wait_polling(self, timeout)
            if timeout is not None:
                timeout = max(0.0, timeout - (time.monotonic() - start))
        return super().wait(timeout)


class _Calls:
    """This worker's async calls waiting for their value, and a timer thread that expires them."""

    def __init__(self):
        self.lock = threading.Condition()
        self.pending = {}
        self.deadlines = []  # heap of (deadline, token, message)
        self.timer = None

    def add(self, token, future, timeout, message) -> None:
        with self.lock:
            self.pending[token] = future
            if timeout:
                heapq.heappush(self.deadlines, (time.monotonic() + timeout, token, message))
                if len(self.deadlines) > 2 * len(self.pending) + 1024:
                    # Answered calls leave their entries behind: drop them now and then.
                    self.deadlines = [d for d in self.deadlines if d[1] in self.pending]
                    heapq.heapify(self.deadlines)
                if self.timer is None:
                    self.timer = threading.Thread(target=self._expire, name="rpc-async-timeouts", daemon=True)
                    self.timer.start()
                self.lock.notify()

    def pop(self, token):
        with self.lock:
            future = self.pending.pop(token, None)
            self.lock.notify_all()  # shutdown may be waiting for the pending calls to drain
            return future

    def fail(self, token, error) -> None:
        future = self.pop(token)
        if future is not None:
            future.set_exception(error)

    def _expire(self) -> None:
        """Sleep until the next deadline (or a new call) and fail the calls whose deadline passed."""
        while True:
            with self.lock:
                while not self.deadlines or self.deadlines[0][0] > time.monotonic():
                    pause = self.deadlines[0][0] - time.monotonic() if self.deadlines else None
                    self.lock.wait(pause)
                _, token, message = heapq.heappop(self.deadlines)
            self.fail(token, RpcTimeoutError(message))

    def wait_until_empty(self, timeout) -> None:
        """Block until no call is pending (graceful shutdown).

        Raises:
            TimeoutError: calls are still pending after ``timeout`` seconds.
        """
        with self.lock:
            if not self.lock.wait_for(lambda: not self.pending, timeout):
                raise TimeoutError(f"rpc.shutdown timed out waiting for {len(self.pending)} async call(s)")

    def fail_all(self, reason: str) -> None:
        with self.lock:
            tokens = list(self.pending)
        for token in tokens:
            self.fail(token, RuntimeError(reason))


_calls = _Calls()
_tokens = itertools.count()


def call_async(worker, func, args, kwargs, timeout):
    """``rpc_async`` of an ``async_execution`` function: a Future of the value its Future will hold."""
    agent = api.current_agent()
    timeout = agent.rpc_timeout if timeout is None else timeout
    token = (agent.rank, next(_tokens))
    future = _AsyncCallFuture(agent)
    name = getattr(func, "__qualname__", repr(func))
    _calls.add(token, future, timeout, (
        f"RPC {name} to worker {worker.name!r} did not complete within {timeout:.3g} s (the rpc timeout); pass "
        "timeout= to rpc_sync/rpc_async or rpc_timeout to init_rpc to change it"
    ))
    try:
        started = agent.request(worker.id, _start, (func, tuple(args), dict(kwargs or {}), token), timeout=timeout)
    except BaseException:
        _calls.pop(token)
        raise
    started.add_done_callback(functools.partial(_fail_if_not_started, token))
    return future


def _fail_if_not_started(token, started) -> None:
    """The start request failed (the function raised, returned no Future, or timed out): fail the call."""
    try:
        started.value()
    except BaseException as error:  # noqa: BLE001  (delivered to whoever waits for the call)
        _calls.fail(token, error)


def _deliver(token, outcome):
    """Runs on the caller: complete the call's Future with the value (or exception) the callee sent."""
    future = _calls.pop(token)
    if future is None:
        return  # it timed out already
    if outcome[0] == "ok":
        future.set_result(outcome[1])
    else:
        future.set_exception(_rebuild_remote_error(*outcome[1:]))


_deliver.rpc_inline = True  # quick bookkeeping: the agent runs it in its poller, without a hand-off


# -- the callee's side -----------------------------------------------------------------------


def _start(func, args, kwargs, token):
    """Runs on the callee: call ``func``, and send its Future's value to the caller once it completes."""
    context_id = registry.current.context_id
    result = func(*args, **kwargs)
    _check_future(result, func)
    result.add_done_callback(lambda done: _send_outcome(done, token, context_id))


def _send_outcome(done, token, context_id) -> None:
    agent = api._state.agent
    if agent is None:
        return  # RPC was shut down meanwhile: nobody to tell
    try:
        outcome = ("ok", done.value())
    except BaseException as error:  # noqa: BLE001  (sent to the caller)
        remote_traceback = "".join(traceback.format_exception(error))
        outcome = ("error", _portable(error), remote_traceback, agent.info.name)
    with _inside_context(context_id):
        try:
            agent.request(token[0], _deliver, (token, outcome), timeout=0)
        except BaseException as error:  # noqa: BLE001  (e.g. an unpicklable value: tell the caller why)
            failure = ("error", _portable(error), traceback.format_exc(), agent.info.name)
            agent.request(token[0], _deliver, (token, failure), timeout=0)


@contextlib.contextmanager
def _inside_context(context_id):
    """Send from this thread as part of distributed autograd context ``context_id`` (None: no context)."""
    if context_id is not None:
        registry.get_or_create(context_id)
    previous = registry.current.context_id
    registry.current.context_id = context_id
    try:
        yield
    finally:
        registry.current.context_id = previous


# -- remote() ----------------------------------------------------------------------------------


def remote_async(worker, func, args, kwargs, timeout):
    """``remote`` of an ``async_execution`` function: the owner's value is set when the Future completes.

    The reference counting follows ``rref.create_remote``: register, then compute.
    """
    agent = api.current_agent()
    rref_id = rref_module._new_id(agent)
    result = rref_module.RRef._existing(rref_id, worker.id)
    if worker.id == agent.rank:
        rref_module._table.add(rref_id, 1)
    else:
        agent.oneway(worker.id, rref_module._register, (rref_id, 1))
    agent.request(worker.id, _compute_async, (rref_id, func, tuple(args), dict(kwargs or {})), timeout=timeout or 0)
    return result


def _compute_async(rref_id, func, args, kwargs):
    """Runs on the owner: start ``func`` and settle the RRef's value when its Future completes."""
    with rref_module._table.lock:
        entry = rref_module._table.entries.get(rref_id)
    value = entry[0] if entry is not None else Future()  # released already: compute, then drop
    try:
        result = func(*args, **kwargs)
        _check_future(result, func)
    except BaseException as error:  # noqa: BLE001  (re-raised by to_here)
        value.set_exception(error)
        return
    result.add_done_callback(lambda done: _settle(value, done))


def _settle(value: Future, done: Future) -> None:
    try:
        value.set_result(done.value())
    except BaseException as error:  # noqa: BLE001  (re-raised by to_here)
        value.set_exception(error)


def shutdown_calls(graceful: bool, timeout) -> None:
    """Called by ``rpc.shutdown``: wait for this worker's async calls (graceful), or fail them."""
    if graceful:
        _calls.wait_until_empty(timeout)
    else:
        _calls.fail_all("RPC agent shut down before the async call's value arrived")
