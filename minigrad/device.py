"""``mg.device``: where a tensor's data lives, with ``torch.device``'s names, plus the default device.

A device is a ``str`` subclass holding its canonical name (``"cpu"``,
``"cuda"``, ``"cuda:1"``) and exposing ``torch.device``'s ``type`` and
``index``::

    mg.device("cuda", 1)            # device(type='cuda', index=1)
    mg.device("cuda:1") == mg.device("cuda", 1)
    t.device == mg.device("cpu")    # t.device is a device too
    t.device.type == "cpu"

Why a ``str`` subclass: minigrad has always named devices with strings
(``t.device == "cpu"``, ``"cuda:0"`` as a dict key, f-strings in messages),
and so do minigrad_dist and user code. A subclass keeps all of that working
unchanged and costs nothing where ``t.device`` is read (the backend hands
out one cached instance per device), while adding what ``torch.device``
has. The one visible difference from PyTorch: a device compares equal to
its name, ``mg.device("cpu") == "cpu"`` (PyTorch says False there).

Where minigrad differs from ``torch.device`` otherwise: only the ``cpu``
and ``cuda`` device types exist (PyTorch's ``meta``, ``mps``, ``xpu``, ...
raise RuntimeError). ``"cpu:N"`` is the CPU, as in PyTorch: a tensor made
there reports ``device(type='cpu')``.

The default device (``set_default_device``) is where factories
(``mg.zeros``, ``mg.tensor``, ...) and layers put new tensors when no
``device=`` is given; ``with mg.device("cuda"):`` sets it for a block.
"""

from __future__ import annotations

import re
import threading

__all__ = ["device", "set_default_device", "get_default_device"]

_TYPES = ("cpu", "cuda")
_builtin_type = type
_DEVICE_STRING = re.compile(r"^([a-zA-Z_]+)(?::(0|[1-9][0-9]*))?$")


class device(str):
    """A device: ``device("cpu")``, ``device("cuda")``, ``device("cuda:1")`` or ``device("cuda", 1)``.

    Args:
        type: ``"cpu"`` or ``"cuda"``, optionally with ``":N"``; or a device
            (returned as it is); or an int N, meaning CUDA device N (as
            ``torch.device(N)`` means the current accelerator's device N).
        index: the device index (a non-negative int), when ``type`` has none.

    Attributes:
        type: ``"cpu"`` or ``"cuda"``.
        index: the index, or None when not given (``device("cuda")`` is the
            current CUDA device wherever a tensor is made).

    A device is also the string of its name (``str(d)``, ``d == "cuda:1"``),
    hashes like it, and pickles. Used as a context manager it is the
    default device inside the block (``set_default_device``).

    Raises:
        TypeError: ``type`` is not a str, device or int, or ``index`` not an int.
        RuntimeError: the string is not a device name (``"gpu"``, ``"cuda:x"``),
            the type is not cpu/cuda, the index is negative or given twice,
            or an int was given and no CUDA device is available.
    """

    def __new__(cls, type, index=None):  # noqa: A002  (PyTorch's argument name)
        cacheable = index is None or _builtin_type(index) is int  # True and 1.0 hash like 1: not cache keys
        if cacheable:
            try:
                return _cache[type, index]
            except (KeyError, TypeError):  # TypeError: an unhashable argument, reported below
                pass
        if isinstance(type, device) and index is None:
            return type
        kind, parsed = _parse(type)
        if index is not None:
            if parsed is not None:
                raise RuntimeError(
                    f"device(): the type string must not include an index when index is passed explicitly: {type}"
                )
            if not isinstance(index, int) or isinstance(index, bool):
                raise TypeError(f"device(): argument 'index' must be int, not {_type_name(index)}")
            if index < 0:
                raise RuntimeError(f"device(): the device index must not be negative, got {index}")
            parsed = index
        name = kind if parsed is None else f"{kind}:{parsed}"
        self = _cache.get((name, None))
        if self is None:
            self = str.__new__(cls, name)
            self._type = kind
            self._index = parsed
            _cache[name, None] = self
        if cacheable and isinstance(type, str):
            _cache[type, index] = self
        return self

    @property
    def type(self) -> str:
        """``"cpu"`` or ``"cuda"``."""
        return self._type

    @property
    def index(self):
        """The device index (an int), or None when the device was named without one."""
        return self._index

    def __repr__(self) -> str:
        if self._index is None:
            return f"device(type='{self._type}')"
        return f"device(type='{self._type}', index={self._index})"

    def __reduce__(self):
        return (device, (str(self),))

    def __enter__(self):
        _default.stack.append(_default.device)
        _default.device = self
        return self

    def __exit__(self, *exc):
        _default.device = _default.stack.pop()
        return False


_cache: dict = {}


def _type_name(value) -> str:
    return _builtin_type(value).__name__


def _parse(spec) -> tuple:
    """``(type, index or None)`` of a device string, device or int."""
    if isinstance(spec, device):
        return spec._type, spec._index
    if isinstance(spec, int) and not isinstance(spec, bool):
        return "cuda", _accelerator_index(spec)
    if not isinstance(spec, str):
        raise TypeError(
            f"device(): expected a device name such as 'cpu', 'cuda' or 'cuda:0' (or a device or an int), "
            f"got {_type_name(spec)}"
        )
    match = _DEVICE_STRING.match(spec)
    if match is None:
        raise RuntimeError(f"device(): invalid device string {spec!r}; expected 'cpu', 'cuda' or 'cuda:N'")
    kind, index = match.groups()
    if kind not in _TYPES:
        raise RuntimeError(
            f"device(): unknown device type {kind!r} in {spec!r}; minigrad has the 'cpu' and 'cuda' device types"
        )
    return kind, None if index is None else int(index)


def _accelerator_index(index: int) -> int:
    """An int device spec: CUDA device ``index``, as ``torch.device(N)`` on a CUDA build."""
    from minigrad import backend  # noqa: PLC0415  (backend imports this module)

    if not backend.cuda_is_available():
        raise RuntimeError(
            f"device({index}): an int names a device of the accelerator, and none is available "
            f"({backend.cuda_unavailable_reason()}); use device('cpu')"
        )
    if index < 0:
        raise RuntimeError(f"device(): the device index must not be negative, got {index}")
    return index


CPU = device("cpu")


# -- the default device ----------------------------------------------------------------------


class _DefaultDevice(threading.local):
    """The device that factories use when given none (per thread, like the ``with device:`` blocks)."""

    def __init__(self):
        self.device = CPU
        self.stack = []


_default = _DefaultDevice()


def default_device() -> device:
    """The default device as set, unresolved (``device('cuda')`` stays without an index); for the backend."""
    return _default.device


def set_default_device(dev) -> None:
    """Make ``dev`` the device of tensors made without ``device=`` (``mg.zeros``, ``mg.tensor``, layers, ...).

    Like ``torch.set_default_device``: ``None`` restores the CPU; ``"cuda"``
    means the CUDA device current when each tensor is made. Availability is
    checked when a tensor is made, as in PyTorch. The setting is per thread.

    Raises:
        TypeError, RuntimeError: ``dev`` is not a device name (see ``device``).
    """
    _default.device = CPU if dev is None else device(dev)


def get_default_device() -> device:
    """The device where tensors are made when no ``device=`` is given (``device('cpu')`` by default).

    A CUDA default comes back with the index it resolves to now.

    Raises:
        RuntimeError: the default is a CUDA device and CUDA is not available.
    """
    current = _default.device
    if current is CPU:
        return CPU
    from minigrad import backend  # noqa: PLC0415  (backend imports this module)

    return backend.normalize_device(current)
