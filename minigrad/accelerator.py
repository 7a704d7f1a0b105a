"""``mg.accelerator``: PyTorch's device-generic accelerator API; minigrad's one accelerator is CUDA (via CuPy).

As ``torch.accelerator`` on a machine without one: ``is_available()`` is
False, ``current_accelerator()`` None, ``device_count()`` 0, and the
functions that need a device raise RuntimeError.
"""

from __future__ import annotations

from minigrad import backend, cuda
from minigrad.cuda import device_count, is_available  # the one accelerator's answers are CUDA's
from minigrad.device import device

__all__ = [
    "is_available", "current_accelerator", "device_count", "current_device_index", "set_device_index",
    "synchronize",
]

_NONE_AVAILABLE = "no accelerator is available ({}); minigrad's accelerator is a CUDA GPU through CuPy"


def _on_cuda(fn: str, cuda_function, *args):
    """``cuda_function(*args)``, the CUDA function that the accelerator function ``fn`` stands for.

    Raises:
        RuntimeError: no accelerator is available (naming ``mg.accelerator.<fn>``, not the CUDA function).
    """
    if not backend.cuda_is_available():
        raise RuntimeError(f"mg.accelerator.{fn}(): " + _NONE_AVAILABLE.format(backend.cuda_unavailable_reason()))
    return cuda_function(*args)


def current_accelerator(check_available: bool = False):
    """``mg.device("cuda")`` when minigrad can use CUDA here, else None.

    Args:
        check_available: also require a visible device. Without it, as
            PyTorch answers for the accelerator it was built for, the
            answer is ``device("cuda")`` whenever CuPy is installed.
    """
    usable = backend.cuda_is_available() if check_available else backend.cuda_is_installed()
    return device("cuda") if usable else None


def current_device_index() -> int:
    """The index of the current CUDA device.

    Raises:
        RuntimeError: no accelerator is available.
    """
    return _on_cuda("current_device_index", cuda.current_device)


def set_device_index(device) -> None:
    """Make CUDA device ``device`` (an int, ``"cuda:N"`` or a device) current; a negative int does nothing.

    Raises:
        RuntimeError: no accelerator is available. ValueError: no such device.
    """
    _on_cuda("set_device_index", cuda.set_device, device)


def synchronize(device=None) -> None:
    """Wait for all queued work on the accelerator device ``device`` (default: the current one).

    Raises:
        RuntimeError: no accelerator is available.
    """
    _on_cuda("synchronize", cuda.synchronize, device)
