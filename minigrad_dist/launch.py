"""What runs inside each rank that a launcher starts: torchrun's environment variables, then the user's program.

``python -m minigrad_dist.run --nproc-per-node N script.py`` starts this
module under ``mpiexec`` on every rank; on a cluster, use it under the
cluster's launcher directly::

    mpiexec -n 16 -f hosts python -m minigrad_dist.launch train.py --epochs 3
    srun -n 16 python -m minigrad_dist.launch train.py --epochs 3

On each rank it:

1. finds the rank, world size, local rank and local world size in the
   launcher's environment (MPICH/Hydra's ``PMI_*``/``MPI_LOCAL*``, Open MPI's
   ``OMPI_COMM_WORLD_*``, Slurm's ``SLURM_*``), or else asks MPI itself;
2. exports them as PyTorch's launcher does: ``RANK``, ``WORLD_SIZE``,
   ``LOCAL_RANK``, ``LOCAL_WORLD_SIZE`` (and ``MASTER_ADDR``/``MASTER_PORT``
   placeholders when unset: MPI does the rendezvous, some scripts read them);
3. runs the program as ``python`` would: a script as ``__main__`` with its
   directory first on ``sys.path``, a module (``-m pkg.mod``) with the
   working directory first, or any executable (``--no-python``), with
   ``sys.argv`` set to the program and its arguments.

An uncaught exception ends the rank with exit status 1 after printing the
traceback (and, once the program called ``init_process_group``, aborts the
whole job: see ``minigrad_dist.failure``); ``sys.exit(code)`` exits with
``code``. The launcher then reports the failing status.
"""

from __future__ import annotations

import os
import runpy
import sys

__all__ = ["launcher_environment", "main"]

# (rank, world size, local rank, local world size) as MPI launchers name them.
_LAUNCHER_VARIABLES = (
    ("PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID", "MPI_LOCALNRANKS"),  # MPICH's Hydra, Intel MPI
    ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE"),
    ("SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", "SLURM_NTASKS_PER_NODE"),
)
DEFAULT_MASTER_ADDR = "127.0.0.1"
DEFAULT_MASTER_PORT = "29500"
USAGE = (
    "usage: python -m minigrad_dist.launch [-m module | --no-python executable | script.py] [args...]\n"
    "  (run under an MPI launcher: mpiexec -n N python -m minigrad_dist.launch train.py)"
)


def launcher_environment(environ=None) -> dict:
    """``RANK``, ``WORLD_SIZE``, ``LOCAL_RANK``, ``LOCAL_WORLD_SIZE`` of this process, as strings.

    Read from the MPI launcher's variables in ``environ`` (default
    ``os.environ``); when none is there, from MPI itself (which initializes MPI).
    """
    environ = os.environ if environ is None else environ
    for names in _LAUNCHER_VARIABLES:
        values = [environ.get(name) for name in names]
        if all(v is not None and v.strip().isdigit() for v in values):
            rank, size, local_rank, local_size = (int(v) for v in values)
            return _as_variables(rank, size, local_rank, local_size)
    return _ask_mpi()


def _ask_mpi() -> dict:
    from minigrad_dist.mpi import load_mpi  # noqa: PLC0415  (only when the launcher said nothing)

    MPI = load_mpi()
    world = MPI.COMM_WORLD
    node = world.Split_type(MPI.COMM_TYPE_SHARED)
    try:
        return _as_variables(world.Get_rank(), world.Get_size(), node.Get_rank(), node.Get_size())
    finally:
        node.Free()


def _as_variables(rank, size, local_rank, local_size) -> dict:
    return {"RANK": str(rank), "WORLD_SIZE": str(size), "LOCAL_RANK": str(local_rank),
            "LOCAL_WORLD_SIZE": str(local_size)}


def main(argv=None) -> None:
    """Export the rank variables and run the program named by ``argv`` (default ``sys.argv[1:]``).

    Raises:
        SystemExit: with status 2 and the usage line when no program is named.
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help") or argv[0] in ("-m", "--no-python") and len(argv) < 2:
        print(USAGE, file=sys.stderr)
        raise SystemExit(2)
    os.environ.update(launcher_environment())
    os.environ.setdefault("MASTER_ADDR", DEFAULT_MASTER_ADDR)
    os.environ.setdefault("MASTER_PORT", DEFAULT_MASTER_PORT)
    if argv[0] == "--no-python":
        os.execvp(argv[1], argv[1:])  # replaces this process: the program gets the rank variables
    # sys.path[0] is the working directory (this module runs with -m), as `python -m module` wants;
    # `python script.py` puts the script's directory there instead.
    if argv[0] == "-m":
        sys.argv = [argv[1], *argv[2:]]
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
        return
    script = argv[0]
    if not os.path.isfile(script):
        print(f"minigrad_dist.launch: no such script: {script!r}", file=sys.stderr)
        raise SystemExit(2)
    sys.argv = [script, *argv[1:]]
    sys.path[0] = os.path.dirname(os.path.abspath(script))
    runpy.run_path(script, run_name="__main__")


if __name__ == "__main__":
    main()
