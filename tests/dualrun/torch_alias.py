"""An import switch: ``import torch`` (and ``torch.nn``, ``torch.distributed``, ...) gives minigrad.

The dual-run suite executes each program twice, once as written and once
with this finder installed in front of ``sys.meta_path``, so the only thing
that changes between the two runs is what the ``torch`` names import. A
module with no minigrad counterpart raises ImportError naming it, which is
what a user porting the program would meet.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys

# torch module -> minigrad module; the longest matching prefix wins.
ALIASES = {
    "torch": "minigrad",
    "torch.nn": "minigrad.nn",
    "torch.nn.functional": "minigrad.nn.functional",
    "torch.nn.init": "minigrad.nn.init",
    "torch.nn.utils": "minigrad.nn.utils",
    "torch.nn.parallel": "minigrad_dist",
    "torch.optim": "minigrad.optim",
    "torch.optim.lr_scheduler": "minigrad.optim.lr_scheduler",
    "torch.autograd": "minigrad.autograd",
    "torch.utils": "minigrad.utils",
    "torch.utils.data": "minigrad.utils.data",
    "torch.utils.data.distributed": "minigrad.utils.data.distributed",
    "torch.distributed": "minigrad_dist",
    "torch.distributed.rpc": "minigrad_dist.rpc",
    "torch.distributed.autograd": "minigrad_dist.autograd",
    "torch.distributed.optim": "minigrad_dist.optim",
    "torch.distributed.nn": "minigrad_dist.nn",
    "torch.distributed.nn.functional": "minigrad_dist.nn.functional",
    "torch.distributed.fsdp": "minigrad_dist.fsdp",
    "torch.distributed.device_mesh": "minigrad_dist.device_mesh",
    "torch.distributed.pipelining": "minigrad_dist.pipelining",
    "torch.distributed.algorithms.ddp_comm_hooks.ddp_zero_hook": "minigrad_dist.algorithms.ddp_zero_hook",
    "torch.multiprocessing": "minigrad_dist.multiprocessing",
    "torch.futures": "minigrad.futures",
    "torch.cuda": "minigrad.cuda",
    "torch.accelerator": "minigrad.accelerator",
}


class _AliasLoader(importlib.abc.Loader):
    def __init__(self, target: str):
        self.target = target

    def create_module(self, spec):
        return importlib.import_module(self.target)

    def exec_module(self, module):
        """The target module is imported already (``create_module``)."""


class TorchAliasFinder(importlib.abc.MetaPathFinder):
    """Resolves ``torch`` and its submodules to the minigrad modules in ``ALIASES``."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname != "torch" and not fullname.startswith("torch."):
            return None
        if fullname not in ALIASES:
            raise ImportError(f"dual run: no minigrad counterpart for {fullname!r} (add it to ALIASES)")
        return importlib.util.spec_from_loader(fullname, _AliasLoader(ALIASES[fullname]))


def install() -> None:
    """Make ``import torch...`` resolve to minigrad for the rest of this process."""
    for name in [n for n in sys.modules if n == "torch" or n.startswith("torch.")]:
        del sys.modules[name]
    sys.meta_path.insert(0, TorchAliasFinder())
