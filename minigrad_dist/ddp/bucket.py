"""Gradient buckets: which parameters share one flat buffer, and the buffer itself.

Buckets are filled in the order gradients are expected to become ready
(reverse registration order at first, the observed order after the first
iteration). A bucket holds parameters of one dtype and device only, and is
closed once it reaches its size cap: 1 MiB for the first bucket (so the
first allreduce starts early), ``bucket_cap_mb`` for the rest, as upstream.
"""

from __future__ import annotations

import weakref

import numpy as np

from minigrad import backend

FIRST_BUCKET_CAP_BYTES = 1024 * 1024


def assign_buckets(params, order, cap_bytes: int, first_cap_bytes: int = FIRST_BUCKET_CAP_BYTES):
    """Group parameter indices into buckets.

    Args:
        params: the parameters (Tensors), indexed by position.
        order: parameter indices in the order gradients are expected.
        cap_bytes: size at which a bucket is closed.
        first_cap_bytes: the cap of the first bucket of each dtype/device.

    Returns:
        A list of buckets, each a list of parameter indices in ``order``'s
        order; buckets are sorted by the position of their first parameter
        in ``order``.
    """
    open_buckets = {}  # (dtype, device) -> (indices, bytes)
    caps_used = {}
    closed = []
    for index in order:
        p = params[index]
        key = (p.dtype, p.device)
        indices, size = open_buckets.get(key, ([], 0))
        indices.append(index)
        size += p.array.nbytes
        cap = first_cap_bytes if caps_used.get(key, 0) == 0 else cap_bytes
        if size >= cap:
            closed.append(indices)
            caps_used[key] = caps_used.get(key, 0) + 1
            open_buckets.pop(key, None)
        else:
            open_buckets[key] = (indices, size)
    closed.extend(indices for indices, _ in open_buckets.values())
    position = {index: i for i, index in enumerate(order)}
    closed.sort(key=lambda bucket: position[bucket[0]])
    return closed


class Bucket:
    """One flat buffer holding the gradients of several parameters.

    Attributes:
        index: position in the Reducer's bucket list (the allreduce order).
        param_indices: indices (into the Reducer's parameter list) of the members.
        params: the member parameters.
        offsets, sizes, shapes: where each member's gradient lives in ``buffer``.
        buffer: the flat array (dtype and device of the members).
        pending: members whose gradient has not been copied in this iteration.
        future: the in-flight reduction, once launched.
        staging: with shared-memory reduction (``SharedMemoryStrategy``), this
            rank's staging copy in the shared window, where the gradients are
            written instead of ``buffer``; None otherwise.
    """

    def __init__(self, index: int, params, param_indices):
        self.index = index
        self.params = list(params)
        self.param_indices = list(param_indices)
        self.sizes = [int(p.array.size) for p in self.params]
        self.shapes = [tuple(p.shape) for p in self.params]
        self.offsets = []
        total = 0
        for size in self.sizes:
            self.offsets.append(total)
            total += size
        first = self.params[0]
        self.xp = backend.module_for_device(first.device)
        with backend.device_context(first.device):
            self.buffer = self.xp.zeros(total, dtype=first.dtype)
        self.pending = len(self.params)
        self.future = None
        self.staging = None
        self._lease = None  # weak reference to the _Lease of the views last lent out of ``buffer``

    def view(self, slot: int, flat=None):
        """The region of ``buffer`` (or of ``flat``, laid out alike) for member ``slot``, shaped like it."""
        flat = self.buffer if flat is None else flat
        start = self.offsets[slot]
        return flat[start : start + self.sizes[slot]].reshape(self.shapes[slot])

    def lend_views(self) -> list:
        """Per-member views of ``buffer`` to hand out as ``.grad``, lent so that ``has_outside_views`` sees them.

        On the CPU the views are made through a ``_Lease``, which NumPy knows
        as the owner of their memory: every array derived from them (views of
        views included) keeps it alive, so a weak reference to it tells
        whether any is left.
        """
        if backend.device_of(self.buffer) != "cpu":
            return [self.view(slot) for slot in range(len(self.params))]
        lease = _Lease(self.buffer)
        self._lease = weakref.ref(lease)
        flat = np.asarray(lease)
        return [self.view(slot, flat) for slot in range(len(self.params))]

    def has_outside_views(self) -> bool:
        """Whether an array lent by ``lend_views`` (or one made from it, e.g. a held ``.grad``) still exists.

        Exact on the CPU; always True on other devices, where a fresh buffer
        from the memory pool costs little.
        """
        if backend.device_of(self.buffer) != "cpu":
            return True
        return self._lease is not None and self._lease() is not None

    def replace_buffer(self) -> None:
        """Give the bucket a new, uninitialized buffer like the old one (which stays with whoever views it)."""
        xp = backend.get_array_module(self.buffer)
        self.buffer = xp.empty_like(self.buffer)
        self._lease = None

    def reset(self) -> None:
        """Forget the previous iteration (before a new backward)."""
        self.pending = len(self.params)
        self.future = None

    @property
    def nbytes(self) -> int:
        """Size of the buffer in bytes."""
        return self.buffer.nbytes


class _Lease:
    """Lends a CPU buffer's memory to the arrays ``np.asarray(lease)`` makes: NumPy sees only the lease as owner.

    NumPy gets the memory as a bare address (``__array_interface__``), so the
    lease, which holds the buffer, is what keeps that memory alive for every
    array made from it and every view of those: the lease lives exactly as
    long as one of them does.
    """

    def __init__(self, buffer):
        self.buffer = buffer
        self.__array_interface__ = buffer.__array_interface__
