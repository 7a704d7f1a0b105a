"""Algorithms on top of DDP: communication hooks (``ddp_comm_hooks``)."""

from minigrad_dist.algorithms import ddp_comm_hooks

__all__ = ["ddp_comm_hooks"]
