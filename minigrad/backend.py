"""Array backends: NumPy on the CPU, CuPy on CUDA devices.

This is the only module that knows CuPy exists. Everything else asks it for
the array module of some data (``get_array_module``), for a device name
(``device_of``), or for one of the few helpers whose NumPy and CuPy spellings
differ (``scatter_add``, random numbers, conversion between devices).

Devices are named like PyTorch's: ``"cpu"`` and ``"cuda:N"``.
"""

from __future__ import annotations

import re
import threading

import numpy as np

try:  # CuPy is optional: the "gpu" extra installs it.
    import cupy as _cupy
    import cupyx as _cupyx

    try:
        _CUDA_DEVICES = _cupy.cuda.runtime.getDeviceCount()
    except Exception:  # CuPy installed but no usable driver or device.
        _CUDA_DEVICES = 0
except ImportError:
    _cupy = None
    _cupyx = None
    _CUDA_DEVICES = 0

_DEVICE_PATTERN = re.compile(r"^(cpu|cuda)(?::(\d+))?$")


def cuda_is_available() -> bool:
    """True when CuPy is importable and at least one CUDA device is visible."""
    return _CUDA_DEVICES > 0


def cuda_device_count() -> int:
    """Number of CUDA devices CuPy can see (0 without CuPy)."""
    return _CUDA_DEVICES


def cuda_unavailable_reason() -> str:
    """A sentence saying why CUDA tensors cannot be made here ('' when they can)."""
    if _cupy is None:
        return "CuPy is not installed (pip install 'minigrad[gpu]')"
    if _CUDA_DEVICES == 0:
        return "CuPy is installed but no CUDA device is visible"
    return ""


def normalize_device(device) -> str:
    """Return the canonical device name for ``device``.

    Accepts ``"cpu"``, ``"cuda"`` (meaning the current CUDA device),
    ``"cuda:N"`` or an int N (meaning ``"cuda:N"``).

    Raises:
        ValueError: the name is not a device name.
        RuntimeError: a CUDA device was asked for but none is available.
    """
    if device is None:
        return "cpu"
    if isinstance(device, int) and not isinstance(device, bool):
        device = f"cuda:{device}"
    if not isinstance(device, str):
        raise TypeError(f"device must be a str such as 'cpu' or 'cuda:0', got {type(device).__name__}")
    match = _DEVICE_PATTERN.match(device)
    if match is None:
        raise ValueError(f"unknown device {device!r}: expected 'cpu', 'cuda' or 'cuda:N'")
    kind, index = match.groups()
    if kind == "cpu":
        if index is not None:
            raise ValueError(f"unknown device {device!r}: the CPU device takes no index, use 'cpu'")
        return "cpu"
    if not cuda_is_available():
        raise RuntimeError(f"cannot use device {device!r}: {cuda_unavailable_reason()}")
    index = int(index) if index is not None else _cupy.cuda.runtime.getDevice()
    if index >= _CUDA_DEVICES:
        raise RuntimeError(f"device {device!r} does not exist: {_CUDA_DEVICES} CUDA device(s) visible")
    return f"cuda:{index}"


def get_array_module(*arrays):
    """Return ``numpy`` or ``cupy``, whichever module the given arrays belong to.

    Non-array arguments (Python scalars, None) are ignored.

    Raises:
        RuntimeError: the arrays live on different devices (names both).
    """
    xp = np
    first = None
    for a in arrays:
        if type(a) is np.ndarray or a is None or isinstance(a, (int, float, bool, np.generic)):
            if xp is not np:
                raise RuntimeError(
                    f"expected all arrays on the same device, found {device_of(first)} and cpu"
                )
            if first is None and type(a) is np.ndarray:
                first = a
            continue
        if _cupy is not None and isinstance(a, _cupy.ndarray):
            if first is not None and device_of(first) != device_of(a):
                raise RuntimeError(
                    f"expected all arrays on the same device, found {device_of(first)} and {device_of(a)}"
                )
            xp = _cupy
            first = a
    return xp


def is_array(obj) -> bool:
    """True for a NumPy or CuPy ndarray."""
    return isinstance(obj, np.ndarray) or (_cupy is not None and isinstance(obj, _cupy.ndarray))


def device_of(array) -> str:
    """The device name ("cpu" or "cuda:N") of a NumPy or CuPy array."""
    if type(array) is np.ndarray or _cupy is None or not isinstance(array, _cupy.ndarray):
        return "cpu"
    return f"cuda:{array.device.id}"


def module_for_device(device: str):
    """The array module that holds data on ``device`` (a canonical name)."""
    return np if device == "cpu" else _cupy


def as_array(data, dtype=None, device: str = "cpu"):
    """Make an array on ``device`` from ``data`` (array, list, scalar), copying only when needed."""
    if device == "cpu":
        if _cupy is not None and isinstance(data, _cupy.ndarray):
            data = _cupy.asnumpy(data)
        return np.asarray(data, dtype=dtype)
    with _cupy.cuda.Device(_device_index(device)):
        return _cupy.asarray(data, dtype=dtype)


def to_device(array, device: str):
    """Return ``array`` on ``device``; the same object when it is already there."""
    if device_of(array) == device:
        return array
    if device == "cpu":
        return _cupy.asnumpy(array)
    with _cupy.cuda.Device(_device_index(device)):
        return _cupy.asarray(array)


def to_numpy(array) -> np.ndarray:
    """A NumPy array with the contents of ``array`` (copied from the GPU when needed)."""
    if type(array) is np.ndarray:
        return array
    if _cupy is not None and isinstance(array, _cupy.ndarray):
        return _cupy.asnumpy(array)
    return np.asarray(array)


def synchronize(array) -> None:
    """Wait until the GPU work producing ``array`` has finished (no-op on the CPU).

    MPI never synchronizes CUDA streams, so communication code calls this
    before handing a device buffer to MPI.
    """
    if _cupy is not None and isinstance(array, _cupy.ndarray):
        _cupy.cuda.get_current_stream().synchronize()


def _device_index(device: str) -> int:
    return int(device.split(":")[1])


def device_context(device: str):
    """A context manager making ``device`` current for new CuPy arrays (a no-op for "cpu")."""
    if device == "cpu":
        return _NullContext()
    return _cupy.cuda.Device(_device_index(device))


class _NullContext:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def scatter_add(target, indices, values) -> None:
    """``target[indices] += values`` with repeated indices summed (in place).

    NumPy spells this ``np.add.at``, CuPy ``cupyx.scatter_add``.
    """
    if type(target) is np.ndarray:
        np.add.at(target, indices, values)
    else:
        _cupyx.scatter_add(target, indices, values)


# ---------------------------------------------------------------- random numbers


class _RandomState(threading.local):
    """One generator per device and thread, all reseeded by ``manual_seed``."""

    def __init__(self):
        self.epoch = -1
        self.generators = {}


_random = _RandomState()
# [seed, epoch]: the epoch counts manual_seed calls so every thread notices a reseed.
_seeding = [None, 0]


def manual_seed(seed: int) -> None:
    """Seed the random generators of every device (like ``torch.manual_seed``).

    Raises:
        TypeError: ``seed`` is not an int.
    """
    if not isinstance(seed, (int, np.integer)) or isinstance(seed, bool):
        raise TypeError(f"manual_seed expects an int, got {type(seed).__name__}")
    _seeding[0] = int(seed)
    _seeding[1] += 1


def generator(device: str = "cpu"):
    """The random generator used for ``device`` (created on first use)."""
    if _random.epoch != _seeding[1]:
        _random.generators = {}
        _random.epoch = _seeding[1]
    gen = _random.generators.get(device)
    if gen is None:
        if device == "cpu":
            gen = np.random.default_rng(_seeding[0])
        else:
            with device_context(device):
                gen = _cupy.random.default_rng(_seeding[0])
        _random.generators[device] = gen
    return gen


def get_rng_state() -> dict:
    """The CPU generator's state as plain data (for checkpoints)."""
    return {"seed": _seeding[0], "cpu": generator("cpu").bit_generator.state}


def set_rng_state(state: dict) -> None:
    """Restore a state returned by ``get_rng_state``.

    Raises:
        ValueError: ``state`` lacks the "cpu" generator state.
    """
    if "cpu" not in state:
        raise ValueError("set_rng_state expects a dict returned by get_rng_state (missing 'cpu')")
    if state.get("seed") is not None:
        manual_seed(state["seed"])
    generator("cpu").bit_generator.state = state["cpu"]
