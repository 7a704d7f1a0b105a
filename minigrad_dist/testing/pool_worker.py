"""One rank of an ``MPIPool`` (see pool.py): run broadcast tasks until told to exit.

Run as ``python -m minigrad_dist.testing.pool_worker`` under ``mpiexec``.
Ranks wait for the next task, and for slower ranks at the end of a task,
in a nonblocking barrier tested politely (``minigrad_dist.waiting``): a
blocking MPI call would spin at full speed, and idle pools would then take
the CPU from the process (and the other pools) doing the work.
"""

from __future__ import annotations

import base64
import importlib
import pickle
import sys
import traceback

from minigrad_dist import waiting
from minigrad_dist.mpi import load_mpi
from minigrad_dist.testing.pool import RESULT_PREFIX

# A short wait (ranks finishing a task together) stays fast; an idle pool wakes at most 1000 times a second.
_BARRIER_BACKOFF = waiting.Backoff(yield_window=waiting.YIELD_WINDOW, first_sleep=5e-5, longest_sleep=1e-3)


def _resolve(path: str):
    """The object named ``module:qualname``."""
    module_name, qualname = path.split(":")
    obj = importlib.import_module(module_name)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


def wait_politely(comm) -> None:
    """Return once every rank of ``comm`` got here, without spinning while waiting."""
    waiting.wait_until(comm.Ibarrier().Test, backoff=_BARRIER_BACKOFF)


def run_task(line: str):
    """``("ok", result)`` of the task encoded in ``line``, or ``("error", traceback text)``."""
    try:
        function_path, args = pickle.loads(base64.b64decode(line))
        result = _resolve(function_path)(*args)
        pickle.dumps(result)  # an unpicklable result must fail here, not inside the gather
        return ("ok", result)
    except BaseException:  # noqa: BLE001  (reported to the calling process)
        return ("error", traceback.format_exc())


def main() -> None:
    """Serve tasks until rank 0 reads ``EXIT`` or end of input."""
    MPI = load_mpi()
    comm = MPI.COMM_WORLD.Dup()  # the pool's own messages never meet the tasks' COMM_WORLD traffic
    rank = comm.Get_rank()
    while True:
        line = sys.stdin.readline().strip() if rank == 0 else None
        wait_politely(comm)
        line = comm.bcast(line, root=0)
        if not line or line == "EXIT":
            break
        result = run_task(line)
        wait_politely(comm)
        results = comm.gather(result, root=0)
        if rank == 0:
            sys.stdout.write(RESULT_PREFIX + base64.b64encode(pickle.dumps(results)).decode() + "\n")
            sys.stdout.flush()
    comm.Free()


if __name__ == "__main__":
    main()
