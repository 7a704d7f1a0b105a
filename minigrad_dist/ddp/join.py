"""Uneven inputs: ``with ddp.join():`` lets ranks run out of data at different times.

DDP's allreduces are collective: a rank that stops training early would leave
the others waiting. Inside ``join()``:

1. At each forward, a training rank takes part in one small allreduce on the
   Reducer's control communicator: ``[1, needs_sync]``. Its sum tells every
   rank how many ranks still train and whether this iteration reduces
   gradients.
2. A rank that leaves the ``with`` block (out of data) keeps answering
   ``[0, 0]`` to that allreduce and, whenever the others reduce gradients,
   *shadows* their backward: it joins every bucket's reduction with zeros,
   the agreement allreduce, and the buffer broadcast, without touching its
   own ``.grad``.
3. When the sum says no rank trains any more, every rank leaves; the rank
   that trained longest broadcasts its parameters and buffers, so all
   replicas end equal.

With ``divide_by_initial_world_size=False`` gradients are averaged over the
ranks still training, which equals training on the union of the data.
"""

from __future__ import annotations

import numpy as np

from minigrad.grad_mode import is_grad_enabled
from minigrad_dist.ddp.state_sync import broadcast_coalesced
from minigrad_dist.process_group import ReduceOp


class Join:
    """The context manager returned by ``DistributedDataParallel.join()``."""

    def __init__(self, ddp, divide_by_initial_world_size: bool = True, enable: bool = True):
        self.ddp = ddp
        self.divide_by_initial_world_size = divide_by_initial_world_size
        self.enable = enable
        self.active_iterations = 0

    def __enter__(self):
        if self.enable:
            if self.ddp._join is not None:
                raise RuntimeError("join() contexts of one DDP model cannot be nested")
            self.ddp._join = self
        return self

    def notify_active_iteration(self, ddp) -> None:
        """Called at each forward of a training rank (step 1)."""
        needs_sync = is_grad_enabled() and ddp.require_backward_grad_sync
        active, syncing = self._announce(1, int(needs_sync))
        self.active_iterations += 1
        if not self.divide_by_initial_world_size:
            ddp.reducer.div_factor = active

    def _announce(self, active: int, needs_sync: int):
        reducer = self.ddp.reducer
        vector = np.array([active, needs_sync], dtype=np.int64)
        reducer.control.allreduce(vector, ReduceOp.SUM, async_op=True).wait(reducer.timeout)
        return int(vector[0]), int(vector[1])

    def __exit__(self, exc_type, exc, tb):
        if not self.enable:
            return False
        try:
            if exc_type is not None:
                return False  # an error on this rank: do not pretend to shadow the others
            self._shadow_until_all_joined()
            self._sync_final_model()
        finally:
            self.ddp._join = None
            self.ddp.reducer.div_factor = self.ddp.process_group.size()
        return False

    def _shadow_until_all_joined(self) -> None:
        ddp = self.ddp
        while True:
            active, syncing = self._announce(0, 0)
            if active == 0:
                return
            if ddp.broadcast_buffers:
                buffers = ddp._buffer_arrays()
                if buffers:
                    broadcast_coalesced(ddp.process_group, buffers, timeout=ddp.reducer.timeout)
            if syncing:
                if not self.divide_by_initial_world_size:
                    ddp.reducer.div_factor = active
                ddp.reducer.shadow_backward()

    def _sync_final_model(self) -> None:
        """Step 3: the rank that trained longest (lowest rank on ties) broadcasts its state."""
        ddp = self.ddp
        counts = ddp.reducer.control.allgather_obj(self.active_iterations)
        source = int(np.argmax(counts))
        arrays = [p.array for p in ddp.module.parameters()] + ddp._buffer_arrays()
        broadcast_coalesced(ddp.process_group, arrays, src=source, timeout=ddp.reducer.timeout)
