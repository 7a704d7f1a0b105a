"""The examples of PyTorch's "Distributed Autograd Design" note, runnable with minigrad.

    mpiexec -n 2 python examples/rpc/design_note_examples.py     # or more ranks

(a) The note's first example: ``t3 = rpc_sync("worker1", my_add, (t1, t2))``,
    then a local ``t5 = t3 * t4`` and a distributed backward of ``t5.sum()``.
    Worker 0 prints the gradients from the context and checks them against
    the same computation run locally with ordinary autograd.
(b) The note's "computing dependencies" example: ``e = b * c`` is computed
    by RPC but never used. FAST mode (the note's algorithm) cannot know that
    and would wait for a gradient that never comes; here it raises a clear
    error instead of hanging, and ``mode="smart"`` gives the right gradients.
(c) The note's end-to-end example: every worker creates two random tensors
    on its neighbour with ``rpc.remote``, runs a distributed backward of the
    sum of the fetched values and steps them with a ``DistributedOptimizer``
    (SGD) on their owner; worker 0 prints what each worker saw.

Each part prints ``... OK`` once its check passed; any mismatch exits non-zero.
"""

from __future__ import annotations

import argparse

import numpy as np
from mpi4py import MPI

import minigrad as mg
import minigrad_dist.autograd as dist_autograd
import minigrad_dist.rpc as rpc
from minigrad_dist.optim import DistributedOptimizer

# -- functions run remotely (they travel by name: every rank runs this same script) --------------


def my_add(t1, t2):
    """The note's remote function."""
    return t1 + t2


def my_mul(t1, t2):
    """The unused remote product of part (b)."""
    return t1 * t2


def random_tensor():
    """A 3x3 leaf that requires grad, created on (and owned by) the worker that runs it."""
    return mg.rand(3, 3, requires_grad=True)


# -- (a) remote add, local mul, distributed backward ------------------------------------------


def part_a(seed: int) -> None:
    """The note's first example on worker 0, checked against a local run."""
    mg.manual_seed(seed)
    with dist_autograd.context() as context_id:
        t1 = mg.rand(3, 3, requires_grad=True)
        t2 = mg.rand(3, 3, requires_grad=True)
        t3 = rpc.rpc_sync("worker1", my_add, args=(t1, t2))  # computed on worker1
        t4 = mg.rand(3, 3, requires_grad=True)
        t5 = t3 * t4  # computed here, on the remote result
        loss = t5.sum()
        dist_autograd.backward(context_id, [loss])
        grads = dist_autograd.get_gradients(context_id)
        distributed = {name: grads[t].numpy() for name, t in (("t1", t1), ("t2", t2), ("t4", t4))}
        untouched = all(t.grad is None for t in (t1, t2, t4))

    local = [mg.tensor(t.detach().numpy(), requires_grad=True) for t in (t1, t2, t4)]
    (my_add(local[0], local[1]) * local[2]).sum().backward()
    print("(a) t3 = rpc_sync('worker1', my_add, (t1, t2)); loss = (t3 * t4).sum()")
    for (name, grad), leaf in zip(distributed.items(), local):
        print(f"    d loss / d {name} (from the context):\n{_indent(grad)}")
        if not np.allclose(grad, leaf.grad.numpy(), rtol=1e-6, atol=1e-7):
            raise SystemExit(f"(a) gradient of {name} differs from the local run:\n{grad}\nvs\n{leaf.grad.numpy()}")
    if not untouched:
        raise SystemExit("(a) the distributed backward wrote into .grad; it must only fill the context")
    print("(a) OK: gradients equal a local autograd run (d t1 = d t2 = t4, d t4 = t1 + t2); .grad untouched")


# -- (b) an RPC whose result is not used: FAST raises, SMART is right --------------------------------


def part_b() -> None:
    """The note's dependency example in FAST mode, then in SMART mode."""
    a, b, c = (mg.full((3, 3), value, requires_grad=True) for value in (1.0, 2.0, 3.0))
    print("(b) d = rpc_sync('worker1', add, (a, b)); e = rpc_sync('worker1', mul, (b, c)); loss = d.sum()")
    with dist_autograd.context() as context_id:
        d = rpc.rpc_sync("worker1", my_add, args=(a, b))
        rpc.rpc_sync("worker1", my_mul, args=(b, c))  # e: never used by the loss
        try:
            dist_autograd.backward(context_id, [d.sum()])
        except RuntimeError as error:
            quoted = "\n".join("      | " + line for line in str(error).splitlines())
            print(f"    FAST mode raised RuntimeError:\n{quoted}")
            if "mode='smart'" not in str(error):
                raise SystemExit(f"(b) the FAST-mode error does not suggest SMART mode:\n{error}") from None
        else:
            raise SystemExit("(b) FAST mode should have raised: the product e never reaches the loss")

    with dist_autograd.context() as context_id:
        d = rpc.rpc_sync("worker1", my_add, args=(a, b))
        rpc.rpc_sync("worker1", my_mul, args=(b, c))
        dist_autograd.backward(context_id, [d.sum()], mode="smart")
        grads = dist_autograd.get_gradients(context_id)
        found = {name: grads.get(t) for name, t in zip("abc", (a, b, c))}
    for name, grad in found.items():
        text = " no gradient (c does not reach the loss)" if grad is None else f"\n{_indent(grad.numpy())}"
        print(f"    SMART mode: d loss / d {name}:{text}")
    ones = np.ones((3, 3), dtype=np.float32)
    if found["c"] is not None or not all(np.array_equal(found[n].numpy(), ones) for n in "ab"):
        raise SystemExit("(b) SMART mode should give ones for a and b and no gradient for c")
    print("(b) OK: FAST mode raised a clear error; SMART mode gave d a = d b = 1 and nothing for c")


# -- (c) RRefs and DistributedOptimizer, every worker optimizing tensors on its neighbour ---------


def part_c(rank: int, world: int, lr: float):
    """The note's end-to-end example on this worker; returns what it observed."""
    dst_name = f"worker{(rank + 1) % world}"
    rref1 = rpc.remote(dst_name, random_tensor)
    rref2 = rpc.remote(dst_name, random_tensor)
    # Read the starting values outside the context: in FAST mode every tensor
    # fetched inside a context must take part in its backward.
    before = [rref1.to_here().detach().numpy(), rref2.to_here().detach().numpy()]
    with dist_autograd.context() as context_id:
        loss = rref1.to_here() + rref2.to_here()  # forward: creates send/recv pairs
        dist_autograd.backward(context_id, [loss.sum()])
        dist_optim = DistributedOptimizer(mg.optim.SGD, [rref1, rref2], lr=lr)
        dist_optim.step(context_id)  # runs SGD on dst_name with its gradients in this context
    after = [rref1.to_here().detach().numpy(), rref2.to_here().detach().numpy()]
    # d loss.sum() / d rref = ones, so SGD moves each value down by exactly lr.
    steps = [float(np.abs(b - a - lr).max()) for b, a in zip(before, after)]
    return {"rank": rank, "owner": dst_name, "max_step_error": max(steps),
            "first_before": float(before[0][0, 0]), "first_after": float(after[0][0, 0])}


def _indent(array) -> str:
    return "\n".join("        " + line for line in np.array2string(array, precision=4).splitlines())


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--lr", type=float, default=0.05)
    args = parser.parse_args(argv)

    comm = MPI.COMM_WORLD
    rank, world = comm.Get_rank(), comm.Get_size()
    if world < 2:
        raise SystemExit("run with at least 2 ranks: mpiexec -n 2 python examples/rpc/design_note_examples.py")
    rpc.init_rpc(f"worker{rank}")
    if rank == 0:
        part_a(args.seed)
        part_b()
    mg.manual_seed(args.seed + rank)
    observed = part_c(rank, world, args.lr)
    reports = comm.gather(observed, root=0)  # plain MPI, beside RPC (which uses its own communicator)
    if rank == 0:
        print(f"(c) every worker optimizes two tensors owned by its neighbour (SGD, lr={args.lr}):")
        for r in reports:
            print(f"    worker{r['rank']}: tensors on {r['owner']}, [0, 0] went {r['first_before']:.4f} -> "
                  f"{r['first_after']:.4f} (max |change - lr| = {r['max_step_error']:.1e})")
        worst = max(r["max_step_error"] for r in reports)
        if worst > 1e-6:
            raise SystemExit(f"(c) the optimizer step did not move every value by lr (error {worst:.2e})")
        print("(c) OK: every owner applied the gradients of its neighbour's context (each value moved by -lr)")
    rpc.shutdown()


if __name__ == "__main__":
    main()
