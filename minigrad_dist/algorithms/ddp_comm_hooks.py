"""DDP communication hooks: how a ready gradient bucket is reduced across ranks.

A hook is ``hook(state, bucket: GradBucket) -> Future`` whose value is the
reduced flat buffer (array or Tensor); register it with
``DistributedDataParallel.register_comm_hook(state, hook)``. The Reducer
calls it once per bucket, in bucket-index order on every rank, and copies
the future's value back into the bucket when it completes. Hooks must
return *averaged* gradients (divide by the world size).

Built in:
    * ``allreduce_hook``: average with one allreduce (what DDP does by default).
    * ``fp16_compress_hook``: the same on a float16 copy (half the bytes).
    * ``powerSGD_hook`` with ``PowerSGDState``: low-rank compression with
      error feedback (Vogels et al., 2019).
"""

from __future__ import annotations

import numpy as np

from minigrad import backend
from minigrad._checks import expect_at_least, expect_ints
from minigrad.tensor import Tensor
from minigrad_dist.futures import completed_future
from minigrad_dist.process_group import ProcessGroup, ReduceOp


class GradBucket:
    """What a comm hook sees of one bucket (PyTorch's ``dist.GradBucket``).

    The buffer and the gradients share memory: writing into ``buffer()``
    changes ``gradients()``.
    """

    def __init__(self, bucket, is_last: bool):
        self._bucket = bucket
        self._is_last = is_last

    def index(self) -> int:
        """The bucket's index (allreduce order)."""
        return self._bucket.index

    def buffer(self) -> Tensor:
        """The flattened gradients of the bucket's parameters (1-D Tensor)."""
        return Tensor._make(self._bucket.buffer, False, None, 0)

    def gradients(self) -> list:
        """Per-parameter gradient Tensors, views into ``buffer()``."""
        return [Tensor._make(self._bucket.view(i), False, None, 0) for i in range(len(self._bucket.params))]

    def parameters(self) -> list:
        """The parameters whose gradients are in this bucket."""
        return list(self._bucket.params)

    def is_last(self) -> bool:
        """True for the last bucket reduced in an iteration."""
        return self._is_last


def _group_of(state):
    from minigrad_dist import collectives  # noqa: PLC0415  (avoids an import cycle)

    return collectives.get_default_group() if state is None else state


def allreduce_hook(process_group, bucket: GradBucket):
    """Average the bucket with one asynchronous allreduce (``process_group``: None for the default)."""
    group = _group_of(process_group)
    buffer = bucket.buffer().array
    xp = backend.get_array_module(buffer)
    xp.divide(buffer, group.size(), out=buffer)
    work = group.allreduce(buffer, ReduceOp.SUM, async_op=True)
    return work.get_future().then(lambda fut: fut.value()[0])


def fp16_compress_hook(process_group, bucket: GradBucket):
    """Average in float16: halves the bytes sent; the result is cast back to the bucket's dtype.

    Error: float16 keeps ~3 significant digits, so each averaged gradient is
    within about 1e-3 relative of the exact one (and values beyond 65504 overflow).
    """
    group = _group_of(process_group)
    buffer = bucket.buffer().array
    compressed = (buffer / group.size()).astype(np.float16)
    work = group.allreduce(compressed, ReduceOp.SUM, async_op=True)

    def decompress(fut):
        buffer[...] = fut.value()[0].astype(buffer.dtype)
        return buffer

    return work.get_future().then(decompress)


class PowerSGDState:
    """State of ``powerSGD_hook``: ranks, warm-started factors and error-feedback memory.

    Args:
        process_group: the group to reduce over (None: the default group).
        matrix_approximation_rank: rank r of the low-rank approximation.
        start_powerSGD_iter: plain allreduce for this many iterations first
            (compression is unstable at the very start of training).
        min_compression_rate: compress a gradient matrix only if its n*m
            entries exceed (n+m)*r by this factor; others are allreduced as is.
        use_error_feedback: add the previous iteration's compression error
            to the gradient before compressing (keeps the method unbiased over time).
        warm_start: reuse the previous iteration's Q factors.
        random_seed: seed of the initial Q factors (the same on every rank).

    Raises:
        TypeError: ``process_group`` is not a ProcessGroup, or a count or the seed is not an int.
        ValueError: ``matrix_approximation_rank`` < 1, or a negative ``start_powerSGD_iter`` or seed.
    """

    def __init__(
        self,
        process_group=None,
        matrix_approximation_rank: int = 1,
        start_powerSGD_iter: int = 1_000,  # noqa: N803  (PyTorch's name)
        min_compression_rate: float = 2.0,
        use_error_feedback: bool = True,
        warm_start: bool = True,
        random_seed: int = 0,
    ):
        if process_group is not None and not isinstance(process_group, ProcessGroup):
            raise TypeError(
                "PowerSGDState: process_group must be a ProcessGroup or None, "
                f"got {type(process_group).__name__}"
            )
        expect_ints(
            "PowerSGDState", matrix_approximation_rank=matrix_approximation_rank,
            start_powerSGD_iter=start_powerSGD_iter, random_seed=random_seed,
        )
        expect_at_least("random_seed", random_seed, 0, "PowerSGDState")
        expect_at_least("matrix_approximation_rank", matrix_approximation_rank, 1)
        expect_at_least("start_powerSGD_iter", start_powerSGD_iter, 0)
        self.process_group = process_group
        self.matrix_approximation_rank = matrix_approximation_rank
        self.start_powerSGD_iter = start_powerSGD_iter
        self.min_compression_rate = min_compression_rate
        self.use_error_feedback = use_error_feedback
        self.warm_start = warm_start
        self.rng = np.random.default_rng(random_seed)
        self.iter = 0
        self.error_dict = {}  # bucket index -> error array
        self.q_memory = {}  # (bucket index, slot) -> Q factor

    def maybe_increase_iter(self, bucket: GradBucket) -> None:
        """Count iterations: one per last bucket."""
        if bucket.is_last():
            self.iter += 1


def powerSGD_hook(state: PowerSGDState, bucket: GradBucket):  # noqa: N802  (PyTorch's name)
    """Average the bucket with rank-r PowerSGD compression and error feedback.

    For each gradient reshaped to an n x m matrix M: P = M Q, allreduce P,
    orthonormalize P, Q = M^T P, allreduce Q, and approximate the average by
    P Q^T / world_size. Vectors (biases) and matrices too small to gain are
    averaged exactly. The collectives run inside the hook (blocking), so this
    hook trades overlap for bandwidth.
    """
    group = _group_of(state.process_group)
    world = group.size()
    buffer = bucket.buffer().array
    xp = backend.get_array_module(buffer)
    if state.iter < state.start_powerSGD_iter:
        state.maybe_increase_iter(bucket)
        xp.divide(buffer, world, out=buffer)
        group.allreduce(buffer, ReduceOp.SUM)
        return completed_future(buffer)

    index = bucket.index()
    if state.use_error_feedback:
        error = state.error_dict.get(index)
        if error is not None:
            buffer += error
        compensated = buffer.copy()

    grads = [g.array for g in bucket.gradients()]
    rank = state.matrix_approximation_rank
    matrices, exact = [], []
    for slot, g in enumerate(grads):
        n = g.shape[0] if g.ndim > 0 else 1
        m = g.size // max(n, 1)
        r = min(n, m, rank)
        if g.ndim > 1 and n * m > (n + m) * r * state.min_compression_rate:
            matrices.append((slot, g.reshape(n, m), r))
        else:
            exact.append(g)

    if exact:
        flat = xp.concatenate([g.reshape(-1) for g in exact]) / world
        group.allreduce(flat, ReduceOp.SUM)
        start = 0
        for g in exact:
            g[...] = flat[start : start + g.size].reshape(g.shape)
            start += g.size

    if matrices:
        qs = [_q_factor(state, index, slot, m.shape[1], r, m.dtype, xp) for slot, m, r in matrices]
        ps = [m @ q for (_, m, _), q in zip(matrices, qs)]
        _allreduce_list(group, ps, xp)
        ps = [xp.linalg.qr(p)[0] for p in ps]
        qs = [m.T @ p for (_, m, _), p in zip(matrices, ps)]
        _allreduce_list(group, qs, xp)
        for (slot, m, _), p, q in zip(matrices, ps, qs):
            m[...] = (p @ q.T) / world
            if state.warm_start:
                state.q_memory[(index, slot)] = q

    if state.use_error_feedback:
        # What this rank's gradient lost to compression is added back next time;
        # summed over ranks the errors equal what the average lost.
        state.error_dict[index] = compensated - buffer
    state.maybe_increase_iter(bucket)
    return completed_future(buffer)


def _q_factor(state, index, slot, m, r, dtype, xp):
    q = state.q_memory.get((index, slot)) if state.warm_start else None
    if q is None or q.shape != (m, r):
        q = backend.to_device(state.rng.standard_normal((m, r)).astype(dtype), backend.device_of(xp.empty(0)))
    return q


def _allreduce_list(group, arrays, xp):
    """Sum a list of arrays across ranks with one allreduce."""
    flat = xp.concatenate([a.reshape(-1) for a in arrays])
    group.allreduce(flat, ReduceOp.SUM)
    start = 0
    for a in arrays:
        a[...] = flat[start : start + a.size].reshape(a.shape)
        start += a.size
