"""RPC over MPI: remote calls, remote references (RRef), futures.

    import minigrad_dist.rpc as rpc
    rpc.init_rpc(f"worker{rank}")
    result = rpc.rpc_sync("worker1", torch_like_function, args=(tensor,))
    rref = rpc.remote("worker1", make_value)
    value = rref.to_here()
    rpc.shutdown()

``rpc.functions.async_execution`` marks functions that reply through a
Future; ``TensorPipeRpcBackendOptions`` carries ``init_rpc``'s options.

Trust model: RPC runs pickled callables sent by the other ranks of the same
MPI job; use it only among processes you trust.
"""

from minigrad_dist.futures import Future
from minigrad_dist.rpc import functions
from minigrad_dist.rpc.agent import RemoteError, RpcTimeoutError, WorkerInfo
from minigrad_dist.rpc.api import get_worker_info, init_rpc, is_initialized, remote, rpc_async, rpc_sync, shutdown
from minigrad_dist.rpc.options import BackendType, TensorPipeRpcBackendOptions
from minigrad_dist.rpc.rref import RRef

__all__ = [
    "Future", "RRef", "RemoteError", "RpcTimeoutError", "WorkerInfo", "get_worker_info", "init_rpc",
    "is_initialized", "remote", "rpc_async", "rpc_sync", "shutdown",
    "BackendType", "TensorPipeRpcBackendOptions", "functions",
]
