"""Train a small GPT character by character, in data x pipeline x tensor parallel on one device mesh.

    mpiexec -n 8 python examples/gpt/train.py --dp 2 --pp 2 --tp 2
    mpiexec -n 4 python examples/gpt/train.py --dp 1 --pp 2 --tp 2
    python examples/gpt/train.py                        # one process: dp = pp = tp = 1

Every factorisation of the world trains the same model on the same global
batches, so it prints the same losses (within floating-point rounding; with
``--dtype float64`` to about 1e-12). Each step:

1. Every rank draws the step's global batch (``data.py``) and keeps its
   data-parallel replica's rows.
2. The pipeline schedule runs the microbatches through the stages; the
   tensor-parallel layers split every block; DDP averages the gradients over
   the replicas in each stage's last backward (``parallel.py``).
3. The tied embedding/head gradient is summed over the first and last stage.
4. Adam steps every rank's own shards.
5. The loss (the mean over the global batch) is gathered on rank 0, which
   prints it with the step's throughput in tokens per second.

After training, the model continues the prompt "The " (``--sample`` characters).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the ``gpt`` package (this folder) importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np

import minigrad as mg
import minigrad_dist as dist
from gpt.data import CharTokenizer, dp_slice, global_batch, load_corpus
from gpt.model import GPTConfig
from gpt.parallel import ParallelGPT, check_factorisation
from minigrad_dist.device_mesh import init_device_mesh

__all__ = ["main", "parse_args"]


def parse_args(argv=None) -> argparse.Namespace:
    """The command line (see ``--help``)."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dp", type=int, default=1, help="data-parallel replicas")
    parser.add_argument("--pp", type=int, default=1, help="pipeline stages")
    parser.add_argument("--tp", type=int, default=1, help="tensor-parallel ranks per layer")
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--batch-size", type=int, default=16, help="global batch (sequences per step)")
    parser.add_argument("--microbatches", type=int, default=2, help="pipeline microbatches per replica")
    parser.add_argument("--seq-len", type=int, default=32)
    parser.add_argument("--n-layer", type=int, default=2)
    parser.add_argument("--n-head", type=int, default=4)
    parser.add_argument("--n-embd", type=int, default=64)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--dtype", choices=["float32", "float64"], default="float32")
    parser.add_argument("--sample", type=int, default=120, help="characters to generate after training (0: none)")
    parser.add_argument("--quiet", action="store_true", help="print nothing (main returns the losses)")
    return parser.parse_args(argv)


def check_batch(args) -> None:
    """At least one step, and a global batch that cuts into ``dp`` replicas of ``microbatches`` equal microbatches."""
    for name in ("steps", "batch_size", "microbatches", "seq_len"):
        if getattr(args, name) < 1:
            raise ValueError(f"--{name.replace('_', '-')} must be at least 1, got {getattr(args, name)}")
    if args.batch_size % (args.dp * args.microbatches):
        raise ValueError(
            f"--batch-size {args.batch_size} must divide by dp*microbatches = {args.dp}*{args.microbatches}; "
            f"use a multiple of {args.dp * args.microbatches}"
        )


def mean_over_replicas(loss, model: ParallelGPT) -> float:
    """The global batch's mean loss on every rank: one all-reduce of the last stage's (tp rank 0's) values."""
    mine = loss if (model.is_last and model.tp_rank == 0) else 0.0
    total = np.array([mine], dtype=np.float64)
    dist.all_reduce(total)
    return float(total[0]) / model.mesh.size(0)


def main(argv=None) -> dict:
    """Train and return ``{"losses": [...], "tokens_per_s": ..., "mesh": (dp, pp, tp), "sample": text}`` (every rank).

    Raises:
        ValueError: the factorisation does not match the world size or the
            model, or the batch does not divide (every rank raises the same).
    """
    args = parse_args(argv)
    if not dist.is_initialized():
        dist.init_process_group(backend="mpi")
    text = load_corpus()
    tokenizer = CharTokenizer(text)
    ids = tokenizer.encode(text)
    config = GPTConfig(tokenizer.vocab_size, args.seq_len, args.n_layer, args.n_head, args.n_embd, args.dtype)
    check_factorisation(config, args.dp, args.pp, args.tp, dist.get_world_size())  # before any collective
    check_batch(args)
    mesh = init_device_mesh("cpu", (args.dp, args.pp, args.tp), mesh_dim_names=("dp", "pp", "tp"))
    model = ParallelGPT(config, mesh, args.seed, args.microbatches)
    optimizer = mg.optim.Adam(model.parameters(), lr=args.lr)
    say = print if dist.get_rank() == 0 and not args.quiet else _silent
    say(
        f"mesh dp={args.dp} pp={args.pp} tp={args.tp}; vocabulary {len(tokenizer.chars)} (padded to "
        f"{config.vocab_size}), {args.n_layer} layers, {args.n_head} heads, width {args.n_embd}, {args.dtype}"
    )
    losses, seconds = [], []
    for step in range(args.steps):
        x, y = global_batch(ids, step, args.batch_size, args.seq_len, args.seed)
        x, y = (mg.tensor(dp_slice(a, model.dp_rank, args.dp)) for a in (x, y))
        start = time.perf_counter()
        optimizer.zero_grad()
        loss = model.train_step(x, y)
        optimizer.step()
        losses.append(mean_over_replicas(loss, model))
        seconds.append(time.perf_counter() - start)
        say(f"step {step}: loss {losses[-1]:.4f}, {args.batch_size * args.seq_len / seconds[-1]:.0f} tokens/s")
    timed = seconds[1:] or seconds  # the first step also warms up the communicators
    tokens_per_s = args.batch_size * args.seq_len * len(timed) / sum(timed)
    say(f"loss {losses[0]:.4f} -> {losses[-1]:.4f} in {args.steps} steps; {tokens_per_s:.0f} tokens/s")
    sample = ""
    if args.sample:
        prompt = tokenizer.encode("The ")
        sample = tokenizer.decode(model.generate(prompt, args.sample, len(tokenizer.chars), seed=args.seed))
        say(f"sample: {sample!r}")
    model.close()
    for group in mesh.get_all_groups():
        dist.destroy_process_group(group)
    return {"losses": losses, "tokens_per_s": tokens_per_s, "mesh": (args.dp, args.pp, args.tp), "sample": sample}


def _silent(*_args, **_kwargs) -> None:
    """``print`` on ranks other than 0."""


if __name__ == "__main__":
    main()
