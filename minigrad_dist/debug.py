"""``MINIGRAD_DIST_DEBUG=detail``: check that every rank calls the same collective.

Ranks that call different collectives (another operation, another shape or
dtype, another reduce op or root) hang, or worse, silently exchange the wrong
bytes. In debug mode, before each collective on a process group, every rank
allgathers a description of its call, such as
``all_reduce(shape=(3,), float32, SUM)`` or ``broadcast(shape=(3,), float32,
src=0)``, on a communicator the checker owns (a duplicate of the group's,
made by the group's first checked collective, so checks never interleave
with the group's own traffic). If the descriptions differ, every rank raises
the same ``RuntimeError`` listing each rank's call::

    rank 0: all_reduce(shape=(3,), float32, SUM); rank 1: all_reduce(shape=(4,), float32, SUM)

What is checked: every collective method of ``ProcessGroup`` (and of its
subclasses) starts with ``if debug.checking(): debug.verify(self, call)``,
naming its call; hence the module-level collectives (``all_reduce``,
``broadcast``, ..., the ``*_object`` ones) on any group and
DistributedDataParallel's bucket allreduces, buffer broadcasts and control
messages are checked. A run without debug mode pays one test of the level
per collective. The level is one for the whole process, so every group
checks, which keeps the ranks' checks in step as long as every rank sets
the same level at the same point of the program. Each group keeps its
checker (``group.debug_checker``) and frees it in ``destroy()``.

The check costs one small allgather per collective and makes every
collective synchronous (a rank waits for all others to reach the same call),
so it is meant for debugging, as PyTorch's ``TORCH_DISTRIBUTED_DEBUG=DETAIL``.
It honours the collective timeout (``init_process_group(timeout=...)``): a
rank that never arrives turns into a ``TimeoutError`` naming the operation.

Enable with the environment variable ``MINIGRAD_DIST_DEBUG=detail`` (read by
``init_process_group``) or ``set_debug_level("detail")``; ``off`` disables
it. PyTorch's intermediate ``INFO`` level is not reproduced.
"""

from __future__ import annotations

import enum
import hashlib
import os

import numpy as np

__all__ = ["DebugLevel", "get_debug_level", "set_debug_level", "set_debug_level_from_env"]

ENV_VAR = "MINIGRAD_DIST_DEBUG"
_DIGEST_BYTES = 16


class DebugLevel(enum.Enum):
    """How much the distributed layer checks (``MINIGRAD_DIST_DEBUG``)."""

    OFF = "OFF"
    DETAIL = "DETAIL"


class _State:
    """The process's debug level (one for every group: the ranks' checks must stay in step)."""

    level = DebugLevel.OFF


def get_debug_level() -> DebugLevel:
    """The current debug level."""
    return _State.level


def set_debug_level(level) -> None:
    """Set the debug level: a ``DebugLevel`` or its name, in any case (``"detail"``, ``"off"``).

    Takes effect at the next collective of every process group. Every rank
    must set the same level at the same point of the program.

    Raises:
        ValueError: an unknown level name.
        TypeError: ``level`` is neither a DebugLevel nor a str.
    """
    _State.level = _parse_level(level, "set_debug_level")


def set_debug_level_from_env() -> None:
    """Set the level from ``MINIGRAD_DIST_DEBUG`` when it is set (left unchanged otherwise).

    ``init_process_group`` calls it: the variable is read there, once.

    Raises:
        ValueError: the variable holds an unknown level.
    """
    value = os.environ.get(ENV_VAR, "").strip()
    if value:
        set_debug_level(_parse_level(value, ENV_VAR))


def _parse_level(level, where: str) -> DebugLevel:
    if isinstance(level, DebugLevel):
        return level
    if not isinstance(level, str):
        raise TypeError(f"{where}: expected a DebugLevel or a level name, got {type(level).__name__}")
    try:
        return DebugLevel[level.upper()]
    except KeyError:
        names = ", ".join(m.name.lower() for m in DebugLevel)
        raise ValueError(f"{where}: unknown debug level {level!r}; expected one of {names}") from None


# -- what every collective calls ----------------------------------------------------------------


def checking() -> bool:
    """True while the level is ``DETAIL``: each collective then calls ``verify`` before it communicates."""
    return _State.level is DebugLevel.DETAIL


def tensor_text(array) -> str:
    """``shape=(3,), float32``: how a call description names a tensor."""
    return f"shape={tuple(array.shape)}, {array.dtype}"


def verify(group, call: str) -> None:
    """Check that every rank of ``group`` makes the same ``call`` now (see the module docstring).

    ``call`` describes this rank's collective, e.g. ``all_reduce(shape=(3,),
    float32, SUM)``, with roots as global ranks. Collective: every rank of
    the group must call it.

    Raises:
        RuntimeError: the ranks' calls differ (on every rank, listing every rank's call).
        TimeoutError: some rank did not reach a collective within the collective timeout.
    """
    if group.debug_checker is None:
        group.debug_checker = _Checker(group)
    group.debug_checker.verify(call)


# -- the check -----------------------------------------------------------------------


class _Checker:
    """Compares call descriptions across the ranks of one group, on its own communicator."""

    def __init__(self, group):
        self._group = group
        self._comm = None

    def verify(self, call: str) -> None:
        """Raise on every rank if some rank's ``call`` differs (see the module docstring).

        Raises:
            RuntimeError: the ranks' calls differ (lists every rank's call).
            TimeoutError: some rank did not reach a collective within the collective timeout.
        """
        if self._group.comm is None:
            return  # a destroyed group: the collective itself reports that
        timeout = _collective_timeout()
        comm = self._communicator(call, timeout)
        mine = np.frombuffer(hashlib.blake2b(call.encode(), digest_size=_DIGEST_BYTES).digest(), np.uint8)
        everyone = np.empty((comm.Get_size(), _DIGEST_BYTES), dtype=np.uint8)
        self._wait(comm.Iallgather(mine, everyone), f"{call} (debug consistency check)", timeout)
        if (everyone == everyone[0]).all():
            return
        calls = comm.allgather(call)  # every rank saw the mismatch, so every rank is here
        listing = "; ".join(f"rank {r}: {c}" for r, c in zip(self._group.world_ranks, calls))
        raise RuntimeError(
            f"{ENV_VAR}=detail: the ranks called different collectives on the same process group: "
            f"{listing}. Every rank must call the same collectives in the same order, with the same "
            "shapes, dtypes, reduce ops and roots."
        )

    def _communicator(self, call: str, timeout):
        if self._comm is None:
            comm, request = self._group.comm.Idup()
            self._wait(request, f"{call} (creating the debug checker's communicator)", timeout)
            self._comm = comm
        return self._comm

    def _wait(self, request, what: str, timeout) -> None:
        """Wait for ``request`` as the group's collectives do; a ``TimeoutError`` names ``what``."""
        from minigrad_dist.process_group import Work  # noqa: PLC0415  (process_group imports this module)

        Work(request, op_name=what, spin=self._group.spin_wait).wait(timeout)

    def free(self) -> None:
        """Free the checker's communicator."""
        if self._comm is not None:
            self._comm.Free()
            self._comm = None


def _collective_timeout():
    from minigrad_dist import collectives  # noqa: PLC0415  (collectives imports this module)

    return collectives._world.timeout
