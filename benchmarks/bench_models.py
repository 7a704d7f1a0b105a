"""Training steps of tutorial-sized models, minigrad vs PyTorch eager, in one run at equal thread counts.

Measures one training step (forward, backward, optimizer step) of:
  * LeNet-5 with BatchNorm on 28x28 images, batch 64 (Adam);
  * a 2-layer LSTM language model (vocabulary 64, embedding 32, hidden 128,
    35 steps, batch 20) with gradient clipping (SGD), as in word-level LM examples.

Both libraries start from the same weights (PyTorch's, copied). Sides alternate
in rounds and each reports its median (``timing.alternate``); the ratio
is minigrad / PyTorch.

Usage:
    python benchmarks/bench_models.py [--threads 1] [--quick] [--out benchmarks/results/models.json]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import torch
from threadpoolctl import threadpool_limits
from timing import alternate, entry, write_report

import minigrad as mg

HERE = Path(__file__).resolve().parent


def lenet(lib):
    """LeNet-5 with BatchNorm after each convolution, written once for either library."""
    nn = lib.nn
    return nn.Sequential(
        nn.Conv2d(1, 6, 5, padding=2), nn.BatchNorm2d(6), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(6, 16, 5), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(16 * 5 * 5, 120), nn.ReLU(), nn.Linear(120, 84), nn.ReLU(), nn.Linear(84, 10),
    )


class _LanguageModel:
    """Embedding -> 2-layer LSTM -> Linear, for either library."""

    def __init__(self, lib, vocab=64, embed=32, hidden=128):
        nn = lib.nn

        class LM(nn.Module):
            def __init__(self):
                super().__init__()
                self.embed = nn.Embedding(vocab, embed)
                self.lstm = nn.LSTM(embed, hidden, num_layers=2)
                self.head = nn.Linear(hidden, vocab)

            def forward(self, x):
                out, _ = self.lstm(self.embed(x))
                return self.head(out)

        self.module = LM()


def _copy_weights(torch_model, mg_model):
    state = {k: mg.tensor(v.detach().numpy().copy()) for k, v in torch_model.state_dict().items()}
    mg_model.load_state_dict(state)


def lenet_step_pair(batch=64):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((batch, 1, 28, 28)).astype(np.float32)
    y = rng.integers(0, 10, size=batch)
    tmodel, model = lenet(torch), lenet(mg)
    _copy_weights(tmodel, model)
    topt, opt = torch.optim.Adam(tmodel.parameters(), lr=1e-3), mg.optim.Adam(model.parameters(), lr=1e-3)
    tx, ty, mx, my = torch.from_numpy(x), torch.from_numpy(y), mg.tensor(x), mg.tensor(y)

    def step_mg():
        opt.zero_grad()
        mg.nn.functional.cross_entropy(model(mx), my).backward()
        opt.step()

    def step_torch():
        topt.zero_grad()
        torch.nn.functional.cross_entropy(tmodel(tx), ty).backward()
        topt.step()

    return step_mg, step_torch


def lstm_step_pair(steps=35, batch=20, vocab=64):
    rng = np.random.default_rng(1)
    x = rng.integers(0, vocab, size=(steps, batch))
    y = rng.integers(0, vocab, size=(steps, batch))
    tmodel, model = _LanguageModel(torch).module, _LanguageModel(mg).module
    _copy_weights(tmodel, model)
    topt, opt = torch.optim.SGD(tmodel.parameters(), lr=0.1), mg.optim.SGD(model.parameters(), lr=0.1)
    tx, ty, mx, my = torch.from_numpy(x), torch.from_numpy(y), mg.tensor(x), mg.tensor(y)

    def step_mg():
        opt.zero_grad()
        mg.nn.functional.cross_entropy(model(mx).reshape(-1, vocab), my.reshape(-1)).backward()
        mg.nn.utils.clip_grad_norm_(model.parameters(), 0.25)
        opt.step()

    def step_torch():
        topt.zero_grad()
        torch.nn.functional.cross_entropy(tmodel(tx).reshape(-1, vocab), ty.reshape(-1)).backward()
        torch.nn.utils.clip_grad_norm_(tmodel.parameters(), 0.25)
        topt.step()

    return step_mg, step_torch


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--threads", type=int, default=1, help="threads for both NumPy's BLAS and PyTorch")
    parser.add_argument("--quick", action="store_true", help="fewer rounds (a smoke run)")
    parser.add_argument("--out", default=str(HERE / "results" / "models.json"))
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    rounds = 3 if args.quick else 7
    results = {}
    with threadpool_limits(limits=args.threads):
        for name, make in (("lenet_batchnorm_step", lenet_step_pair), ("lstm_lm_step", lstm_step_pair)):
            step_mg, step_torch = make()
            t_mg, t_torch = alternate(step_mg, step_torch, rounds, 10)
            results[name] = entry(t_mg * 1e3, t_torch * 1e3, "ms")
    report = {"benchmark": "models", "threads": args.threads, "python": sys.version.split()[0],
              "numpy": np.__version__, "torch": torch.__version__, "results": results}
    print(f"{'benchmark':28s} {'minigrad':>10s} {'torch':>10s} {'ratio':>7s}")
    for name, e in results.items():
        print(f"{name + ' (ms)':28s} {e['minigrad']:10.3f} {e['torch']:10.3f} {e['ratio']:7.2f}")
    out = write_report(report, args.out)
    print(f"wrote {out}")
    return report


if __name__ == "__main__":
    main()
