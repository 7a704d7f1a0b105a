"""Rank programs of test_differentiable.py, and the one-process reference they are compared with.

A *case* (a dict drawn by hypothesis in the pytest process) names a
collective, the world size, shapes, roots, op, a seed and a loss kind. From
it every process builds the same inputs of every rank (``rank_inputs``), and
each rank its own loss (``rank_loss``), which differs from rank to rank.

* On the ranks, ``gradients`` runs the differentiable collective of
  ``minigrad_dist.nn.functional``, the rank's loss and its backward, and
  returns the loss, the input gradients and finite differences of the total
  loss (every rank's loss, all-reduced) for a few entries of one rank's inputs.
* In the pytest process, ``reference`` computes every rank's outputs with
  local minigrad ops on all ranks' inputs (``local_outputs``: what each
  collective means), the total loss, and its gradient for every rank's inputs.
"""

from __future__ import annotations

import pickle
import warnings
from pathlib import Path

import numpy as np

import minigrad as mg
import minigrad_dist as dist
from minigrad_dist.nn import functional as dist_fn
from tests.dist.programs_common import ensure_init, message_of

OPS = ("SUM", "AVG")
LOSS_KINDS = ("linear", "square", "tanh", "sin")
FD_EPS = 1e-6
FD_ENTRIES = 6


# -- the case: every rank's inputs and losses ----------------------------------------------


def rank_inputs(case, rank):
    """Rank ``rank``'s input arrays of ``case`` (a list: one array, or one per peer for list arguments)."""
    rng = np.random.default_rng([case["seed"], rank])
    name, n = case["collective"], case["world_size"]
    if name in ("reduce_scatter", "scatter"):
        return [np.asarray(rng.standard_normal(case["shape"])) for _ in range(n)]
    if name == "all_to_all":
        return [rng.standard_normal(_flat_or_pairs(case["sizes"][rank][j])) for j in range(n)]
    if name == "all_to_all_single":
        return [rng.standard_normal((sum(case["splits"][rank]), case["width"]))]
    return [np.asarray(rng.standard_normal(case["shape"]))]  # a 0-d shape gives a float: keep arrays


def _flat_or_pairs(count):
    """An all-to-all block's shape: pairs when the count is even (so send and receive shapes can differ)."""
    return (count // 2, 2) if count % 2 == 0 and count else (count,)


def output_shapes(case, rank):
    """The shapes of rank ``rank``'s output tensors where the caller gives them (all_to_all, single, reduce_scatter)."""
    n = case["world_size"]
    if case["collective"] == "all_to_all":
        return [(case["sizes"][i][rank],) for i in range(n)]  # flat, while the senders' blocks may be pairs
    if case["collective"] == "all_to_all_single":
        return [(sum(case["splits"][i][rank] for i in range(n)), case["width"])]
    return [tuple(case["shape"])]


def needs_grad(case, rank) -> bool:
    """Whether rank ``rank``'s inputs require grad (a broadcast's or scatter's other ranks may not)."""
    root = case.get("root")
    return rank == root or case["collective"] not in ("broadcast", "scatter") or case["others_need_grad"]


def rank_loss(case, rank, outputs, lib=mg):
    """Rank ``rank``'s loss: a weighted sum of f(output), f drawn per case, shifted per rank (``lib``: mg or torch)."""
    kind = LOSS_KINDS[(LOSS_KINDS.index(case["loss"]) + rank) % len(LOSS_KINDS)]
    rng = np.random.default_rng([case["seed"], 1000 + rank])
    total = 0.0
    for out in outputs:
        weights = lib.tensor(rng.standard_normal(tuple(out.shape)))
        if kind == "linear":
            value = out
        elif kind == "square":
            value = out * out
        elif kind == "tanh":
            value = lib.tanh(out)
        else:
            value = lib.sin(out) * out
        total = total + (weights * value).sum()
    return total


# -- on the ranks -----------------------------------------------------------------------------


def call_collective(case, rank, tensors, functional=dist_fn, lib=mg):
    """Run ``case``'s differentiable collective on this rank's input Tensors; return its outputs as a list.

    ``functional`` and ``lib`` are ``minigrad_dist.nn.functional`` and ``minigrad``, or PyTorch's
    ``torch.distributed.nn.functional`` and ``torch``: the same code calls either.
    """
    name, root = case["collective"], case.get("root")
    op = getattr(functional.ReduceOp, case.get("op", "SUM"))
    dist_fn = functional
    if name == "all_reduce":
        return [dist_fn.all_reduce(tensors[0], op=op)]
    if name == "broadcast":
        return [dist_fn.broadcast(tensors[0], src=root)]
    if name == "reduce":
        return [dist_fn.reduce(tensors[0], dst=root, op=op)]
    if name == "all_gather":
        return list(dist_fn.all_gather(tensors[0]))
    if name == "gather":
        return list(dist_fn.gather(tensors[0], dst=root))
    if name == "scatter":
        return [dist_fn.scatter(tensors, src=root)]
    shapes = output_shapes(case, rank)
    if name == "reduce_scatter":
        return [dist_fn.reduce_scatter(lib.zeros(shapes[0], dtype=lib.float64), tensors, op=op)]
    if name == "all_to_all":
        return list(dist_fn.all_to_all([lib.zeros(s, dtype=lib.float64) for s in shapes], tensors))
    out_splits = [row[rank] for row in case["splits"]]
    in_splits = case["splits"][rank]
    if not case["explicit_splits"]:
        out_splits = in_splits = None  # equal splits (the case made them so)
    output = lib.zeros(shapes[0], dtype=lib.float64)
    return [dist_fn.all_to_all_single(output, tensors[0], out_splits, in_splits)]


def gradients(case):
    """This rank's loss, its inputs' gradients (None where not required) and finite differences of one rank's inputs.

    The finite differences (only in the answer of rank ``case["fd_rank"]``):
    ``(entry, (L(x + eps) - L(x - eps)) / 2 eps)`` for a few entries of that
    rank's inputs, where L is every rank's loss summed by an all_reduce.
    """
    rank, n = ensure_init()
    assert n == case["world_size"], (n, case["world_size"])
    arrays = rank_inputs(case, rank)
    tensors = [mg.tensor(a, requires_grad=needs_grad(case, rank)) for a in arrays]
    loss = rank_loss(case, rank, call_collective(case, rank, tensors))
    loss.backward()
    grads = [None if t.grad is None else t.grad.array.copy() for t in tensors]
    differences = _finite_differences(case, rank, arrays)
    return float(loss.item()), grads, differences


def _finite_differences(case, rank, arrays):
    fd_rank = case["fd_rank"]
    sizes = [a.size for a in rank_inputs(case, fd_rank)]  # every rank knows the fd rank's shapes
    entries = _fd_entries(case, sizes)
    results = []
    for entry in entries:
        plus = _total_loss(case, rank, arrays, entry if rank == fd_rank else None, FD_EPS)
        minus = _total_loss(case, rank, arrays, entry if rank == fd_rank else None, -FD_EPS)
        results.append((entry, (plus - minus) / (2 * FD_EPS)))
    return results if rank == fd_rank else []


def _fd_entries(case, sizes):
    """Up to FD_ENTRIES ``(tensor index, flat index)`` entries of the fd rank's inputs, chosen by the seed."""
    every = [(t, i) for t, size in enumerate(sizes) for i in range(size)]
    rng = np.random.default_rng([case["seed"], 7])
    chosen = rng.permutation(len(every))[:FD_ENTRIES]
    return [every[k] for k in sorted(chosen)]


def _total_loss(case, rank, arrays, entry, step):
    """Every rank's loss summed over ranks, with this rank's input ``entry`` moved by ``step`` (if given)."""
    moved = [a.copy() for a in arrays]
    if entry is not None:
        moved[entry[0]].reshape(-1)[entry[1]] += step
    with mg.no_grad():
        loss = rank_loss(case, rank, call_collective(case, rank, [mg.tensor(a) for a in moved]))
    total = np.array([float(loss.item())])
    dist.all_reduce(total)
    return float(total[0])


def double_backward(case):
    """Hessian-vector product: x.grad of sum_r <dL/dx_r, v_r>, through create_graph=True; returns it per input."""
    rank, _ = ensure_init()
    tensors = [mg.tensor(a, requires_grad=True) for a in rank_inputs(case, rank)]
    loss = rank_loss(case, rank, call_collective(case, rank, tensors))
    first = mg.autograd.grad(loss, tensors, create_graph=True)
    directions = _directions(case, rank, tensors)
    sum((g * v).sum() for g, v in zip(first, directions)).backward()
    return [np.zeros(t.shape) if t.grad is None else t.grad.array.copy() for t in tensors]


def _directions(case, rank, tensors):
    rng = np.random.default_rng([case["seed"], 2000 + rank])
    return [mg.tensor(rng.standard_normal(t.shape)) for t in tensors]


# -- in the pytest process: the one-process reference ---------------------------------------------


def local_outputs(case, inputs):
    """Every rank's outputs of ``case``'s collective, from every rank's inputs (``inputs[r]``), by local ops."""
    name, n, root = case["collective"], case["world_size"], case.get("root")
    scale = 1.0 / n if case.get("op") == "AVG" else 1.0
    if name == "all_reduce":
        total = mg.stack([inputs[s][0] for s in range(n)]).sum(0) * scale
        return [[total] for _ in range(n)]
    if name == "broadcast":
        return [[inputs[root][0]] for _ in range(n)]
    if name == "reduce":
        total = mg.stack([inputs[s][0] for s in range(n)]).sum(0) * scale
        return [[total] if r == root else [mg.zeros(total.shape, dtype=mg.float64)] for r in range(n)]
    if name == "all_gather":
        return [[inputs[s][0] for s in range(n)] for _ in range(n)]
    if name == "gather":
        zeros = mg.zeros(inputs[0][0].shape, dtype=mg.float64)
        return [[inputs[s][0] for s in range(n)] if r == root else [zeros] * n for r in range(n)]
    if name == "scatter":
        return [[inputs[root][r]] for r in range(n)]
    if name == "reduce_scatter":
        return [[mg.stack([inputs[s][r] for s in range(n)]).sum(0) * scale] for r in range(n)]
    if name == "all_to_all":
        return [[inputs[i][r].reshape(output_shapes(case, r)[i]) for i in range(n)] for r in range(n)]
    return [[mg.cat([_rows_for(case, inputs[i][0], i, r) for i in range(n)])] for r in range(n)]


def _rows_for(case, x, sender, receiver):
    """The rows of ``sender``'s all_to_all_single input that go to ``receiver``."""
    splits = case["splits"][sender]
    start = sum(splits[:receiver])
    return x[start : start + splits[receiver]]


def reference(case):
    """``(every rank's loss, every rank's input gradients)`` of the total loss, computed in this process."""
    n = case["world_size"]
    inputs = [[mg.tensor(a, requires_grad=True) for a in rank_inputs(case, r)] for r in range(n)]
    outputs = local_outputs(case, inputs)
    losses = [rank_loss(case, r, outputs[r]) for r in range(n)]
    sum(losses).backward()
    grads = [[np.zeros(t.shape) if t.grad is None else t.grad.array for t in row] for row in inputs]
    return [float(loss.item()) for loss in losses], grads


def reference_double_backward(case):
    """The Hessian-vector products of ``double_backward``, computed in this process."""
    n = case["world_size"]
    inputs = [[mg.tensor(a, requires_grad=True) for a in rank_inputs(case, r)] for r in range(n)]
    outputs = local_outputs(case, inputs)
    total = sum(rank_loss(case, r, outputs[r]) for r in range(n))
    flat = [t for row in inputs for t in row]
    first = mg.autograd.grad(total, flat, create_graph=True, allow_unused=True)  # a scatter's placeholders
    directions = [v for r in range(n) for v in _directions(case, r, inputs[r])]
    sum((g * v).sum() for g, v in zip(first, directions) if g is not None).backward()
    return [[np.zeros(t.shape) if t.grad is None else t.grad.array for t in row] for row in inputs]


# -- errors ----------------------------------------------------------------------------------------


def bad_calls():
    """Calls that are wrong on some rank (or across ranks): ``(type, message)`` per call, then a working all_reduce."""
    rank, n = ensure_init()
    x = mg.tensor(np.ones(3), requires_grad=True)
    calls = {
        "shape_across_ranks": lambda: dist_fn.all_reduce(mg.tensor(np.ones(3 + (rank == 1)))),
        "dtype_across_ranks": lambda: dist_fn.all_gather(mg.tensor(np.ones(3), dtype=mg.float32 if rank else None)),
        "src_across_ranks": lambda: dist_fn.broadcast(x, src=rank % 2),
        "src_outside_group_on_one_rank": lambda: dist_fn.broadcast(x, src=n + 5 if rank == 2 else 0),
        "not_a_tensor": lambda: dist_fn.all_reduce(np.ones(3) if rank == 1 else x),
        "list_length_on_one_rank": lambda: dist_fn.reduce_scatter(
            mg.zeros(3, dtype=mg.float64), [x] * (n - (rank == 1))
        ),
        "scatter_shapes_in_list": lambda: dist_fn.scatter([x] * (n - 1) + [mg.tensor(np.ones(2))], src=0),
        "all_to_all_counts": lambda: dist_fn.all_to_all(
            [mg.zeros(2 + (rank == 0 and i == 2), dtype=mg.float64) for i in range(n)], [x[:2]] * n
        ),
        "all_to_all_single_split_sum": lambda: dist_fn.all_to_all_single(
            mg.zeros(n, dtype=mg.float64), mg.tensor(np.ones(n)), None, [2] + [1] * (n - 1) if rank == 0 else None
        ),
        "grad_mode_across_ranks": lambda: _grad_mode_on_rank_zero_only(x, rank),
        "leaf_output_on_one_rank": lambda: dist_fn.all_to_all_single(
            mg.zeros(n, dtype=mg.float64, requires_grad=rank == 1), mg.tensor(np.ones(n))
        ),
        "max_backward": lambda: dist_fn.all_reduce(x, op=dist.ReduceOp.MAX).sum().backward(),
    }
    errors = {name: message_of(call) for name, call in calls.items()}
    check = np.ones(1)
    dist.all_reduce(check)  # every rank got here, and the group still works
    return errors, float(check[0])


def _grad_mode_on_rank_zero_only(x, rank):
    if rank == 0:
        return dist_fn.all_reduce(x)
    with mg.no_grad():
        return dist_fn.all_reduce(x)


def inputs_untouched_and_outputs_filled():
    """The inputs are not written; reduce_scatter/all_to_all fill the given outputs, differentiably."""
    rank, n = ensure_init()
    x = mg.tensor(np.arange(2.0 * n) + rank, requires_grad=True)
    before = x.array.copy()
    y = dist_fn.all_reduce(x)
    out = mg.zeros(2 * n, dtype=mg.float64)
    result = dist_fn.all_to_all_single(out, x)
    (out * out).sum().backward()  # through the filled output, not the returned tensor
    return {
        "input_untouched": bool(np.array_equal(x.array, before)),
        "new_tensor": y is not x and result is not out,
        "filled": bool(np.array_equal(out.array, result.array)),
        "grad": x.grad.array.copy(),
        "received": result.array.copy(),
    }


def subgroup_gradients():
    """broadcast, all_gather and reduce on the subgroup of global ranks 0 and 2 (roots are global ranks)."""
    rank, _ = ensure_init()
    group = dist.new_group([0, 2])
    if rank == 1:
        return None
    x = mg.tensor(np.array([rank + 1.0]), requires_grad=True)
    answers = {}
    y = dist_fn.broadcast(x, src=2, group=group)
    ((rank + 1) * y).sum().backward()
    answers["broadcast"] = (y.item(), x.grad.item())
    x.grad = None
    outputs = dist_fn.all_gather(x, group=group)
    sum((rank + 1) * (i + 1) * out for i, out in enumerate(outputs)).sum().backward()
    answers["all_gather"] = ([out.item() for out in outputs], x.grad.item())
    x.grad = None
    y = dist_fn.reduce(x, dst=2, group=group)
    ((rank + 1) * y).sum().backward()
    answers["reduce"] = (y.item(), x.grad.item())
    dist.destroy_process_group(group)
    return answers


# -- PyTorch's torch.distributed.nn.functional on the same cases -----------------------------------


def torch_gradients(rank, world_size, port, cases, out_dir):
    """``mp.spawn`` target: each case's input gradients on this rank with PyTorch (gloo), pickled to out_dir."""
    import torch
    import torch.distributed as tdist
    import torch.distributed.nn.functional as torch_fn

    tdist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world_size)
    results = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # PyTorch deprecates some of these for _functional_collectives
        for case in cases:
            tensors = [torch.tensor(a, requires_grad=True) for a in rank_inputs(case, rank)]
            # PyTorch's all_to_all over gloo scatters tensor by tensor: it wants the sender's shapes flat too.
            args = [t.reshape(-1) for t in tensors] if case["collective"] == "all_to_all" else tensors
            loss = rank_loss(case, rank, call_collective(case, rank, args, torch_fn, torch), lib=torch)
            loss.backward()
            results.append([None if t.grad is None else t.grad.numpy().copy() for t in tensors])
    tdist.destroy_process_group()
    Path(out_dir, f"{rank}.pkl").write_bytes(pickle.dumps(results))


def minigrad_gradients(cases):
    """This rank's input gradients for each case (as ``gradients``, without the finite differences)."""
    rank, _ = ensure_init()
    results = []
    for case in cases:
        tensors = [mg.tensor(a, requires_grad=True) for a in rank_inputs(case, rank)]
        rank_loss(case, rank, call_collective(case, rank, tensors)).backward()
        results.append([None if t.grad is None else t.grad.array.copy() for t in tensors])
    return results
