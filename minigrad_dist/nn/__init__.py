"""Distributed modules (``torch.distributed.nn``): ``RemoteModule``, a module that lives on another RPC worker.

``functional`` holds the differentiable collectives (``torch.distributed.nn.functional``).
"""

from minigrad_dist.nn import functional
from minigrad_dist.nn.api.remote_module import RemoteModule

__all__ = ["RemoteModule", "functional"]
