"""The RPC agent: one per worker, moving requests and replies over MPI.

Threads of one worker, all receiving through one ``_poll_once`` (one
poller at a time, under a lock, so each message is received whole and
messages are handled in arrival order):

* the **listener** polls its own duplicate communicator with ``Improbe``
  and pauses politely when idle (``waiting``: a thread sitting in a
  blocking MPI receive spins and takes a core, MPI_NOTES.md). It polls only
  when nobody else does (below): every waking of a polling thread costs the
  busy threads of this process some of the GIL;
* the **worker pool** runs requests and sends the replies. It works as
  leader/followers: one idle pool thread at a time polls, and a request it
  receives it serves itself, so no thread hand-off delays a request;
* any **caller** thread sends its requests itself and waits on a Future;
  while it waits it polls too, so its reply reaches it without a hand-off.
  The leader and the listener stand by meanwhile (they sleep on a condition
  until the last caller stops waiting, or a caller hands a request over):
  one poller is enough, and when ranks outnumber the cores every extra
  waking thread takes CPU from the ranks that compute.

Where ranks outnumber the cores, a poller that waits long backs off
(``waiting.Backoff``'s patience): after ``_PATIENCE`` without a message, the reply or request it waits for is behind
some computation, so it wakes at most about 1000 times a second.

Framing: a message is a pickled header (``wire.encode``), then its large
array buffers as raw messages on a tag of their own; the header's frame
says which tag and how many bytes each buffer has.

Dispatch, by kind: ``REPLY`` completes the Future of its request,
``ONEWAY`` (a function run with no reply: RRef reference counts) runs right
in the poller, and ``REQUEST`` (run a function, reply expected) goes to the
pool, except for internal handlers that only do quick bookkeeping and never
wait (marked with a ``rpc_inline = True`` attribute), which also run in the
poller.

Deadlines: every Future this worker awaits (a request's reply, or an
``async_execution`` call's value) has an id in ``_pending`` and, with a
timeout, an entry in a heap of deadlines that the pollers expire.

Termination (graceful shutdown) is a termination detection: every worker
counts messages sent and messages fully processed; workers repeatedly
all-reduce both counts (on a second duplicate communicator) until the sums
are equal and unchanged for two rounds, so nothing is in flight or running
anywhere. Only then do listeners stop: no request is lost and nobody hangs.

State that lives as long as the agent lives on it: the values this worker
owns for RRefs (``rrefs``, see ``rref.py``) included.
"""

from __future__ import annotations

import heapq
import itertools
import queue
import threading
import time
import traceback
from collections import namedtuple

import numpy as np

from minigrad_dist import waiting
from minigrad_dist.futures import Future
from minigrad_dist.mpi import load_mpi
from minigrad_dist.rpc import wire

WorkerInfo = namedtuple("WorkerInfo", ["name", "id"])
WorkerInfo.__doc__ = "A worker's name and id (its rank in the RPC world)."

REQUEST, REPLY, ONEWAY, INLINE = 0, 1, 2, 3  # INLINE: a REQUEST whose handler runs in the poller

Message = namedtuple("Message", ["kind", "request_id", "sender", "autograd", "body"])
Message.__doc__ = """A received message: its kind, the request it belongs to, the sender's rank,
distributed autograd's metadata (None outside a context) and the body
(``(function, args, kwargs)`` for requests, the outcome for replies)."""

# How the agent's threads pause between polls (waiting.py). After a message (the pool's leader) or after sending
# a request (a waiting caller), a poller yields the CPU for _YIELD_WINDOW: a reply or the next request usually
# comes within it, and waking from a sleep would lengthen the round trip that benchmarks/bench_rpc.py measures
# (benchmarks/results/rpc.json). An idle listener backs off to _IDLE_PAUSE.
_YIELD_WINDOW = waiting.YIELD_WINDOW
_BUSY_PAUSE = waiting.SHORT_SLEEP
_IDLE_PAUSE = waiting.LONG_SLEEP
_RECENT = 5e-3  # seconds after a message during which pollers keep polling closely
# Seconds after which a waiting caller, or a leader while replies are awaited, stops polling closely: a round
# trip takes 0.1-1 ms (rpc.json), so a reply still missing after 20 ms waits for the callee's work (16 ranks on
# 2 cores: callers polling every 20 us for a whole wait took 1.2-1.6 of the 2 cores from the rank that worked,
# 0.4-0.5 with this patience and the leader and listener standing by).
_PATIENCE = 2e-2
_IDLE_SLEEP = 1e-3  # the longest sleep of a wait past its patience: adds at most 5% to a wait that long
_STAND_BY = 0.1  # seconds a standing-by listener or leader sleeps at most (a notification wakes it sooner)
_LISTENING = waiting.Backoff(yield_window=0.0, first_sleep=_BUSY_PAUSE, longest_sleep=_IDLE_PAUSE)
_LEADING = waiting.Backoff(yield_window=_YIELD_WINDOW, first_sleep=_BUSY_PAUSE, longest_sleep=_IDLE_PAUSE)
_AWAITING_REPLY = waiting.Backoff(
    yield_window=_YIELD_WINDOW,
    first_sleep=_BUSY_PAUSE,
    longest_sleep=_BUSY_PAUSE,
    patience=_PATIENCE,
    idle_sleep=_IDLE_SLEEP,
)
# A message's buffers follow its header at once: yield for about 30 polls' time, then sleep short.
_MOVING_BUFFERS = waiting.Backoff(yield_window=3e-5, first_sleep=_BUSY_PAUSE, longest_sleep=_BUSY_PAUSE)
# A worker that waits for the others to finish must not take their CPU.
_DRAINING = waiting.Backoff(yield_window=0.0, first_sleep=1e-3, longest_sleep=1e-3)
_COUNTING = waiting.Backoff(yield_window=0.0, first_sleep=1e-4, longest_sleep=4 * _IDLE_PAUSE)
_BETWEEN_ROUNDS = 1e-3  # seconds between two rounds of the termination detection

TAG_HEADER = 1
_FIRST_BUFFER_TAG = 16


class RemoteError(RuntimeError):
    """A remote function raised and its exception type could not be rebuilt here."""


class RpcTimeoutError(TimeoutError):
    """An RPC did not complete within its timeout."""


def _hooks():
    """Distributed autograd's hooks into messages (imported lazily: it builds on this module)."""
    from minigrad_dist.autograd import hooks  # noqa: PLC0415

    return hooks


class RpcAgent:
    """Sends and serves RPCs for one worker. Built by ``init_rpc``; see the module docstring.

    Args:
        name: this worker's unique name.
        comm: the communicator to duplicate (all ranks call this together).
        num_worker_threads: size of the pool that runs incoming requests.
        rpc_timeout: default timeout in seconds (0 means no timeout).

    Attributes:
        rrefs: the values this worker owns for RRefs (an ``rref.OwnerTable``).

    Raises:
        RuntimeError: the MPI library does not provide MPI_THREAD_MULTIPLE.
        ValueError: the workers' names are not unique.
    """

    def __init__(self, name: str, comm, num_worker_threads: int = 16, rpc_timeout: float = 60.0):
        from minigrad_dist.rpc.rref import OwnerTable  # noqa: PLC0415  (rref builds on this module)

        MPI = load_mpi()
        if MPI.Query_thread() < MPI.THREAD_MULTIPLE:
            raise RuntimeError(
                "RPC needs an MPI library initialized with MPI_THREAD_MULTIPLE (its listener and worker "
                f"threads call MPI concurrently); this MPI provides level {MPI.Query_thread()}. Use an MPI "
                "built with thread support (the mpich wheel from PyPI has it)."
            )
        self.MPI = MPI
        self.comm = comm.Dup()
        self.coll = comm.Dup()
        self.rank = self.comm.Get_rank()
        self.size = self.comm.Get_size()
        names = self.coll.allgather(name)
        if len(set(names)) != len(names):
            raise ValueError(f"init_rpc: worker names must be unique, got {names}")
        self.workers = [WorkerInfo(n, i) for i, n in enumerate(names)]
        self.by_name = {w.name: w for w in self.workers}
        self.info = self.workers[self.rank]
        self.rpc_timeout = rpc_timeout
        self.rrefs = OwnerTable(self.rank)
        self._request_ids = itertools.count()
        self._tags = itertools.count()
        self._tag_limit = max(int(self.comm.Get_attr(MPI.TAG_UB) or 32767) - _FIRST_BUFFER_TAG, 1024)
        self._pending = {}  # id -> the Future awaiting that reply (or async call's value)
        self._deadlines = []  # heap of (deadline, id, worker, function name, timeout)
        self._lock = threading.Lock()
        # Notified when a poller may have to take over: the last waiting caller stopped, the leader left,
        # a caller handed a request over, or the agent stops.
        self._pollers_changed = threading.Condition(self._lock)
        self._sent = 0
        self._processed = 0
        self._outbox = queue.SimpleQueue()
        self._tasks = queue.SimpleQueue()  # requests received by a thread that does not serve them itself
        self._leading = False  # an idle pool thread is polling (it serves what it receives: no hand-off)
        self._pool = [threading.Thread(target=self._work, name=f"rpc-{name}-{i}", daemon=True)
                      for i in range(num_worker_threads)]
        self._running = False
        self._poll_lock = threading.RLock()  # one poller at a time: a message is received whole, in order
        self._waiters = 0  # threads polling while they wait for a reply (the listener backs off)
        self._last_traffic = time.monotonic()
        self._listener = threading.Thread(target=self._listen, name=f"rpc-listener-{name}", daemon=True)

    def start(self) -> None:
        """Start serving (after the agent is registered as this process's agent)."""
        self._running = True
        self._listener.start()
        for thread in self._pool:
            thread.start()

    # -- sending ---------------------------------------------------------------------------

    def request(self, dst: int, function, args=(), kwargs=None, timeout=None) -> Future:
        """Call ``function(*args, **kwargs)`` on worker ``dst``; a Future of its result.

        ``timeout``: seconds (None: the agent's ``rpc_timeout``; 0: none).
        """
        future = PollingFuture(self)
        request_id = self.expect(future)
        try:
            self._send(dst, REQUEST, request_id, (function, tuple(args), dict(kwargs or {})))
        except BaseException:
            self.forget(request_id)
            raise
        self.set_deadline(request_id, dst, function, timeout)  # after the send: not on the round trip's path
        return future

    def oneway(self, dst: int, function, args=()) -> None:
        """Run ``function(*args)`` inline in ``dst``'s poller; no reply (reference counting)."""
        self._send(dst, ONEWAY, -1, (function, tuple(args), {}))

    def oneway_later(self, dst: int, function, args=()) -> None:
        """Like ``oneway``, but sent by the next poller (safe from ``__del__`` and GC)."""
        self._outbox.put((dst, function, tuple(args)))

    def _send(self, dst: int, kind: int, request_id: int, body) -> None:
        autograd = _hooks().outgoing_meta(self.rank) if kind != ONEWAY else None
        header, buffers, grad_tensors = wire.encode((kind, request_id, self.rank, autograd, body),
                                                    track_grad=autograd is not None)
        if grad_tensors:
            _hooks().attach_send(autograd, dst, grad_tensors)
        with self._lock:
            self._sent += 1
        self._post(dst, header, buffers)

    def _post(self, dst, header, buffers):
        """Frame and send one message: the header (with the buffers' tag and sizes), then each buffer."""
        MPI = self.MPI
        tag = _FIRST_BUFFER_TAG + next(self._tags) % self._tag_limit
        meta = wire.pickle.dumps((tag, [len(b) for b in buffers]), protocol=5)
        frame = len(meta).to_bytes(4, "little") + meta + header
        requests = [self.comm.Isend([frame, MPI.BYTE], dst, TAG_HEADER)]
        requests += [self.comm.Isend([b, MPI.BYTE], dst, tag) for b in buffers]
        _wait_all(requests)

    # -- awaited Futures and their deadlines -----------------------------------------------------

    def expect(self, future: Future) -> int:
        """Register ``future`` as awaiting a reply (or a value) under a new id, and return the id.

        ``settle(id, outcome)`` completes it, ``fail(id, error)`` fails it.
        """
        request_id = next(self._request_ids)
        with self._lock:
            self._pending[request_id] = future
        return request_id

    def set_deadline(self, request_id: int, dst: int, function, timeout=None) -> None:
        """Fail the Future awaited as ``request_id`` if it is not settled within ``timeout`` seconds.

        ``timeout``: None for the agent's ``rpc_timeout``, 0 for none. The
        pollers fail it with an ``RpcTimeoutError`` naming ``function`` and
        worker ``dst``.
        """
        timeout = self.rpc_timeout if timeout is None else timeout
        if not (timeout and timeout > 0):
            return
        name = getattr(function, "__qualname__", repr(function))
        with self._lock:
            heapq.heappush(self._deadlines, (time.monotonic() + timeout, request_id, dst, name, timeout))
            if len(self._deadlines) > 2 * len(self._pending) + 1024:
                # Answered requests leave their entries behind: drop them now and then.
                self._deadlines = [d for d in self._deadlines if d[1] in self._pending]
                heapq.heapify(self._deadlines)

    def settle(self, request_id: int, outcome) -> None:
        """Complete the Future awaiting ``request_id`` with ``outcome``.

        ``outcome`` is ``("ok", value)`` or ``("error", error, remote
        traceback, worker name)``. Does nothing when the Future is no longer
        awaited (it timed out already).
        """
        with self._lock:
            future = self._pending.pop(request_id, None)
        if future is None or future.done():
            return
        if outcome[0] == "ok":
            future.set_result(outcome[1])
        else:
            future.set_exception(_rebuild_remote_error(*outcome[1:]))

    def fail(self, request_id: int, error: BaseException) -> None:
        """Fail the Future awaiting ``request_id`` with ``error`` (nothing if no longer awaited)."""
        with self._lock:
            future = self._pending.pop(request_id, None)
        if future is not None and not future.done():
            future.set_exception(error)

    def forget(self, request_id: int) -> None:
        """Stop awaiting ``request_id`` (its request could not be sent)."""
        with self._lock:
            self._pending.pop(request_id, None)

    def _expire_due(self) -> None:
        """Fail every awaited Future whose deadline has passed (called by the pollers)."""
        now = time.monotonic()
        while True:
            with self._lock:
                if not self._deadlines or self._deadlines[0][0] > now:
                    return
                _, request_id, dst, name, timeout = heapq.heappop(self._deadlines)
                pending = self._pending.pop(request_id, None)
            if pending is not None and not pending.done():
                pending.set_exception(RpcTimeoutError(
                    f"RPC {name} to worker {self.workers[dst].name!r} did not complete within {timeout:.3g} s "
                    "(the rpc timeout); pass timeout= to rpc_sync/rpc_async or rpc_timeout to init_rpc to change it"
                ))

    # -- receiving ---------------------------------------------------------------------------

    def _poll_once(self) -> Message | None:
        """Receive one message if one is there (any thread); the message, or None.

        Under the poll lock, so messages are handled in arrival order: a
        reply, a one-way message or an ``INLINE`` request is handled here; a
        ``REQUEST`` is returned for the caller to serve or to queue for the pool.
        """
        if not self._poll_lock.acquire(blocking=False):
            return None
        try:
            self._drain_outbox()
            if self._deadlines:
                self._expire_due()
            status = self.MPI.Status()
            probed = self.comm.Improbe(self.MPI.ANY_SOURCE, TAG_HEADER, status)
            if probed is None:
                return None
            self._last_traffic = time.monotonic()
            frame = bytearray(status.Get_count(self.MPI.BYTE))
            probed.Recv([frame, self.MPI.BYTE])
            try:
                message = self._receive(status.Get_source(), frame)
                if message.kind != REQUEST:
                    self._handle(message)
                return message
            except BaseException:  # noqa: BLE001  (a broken message must not kill the poller)
                traceback.print_exc()
                return None
        finally:
            self._poll_lock.release()

    def _receive(self, source, frame) -> Message:
        """The rest of the message whose header frame came from ``source``: its buffers, then decoded."""
        MPI = self.MPI
        view = memoryview(frame)
        meta_end = 4 + int.from_bytes(view[:4], "little")
        tag, sizes = wire.pickle.loads(view[4:meta_end])
        buffers = [np.empty(n, dtype=np.uint8) for n in sizes]  # bytearray would zero-fill: slow for 64 MB
        requests = [self.comm.Irecv([b, MPI.BYTE], source, tag) for b in buffers]
        _wait_all(requests)
        payload, tracked = wire.decode(view[meta_end:], buffers)
        message = Message._make(payload)
        if tracked and message.autograd is not None:
            _hooks().attach_recv(message.autograd, message.sender, [t for _, t in tracked])
        if message.kind == REQUEST and getattr(message.body[0], "rpc_inline", False):
            message = message._replace(kind=INLINE)
        return message

    def _handle(self, message: Message) -> None:
        """Handle a message that is not for the pool (in the poller that received it)."""
        if message.kind == INLINE:
            self._serve(message)  # quick bookkeeping: skip the pool's hand-off
            return
        try:
            if message.kind == REPLY:
                self.settle(message.request_id, message.body)
            else:
                function, args, _ = message.body
                function(*args)
        finally:
            self._count_processed()

    def _serve(self, message: Message) -> None:
        """Run a request and send its reply (or the error it raised) back to the caller."""
        function, args, kwargs = message.body
        sender, request_id = message.sender, message.request_id
        with _hooks().serving(message.autograd):
            try:
                reply = ("ok", function(*args, **kwargs))
            except BaseException as error:  # noqa: BLE001  (sent back to the caller)
                reply = ("error", _portable(error), traceback.format_exc(), self.info.name)
            try:
                self._send(sender, REPLY, request_id, reply)
            except BaseException as error:  # noqa: BLE001  (e.g. an unpicklable result)
                failure = ("error", _portable(error), traceback.format_exc(), self.info.name)
                try:
                    self._send(sender, REPLY, request_id, failure)
                except BaseException:  # noqa: BLE001  (nothing left to tell the caller with)
                    traceback.print_exc()
        self._count_processed()

    def _count_processed(self):
        with self._lock:
            self._processed += 1

    def _drain_outbox(self):
        while True:
            try:
                dst, function, args = self._outbox.get_nowait()
            except queue.Empty:
                return
            try:
                self.oneway(dst, function, args)
            except BaseException:  # noqa: BLE001  (best effort: reference counting messages)
                traceback.print_exc()

    def _busy(self) -> bool:
        """Traffic was recent, or replies are awaited (where ranks outnumber the cores: for ``_PATIENCE`` at most)."""
        if self._pending and not waiting.oversubscribed():
            return True
        return time.monotonic() - self._last_traffic < (_PATIENCE if self._pending else _RECENT)

    def _stand_by(self, until) -> None:
        """Sleep until ``until()`` is true or the agent stops (another thread polls meanwhile)."""
        with self._pollers_changed:
            while not (until() or not self._running):
                self._pollers_changed.wait(_STAND_BY)

    def _notify_pollers(self) -> None:
        with self._pollers_changed:
            self._pollers_changed.notify_all()

    def _hand_over(self, message: Message) -> None:
        """A request received by a thread that does not serve it: to the pool (a standing-by leader wakes up)."""
        self._tasks.put(message)
        self._notify_pollers()

    # -- the threads that poll ------------------------------------------------------------------

    def _listen(self) -> None:
        """The listener: poll when no other thread does; requests go to the pool's queue."""
        waiting.fine_timer_slack()
        pauses = _LISTENING.start()
        while self._running:
            if self._waiters or self._leading:
                # A waiting caller or an idle pool thread polls: stay out of their way.
                self._stand_by(lambda: not (self._waiters or self._leading))
                pauses.restart()
                continue
            message = self._poll_once()
            if message is not None:
                if message.kind == REQUEST:
                    self._tasks.put(message)
                pauses.restart()
                continue
            if self._busy():
                pauses.restart()
            pauses.pause()

    def _work(self) -> None:
        """A pool thread: serve queued requests; when idle, lead the polling if nobody does."""
        waiting.fine_timer_slack()
        while True:
            try:
                task = self._tasks.get_nowait()
            except queue.Empty:
                task = self._lead() or self._tasks.get()
            if task is None:
                return
            self._serve(task)
            del task  # the request's arguments must not outlive it while this thread idles

    def _lead(self) -> Message | None:
        """Poll as the pool's leader until a request arrives for this thread; None if another leads."""
        with self._lock:
            if self._leading or not self._running:
                return None
            self._leading = True
        try:
            pauses = _LEADING.start(since=self._last_traffic)
            while self._running:
                try:
                    return self._tasks.get_nowait()
                except queue.Empty:
                    pass
                if self._waiters:
                    # A waiting caller polls and hands requests over: stand by until it stops or hands one.
                    self._stand_by(lambda: not self._waiters or not self._tasks.empty())
                    pauses.restart(since=self._last_traffic)
                    continue
                message = self._poll_once()
                if message is None:
                    if self._busy():
                        pauses.restart(since=self._last_traffic)
                    pauses.pause()
                elif message.kind == REQUEST:
                    return message
                else:
                    pauses.restart()
            return None
        finally:
            self._leading = False
            self._notify_pollers()  # the listener takes over while this thread serves

    def wait_polling(self, future, timeout) -> None:
        """Poll for messages in this thread until ``future`` is done, ``timeout`` passes or RPC stops."""
        deadline = None if timeout is None else time.monotonic() + timeout
        waiting.fine_timer_slack()
        with self._lock:
            self._waiters += 1
        try:
            pauses = _AWAITING_REPLY.start()
            while not future._done and self._running:
                message = self._poll_once()
                if message is not None:
                    if message.kind == REQUEST:
                        self._hand_over(message)
                    pauses.restart()
                    continue
                if deadline is not None and time.monotonic() >= deadline:
                    return
                pauses.pause()
        finally:
            with self._pollers_changed:
                self._waiters -= 1
                if not self._waiters:
                    self._pollers_changed.notify_all()

    # -- shutdown -----------------------------------------------------------------------------

    def outstanding(self) -> int:
        """Replies (and async calls' values) this worker awaits."""
        with self._lock:
            return len(self._pending)

    def shutdown(self, graceful: bool = True, timeout: float | None = None) -> None:
        """Stop the agent; with ``graceful``, first let every worker finish all in-flight work.

        Frees every value this worker owned for RRefs (none can be used any more).

        Raises:
            TimeoutError: graceful shutdown did not converge within ``timeout`` seconds.
        """
        try:
            if graceful:
                self._wait_for_global_quiescence(timeout)
            self._running = False
            self._notify_pollers()
            self._listener.join()
            for _ in self._pool:
                self._tasks.put(None)
            for thread in self._pool:
                thread.join()
            with self._lock:
                pending, self._pending = list(self._pending.values()), {}
            for future in pending:
                if not future.done():
                    future.set_exception(RuntimeError("RPC agent shut down before the reply arrived"))
            self.comm.Free()
            self.coll.Free()
        finally:
            self.rrefs.clear()

    def _wait_for_global_quiescence(self, timeout):
        MPI = self.MPI
        deadline = None if timeout is None else time.monotonic() + timeout
        previous = None
        while True:
            if not waiting.wait_until(self._quiet_here, _left(deadline), _DRAINING):
                raise TimeoutError("rpc.shutdown timed out waiting for this worker's outstanding RPCs")
            with self._lock:
                counts = np.array([self._sent, self._processed], dtype=np.int64)
            request = self.coll.Iallreduce(MPI.IN_PLACE, counts, MPI.SUM)
            if not waiting.wait_until(request.Test, _left(deadline), _COUNTING):
                raise TimeoutError("rpc.shutdown timed out waiting for the other workers to finish")
            totals = (int(counts[0]), int(counts[1]))
            if totals[0] == totals[1] and totals == previous:
                return
            previous = totals
            time.sleep(_BETWEEN_ROUNDS)

    def _quiet_here(self) -> bool:
        """Nothing awaited by this worker and nothing left to send."""
        return not self.outstanding() and self._outbox.empty()


class PollingFuture(Future):
    """A Future the agent completes: a thread that waits for it polls MPI meanwhile (no hand-off).

    The Future of a request's reply and of an ``async_execution`` call's value.
    """

    def __init__(self, agent: RpcAgent):
        super().__init__()
        self._agent = agent

    def wait(self, timeout: float | None = None):
        """Poll the agent until complete, then return the value (see ``Future.wait``).

        Raises:
            the Future's exception, if it failed.
            TimeoutError: not complete within ``timeout`` seconds.
        """
        if not self._done:
            start = time.monotonic()
            self._agent.wait_polling(self, timeout)
            if timeout is not None:
                timeout = max(0.0, timeout - (time.monotonic() - start))
        return super().wait(timeout)


def _left(deadline):
    """Seconds until ``deadline`` (None: no deadline)."""
    return None if deadline is None else max(0.0, deadline - time.monotonic())


def _wait_all(requests) -> None:
    """Wait for MPI requests politely (``waiting``): a message's buffers, sent or received."""
    for request in requests:
        waiting.wait_until(request.Test, backoff=_MOVING_BUFFERS)


def _portable(error):
    """The exception itself if it pickles, else a RemoteError with its text."""
    try:
        wire.pickle.dumps(error)
        return error
    except Exception:  # noqa: BLE001  (any pickling failure)
        return RemoteError(f"{type(error).__name__}: {error}")


def _rebuild_remote_error(error, remote_traceback, worker):
    """The remote exception, same type where possible, with the remote traceback in its message."""
    text = f"{error}\n\nRemote traceback (on worker {worker!r}):\n{remote_traceback}"
    try:
        rebuilt = type(error)(text)
    except Exception:  # noqa: BLE001  (types whose constructor wants other arguments)
        rebuilt = RemoteError(f"{type(error).__name__}: {text}")
    rebuilt.remote_traceback = remote_traceback
    return rebuilt
