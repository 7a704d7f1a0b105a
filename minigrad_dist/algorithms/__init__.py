"""Algorithms on top of the process groups and DDP.

* ``ddp_comm_hooks``: how DDP reduces a gradient bucket (allreduce, fp16, PowerSGD).
* ``ring_allreduce(array, group)`` and the DDP comm hook ``ring_allreduce_hook``:
  the ring allreduce written out with point-to-point messages, for teaching
  (module ``minigrad_dist.algorithms.ring_allreduce``; the package attribute
  ``ring_allreduce`` is the function).
"""

from minigrad_dist.algorithms import ddp_comm_hooks
from minigrad_dist.algorithms.ring_allreduce import ring_allreduce, ring_allreduce_hook

__all__ = ["ddp_comm_hooks", "ring_allreduce", "ring_allreduce_hook"]
