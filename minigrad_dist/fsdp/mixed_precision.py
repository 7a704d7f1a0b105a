"""Mixed precision for FSDP: the dtypes parameters are gathered in and gradients are reduced in."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

_FLOATING = ("float16", "float32", "float64")


@dataclass(frozen=True)
class MixedPrecisionPolicy:
    """Which dtypes FSDP computes and communicates in (``torch.distributed.fsdp.MixedPrecisionPolicy``).

    The sharded parameters the optimizer steps (the "master" weights) keep
    their own dtype. With ``param_dtype``, each unit's shard is cast to it
    before the all-gather, so forward and backward compute in it, and the
    root casts floating-point forward inputs to it. Gradients are reduced in
    ``reduce_dtype`` (None: in ``param_dtype``, or the master dtype when that
    is None too) and cast back to the master dtype for the shard's ``.grad``.

    Args:
        param_dtype: dtype of gathered parameters (a NumPy dtype or its name), or None.
        reduce_dtype: dtype of the gradient reduce-scatter, or None.

    Raises:
        TypeError: a dtype is not floating point (float16, float32 or float64).
    """

    param_dtype: Any = None
    reduce_dtype: Any = None

    def __post_init__(self):
        for field in ("param_dtype", "reduce_dtype"):
            value = getattr(self, field)
            if value is None:
                continue
            try:
                dtype = np.dtype(getattr(value, "dtype", value))
            except TypeError:
                dtype = None
            if dtype is None or dtype.name not in _FLOATING:
                raise TypeError(f"MixedPrecisionPolicy: {field} must be one of {_FLOATING} or None, got {value!r}")
            object.__setattr__(self, field, dtype)


class MixedPrecision(MixedPrecisionPolicy):
    """FSDP1's name for ``MixedPrecisionPolicy`` (the same two fields: ``param_dtype``, ``reduce_dtype``)."""
