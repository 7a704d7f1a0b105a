"""``python -m minigrad_dist.run``: the ``torchrun`` of minigrad_dist, on one machine, over MPI.

    python -m minigrad_dist.run --nproc-per-node 4 train.py --epochs 3
    python -m minigrad_dist.run --nproc_per_node=2 -m mypackage.train

It runs ``mpiexec -n N python -m minigrad_dist.launch train.py ...`` with
the ``mpiexec`` of this Python's environment (the mpich wheel's), so every
rank finds the variables PyTorch's launcher sets (``RANK``, ``WORLD_SIZE``,
``LOCAL_RANK``, ``LOCAL_WORLD_SIZE``, ``GROUP_RANK``, ``MASTER_ADDR``,
``MASTER_PORT``) and the script runs unchanged. The exit status is the
job's: 0 when every rank succeeded, else the status of a failing rank.
After a failed job it removes the shared-memory segment files that MPICH
ranks killed on the way leave in ``/dev/shm`` (those no process maps).

Options follow torchrun's (dashes or underscores): ``--nproc-per-node``
(an int, ``cpu``, ``gpu`` or ``auto``), ``--nnodes`` (1), ``--node-rank``
(0), ``--master-addr``, ``--master-port``, ``--standalone``,
``--max-restarts`` (0), the ``--rdzv-*`` options (MPI does the rendezvous
on one machine: they are accepted and not used), ``-m``/``--module`` and
``--no-python``. Like torchrun, it sets ``OMP_NUM_THREADS=1`` for every
rank when several ranks share the machine and the variable is unset.

For several machines, start ranks with the cluster's MPI launcher and
``python -m minigrad_dist.launch`` (see that module): the launcher, not
this script, knows the hosts.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

from minigrad_dist.launch import DEFAULT_MASTER_ADDR, DEFAULT_MASTER_PORT


def kill_process_group(proc: subprocess.Popen, timeout: float | None = None) -> bool:
    """SIGKILL the process group of ``proc`` (started with ``start_new_session=True``) and reap it.

    Returns False, doing nothing, when ``proc`` has exited already.

    Raises:
        subprocess.TimeoutExpired: ``proc`` not reaped within ``timeout`` seconds.
    """
    if proc.poll() is not None:
        return False
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass  # the group is gone already
    proc.wait(timeout=timeout)
    return True

__all__ = [
    "build_command", "find_mpiexec", "main", "parse_args", "rank_environment", "remove_orphaned_shared_memory",
    "shared_memory_files",
]


def find_mpiexec() -> str:
    """The ``mpiexec`` next to this Python (the mpich wheel's), else the first on ``PATH``.

    Raises:
        FileNotFoundError: there is none (says how to install one).
    """
    beside = Path(sys.executable).with_name("mpiexec")
    if beside.exists():
        return str(beside)
    found = shutil.which("mpiexec")
    if found is None:
        raise FileNotFoundError(
            "minigrad_dist.run needs mpiexec: pip install 'minigrad[mpi]' (the mpich wheel puts it next to python)"
        )
    return found


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m minigrad_dist.run",
        description="Start N ranks of a training script on this machine over MPI, with torchrun's environment.",
        allow_abbrev=False,
    )
    parser.add_argument("--nproc-per-node", "--nproc_per_node", default="1",
                        help="ranks to start: an int, 'cpu' (one per core), 'gpu' (one per CUDA device) or 'auto'")
    parser.add_argument("--nnodes", default="1", help="must be 1 (or 1:1); use mpiexec with launch for clusters")
    parser.add_argument("--node-rank", "--node_rank", type=int, default=0, help="must be 0")
    parser.add_argument("--master-addr", "--master_addr", default=DEFAULT_MASTER_ADDR,
                        help="exported as MASTER_ADDR (not used: MPI does the rendezvous)")
    parser.add_argument("--master-port", "--master_port", type=int, default=int(DEFAULT_MASTER_PORT),
                        help="exported as MASTER_PORT (not used: MPI does the rendezvous)")
    parser.add_argument("--standalone", action="store_true", help="single machine (always the case here)")
    parser.add_argument("--max-restarts", "--max_restarts", type=int, default=0, help="must be 0")
    for dashed, underscored in (("--rdzv-backend", "--rdzv_backend"), ("--rdzv-endpoint", "--rdzv_endpoint"),
                                ("--rdzv-id", "--rdzv_id"), ("--rdzv-conf", "--rdzv_conf")):
        parser.add_argument(dashed, underscored, default=None, help="accepted; MPI does the rendezvous")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("-m", "--module", action="store_true", help="run the program as a module (python -m)")
    mode.add_argument("--no-python", "--no_python", action="store_true",
                      help="run the program as an executable, not with python")
    parser.add_argument("training_script", help="the script (or module, or executable) to run on every rank")
    parser.add_argument("training_script_args", nargs=argparse.REMAINDER, help="its arguments")
    return parser


def parse_args(argv=None) -> argparse.Namespace:
    """Parse torchrun-style arguments; ``nproc_per_node`` comes back as an int.

    Raises:
        SystemExit: (status 2, with a message) bad or unsupported options.
    """
    parser = _parser()
    args = parser.parse_args(argv)
    args.nproc_per_node = _nproc(parser, args.nproc_per_node)
    if args.nnodes not in ("1", "1:1"):
        parser.error(
            f"--nnodes {args.nnodes}: this launcher starts ranks on one machine; on a cluster run "
            "mpiexec (or srun) -n <total ranks> python -m minigrad_dist.launch script.py"
        )
    if args.node_rank != 0:
        parser.error(f"--node-rank {args.node_rank}: with one node the node rank is 0")
    if args.max_restarts != 0:
        parser.error(f"--max-restarts {args.max_restarts}: restarting failed ranks (elastic training) is not supported")
    return args


def _nproc(parser, value) -> int:
    from minigrad import backend  # noqa: PLC0415  (only to count GPUs)

    if value == "cpu":
        return os.cpu_count() or 1
    if value in ("gpu", "auto"):
        gpus = backend.cuda_device_count() if backend.cuda_is_available() else 0
        if value == "gpu" and gpus == 0:
            parser.error("--nproc-per-node gpu: no CUDA device found")
        return gpus or (os.cpu_count() or 1)
    try:
        count = int(value)
    except ValueError:
        count = 0
    if count < 1:
        parser.error(f"--nproc-per-node must be a positive int, 'cpu', 'gpu' or 'auto', got {value!r}")
    return count


def build_command(args: argparse.Namespace) -> tuple[list, dict]:
    """The ``mpiexec`` command line and the environment for the ranks."""
    program = []
    if args.module:
        program = ["-m"]
    elif args.no_python:
        program = ["--no-python"]
    command = [find_mpiexec(), "-n", str(args.nproc_per_node), sys.executable, "-m", "minigrad_dist.launch",
               *program, args.training_script, *args.training_script_args]
    env = dict(os.environ)
    env.update(GROUP_RANK="0", ROLE_RANK="0", MASTER_ADDR=args.master_addr, MASTER_PORT=str(args.master_port))
    if args.nproc_per_node > 1 and "OMP_NUM_THREADS" not in env:
        env["OMP_NUM_THREADS"] = "1"
        print(
            "minigrad_dist.run: setting OMP_NUM_THREADS=1 for each rank (several ranks share this machine); "
            "set it yourself to choose another value",
            file=sys.stderr,
        )
    return command, rank_environment(env)


def rank_environment(env: dict) -> dict:
    """``env`` with ``PYTHONPATH`` extended so that new ranks import this minigrad_dist (when not installed)."""
    root = Path(__file__).resolve().parents[1]
    if not any(root.is_relative_to(prefix) for prefix in {sys.prefix, sys.base_prefix}):
        inherited = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
        env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys([str(root), *inherited]))
    return env


def main(argv=None) -> int:
    """Run the job; returns its exit status (0: every rank succeeded)."""
    args = parse_args(argv)
    command, env = build_command(args)
    before = shared_memory_files()
    process = subprocess.Popen(command, env=env)
    try:
        status = process.wait()
    except KeyboardInterrupt:
        process.wait()  # mpiexec got the same Ctrl-C (same process group) and stops the ranks
        status = 130
    if status != 0:  # ranks that were killed or aborted leave MPICH's segment files behind
        remove_orphaned_shared_memory(shared_memory_files() - before)
    return status


_SHM = Path("/dev/shm")


def shared_memory_files() -> set:
    """Names of MPICH's shared-memory segment files (MPI_Finalize removes them; a killed rank leaves them)."""
    try:
        return {p.name for p in _SHM.iterdir() if p.name.startswith("mpich_shm_")}
    except OSError:
        return set()


def remove_orphaned_shared_memory(names) -> None:
    """Remove those segment files of ``names`` that no live process maps (left by a job that was killed)."""
    if not names:
        return
    mapped = set()
    for maps in Path("/proc").glob("[0-9]*/maps"):
        try:
            mapped.update(line.rsplit("/", 1)[-1] for line in maps.read_text().splitlines() if "/dev/shm/" in line)
        except OSError:
            continue  # a process that ended meanwhile, or one we may not read
    for name in set(names) - mapped:
        try:
            (_SHM / name).unlink()
        except OSError:
            pass


if __name__ == "__main__":
    sys.exit(main())
