"""One rank of the test pool (see mpi_pool.py): run broadcast tasks until told to exit."""

from __future__ import annotations

import base64
import importlib
import pickle
import sys
import traceback

from minigrad_dist.mpi import load_mpi

RESULT_PREFIX = "@@RESULT "


def _resolve(path: str):
    module_name, qualname = path.split(":")
    obj = importlib.import_module(module_name)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


def main() -> None:
    MPI = load_mpi()
    comm = MPI.COMM_WORLD
    rank = comm.Get_rank()
    while True:
        line = sys.stdin.readline().strip() if rank == 0 else None
        line = comm.bcast(line, root=0)
        if not line or line == "EXIT":
            break
        try:
            function_path, args = pickle.loads(base64.b64decode(line))
            result = ("ok", _resolve(function_path)(*args))
        except BaseException:  # noqa: BLE001  (reported to the pytest process)
            result = ("error", traceback.format_exc())
        results = comm.gather(result, root=0)
        if rank == 0:
            sys.stdout.write(RESULT_PREFIX + base64.b64encode(pickle.dumps(results)).decode() + "\n")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
