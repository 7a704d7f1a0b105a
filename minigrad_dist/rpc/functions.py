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

1. The caller's agent awaits the call's value under an id of its own
   (``RpcAgent.expect``, with a deadline), and sends a request that runs
   the function on the callee (``_start``). The function returns its Future; the request
   returns at once, freeing the callee's worker thread.
2. When the Future completes, a callback on the callee sends the value (or
   the exception) back in a second request (``_deliver``), inside the
   distributed autograd context of the call if it had one, so gradients flow
   back through the result as through an ordinary reply.
3. ``_deliver`` completes the caller's Future (``RpcAgent.settle``). The
   agent fails calls that outlive their timeout (``rpc_timeout`` by
   default), as it does requests; a late value is then dropped. A graceful
   ``rpc.shutdown()`` waits for the awaited values as for replies.

``remote()`` with such a function sets the owner's value when the Future
completes, also without holding a thread.
"""

from __future__ import annotations

import contextlib
import functools
import traceback

from minigrad_dist.autograd.context import registry
from minigrad_dist.futures import Future
from minigrad_dist.rpc import api
from minigrad_dist.rpc import rref as rref_module
from minigrad_dist.rpc.agent import PollingFuture, _portable

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


def call_async(worker, func, args, kwargs, timeout):
    """``rpc_async`` of an ``async_execution`` function: a Future of the value its Future will hold.

    ``timeout``: seconds (None: the agent's ``rpc_timeout``; 0: none).
    """
    agent = api.current_agent()
    timeout = agent.rpc_timeout if timeout is None else timeout
    future = PollingFuture(agent)
    call_id = agent.expect(future)
    try:
        started = agent.request(worker.id, _start, (func, tuple(args), dict(kwargs or {}), agent.rank, call_id),
                                timeout=timeout)
    except BaseException:
        agent.forget(call_id)
        raise
    agent.set_deadline(call_id, worker.id, func, timeout)
    started.add_done_callback(functools.partial(_fail_if_not_started, agent, call_id))
    return future


def _fail_if_not_started(agent, call_id, started) -> None:
    """The start request failed (the function raised, returned no Future, or timed out): fail the call."""
    try:
        started.value()
    except BaseException as error:  # noqa: BLE001  (delivered to whoever waits for the call)
        agent.fail(call_id, error)


def _deliver(call_id, outcome):
    """Runs on the caller: complete the call's Future with the value (or exception) the callee sent."""
    api.current_agent().settle(call_id, outcome)


_deliver.rpc_inline = True  # quick bookkeeping: the agent runs it in its poller, without a hand-off


# -- the callee's side -----------------------------------------------------------------------


def _start(func, args, kwargs, caller, call_id):
    """Runs on the callee: call ``func``, and send its Future's value to the caller once it completes."""
    agent = api.current_agent()
    context_id = registry.current.context_id
    result = func(*args, **kwargs)
    _check_future(result, func)
    result.add_done_callback(lambda done: _send_outcome(done, agent, caller, call_id, context_id))


def _send_outcome(done, agent, caller, call_id, context_id) -> None:
    if api._state.agent is not agent:
        return  # RPC was shut down meanwhile (and maybe started again): nobody awaits this value any more
    try:
        outcome = ("ok", done.value())
    except BaseException as error:  # noqa: BLE001  (sent to the caller)
        remote_traceback = "".join(traceback.format_exception(error))
        outcome = ("error", _portable(error), remote_traceback, agent.info.name)
    with _inside_context(context_id):
        try:
            agent.request(caller, _deliver, (call_id, outcome), timeout=0)
        except BaseException as error:  # noqa: BLE001  (e.g. an unpicklable value: tell the caller why)
            failure = ("error", _portable(error), traceback.format_exc(), agent.info.name)
            agent.request(caller, _deliver, (call_id, failure), timeout=0)


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
    return rref_module.create_remote(worker, func, args, kwargs, timeout, compute=_compute_async)


def _compute_async(rref_id, func, args, kwargs):
    """Runs on the owner: start ``func`` and settle the RRef's value when its Future completes."""
    value = api.current_agent().rrefs.future_to_compute(rref_id)
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
