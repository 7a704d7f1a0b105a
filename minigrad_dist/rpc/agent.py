"""The RPC agent: one per worker, moving requests and replies over MPI.

Threads of one worker, all polling through one ``_poll_once`` (one poller
at a time, under a lock, so each message is received whole and messages
are handled in arrival order):

* the **listener** polls its own duplicate communicator with
  ``Improbe`` and a short, growing sleep when idle (a thread sitting in a
  blocking MPI receive spins and takes a core: MPI_NOTES.md), receives each
  message (a pickled header, then its raw buffers on a tag of their own),
  and dispatches it: replies complete their futures, small control messages
  (RRef reference counts) are handled right there, and requests go to the
  pool's queue. It polls only when nobody else does (below): every waking
  of a polling thread costs the busy threads of this process some of the GIL;
* the **worker pool** runs requests and sends the replies. It works as
  leader/followers: one idle pool thread at a time polls, and a request it
  receives it serves itself, so no thread hand-off delays a request;
* any **caller** thread sends its requests itself and waits on a Future;
  while it waits it polls too, so its reply reaches it without a hand-off.

Message kinds: ``REQUEST`` (call a function, reply expected), ``REPLY``,
``ONEWAY`` (call a function inline in the listener, no reply). Internal
request handlers that only do quick bookkeeping and never wait (marked
with a ``rpc_inline = True`` attribute) also run in the listener.

Graceful shutdown is a termination detection: every worker counts messages
sent and messages fully processed; workers repeatedly all-reduce both
counts (on a second duplicate communicator) until the sums are equal and
unchanged for two rounds, so nothing is in flight or running anywhere.
Only then do listeners stop: no request is lost and nobody hangs.
"""

from __future__ import annotations

import heapq
import itertools
import os
import queue
import threading
import time
import traceback
from collections import namedtuple

import numpy as np

from minigrad_dist.futures import Future
from minigrad_dist.mpi import load_mpi
from minigrad_dist.rpc import wire

WorkerInfo = namedtuple("WorkerInfo", ["name", "id"])
WorkerInfo.__doc__ = "A worker's name and id (its rank in the RPC world)."

REQUEST, REPLY, ONEWAY = 0, 1, 2
# Listener sleeps between polls: a blocking probe would spin and take a core (MPI_NOTES.md).
_IDLE_PAUSE = 5e-4
_BUSY_PAUSE = 2e-5
# For this long after a message (pool leader) or after sending a request (a waiting caller), pollers
# yield the CPU between polls instead of sleeping: a reply or the next request usually comes within it,
# and a sleep costs tens of microseconds to wake from. Measured: rpc_sync round trip 154 -> 62 us.
_YIELD_WINDOW = 1e-3
_RECENT = 5e-3  # seconds after a message during which the listener keeps polling closely
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
    """

    def __init__(self, name: str, comm, num_worker_threads: int = 16, rpc_timeout: float = 60.0):
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
        self._request_ids = itertools.count()
        self._tags = itertools.count()
        self._tag_limit = max(int(self.comm.Get_attr(MPI.TAG_UB) or 32767) - _FIRST_BUFFER_TAG, 1024)
        self._pending = {}
        self._deadlines = []  # heap of (deadline, request id, worker, name, timeout)
        self._lock = threading.Lock()
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
        """Call ``function(*args, **kwargs)`` on worker ``dst``; a Future of its result."""
        request_id = next(self._request_ids)
        future = _ReplyFuture(self)
        future.request_id = request_id
        with self._lock:
            self._pending[request_id] = future
        try:
            self._send(dst, REQUEST, request_id, (function, tuple(args), dict(kwargs or {})))
        except BaseException:
            with self._lock:
                self._pending.pop(request_id, None)
            raise
        timeout = self.rpc_timeout if timeout is None else timeout
        if timeout and timeout > 0:
            self._arm_timeout(future, request_id, dst, function, timeout)
        return future

    def oneway(self, dst: int, function, args=()) -> None:
        """Run ``function(*args)`` inline in ``dst``'s listener; no reply (reference counting)."""
        self._send(dst, ONEWAY, -1, (function, tuple(args), {}))

    def oneway_later(self, dst: int, function, args=()) -> None:
        """Like ``oneway``, but sent by the listener thread (safe from ``__del__`` and GC)."""
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
        MPI = self.MPI
        tag = _FIRST_BUFFER_TAG + next(self._tags) % self._tag_limit
        meta = wire.pickle.dumps((tag, [len(b) for b in buffers]), protocol=5)
        frame = len(meta).to_bytes(4, "little") + meta + header
        requests = [self.comm.Isend([frame, MPI.BYTE], dst, TAG_HEADER)]
        requests += [self.comm.Isend([b, MPI.BYTE], dst, tag) for b in buffers]
        _wait_all(requests)

    # -- receiving ---------------------------------------------------------------------------

    def _listen(self) -> None:
        _fine_timer_slack()
        pause = 0.0
        while self._running:
            if self._waiters or self._leading:
                time.sleep(_IDLE_PAUSE)  # a waiting caller or an idle pool thread polls: stay out of their way
                continue
            if self._poll_once():
                pause = 0.0
                continue
            pause = self._next_pause(pause, time.monotonic() - self._last_traffic)
            time.sleep(pause)

    def _poll_once(self, serve_here=False):
        """Receive and dispatch one message if one is there (any thread).

        Returns False if there was none, else True, or with ``serve_here`` a
        request to serve as ``(sender, request_id, autograd, body)``.
        """
        if not self._poll_lock.acquire(blocking=False):
            return False
        try:
            self._drain_outbox()
            if self._deadlines:
                self._expire_due()
            status = self.MPI.Status()
            message = self.comm.Improbe(self.MPI.ANY_SOURCE, TAG_HEADER, status)
            if message is None:
                return False
            self._last_traffic = time.monotonic()
            frame = bytearray(status.Get_count(self.MPI.BYTE))
            message.Recv([frame, self.MPI.BYTE])
            try:
                return self._receive(status.Get_source(), frame, serve_here) or True
            except BaseException:  # noqa: BLE001  (a broken message must not kill the poller)
                traceback.print_exc()
                return True
        finally:
            self._poll_lock.release()

    # -- the worker pool (leader/followers) ---------------------------------------------------

    def _work(self) -> None:
        """A pool thread: serve queued requests; when idle, lead the polling if nobody does."""
        _fine_timer_slack()
        while True:
            try:
                task = self._tasks.get_nowait()
            except queue.Empty:
                task = self._lead() or self._tasks.get()
            if task is None:
                return
            self._serve(*task)
            del task  # the request's arguments must not outlive it while this thread idles

    def _lead(self):
        """Poll as the pool's leader until a request arrives for this thread; None if another leads."""
        with self._lock:
            if self._leading or not self._running:
                return None
            self._leading = True
        try:
            pause = 0.0
            while self._running:
                try:
                    return self._tasks.get_nowait()
                except queue.Empty:
                    pass
                got = self._poll_once(serve_here=True)
                if isinstance(got, tuple):
                    return got
                if got:
                    pause = 0.0
                    continue
                since = time.monotonic() - self._last_traffic
                if since < _YIELD_WINDOW:
                    os.sched_yield()
                    continue
                pause = self._next_pause(pause, since)
                time.sleep(pause)
            return None
        finally:
            self._leading = False

    def _next_pause(self, pause, since_traffic) -> float:
        """Poll closely while replies are awaited here or traffic was recent; back off when idle."""
        if self._pending or since_traffic < _RECENT:
            return _BUSY_PAUSE
        return min(pause * 2 or _BUSY_PAUSE, _IDLE_PAUSE)

    def wait_polling(self, future, timeout) -> None:
        """Poll for messages in this thread until ``future`` is done, ``timeout`` passes or RPC stops."""
        deadline = None if timeout is None else time.monotonic() + timeout
        _fine_timer_slack()
        with self._lock:
            self._waiters += 1
        try:
            start = time.monotonic()
            while not future._done and self._running:
                if self._poll_once():
                    continue
                now = time.monotonic()
                if deadline is not None and now >= deadline:
                    return
                if now - start < _YIELD_WINDOW:
                    os.sched_yield()
                else:
                    time.sleep(_BUSY_PAUSE)
        finally:
            with self._lock:
                self._waiters -= 1

    def _receive(self, source, frame, serve_here=False):
        MPI = self.MPI
        view = memoryview(frame)
        meta_end = 4 + int.from_bytes(view[:4], "little")
        tag, sizes = wire.pickle.loads(view[4:meta_end])
        buffers = [np.empty(n, dtype=np.uint8) for n in sizes]  # bytearray would zero-fill: slow for 64 MB
        requests = [self.comm.Irecv([b, MPI.BYTE], source, tag) for b in buffers]
        _wait_all(requests)
        (kind, request_id, sender, autograd, body), tracked = wire.decode(view[meta_end:], buffers)
        if tracked and autograd is not None:
            _hooks().attach_recv(autograd, sender, [t for _, t in tracked])
        if kind == REPLY:
            self._complete(request_id, body)
        elif kind == ONEWAY:
            function, args, _ = body
            try:
                function(*args)
            finally:
                self._count_processed()
        elif getattr(body[0], "rpc_inline", False):
            self._serve(sender, request_id, autograd, body)  # quick bookkeeping: skip the pool's hand-off
        else:
            task = (sender, request_id, autograd, body)
            if serve_here:
                return task
            self._tasks.put(task)
        return None

    def _serve(self, sender, request_id, autograd, body) -> None:
        function, args, kwargs = body
        with _hooks().serving(autograd):
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

    def _complete(self, request_id, reply) -> None:
        with self._lock:
            future = self._pending.pop(request_id, None)
        try:
            if future is None or future.done():
                return  # it timed out already
            if reply[0] == "ok":
                future.set_result(reply[1])
            else:
                future.set_exception(_rebuild_remote_error(*reply[1:]))
        finally:
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

    def _arm_timeout(self, future, request_id, dst, function, timeout):
        """Remember the request's deadline; the listener fails it when the deadline passes."""
        name = getattr(function, "__qualname__", repr(function))
        with self._lock:
            heapq.heappush(self._deadlines, (time.monotonic() + timeout, request_id, dst, name, timeout))
            if len(self._deadlines) > 2 * len(self._pending) + 1024:
                # Answered requests leave their entries behind: drop them now and then.
                self._deadlines = [d for d in self._deadlines if d[1] in self._pending]
                heapq.heapify(self._deadlines)

    def _expire_due(self) -> None:
        """Fail every pending request whose deadline has passed (called by the listener)."""
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

    # -- shutdown -----------------------------------------------------------------------------

    def outstanding(self) -> int:
        """Requests this worker sent that have not been answered."""
        with self._lock:
            return len(self._pending)

    def shutdown(self, graceful: bool = True, timeout: float | None = None) -> None:
        """Stop the agent; with ``graceful``, first let every worker finish all in-flight work.

        Raises:
            TimeoutError: graceful shutdown did not converge within ``timeout`` seconds.
        """
        if graceful:
            self._wait_for_global_quiescence(timeout)
        self._running = False
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

    def _wait_for_global_quiescence(self, timeout):
        MPI = self.MPI
        deadline = None if timeout is None else time.monotonic() + timeout
        previous = None
        while True:
            while self.outstanding() or not self._outbox.empty():
                time.sleep(1e-3)
                _check_deadline(deadline, "waiting for this worker's outstanding RPCs")
            with self._lock:
                counts = np.array([self._sent, self._processed], dtype=np.int64)
            request = self.coll.Iallreduce(MPI.IN_PLACE, counts, MPI.SUM)
            pause = 1e-4
            while not request.Test():
                # Back off: a worker that sits here while the others still work must not take their CPU.
                time.sleep(pause)
                pause = min(pause * 2, _IDLE_PAUSE * 4)
                _check_deadline(deadline, "waiting for the other workers to finish")
            totals = (int(counts[0]), int(counts[1]))
            if totals[0] == totals[1] and totals == previous:
                return
            previous = totals
            time.sleep(1e-3)


class _ReplyFuture(Future):
    """The future of a request's reply: a thread that waits for it polls MPI meanwhile."""

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


_slack = threading.local()


def _fine_timer_slack() -> None:
    """Let this thread's short sleeps last what they ask (Linux rounds them up by 50 us by default)."""
    if getattr(_slack, "done", False):
        return
    _slack.done = True
    try:
        import ctypes  # noqa: PLC0415  (Linux only, best effort)

        ctypes.CDLL(None).prctl(29, 1000, 0, 0, 0)  # PR_SET_TIMERSLACK: 1 us
    except (OSError, AttributeError):
        pass


def _check_deadline(deadline, what):
    if deadline is not None and time.monotonic() > deadline:
        raise TimeoutError(f"rpc.shutdown timed out {what}")


def _wait_all(requests) -> None:
    """Wait for MPI requests without spinning (yield, then short sleeps)."""
    polls = 0
    for request in requests:
        while not request.Test():
            polls += 1
            if polls < 32:
                os.sched_yield()
            else:
                time.sleep(2e-5)


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
