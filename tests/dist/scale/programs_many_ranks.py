"""Programs run on every rank by test_many_ranks.py: 8 and 16 ranks on two cores.

Three workloads and one measurement:

* ``parameter_server_rounds``: rank 0 owns a model; every other rank is a
  trainer that, each round, runs its forward on the server, its distributed
  backward, and then its own ``DistributedOptimizer`` step (SGD with
  momentum: each trainer has its own optimizer state on the server);
* ``chain_through_every_worker``: one distributed autograd context whose
  forward is a chain of nested RPCs visiting every worker, then a fan-out
  of concurrent RPCs to every worker;
* ``ranks_wait_while_one_computes``: rank 0 computes while every other rank
  waits in one of the library's waits; each rank reports its CPU and wall time;
* ``blocking_collectives_wait``: how a group built on this many ranks waits
  in its blocking collectives.

The DDP cases need no program here: the testing kit's oracle
(``minigrad_dist.testing.oracles.ddp_on_rank``) runs them.
"""

from __future__ import annotations

import threading
import time

import numpy as np

import minigrad as mg
import minigrad_dist as dist
import minigrad_dist.autograd as dist_autograd
import minigrad_dist.rpc as rpc
from minigrad import nn
from minigrad.nn import functional as F
from minigrad_dist import waiting
from minigrad_dist.mpi import load_mpi
from minigrad_dist.optim import DistributedOptimizer
from minigrad_dist.process_group import ProcessGroup
from minigrad_dist.testing import pool_worker
from minigrad_dist.testing.models import mlp_from_spec
from minigrad_dist.testing.oracles import environment
from minigrad_dist.topology import Topology
from tests.dist.programs_common import ensure_init, polite_barrier, start_rpc

SERVER = "worker0"

# -- parameter server ---------------------------------------------------------------------------------


class _Server:
    """The model rank 0 serves (one per task; ``_serve`` builds it before any trainer asks)."""

    model = None


def _serve(spec) -> None:
    mg.manual_seed(spec["model_seed"])
    _Server.model = mlp_from_spec(spec["model"])


def server_forward(x):
    """Runs on the server inside the caller's context: the model's output for ``x``."""
    return _Server.model(x)


def server_parameter_rrefs() -> list:
    """RRefs to the server's parameters, in ``named_parameters`` order."""
    return [rpc.RRef(p) for p in _Server.model.parameters()]


def server_parameters() -> dict:
    """The server's parameters by name, as NumPy arrays."""
    return {name: p.array.copy() for name, p in _Server.model.named_parameters()}


def parameter_server_rounds(spec) -> dict:
    """Synchronous rounds of parameter-server training; returns the server's parameters (rank 0) or the losses.

    ``spec``: ``model`` (a ``mlp_from_spec`` spec), ``model_seed``, ``lr``,
    ``momentum`` and ``x``, ``y``: arrays of shape ``(rounds, trainers, batch, ...)``.
    Round ``r``, trainer ``t`` (rank ``t + 1``):

    1. forward on the server and distributed backward in a context of its own
       (the gradients of ``x[r, t]`` stay in that context on the server);
    2. a barrier: every trainer's gradients were computed from the same weights;
    3. ``DistributedOptimizer.step`` with that context (all trainers at
       once; the server serializes the steps);
    4. a barrier before the next round's forwards.
    """
    rank, _ = start_rpc()
    if rank == 0:
        _serve(spec)
    polite_barrier()  # the model exists before any trainer asks for it
    losses = []
    if rank != 0:
        optimizer = DistributedOptimizer(
            mg.optim.SGD, rpc.rpc_sync(SERVER, server_parameter_rrefs), lr=spec["lr"], momentum=spec["momentum"]
        )
    for step in range(len(spec["x"])):
        if rank != 0:
            context = dist_autograd.context()
            context_id = context.__enter__()
            x, y = spec["x"][step][rank - 1], spec["y"][step][rank - 1]
            loss = F.cross_entropy(rpc.rpc_sync(SERVER, server_forward, args=(mg.tensor(x),)), mg.tensor(y))
            dist_autograd.backward(context_id, [loss])
            losses.append(loss.item())
        polite_barrier()
        if rank != 0:
            optimizer.step(context_id)
            context.__exit__(None, None, None)
        polite_barrier()
    result = server_parameters() if rank == 0 else losses
    rpc.shutdown()
    _Server.model = None
    return result


def parameter_server_serially(spec) -> dict:
    """The same rounds in one process: each trainer's gradient by local autograd, then its own SGD's step.

    Returns ``{"params": {name: array}, "losses": [[loss per round] per trainer]}``.
    """
    mg.manual_seed(spec["model_seed"])
    model = mlp_from_spec(spec["model"])
    trainers = spec["x"].shape[1]
    optimizers = [mg.optim.SGD(model.parameters(), lr=spec["lr"], momentum=spec["momentum"]) for _ in range(trainers)]
    losses = [[] for _ in range(trainers)]
    for x_round, y_round in zip(spec["x"], spec["y"]):
        gradients = []
        for trainer, (x, y) in enumerate(zip(x_round, y_round)):
            model.zero_grad()
            loss = F.cross_entropy(model(mg.tensor(x)), mg.tensor(y))
            loss.backward()
            gradients.append([p.grad.array.copy() for p in model.parameters()])
            losses[trainer].append(loss.item())
        for optimizer, grads in zip(optimizers, gradients):
            for p, g in zip(model.parameters(), grads):
                p.grad = mg.tensor(g)
            optimizer.step()
    return {"params": {name: p.array.copy() for name, p in model.named_parameters()}, "losses": losses}


# -- distributed autograd across every worker ---------------------------------------------------------


def _hop(h, w):
    """One worker's part of the chain: ``tanh(h @ w) + h``."""
    return (h @ w).tanh() + h


def chain_hop(h, weights, path):
    """Runs on a worker of the chain: its hop with ``weights[0]``, then the rest by a nested RPC to ``path[0]``."""
    h = _hop(h, weights[0])
    if not path:
        return h
    return rpc.rpc_sync(f"worker{path[0]}", chain_hop, args=(h, weights[1:], path[1:]))


def _local_chain(h, weights, path):
    for w in weights:
        h = _hop(h, w)
    return h


def fan_out_part(h, w):
    """Runs on one worker of the fan-out: ``sigmoid(h * w)`` (elementwise)."""
    return (h * w).sigmoid()


def _remote_chain(h, weights, path):
    return rpc.rpc_sync(f"worker{path[0]}", chain_hop, args=(h, weights, path[1:]))


def _remote_parts(h, fan_weights):
    """Every worker's part at once (concurrent RPCs, worker k gets ``fan_weights[k]``)."""
    futures = [rpc.rpc_async(f"worker{k}", fan_out_part, args=(h, w)) for k, w in enumerate(fan_weights)]
    return [future.wait() for future in futures]


def _local_parts(h, fan_weights):
    return [fan_out_part(h, w) for w in fan_weights]


def _forward(x, weights, fan_weights, chain, run_chain, run_parts):
    """The whole computation: the chain, then one part per worker on its output, weighted and summed."""
    h = run_chain(x, weights, chain)
    parts = run_parts(h, fan_weights)
    return sum((part * (k + 1)).sum() for k, part in enumerate(parts)) + (h * h).sum()


def chain_through_every_worker(spec) -> dict:
    """Rank 0's gradients of a chain of nested RPCs through every worker and a fan-out to all, vs local.

    ``spec``: ``chain`` (worker ranks in the order the chain visits them;
    each hop calls the next from inside its RPC handler), ``n`` (the
    matrices are ``n x n``), ``seed``, ``mode`` (``"fast"`` or ``"smart"``).
    Every rank returns the contexts it still holds at the end; rank 0 also
    ``{"dist": [...], "local": [...], "loss": (dist, local)}``: the gradients
    of ``x``, of each chain weight and of each fan-out weight.
    """
    rank, world = start_rpc()
    out = None
    if rank == 0:
        rng = np.random.default_rng(spec["seed"])
        chain = spec["chain"]
        arrays = [rng.uniform(-1, 1, (spec["n"], spec["n"])) for _ in range(1 + len(chain) + world)]

        def leaves():
            tensors = [mg.tensor(a, requires_grad=True) for a in arrays]
            return tensors[0], tensors[1 : 1 + len(chain)], tensors[1 + len(chain) :]

        x, weights, fan = leaves()
        with dist_autograd.context() as context_id:
            loss = _forward(x, weights, fan, chain, _remote_chain, _remote_parts)
            dist_autograd.backward(context_id, [loss], mode=spec["mode"])
            grads = dist_autograd.get_gradients(context_id)
            got = [grads[t].array.copy() for t in (x, *weights, *fan)]
        lx, lweights, lfan = leaves()
        local_loss = _forward(lx, lweights, lfan, chain, _local_chain, _local_parts)
        local_loss.backward()
        out = {
            "dist": got,
            "local": [t.grad.array for t in (lx, *lweights, *lfan)],
            "loss": (loss.item(), local_loss.item()),
        }
    polite_barrier()  # count only after rank 0 left its context
    contexts = dist_autograd.live_context_count()
    rpc.shutdown()
    return {"result": out, "contexts_left": contexts}


# -- do waiting ranks leave the CPU to the one that works? ---------------------------------------------


def _compute(iterations: int) -> float:
    """Fixed CPU-bound work (matrix products on one BLAS thread); returns a value so it cannot be skipped."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal((160, 160)) / 16
    b = a.copy()
    for _ in range(iterations):
        b = np.tanh(a @ b)
    return float(b.sum())


def _polite_barrier_wait():
    dist.barrier(async_op=True).wait()


def _nothing():
    pass


class _Released:
    """Rank 0's signal, in RPC mode, that its computation is over (waiters' calls block on it)."""

    event = None


def wait_for_release() -> bool:
    """Runs on rank 0 in an RPC handler thread: returns once rank 0's computation is over."""
    return _Released.event.wait(120.0)


def _setup(mode):
    """Build what ``mode`` needs before the clock starts.

    Returns ``(release, wait, teardown)``: what rank 0 calls when its
    computation is over, what the other ranks wait in, and what every rank
    calls at the end.
    """
    if mode == "pool wait":
        comm = load_mpi().COMM_WORLD.Dup()
        return (lambda: pool_worker.wait_politely(comm)), (lambda: pool_worker.wait_politely(comm)), comm.Free
    if mode == "barrier":
        return _polite_barrier_wait, _polite_barrier_wait, _nothing
    if mode == "blocking barrier":
        return dist.barrier, dist.barrier, _nothing
    if mode.startswith("DDP"):
        with environment({"MINIGRAD_DDP_SHM": "1" if mode == "DDP shared memory" else "0"}):
            ddp = dist.DistributedDataParallel(nn.Linear(64, 64).double())
        loss = ddp(mg.ones(4, 64, dtype=mg.float64)).sum()
        return loss.backward, loss.backward, ddp.close
    if mode == "RPC":
        _Released.event = threading.Event()
        start_rpc()
        polite_barrier()
        return _Released.event.set, (lambda: rpc.rpc_sync(SERVER, wait_for_release)), rpc.shutdown
    raise ValueError(f"unknown wait mode {mode!r}")


def ranks_wait_while_one_computes(spec) -> dict:
    """Rank 0 computes ``spec["iterations"]`` steps while the others wait in ``spec["mode"]``.

    Modes: ``"pool wait"`` (the pool's wait between tasks), ``"barrier"``
    (``dist.barrier(async_op=True).wait()``), ``"blocking barrier"``
    (``dist.barrier()``, MPI's own wait), ``"DDP shared memory"`` and
    ``"DDP Iallreduce"`` (the others are in ``loss.backward()``, waiting for
    rank 0's gradients), ``"RPC"`` (the others are in an ``rpc_sync`` to
    rank 0 that returns when rank 0 is done).

    Returns ``{"wall": s, "cpu": s}``: on rank 0 the wall time of its
    computation and the CPU time its thread got meanwhile; on the others the
    wall time of their wait and their process's CPU time (all threads) during it.
    """
    rank, _ = ensure_init()
    release, wait, teardown = _setup(spec["mode"])
    polite_barrier()
    wall, cpu = time.perf_counter(), time.thread_time() if rank == 0 else time.process_time()
    if rank == 0:
        _compute(spec["iterations"])
        wall, cpu = time.perf_counter() - wall, time.thread_time() - cpu
        release()
    else:
        wait()
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    polite_barrier()
    teardown()
    return {"wall": wall, "cpu": cpu}


def blocking_collectives_wait(spec) -> dict:
    """How groups built here wait in blocking collectives, by default and with ``MINIGRAD_DIST_WAIT=spin``.

    Returns ``{"oversubscribed": Topology.oversubscribed, "default": (polite_blocking, sum),
    "spin": (polite_blocking, sum)}``, ``sum`` being a blocking
    ``all_reduce`` of ``[rank, rank, rank]`` through that group.
    """
    rank = load_mpi().COMM_WORLD.Get_rank()
    out = {"oversubscribed": Topology.of(load_mpi().COMM_WORLD).oversubscribed}
    for name, env in (("default", {}), ("spin", {waiting.SPIN_VARIABLE: "spin"})):
        with environment(env):
            group = ProcessGroup(load_mpi().COMM_WORLD)
        try:
            array = np.full(3, float(rank))
            group.allreduce(array)
            out[name] = (group.polite_blocking, array.tolist())
        finally:
            group.destroy()
    return out
