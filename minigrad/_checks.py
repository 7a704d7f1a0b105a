"""Argument checks that minigrad and minigrad_dist share.

Each raises PyTorch's kind of error with a message that names the owner (the class or function
checking), the argument and the value it got: ``"DistributedSampler: seed must be >= 0, got -1"``.
"""

from __future__ import annotations

import numpy as np


def is_int(value) -> bool:
    """True for a Python or NumPy integer; False for a bool (an int to Python, not a count to PyTorch)."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def expect_ints(owner: str, **values) -> None:
    """Check that each keyword's value is an int (see ``is_int``), in the order given.

    Raises:
        TypeError: ``"{owner}: {name} must be an int, got {type}"`` for the first one that is not.
    """
    for name, value in values.items():
        if not is_int(value):
            raise TypeError(f"{owner}: {name} must be an int, got {type(value).__name__}")


def expect_at_least(name: str, value, minimum: int, owner: str = "") -> None:
    """Check that ``value >= minimum``.

    Raises:
        ValueError: ``"{owner}: {name} must be >= {minimum}, got {value}"`` (without ``"{owner}: "``
            when ``owner`` is empty).
    """
    if value < minimum:
        prefix = f"{owner}: " if owner else ""
        raise ValueError(f"{prefix}{name} must be >= {minimum}, got {value}")


def expect_instance(name: str, value, cls: type, owner: str = "") -> None:
    """Check that ``value`` is a ``cls``.

    Raises:
        TypeError: ``"{owner}: {name} must be a {cls.__name__}, got {type}"`` (without ``"{owner}: "``
            when ``owner`` is empty).
    """
    if not isinstance(value, cls):
        prefix = f"{owner}: " if owner else ""
        raise TypeError(f"{prefix}{name} must be a {cls.__name__}, got {type(value).__name__}")
