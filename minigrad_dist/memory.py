"""Memory accounting per rank: bytes of parameters, gradients, optimizer state and gathered parameters.

Sharding (ZeRO, FSDP) is about memory, so its tests and benchmark need
numbers that come from the arrays the framework really holds, not from the
process's resident size (which NumPy's allocator and Python blur). Two
sources, combined by ``memory_report``:

1. **What is held now.** ``memory_report(model, optimizer)`` walks the
   model's parameters and their ``.grad``, and the optimizer's state
   tensors, and counts each distinct piece of memory once (views of one
   buffer count once, by their base array).
2. **What came and went.** Buffers that live only part of a step (an FSDP
   unit's gathered parameters, a ZeRO-2 bucket before its reduce-scatter)
   are registered when made, with ``track(category, array)``: the ledger
   counts their bytes while they are alive (a weak reference tells it when
   they are freed) and remembers the peak. ``reset_peaks()`` starts a new
   measurement window.

Sharded wrappers add what they hold beyond plain parameters through a
``memory_holdings()`` method (a dict ``category -> list of arrays``), which
``memory_report`` calls on the model and the optimizer when they have it.
"""

from __future__ import annotations

import weakref
from collections import defaultdict

from minigrad.tensor import Tensor

CATEGORIES = ("parameters", "gradients", "optimizer_state", "gathered_parameters", "gradient_buckets")


class MemoryLedger:
    """Live and peak bytes of tracked buffers, per category (one ledger per process: ``LEDGER``)."""

    def __init__(self):
        self.live = defaultdict(int)
        self.peak = defaultdict(int)
        self._alive = {}  # id(array) -> (category, nbytes): tracked arrays not yet freed

    def track(self, category: str, array):
        """Count ``array``'s bytes under ``category`` until it is freed; returns ``array``.

        Raises:
            ValueError: ``category`` is not one of ``CATEGORIES``.
            TypeError: ``array`` cannot be weakly referenced (not a NumPy or CuPy array).
        """
        if category not in CATEGORIES:
            raise ValueError(f"memory.track: unknown category {category!r}; use one of {CATEGORIES}")
        key = id(array)
        if key in self._alive:
            return array
        try:
            weakref.finalize(array, self._freed, key)
        except TypeError as error:
            raise TypeError(f"memory.track: cannot track a {type(array).__name__}; pass an array") from error
        nbytes = int(array.nbytes)
        self._alive[key] = (category, nbytes)
        self.live[category] += nbytes
        self.peak[category] = max(self.peak[category], self.live[category])
        return array

    def _freed(self, key) -> None:
        category, nbytes = self._alive.pop(key)
        self.live[category] -= nbytes

    def reset_peaks(self) -> None:
        """Start a new window: each category's peak becomes its live bytes now."""
        for category in CATEGORIES:
            self.peak[category] = self.live[category]


LEDGER = MemoryLedger()


def track(category: str, array):
    """Register a transient buffer with the process's ledger (see ``MemoryLedger.track``); returns it."""
    return LEDGER.track(category, array)


def reset_peaks() -> None:
    """Start a new peak-measurement window in the process's ledger."""
    LEDGER.reset_peaks()


def _owner(array):
    """The array that owns ``array``'s memory (views count as their base)."""
    while getattr(array, "base", None) is not None and hasattr(array.base, "nbytes"):
        array = array.base
    return array


def held_bytes(arrays) -> int:
    """Bytes of distinct memory behind ``arrays`` (Tensors or arrays; views of one buffer count once).

    A view counts its whole base buffer: what is held is the buffer, however
    little of it the view shows.
    """
    seen = {}
    for item in arrays:
        if item is None:
            continue
        array = item.array if isinstance(item, Tensor) else item
        owner = _owner(array)
        seen[id(owner)] = int(owner.nbytes)
    return sum(seen.values())


def _optimizer_state_arrays(optimizer):
    for state in optimizer.state.values():
        for value in state.values():
            if isinstance(value, Tensor) or hasattr(value, "nbytes"):
                yield value


def memory_report(model=None, optimizer=None) -> dict:
    """Bytes this rank holds, per category, and the ledger's live and peak bytes of transient buffers.

    Args:
        model: a Module (or wrapper) whose parameters and ``.grad`` are counted.
        optimizer: an optimizer whose state tensors are counted.

    Returns:
        ``{"parameters", "gradients", "optimizer_state", "gathered_parameters",
        "gradient_buckets": bytes held now, "peak": {category: bytes}}``.
        ``peak`` holds, for each category, the ledger's peak since the last
        ``reset_peaks()`` (for held categories: the larger of that and now).

    Objects with a ``memory_holdings()`` method add their own arrays to the
    categories it names (a sharded optimizer's flat shards, an FSDP unit's
    gathered buffer).
    """
    holdings = defaultdict(list)
    if model is not None:
        for p in model.parameters():
            holdings["parameters"].append(p)
            holdings["gradients"].append(p.grad)
    if optimizer is not None:
        holdings["optimizer_state"].extend(_optimizer_state_arrays(optimizer))
    for owner in (model, optimizer):
        extra = getattr(owner, "memory_holdings", None)
        if extra is not None:
            for category, arrays in extra().items():
                holdings[category].extend(arrays)
    report = {category: held_bytes(holdings[category]) for category in CATEGORIES}
    report["peak"] = {category: max(LEDGER.peak[category], report[category]) for category in CATEGORIES}
    return report
