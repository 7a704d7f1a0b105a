"""Programs run on every rank of a pool by test_ddp.py.

Each takes a plain-data ``spec`` (drawn by hypothesis in the pytest process,
so every rank runs the same case) and returns plain data for the test to
compare: gradients, parameters, errors.
"""

from __future__ import annotations

import numpy as np

import minigrad as mg
import minigrad_dist as dist
from minigrad import nn
from minigrad.nn import functional as F
from minigrad_dist.algorithms import ddp_comm_hooks as hooks
from minigrad_dist.testing.oracles import environment
from tests.dist.programs_common import ensure_init

ACTIVATIONS = {"tanh": nn.Tanh, "relu": nn.ReLU, "sigmoid": nn.Sigmoid}


class SpecModel(nn.Module):
    """An MLP from a spec; optionally with a branch the forward never uses."""

    def __init__(self, spec):
        super().__init__()
        widths = [spec["in_features"], *spec["hidden"], spec["classes"]]
        layers = []
        for i, (a, b) in enumerate(zip(widths[:-1], widths[1:])):
            layers.append(nn.Linear(a, b))
            if i < len(widths) - 2:
                layers.append(ACTIVATIONS[spec["activation"]]())
        self.body = nn.Sequential(*layers)
        if spec.get("unused_branch"):
            self.unused = nn.Linear(spec["in_features"], 2)

    def forward(self, x):
        return self.body(x)


def build_model(spec, seed):
    mg.manual_seed(seed)
    return SpecModel(spec).double()


def global_data(spec, world_size):
    rng = np.random.default_rng(spec["data_seed"])
    n = spec["batch_per_rank"] * world_size
    batches = spec.get("data_batches", spec["steps"])
    x = rng.standard_normal((batches, n, spec["in_features"]))
    y = rng.integers(0, spec["classes"], size=(batches, n))
    return x, y


def _make_optimizer(params, spec):
    return mg.optim.SGD(params, lr=spec.get("lr", 0.1), momentum=spec.get("momentum", 0.9))


def _grads(model):
    return {n: (None if p.grad is None else p.grad.array.copy()) for n, p in model.named_parameters()}


def _params(model):
    return {n: p.array.copy() for n, p in model.named_parameters()}


def no_sync_accumulation(spec):
    """k micro-batches under no_sync + 1 synced == the sum of all micro-batch gradients (averaged)."""
    rank, world = ensure_init()
    micro = spec["micro_batches"]
    rng = np.random.default_rng(spec["data_seed"])
    b = spec["batch_per_rank"]
    x = rng.standard_normal((micro, world * b, spec["in_features"]))
    y = rng.integers(0, spec["classes"], size=(micro, world * b))
    model = build_model(spec, seed=spec["model_seed"])
    ddp = dist.DistributedDataParallel(model, bucket_cap_mb=spec["bucket_cap_mb"])
    comm_during_no_sync = []
    with ddp.no_sync():
        for m in range(micro - 1):
            F.cross_entropy(ddp(mg.tensor(x[m, rank * b : (rank + 1) * b])),
                            mg.tensor(y[m, rank * b : (rank + 1) * b])).backward()
            comm_during_no_sync.append(ddp.reducer.num_iterations)
    F.cross_entropy(ddp(mg.tensor(x[-1, rank * b : (rank + 1) * b])),
                    mg.tensor(y[-1, rank * b : (rank + 1) * b])).backward()
    ddp.close()
    result = {"grads": _grads(model), "reductions_during_no_sync": comm_during_no_sync,
              "reductions": ddp.reducer.num_iterations}
    if rank == 0:
        ref = build_model(spec, seed=spec["model_seed"])
        for m in range(micro):
            F.cross_entropy(ref(mg.tensor(x[m])), mg.tensor(y[m])).backward()
        result["local"] = _grads(ref)
    return result


def comm_hook_run(spec):
    """Train with a comm hook; returns DDP grads, exact averaged grads and final losses."""
    rank, world = ensure_init()
    x, y = global_data(spec, world)
    model = build_model(spec, seed=spec["model_seed"])
    ddp = dist.DistributedDataParallel(model, bucket_cap_mb=spec["bucket_cap_mb"])
    if spec["hook"] == "fp16":
        ddp.register_comm_hook(None, hooks.fp16_compress_hook)
    elif spec["hook"] == "powersgd":
        state = hooks.PowerSGDState(None, matrix_approximation_rank=spec.get("rank", 1),
                                    start_powerSGD_iter=spec.get("start", 2), use_error_feedback=True)
        ddp.register_comm_hook(state, hooks.powerSGD_hook)
    elif spec["hook"] == "allreduce":
        ddp.register_comm_hook(None, hooks.allreduce_hook)
    opt = mg.optim.SGD(ddp.parameters(), lr=spec.get("lr", 0.1))
    b = spec["batch_per_rank"]
    losses, first_grads = [], None
    for step in range(spec["steps"]):
        xb = mg.tensor(x[step % len(x), rank * b : (rank + 1) * b])
        yb = mg.tensor(y[step % len(y), rank * b : (rank + 1) * b])
        opt.zero_grad()
        loss = F.cross_entropy(ddp(xb), yb)
        loss.backward()
        if first_grads is None:
            first_grads = _grads(model)
        losses.append(float(loss.item()))
        opt.step()
    ddp.close()
    result = {"first_grads": first_grads, "losses": losses, "params": _params(model)}
    if rank == 0:
        ref = build_model(spec, seed=spec["model_seed"])
        F.cross_entropy(ref(mg.tensor(x[0])), mg.tensor(y[0])).backward()
        result["exact_first_grads"] = _grads(ref)
    return result


def join_uneven(spec):
    """Rank r has ``batches[r]`` batches; train inside join(); return final params and a local replay."""
    rank, world = ensure_init()
    counts = spec["batches"][:world]
    b = spec["batch_per_rank"]
    rng = np.random.default_rng(spec["data_seed"])
    data = [(rng.standard_normal((counts[r], b, spec["in_features"])),
             rng.integers(0, spec["classes"], size=(counts[r], b))) for r in range(world)]
    model = build_model(spec, seed=spec["model_seed"])
    ddp = dist.DistributedDataParallel(model, bucket_cap_mb=spec["bucket_cap_mb"])
    opt = mg.optim.SGD(ddp.parameters(), lr=0.1)
    with ddp.join(divide_by_initial_world_size=False):
        for i in range(counts[rank]):
            opt.zero_grad()
            F.cross_entropy(ddp(mg.tensor(data[rank][0][i])), mg.tensor(data[rank][1][i])).backward()
            opt.step()
    ddp.close()
    result = {"params": _params(model)}
    if rank == 0:
        ref = build_model(spec, seed=spec["model_seed"])
        ropt = mg.optim.SGD(ref.parameters(), lr=0.1)
        for i in range(max(counts)):
            active = [r for r in range(world) if i < counts[r]]
            xs = np.concatenate([data[r][0][i] for r in active])
            ys = np.concatenate([data[r][1][i] for r in active])
            ropt.zero_grad()
            F.cross_entropy(ref(mg.tensor(xs)), mg.tensor(ys)).backward()
            ropt.step()
        result["local"] = _params(ref)
    return result


class TwoPaths(nn.Module):
    """Gradients arrive in an order unlike reverse registration order (for bucket rebuild)."""

    def __init__(self):
        super().__init__()
        self.late = nn.Linear(4, 4)   # registered first, used last in forward
        self.early = nn.Linear(4, 4)  # registered second, used first in forward
        self.head = nn.Linear(4, 3)

    def forward(self, x):
        return self.head(self.late(self.early(x).tanh()).tanh())


def bucket_rebuild(spec):
    """Buckets are rebuilt after iteration 1 in the observed order; results stay exact."""
    rank, world = ensure_init()
    mg.manual_seed(0)
    model = TwoPaths().double()
    ddp = dist.DistributedDataParallel(model, bucket_cap_mb=1e-5, first_bucket_cap_mb=1e-5)
    before = ddp.reducer.bucket_order()
    rng = np.random.default_rng(1)
    x = rng.standard_normal((3, world * 4, 4))
    y = rng.integers(0, 3, size=(3, world * 4))
    grads = []
    for step in range(3):
        ddp.zero_grad()
        F.cross_entropy(ddp(mg.tensor(x[step, rank * 4 : (rank + 1) * 4])),
                        mg.tensor(y[step, rank * 4 : (rank + 1) * 4])).backward()
        grads.append(_grads(model))
    ddp.close()
    result = {"before": before, "after": ddp.reducer.bucket_order(), "grads": grads,
              "names": [n for n, _ in model.named_parameters()]}
    if rank == 0:
        mg.manual_seed(0)
        ref = TwoPaths().double()
        local = []
        for step in range(3):
            ref.zero_grad()
            F.cross_entropy(ref(mg.tensor(x[step])), mg.tensor(y[step])).backward()
            local.append(_grads(ref))
        result["local"] = local
    return result


class MaybeBranch(nn.Module):
    """Uses ``extra`` only when told to: the unused-parameter cases."""

    def __init__(self):
        super().__init__()
        self.main = nn.Linear(3, 2)
        self.extra = nn.Linear(3, 2)

    def forward(self, x, use_extra):
        out = self.main(x)
        return out + self.extra(x) if use_extra else out


def unused_parameters(spec):
    """find_unused_parameters both ways; returns grads or the error message per rank."""
    rank, world = ensure_init()
    mg.manual_seed(0)
    model = MaybeBranch().double()
    ddp = dist.DistributedDataParallel(model, find_unused_parameters=spec["find_unused"])
    use_extra = spec["use_extra"][rank % len(spec["use_extra"])]
    x = mg.tensor(np.full((2, 3), float(rank + 1)))
    try:
        ddp(x, use_extra).sum().backward()
    except RuntimeError as error:
        dist.destroy_process_group()  # communicators may hold unfinished requests now
        return {"error": str(error)}
    return {"grads": _grads(model)}


def unused_after_no_sync(spec):
    """A parameter used only in a no_sync pass, unused in the synced one: its accumulated gradient is averaged."""
    rank, world = ensure_init()
    mg.manual_seed(0)
    model = MaybeBranch().double()
    ddp = dist.DistributedDataParallel(model, find_unused_parameters=True)
    x = mg.tensor(np.full((2, 3), float(rank + 1)))
    with ddp.no_sync():
        ddp(x, spec["first_uses_extra"][rank]).sum().backward()
    ddp(x, False).sum().backward()
    ddp.close()
    return _grads(model)


def mismatched_models(spec):
    """Ranks build different models: DDP construction fails on every rank with a clear error."""
    rank, world = ensure_init()
    width = 4 + (rank == world - 1) * spec["extra_width"]
    layers = [nn.Linear(3, width)] + ([nn.Linear(width, 2)] if rank != world - 1 or not spec["extra_layer"] else [])
    model = nn.Sequential(*layers)
    try:
        dist.DistributedDataParallel(model)
    except RuntimeError as error:
        return str(error)
    return None


class WithBuffer(nn.Module):
    """A linear layer plus a running statistic kept in a buffer."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)
        self.register_buffer("running", mg.zeros(2, dtype=mg.float64))

    def forward(self, x):
        self.seen.append(self.running.array.copy())
        out = self.fc(x)
        with mg.no_grad():
            self.running.copy_(self.running.array * 0.5 + out.detach().array.mean(axis=0))
        return out


def buffers_broadcast(spec):
    """With broadcast_buffers, rank 0's buffers overwrite every rank's before each forward."""
    rank, world = ensure_init()
    mg.manual_seed(0)
    model = WithBuffer().double()
    model.seen = []
    ddp = dist.DistributedDataParallel(model, broadcast_buffers=spec["broadcast"])
    for step in range(2):
        with mg.no_grad():
            model.running.fill_(float(rank + 10 * step))
        x = mg.tensor(np.full((2, 3), float(rank + 1)))
        ddp(x).sum().backward()
    ddp.close()
    return model.seen


def bucket_view_grads(spec):
    """gradient_as_bucket_view: every .grad is a view into its bucket's buffer."""
    rank, world = ensure_init()
    mg.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2)).double()
    ddp = dist.DistributedDataParallel(model, gradient_as_bucket_view=True, bucket_cap_mb=1e-5,
                                       first_bucket_cap_mb=1e-5)
    for _ in range(2):
        ddp.zero_grad()
        ddp(mg.tensor(np.ones((2, 3)) * (rank + 1))).sum().backward()
    views = []
    for bucket in ddp.reducer.buckets:
        for param in bucket.params:
            views.append(bool(np.shares_memory(param.grad.array, bucket.buffer)))
    ddp.close()
    return views


def bucket_buffer_reuse(spec):
    """Without gradient_as_bucket_view: buffers are reused after zero_grad, never under a held .grad."""
    rank, world = ensure_init()
    mg.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2)).double()
    ddp = dist.DistributedDataParallel(model)
    x = mg.tensor(np.ones((2, 3)) * (rank + 1))

    def step():
        ddp.zero_grad()
        ddp(x).sum().backward()
        return [id(b.buffer) for b in ddp.reducer.buckets]

    step()
    reused = step() == step()
    held = [p.grad for p in ddp.parameters()]
    before = [g.array.copy() for g in held]
    fresh = step()
    kept = all(np.array_equal(g.array, b) for g, b in zip(held, before))
    ddp.close()
    return {"reused": reused, "held_grads_kept": kept, "fresh_while_held": fresh != [id(g.array.base) for g in held]}


def progress_during_backward(spec):
    """Whether hooks that fire after a bucket was launched everywhere complete its reduction.

    A two-layer model with one parameter per bucket. Barriers in extra hooks
    (registered after DDP's, so they run after them) make sure every rank has
    launched the second layer's buckets, and then has run one more DDP hook,
    before the last hook of the backward looks at those buckets' futures. The
    end-of-backward callback has not run yet at that point: only the hooks'
    progress calls can have completed the reductions. The barriers use files,
    not MPI, because any MPI call would drive MPI's progress itself.
    """
    rank, world = ensure_init()
    with environment({"MINIGRAD_DDP_SHM": spec["shm"]}):
        mg.manual_seed(0)
        model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2)).double()
        ddp = dist.DistributedDataParallel(model, bucket_cap_mb=1e-6, first_bucket_cap_mb=1e-6)
    reducer = ddp.reducer
    second = [reducer._index_of[id(p)] for p in model[2].parameters()]
    second_buckets = sorted({reducer._location[i][0].index for i in second})
    seen = {"second": 0, "first": 0, "done_before_end": None}

    def after_second_layer(param):
        seen["second"] += 1
        if seen["second"] == 2:  # both of its buckets are launched on this rank
            _file_barrier(spec["dir"], "launched", rank, world)

    def after_first_layer(param):
        seen["first"] += 1
        if seen["first"] == 1:
            # Every rank has run a DDP hook since the buckets were launched everywhere.
            _file_barrier(spec["dir"], "hooked", rank, world)
        else:
            seen["done_before_end"] = [reducer.buckets[k].future.done() for k in second_buckets]

    handles = [p.register_post_accumulate_grad_hook(after_second_layer) for p in model[2].parameters()]
    handles += [p.register_post_accumulate_grad_hook(after_first_layer) for p in model[0].parameters()]
    ddp(mg.tensor(np.ones((2, 3)) * (rank + 1))).sum().backward()
    for handle in handles:
        handle.remove()
    used_shared = reducer.shared is not None
    ddp.close()
    return {"done_before_end": seen["done_before_end"], "shared": used_shared}


def _file_barrier(directory, name, rank, world, timeout=60.0):
    """Wait until every rank reached this point, without calling MPI."""
    import pathlib  # noqa: PLC0415
    import time  # noqa: PLC0415

    folder = pathlib.Path(directory)
    (folder / f"{name}.{rank}").touch()
    deadline = time.monotonic() + timeout
    while not all((folder / f"{name}.{r}").exists() for r in range(world)):
        if time.monotonic() > deadline:
            raise TimeoutError(f"file barrier {name!r} in {directory}")
        time.sleep(1e-3)


def ddp_on_subgroup(spec):
    """DDP over ``new_group([0, 2])`` of 3 ranks: its members average only between themselves."""
    rank, world = ensure_init()
    group = dist.new_group([0, 2])
    if rank not in (0, 2):
        return None
    mg.manual_seed(0)
    model = nn.Linear(3, 2).double()
    ddp = dist.DistributedDataParallel(model, process_group=group)
    ddp(mg.tensor(np.ones((1, 3)) * (rank + 1))).sum().backward()
    result = {"grad": model.weight.grad.array.copy(), "shared": ddp.reducer.shared is not None}
    ddp.close()
    return result


def shared_memory_in_use(spec):
    """Whether DDP reduces through shared memory with ``MINIGRAD_DDP_SHM=spec["shm"]``."""
    rank, world = ensure_init()
    with environment({"MINIGRAD_DDP_SHM": spec["shm"]}):
        ddp = dist.DistributedDataParallel(nn.Linear(3, 2).double())
    ddp(mg.tensor(np.ones((2, 3)) * (rank + 1))).sum().backward()
    used = ddp.reducer.shared is not None
    ddp.close()
    return used


def warn_when_nothing_unused(spec):
    """find_unused_parameters with every parameter used: one warning, not one per iteration."""
    import warnings

    ensure_init()
    model = nn.Linear(3, 2).double()
    ddp = dist.DistributedDataParallel(model, find_unused_parameters=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(3):
            ddp(mg.tensor(np.ones((2, 3)))).sum().backward()
    return [str(w.message) for w in caught if "find_unused_parameters" in str(w.message)]


def previous_backward_unfinished(spec):
    """A forward after a backward that could not reduce raises a clear error on every rank."""
    ensure_init()
    mg.manual_seed(0)
    model = MaybeBranch().double()
    ddp = dist.DistributedDataParallel(model)
    messages = []
    try:
        ddp(mg.tensor(np.ones((2, 3))), False).sum().backward()
    except RuntimeError as error:
        messages.append(str(error))
    try:
        ddp(mg.tensor(np.ones((2, 3))), True)
    except RuntimeError as error:
        messages.append(str(error))
    dist.destroy_process_group()
    return messages
