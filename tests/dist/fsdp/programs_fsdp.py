"""Programs run on every rank of a pool by test_fsdp.py, and the local (one-process) references.

Each rank program takes a plain-data ``spec`` (drawn in the pytest process,
so every rank runs the same case) and returns plain data: full parameters
after every step, shard gradients with their layout, errors, memory peaks.
"""

from __future__ import annotations

import contextlib
import functools
import os

import numpy as np

import minigrad as mg
import minigrad_dist as dist
from minigrad import nn
from minigrad.nn import functional as F
from minigrad_dist import memory
from minigrad_dist.fsdp import (
    FSDP,
    MixedPrecisionPolicy,
    ModuleWrapPolicy,
    StateDictType,
    apply_wrap_policy,
    fully_shard,
    size_based_auto_wrap_policy,
)
from minigrad_dist.testing.models import mlp_from_spec
from tests.dist.programs_common import ensure_init, message_of

# -- models ---------------------------------------------------------------------------------------


class TwiceAndUnused(nn.Module):
    """``head(tanh(shared(tanh(shared(inp(x))))))``: ``shared`` runs twice per forward, ``spare`` never."""

    def __init__(self, width=4, features=3, classes=3):
        super().__init__()
        self.inp = nn.Linear(features, width)
        self.shared = nn.Linear(width, width)
        self.spare = nn.Linear(width, 2)
        self.head = nn.Linear(width, classes)

    def forward(self, x):
        h = self.shared(self.inp(x).tanh()).tanh()
        return self.head(self.shared(h).tanh())


class TwoHeads(nn.Module):
    """Two linear heads on one input; returns both outputs."""

    def __init__(self):
        super().__init__()
        self.left = nn.Linear(3, 2)
        self.right = nn.Linear(3, 2)

    def forward(self, x):
        return self.left(x), self.right(x)


def build_model(spec, seed):
    mg.manual_seed(seed)
    if spec.get("model") == "twice":
        return TwiceAndUnused().double()
    return mlp_from_spec(spec["spec"], spec.get("dtype", "float64"))


def linear_paths(model):
    """Names of the Linear layers in a freshly built model, in module order."""
    return [name for name, m in model.named_modules() if isinstance(m, nn.Linear)]


def wrap(model, spec):
    """Make the drawn layers units of their own (by path), then wrap the root."""
    options = dict(spec.get("fsdp_kwargs", {}))
    if "min_num_params" in spec:
        options["auto_wrap_policy"] = functools.partial(size_based_auto_wrap_policy,
                                                        min_num_params=spec["min_num_params"])
    if "param_dtype" in spec:
        options["mixed_precision"] = MixedPrecisionPolicy(spec["param_dtype"], spec.get("reduce_dtype"))
    if spec.get("front") == "fully_shard":
        front = {"reshard_after_forward": options.get("reshard_after_forward", True),
                 "mp_policy": options.get("mixed_precision"),
                 "sync_module_states": options.get("sync_module_states", False)}
        for path in spec.get("units", []):
            fully_shard(model.get_submodule(path), **front)
        return fully_shard(model, **front)
    for path in spec.get("units", []):
        parent_path, _, name = path.rpartition(".")
        parent = model.get_submodule(parent_path) if parent_path else model
        parent._modules[name] = FSDP(parent._modules[name], **options)
    return FSDP(model, **options)


def make_optimizer(params, spec):
    return getattr(mg.optim, spec["optimizer"])(params, **spec["optimizer_kwargs"])


def loss_of(output, y):
    return F.cross_entropy(output, mg.tensor(y))


def full_params(model):
    return {k: v.numpy().copy() for k, v in model.state_dict().items()}


def shard_grads(fsdp):
    """``{unit prefix: (shard gradient or None, layout)}`` of every unit with parameters."""
    prefixes = fsdp._unit_prefixes()
    out = {}
    for unit in fsdp._units:
        handle = unit._handle
        if handle.flat_param is not None:
            grad = handle.flat_param.grad
            out[prefixes[id(unit)]] = (None if grad is None else grad.array.copy(), handle.layout())
    return out


# -- FSDP against local training -------------------------------------------------------------------------------


def train_fsdp(spec):
    """Train under FSDP; returns per-step full parameters and shard gradients (and DDP's parameters)."""
    rank, world = ensure_init()
    sync = spec.get("fsdp_kwargs", {}).get("sync_module_states", False)
    model = wrap(build_model(spec, spec["seed"] + (rank if sync else 0)), spec)
    optimizer = make_optimizer(model.parameters(), spec)
    x, y = spec["x"], spec["y"]
    rows = len(x[0]) // world
    window = slice(rank * rows, (rank + 1) * rows)
    params, grads = [], []
    for step in range(len(x)):
        optimizer.zero_grad()
        loss = loss_of(model(mg.tensor(x[step][window])), y[step][window])
        loss.backward()
        grads.append(shard_grads(model))
        optimizer.step()
        params.append(full_params(model))
    result = {"params": params, "grads": grads, "names": [n for n, _ in model.named_parameters()]}
    if spec.get("ddp"):
        local = build_model(spec, spec["seed"])
        ddp = dist.DistributedDataParallel(local, find_unused_parameters=bool(spec["spec"].get("unused_branch")))
        ddp_opt = make_optimizer(ddp.parameters(), spec)
        ddp_params = []
        for step in range(len(x)):
            ddp_opt.zero_grad()
            loss_of(ddp(mg.tensor(x[step][window])), y[step][window]).backward()
            ddp_opt.step()
            ddp_params.append({k: v.numpy().copy() for k, v in local.state_dict().items()})
        ddp.close()
        result["ddp_params"] = ddp_params
    model.close()
    return result


def train_local(spec):
    """The same training in one process on the full batches: per-step parameters and full gradients."""
    model = build_model(spec, spec["seed"])
    optimizer = make_optimizer(model.parameters(), spec)
    params, grads = [], []
    for step in range(len(spec["x"])):
        optimizer.zero_grad()
        loss_of(model(mg.tensor(spec["x"][step])), spec["y"][step]).backward()
        grads.append({n: None if p.grad is None else p.grad.numpy().copy() for n, p in model.named_parameters()})
        optimizer.step()
        params.append({k: v.numpy().copy() for k, v in model.state_dict().items()})
    return {"params": params, "grads": grads}


# -- gradient accumulation -------------------------------------------------------------------------------------


def no_sync_accumulation(spec):
    """``micro - 1`` backward passes under no_sync (or synced, with ``sync_every``), one synced.

    Returns the shard gradients, the reduce-scatter counts and the parameters after one step.
    """
    rank, world = ensure_init()
    model = wrap(build_model(spec, spec["seed"]), spec)
    optimizer = make_optimizer(model.parameters(), spec)
    model.timeline = []
    x, y = spec["x"], spec["y"]
    rows = len(x[0]) // world
    window = slice(rank * rows, (rank + 1) * rows)
    optimizer.zero_grad()
    with contextlib.nullcontext() if spec.get("sync_every") else model.no_sync():
        for m in range(len(x) - 1):
            loss_of(model(mg.tensor(x[m][window])), y[m][window]).backward()
    during = sum(1 for event, _ in model.timeline if event == "reduce_scatter")
    held = memory.held_bytes(model.memory_holdings()["gradients"])
    loss_of(model(mg.tensor(x[-1][window])), y[-1][window]).backward()
    after = sum(1 for event, _ in model.timeline if event == "reduce_scatter")
    grads = shard_grads(model)
    optimizer.step()
    params = full_params(model)
    model.close()
    return {"during": during, "after": after, "held_during": held, "grads": grads, "params": params}


def local_accumulation(spec):
    """Local reference of ``no_sync_accumulation``: the sum of the micro-batches' full-batch gradients."""
    model = build_model(spec, spec["seed"])
    optimizer = make_optimizer(model.parameters(), spec)
    optimizer.zero_grad()
    for m in range(len(spec["x"])):
        loss_of(model(mg.tensor(spec["x"][m])), spec["y"][m]).backward()
    grads = {n: None if p.grad is None else p.grad.numpy().copy() for n, p in model.named_parameters()}
    optimizer.step()
    return {"grads": grads, "params": {k: v.numpy().copy() for k, v in model.state_dict().items()}}


# -- mixed precision ---------------------------------------------------------------------------------------------


def mixed_precision_run(spec):
    """Train float32 master shards with float16 gathers; report dtypes seen and parameters per step."""
    rank, world = ensure_init()
    model = wrap(build_model(spec, spec["seed"]), spec)
    optimizer = make_optimizer(model.parameters(), spec)
    seen = {}

    def record(module, args, output):
        seen["weight"] = str(module.weight.array.dtype)
        seen["output"] = str(output.dtype)

    probe = model.get_submodule(spec["probe"])
    (probe.module if isinstance(probe, FSDP) else probe).register_forward_hook(record)
    x, y = spec["x"], spec["y"]
    rows = len(x[0]) // world
    window = slice(rank * rows, (rank + 1) * rows)
    params, losses = [], []
    for step in range(len(x)):
        optimizer.zero_grad()
        loss = loss_of(model(mg.tensor(x[step][window].astype(np.float32))), y[step][window])
        loss.backward()
        losses.append(float(loss.item()))
        seen["shard"] = str(model._flat_param.array.dtype) if "_flat_param" in model._parameters else None
        seen["shard_grad"] = sorted({str(p.grad.dtype) for p in model.parameters() if p.grad is not None})
        optimizer.step()
        params.append(full_params(model))
    model.close()
    return {"params": params, "seen": seen, "losses": losses}


def local_half_gather(spec):
    """Reference for mixed precision: float32 master weights, forward/backward on float16 copies, full batch.

    Each step casts the master weights to float16 (what the all-gather
    delivers), computes the full-batch loss and gradients in float16, casts
    the gradients to float32 (``reduce_dtype``) and steps the masters.
    """
    master = build_model(spec, spec["seed"])
    half = build_model(spec, spec["seed"]).half()
    optimizer = make_optimizer(master.parameters(), spec)
    pairs = list(zip(master.parameters(), half.parameters()))
    params = []
    for step in range(len(spec["x"])):
        for m, h in pairs:
            h.array[...] = m.array.astype(np.float16)
            h.grad = None
        optimizer.zero_grad()
        loss_of(half(mg.tensor(spec["x"][step].astype(np.float16))), spec["y"][step]).backward()
        for m, h in pairs:
            m.grad = None if h.grad is None else mg.tensor(h.grad.numpy().astype(np.float32))
        optimizer.step()
        params.append({k: v.numpy().copy() for k, v in master.state_dict().items()})
    return {"params": params}


# -- checkpoints -----------------------------------------------------------------------------------------------------


def _train_steps(model, optimizer, spec, steps, window):
    for step in steps:
        optimizer.zero_grad()
        loss_of(model(mg.tensor(spec["x"][step][window])), spec["y"][step][window]).backward()
        optimizer.step()


def checkpoint_resume(spec):
    """Train, checkpoint (full via save_checkpoint; sharded via minigrad.save per rank), train on; resume both."""
    rank, world = ensure_init()
    rows = len(spec["x"][0]) // world
    window = slice(rank * rows, (rank + 1) * rows)
    total, cut = len(spec["x"]), spec["cut"]
    model = wrap(build_model(spec, spec["seed"]), spec)
    optimizer = make_optimizer(model.parameters(), spec)
    _train_steps(model, optimizer, spec, range(cut), window)
    path = os.path.join(spec["dir"], "fsdp.ckpt")
    dist.save_checkpoint(path, model, optimizer, step=cut)
    with FSDP.state_dict_type(model, StateDictType.SHARDED_STATE_DICT):
        sharded = model.state_dict()
    shard_path = os.path.join(spec["dir"], f"fsdp.rank{rank}.shard")
    mg.save({"model": sharded, "optimizer": optimizer.state_dict()}, shard_path)
    _train_steps(model, optimizer, spec, range(cut, total), window)
    straight = full_params(model)
    model.close()

    resumed = wrap(build_model(spec, spec["seed"] + 1000), spec)  # different weights until loaded
    resumed_opt = make_optimizer(resumed.parameters(), spec)
    loaded = dist.load_checkpoint(path, resumed, resumed_opt)
    _train_steps(resumed, resumed_opt, spec, range(loaded.step, total), window)
    via_full = full_params(resumed)
    resumed.close()

    again = wrap(build_model(spec, spec["seed"] + 2000), spec)
    again_opt = make_optimizer(again.parameters(), spec)
    saved = mg.load(shard_path)
    with FSDP.state_dict_type(again, StateDictType.SHARDED_STATE_DICT):
        again.load_state_dict(saved["model"])
    again_opt.load_state_dict(saved["optimizer"])
    _train_steps(again, again_opt, spec, range(cut, total), window)
    via_sharded = full_params(again)
    again.close()

    plain = build_model(spec, spec["seed"] + 3000)
    plain.load_state_dict(mg.load(path)["model"])  # the full state dict loads into the unwrapped model
    return {"straight": straight, "via_full": via_full, "via_sharded": via_sharded,
            "plain": {k: v.numpy().copy() for k, v in plain.state_dict().items()}}


# -- memory and timeline -------------------------------------------------------------------------------------------


def memory_peaks(spec):
    """Peak gathered-parameter bytes over a training step vs the bound of the package docstring."""
    rank, world = ensure_init()
    mg.manual_seed(0)
    widths = spec["widths"]
    layers = []
    for i, (a, b) in enumerate(zip(widths[:-1], widths[1:])):
        layers.append(nn.Linear(a, b))
        if i < len(widths) - 2:
            layers.append(nn.Tanh())
    full_bytes = sum(p.numel() for layer in layers for p in layer.parameters()) * 4
    unit_bytes = [sum(p.numel() for p in layer.parameters()) * 4 for layer in layers if isinstance(layer, nn.Linear)]
    model = FSDP(nn.Sequential(*layers), auto_wrap_policy=ModuleWrapPolicy({nn.Linear}))
    optimizer = mg.optim.SGD(model.parameters(), lr=0.1)
    x = mg.tensor(np.random.default_rng(rank).standard_normal((4, widths[0])).astype(np.float32))
    y = mg.tensor(np.zeros(4, dtype=np.int64))
    peaks, during = [], {}

    def look(module, args, output):
        report = memory.memory_report(model, optimizer)
        during.update(gathered=report["gathered_parameters"], shard_grads=report["gradients"])

    model[2].module.register_forward_hook(look)
    for _ in range(2):  # the second step prefetches
        memory.reset_peaks()
        optimizer.zero_grad()
        F.cross_entropy(model(x), y).backward()
        optimizer.step()
        peaks.append(memory.LEDGER.peak["gathered_parameters"])
    report = memory.memory_report(model, optimizer)
    model.close()
    return {"peaks": peaks, "full_bytes": full_bytes, "unit_bytes": unit_bytes, "report": report,
            "during_forward": during, "live_after": memory.LEDGER.live["gathered_parameters"]}


def timeline_run(spec):
    """Two iterations with a timeline: the second shows prefetches ahead of the units' compute."""
    ensure_init()
    mg.manual_seed(0)
    model = FSDP(nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 4), nn.Tanh(), nn.Linear(4, 2)),
                 auto_wrap_policy=ModuleWrapPolicy({nn.Linear}))
    model.timeline = []
    x, y = mg.tensor(np.ones((2, 3), dtype=np.float32)), mg.tensor(np.zeros(2, dtype=np.int64))
    marks = []
    for _ in range(2):
        marks.append(len(model.timeline))
        F.cross_entropy(model(x), y).backward()
    model.close()
    return {"timeline": model.timeline, "marks": marks}


# -- structure, errors -----------------------------------------------------------------------------------------------


def wrapping_structure(spec):
    """Which modules the auto-wrap policies made units, and the parameter names the optimizer sees."""
    ensure_init()
    mg.manual_seed(0)

    def build():
        return nn.Sequential(nn.Linear(3, 20), nn.Tanh(), nn.Sequential(nn.Linear(20, 2), nn.Linear(2, 2)))

    by_type = FSDP(build(), auto_wrap_policy=ModuleWrapPolicy({nn.Linear}))
    policy = functools.partial(size_based_auto_wrap_policy, min_num_params=spec["min_num_params"])
    by_size = FSDP(build(), auto_wrap_policy=policy)
    in_place = apply_wrap_policy(build(), ModuleWrapPolicy({nn.Linear}))
    out = {name: {"units": sorted(p.rstrip(".") for p in m._unit_prefixes().values()),
                  "params": [n for n, _ in m.named_parameters()],
                  "keys": list(m.state_dict())}
           for name, m in (("by_type", by_type), ("by_size", by_size), ("in_place", in_place))}
    out["in_place_is_sequential"] = isinstance(in_place, nn.Sequential) and type(in_place).__name__
    in_place.close()
    by_type.close()
    by_size.close()
    return out


def errors(spec):
    """The errors FSDP raises for misuse, as ``(type name, message)``."""
    ensure_init()
    mg.manual_seed(0)
    found = {}
    model = FSDP(nn.Sequential(nn.Linear(3, 4), nn.Linear(4, 2)), auto_wrap_policy=ModuleWrapPolicy({nn.Linear}))
    inner = model[0]
    found["resharded_use"] = message_of(lambda: inner.weight * 2)
    found["resharded_matmul"] = message_of(lambda: F.linear(mg.ones(1, 3), inner.weight))
    found["nested_no_sync"] = message_of(lambda: inner.no_sync().__enter__())
    found["wrap_twice"] = message_of(lambda: FSDP(model))
    found["not_module"] = message_of(lambda: FSDP(3))
    mixed = nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 2).double())
    found["mixed_dtypes"] = message_of(lambda: FSDP(mixed))
    tied = nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 2))
    tied[1].weight = tied[0].weight
    tied[0] = FSDP(tied[0])
    found["shared_across_units"] = message_of(lambda: FSDP(tied))
    found["ranks_differ"] = message_of(lambda: FSDP(nn.Linear(2, 2 + dist.get_rank())))
    with FSDP.state_dict_type(model, StateDictType.SHARDED_STATE_DICT):
        sharded = model.state_dict()
    layout_key = "0._flat_param"
    sharded["_fsdp_sharded_layout"][layout_key] = dict(sharded["_fsdp_sharded_layout"][layout_key], world_size=99)
    with FSDP.state_dict_type(model, StateDictType.SHARDED_STATE_DICT):
        found["wrong_layout"] = message_of(lambda: model.load_state_dict(sharded))
    full = model.state_dict()
    full["0.weight"] = mg.zeros(5, 5)
    found["wrong_shape"] = message_of(lambda: model.load_state_dict(full))
    found["missing_key"] = message_of(lambda: model.load_state_dict({"0.weight": mg.zeros(4, 3)}))
    found["bad_policy"] = message_of(lambda: MixedPrecisionPolicy(param_dtype="int32"))
    with FSDP.summon_full_params(model):
        found["summoned_weight_sum"] = float(inner.weight.detach().numpy().sum())
        found["forward_in_summon"] = message_of(lambda: model(mg.ones(1, 3)))
    model.close()
    return found


def divergent_backward(spec):
    """Same forward everywhere, but rank 1's loss ignores one head: every rank must raise, none may hang."""
    rank, _ = ensure_init()
    mg.manual_seed(0)
    model = FSDP(TwoHeads(), auto_wrap_policy=ModuleWrapPolicy({nn.Linear}), timeout=20.0)
    left, right = model(mg.ones(2, 3))
    loss = left.sum() + (right.sum() if rank == 0 else 0.0)
    loss.backward()  # raises RuntimeError on every rank; the pool restarts afterwards
