"""Anomaly detection: find the op whose backward produced NaN or infinity.

``mg.autograd.set_detect_anomaly(True)`` (or ``with mg.autograd.detect_anomaly():``)
makes every recorded op remember where in your code it was created, and
makes the backward pass check each op's input gradients: the first op whose
backward returns NaN or inf raises a RuntimeError naming the op, the input,
and the line of the forward that created it. It slows the backward down;
leave it off for training.
"""

from __future__ import annotations

import os
import traceback

from minigrad.backend import get_array_module
from minigrad.grad_mode import _FlagContext

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


class _AnomalyMode:
    enabled = False


_mode = _AnomalyMode()


def set_detect_anomaly(mode: bool) -> None:
    """Switch anomaly detection on or off (process-wide)."""
    _mode.enabled = bool(mode)


def is_anomaly_enabled() -> bool:
    """True while anomaly detection is on."""
    return _mode.enabled


class detect_anomaly(_FlagContext):
    """Context manager turning anomaly detection on inside its block."""

    flags = _mode

    def __init__(self, check_nan: bool = True):
        self.check_nan = check_nan
        self.mode = check_nan


def forward_trace() -> str:
    """Where the op being recorded was called from (user frames only)."""
    frames = [f for f in traceback.extract_stack()[:-3] if not f.filename.startswith(_PACKAGE_DIR)]
    return "".join(traceback.format_list(frames[-6:]))


def check_gradients(node, grads) -> None:
    """Raise if any gradient returned by ``node``'s backward holds NaN or inf.

    Raises:
        RuntimeError: names the op, the input index and the forward's location.
    """
    for i, g in enumerate(grads):
        if g is None:
            continue
        data = g.array
        if data.dtype.kind in "fc" and data.size and not bool(get_array_module(data).isfinite(data).all()):
            where = getattr(node, "_forward_trace", None)
            location = f"\nThe op was created at:\n{where}" if where else ""
            kind = "nan" if bool((data != data).any()) else "inf"
            raise RuntimeError(
                f"anomaly detected: function '{node.name()}' returned {kind} values in its gradient for "
                f"input {i} (shape {tuple(data.shape)}).{location}"
            )
