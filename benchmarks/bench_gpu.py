"""minigrad on CUDA (CuPy) vs PyTorch on CUDA, the same float32 work in one run.

Measures, on the current CUDA device:
  * one training step (forward, backward, Adam) of an MLP 1024-1024-1024-10
    at batch 256 (launch/overhead-bound) and of an MLP 1024-4096-4096-1024
    at batch 256 (compute-bound);
  * one training step (Adam) of LeNet-5 with BatchNorm (``bench_models.lenet``)
    on 28x28 images at batch 256;
  * a large matrix product, forward and backward: ``(a @ b).backward(g)`` for
    float32 square matrices of size 4096 (time and TFLOP/s of the 3 products).

Both libraries start from the same weights (PyTorch's, copied) and the same
data; before timing, the first losses of both are compared and the largest
difference is recorded. Every timed call ends by synchronizing the device
(``mg.cuda.synchronize()`` and ``torch.cuda.synchronize()``), so the times
include the GPU work, not just its launch. Sides alternate in rounds and each
reports its median (``bench_engine.alternate``); the ratio is minigrad / PyTorch
(lower is better, 1.0 is parity). Matrix products run in strict float32 on
both sides (PyTorch's TF32 switch is left off, CuPy's ``CUPY_TF32`` unset).

With ``--ddp``, also minigrad's DDP on the GPU (``--ranks`` processes under
``mpiexec``, sharing the devices round-robin): one SGD step of the MLP
1024-4096-4096-1024 at batch 256 per rank, under DDP and trained locally by
each rank, in alternating rounds behind a barrier, for each way gradients
reach MPI:

  1. the MPI library's own answer decides (``minigrad_dist.mpi.cuda_aware``,
     unless ``MINIGRAD_CUDA_AWARE_MPI`` says otherwise): a CUDA-aware MPI
     reads the device buckets directly;
  2. if that run was CUDA-aware, a second run with ``MINIGRAD_CUDA_AWARE_MPI=0``
     stages every bucket through host memory; otherwise the first run was the
     staged one, and the CUDA-aware side is reported as not available (an MPI
     without CUDA support cannot be handed device pointers).

Each run also checks that the ranks' replicas hold the same parameters after
its steps (the largest difference across ranks, expected 0).

Without a usable GPU (no CuPy, no CUDA device, or a CPU-only PyTorch) the
script prints why and exits with status 0, writing nothing.

Usage:
    python benchmarks/bench_gpu.py [--quick] [--ddp [--ranks 2]] [--out benchmarks/results/gpu.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
from pathlib import Path

import numpy as np
import torch
from bench_models import lenet
from timing import alternate, entry, launch_ranks, relu_mlp, write_report

import minigrad as mg
from minigrad import backend

HERE = Path(__file__).resolve().parent


def gpu_unavailable_reason() -> str:
    """Why this benchmark cannot run here ('' when it can)."""
    if not backend.cuda_is_available():
        return backend.cuda_unavailable_reason()
    if not torch.cuda.is_available():
        return f"PyTorch {torch.__version__} sees no CUDA device"
    return ""


def _synced_mg(fn):
    def run():
        fn()
        mg.cuda.synchronize()

    return run


def _synced_torch(fn):
    def run():
        fn()
        torch.cuda.synchronize()

    return run


def _copy_weights(torch_model, mg_model):
    """Load ``torch_model``'s parameters and buffers into ``mg_model`` (both on the CPU)."""
    state = {k: mg.tensor(v.detach().cpu().numpy().copy()) for k, v in torch_model.state_dict().items()}
    mg_model.load_state_dict(state)


def _training_pair(make_model, x, y, lr=1e-3):
    """Equal models on CUDA, one Adam step for each library, and the first losses' difference."""
    torch.manual_seed(0)
    tmodel, model = make_model(torch), make_model(mg)
    _copy_weights(tmodel, model)
    tmodel.to("cuda")
    model.to("cuda")
    topt, opt = torch.optim.Adam(tmodel.parameters(), lr=lr), mg.optim.Adam(model.parameters(), lr=lr)
    tx, ty = torch.from_numpy(x).cuda(), torch.from_numpy(y).cuda()
    mx, my = mg.tensor(x, device="cuda"), mg.tensor(y, device="cuda")

    loss_mg = float(mg.nn.functional.cross_entropy(model(mx), my).item())
    loss_torch = float(torch.nn.functional.cross_entropy(tmodel(tx), ty).item())

    def step_mg():
        opt.zero_grad()
        mg.nn.functional.cross_entropy(model(mx), my).backward()
        opt.step()

    def step_torch():
        topt.zero_grad()
        torch.nn.functional.cross_entropy(tmodel(tx), ty).backward()
        topt.step()

    return _synced_mg(step_mg), _synced_torch(step_torch), abs(loss_mg - loss_torch)


def mlp_step_pair(sizes, batch):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((batch, sizes[0])).astype(np.float32)
    y = rng.integers(0, sizes[-1], size=batch)
    return _training_pair(lambda lib: relu_mlp(lib.nn, sizes), x, y)


def lenet_step_pair(batch):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((batch, 1, 28, 28)).astype(np.float32)
    y = rng.integers(0, 10, size=batch)
    return _training_pair(lenet, x, y)


def matmul_pair(n):
    """``(a @ b).backward(g)`` for n x n float32 matrices on each side; and the forward's largest difference."""
    rng = np.random.default_rng(0)
    a, b, g = (rng.standard_normal((n, n)).astype(np.float32) for _ in range(3))
    ma, mb = (mg.tensor(v, device="cuda", requires_grad=True) for v in (a, b))
    mgrad = mg.tensor(g, device="cuda")
    ta, tb = (torch.from_numpy(v).cuda().requires_grad_() for v in (a, b))
    tgrad = torch.from_numpy(g).cuda()

    with mg.no_grad():
        forward_mg = (ma @ mb).cpu().numpy()
    with torch.no_grad():
        forward_torch = (ta @ tb).cpu().numpy()
    scale = float(np.abs(forward_torch).max())
    diff = float(np.abs(forward_mg - forward_torch).max()) / scale

    def step_mg():
        ma.grad = mb.grad = None
        (ma @ mb).backward(mgrad)

    def step_torch():
        ta.grad = tb.grad = None
        (ta @ tb).backward(tgrad)

    return _synced_mg(step_mg), _synced_torch(step_torch), diff


# -- DDP on the GPU: the rank program (under mpiexec) and the driver -------------------------------------

DDP_MODEL = ((1024, 4096, 4096, 1024), 256)  # layer sizes, batch per rank
CUDA_AWARE_FLAG = "MINIGRAD_CUDA_AWARE_MPI"


def ddp_role(quick):
    """One rank: time a DDP step and a local step on this rank's GPU; rank 0 returns the numbers."""
    import minigrad_dist as dist
    from minigrad_dist import mpi as dist_mpi

    dist.init_process_group()
    rank, world = dist.get_rank(), dist.get_world_size()
    comm = dist.get_default_group().comm
    mg.cuda.set_device(rank % mg.cuda.device_count())
    sizes, batch = DDP_MODEL
    mg.manual_seed(0)
    local = relu_mlp(mg.nn, sizes).to("cuda")
    mg.manual_seed(0)
    ddp = dist.DistributedDataParallel(relu_mlp(mg.nn, sizes).to("cuda"))
    rng = np.random.default_rng(rank)
    x = mg.tensor(rng.standard_normal((batch, sizes[0])).astype(np.float32), device="cuda")
    y = mg.tensor(rng.integers(0, sizes[-1], size=batch), device="cuda")

    def stepper(model):
        opt = mg.optim.SGD(model.parameters(), lr=1e-3)

        def step():
            opt.zero_grad()
            mg.nn.functional.cross_entropy(model(x), y).backward()
            opt.step()

        return _synced_mg(step)

    t_ddp, t_local = alternate(stepper(ddp), stepper(local), 3 if quick else 7, 5 if quick else 10,
                               before_each=comm.Barrier)
    mine = np.concatenate([p.detach().cpu().numpy().ravel() for p in ddp.module.parameters()])
    first = mine.copy()
    comm.Bcast(first, root=0)
    difference = comm.allreduce(float(np.abs(mine - first).max()), op=dist_mpi.load_mpi().MAX)
    if rank != 0:
        return None
    return {"cuda_aware": dist_mpi.cuda_aware(), "ranks": world, "devices": mg.cuda.device_count(),
            "ddp_ms": round(t_ddp * 1e3, 4), "local_ms": round(t_local * 1e3, 4),
            "ddp_over_local": round(t_ddp / t_local, 3), "gradient_mb": round(mine.nbytes / 2**20, 2),
            "max_parameter_difference_across_ranks": difference}


def ddp_comparison(ranks: int, quick: bool) -> dict:
    """Steps 1-2 of the module docstring: ``{"staged": run, "cuda_aware": run or {"skipped": why}}``."""
    extra = ["--quick"] if quick else []
    first = launch_ranks(Path(__file__), "ddp", ranks, 29650, extra)
    if first["ranks"] != ranks:
        sys.exit(f"bench_gpu: mpiexec -n {ranks} started {first['ranks']}-process worlds: the mpiexec found first "
                 "and the MPI library mpi4py loads come from different MPI installs (MPICH's mpiexec with Open MPI's "
                 "library, or the reverse); put the matching mpiexec first on PATH")
    if not first["cuda_aware"]:
        why = (f"{CUDA_AWARE_FLAG}={os.environ[CUDA_AWARE_FLAG]}" if CUDA_AWARE_FLAG in os.environ else
               "the MPI library reports no CUDA support")
        return {"staged": first, "cuda_aware": {"skipped": why}}
    saved = os.environ.get(CUDA_AWARE_FLAG)
    os.environ[CUDA_AWARE_FLAG] = "0"  # the ranks inherit the driver's environment
    try:
        staged = launch_ranks(Path(__file__), "ddp", ranks, 29651, extra)
    finally:
        if saved is None:
            del os.environ[CUDA_AWARE_FLAG]
        else:
            os.environ[CUDA_AWARE_FLAG] = saved
    return {"staged": staged, "cuda_aware": first,
            "cuda_aware_over_staged": round(first["ddp_ms"] / staged["ddp_ms"], 3)}


def print_ddp(ddp: dict) -> None:
    header = ("ddp ms", "local ms", "ddp/local", "max diff")
    print(f"{'DDP step, MLP 1024-4096-4096-1024':36s} " + " ".join(f"{h:>9s}" for h in header))
    for mode in ("staged", "cuda_aware"):
        run = ddp[mode]
        if "skipped" in run:
            print(f"{mode:36s} skipped: {run['skipped']}")
            continue
        print(f"{mode:36s} {run['ddp_ms']:9.3f} {run['local_ms']:9.3f} {run['ddp_over_local']:9.2f} "
              f"{run['max_parameter_difference_across_ranks']:9.2e}")


def main(argv=None) -> dict | None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer rounds (a smoke run)")
    parser.add_argument("--matmul-size", type=int, default=4096)
    parser.add_argument("--ddp", action="store_true", help="also DDP over MPI: staged vs CUDA-aware")
    parser.add_argument("--ranks", type=int, default=2, help="DDP processes (sharing the GPUs round-robin)")
    parser.add_argument("--role", choices=["ddp"], help=argparse.SUPPRESS)  # a rank the DDP driver started
    parser.add_argument("--part", help=argparse.SUPPRESS)
    parser.add_argument("--out", default=str(HERE / "results" / "gpu.json"))
    args = parser.parse_args(argv)

    if args.role:
        result = ddp_role(args.quick)
        if result is not None:
            Path(args.part).write_text(json.dumps(result))
        return None
    reason = gpu_unavailable_reason()
    if reason:
        print(f"bench_gpu: skipped, no usable GPU: {reason}")
        return None

    rounds = 3 if args.quick else 7
    results, checks = {}, {}
    work = (
        ("mlp_1024_adam_step", lambda: mlp_step_pair((1024, 1024, 1024, 10), 256), 20),
        ("mlp_4096_adam_step", lambda: mlp_step_pair((1024, 4096, 4096, 1024), 256), 10),
        ("lenet_batchnorm_adam_step", lambda: lenet_step_pair(256), 20),
        ("matmul_forward_backward", lambda: matmul_pair(args.matmul_size), 10),
    )
    for name, make, repeat in work:
        step_mg, step_torch, diff = make()
        t_mg, t_torch = alternate(step_mg, step_torch, rounds, repeat)
        results[name] = entry(t_mg * 1e3, t_torch * 1e3, "ms")
        checks[name] = diff
        if name == "matmul_forward_backward":
            flops = 3 * 2 * args.matmul_size**3
            results[name]["tflops"] = {"minigrad": round(flops / t_mg / 1e12, 2),
                                       "torch": round(flops / t_torch / 1e12, 2)}

    import cupy  # noqa: PLC0415  (present: cuda_is_available said so)

    report = {
        "benchmark": "gpu",
        "device": mg.cuda.get_device_name(),
        "python": sys.version.split()[0],
        "numpy": np.__version__,
        "cupy": cupy.__version__,
        "torch": torch.__version__,
        "torch_cuda": torch.version.cuda,
        "machine": platform.machine(),
        "torch_allow_tf32": torch.backends.cuda.matmul.allow_tf32,
        "cupy_tf32": os.environ.get("CUPY_TF32", "0"),
        "matmul_size": args.matmul_size,
        "results": results,
        # training steps: |first loss minigrad - PyTorch|; matmul: max |forward difference| / max |forward|
        "agreement": checks,
    }
    print(f"{report['device']}  cupy {report['cupy']}  torch {report['torch']}")
    print(f"{'benchmark':30s} {'minigrad':>10s} {'torch':>10s} {'ratio':>7s} {'agree':>9s}")
    for name, e in results.items():
        print(f"{name + ' (ms)':30s} {e['minigrad']:10.3f} {e['torch']:10.3f} {e['ratio']:7.2f} {checks[name]:9.2e}")
    if args.ddp:
        report["ddp"] = ddp_comparison(args.ranks, args.quick)
        print_ddp(report["ddp"])
    out = write_report(report, args.out)
    print(f"wrote {out}")
    return report


if __name__ == "__main__":
    main()
