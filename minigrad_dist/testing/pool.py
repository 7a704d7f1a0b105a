"""A persistent pool of MPI ranks that runs functions on demand.

Why a pool: hypothesis draws examples (and shrinks failures) in the calling
process; shipping each drawn case to already-running ranks means every rank
runs exactly the same case, ranks never disagree on what to test, and a
failure shrinks normally instead of deadlocking. It also saves the start-up
cost of ``mpiexec`` per example.

Protocol: the pool is ``mpiexec -n N python -m minigrad_dist.testing.pool_worker``.
The calling process writes one line per task to rank 0's stdin (base64 of a
pickled ``(function path, args)``); rank 0 broadcasts it, every rank runs
``function(*args)``, rank 0 gathers each rank's result or traceback and
prints one line ``@@RESULT <base64 pickle>``. Every task has a timeout: if
no result line arrives in time, the pool is killed (all ranks) and the call
fails with whatever the ranks printed.

Functions travel by name (``module:qualname``), so they must be top-level
functions of a module the ranks can import: the ranks get the calling
process's working directory and its project entries of ``sys.path``.

Warning:
    Tasks are pickles and are unpickled on the ranks: only run trusted code.
"""

from __future__ import annotations

import atexit
import base64
import os
import pickle
import selectors
import signal
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

from minigrad._checks import expect_at_least
from minigrad_dist.run import kill_process_group

RESULT_PREFIX = "@@RESULT "
WORKER_MODULE = "minigrad_dist.testing.pool_worker"


def mpiexec() -> str:
    """The ``mpiexec`` next to the running Python (the mpich wheel's), else the one on PATH."""
    candidate = Path(sys.executable).with_name("mpiexec")
    return str(candidate) if candidate.exists() else "mpiexec"


def _project_paths() -> list:
    """Entries of ``sys.path`` that are not the interpreter's own (stdlib, site-packages)."""
    installed = {Path(p).resolve() for p in sysconfig.get_paths().values() if p}
    prefixes = {Path(p).resolve() for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)}
    paths = []
    for entry in sys.path:
        path = Path(entry or os.getcwd()).resolve()
        if not path.exists() or path in installed or any(path.is_relative_to(p) for p in prefixes):
            continue
        if str(path) not in paths:
            paths.append(str(path))
    return paths


def mpi_env(extra=None) -> dict:
    """Environment for MPI child processes: one BLAS thread each, this process's modules importable.

    Args:
        extra: variables to set on top (they win).
    """
    env = dict(os.environ)
    env.setdefault("OPENBLAS_NUM_THREADS", "1")
    env.setdefault("OMP_NUM_THREADS", "1")
    inherited = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(_project_paths() + inherited))
    env.update(extra or {})
    return env


class RankFailure(AssertionError):
    """A task raised on some rank; the message holds every failing rank's traceback."""


class PoolTimeout(AssertionError):
    """A task did not finish in time, or the ranks died; the pool was killed."""


class MPIPool:
    """``world_size`` ranks waiting for tasks (see the module docstring).

    Args:
        world_size: number of ranks.
        env: extra environment variables for the ranks.
        cwd: the ranks' working directory (default: this process's, when the pool starts).
    """

    def __init__(self, world_size: int, env=None, cwd=None):
        expect_at_least("world_size", world_size, 1)
        self.world_size = world_size
        self.env = env
        self.cwd = cwd
        self.proc = None
        self.output_tail = []
        self._unread = bytearray()

    def start(self) -> None:
        """Launch the ranks (``run`` does this when needed)."""
        self.proc = subprocess.Popen(
            [mpiexec(), "-n", str(self.world_size), sys.executable, "-u", "-m", WORKER_MODULE],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            env=mpi_env(self.env),
            cwd=str(self.cwd or os.getcwd()),
            start_new_session=True,
            text=True,
            bufsize=1,
        )
        self.output_tail = []
        self._unread = bytearray()

    def run(self, function, *args, timeout: float = 120.0) -> list:
        """Run ``function(*args)`` on every rank; return the per-rank results (index = rank).

        ``function`` must be a top-level function; ``args`` and the results are pickled.

        Raises:
            RankFailure: some rank raised (tracebacks included); the pool is restarted next time.
            PoolTimeout: no answer within ``timeout`` seconds (pool restarted next time).
        """
        if self.proc is None or self.proc.poll() is not None:
            self.start()
        task = (f"{function.__module__}:{function.__qualname__}", args)
        line = base64.b64encode(pickle.dumps(task)).decode()
        try:
            self.proc.stdin.write(line + "\n")
            self.proc.stdin.flush()
        except BrokenPipeError:
            self._kill()
            tail = "".join(self.output_tail)
            raise PoolTimeout("the MPI pool died before the task was sent:\n" + tail) from None
        results = self._read_result(timeout)
        failures = [(rank, r[1]) for rank, r in enumerate(results) if r[0] == "error"]
        if failures:
            self._kill()  # a failed rank may have left communicators mid-collective: start afresh
            message = "\n".join(f"--- rank {rank} ---\n{tb}" for rank, tb in failures)
            ranks = [r for r, _ in failures]
            raise RankFailure(f"{function.__qualname__} failed on rank(s) {ranks}:\n{message}")
        return [r[1] for r in results]

    def _read_result(self, timeout):
        deadline = time.monotonic() + timeout
        while True:
            line = self._next_line(deadline)
            if line is None:
                self._kill()
                raise PoolTimeout(
                    f"no result from the {self.world_size}-rank pool within {timeout:g} s; "
                    "killed it. Last output:\n" + "".join(self.output_tail[-40:])
                )
            if not line:
                self._kill()
                raise PoolTimeout("the MPI pool exited. Last output:\n" + "".join(self.output_tail[-40:]))
            if line.startswith(RESULT_PREFIX):
                return pickle.loads(base64.b64decode(line[len(RESULT_PREFIX) :]))
            self.output_tail = (self.output_tail + [line])[-200:]

    def _next_line(self, deadline):
        """The ranks' next line of output; None when ``deadline`` passes first, "" when they exited.

        Reads the pipe's file descriptor itself: a buffered ``readline`` could
        take the result line into its buffer together with a printed line
        before it, and the next wait on the descriptor would never wake.
        """
        fd = self.proc.stdout.fileno()
        with selectors.DefaultSelector() as selector:
            selector.register(fd, selectors.EVENT_READ)
            end = self._unread.find(b"\n")
            while end < 0:
                remaining = deadline - time.monotonic()
                if remaining <= 0 or not selector.select(remaining):
                    return None
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    rest, self._unread = bytes(self._unread), bytearray()
                    return rest.decode(errors="replace")
                newline = chunk.find(b"\n")  # only the new bytes: a result line can be hundreds of MB
                end = -1 if newline < 0 else len(self._unread) + newline
                self._unread += chunk
        line = bytes(self._unread[:end])
        del self._unread[: end + 1]
        return line.decode(errors="replace") + "\n"

    def _kill(self) -> None:
        if self.proc is not None:
            kill_process_group(self.proc, timeout=10)
        self.proc = None

    def close(self) -> None:
        """Ask the ranks to exit; kill them if they do not within 10 s."""
        if self.proc is None:
            return
        try:
            self.proc.stdin.write("EXIT\n")
            self.proc.stdin.flush()
            self.proc.wait(timeout=10)
        except (BrokenPipeError, subprocess.TimeoutExpired, OSError):
            pass
        self._kill()


class PoolSet:
    """One shared ``MPIPool`` per world size, started on first use."""

    def __init__(self):
        self._pools = {}

    def get(self, world_size: int) -> MPIPool:
        """The pool of ``world_size`` ranks."""
        pool = self._pools.get(world_size)
        if pool is None:
            pool = self._pools[world_size] = MPIPool(world_size)
        return pool

    def close(self) -> None:
        """Close every pool."""
        for pool in self._pools.values():
            pool.close()
        self._pools = {}


_shared = PoolSet()
atexit.register(_shared.close)


def get_pool(world_size: int) -> MPIPool:
    """The process-wide shared pool of ``world_size`` ranks (started on first use, closed at exit)."""
    return _shared.get(world_size)


def close_pools() -> None:
    """Close the shared pools (a pytest session fixture calls this at the end)."""
    _shared.close()


def run_script(path, world_size: int, args=(), timeout: float = 120.0, env=None, cwd=None):
    """Run ``mpiexec -n world_size python path args``; kill every rank if it exceeds ``timeout``.

    Returns:
        ``subprocess.CompletedProcess`` with stdout and stderr together in ``stdout``.

    Raises:
        PoolTimeout: the script did not finish in time (its output so far included).
    """
    proc = subprocess.Popen(
        [mpiexec(), "-n", str(world_size), sys.executable, str(path), *map(str, args)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=mpi_env(env),
        cwd=str(cwd or os.getcwd()),
        start_new_session=True,
        text=True,
    )
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        message = f"{path} on {world_size} ranks did not finish in {timeout} s:\n{out[-4000:]}"
        raise PoolTimeout(message) from None
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, None)
