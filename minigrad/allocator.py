"""Keeping freed memory in the process: glibc malloc settings for NumPy's temporaries.

Every NumPy op allocates its result, and a training step frees its
temporaries a few megabytes at a time. glibc's malloc serves a block above
its mmap threshold with fresh pages from the kernel, and gives the top of its
heap back to the kernel once more than its trim threshold is free there; both
thresholds start small (128 KiB) and slide only up to the largest single
block freed (trim: twice that). So when several 1 MiB temporaries are freed
together, the heap is trimmed, and the next op's result is faulted in again
page by page, and zero-filling those pages costs more than the elementwise
arithmetic on them (measured with and without these settings, for minigrad
and PyTorch: ``python benchmarks/bench_allocator.py``,
``benchmarks/results/allocator.json``).

So at import, on Linux with glibc, minigrad fixes the two thresholds:
``M_MMAP_THRESHOLD`` = 32 MiB (the ceiling glibc's sliding threshold has on
64-bit machines: larger arrays are still mapped and unmapped on their own)
and ``M_TRIM_THRESHOLD`` = 256 MiB (up to that much freed memory stays in the
process for the next step; RSS stays at the step's peak instead of falling
between ops). PyTorch in the same process allocates through the same malloc
and gains too. Set ``MINIGRAD_KEEP_FREED_MEMORY=0`` before importing minigrad
to keep glibc's defaults; ``settings()`` says what was applied.
"""

from __future__ import annotations

import ctypes
import os
import platform

__all__ = ["keep_freed_memory", "settings"]

MMAP_THRESHOLD = 32 * 2**20
TRIM_THRESHOLD = 256 * 2**20
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # mallopt's parameter numbers in glibc's malloc.h
_applied: dict[str, int] = {}


def keep_freed_memory(mmap_threshold: int = MMAP_THRESHOLD, trim_threshold: int = TRIM_THRESHOLD) -> bool:
    """Set glibc's mmap and trim thresholds (bytes) for this process; True if glibc took both.

    Called once at ``import minigrad`` with the defaults (see the module
    docstring for why). A no-op returning False where the C library is not
    glibc (macOS, musl, Windows). Lower values give memory back sooner and
    cost page faults; larger keep more freed memory in the process.

    Raises:
        ValueError: a threshold is not a positive int, or ``mmap_threshold`` is above 2**31 - 1
            (``mallopt`` takes a C int).
    """
    for name, value in (("mmap_threshold", mmap_threshold), ("trim_threshold", trim_threshold)):
        if not isinstance(value, int) or isinstance(value, bool) or not 0 < value < 2**31:
            raise ValueError(f"{name} must be a positive int below 2**31 bytes, got {value!r}")
    libc = _glibc()
    if libc is None:
        return False
    took = libc.mallopt(_M_MMAP_THRESHOLD, mmap_threshold) == 1
    took = libc.mallopt(_M_TRIM_THRESHOLD, trim_threshold) == 1 and took
    if took:
        _applied.update(mmap_threshold=mmap_threshold, trim_threshold=trim_threshold)
    return took


def settings() -> dict[str, int]:
    """The thresholds minigrad applied (``{}`` if none: not glibc, or ``MINIGRAD_KEEP_FREED_MEMORY=0``)."""
    return dict(_applied)


def _glibc():
    if platform.system() != "Linux" or platform.libc_ver()[0] != "glibc":
        return None
    try:
        return ctypes.CDLL("libc.so.6")
    except OSError:
        return None


def _apply_at_import() -> None:
    if os.environ.get("MINIGRAD_KEEP_FREED_MEMORY", "1") != "0":
        keep_freed_memory()
