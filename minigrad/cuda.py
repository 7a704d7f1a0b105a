"""``mg.cuda``: PyTorch's ``torch.cuda`` names over CuPy (``is_available``, ``device_count``, ``synchronize``, ...).

Everything goes through ``minigrad.backend``, the one module that talks to
CuPy. Without a usable GPU the functions behave like those of a CPU-only
PyTorch build: ``is_available()`` is False, ``device_count()`` and
``memory_allocated()`` are 0, ``empty_cache()``, ``manual_seed()`` and
``manual_seed_all()`` do nothing, and the functions that need a device
(``current_device``, ``synchronize``, ``get_device_name``, ``set_device``)
raise ``CudaNotAvailableError`` saying why (CuPy missing, or no device
visible). That error is both a RuntimeError and an AssertionError: PyTorch
raises AssertionError ("Torch not compiled with CUDA enabled") on CPU-only
builds and RuntimeError where the driver or device is missing, so either
``except`` works as it does with PyTorch.

Also here: the legacy CUDA tensor types (``mg.cuda.FloatTensor`` ...; see
``minigrad.legacy_tensors``) and the ``mg.cuda.device(i)`` context manager.

Memory numbers are those of CuPy's default memory pool, which is where
minigrad's CUDA arrays live: ``memory_allocated`` counts bytes in use by
arrays, ``memory_reserved`` bytes held by the pool (in use plus cached).
"""

from __future__ import annotations

from minigrad import backend
from minigrad.device import device as _device
from minigrad.legacy_tensors import CUDA_TYPES

__all__ = [
    "CudaNotAvailableError", "is_available", "device_count", "current_device", "set_device", "device",
    "synchronize", "manual_seed", "manual_seed_all", "get_device_name", "empty_cache", "memory_allocated",
    "memory_reserved", "FloatTensor", "DoubleTensor", "HalfTensor", "LongTensor", "IntTensor", "ShortTensor",
    "CharTensor", "ByteTensor", "BoolTensor",
]

FloatTensor = CUDA_TYPES["FloatTensor"]
DoubleTensor = CUDA_TYPES["DoubleTensor"]
HalfTensor = CUDA_TYPES["HalfTensor"]
LongTensor = CUDA_TYPES["LongTensor"]
IntTensor = CUDA_TYPES["IntTensor"]
ShortTensor = CUDA_TYPES["ShortTensor"]
CharTensor = CUDA_TYPES["CharTensor"]
ByteTensor = CUDA_TYPES["ByteTensor"]
BoolTensor = CUDA_TYPES["BoolTensor"]


class CudaNotAvailableError(RuntimeError, AssertionError):
    """A CUDA function was called where no CUDA device can be used (see the module docstring)."""


def _require(fn: str) -> None:
    if not backend.cuda_is_available():
        raise CudaNotAvailableError(f"mg.cuda.{fn}(): CUDA is not available: {backend.cuda_unavailable_reason()}")


def _index(dev, fn: str, allow_none: bool = True) -> int:
    """The index of an existing CUDA device meant by ``dev``: None (the current device), an int, "cuda:N", a device.

    The argument is checked first (as PyTorch does), then that CUDA is available and the device exists.
    """
    if dev is None and not allow_none:
        raise ValueError(f"mg.cuda.{fn}(): expected a device index or a CUDA device, got None")
    if dev is None:
        index = None
    elif isinstance(dev, int) and not isinstance(dev, bool):
        index = dev
    elif isinstance(dev, str):
        parsed = _device(dev)
        if parsed.type != "cuda":
            raise ValueError(f"mg.cuda.{fn}(): expected a CUDA device, got {str(parsed)!r}")
        index = parsed.index
    else:
        raise TypeError(f"mg.cuda.{fn}(): expected a device index, a CUDA device or None, got {type(dev).__name__}")
    _require(fn)
    if index is None:
        return backend.current_cuda_device()
    count = backend.cuda_device_count()
    if not 0 <= index < count:
        raise ValueError(f"mg.cuda.{fn}(): invalid device index {index}: {count} CUDA device(s) visible")
    return index


def is_available() -> bool:
    """True when CuPy is installed and sees at least one CUDA device."""
    return backend.cuda_is_available()


def device_count() -> int:
    """The number of CUDA devices CuPy sees (0 without CuPy or a GPU)."""
    return backend.cuda_device_count()


def current_device() -> int:
    """The index of this thread's current CUDA device (where ``"cuda"`` tensors go).

    Raises:
        CudaNotAvailableError: CUDA is not available.
    """
    _require("current_device")
    return backend.current_cuda_device()


def set_device(device) -> None:
    """Make CUDA device ``device`` (an int, ``"cuda:N"`` or a device) current for this thread.

    A negative int does nothing, as in PyTorch.

    Raises:
        ValueError: ``device`` is not a CUDA device (``"cpu"``) or does not exist.
        TypeError: ``device`` is not an int, str or device.
        CudaNotAvailableError: CUDA is not available.
    """
    if isinstance(device, int) and not isinstance(device, bool) and device < 0:
        return
    backend.use_cuda_device(_index(device, "set_device", allow_none=False))


class device:
    """Context manager making a CUDA device current inside a ``with`` block, like ``torch.cuda.device``.

    Args:
        device: an int, ``"cuda:N"``, a device, or None / a negative int (no change).

    Raises (on entering):
        ValueError, TypeError, CudaNotAvailableError: as ``set_device``.
    """

    def __init__(self, device):
        self.idx = device
        self._previous = None

    def __enter__(self):
        if self.idx is None or (isinstance(self.idx, int) and not isinstance(self.idx, bool) and self.idx < 0):
            return self
        index = _index(self.idx, "device")
        self._previous = backend.current_cuda_device()
        backend.use_cuda_device(index)
        return self

    def __exit__(self, *exc):
        if self._previous is not None:
            backend.use_cuda_device(self._previous)
            self._previous = None
        return False


def synchronize(device=None) -> None:
    """Wait until all queued work on CUDA device ``device`` (default: the current one) has finished.

    Raises:
        CudaNotAvailableError: CUDA is not available.
    """
    backend.synchronize_cuda_device(_index(device, "synchronize"))


def manual_seed(seed) -> None:
    """Seed the random generator of the current CUDA device only (nothing to seed without CUDA, as in PyTorch).

    Raises:
        TypeError: ``seed`` is not an int. ValueError: out of [-2**63, 2**64 - 1].
    """
    if backend.cuda_is_available():
        backend.manual_seed_cuda(seed, backend.current_cuda_device())
    else:
        backend.check_seed(seed, "cuda.manual_seed")


def manual_seed_all(seed) -> None:
    """Seed the random generators of every CUDA device (a no-op without CUDA, as in PyTorch).

    Raises:
        TypeError: ``seed`` is not an int. ValueError: out of [-2**63, 2**64 - 1].
    """
    backend.check_seed(seed, "cuda.manual_seed_all")
    for index in range(backend.cuda_device_count()):
        backend.manual_seed_cuda(seed, index)


def get_device_name(device=None) -> str:
    """The product name of CUDA device ``device`` (default: the current one).

    Raises:
        CudaNotAvailableError: CUDA is not available. ValueError: no such device.
    """
    return backend.cuda_device_name(_index(device, "get_device_name"))


def empty_cache() -> None:
    """Give the cached, unused GPU memory of CuPy's pools back to the driver (no-op without CUDA)."""
    if backend.cuda_is_available():
        backend.cuda_empty_cache()


def memory_allocated(device=None) -> int:
    """Bytes of GPU memory in use by arrays on ``device`` (default: the current one); 0 without CUDA."""
    if not backend.cuda_is_available():
        return 0
    return backend.cuda_memory_allocated(_index(device, "memory_allocated"))


def memory_reserved(device=None) -> int:
    """Bytes of GPU memory held by CuPy's pool on ``device`` (in use plus cached); 0 without CUDA."""
    if not backend.cuda_is_available():
        return 0
    return backend.cuda_memory_reserved(_index(device, "memory_reserved"))
