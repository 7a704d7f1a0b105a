"""Distributed autograd contexts: per-pass state, kept on every worker that took part.

A context (``DistAutogradContext``) holds, for one forward/backward pass:

* the send and recv nodes recorded by RPCs, keyed by ``autograd_message_id``
  (this also keeps those parts of the graph alive);
* the workers this worker exchanged messages with in the pass;
* the gradient map ``leaf Tensor -> gradient``: distributed backward passes
  accumulate here, never into ``.grad``;
* the state of running backward passes (one per backward id), and, on the
  initiator, which finished passes other workers may still remember. A recv
  node finds the pass it belongs to here (``running_backward``).

Context ids and message ids are globally unique: the creating worker's id
sits in the high bits, a local counter in the low 48.
"""

from __future__ import annotations

import itertools
import threading

from minigrad import engine


def make_global_id(worker_id: int, counter) -> int:
    """A globally unique id: ``worker_id`` in the high bits, ``next(counter)`` in the low 48."""
    return (worker_id << 48) | next(counter)


def id_text(global_id: int) -> str:
    """``'worker:local'`` for messages."""
    return f"{global_id >> 48}:{global_id & (2**48 - 1)}"


class DistAutogradContext:
    """State of one distributed autograd pass on one worker (see the module docstring)."""

    def __init__(self, context_id: int):
        self.context_id = context_id
        self.lock = threading.RLock()
        self.send_nodes = {}
        self.recv_nodes = {}
        self.known_workers = set()
        self.grad_map = {}
        self.backwards = {}
        self.live_sends = {}
        self.finished_backwards = {}  # worker -> ids of finished backward passes it can forget

    def running_backward(self):
        """The backward pass of this context (``engine.WorkerBackward``) whose executor runs in this thread, or None.

        Recv nodes ask it where their gradients go (step 5 of the FAST mode
        algorithm). None means the graph is being run by something else, such
        as a plain ``.backward()``.
        """
        task = engine.current_task()
        if task is None:
            return None
        with self.lock:
            for backward in self.backwards.values():
                if backward.task is task:
                    return backward
        return None

    def __repr__(self):
        return (f"DistAutogradContext({id_text(self.context_id)}, sends={len(self.send_nodes)}, "
                f"recvs={len(self.recv_nodes)}, workers={sorted(self.known_workers)})")


class _Current(threading.local):
    def __init__(self):
        self.context_id = None


class ContextRegistry:
    """All contexts alive on this worker, and the current context of each thread."""

    def __init__(self):
        self._lock = threading.Lock()
        self._contexts = {}
        self._counter = itertools.count(1)
        self._message_counter = itertools.count(1)
        self.current = _Current()

    def new_context(self, worker_id: int) -> DistAutogradContext:
        """Create a context owned by this worker (the one running ``context()``)."""
        context = DistAutogradContext(make_global_id(worker_id, self._counter))
        with self._lock:
            self._contexts[context.context_id] = context
        return context

    def new_message_id(self, worker_id: int) -> int:
        """A fresh ``autograd_message_id``."""
        return make_global_id(worker_id, self._message_counter)

    def get(self, context_id: int) -> DistAutogradContext:
        """The context with this id.

        Raises:
            TypeError: ``context_id`` is not an int.
            RuntimeError: unknown or already released (says how contexts are made).
        """
        if not isinstance(context_id, int) or isinstance(context_id, bool):
            raise TypeError(
                f"context_id must be an int from dist_autograd.context(), got {type(context_id).__name__}"
            )
        with self._lock:
            context = self._contexts.get(context_id)
        if context is None:
            raise RuntimeError(
                f"no distributed autograd context {id_text(context_id)} on this worker: it was released or never "
                "created. Run the forward and backward inside `with dist_autograd.context() as context_id:`"
            )
        return context

    def find(self, context_id: int):
        """The context with this id, or None."""
        with self._lock:
            return self._contexts.get(context_id)

    def get_or_create(self, context_id: int) -> DistAutogradContext:
        """The context with this id, created on first contact (a worker reached by an RPC)."""
        with self._lock:
            context = self._contexts.get(context_id)
            if context is None:
                context = self._contexts[context_id] = DistAutogradContext(context_id)
            return context

    def release(self, context_id: int):
        """Forget a context; returns it (or None if it was not here)."""
        with self._lock:
            return self._contexts.pop(context_id, None)

    def __len__(self):
        with self._lock:
            return len(self._contexts)


registry = ContextRegistry()
