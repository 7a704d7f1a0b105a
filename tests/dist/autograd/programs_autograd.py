"""Programs run on every rank of a pool by test_dist_autograd.py: distributed autograd over RPC, the optimizer.

Each program starts RPC, works, and shuts RPC down (graceful shutdown is
collective, so every rank takes part even when only rank 0 calls).
"""

from __future__ import annotations

import numpy as np

import minigrad as mg
import minigrad_dist.autograd as dist_autograd
import minigrad_dist.rpc as rpc
from minigrad_dist.optim import DistributedOptimizer
from minigrad_dist.rpc import rref as rref_module
from tests.dist.programs_common import polite_barrier, start_rpc

# -- functions called remotely --------------------------------------------------------------------


def add(a, b):
    return a + b


def mul(a, b):
    return a * b


def tanh(a):
    return a.tanh()


def matmul(a, b):
    return a @ b


def sub(a, b):
    return a - b


def random_tensor():
    return mg.rand(3, 3, requires_grad=True)


# -- distributed autograd ----------------------------------------------------------------------------


OPS = {"add": add, "mul": mul, "sub": sub, "tanh": tanh, "matmul": matmul}
ARITY = {"add": 2, "mul": 2, "sub": 2, "tanh": 1, "matmul": 2}


def run_program(spec, leaves, call):
    """Evaluate a program: each step applies an op to earlier values, through ``call(worker, fn, args)``."""
    values = list(leaves)
    for op, inputs, worker, *via in spec["steps"]:
        args = tuple(values[i % len(values)] for i in inputs[: ARITY[op]])
        values.append(call(worker, OPS[op], args, via[0] if via else "rpc"))
    if spec.get("loss_uses") is not None:
        used = sorted({i % len(values) for i in spec["loss_uses"]})
    else:
        used = range(len(leaves), len(values))
    return sum((values[i] * (i + 1)).sum() for i in used)


def dist_autograd_vs_local(spec):
    """The same program, ops placed on workers by RPC vs run locally; gradients must agree."""
    rank, world = start_rpc()
    out = None
    if rank == 0:
        rng = np.random.default_rng(spec["seed"])
        arrays = [rng.uniform(-1, 1, (spec["n"], spec["n"])) for _ in range(spec["leaves"])]
        leaves = [mg.tensor(a, requires_grad=True) for a in arrays]

        def remote_call(worker, fn, args, via):
            worker %= world
            if worker == 0:
                return fn(*args)
            if via == "remote":  # the owner computes; to_here brings the value (and its graph) back
                return rpc.remote(f"worker{worker}", fn, args=args).to_here()
            return rpc.rpc_sync(f"worker{worker}", fn, args=args)

        with dist_autograd.context() as cid:
            loss = run_program(spec, leaves, remote_call)
            dist_autograd.backward(cid, [loss], mode=spec["mode"])
            grads = dist_autograd.get_gradients(cid)
            dist = [None if grads.get(t) is None else grads[t].array.copy() for t in leaves]
            assert all(t.grad is None for t in leaves), "distributed backward must not touch .grad"
        local_leaves = [mg.tensor(a, requires_grad=True) for a in arrays]
        local_loss = run_program(spec, local_leaves, lambda w, fn, args, via: fn(*args))
        local_loss.backward()
        local = [None if t.grad is None else t.grad.array for t in local_leaves]
        out = {"dist": dist, "local": local, "loss": (float(loss.item()), float(local_loss.item()))}
    polite_barrier()  # count only after rank 0 left its context
    contexts = dist_autograd.live_context_count()
    rpc.shutdown()
    return {"result": out, "contexts_left": contexts}


def fast_mode_unused_rpc(spec):
    """The design note's dependency example: FAST raises (no hang), SMART gives local gradients."""
    rank, world = start_rpc()
    out = {}
    if rank == 0:
        a, b, c = (mg.tensor(np.full((3, 3), v), requires_grad=True) for v in (1.0, 2.0, 3.0))
        with dist_autograd.context() as cid:
            d = rpc.rpc_sync("worker1", add, args=(a, b))
            rpc.rpc_sync("worker1", mul, args=(b, c))
            try:
                dist_autograd.backward(cid, [d.sum()], mode=spec["mode"])
                grads = dist_autograd.get_gradients(cid)
                out["grads"] = {name: None if grads.get(t) is None else grads[t].array.tolist()
                                for name, t in zip("abc", (a, b, c))}
            except RuntimeError as error:
                out["error"] = str(error)
    rpc.shutdown()
    return out


def remote_error_in_backward(spec):
    """An error raised during the backward on another worker reaches the caller."""
    rank, world = start_rpc()
    out = {}
    if rank == 0:
        x = mg.ones(3, requires_grad=True, dtype=mg.float64)
        with dist_autograd.context() as cid:
            y = rpc.rpc_sync("worker1", make_failing_backward, args=(x,))
            try:
                dist_autograd.backward(cid, [y.sum()])
            except ValueError as error:
                out["error"] = str(error)
    rpc.shutdown()
    return out


class _FailingBackward(mg.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, grad):
        raise ValueError("backward exploded on worker1")


def make_failing_backward(x):
    return _FailingBackward.apply(x)


def contexts_released_everywhere(spec):
    """After `with context()` exits, no worker keeps the context (nor its graph)."""
    rank, world = start_rpc()
    if rank == 0:
        for _ in range(spec["n"]):
            with dist_autograd.context() as cid:
                r1 = rpc.remote(f"worker{world - 1}", random_tensor)
                loss = r1.to_here().sum()
                dist_autograd.backward(cid, [loss])
            del r1
    polite_barrier()
    contexts = dist_autograd.live_context_count()
    rpc.shutdown()
    return contexts


def distributed_optimizer(spec):
    """The note's end-to-end example: each rank optimizes tensors on its neighbour."""
    rank, world = start_rpc()
    dst = f"worker{(rank + 1) % world}"
    rref1 = rpc.remote(dst, random_tensor)
    rref2 = rpc.remote(dst, random_tensor)
    before = rref1.to_here().array.copy()  # outside the context: FAST mode needs every fetch in it used
    with dist_autograd.context() as cid:
        loss = rref1.to_here() + rref2.to_here()
        dist_autograd.backward(cid, [loss.sum()])
        optimizer = DistributedOptimizer(mg.optim.SGD, [rref1, rref2], lr=spec["lr"])
        optimizer.step(cid)
    after = rref1.to_here().array.copy()
    polite_barrier()
    rpc.shutdown()
    return (before - after).tolist()


def distributed_optimizer_bad_lr(spec):
    """An invalid learning rate fails the DistributedOptimizer constructor (the owner raised it)."""
    rank, world = start_rpc()
    error = None
    if rank == 0:
        rref = rpc.remote("worker1", random_tensor)
        try:
            DistributedOptimizer(mg.optim.SGD, [rref], lr=-1.0)
        except ValueError as exc:
            error = str(exc)
    polite_barrier()
    rpc.shutdown()
    return error


def times_param(param_rref, x):
    """Runs on the owner: the parameter times ``x`` (Mul saves the parameter for its backward)."""
    return param_rref.local_value() * x


def stale_parameter_in_distributed_backward(spec):
    """Trainer 1's forward used the owner's weight; trainer 2 then steps it with a DistributedOptimizer;
    trainer 1's distributed backward must fail with the version error, never use the new weight."""
    rank, world = start_rpc()
    out = {}
    weight = rpc.remote("worker0", random_tensor) if rank == 1 else None
    weight = _share_rref(rank, weight)
    x = mg.ones(3, 3, requires_grad=True)
    if rank == 1:
        context = dist_autograd.context()
        cid = context.__enter__()
        y = rpc.rpc_sync("worker0", times_param, args=(weight, x))
    polite_barrier()
    if rank == 2:
        with dist_autograd.context() as cid2:
            loss = rpc.rpc_sync("worker0", times_param, args=(weight, x)).sum()
            dist_autograd.backward(cid2, [loss])
            DistributedOptimizer(mg.optim.SGD, [weight], lr=0.1).step(cid2)
    polite_barrier()
    if rank == 1:
        try:
            dist_autograd.backward(cid, [y.sum()])
            out["grads"] = {k.shape: v.tolist() for k, v in dist_autograd.get_gradients(cid).items()}
        except RuntimeError as error:
            out["error"] = str(error)
        context.__exit__(None, None, None)
    polite_barrier()
    rpc.shutdown()
    return out


def _share_rref(rank, rref):
    """Rank 1 made ``rref``; every rank gets it (through the owner, worker0, as a fork)."""
    if rank == 1:
        rpc.rpc_sync("worker0", _keep_shared, args=(rref,))
    polite_barrier()
    return rpc.rpc_sync("worker0", _get_shared) if rank != 0 else None


_shared = {}


def _keep_shared(rref):
    _shared["rref"] = rref


def _get_shared():
    return _shared["rref"]


def accumulate_into(param_rref, g):
    """Runs in an RPC handler thread on the owner: ``p.grad += g`` (must be in place, never lose a whole add)."""
    p = param_rref.local_value()
    p.grad += g


def reset_grad(param_rref):
    p = param_rref.local_value()
    p.grad = mg.zeros(p.shape)
    return id(p.grad)


def read_grad(param_rref):
    p = param_rref.local_value()
    return id(p.grad), p.grad.tolist()


def make_param():
    return mg.zeros(1000, requires_grad=True)


def concurrent_grad_accumulation(spec):
    """Every non-owner rank sends ``p.grad += 1`` calls concurrently; the owner's handler threads apply them."""
    rank, world = start_rpc()
    out = {"lost": 0, "same_object": True}
    param = rpc.remote("worker0", make_param) if rank == 1 else None
    param = _share_rref(rank, param)
    for _ in range(spec["trials"]):
        if rank == 1:
            grad_id = rpc.rpc_sync("worker0", reset_grad, args=(param,))
        polite_barrier()
        if rank != 0:
            futures = [rpc.rpc_async("worker0", accumulate_into, args=(param, mg.ones(1000)))
                       for _ in range(spec["calls"])]
            for f in futures:
                f.wait()
        polite_barrier()
        if rank == 1:
            same_id, values = rpc.rpc_sync("worker0", read_grad, args=(param,))
            expected = spec["calls"] * (world - 1)
            out["lost"] += int(min(values) < expected)
            out["same_object"] &= same_id == grad_id
    polite_barrier()
    rpc.shutdown()
    return out


# -- nesting, concurrency, retain_graph ------------------------------------------------------------


def nested_mul(a, b, next_worker):
    """Runs on B: asks C for a * b inside the caller's context, then uses the result."""
    return rpc.rpc_sync(f"worker{next_worker}", mul, args=(a, b)).tanh() + a


def _local_nested(a, b):
    return (a * b).tanh() + a


def nested_rpcs(spec):
    """A (rank 0) calls B, which calls C, all inside one context; gradients equal the local ones."""
    rank, world = start_rpc()
    out = None
    if rank == 0:
        rng = np.random.default_rng(spec["seed"])
        arrays = [rng.uniform(-1, 1, (3, 3)) for _ in range(2)]
        a, b = (mg.tensor(x, requires_grad=True) for x in arrays)
        with dist_autograd.context() as cid:
            y = rpc.rpc_sync("worker1", nested_mul, args=(a, b, 2 % world))
            loss = (y * y).sum()
            dist_autograd.backward(cid, [loss])
            grads = dist_autograd.get_gradients(cid)
            dist = [grads[a].array.copy(), grads[b].array.copy()]
        la, lb = (mg.tensor(x, requires_grad=True) for x in arrays)
        ly = _local_nested(la, lb)
        (ly * ly).sum().backward()
        out = {"dist": dist, "local": [la.grad.array, lb.grad.array]}
    polite_barrier()
    contexts = dist_autograd.live_context_count()
    rpc.shutdown()
    return {"result": out, "contexts_left": contexts}


def concurrent_contexts(spec):
    """Every rank runs its own contexts at the same time, each calling the other ranks."""
    rank, world = start_rpc()
    rng = np.random.default_rng(rank)
    mismatches = 0
    for i in range(spec["n"]):
        x = rng.uniform(-1, 1, (2, 2))
        t = mg.tensor(x, requires_grad=True)
        peer = f"worker{(rank + 1 + i) % world}"
        with dist_autograd.context() as cid:
            y = rpc.rpc_sync(peer, tanh, args=(t,))
            z = rpc.remote(peer, mul, args=(y, t)).to_here()
            dist_autograd.backward(cid, [z.sum()])
            got = dist_autograd.get_gradients(cid)[t].array
        lt = mg.tensor(x, requires_grad=True)
        (lt.tanh() * lt).sum().backward()
        mismatches += not np.allclose(got, lt.grad.array, rtol=1e-12, atol=1e-14)
    polite_barrier()
    contexts = dist_autograd.live_context_count()
    owned = rref_module.owned_count()
    rpc.shutdown()
    return {"mismatches": mismatches, "contexts_left": contexts, "owned_left": owned}


def retain_graph_twice(spec):
    """Two distributed backward passes over one retained graph accumulate twice the gradient."""
    rank, world = start_rpc()
    out = None
    if rank == 0:
        x = mg.tensor(np.full((2, 2), 0.5), requires_grad=True)
        with dist_autograd.context() as cid:
            loss = rpc.rpc_sync("worker1", tanh, args=(x,)).sum()
            dist_autograd.backward(cid, [loss], retain_graph=True)
            first = dist_autograd.get_gradients(cid)[x].array.copy()
            dist_autograd.backward(cid, [loss])
            second = dist_autograd.get_gradients(cid)[x].array.copy()
            try:
                dist_autograd.backward(cid, [loss])
                third = None
            except RuntimeError as error:
                third = str(error)
        out = {"first": first, "second": second, "third": third}
    rpc.shutdown()
    return out
