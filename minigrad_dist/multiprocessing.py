"""``spawn`` and ``Process`` as ``torch.multiprocessing`` has them, with the new processes as one MPI job.

PyTorch's tutorials start their ranks from a plain ``python script.py``::

    mp.spawn(train, args=(world_size,), nprocs=world_size)          # train(rank, world_size) on every rank

    for rank in range(size):                                         # or one Process per rank
        p = mp.Process(target=init_process, args=(rank, size, run))
        p.start()
        processes.append(p)
    for p in processes:
        p.join()

Here the processes become the ranks of one ``mpiexec`` job, so
``init_process_group`` in them builds its world from MPI: the process that
``spawn`` passes rank r, or the r-th ``Process`` started, is MPI rank r.

How it works:

1. The parent pickles each rank's function and arguments (functions travel
   by module and name, as with Python's ``spawn`` start method: define them
   at the top level of a module or of the script) into a job directory.
2. It runs ``mpiexec -n N python -c 'run_spawned_rank()'`` with the
   ``mpiexec`` of this environment. The parent is a coordinator, not a rank,
   as in PyTorch.
3. Each rank re-imports the parent's main script as ``__mp_main__`` (its
   ``if __name__ == "__main__":`` block does not run again), unpickles its
   function, runs it, and records the outcome in the job directory: done,
   the traceback of an exception, or the status of ``sys.exit(status)``.
4. When a rank fails, the parent stops the whole job (the other ranks
   might otherwise wait forever in a collective with it) and raises
   ``ProcessRaisedException`` (or ``ProcessExitedException``) naming the
   rank, with the rank's traceback, as PyTorch's. The parent kills the
   job's process group rather than letting the failed rank exit: then
   ``mpiexec`` stops the others quietly, without its "BAD TERMINATION" banner.

``Process``: the processes started before the first ``join()`` (or before
reading ``pid``, ``exitcode`` or ``is_alive()``) form one job: start every
rank's process, then join them, as the tutorials do. A process started
after that forms a new job and cannot talk to the earlier ones
(``init_process_group`` then reports a world size mismatch).

Why not ``MPI.COMM_SELF.Spawn`` from the parent: measured with this MPICH,
when a spawned rank fails (``MPI_Abort``, or any exit without
``MPI_Finalize``) the process manager kills the spawning parent too, so the
parent could never report the failure (with its ``-disable-auto-cleanup``
the parent gets a storm of SIGUSR1 instead, and the other ranks stay stuck);
running ``mpiexec`` as a child keeps the parent out of the job.
"""

from __future__ import annotations

import atexit
import itertools
import os
import pickle
import runpy
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback
import types
from pathlib import Path

from minigrad_dist import run as launcher
from minigrad_dist import waiting

__all__ = [
    "Process", "ProcessContext", "ProcessException", "ProcessExitedException", "ProcessRaisedException",
    "get_start_method", "run_spawned_rank", "set_start_method", "spawn",
]

_POLL_SECONDS = 0.02
# The parent watches the job's files (a coordinator, not a rank: nothing to yield to).
_FILE_POLLING = waiting.Backoff(yield_window=0.0, first_sleep=_POLL_SECONDS, longest_sleep=_POLL_SECONDS)
# After a rank recorded a failure, the parent stops the job this much later (the launcher forwards the
# rank's last output meanwhile); the failed rank waits at most _FAILED_RANK_WAIT for that, then exits itself.
_STOP_GRACE_SECONDS = 0.3
_FAILED_RANK_WAIT = 30.0
_CHILD_CODE = "from minigrad_dist.multiprocessing import run_spawned_rank; run_spawned_rank()"


class ProcessException(Exception):
    """A spawned process failed. ``error_index`` is its rank, ``error_pid`` its process id (None if unknown)."""

    def __init__(self, msg: str, error_index: int, error_pid):
        super().__init__(msg)
        self.msg = msg
        self.error_index = error_index
        self.error_pid = error_pid

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.error_pid)


class ProcessRaisedException(ProcessException):
    """A spawned process raised an exception; the message holds its traceback."""


class ProcessExitedException(ProcessException):
    """A spawned process exited with a non-zero status, or was killed by a signal (``signal_name``)."""

    def __init__(self, msg: str, error_index: int, error_pid, exit_code: int, signal_name: str | None = None):
        super().__init__(msg, error_index, error_pid)
        self.exit_code = exit_code
        self.signal_name = signal_name

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.error_pid, self.exit_code, self.signal_name)


# -- the start method ------------------------------------------------------------------


class _StartMethod:
    value: str | None = None
    importing_main = False  # True while a new rank re-imports the parent's main script


def _check_not_bootstrapping(what: str) -> None:
    if _StartMethod.importing_main:
        raise RuntimeError(
            f"{what} was called while a new process imported the main script: start processes only under "
            "`if __name__ == \"__main__\":`, as Python's spawn start method requires"
        )


def set_start_method(method: str, force: bool = False) -> None:
    """Accepts ``"spawn"`` (processes here always start as fresh interpreters: new MPI ranks).

    Raises:
        ValueError: another method (``fork``/``forkserver`` cannot start MPI ranks).
        RuntimeError: a method was already set and ``force`` is False.
    """
    if method != "spawn":
        raise ValueError(
            f"set_start_method: {method!r} is not available: minigrad_dist processes start as new MPI ranks, "
            "in fresh interpreters; use 'spawn'"
        )
    if _StartMethod.value is not None and not force:
        raise RuntimeError("set_start_method: the start method was already set (pass force=True)")
    _StartMethod.value = method


def get_start_method(allow_none: bool = False) -> str | None:
    """``"spawn"`` (None with ``allow_none`` before ``set_start_method`` was called)."""
    if _StartMethod.value is None and allow_none:
        return None
    return "spawn"


# -- one mpiexec job ---------------------------------------------------------------------


class _Job:
    """One ``mpiexec`` launch whose rank r runs ``tasks[r]``; the parent watches the job directory.

    Each task is ``(function, args, kwargs, print_errors)``.
    """

    def __init__(self, tasks, daemon: bool):
        self.tasks = tasks
        self.daemon = daemon
        self.directory = None
        self.proc = None
        self.returncode = None
        self.failed_at = None
        self.records = None  # per rank (outcome, pid), read when the job ends; then the directory is removed
        self.shm_before = set()

    @property
    def size(self) -> int:
        return len(self.tasks)

    def start(self) -> None:
        """Write the payload and start ``mpiexec`` (pickling errors surface here, in the parent)."""

        main = sys.modules.get("__main__")
        main_spec = getattr(main, "__spec__", None)
        payload = {
            "sys_path": list(sys.path),
            "main_module": main_spec.name if main_spec is not None else None,
            "main_path": getattr(main, "__file__", None),
        }
        for function, _, _, _ in self.tasks:
            if getattr(function, "__module__", None) == "__main__" and payload["main_path"] is None:
                raise ValueError(
                    f"{function!r} is defined in an interactive session; define it in a module or script file "
                    "so the new processes can import it"
                )
        try:
            tasks = pickle.dumps(self.tasks, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception as error:
            error.add_note(
                "minigrad_dist.multiprocessing pickles each process's function and arguments: define the function "
                "at the top level of a module or script, and pass picklable arguments"
            )
            raise
        self.directory = Path(tempfile.mkdtemp(prefix="minigrad-spawn-"))
        (self.directory / "job.pkl").write_bytes(pickle.dumps((payload, tasks), protocol=pickle.HIGHEST_PROTOCOL))
        command = [
            launcher.find_mpiexec(), "-n", str(self.size), sys.executable, "-c", _CHILD_CODE, str(self.directory),
        ]
        self.shm_before = launcher.shared_memory_files()
        self.proc = subprocess.Popen(command, env=launcher.rank_environment(dict(os.environ)), start_new_session=True)
        _running.add(self)

    def outcome(self, rank: int):
        """``("done",)``, ``("raised", traceback)``, ``("exited", status)`` or None (no record: killed)."""
        if self.records is not None:
            return self.records[rank][0]
        base = self.directory / f"rank-{rank}"
        if base.with_suffix(".error").exists():
            return "raised", pickle.loads(base.with_suffix(".error").read_bytes())
        if base.with_suffix(".exit").exists():
            return "exited", int(base.with_suffix(".exit").read_text())
        if base.with_suffix(".done").exists():
            return ("done",)
        return None

    def pid(self, rank: int, wait: bool = True):
        """Rank ``rank``'s process id (waits until it has started, unless the job already ended)."""
        path = self.directory / f"rank-{rank}.pid"
        if wait:
            waiting.wait_until(lambda: self.records is not None or path.exists() or self.poll(), backoff=_FILE_POLLING)
        if self.records is not None:
            return self.records[rank][1]
        return int(path.read_text()) if path.exists() else None

    def poll(self) -> bool:
        """True once the job has ended (a failed rank's job is stopped here)."""
        if self.returncode is not None:
            return True
        if self.proc.poll() is not None:
            self._finish(self.proc.returncode)
            return True
        if self.failed_at is None and any(p.suffix in (".error", ".exit") for p in self.directory.iterdir()):
            self.failed_at = time.monotonic()
        if self.failed_at is not None and time.monotonic() - self.failed_at > _STOP_GRACE_SECONDS:
            self.kill()
            return True
        return False

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until the job ends; False if ``timeout`` seconds passed first.

        Interrupted (Ctrl-C reaches only this process: the job runs in a
        session of its own), it stops the job before re-raising.
        """
        try:
            return waiting.wait_until(self.poll, timeout, _FILE_POLLING)
        except BaseException:
            self.kill()
            raise

    def kill(self) -> None:
        """Stop every rank of the job now (and remove the shared-memory files its killed ranks left)."""
        if self.proc is not None and launcher.kill_process_group(self.proc):
            launcher.remove_orphaned_shared_memory(launcher.shared_memory_files() - self.shm_before)
        if self.proc is not None:
            self._finish(self.proc.returncode)

    def _finish(self, returncode) -> None:
        pids = [self.directory / f"rank-{rank}.pid" for rank in range(self.size)]
        self.records = [(self.outcome(rank), int(pid.read_text()) if pid.exists() else None)
                        for rank, pid in enumerate(pids)]
        self.returncode = returncode
        shutil.rmtree(self.directory, ignore_errors=True)
        _running.discard(self)

    def exitcode(self, rank: int):
        """Rank ``rank``'s exit status as ``multiprocessing.Process.exitcode`` gives it (None while running)."""
        if not self.poll():
            return None
        outcome = self.outcome(rank)
        if outcome is None:
            return -signal.SIGKILL  # stopped by mpiexec after another rank failed, or killed
        return {"done": 0, "raised": 1}.get(outcome[0], outcome[-1])

    def failure(self):
        """The exception describing the first failed rank, or None when every rank succeeded."""
        outcomes = [self.outcome(r) for r in range(self.size)]
        for rank, outcome in enumerate(outcomes):
            if outcome is not None and outcome[0] == "raised":
                message = f"\n\n-- Process {rank} terminated with the following error:\n{outcome[1]}"
                return ProcessRaisedException(message, rank, self.pid(rank, wait=False))
        for rank, outcome in enumerate(outcomes):
            if outcome is not None and outcome[0] == "exited":
                return ProcessExitedException(
                    f"process {rank} terminated with exit code {outcome[1]}", rank, self.pid(rank, wait=False),
                    exit_code=outcome[1],
                )
        unfinished = [r for r, outcome in enumerate(outcomes) if outcome is None]
        if not unfinished:
            return None
        code = self.returncode if self.returncode is not None else -1
        name = _signal_name(code)
        how = f"signal {name}" if name else f"exit code {code}"
        message = (
            f"process {unfinished[0]} terminated with {how} (reported by mpiexec; rank(s) {unfinished} ended "
            "without finishing)"
        )
        return ProcessExitedException(message, unfinished[0], self.pid(unfinished[0], wait=False), code, name)


def _signal_name(code: int):
    """mpiexec reports a rank killed by a signal with the signal's number as its status."""
    try:
        return signal.Signals(code).name if 0 < code < 65 and code not in (1, 2) else None
    except ValueError:
        return None


_running: set = set()


@atexit.register
def _finish_jobs_at_exit() -> None:
    """Like Python's multiprocessing: wait for non-daemon work at exit, kill daemon work."""
    _Batch.launch()
    for job in list(_running):
        if job.daemon:
            job.kill()
        else:
            job.wait()


# -- spawn ----------------------------------------------------------------------------------


class ProcessContext:
    """What ``spawn(..., join=False)`` returns: ``join()`` the ranks, or read their ``pids()``."""

    def __init__(self, job: _Job):
        self._job = job

    def pids(self) -> list:
        """The process ids of the ranks (waits until each has started)."""
        return [self._job.pid(rank) for rank in range(self._job.size)]

    def join(self, timeout: float | None = None) -> bool:
        """Wait for the ranks; True once all succeeded, False if ``timeout`` passed first.

        Raises:
            ProcessRaisedException: a rank raised (its traceback in the message); the job was stopped.
            ProcessExitedException: a rank exited with a non-zero status or was killed.
        """
        if not self._job.wait(timeout):
            return False
        failure = self._job.failure()
        if failure is not None:
            raise failure
        return True


def spawn(fn, args=(), nprocs: int = 1, join: bool = True, daemon: bool = False, start_method: str = "spawn"):
    """Run ``fn(rank, *args)`` in ``nprocs`` new processes, the ranks 0..nprocs-1 of one MPI job.

    Args:
        fn: a function defined at the top level of a module or of the main
            script (it is pickled by name); it receives its rank first.
        args: the other arguments (picklable).
        nprocs: how many processes (the world size).
        join: wait for them (default); otherwise return a ``ProcessContext``.
        daemon: kill the processes when this process exits instead of waiting for them.
        start_method: ``"spawn"`` (the only one: the processes are new MPI ranks).

    Returns:
        None when ``join``, else a ``ProcessContext``.

    Raises:
        ProcessRaisedException / ProcessExitedException: a rank failed (see ``ProcessContext.join``).
        ValueError: ``nprocs`` < 1, a start method other than ``"spawn"``, or
            ``fn`` defined in an interactive session.
        TypeError: ``fn`` is not callable, or ``args`` not a tuple.
        pickle.PicklingError / AttributeError: ``fn`` or ``args`` cannot be
            pickled (a lambda or local function, say).
    """
    _check_not_bootstrapping("spawn")
    if start_method != "spawn":
        raise ValueError(
            f"spawn: start_method {start_method!r} is not available: the processes are new MPI ranks; use 'spawn'"
        )
    if not callable(fn):
        raise TypeError(f"spawn: fn must be callable, got {type(fn).__name__}")
    if not isinstance(args, tuple):
        raise TypeError(f"spawn: args must be a tuple, got {type(args).__name__}")
    if isinstance(nprocs, bool) or not isinstance(nprocs, int) or nprocs < 1:
        raise ValueError(f"spawn: nprocs must be a positive int, got {nprocs!r}")
    job = _Job([(fn, (rank, *args), {}, False) for rank in range(nprocs)], daemon)
    job.start()
    context = ProcessContext(job)
    if not join:
        return context
    while not context.join():
        pass
    return None


# -- Process ----------------------------------------------------------------------------------


class _Batch:
    """Processes started since the last launch; they become one job at the first join/pid/exitcode/is_alive."""

    pending: list = []

    @classmethod
    def launch(cls) -> None:
        processes, cls.pending = cls.pending, []
        if not processes:
            return
        daemon = all(p.daemon for p in processes)
        job = _Job([(p.run, (), {}, True) for p in processes], daemon)
        try:
            job.start()
        except BaseException:
            for p in processes:
                p._started = False
            raise
        for rank, p in enumerate(processes):
            p._job, p._rank = job, rank


_process_numbers = itertools.count(1)


class Process:
    """A process that runs ``target(*args, **kwargs)`` (or an overridden ``run()``), as ``multiprocessing.Process``.

    Processes started before the first ``join()`` form one MPI job (see the
    module docstring): their ranks are their start order. When one raises,
    it prints its traceback and the job stops: the failed process's
    ``exitcode`` is 1, and processes stopped with it report ``-SIGKILL``.

    Args:
        group: must be None (as in Python).
        target, args, kwargs: what ``run()`` calls (``target`` pickled by name).
        name: a name (default ``Process-N``).
        daemon: kill the job when the parent exits instead of waiting for it.
    """

    def __init__(self, group=None, target=None, name=None, args=(), kwargs=None, *, daemon=None):
        if group is not None:
            raise ValueError("Process: group must be None")
        self._target = target
        self._args = tuple(args)
        self._kwargs = dict(kwargs or {})
        self.name = name or f"Process-{next(_process_numbers)}"
        self.daemon = bool(daemon)
        self._started = False
        self._job = None
        self._rank = None

    def run(self) -> None:
        """What the process runs: ``target(*args, **kwargs)``. Subclasses may override it."""
        if self._target is not None:
            self._target(*self._args, **self._kwargs)

    def start(self) -> None:
        """Start the process (its job launches when the first process of the batch is joined).

        Raises:
            AssertionError: the process was already started (as in Python).
        """
        _check_not_bootstrapping("Process.start")
        if self._started:
            raise AssertionError("cannot start a process twice")
        self._started = True
        _Batch.pending.append(self)

    def _launched_job(self) -> _Job:
        if not self._started:
            raise AssertionError(f"{self.name} was not started: call start() first")
        if self._job is None:
            _Batch.launch()
        return self._job

    def join(self, timeout: float | None = None) -> None:
        """Wait until the process ends (at most ``timeout`` seconds)."""
        self._launched_job().wait(timeout)

    def is_alive(self) -> bool:
        """True while the process runs."""
        return self._started and self._launched_job().exitcode(self._rank) is None

    @property
    def exitcode(self):
        """None while running (or before start), 0 on success, 1 after an exception, else the exit status."""
        if not self._started:
            return None
        return self._launched_job().exitcode(self._rank)

    @property
    def pid(self):
        """The process id (None before ``start()``; waits until the process exists)."""
        if not self._started:
            return None
        return self._launched_job().pid(self._rank)

    def terminate(self) -> None:
        """Stop the process, and with it every process of its job."""
        self._launched_job().kill()

    kill = terminate

    def __getstate__(self):
        return {"_target": self._target, "_args": self._args, "_kwargs": self._kwargs, "name": self.name,
                "daemon": self.daemon}

    def __setstate__(self, state):
        self.__dict__.update(state, _started=True, _job=None, _rank=None)

    def __repr__(self):
        if not self._started:
            state = "initial"
        elif self._job is None or self._job.exitcode(self._rank) is None:
            state = "started"
        else:
            state = f"exitcode={self._job.exitcode(self._rank)}"
        return f"<{type(self).__name__} name={self.name!r} {state}>"


# -- inside each rank ----------------------------------------------------------------------------


def run_spawned_rank(directory: str | None = None) -> None:
    """Run this rank's task of the job in ``directory`` (default ``sys.argv[1]``); called inside each new rank.

    Records the outcome in the job directory (see the module docstring).
    After an exception (or a non-zero ``sys.exit``) it waits for the parent
    to stop the job, and exits with status 1 (or the given status) if the
    parent does not within 30 s.
    """
    from minigrad_dist.launch import launcher_environment  # noqa: PLC0415

    directory = Path(directory if directory is not None else sys.argv[1])
    rank = int(launcher_environment()["RANK"])
    base = directory / f"rank-{rank}"
    _write(base.with_suffix(".pid"), str(os.getpid()).encode())
    label, print_errors = f"rank {rank}", False
    try:
        payload, tasks = pickle.loads((directory / "job.pkl").read_bytes())
        sys.path[:] = payload["sys_path"]
        _import_parent_main(payload)
        function, args, kwargs, print_errors = pickle.loads(tasks)[rank]
        label = getattr(getattr(function, "__self__", None), "name", label)
        function(*args, **kwargs)
    except SystemExit as stop:
        status = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
        if status != 0:
            _write(base.with_suffix(".exit"), str(status).encode())
            _flush_and_exit(status)
    except KeyboardInterrupt:
        pass  # as PyTorch's spawned processes: the parent sees the others' outcome
    except BaseException:  # noqa: BLE001  (reported to the parent)
        text = traceback.format_exc()
        if print_errors:  # as Python's multiprocessing.Process does
            sys.stderr.write(f"Process {label}:\n{text}")
        _write(base.with_suffix(".error"), pickle.dumps(text))
        _flush_and_exit(1)
    _write(base.with_suffix(".done"), b"")


def _import_parent_main(payload) -> None:
    """Make the parent's main script importable as ``__main__`` (run as ``__mp_main__``: its guard stays shut)."""
    _StartMethod.importing_main = True
    try:
        if payload["main_module"] is not None:
            content = runpy.run_module(payload["main_module"], run_name="__mp_main__", alter_sys=False)
        elif payload["main_path"] is not None:
            content = runpy.run_path(payload["main_path"], run_name="__mp_main__")
        else:
            return
    finally:
        _StartMethod.importing_main = False
    module = types.ModuleType("__mp_main__")
    module.__dict__.update(content)
    sys.modules["__main__"] = sys.modules["__mp_main__"] = module


def _write(path: Path, data: bytes) -> None:
    """Write ``data`` so that the parent never reads a half-written file."""
    partial = path.with_name(path.name + ".partial")
    partial.write_bytes(data)
    os.replace(partial, path)


def _flush_and_exit(status: int) -> None:
    """Wait for the parent to stop the job (it saw the failure record); exit by ourselves if it does not."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    time.sleep(_FAILED_RANK_WAIT)
    os._exit(status)  # no MPI_Finalize: the other ranks may be waiting for this one; the launcher stops them
