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

What is checked: every collective method of every ``ProcessGroup`` (and of
subclasses that do not override them), hence the module-level collectives
(``all_reduce``, ``broadcast``, ..., the ``*_object`` ones) on any group and
DistributedDataParallel's bucket allreduces, buffer broadcasts and control
messages. The checks are installed on the ``ProcessGroup`` class while the
level is ``DETAIL`` and removed when it is set back to ``OFF``, so a run
without debug mode pays nothing; since the class is shared, every group of
the process checks, which keeps the ranks' checks in step as long as every
rank sets the same level at the same point of the program.

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
import functools
import hashlib
import os

import numpy as np

from minigrad_dist.process_group import ProcessGroup, ReduceOp, Work

__all__ = ["DebugLevel", "get_debug_level", "set_debug_level", "set_debug_level_from_env"]

ENV_VAR = "MINIGRAD_DIST_DEBUG"
_DIGEST_BYTES = 16


class DebugLevel(enum.Enum):
    """How much the distributed layer checks (``MINIGRAD_DIST_DEBUG``)."""

    OFF = "OFF"
    DETAIL = "DETAIL"


class _State:
    level = DebugLevel.OFF
    originals = {}  # collective method name -> ProcessGroup's own function, while checks are installed


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
    level = _parse_level(level, "set_debug_level")
    if level is DebugLevel.DETAIL:
        _install_checks()
    else:
        _remove_checks()
    _State.level = level


def set_debug_level_from_env() -> None:
    """Set the level from ``MINIGRAD_DIST_DEBUG`` when it is set (left unchanged otherwise).

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


# -- what each collective method is called with --------------------------------------------


def _tensor(array) -> str:
    return f"shape={tuple(array.shape)}, {array.dtype}"


def _root(group, rank) -> int:
    return group.world_ranks[rank]


_DESCRIBE = {
    "allreduce": lambda g, array, op=ReduceOp.SUM, async_op=False: f"all_reduce({_tensor(array)}, {op.name})",
    "broadcast": lambda g, array, src, async_op=False: f"broadcast({_tensor(array)}, src={_root(g, src)})",
    "allgather": lambda g, outputs, array, async_op=False: f"all_gather({_tensor(array)})",
    "reduce_scatter": lambda g, output, inputs, op=ReduceOp.SUM, async_op=False: (
        f"reduce_scatter({_tensor(output)}, inputs={len(inputs)}, {op.name})"
    ),
    "reduce": lambda g, array, dst, op=ReduceOp.SUM, async_op=False: (
        f"reduce({_tensor(array)}, {op.name}, dst={_root(g, dst)})"
    ),
    "gather": lambda g, array, outputs, dst, async_op=False: f"gather({_tensor(array)}, dst={_root(g, dst)})",
    "scatter": lambda g, array, inputs, src, async_op=False: (
        f"scatter({_tensor(array)}, src={_root(g, src)})"
    ),
    "barrier": lambda g, async_op=False: "barrier()",
    "allgather_obj": lambda g, obj: "all_gather_object()",
    "bcast_obj": lambda g, obj, src: f"broadcast_object_list(src={_root(g, src)})",
    "gather_obj": lambda g, obj, dst: f"gather_object(dst={_root(g, dst)})",
    "scatter_obj": lambda g, objs, src: f"scatter_object_list(src={_root(g, src)})",
}


def _install_checks() -> None:
    if _State.originals:
        return
    for name, describe in _DESCRIBE.items():
        original = ProcessGroup.__dict__[name]
        _State.originals[name] = original
        setattr(ProcessGroup, name, _checked(original, describe))
    # Stays installed once checks were on: a group may hold a checker communicator to free.
    ProcessGroup.destroy = _freeing_checker(ProcessGroup.__dict__["destroy"])


def _remove_checks() -> None:
    for name, original in _State.originals.items():
        setattr(ProcessGroup, name, original)
    _State.originals = {}


def _checked(method, describe):
    @functools.wraps(method)
    def checked(self, *args, **kwargs):
        _checker_of(self).verify(describe(self, *args, **kwargs))
        return method(self, *args, **kwargs)

    return checked


def _freeing_checker(destroy):
    if getattr(destroy, "_frees_debug_checker", False):
        return destroy

    @functools.wraps(destroy)
    def destroy_and_free_checker(self):
        checker = self.__dict__.pop("_debug_checker", None)
        if checker is not None:
            checker.free()
        destroy(self)

    destroy_and_free_checker._frees_debug_checker = True
    return destroy_and_free_checker


def _checker_of(group) -> _Checker:
    checker = group.__dict__.get("_debug_checker")
    if checker is None:
        checker = group.__dict__["_debug_checker"] = _Checker(group)
    return checker


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
        Work(comm.Iallgather(mine, everyone), op_name=f"{call} (debug consistency check)").wait(timeout)
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
            Work(request, op_name=f"{call} (creating the debug checker's communicator)").wait(timeout)
            self._comm = comm
        return self._comm

    def free(self) -> None:
        """Free the checker's communicator."""
        if self._comm is not None:
            self._comm.Free()
            self._comm = None


def _collective_timeout():
    from minigrad_dist import collectives  # noqa: PLC0415  (collectives imports this module)

    return collectives._world.timeout
