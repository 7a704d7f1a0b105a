"""Oracles: DDP on a pool of real MPI ranks must train exactly like one process on the full batch.

``assert_ddp_matches_local`` is the check behind the package docstring's
example. What it runs:

1. **On every rank of a pool** (``pool.get_pool(world_size)``): seed with
   ``seed + rank`` (so replicas start different and DDP must broadcast
   rank 0's weights), build ``model_fn()``, wrap it in
   ``DistributedDataParallel``, register ``comm_hook`` if given, and train
   ``steps`` steps, rank r on rows ``[r*b, (r+1)*b)`` of each global batch.
   Each rank records its gradients after every backward and its
   parameters after every optimizer step.
2. **In this process**: seed with ``seed``, build the same model, train on
   the full global batches with the same optimizer.
3. **Compare**, step by step: every rank's gradients and parameters must
   equal the local ones within ``rtol``/``atol`` (NumPy's ``allclose``
   rule), and every rank's parameters must be bitwise identical to rank
   0's (replicas that drift apart by rounding are a bug too).

A mean-reduced loss over a batch split evenly across ranks has exactly the
average of the ranks' gradients as its gradient, which is what DDP
computes, so the two runs agree up to floating-point rounding.
"""

from __future__ import annotations

import contextlib
import functools
import os
import pickle
from dataclasses import dataclass

import numpy as np

import minigrad as mg
import minigrad_dist as dist
from minigrad import backend
from minigrad.nn import functional as F
from minigrad_dist.testing.pool import get_pool

LOSSES = ("cross_entropy", "mse")
_MAX_LISTED = 8


@dataclass(frozen=True)
class DDPMatch:
    """What ``assert_ddp_matches_local`` measured when the runs agreed.

    Attributes:
        world_size, steps: the run compared.
        max_grad_error: largest absolute difference of a gradient entry (any rank, step).
        max_param_error: largest absolute difference of a parameter entry after a step.
    """

    world_size: int
    steps: int
    max_grad_error: float
    max_param_error: float


def assert_ddp_matches_local(
    model_fn,
    data,
    comm_hook=None,
    hook_state=None,
    world_size: int = 2,
    steps: int | None = None,
    optimizer: str = "SGD",
    optimizer_kwargs=None,
    loss: str = "cross_entropy",
    ddp_kwargs=None,
    rtol: float = 1e-10,
    atol: float = 1e-12,
    seed: int = 0,
    timeout: float = 120.0,
    env=None,
) -> DDPMatch:
    """Train with DDP on ``world_size`` MPI ranks and in this process; fail if they differ.

    Args:
        model_fn: builds the model, ``model_fn() -> nn.Module``; a top-level
            function (or a ``functools.partial`` of one with picklable
            arguments): it travels to the ranks by name.
        data: ``(x, y)`` NumPy arrays; ``x[step]`` is one global batch of
            shape ``(global_batch, ...)`` (cast to the model's dtype),
            ``y[step]`` its targets: class indices for ``"cross_entropy"``,
            values shaped like the output for ``"mse"``. ``global_batch``
            must be divisible by ``world_size``.
        comm_hook: optional DDP comm hook ``hook(state, bucket) -> Future``;
            a top-level function, like ``model_fn``.
        hook_state: the hook's state (pickled to each rank; None: the default group).
        world_size: number of ranks (use >= 2: at 1 a hook's averaging is invisible).
        steps: training steps (default: ``len(x)``).
        optimizer: name of a ``minigrad.optim`` class (``"SGD"``, ``"Adam"``, ``"AdamW"``).
        optimizer_kwargs: its keyword arguments (default ``{"lr": 0.1}``).
        loss: ``"cross_entropy"`` or ``"mse"`` (mean reduction).
        ddp_kwargs: extra ``DistributedDataParallel`` arguments (``bucket_cap_mb``, ...).
        rtol, atol: tolerance of the DDP-vs-local comparison (defaults suit float64).
        seed: seed of the local model and of rank 0's (rank r uses ``seed + r``).
        timeout: seconds the ranks may take.
        env: environment variables set on every rank while DDP is built, e.g.
            ``{"MINIGRAD_DDP_SHM": "0"}`` to reduce with ``Iallreduce`` instead
            of shared memory.

    Returns:
        ``DDPMatch`` with the largest differences seen.

    Raises:
        AssertionError: the runs differ; the message names the first
            differing step, rank and parameter, with the largest error, then lists more.
        TypeError, ValueError: bad arguments (checked before anything runs).
        minigrad_dist.testing.pool.RankFailure: some rank raised (its traceback included).
        minigrad_dist.testing.pool.PoolTimeout: the ranks did not finish within ``timeout``.
    """
    _check_travels_by_name(model_fn, "model_fn")
    if comm_hook is not None:
        _check_travels_by_name(comm_hook, "comm_hook")
    _check_picklable(hook_state)
    x, y = _check_data(data, world_size)
    steps = len(x) if steps is None else steps
    if not 1 <= steps <= len(x):
        raise ValueError(f"steps must be between 1 and the {len(x)} batches in data, got {steps}")
    if loss not in LOSSES:
        raise ValueError(f"loss must be one of {LOSSES}, got {loss!r}")
    if not isinstance(getattr(mg.optim, optimizer, None), type):
        raise ValueError(f"optimizer must name a class of minigrad.optim (SGD, Adam, ...), got {optimizer!r}")
    job = {
        "model_fn": model_fn, "comm_hook": comm_hook, "hook_state": hook_state,
        "x": x[:steps], "y": y[:steps],
        "optimizer": optimizer, "optimizer_kwargs": dict(optimizer_kwargs or {"lr": 0.1}), "loss": loss,
        "ddp_kwargs": dict(ddp_kwargs or {}), "seed": seed, "env": dict(env or {}),
    }
    results = get_pool(world_size).run(ddp_on_rank, job, timeout=timeout)
    local = _train_locally(job)
    return _compare(job, local, results, world_size, rtol, atol)


# -- what runs where --------------------------------------------------------------------------


def ddp_on_rank(job: dict) -> dict:
    """Step 1 of the module docstring, on one rank of a pool; returns its gradients and parameters."""
    if not dist.is_initialized():
        dist.init_process_group(backend="mpi")
    rank, world = dist.get_rank(), dist.get_world_size()
    mg.manual_seed(job["seed"] + rank)
    model = job["model_fn"]()
    with environment(job.get("env", {})):
        ddp = dist.DistributedDataParallel(model, **job["ddp_kwargs"])
    if job["comm_hook"] is not None:
        ddp.register_comm_hook(job["hook_state"], job["comm_hook"])
    rows = len(job["x"][0]) // world
    window = slice(rank * rows, (rank + 1) * rows)
    result = _train(ddp, model, job, lambda step: (job["x"][step][window], job["y"][step][window]))
    # Every rank gets here together, so the Reducer's communicators and shared memory can be freed
    # now; pool ranks live long, and MPICH allows only about 2000 communicators per process.
    ddp.close()
    return result


@contextlib.contextmanager
def environment(variables: dict):
    """Set environment variables for the duration of a ``with`` block, then restore them."""
    saved = {name: os.environ.get(name) for name in variables}
    os.environ.update({name: str(value) for name, value in variables.items()})
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def _train_locally(job: dict) -> dict:
    """Step 2: the same training in this process on the full batches (leaves the caller's RNG as it was)."""
    state = backend.get_rng_state()
    try:
        mg.manual_seed(job["seed"])
        model = job["model_fn"]()
        return _train(model, model, job, lambda step: (job["x"][step], job["y"][step]))
    finally:
        backend.set_rng_state(state)


def _train(runner, model, job, batch) -> dict:
    """Train ``runner`` (the model or its DDP wrapper); record gradients and parameters per step."""
    optimizer = getattr(mg.optim, job["optimizer"])(runner.parameters(), **job["optimizer_kwargs"])
    dtype = next(iter(model.parameters())).dtype
    grads, params = [], []
    for step in range(len(job["x"])):
        x, y = batch(step)
        target = mg.tensor(y if job["loss"] == "cross_entropy" else y.astype(dtype))
        optimizer.zero_grad()
        output = runner(mg.tensor(x.astype(dtype)))
        loss_fn = F.cross_entropy if job["loss"] == "cross_entropy" else F.mse_loss
        loss = loss_fn(output, target)
        loss.backward()
        grads.append({n: None if p.grad is None else backend.to_numpy(p.grad.array).copy()
                      for n, p in model.named_parameters()})
        optimizer.step()
        params.append({n: backend.to_numpy(p.array).copy() for n, p in model.named_parameters()})
    return {"grads": grads, "params": params}


# -- step 3: the comparison ---------------------------------------------------------------------


@dataclass
class _Finding:
    step: int
    rank: int
    what: str
    text: str


def _compare(job, local, results, world_size, rtol, atol) -> DDPMatch:
    findings, max_grad, max_param = [], 0.0, 0.0
    for step in range(len(job["x"])):
        rank0 = results[0]["params"][step]
        for rank, result in enumerate(results):
            for name, want in local["grads"][step].items():
                error, text = _difference(result["grads"][step][name], want, rtol, atol, world_size)
                max_grad = max(max_grad, error)
                if text:
                    findings.append(_Finding(step, rank, f"gradient of {name!r}", text))
            for name, want in local["params"][step].items():
                got = result["params"][step][name]
                error, text = _difference(got, want, rtol, atol, world_size)
                max_param = max(max_param, error)
                text = text or _drift(got, rank0[name])
                if text:
                    findings.append(_Finding(step, rank, f"parameter {name!r} after the step", text))
    if findings:
        raise AssertionError(_report(job, findings, world_size, rtol, atol))
    return DDPMatch(world_size, len(job["x"]), max_grad, max_param)


def _drift(got, rank0):
    """None when a rank's parameter has rank 0's bits, else a description."""
    if got.tobytes() == rank0.tobytes():
        return None
    delta = float(np.max(np.abs(got - rank0)))
    return f"differs bitwise from rank 0's (max difference {delta:.3g}): the replicas drift apart"


def _difference(got, want, rtol, atol, world_size):
    """``(max abs error, None)`` when ``got`` matches ``want``, else ``(error, description)``."""
    if got is None or want is None:
        if got is None and want is None:
            return 0.0, None
        return 0.0, ("is None in DDP but not locally" if got is None else "is set in DDP but None locally")
    if got.shape != want.shape:
        return 0.0, f"has shape {got.shape} in DDP, {want.shape} locally"
    diff = np.abs(got.astype(np.float64) - want.astype(np.float64))
    error = float(diff.max()) if diff.size else 0.0
    if np.allclose(got, want, rtol=rtol, atol=atol, equal_nan=True):
        return error, None
    worst = np.unravel_index(int(np.argmax(diff)), diff.shape) if diff.ndim else ()
    text = (f"max abs error {error:.3g} at index {tuple(int(i) for i in worst)} "
            f"(DDP {float(got[worst]):.6g}, local {float(want[worst]):.6g})")
    return error, text + _ratio_hint(got, want, world_size)


def _ratio_hint(got, want, world_size) -> str:
    """Name the classic mistakes: DDP off by exactly the world size (a sum, or divided twice)."""
    nonzero = np.abs(want) > 1e-12
    if not nonzero.any():
        return ""
    ratio = float(np.median(got[nonzero] / want[nonzero]))
    if world_size > 1 and np.isclose(ratio, world_size, rtol=1e-6):
        return (f"; DDP is {world_size}x local everywhere: gradients were summed over the {world_size} ranks "
                "but not divided by the world size")
    if world_size > 1 and np.isclose(ratio, 1 / world_size, rtol=1e-6):
        return f"; DDP is 1/{world_size} of local everywhere: gradients were divided by the world size twice"
    return ""


def _report(job, findings, world_size, rtol, atol) -> str:
    findings.sort(key=lambda f: (f.step, f.rank))
    first = findings[0]
    hook = job["comm_hook"]
    hook_name = "the default allreduce" if hook is None else _name_of(hook)
    lines = [
        f"DDP on {world_size} ranks (comm hook: {hook_name}) differs from local training "
        f"(rtol={rtol:g}, atol={atol:g}).",
        f"First difference: step {first.step}, rank {first.rank}, {first.what}: {first.text}",
    ]
    if len(findings) > 1:
        lines.append(f"{len(findings)} differences in all; the first {min(len(findings), _MAX_LISTED)}:")
        lines.extend(f"  step {f.step} rank {f.rank} {f.what}: {f.text}" for f in findings[:_MAX_LISTED])
    return "\n".join(lines)


# -- argument checks ------------------------------------------------------------------------------


def _name_of(fn) -> str:
    if isinstance(fn, functools.partial):
        return _name_of(fn.func) + "(partial)"
    return f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', repr(fn))}"


def _check_travels_by_name(fn, what: str) -> None:
    """Raise TypeError unless ``fn`` can be pickled by reference and imported by the ranks."""
    if not callable(fn):
        raise TypeError(f"{what} must be callable, got {type(fn).__name__}")
    target = fn.func if isinstance(fn, functools.partial) else fn
    module = getattr(target, "__module__", None)
    qualname = getattr(target, "__qualname__", "")
    hint = (f"{what} must be a top-level function of an importable module (or a functools.partial of "
            f"one): it travels to the ranks by name")
    if module == "__main__":
        raise TypeError(f"{hint}; {_name_of(target)} is defined in __main__, which the ranks cannot import")
    if "<locals>" in qualname or "<lambda>" in qualname:
        raise TypeError(f"{hint}; {_name_of(target)} is a lambda or a local function")
    try:
        pickle.dumps(fn)
    except (pickle.PicklingError, AttributeError, TypeError) as error:
        raise TypeError(f"{hint}; pickling {_name_of(target)} failed: {error}") from error


def _check_picklable(hook_state) -> None:
    try:
        pickle.dumps(hook_state)
    except Exception as error:  # noqa: BLE001  (pickling raises many kinds of errors)
        raise TypeError(
            "hook_state is pickled and sent to every rank, so it must be picklable: pass None for the "
            "default process group, or plain state built by the hook's own code "
            f"(got {type(hook_state).__name__}: {error})"
        ) from error


def _check_data(data, world_size: int):
    if world_size < 1:
        raise ValueError(f"world_size must be >= 1, got {world_size}")
    if not (isinstance(data, (tuple, list)) and len(data) == 2):
        raise TypeError(f"data must be a pair (x, y) of NumPy arrays, got {type(data).__name__}")
    x, y = (np.asarray(a) for a in data)
    if x.ndim < 2 or y.ndim < 2 or len(x) != len(y) or x.shape[1] != y.shape[1]:
        raise ValueError(
            "data must be (x, y) with x of shape (steps, global_batch, ...) and y of shape "
            f"(steps, global_batch, ...); got x {x.shape}, y {y.shape}"
        )
    if len(x) == 0 or x.shape[1] == 0 or x.shape[1] % world_size:
        raise ValueError(
            f"the global batch ({x.shape[1]} rows) must be a positive multiple of world_size ({world_size}), "
            "so that every rank gets the same number of rows"
        )
    return x, y
