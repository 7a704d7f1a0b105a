"""Anomaly detection: find the op whose backward produced NaN or infinity.

``mg.autograd.set_detect_anomaly(True)`` (or ``with mg.autograd.detect_anomaly():``)
makes every recorded op remember where in your code it was created, and
makes the backward pass check each op's input gradients: the first op whose
backward returns NaN or inf raises a RuntimeError naming the op, the input,
and the line of the forward that created it. It slows the backward down;
leave it off for training.

The mode is process-wide, as in PyTorch:

1. ``set_detect_anomaly(mode)`` switches it at once, when called; used in a
   ``with`` statement it also puts the previous setting back at the end of
   the block.
2. ``detect_anomaly(check_nan=True)`` switches it on only inside its
   ``with`` block and restores it after.
3. ``check_nan=False`` keeps the forward traces but skips the NaN/inf check
   of the gradients.
"""

from __future__ import annotations

import os
import traceback

from minigrad.backend import get_array_module

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


class _AnomalyMode:
    enabled = False
    check_nan = True


_mode = _AnomalyMode()


def _expect_bool(fn: str, name: str, position: int, value) -> bool:
    # PyTorch's own check: only real bools, not 1, "yes" or None (a truthy string would switch it on).
    if not isinstance(value, bool):
        raise TypeError(
            f"{fn}(): argument '{name}' (position {position}) must be bool, not {type(value).__name__}; "
            f"pass True or False"
        )
    return value


class _AnomalySetting:
    """Sets the mode on entry (and on construction for ``set_detect_anomaly``) and restores it on exit."""

    def _switch(self, enabled: bool, check_nan: bool) -> None:
        self._previous = (_mode.enabled, _mode.check_nan)
        _mode.enabled, _mode.check_nan = enabled, check_nan

    def __exit__(self, *exc) -> bool:
        _mode.enabled, _mode.check_nan = self._previous
        return False


class set_detect_anomaly(_AnomalySetting):
    """Switch anomaly detection on or off (process-wide), at once.

    ``set_detect_anomaly(True)`` turns it on until switched off;
    ``with set_detect_anomaly(True):`` turns it on and puts the previous
    setting back when the block ends (also on an exception).

    Args:
        mode: True to detect anomalies, False to stop.
        check_nan: also check every backward's gradients for NaN and inf
            (default True); False only records where each op was created.

    Raises:
        TypeError: ``mode`` or ``check_nan`` is not a bool (PyTorch's type).
    """

    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        fn = "set_detect_anomaly"
        self._switch(_expect_bool(fn, "mode", 1, mode), _expect_bool(fn, "check_nan", 2, check_nan))

    def __enter__(self):
        return self  # already switched when constructed


class detect_anomaly(_AnomalySetting):
    """Context manager turning anomaly detection on inside its block only.

    Args:
        check_nan: also check every backward's gradients for NaN and inf
            (default True); False only records where each op was created.

    Raises:
        TypeError: ``check_nan`` is not a bool.
    """

    def __init__(self, check_nan: bool = True) -> None:
        self.check_nan = _expect_bool("detect_anomaly", "check_nan", 1, check_nan)

    def __enter__(self):
        self._switch(True, self.check_nan)
        return self


def is_anomaly_enabled() -> bool:
    """True while anomaly detection is on."""
    return _mode.enabled


def is_anomaly_check_nan_enabled() -> bool:
    """True while anomaly detection also checks gradients for NaN and inf."""
    return _mode.enabled and _mode.check_nan


def forward_trace() -> str:
    """Where the op being recorded was called from (user frames only)."""
    frames = [f for f in traceback.extract_stack()[:-3] if not f.filename.startswith(_PACKAGE_DIR)]
    return "".join(traceback.format_list(frames[-6:]))


def check_gradients(node, grads) -> None:
    """Raise if any gradient returned by ``node``'s backward holds NaN or inf (unless ``check_nan`` is off).

    Raises:
        RuntimeError: names the op, the input index and the forward's location.
    """
    if not _mode.check_nan:
        return
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
