"""A persistent pool of MPI ranks that runs test programs on demand.

Why a pool: hypothesis draws examples (and shrinks failures) in the pytest
process; shipping each drawn case to already-running ranks means every rank
runs exactly the same case, ranks never disagree on what to test, and a
failure shrinks normally instead of deadlocking. It also saves the start-up
cost of ``mpiexec`` per example.

Protocol: the pool is ``mpiexec -n N python -m tests.dist.pool_worker``.
The pytest process writes one line per task to rank 0's stdin (base64 of a
pickled ``(function path, args)``); rank 0 broadcasts it, every rank runs
``function(*args)``, rank 0 gathers each rank's result or traceback and
prints one line ``@@RESULT <base64 pickle>``. Every task has a timeout: if
no result line arrives in time, the pool is killed (all ranks) and the test
fails with whatever the ranks printed.
"""

from __future__ import annotations

import base64
import os
import pickle
import selectors
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RESULT_PREFIX = "@@RESULT "


def mpiexec() -> str:
    """The ``mpiexec`` next to the running Python (the mpich wheel's), else on PATH."""
    candidate = Path(sys.executable).with_name("mpiexec")
    return str(candidate) if candidate.exists() else "mpiexec"


def mpi_env(extra=None) -> dict:
    """Environment for MPI child processes: one BLAS thread, the repo importable."""
    env = dict(os.environ)
    env.setdefault("OPENBLAS_NUM_THREADS", "1")
    env.setdefault("OMP_NUM_THREADS", "1")
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    env.update(extra or {})
    return env


class RankFailure(AssertionError):
    """A task raised on some rank; the message holds every failing rank's traceback."""


class PoolTimeout(AssertionError):
    """A task did not finish in time; the pool was killed."""


class MPIPool:
    """``world_size`` ranks waiting for tasks (see the module docstring)."""

    def __init__(self, world_size: int, env=None):
        self.world_size = world_size
        self.env = env
        self.proc = None
        self.output_tail = []

    def start(self) -> None:
        self.proc = subprocess.Popen(
            [mpiexec(), "-n", str(self.world_size), sys.executable, "-u", "-m", "tests.dist.pool_worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            env=mpi_env(self.env),
            cwd=str(ROOT),
            start_new_session=True,
            text=True,
            bufsize=1,
        )
        self.output_tail = []

    def run(self, function, *args, timeout: float = 120.0) -> list:
        """Run ``function(*args)`` on every rank; return the per-rank results.

        Raises:
            RankFailure: some rank raised (tracebacks included).
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
            raise PoolTimeout("the MPI pool died before the task was sent:\n" + "".join(self.output_tail)) from None
        results = self._read_result(timeout)
        failures = [(rank, r[1]) for rank, r in enumerate(results) if r[0] == "error"]
        if failures:
            self._kill()  # a failed rank may have left communicators mid-collective: start afresh
            message = "\n".join(f"--- rank {rank} ---\n{tb}" for rank, tb in failures)
            raise RankFailure(f"{function.__qualname__} failed on rank(s) {[r for r, _ in failures]}:\n{message}")
        return [r[1] for r in results]

    def _read_result(self, timeout):
        selector = selectors.DefaultSelector()
        selector.register(self.proc.stdout, selectors.EVENT_READ)
        deadline = time.monotonic() + timeout
        try:
            while True:
                remaining = deadline - time.monotonic()
                if remaining <= 0 or not selector.select(remaining):
                    self._kill()
                    raise PoolTimeout(
                        f"no result from the {self.world_size}-rank pool within {timeout:.0f} s; "
                        "killed it. Last output:\n" + "".join(self.output_tail[-40:])
                    )
                line = self.proc.stdout.readline()
                if not line:
                    self._kill()
                    raise PoolTimeout("the MPI pool exited. Last output:\n" + "".join(self.output_tail[-40:]))
                if line.startswith(RESULT_PREFIX):
                    return pickle.loads(base64.b64decode(line[len(RESULT_PREFIX) :]))
                self.output_tail = (self.output_tail + [line])[-200:]
        finally:
            selector.close()

    def _kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.proc.wait(timeout=10)
        self.proc = None

    def close(self) -> None:
        """Ask the ranks to exit; kill them if they do not."""
        if self.proc is None:
            return
        try:
            self.proc.stdin.write("EXIT\n")
            self.proc.stdin.flush()
            self.proc.wait(timeout=10)
        except (BrokenPipeError, subprocess.TimeoutExpired, OSError):
            pass
        self._kill()


def run_script(path, world_size: int, args=(), timeout: float = 120.0, env=None) -> subprocess.CompletedProcess:
    """Run ``mpiexec -n world_size python path args`` with a timeout; kills every rank on expiry."""
    proc = subprocess.Popen(
        [mpiexec(), "-n", str(world_size), sys.executable, str(path), *map(str, args)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=mpi_env(env),
        cwd=str(ROOT),
        start_new_session=True,
        text=True,
    )
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        raise PoolTimeout(f"{path} on {world_size} ranks did not finish in {timeout} s:\n{out[-4000:]}") from None
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, None)
