"""A rank that fails ends the whole MPI job, instead of leaving the others waiting forever.

The problem: ranks of a job meet in collectives. When one rank dies of an
uncaught exception, Python prints its traceback and exits normally (through
``MPI_Finalize``); the other ranks sit in their next collective and wait for
it forever, and MPICH's launcher keeps the job alive because no process
*crashed*. ``install_failure_handlers()`` (called by ``init_process_group``)
fixes that: an uncaught exception, in the main thread (``sys.excepthook``) or
in any other thread (``threading.excepthook``), prints the traceback with
every line prefixed by the rank (``[rank 1] Traceback ...``), flushes stdout
and stderr, waits 0.2 s (so that the launcher forwards that output before it
handles the abort) and calls ``MPI.COMM_WORLD.Abort(1)``: the launcher then
kills every rank and ``mpiexec`` exits with status 1 within a second.

Running scripts as ``mpiexec -n N python -m mpi4py script.py`` gives the same
abort-on-exception behaviour from mpi4py itself (without the rank prefix);
both together are harmless.

What ends a job without these handlers, as measured with the MPICH wheel's
``mpiexec`` (hydra) on Linux:

* a rank killed by a signal (``SIGKILL``, the OOM killer, a segfault): hydra
  notices the abnormal exit and kills the other ranks at once ("BAD
  TERMINATION OF ONE OF YOUR APPLICATION PROCESSES"), so nothing is needed;
  but with ``mpiexec -disable-auto-cleanup`` the survivors wait forever;
* a rank that *hangs* (a deadlock, an endless loop, a skipped collective):
  nothing notices. Set a collective timeout (``init_process_group(timeout=...)``
  or ``MINIGRAD_DIST_TIMEOUT`` seconds): a waiting rank then raises
  ``TimeoutError`` naming the operation, and this module's handler turns that
  uncaught error into an abort of the job. The same timeout also covers the
  ``-disable-auto-cleanup`` case above.

``sys.exit()`` with a non-zero status is a deliberate exit, not an uncaught
exception, and is not turned into an abort. In an interactive session
(``python -i``, the REPL) the handlers print the rank-prefixed traceback but
do not abort, so a typo does not end the session.
"""

from __future__ import annotations

import sys
import threading
import time
import traceback

__all__ = ["format_rank_traceback", "install_failure_handlers", "uninstall_failure_handlers"]

_ABORT_CODE = 1
_OUTPUT_GRACE_S = 0.2


class _Installed:
    """The hooks that were in place before ours (None while not installed)."""

    previous_excepthook = None
    previous_threading_excepthook = None


def install_failure_handlers() -> None:
    """Abort the whole MPI job when any rank has an uncaught exception (see the module docstring).

    Installs ``sys.excepthook`` and ``threading.excepthook``; hooks installed
    before are kept and still run (before the abort) unless they are Python's
    defaults, whose plain traceback ours replaces. Calling it again does
    nothing. ``init_process_group`` calls it.
    """
    if _Installed.previous_excepthook is not None:
        return
    _Installed.previous_excepthook = sys.excepthook
    _Installed.previous_threading_excepthook = threading.excepthook
    sys.excepthook = _excepthook
    threading.excepthook = _threading_excepthook


def uninstall_failure_handlers() -> None:
    """Put back the hooks that ``install_failure_handlers`` replaced (no-op when not installed)."""
    if _Installed.previous_excepthook is None:
        return
    if sys.excepthook is _excepthook:
        sys.excepthook = _Installed.previous_excepthook
    if threading.excepthook is _threading_excepthook:
        threading.excepthook = _Installed.previous_threading_excepthook
    _Installed.previous_excepthook = None
    _Installed.previous_threading_excepthook = None


def _excepthook(exc_type, exc, tb) -> None:
    previous = _Installed.previous_excepthook
    _report_and_abort(exc_type, exc, tb, None, previous, sys.__excepthook__, (exc_type, exc, tb))


def _threading_excepthook(args) -> None:
    previous = _Installed.previous_threading_excepthook or threading.__excepthook__
    if issubclass(args.exc_type, SystemExit):
        previous(args)  # a thread calling sys.exit() ends quietly, as in Python
        return
    name = args.thread.name if args.thread is not None else "<unknown>"
    _report_and_abort(args.exc_type, args.exc_value, args.exc_traceback, name, previous,
                      threading.__excepthook__, (args,))


def _report_and_abort(exc_type, exc, tb, thread_name, previous, default, previous_args) -> None:
    mpi = _live_mpi()
    if mpi is None:
        previous(*previous_args)  # no MPI job to end: behave like Python
        return
    rank = mpi.COMM_WORLD.Get_rank()
    try:
        if previous is not default and previous is not None:
            previous(*previous_args)  # the user's own hook (logging, ...) still runs
        _write(format_rank_traceback(rank, exc_type, exc, tb, thread_name, abort=not _interactive()))
    finally:
        if not _interactive():
            # The launcher stops reading the ranks' output as soon as it handles the abort: give it
            # time to forward the traceback first (without this, about 1 run in 40 lost it).
            time.sleep(_OUTPUT_GRACE_S)
            mpi.COMM_WORLD.Abort(_ABORT_CODE)


def format_rank_traceback(rank: int, exc_type, exc, tb, thread_name=None, abort: bool = True) -> str:
    """The text the handlers print: a header line, then the traceback, every line prefixed ``[rank N] ``."""
    where = f" in thread {thread_name!r}" if thread_name is not None else ""
    consequence = "aborting the MPI job (MPI_Abort) so the other ranks stop" if abort else "not aborting"
    lines = [f"minigrad_dist: uncaught {exc_type.__name__} on rank {rank}{where}; {consequence}\n"]
    lines += "".join(traceback.format_exception(exc_type, exc, tb)).splitlines(keepends=True)
    prefix = f"[rank {rank}] "
    return "".join(prefix + (line if line.endswith("\n") else line + "\n") for line in lines)


def _live_mpi():
    """``mpi4py.MPI`` when MPI is initialized and not finalized; None otherwise (never imports it)."""
    mpi = sys.modules.get("mpi4py.MPI")
    if mpi is None or not mpi.Is_initialized() or mpi.Is_finalized():
        return None
    return mpi


def _interactive() -> bool:
    return hasattr(sys, "ps1") or bool(sys.flags.interactive)


def _write(text: str) -> None:
    for stream in (sys.stdout, sys.__stdout__):
        if stream is not None:
            try:
                stream.flush()
            except (OSError, ValueError):
                pass  # a closed or broken stream must not prevent the abort
    err = sys.stderr if sys.stderr is not None else sys.__stderr__
    if err is not None:
        try:
            err.write(text)
            err.flush()
        except (OSError, ValueError):
            pass
