"""Grad mode: whether ops record the graph (``no_grad``, ``enable_grad``).

The flag is per thread, like PyTorch's: the RPC workers of minigrad_dist run
backward passes in their own threads without disturbing the caller's mode.
"""

from __future__ import annotations

import functools
import threading


class _GradState(threading.local):
    def __init__(self):
        self.enabled = True


_state = _GradState()


def is_grad_enabled() -> bool:
    """True when new ops record the autograd graph (the default)."""
    return _state.enabled


def set_grad_enabled(mode: bool) -> None:
    """Switch graph recording on or off for this thread."""
    _state.enabled = bool(mode)


class _FlagContext:
    """Context manager: ``flags.enabled`` is ``mode`` inside its block and back to its previous value after.

    Subclasses set ``flags`` (an object with an ``enabled`` attribute) and ``mode``.
    """

    flags = None
    mode = True

    def __enter__(self):
        flags = self.flags
        self._previous = flags.enabled
        flags.enabled = self.mode
        return self

    def __exit__(self, *exc):
        self.flags.enabled = self._previous
        return False


class _GradModeContext(_FlagContext):
    """Context manager and decorator that sets grad mode and restores it on exit."""

    flags = _state

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.__class__():
                return fn(*args, **kwargs)

        return wrapper


class no_grad(_GradModeContext):
    """Ops run inside ``with mg.no_grad():`` record no graph (their outputs need no grad).

    Usable as a decorator too.
    """

    mode = False


class enable_grad(_GradModeContext):
    """Re-enables graph recording inside a ``no_grad`` block. Usable as a decorator too."""

    mode = True
