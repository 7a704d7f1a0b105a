"""The public RPC API: ``init_rpc``, ``rpc_sync``, ``rpc_async``, ``remote``, ``shutdown``.

Launch with ``mpiexec -n N python script.py``; every rank calls
``init_rpc(name)`` (a collective: names are exchanged) and, at the end,
``shutdown()``, which waits until every worker has finished all in-flight
work.

Trust model: RPC sends pickled callables and arguments between the ranks of
one MPI job and runs them. Only use it among processes you trust; nothing
listens outside MPI itself.
"""

from __future__ import annotations

import pickle

from minigrad_dist import waiting
from minigrad_dist.mpi import load_mpi
from minigrad_dist.rpc import wire
from minigrad_dist.rpc.agent import RpcAgent, WorkerInfo
from minigrad_dist.topology import Topology

_UNSET = object()


class _RpcState:
    """This process's agent (None before ``init_rpc`` and after ``shutdown``)."""

    def __init__(self):
        self.agent: RpcAgent | None = None


_state = _RpcState()


def current_agent() -> RpcAgent:
    """The running agent.

    Raises:
        RuntimeError: ``init_rpc`` was not called (or RPC was shut down).
    """
    if _state.agent is None:
        raise RuntimeError("RPC is not initialized: call minigrad_dist.rpc.init_rpc(name) first on every rank")
    return _state.agent


def is_initialized() -> bool:
    """True between ``init_rpc`` and ``shutdown``."""
    return _state.agent is not None


def init_rpc(name: str, backend=None, rank: int | None = -1, world_size: int | None = None,
             rpc_backend_options=None, *, rpc_timeout=_UNSET, num_worker_threads=_UNSET, comm=None) -> None:
    """Start this worker's RPC agent; every rank of the job must call it (PyTorch's signature).

    MPI does the rendezvous: ranks and world size come from the MPI
    launcher, so ``rank`` and ``world_size`` are checks, not settings.

    Args:
        name: a unique worker name (e.g. ``f"worker{rank}"``).
        backend: None or ``rpc.BackendType.TENSORPIPE`` (whose options apply).
        rank, world_size: ``-1``/``None`` (unset) or the values this process
            expects; they must equal MPI's. When unset and the environment
            variables ``RANK``/``WORLD_SIZE`` are set (by a launcher, for the
            default communicator), those must equal MPI's.
        rpc_backend_options: a ``TensorPipeRpcBackendOptions``; its
            ``num_worker_threads`` and ``rpc_timeout`` are honoured (see
            ``minigrad_dist.rpc.options`` for the others).
        rpc_timeout, num_worker_threads: the same two settings given directly
            (default 60 s, 0 meaning no timeout, and 16 threads); not together
            with ``rpc_backend_options``.
        comm: the communicator to use (default ``MPI.COMM_WORLD``; it is duplicated).

    Raises:
        RuntimeError: RPC already initialized, rank/world_size (or RANK/WORLD_SIZE)
            disagree with MPI (raised on every rank, naming both values), a
            rank that is not an int, fewer than one worker thread, or an MPI
            library without MPI_THREAD_MULTIPLE.
        ValueError: names are not unique across workers, ``name`` is empty, or
            ``rpc_timeout`` is negative or NaN.
        TypeError: ``backend`` is not a ``BackendType``, ``rpc_backend_options``
            is not a ``TensorPipeRpcBackendOptions`` or comes with
            ``rpc_timeout``/``num_worker_threads``, or ``rpc_timeout`` is not a number.
    """
    from minigrad_dist import collectives  # noqa: PLC0415  (the launcher checks are shared with init_process_group)
    from minigrad_dist.rpc.options import BackendType, TensorPipeRpcBackendOptions  # noqa: PLC0415

    if _state.agent is not None:
        raise RuntimeError("init_rpc was already called; call rpc.shutdown() first")
    if not isinstance(name, str) or not name:
        raise ValueError(f"init_rpc: name must be a non-empty string, got {name!r}")
    if backend is not None and not isinstance(backend, BackendType):
        raise TypeError(f"init_rpc: backend must be a member of rpc.BackendType (or None), got {backend!r}")
    if rpc_backend_options is not None:
        if not isinstance(rpc_backend_options, TensorPipeRpcBackendOptions):
            raise TypeError(
                "init_rpc: rpc_backend_options must be an rpc.TensorPipeRpcBackendOptions, got "
                f"{type(rpc_backend_options).__name__}"
            )
        if rpc_timeout is not _UNSET or num_worker_threads is not _UNSET:
            raise TypeError("init_rpc: pass rpc_timeout and num_worker_threads in rpc_backend_options or as "
                            "arguments, not both")
        rpc_timeout, num_worker_threads = rpc_backend_options.rpc_timeout, rpc_backend_options.num_worker_threads
    rpc_timeout = 60.0 if rpc_timeout is _UNSET else rpc_timeout
    num_worker_threads = 16 if num_worker_threads is _UNSET else num_worker_threads
    _check_timeout(rpc_timeout, "init_rpc", "rpc_timeout")
    if isinstance(num_worker_threads, bool) or not isinstance(num_worker_threads, int) or num_worker_threads < 1:
        raise RuntimeError(f"init_rpc: num_worker_threads must be a positive int, got {num_worker_threads!r}")
    for what, value in (("rank", rank), ("world_size", world_size)):
        if value is not None and not collectives._is_rank_like(value):
            raise RuntimeError(f"init_rpc: {what} must be an int (or -1/None for unset), got {value!r}")
    MPI = load_mpi()
    use_env = comm is None
    comm = comm if comm is not None else MPI.COMM_WORLD
    problem = collectives._launch_mismatch(comm, rank, world_size, use_env, fn="init_rpc")
    # Every rank learns every rank's verdict, so a mistake on one rank fails them all (no rank waits alone).
    problems = [p for p in comm.allgather(problem) if p is not None]
    if problems:
        raise RuntimeError(problem or f"init_rpc failed on another rank: {problems[0]}")
    _install_failure_handlers()
    waiting.set_oversubscribed(Topology.of(comm).oversubscribed)
    agent = RpcAgent(name, comm, num_worker_threads=num_worker_threads, rpc_timeout=rpc_timeout)
    _state.agent = agent  # registered before it serves: handlers look it up
    agent.start()


def _install_failure_handlers():
    try:
        from minigrad_dist import failure  # noqa: PLC0415  (optional module of the reliability layer)
    except ImportError:
        return
    failure.install_failure_handlers()


def shutdown(graceful: bool = True, timeout: float | None = None) -> None:
    """Stop RPC on this worker.

    With ``graceful`` (the default) this is collective: it returns once every
    worker called it, this worker's requests and ``async_execution`` calls
    have their values, and no request, reply or reference-count message is
    in flight or running anywhere. Without it, pending futures fail at once.
    Either way the values this worker owned for RRefs are freed.

    Raises:
        RuntimeError: RPC is not initialized.
        TimeoutError: graceful shutdown did not converge within ``timeout``
            seconds.
    """
    agent = current_agent()
    try:
        agent.shutdown(graceful=graceful, timeout=timeout)
    finally:
        _state.agent = None


def get_worker_info(worker_name: str | None = None) -> WorkerInfo:
    """``WorkerInfo(name, id)`` of ``worker_name`` (default: this worker).

    Raises:
        ValueError: no worker has that name.
    """
    agent = current_agent()
    if worker_name is None:
        return agent.info
    if worker_name not in agent.by_name:
        raise ValueError(f"unknown worker {worker_name!r}; workers are {sorted(agent.by_name)}")
    return agent.by_name[worker_name]


def resolve(to) -> WorkerInfo:
    """A worker given by name, id or WorkerInfo.

    Raises:
        ValueError: no such worker. TypeError: ``to`` has another type.
    """
    agent = current_agent()
    if isinstance(to, WorkerInfo):
        return agent.workers[to.id]
    if isinstance(to, str):
        return get_worker_info(to)
    if isinstance(to, int) and not isinstance(to, bool):
        if not 0 <= to < agent.size:
            raise ValueError(f"worker id {to} is out of range [0, {agent.size})")
        return agent.workers[to]
    raise TypeError(f"to must be a worker name, id or WorkerInfo, got {type(to).__name__}")


def _check_timeout(timeout, fn: str, name: str = "timeout") -> None:
    """A timeout is a number of seconds >= 0 (0: none); NaN and negative values are refused."""
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)):
        raise TypeError(f"{fn}: {name} must be a number of seconds, got {type(timeout).__name__}")
    if not timeout >= 0:
        raise ValueError(f"{fn}: {name} must be >= 0 seconds (0: no timeout), got {timeout!r}")


def _check_call(fn: str, func, args, kwargs, timeout=_UNSET):
    """The checks every call makes on the caller, before anything is sent; errors start with ``fn``."""
    if not callable(func):
        raise TypeError(f"{fn}: func must be callable, got {type(func).__name__}")
    try:
        pickle.dumps(func)
    except Exception as error:  # noqa: BLE001  (PicklingError, AttributeError for local objects, ...)
        raise TypeError(
            f"{fn}: func must be picklable to be sent (a function defined at the top level of a module), "
            f"got {func!r}: {type(error).__name__}: {error}"
        ) from None
    if not isinstance(args, (tuple, list)):
        raise TypeError(f"{fn}: args must be a tuple, got {type(args).__name__}")
    if kwargs is not None:
        if not isinstance(kwargs, dict):
            raise TypeError(f"{fn}: kwargs must be a dict, got {type(kwargs).__name__}")
        for key in kwargs:
            if not isinstance(key, str):
                raise TypeError(f"{fn}: kwargs keys must be argument names (str), got {key!r:.40}")
    if timeout is not _UNSET and timeout is not None:
        _check_timeout(timeout, fn)


def _send_call(fn: str, to, func, args, kwargs, send):
    """``send()``; when it fails because an argument cannot be pickled, a TypeError naming that argument.

    Raised on the caller before anything of the call is sent; the agent goes on serving.
    """
    try:
        return send()
    except Exception as error:
        culprit = wire.unpicklable_argument(args, kwargs)
        if culprit is None:
            raise
        label, value, cause = culprit
        name = getattr(func, "__qualname__", repr(func))
        raise TypeError(
            f"{fn}(to={to!r}, func={name}): argument {label} (a {type(value).__module__}.{type(value).__qualname__}) "
            f"cannot be pickled to be sent: {type(cause).__name__}: {cause}. RPC arguments must be picklable: "
            "pass data (numbers, strings, arrays, Tensors, RRefs) or top-level functions, not locks, open files, "
            "lambdas or local functions"
        ) from error


def rpc_async(to, func, args=(), kwargs=None, timeout=_UNSET):
    """Run ``func(*args, **kwargs)`` on worker ``to``; returns a Future at once.

    The future's ``wait()`` returns the result or re-raises the remote
    exception (same type where possible) with the remote traceback in its
    message. ``timeout`` in seconds (default: init_rpc's ``rpc_timeout``; 0: none)
    fails the future with ``RpcTimeoutError``. For a function decorated with
    ``rpc.functions.async_execution`` the result is the value of the Future
    it returns on ``to``.

    Raises:
        TypeError: ``func`` is not callable or cannot be pickled, an argument
            cannot be pickled (the message names it, ``args[i]`` or
            ``kwargs['name']``, and the call), ``args`` is not a tuple,
            ``kwargs`` not a dict with str keys, or ``timeout`` not a number.
        ValueError: an unknown worker, or a negative or NaN ``timeout``.
    """
    return _call_async("rpc_async", to, func, args, kwargs, timeout)


def _call_async(fn: str, to, func, args, kwargs, timeout):
    from minigrad_dist.rpc import functions  # noqa: PLC0415  (functions builds on this module)

    _check_call(fn, func, args, kwargs, timeout)
    worker = resolve(to)
    agent = current_agent()
    timeout = None if timeout is _UNSET else timeout
    if functions.is_async(func):
        return _send_call(fn, to, func, args, kwargs, lambda: functions.call_async(worker, func, args, kwargs, timeout))
    return _send_call(fn, to, func, args, kwargs, lambda: agent.request(worker.id, func, args, kwargs, timeout))


def rpc_sync(to, func, args=(), kwargs=None, timeout=_UNSET):
    """Run ``func(*args, **kwargs)`` on worker ``to`` and return its result (blocking).

    Raises:
        Whatever the remote function raised (with the remote traceback), or
        ``RpcTimeoutError`` after ``timeout`` seconds; the TypeErrors and
        ValueErrors of ``rpc_async``, raised here on the caller.
    """
    return _call_async("rpc_sync", to, func, args, kwargs, timeout).wait()


def remote(to, func, args=(), kwargs=None, timeout=_UNSET):
    """Run ``func`` on worker ``to`` and return at once an ``RRef`` to its (future) result.

    The owner computes while the caller goes on; ``rref.to_here()`` waits for
    the value. An exception raised by ``func`` is re-raised by ``to_here()``.
    For an ``async_execution`` function the value is that of its Future.

    Raises:
        TypeError, ValueError: as ``rpc_async`` (an argument that cannot be
            pickled is named), on the caller.
    """
    from minigrad_dist.rpc import functions  # noqa: PLC0415  (functions builds on this module)
    from minigrad_dist.rpc.rref import create_remote  # noqa: PLC0415  (rref builds on this module)

    _check_call("remote", func, args, kwargs, timeout)
    make = functions.remote_async if functions.is_async(func) else create_remote
    worker, args, kwargs = resolve(to), tuple(args), dict(kwargs or {})
    timeout = None if timeout is _UNSET else timeout
    return _send_call("remote", to, func, args, kwargs, lambda: make(worker, func, args, kwargs, timeout))
