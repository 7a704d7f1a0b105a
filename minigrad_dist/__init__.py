"""minigrad_dist: distributed training for minigrad over MPI.

Process groups and collectives (``init_process_group``, ``all_reduce``,
``all_to_all``, ...), point-to-point calls (``send``, ``recv``, ``isend``,
``irecv``, ``batch_isend_irecv``), ``DistributedDataParallel`` with a
bucketed Reducer, ``SyncBatchNorm`` and ``DistributedSampler``. Launch
scripts with ``mpiexec -n N python script.py``, with torchrun's interface
(``python -m minigrad_dist.run --nproc-per-node N script.py``), or from a
plain ``python script.py`` with ``minigrad_dist.multiprocessing.spawn``.

Reliability: an uncaught exception on any rank aborts the whole job
(``failure``), ``MINIGRAD_DIST_DEBUG=detail`` checks that ranks call matching
collectives (``debug``), and ``save_checkpoint`` / ``load_checkpoint`` resume
training exactly (``checkpoint``).

The layers, bottom up, on minigrad's (README.md, section "Architecture", draws them):

* ``process_group`` and ``collectives``: MPI communicators over mpi4py, ``Work`` handles, and
  the ``torch.distributed`` functions that run collectives on them.
* ``ddp``: ``DistributedDataParallel``; its ``Reducer`` (``ddp/reducer.py``) puts each
  gradient into its bucket as the backward produces it and reduces the buckets in order.
* ``rpc``: ``rpc_sync``, ``rpc_async``, ``remote`` and ``RRef`` over MPI messages.
* ``autograd``: distributed autograd (send and recv nodes, FAST and SMART modes) on top of
  ``rpc`` and minigrad's engine; ``optim.DistributedOptimizer`` updates each parameter on the
  worker that owns it, with the gradients of a distributed autograd context.
* ``zero`` and ``fsdp``: sharded data parallel (ZeRO stages 1-2 on DDP's buckets; fully
  sharded units); ``memory`` counts what each rank holds.
* ``nn.functional`` (differentiable collectives), ``device_mesh``, ``tensor_parallel``
  (Megatron layers, ``parallelize_module``) and ``pipelining`` (stages and schedules).
* ``topology``: nodes and local ranks from MPI's shared-memory split; two-level reductions.
"""

from minigrad_dist import algorithms, device_mesh, tensor_parallel
from minigrad_dist.checkpoint import LoadedCheckpoint, load_checkpoint, save_checkpoint
from minigrad_dist.collectives import (
    NON_GROUP_MEMBER,
    Backend,
    all_gather,
    all_gather_object,
    all_reduce,
    all_to_all,
    all_to_all_single,
    barrier,
    broadcast,
    broadcast_object_list,
    destroy_process_group,
    gather,
    gather_object,
    get_backend,
    get_default_group,
    get_local_rank,
    get_local_world_size,
    get_rank,
    get_topology,
    get_world_size,
    init_process_group,
    is_initialized,
    new_group,
    reduce,
    reduce_op,
    reduce_scatter,
    scatter,
    scatter_object_list,
)
from minigrad_dist.ddp.distributed import DistributedDataParallel
from minigrad_dist.debug import DebugLevel, get_debug_level, set_debug_level, set_debug_level_from_env
from minigrad_dist.device_mesh import DeviceMesh, init_device_mesh
from minigrad_dist.failure import install_failure_handlers, uninstall_failure_handlers
from minigrad_dist.p2p import P2POp, batch_isend_irecv, irecv, isend, recv, send
from minigrad_dist.process_group import ProcessGroup, ReduceOp, RoundRobinProcessGroup, Work
from minigrad_dist.sampler import DistributedSampler
from minigrad_dist.sync_batchnorm import SyncBatchNorm

__all__ = [
    "DistributedDataParallel", "DistributedSampler", "algorithms", "NON_GROUP_MEMBER", "ProcessGroup",
    "ReduceOp", "RoundRobinProcessGroup", "Work", "all_gather",
    "all_gather_object", "all_reduce", "barrier", "broadcast", "broadcast_object_list",
    "destroy_process_group", "gather", "gather_object", "get_default_group", "get_local_rank", "get_rank",
    "get_world_size", "init_process_group", "is_initialized", "new_group", "reduce", "reduce_scatter",
    "scatter", "scatter_object_list",
    "DebugLevel", "get_debug_level", "set_debug_level", "set_debug_level_from_env",
    "install_failure_handlers", "uninstall_failure_handlers",
    "LoadedCheckpoint", "load_checkpoint", "save_checkpoint",
    "Backend", "all_to_all", "all_to_all_single", "get_backend", "reduce_op",
    "P2POp", "batch_isend_irecv", "irecv", "isend", "recv", "send", "SyncBatchNorm",
    "get_local_world_size", "get_topology",
    "DeviceMesh", "device_mesh", "init_device_mesh", "tensor_parallel",
]
