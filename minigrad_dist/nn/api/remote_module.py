"""``RemoteModule``: a module created and run on another RPC worker, used like a local one.

::

    remote_linear = RemoteModule("worker1/cpu", nn.Linear, args=(20, 30))
    out = remote_linear(x)                       # forward runs on worker1 (rpc_sync)
    fut = remote_linear.forward_async(x)         # ... or returns a Future
    params = remote_linear.remote_parameters()   # RRefs, for DistributedOptimizer

Inside a distributed autograd context the forward is part of the graph:
``dist_autograd.backward`` reaches the remote parameters, and
``DistributedOptimizer(optim.SGD, remote_linear.remote_parameters(), lr=...)``
steps them on their owner.

The module lives in an RRef on its worker (``get_module_rref()``). Tensors
cross in RPC messages on the CPU: with a ``cuda`` device, the owner moves
the inputs to its GPU and the outputs back to the CPU.

Methods that would act on the local stand-in rather than on the remote
module (``parameters()``, ``state_dict()``, ``to()``...) raise ``ValueError``
naming the remote way to do it, as PyTorch's RemoteModule does; ``train()``
and ``eval()`` set the mode of the remote module.
"""

from __future__ import annotations

import re

from minigrad.nn.module import Module
from minigrad.tensor import Tensor
from minigrad_dist.rpc import api
from minigrad_dist.rpc.rref import RRef

__all__ = ["RemoteModule"]

_DEVICE = re.compile(r"^(cpu|cuda(:\d+)?)$")


def _parse_remote_device(remote_device) -> tuple:
    """``"worker1/cpu"`` or ``"rank:1/cuda:0"`` as (worker name or rank, device).

    Raises:
        ValueError: the string does not have that form.
    """
    if not isinstance(remote_device, str) or remote_device.count("/") != 1:
        raise ValueError(
            f"RemoteModule: could not parse remote_device {remote_device!r}; expected '<worker name>/<device>' "
            "or 'rank:<rank>/<device>', e.g. 'worker1/cpu'"
        )
    worker, device = remote_device.split("/")
    if not worker or not _DEVICE.match(device):
        raise ValueError(
            f"RemoteModule: could not parse remote_device {remote_device!r}: the worker must be non-empty and the "
            "device 'cpu', 'cuda' or 'cuda:<index>'"
        )
    if worker.startswith("rank:"):
        try:
            return int(worker[len("rank:"):]), device
        except ValueError:
            raise ValueError(f"RemoteModule: could not parse the rank in remote_device {remote_device!r}") from None
    return worker, device


# -- what runs on the owner --------------------------------------------------------------------


def _instantiate(module_cls, args, kwargs, device):
    module = module_cls(*args, **kwargs)
    if not isinstance(module, Module):
        raise TypeError(f"RemoteModule: module_cls must build a minigrad.nn.Module, got {type(module).__name__}")
    return module if device == "cpu" else module.to(device)


def _built(module_rref) -> str:
    """Waits until the module exists (raising what its constructor raised); returns its class name."""
    return type(module_rref.local_value()).__name__


def _map_tensors(value, fn):
    if isinstance(value, Tensor):
        return fn(value)
    if isinstance(value, (list, tuple)):
        mapped = [_map_tensors(v, fn) for v in value]
        return type(value)(mapped) if not hasattr(value, "_fields") else type(value)(*mapped)
    if isinstance(value, dict):
        return {k: _map_tensors(v, fn) for k, v in value.items()}
    return value


def _forward(module_rref, device, args, kwargs):
    module = module_rref.local_value()
    if device != "cpu":
        args = _map_tensors(args, lambda t: t.to(device))
        kwargs = _map_tensors(kwargs, lambda t: t.to(device))
    out = module(*args, **kwargs)
    return out if device == "cpu" else _map_tensors(out, lambda t: t.to("cpu"))


def _parameter_rrefs(module_rref, recurse):
    return [RRef(p) for p in module_rref.local_value().parameters(recurse)]


def _set_mode(module_rref, mode):
    module_rref.local_value().train(mode)


# -- the local stand-in ---------------------------------------------------------------------------


def _unsupported(name, instead):
    def method(self, *args, **kwargs):
        raise ValueError(f"Method ``{name}`` not supported for RemoteModule: the module lives on worker "
                         f"{self.on!r}; {instead}")

    method.__name__ = name
    method.__doc__ = f"Not supported (raises ValueError): {instead}."
    return method


_USE_RREF = "use get_module_rref() to work on the remote module"


class RemoteModule(Module):
    """A ``module_cls(*args, **kwargs)`` built on worker ``remote_device`` and called through RPC.

    Args:
        remote_device: ``"<worker name>/<device>"`` or ``"rank:<rank>/<device>"``,
            the device ``cpu``, ``cuda`` or ``cuda:<index>`` of that worker.
        module_cls: a ``minigrad.nn.Module`` class (picklable: defined at the
            top level of a module).
        args, kwargs: its constructor's arguments.

    The constructor waits until the module exists on its worker (RPC must
    be initialized) and raises what the module's constructor raised there.

    Raises:
        ValueError: ``remote_device`` cannot be parsed, or the worker is unknown.
        TypeError: ``module_cls`` does not build a Module.
    """

    def __init__(self, remote_device: str, module_cls, args=None, kwargs=None):
        super().__init__()
        worker, device = _parse_remote_device(remote_device)
        self.on = api.resolve(worker).name
        self.device = device
        self.module_rref = api.remote(self.on, _instantiate, (module_cls, tuple(args or ()), dict(kwargs or {}),
                                                              device))
        api.rpc_sync(self.on, _built, (self.module_rref,))

    def forward(self, *args, **kwargs):
        """Run the remote module's forward on its worker and return the output (on the CPU)."""
        return api.rpc_sync(self.on, _forward, (self.module_rref, self.device, args, kwargs))

    def forward_async(self, *args, **kwargs):
        """``forward`` without waiting: a Future of the output."""
        return api.rpc_async(self.on, _forward, (self.module_rref, self.device, args, kwargs))

    def remote_parameters(self, recurse: bool = True) -> list:
        """RRefs to the remote module's parameters (for ``DistributedOptimizer``)."""
        return api.rpc_sync(self.on, _parameter_rrefs, (self.module_rref, recurse))

    def get_module_rref(self) -> RRef:
        """The RRef holding the remote module."""
        return self.module_rref

    def train(self, mode: bool = True) -> RemoteModule:
        """Set the remote module's training mode (and this stand-in's); returns self.

        Raises:
            ValueError: ``mode`` is not a bool.
        """
        super().train(mode)
        api.rpc_sync(self.on, _set_mode, (self.module_rref, mode))
        return self

    parameters = _unsupported("parameters", "use remote_parameters()")
    named_parameters = _unsupported("named_parameters", "use remote_parameters()")
    buffers = _unsupported("buffers", _USE_RREF)
    named_buffers = _unsupported("named_buffers", _USE_RREF)
    state_dict = _unsupported("state_dict", _USE_RREF)
    load_state_dict = _unsupported("load_state_dict", _USE_RREF)
    to = _unsupported("to", "choose the device in remote_device")
    cuda = _unsupported("cuda", "choose the device in remote_device")
    cpu = _unsupported("cpu", "choose the device in remote_device")
    float = _unsupported("float", _USE_RREF)
    double = _unsupported("double", _USE_RREF)
    half = _unsupported("half", _USE_RREF)
    zero_grad = _unsupported("zero_grad", "gradients of remote parameters live in the distributed autograd context")
    requires_grad_ = _unsupported("requires_grad_", _USE_RREF)
    apply = _unsupported("apply", _USE_RREF)
    register_buffer = _unsupported("register_buffer", _USE_RREF)
    register_parameter = _unsupported("register_parameter", _USE_RREF)
    add_module = _unsupported("add_module", _USE_RREF)

    def extra_repr(self) -> str:
        return f"remote_device='{self.on}/{self.device}'"
