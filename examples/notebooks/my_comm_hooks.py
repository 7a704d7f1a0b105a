"""The comm hooks notebook 04 tests: a user's own averaging hook and one with the classic bug.

They live in a module, not in the notebook, because the testing kit's MPI
ranks import hooks and models by name (``module:function``); the notebook's
kernel is ``__main__``, which the ranks cannot import.
"""

from __future__ import annotations

import minigrad_dist as dist
from minigrad import nn
from minigrad_dist.futures import completed_future


def mean_hook(process_group, bucket):
    """Average the bucket over the ranks: sum with one allreduce, then divide by the world size."""
    group = process_group if process_group is not None else dist.get_default_group()
    buffer = bucket.buffer().array
    group.allreduce(buffer)  # the sum over the ranks, in place
    buffer /= group.size()  # ... and the mean
    return completed_future(buffer)


def forgetful_hook(process_group, bucket):
    """The classic bug: returns the sum of the ranks' gradients, forgetting to divide by the world size."""
    group = process_group if process_group is not None else dist.get_default_group()
    buffer = bucket.buffer().array
    group.allreduce(buffer)
    return completed_future(buffer)


def small_model():
    """A float64 MLP 4 -> 8 -> 3 (float64 keeps the DDP-vs-local comparison tight)."""
    return nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3)).double()
