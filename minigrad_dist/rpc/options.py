"""``TensorPipeRpcBackendOptions`` and ``BackendType``: the options PyTorch programs pass to ``init_rpc``.

Our RPC runs over MPI, not TensorPipe, so of the options two matter:
``num_worker_threads`` (the threads that run incoming requests) and
``rpc_timeout`` (the default timeout of every RPC). ``init_method`` is
accepted and not used (MPI does the rendezvous); so are TensorPipe's
private ``_transports`` and ``_channels``. ``device_maps``/``devices`` are
refused: our RPC moves CPU tensors only (a GPU tensor in an RPC travels
through host memory and arrives on the CPU), so a device map would promise
something that does not happen.
"""

from __future__ import annotations

import enum
import math

__all__ = ["BackendType", "TensorPipeRpcBackendOptions"]


class BackendType(enum.Enum):
    """RPC backends: ``TENSORPIPE`` (PyTorch's default, and ours: its options are the ones honoured)."""

    TENSORPIPE = "TENSORPIPE"


_NO_DEVICES = (
    "minigrad_dist's RPC moves CPU tensors only (GPU tensors are sent through host memory and arrive on the "
    "CPU); move tensors with .to(device) on the receiving side instead of passing"
)


class TensorPipeRpcBackendOptions:
    """Options of ``init_rpc``, with PyTorch's names and defaults (keyword-only).

    Args:
        num_worker_threads: threads that run incoming requests (default 16).
        rpc_timeout: default timeout of an RPC in seconds (default 60; 0: none).
        init_method: the rendezvous URL (default ``"env://"``); not used: MPI does the rendezvous.
        device_maps, devices: must be empty (see the module docstring).
        _transports, _channels: TensorPipe internals; accepted, not used.

    Raises:
        TypeError: an option has the wrong type.
        RuntimeError: ``num_worker_threads`` < 1, a negative or NaN
            ``rpc_timeout``, or a device map or device list (as PyTorch does
            on a machine without GPUs).
    """

    def __init__(self, *, num_worker_threads: int = 16, rpc_timeout: float = 60.0, init_method: str = "env://",
                 device_maps=None, devices=None, _transports=None, _channels=None):
        if isinstance(num_worker_threads, bool) or not isinstance(num_worker_threads, int):
            raise TypeError(f"TensorPipeRpcBackendOptions: num_worker_threads must be an int, got "
                            f"{type(num_worker_threads).__name__}")
        if num_worker_threads < 1:
            raise RuntimeError(f"TensorPipeRpcBackendOptions: num_worker_threads must be positive, got "
                               f"{num_worker_threads}")
        if isinstance(rpc_timeout, bool) or not isinstance(rpc_timeout, (int, float)):
            raise TypeError(f"TensorPipeRpcBackendOptions: rpc_timeout must be a number of seconds, got "
                            f"{type(rpc_timeout).__name__}")
        if math.isnan(rpc_timeout) or rpc_timeout < 0:
            raise RuntimeError(f"TensorPipeRpcBackendOptions: rpc_timeout must be non-negative, got {rpc_timeout}")
        if not isinstance(init_method, str):
            raise TypeError(f"TensorPipeRpcBackendOptions: init_method must be a string, got "
                            f"{type(init_method).__name__}")
        if device_maps:
            raise RuntimeError(f"TensorPipeRpcBackendOptions: {_NO_DEVICES} device_maps={device_maps!r}")
        if devices:
            raise RuntimeError(f"TensorPipeRpcBackendOptions: {_NO_DEVICES} devices={devices!r}")
        self.num_worker_threads = num_worker_threads
        self.rpc_timeout = float(rpc_timeout)
        self.init_method = init_method
        self.device_maps = {}
        self.devices = []
        self._transports = _transports
        self._channels = _channels

    def set_device_map(self, to: str, device_map: dict) -> None:
        """Refused: see the module docstring.

        Raises:
            RuntimeError: always (naming the worker and the map).
        """
        raise RuntimeError(f"set_device_map: {_NO_DEVICES} a device map for {to!r}: {device_map!r}")

    def set_devices(self, devices: list) -> None:
        """Refused: see the module docstring.

        Raises:
            RuntimeError: always.
        """
        raise RuntimeError(f"set_devices: {_NO_DEVICES} devices={devices!r}")

    def __repr__(self):
        return (f"TensorPipeRpcBackendOptions(num_worker_threads={self.num_worker_threads}, "
                f"rpc_timeout={self.rpc_timeout}, init_method={self.init_method!r})")
