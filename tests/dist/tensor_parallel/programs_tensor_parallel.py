"""Rank programs of the tensor-parallel and device-mesh tests, and the one-process reference they are compared with.

A *case* (drawn by hypothesis in the pytest process) gives the mesh shape
``(dp, tp)``, the MLP's widths, the batch, a seed and the training settings.
Every process builds the same full model and data from the seed
(``full_model``, ``data``). On the ranks, ``tp_training`` cuts the model
into a ``TensorParallelMLP`` over the mesh's ``tp`` group, feeds its ``dp``
slice of the batch, averages gradients over the ``dp`` group, and steps SGD
with momentum; ``local_training`` does the same in one process on the full
batch with the full model.
"""

from __future__ import annotations

import pickle
from pathlib import Path

import numpy as np

import minigrad as mg
import minigrad.nn as nn
import minigrad_dist as dist
from minigrad.optim import SGD
from minigrad_dist.device_mesh import init_device_mesh
from minigrad_dist.tensor_parallel import (
    ColumnParallelLinear,
    ColwiseParallel,
    Replicate,
    RowParallelLinear,
    RowwiseParallel,
    SequenceParallel,
    Shard,
    TensorParallelMLP,
    TensorParallelSelfAttention,
    VocabParallelEmbedding,
    gather_from_tensor_parallel_region,
    parallelize_module,
    scatter_to_tensor_parallel_region,
    vocab_parallel_cross_entropy,
)
from tests.dist.programs_common import ensure_init, message_of

ACTIVATIONS = {"tanh": nn.Tanh, "gelu": nn.GELU, "relu": nn.ReLU}


# -- the case: model and data, the same in every process ---------------------------------------


def full_model(case):
    """``(fc1, activation, fc2)``: full float64 ``nn.Linear`` layers with weights drawn from the case's seed."""
    rng = np.random.default_rng([case["seed"], 1])
    fc1 = nn.Linear(case["in"], case["hidden"], bias=case["bias"], dtype=mg.float64)
    fc2 = nn.Linear(case["hidden"], case["out"], bias=case["bias"], dtype=mg.float64)
    with mg.no_grad():
        for p in [*fc1.parameters(), *fc2.parameters()]:
            p.copy_(mg.tensor(rng.standard_normal(p.shape) * 0.5))
    return fc1, ACTIVATIONS[case["activation"]](), fc2


def data(case):
    """``(inputs, targets)`` of every step: lists of float64 arrays ``(batch, in)`` and ``(batch, out)``."""
    rng = np.random.default_rng([case["seed"], 2])
    batch = case["batch"]
    inputs = [rng.standard_normal((batch, case["in"])) for _ in range(case["steps"])]
    targets = [rng.standard_normal((batch, case["out"])) for _ in range(case["steps"])]
    return inputs, targets


def _loss(y, target):
    return ((y - target) ** 2).mean()


def _arrays(params) -> list:
    return [p.detach().numpy().copy() for p in params]


# -- the local reference -----------------------------------------------------------------------


def local_training(case):
    """The full model on the full batch: step 0's output, input gradient and parameter gradients, final parameters.

    Parameters (and gradients) are listed as ``[fc1.weight, fc1.bias, fc2.weight, fc2.bias]`` (no biases when
    the case has none).
    """
    fc1, activation, fc2 = full_model(case)
    params = [*fc1.parameters(), *fc2.parameters()]
    optimizer = SGD(params, lr=case["lr"], momentum=case["momentum"])
    inputs, targets = data(case)
    first = None
    for x_array, t_array in zip(inputs, targets):
        x = mg.tensor(x_array, requires_grad=True)
        optimizer.zero_grad()
        y = fc2(activation(fc1(x)))
        _loss(y, mg.tensor(t_array)).backward()
        if first is None:
            first = {
                "output": y.detach().numpy().copy(),
                "input_grad": x.grad.numpy().copy(),
                "grads": [p.grad.numpy().copy() for p in params],
            }
        optimizer.step()
    return {**first, "params": _arrays(params)}


# -- the rank program ----------------------------------------------------------------------------


def _mesh(case):
    return init_device_mesh("cpu", (case["dp"], case["tp"]), mesh_dim_names=("dp", "tp"))


def _destroy(mesh) -> None:
    for group in mesh.get_all_groups():
        dist.destroy_process_group(group)


def tp_training(case):
    """This rank's share of ``local_training``: TP over ``mesh["tp"]``, its slice of the batch over ``mesh["dp"]``.

    Returns:
        dict: the mesh coordinate, step 0's output and input gradient of this
        rank's batch rows, this rank's parameter shards' gradients at step 0
        and the shards after the last step.
    """
    ensure_init()
    mesh = _mesh(case)
    block = TensorParallelMLP.from_linears(*full_model(case), process_group=mesh["tp"].get_group())
    result = _train(block, case, mesh.get_local_rank("dp"), mesh["dp"].get_group())
    result["coordinate"] = mesh.get_coordinate()
    _destroy(mesh)
    return result


def plan_training(case):
    """``tp_training`` with the model an ``nn.Sequential`` cut by ``parallelize_module`` over a 1-D mesh.

    Every rank but 0 first perturbs its copy of the full model: ``parallelize_module`` must shard rank 0's
    (``src_data_rank=0``). ``case["layouts"]`` picks the styles' layouts: ``"default"`` (Colwise output
    ``Shard(-1)`` into Rowwise input ``Shard(-1)``) or ``"replicated"`` (both ``Replicate()``).
    """
    rank, world = ensure_init()
    mesh = init_device_mesh("cpu", (world,), mesh_dim_names=("tp",))
    model = nn.Sequential(*full_model(case))
    with mg.no_grad():
        for p in model.parameters():
            p.add_(rank)
    if case["layouts"] == "default":
        plan = {"0": ColwiseParallel(), "2": RowwiseParallel()}
    else:
        plan = {"0": ColwiseParallel(output_layouts=Replicate()), "2": RowwiseParallel(input_layouts=Replicate())}
    parallelize_module(model, mesh["tp"], plan)
    result = _train(model, case, 0, None)
    result["coordinate"] = (0, mesh.get_local_rank())
    result["types"] = [type(m).__name__ for m in model]
    _destroy(mesh)
    return result


def _train(model, case, dp_rank: int, dp_group):
    """Train ``model`` on this dp rank's rows; average gradients over ``dp_group`` (when given)."""
    params = list(model.parameters())
    optimizer = SGD(params, lr=case["lr"], momentum=case["momentum"])
    inputs, targets = data(case)
    rows = _dp_rows(case, dp_rank)
    first = None
    for x_array, t_array in zip(inputs, targets):
        x = mg.tensor(x_array[rows], requires_grad=True)
        optimizer.zero_grad()
        y = model(x)
        _loss(y, mg.tensor(t_array[rows])).backward()
        if dp_group is not None:
            for p in params:  # data parallel: the mean over the dp slices' losses is the full batch's mean
                dist.all_reduce(p.grad, dist.ReduceOp.AVG, group=dp_group)
        if first is None:
            first = {
                "output": y.detach().numpy().copy(),
                "input_grad": x.grad.numpy().copy(),
                "grads": [p.grad.numpy().copy() for p in params],
            }
        optimizer.step()
    return {**first, "params": _arrays(params)}


def _dp_rows(case, dp_rank: int) -> slice:
    per_rank = case["batch"] // case["dp"]
    return slice(dp_rank * per_rank, (dp_rank + 1) * per_rank)


def gather_scatter_roundtrip(case):
    """``scatter`` then ``gather`` over the world, and a ColumnParallelLinear with ``gather_output`` feeding a
    RowParallelLinear with ``input_is_parallel=False``: outputs and input gradients, for the local model to match.
    """
    ensure_init()
    x = mg.tensor(data(case)[0][0], requires_grad=True)
    fc1, activation, fc2 = full_model(case)
    column = ColumnParallelLinear.from_linear(fc1, gather_output=True)
    row = RowParallelLinear.from_linear(fc2, input_is_parallel=False)
    y = row(activation(column(x)))
    roundtrip = gather_from_tensor_parallel_region(scatter_to_tensor_parallel_region(x))
    ((y**2).sum() + (roundtrip * roundtrip.detach()).sum()).backward()
    return {"output": y.detach().numpy(), "roundtrip": roundtrip.detach().numpy(), "input_grad": x.grad.numpy()}


# -- the mesh ------------------------------------------------------------------------------------


def mesh_layout(case):
    """The mesh's layout, coordinate, groups and sub-meshes as this rank sees them, and a sum over each group."""
    rank, _ = ensure_init()
    mesh = init_device_mesh("cpu", tuple(case["shape"]), mesh_dim_names=tuple(case["names"]))
    result = {
        "coordinate": mesh.get_coordinate(),
        "layout": mesh.mesh.numpy().tolist(),
        "shape": mesh.shape,
        "size": mesh.size(),
        "groups": {name: mesh.get_group(name).world_ranks for name in case["names"]},
        "local_ranks": {name: mesh.get_local_rank(name) for name in case["names"]},
        "sub_layouts": {name: mesh[name].mesh.numpy().tolist() for name in case["names"]},
        "sums": {},
    }
    if len(case["names"]) == 2:
        reversed_names = tuple(reversed(case["names"]))
        result["reversed_layout"] = mesh[reversed_names].mesh.numpy().tolist()
    for name in case["names"]:
        value = np.array([float(rank)])
        dist.all_reduce(value, group=mesh[name].get_group())
        result["sums"][name] = float(value[0])
    _destroy(mesh)
    return result


def mesh_errors(case):
    """``(type name, message)`` of each bad call (None where it did not raise), on every rank."""
    rank, world = ensure_init()
    errors = {
        "product": message_of(lambda: init_device_mesh("cpu", (world + 1,))),
        "repeated_names": message_of(lambda: init_device_mesh("cpu", (1, world), mesh_dim_names=("x", "x"))),
        "names_length": message_of(lambda: init_device_mesh("cpu", (world,), mesh_dim_names=("a", "b"))),
        "device_index": message_of(lambda: init_device_mesh("cuda:0", (world,))),
        "not_ints": message_of(lambda: init_device_mesh("cpu", (float(world),))),
        "ranks_disagree": message_of(
            lambda: init_device_mesh("cpu", (world,), mesh_dim_names=("tp" if rank == 0 else "dp",))
        ),
    }
    mesh = init_device_mesh("cpu", (1, world), mesh_dim_names=("dp", "tp"))
    errors["group_without_dim"] = message_of(lambda: mesh.get_group())
    errors["unknown_name"] = message_of(lambda: mesh["pp"])
    errors["dim_out_of_range"] = message_of(lambda: mesh.get_group(2))
    unnamed = init_device_mesh("cpu", (world,))
    errors["slice_unnamed"] = message_of(lambda: unnamed["tp"])
    errors["column_not_divisible"] = message_of(lambda: ColumnParallelLinear(3, 2 * world + 1))
    errors["row_not_divisible"] = message_of(lambda: RowParallelLinear(2 * world + 1, 3))
    column = ColumnParallelLinear(3, 2 * world)
    errors["column_input"] = message_of(lambda: column(mg.ones(2, 4)))
    model = nn.Sequential(nn.Linear(2, 2 * world), nn.Tanh(), nn.Linear(2 * world, 2))
    errors["plan_2d_mesh"] = message_of(lambda: parallelize_module(model, mesh, {"0": ColwiseParallel()}))
    tp_mesh = mesh["tp"]
    errors["plan_unknown_name"] = message_of(lambda: parallelize_module(model, tp_mesh, {"fc9": ColwiseParallel()}))
    errors["plan_not_linear"] = message_of(lambda: parallelize_module(model, tp_mesh, {"1": ColwiseParallel()}))
    errors["plan_unsupported_layout"] = message_of(
        lambda: parallelize_module(model, tp_mesh, {"2": RowwiseParallel(output_layouts=Shard(-1))})
    )
    errors["plan_dtensor_output"] = message_of(
        lambda: parallelize_module(model, tp_mesh, {"0": ColwiseParallel(use_local_output=False)})
    )
    errors["plan_not_style"] = message_of(lambda: parallelize_module(model, tp_mesh, {"0": "colwise"}))
    _destroy(mesh)
    _destroy(unnamed)
    return errors


# -- the vocabulary split ----------------------------------------------------------------------------


def vocab_case_data(case):
    """``(embedding, head, ids, targets)``: full float64 layers and int64 arrays ``(batch, seq)`` from the seed.

    Targets equal to ``ignore_index`` (-100) are sprinkled in where ``case["ignore"]``.
    """
    rng = np.random.default_rng([case["seed"], 3])
    vocabulary, dim = case["vocab"], case["dim"]
    embedding = nn.Embedding(vocabulary, dim, padding_idx=case["padding_idx"], dtype=mg.float64)
    head = nn.Linear(dim, vocabulary, dtype=mg.float64)
    with mg.no_grad():
        for p in [embedding.weight, *head.parameters()]:
            p.copy_(mg.tensor(rng.standard_normal(p.shape)))
        if case["padding_idx"] is not None:
            embedding.weight[case["padding_idx"]] = 0
    shape = (case["batch"], case["seq"])
    ids = rng.integers(0, vocabulary, shape)
    targets = rng.integers(0, vocabulary, shape)
    if case["ignore"]:
        targets[rng.random(shape) < 0.3] = -100
    return embedding, head, ids, targets


def vocab_local(case):
    """The full model: loss, and the gradients of the embedding's weight and the head's weight and bias."""
    embedding, head, ids, targets = vocab_case_data(case)
    logits = head(embedding(mg.tensor(ids)))
    loss = nn.functional.cross_entropy(
        logits.reshape(-1, case["vocab"]), mg.tensor(targets.reshape(-1)), reduction=case["reduction"]
    )
    _scalar(loss, case).backward()
    return {"loss": loss.detach().numpy(), "grads": [p.grad.numpy() for p in [embedding.weight, *head.parameters()]]}


def _scalar(loss, case):
    """The loss itself, or for ``reduction="none"`` a weighted sum of the tokens' losses (weights from the seed)."""
    if case["reduction"] != "none":
        return loss
    weights = np.random.default_rng([case["seed"], 4]).standard_normal(case["batch"] * case["seq"])
    return (loss.reshape(-1) * mg.tensor(weights)).sum()


def vocab_parallel(case):
    """``vocab_local`` with the embedding and the head split along the vocabulary over the world."""
    ensure_init()
    embedding, head, ids, targets = vocab_case_data(case)
    parallel_embedding = VocabParallelEmbedding.from_embedding(embedding)
    parallel_head = ColumnParallelLinear.from_linear(head)
    logits = parallel_head(parallel_embedding(mg.tensor(ids)))
    loss = vocab_parallel_cross_entropy(logits, mg.tensor(targets), reduction=case["reduction"])
    _scalar(loss, case).backward()
    params = [parallel_embedding.weight, *parallel_head.parameters()]
    return {"loss": loss.detach().numpy(), "grads": [p.grad.numpy() for p in params]}


# -- attention -----------------------------------------------------------------------------------------


def attention_case_data(case):
    """``(mha, x)``: a float64 ``nn.MultiheadAttention`` with weights from the seed, and its input array."""
    rng = np.random.default_rng([case["seed"], 5])
    embed_dim = case["heads"] * case["head_dim"]
    mha = nn.MultiheadAttention(
        embed_dim, case["heads"], bias=case["bias"], batch_first=case["batch_first"], dtype=mg.float64
    )
    with mg.no_grad():
        for p in mha.parameters():
            p.copy_(mg.tensor(rng.standard_normal(p.shape) * 0.5))
    shape = (case["batch"], case["length"]) if case["batch_first"] else (case["length"], case["batch"])
    return mha, rng.standard_normal((*shape, embed_dim))


def _attention_loss(y, case):
    weights = np.random.default_rng([case["seed"], 6]).standard_normal(y.shape)
    return (y * mg.tensor(weights)).sum()


def attention_local(case):
    """``mha(x, x, x)`` (causal where the case says): the output, the input's and the parameters' gradients."""
    mha, x_array = attention_case_data(case)
    x = mg.tensor(x_array, requires_grad=True)
    mask = None
    if case["causal"]:
        length = case["length"]
        mask = mg.tensor(np.triu(np.ones((length, length), dtype=bool), k=1))
    y = mha(x, x, x, need_weights=False, attn_mask=mask, is_causal=case["causal"])[0]
    _attention_loss(y, case).backward()
    grads = {name: p.grad.numpy() for name, p in mha.named_parameters()}
    return {"output": y.detach().numpy(), "input_grad": x.grad.numpy(), "grads": grads}


def attention_parallel(case):
    """``attention_local`` with the heads split over the world (``TensorParallelSelfAttention``)."""
    ensure_init()
    mha, x_array = attention_case_data(case)
    block = TensorParallelSelfAttention.from_multihead_attention(mha)
    x = mg.tensor(x_array, requires_grad=True)
    y = block(x, is_causal=case["causal"])
    _attention_loss(y, case).backward()
    grads = {name: p.grad.numpy() for name, p in block.named_parameters()}
    return {"output": y.detach().numpy(), "input_grad": x.grad.numpy(), "grads": grads}


# -- PyTorch's torch.distributed.tensor.parallel, for comparison ---------------------------------------


def torch_plan_training(rank, world_size, port, cases, out_dir):
    """``mp.spawn`` target: ``plan_training`` (or ``sp_parallel``, for cases with ``"seq"``) of each case with
    PyTorch (gloo, ``parallelize_module``), pickled to out_dir."""
    import torch  # noqa: PLC0415  (only this comparison needs PyTorch)
    import torch.distributed as tdist  # noqa: PLC0415

    tdist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world_size)
    results = [(_torch_sp_case if "seq" in case else _torch_plan_case)(torch, rank, world_size, case) for case in cases]
    tdist.destroy_process_group()
    Path(out_dir, f"{rank}.pkl").write_bytes(pickle.dumps(results))


def _torch_plan_case(torch, rank, world_size, case):
    from torch.distributed.device_mesh import init_device_mesh as torch_mesh  # noqa: PLC0415
    from torch.distributed.tensor import Replicate as TorchReplicate  # noqa: PLC0415
    from torch.distributed.tensor.parallel import ColwiseParallel as TorchColwise  # noqa: PLC0415
    from torch.distributed.tensor.parallel import RowwiseParallel as TorchRowwise  # noqa: PLC0415
    from torch.distributed.tensor.parallel import parallelize_module as torch_parallelize  # noqa: PLC0415

    fc1, _, fc2 = full_model(case)
    activations = {"tanh": torch.nn.Tanh, "gelu": torch.nn.GELU, "relu": torch.nn.ReLU}
    model = torch.nn.Sequential(
        torch.nn.Linear(case["in"], case["hidden"], bias=case["bias"], dtype=torch.float64),
        activations[case["activation"]](),
        torch.nn.Linear(case["hidden"], case["out"], bias=case["bias"], dtype=torch.float64),
    )
    with torch.no_grad():
        for theirs, ours in zip(model.parameters(), [*fc1.parameters(), *fc2.parameters()]):
            theirs.copy_(torch.from_numpy(ours.detach().numpy()) + rank)  # rank 0's must win, as in plan_training
    if case["layouts"] == "default":
        plan = {"0": TorchColwise(), "2": TorchRowwise()}
    else:
        plan = {"0": TorchColwise(output_layouts=TorchReplicate()), "2": TorchRowwise(input_layouts=TorchReplicate())}
    torch_parallelize(model, torch_mesh("cpu", (world_size,)), plan)
    params = list(model.parameters())
    optimizer = torch.optim.SGD(params, lr=case["lr"], momentum=case["momentum"])
    inputs, targets = data(case)
    first = None
    for x_array, t_array in zip(inputs, targets):
        x = torch.tensor(x_array, requires_grad=True)
        optimizer.zero_grad()
        y = model(x)
        ((y - torch.from_numpy(t_array)) ** 2).mean().backward()
        if first is None:
            first = {
                "output": y.detach().numpy().copy(),
                "input_grad": x.grad.numpy().copy(),
                "grads": [p.grad.to_local().numpy().copy() for p in params],
            }
        optimizer.step()
    return {**first, "params": [p.detach().to_local().numpy().copy() for p in params]}


# -- double backward -------------------------------------------------------------------------------------


def _double_backward(model, case):
    """Backpropagate ``|d loss / d x|^2`` (a gradient of a gradient: f and g differentiated twice)."""
    x = mg.tensor(data(case)[0][0], requires_grad=True)
    loss = (model(x) ** 2).sum()
    (gx,) = mg.autograd.grad(loss, x, create_graph=True)
    (gx**2).sum().backward()
    return {"input_grad": x.grad.numpy().copy(), "grads": [p.grad.numpy().copy() for p in model.parameters()]}


def double_backward_local(case):
    """``_double_backward`` of the full MLP in one process."""
    return _double_backward(nn.Sequential(*full_model(case)), case)


def double_backward_parallel(case):
    """``_double_backward`` of the ``TensorParallelMLP`` over the world."""
    ensure_init()
    return _double_backward(TensorParallelMLP.from_linears(*full_model(case)), case)


# -- sequence parallelism ----------------------------------------------------------------------------------


def sp_case_data(case):
    """``(model, xs, weights)``: LayerNorm -> Linear -> activation -> Linear (float64, from the seed), the inputs
    ``(batch, seq, width)`` of every step and the weights of the loss ``sum(weights * output)``."""
    rng = np.random.default_rng([case["seed"], 7])
    width, hidden = case["width"], case["hidden"]
    model = nn.Sequential(
        nn.LayerNorm(width, dtype=mg.float64),
        nn.Linear(width, hidden, dtype=mg.float64),
        ACTIVATIONS[case["activation"]](),
        nn.Linear(hidden, width, dtype=mg.float64),
    )
    with mg.no_grad():
        for p in model.parameters():
            p.copy_(mg.tensor(rng.standard_normal(p.shape) * 0.5))
    shape = (case["batch"], case["seq"], width)
    xs = [rng.standard_normal(shape) for _ in range(case["steps"])]
    return model, xs, rng.standard_normal(shape)


def _sp_train(model, xs, weights, case, positions):
    params = list(model.parameters())
    optimizer = SGD(params, lr=case["lr"], momentum=case["momentum"])
    first = None
    for x_array in xs:
        x = mg.tensor(x_array[:, positions], requires_grad=True)
        optimizer.zero_grad()
        y = model(x)
        (y * mg.tensor(weights[:, positions])).sum().backward()
        if first is None:
            first = {
                "output": y.detach().numpy().copy(),
                "input_grad": x.grad.numpy().copy(),
                "grads": [p.grad.numpy().copy() for p in params],
            }
        optimizer.step()
    return {**first, "params": _arrays(params)}


def sp_local(case):
    """The full model on the whole sequence."""
    model, xs, weights = sp_case_data(case)
    return _sp_train(model, xs, weights, case, slice(None))


def sp_parallel(case):
    """The model under sequence + tensor parallelism over the world: this rank's slice of the sequence."""
    rank, world = ensure_init()
    mesh = init_device_mesh("cpu", (world,), mesh_dim_names=("tp",))
    model, xs, weights = sp_case_data(case)
    plan = {
        "0": SequenceParallel(),
        "1": ColwiseParallel(input_layouts=Shard(1)),
        "3": RowwiseParallel(output_layouts=Shard(1)),
    }
    parallelize_module(model, mesh, plan)
    per_rank = case["seq"] // world
    result = _sp_train(model, xs, weights, case, slice(rank * per_rank, (rank + 1) * per_rank))
    _destroy(mesh)
    return result


def _torch_sp_case(torch, rank, world_size, case):
    from torch.distributed.device_mesh import init_device_mesh as torch_mesh  # noqa: PLC0415
    from torch.distributed.tensor import Shard as TorchShard  # noqa: PLC0415
    from torch.distributed.tensor.parallel import ColwiseParallel as TorchColwise  # noqa: PLC0415
    from torch.distributed.tensor.parallel import RowwiseParallel as TorchRowwise  # noqa: PLC0415
    from torch.distributed.tensor.parallel import SequenceParallel as TorchSequenceParallel  # noqa: PLC0415
    from torch.distributed.tensor.parallel import parallelize_module as torch_parallelize  # noqa: PLC0415

    ours, xs, weights = sp_case_data(case)
    activations = {"tanh": torch.nn.Tanh, "gelu": torch.nn.GELU, "relu": torch.nn.ReLU}
    width, hidden = case["width"], case["hidden"]
    model = torch.nn.Sequential(
        torch.nn.LayerNorm(width, dtype=torch.float64),
        torch.nn.Linear(width, hidden, dtype=torch.float64),
        activations[case["activation"]](),
        torch.nn.Linear(hidden, width, dtype=torch.float64),
    )
    with torch.no_grad():
        for theirs, mine in zip(model.parameters(), ours.parameters()):
            theirs.copy_(torch.from_numpy(mine.detach().numpy()))
    plan = {
        "0": TorchSequenceParallel(),
        "1": TorchColwise(input_layouts=TorchShard(1)),
        "3": TorchRowwise(output_layouts=TorchShard(1)),
    }
    torch_parallelize(model, torch_mesh("cpu", (world_size,)), plan)
    params = list(model.parameters())
    optimizer = torch.optim.SGD(params, lr=case["lr"], momentum=case["momentum"])
    per_rank = case["seq"] // world_size
    positions = slice(rank * per_rank, (rank + 1) * per_rank)
    first = None
    for x_array in xs:
        x = torch.tensor(x_array[:, positions], requires_grad=True)
        optimizer.zero_grad()
        y = model(x)
        (y * torch.from_numpy(weights[:, positions])).sum().backward()
        if first is None:
            first = {
                "output": y.detach().numpy().copy(),
                "input_grad": x.grad.numpy().copy(),
                "grads": [_reduced_local(p.grad).numpy().copy() for p in params],
            }
        optimizer.step()
    return {**first, "params": [p.detach().to_local().numpy().copy() for p in params]}


def _reduced_local(grad):
    """A DTensor gradient's local part, after summing it where it is still a partial sum (PyTorch keeps the
    gradients of SequenceParallel's replicated parameters pending as ``Partial`` until they are used)."""
    from torch.distributed.tensor import Replicate as TorchReplicate  # noqa: PLC0415

    if any(placement.is_partial() for placement in grad.placements):
        grad = grad.redistribute(grad.device_mesh, [TorchReplicate()])
    return grad.to_local()
