"""``mg.backends``: PyTorch's ``torch.backends`` switches, answered for minigrad.

Programs probe for Apple's MPS (``torch.backends.mps.is_available()``) and
tune cuDNN (``torch.backends.cudnn.benchmark = True``,
``torch.backends.cudnn.deterministic = True``). minigrad runs on NumPy and
CuPy: there is no MPS device, and convolutions do not go through cuDNN, so
the cuDNN flags are plain attributes a program may set and read back without
changing any result.
"""

from __future__ import annotations

from types import SimpleNamespace

__all__ = ["mps", "cudnn"]


def _not_available() -> bool:
    """False: this backend does not exist in minigrad."""
    return False


mps = SimpleNamespace(is_available=_not_available, is_built=_not_available)
"""Apple's Metal device: never available in minigrad (``is_available()`` and ``is_built()`` are False)."""

cudnn = SimpleNamespace(is_available=_not_available, enabled=True, benchmark=False, deterministic=False,
                        allow_tf32=True)
"""cuDNN's switches, kept as attributes; minigrad does not use cuDNN, so they change no result."""
