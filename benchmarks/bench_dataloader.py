"""minigrad's DataLoader vs PyTorch's on the same data, in one run.

Data: scikit-learn's bundled digits (1797 samples of 64 float32 features,
int64 labels; no download). One measurement is a full epoch, batch size 64,
``num_workers=0``:

  * ``tensor_shuffle``: ``TensorDataset(x, y)``, ``shuffle=True`` (the
    acceptance case; minigrad fetches a TensorDataset batch with one fancy
    index per tensor instead of stacking samples one by one);
  * ``tensor_sequential``: the same without shuffling;
  * ``custom_dataset``: a ``Dataset`` subclass returning ``(row, int label)``
    per sample, so every batch goes through ``default_collate`` sample by
    sample (the general path).

The machine's speed swings over seconds, so the two libraries are measured
in alternating rounds and each side reports its median; the ratio is
minigrad / PyTorch (lower is better, 1.0 is parity). Each epoch is checked
to deliver every sample once (same sums on both sides).

Usage:
    python benchmarks/bench_dataloader.py [--threads 1] [--quick] [--out benchmarks/results/dataloader.json]
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
from pathlib import Path

import numpy as np
import torch
import torch.utils.data as tdata
from sklearn.datasets import load_digits
from threadpoolctl import threadpool_limits
from timing import alternate, entry, write_report

import minigrad as mg
import minigrad.utils.data as mdata

HERE = Path(__file__).resolve().parent
BATCH = 64


def epoch_fn(loader, expected_sum: float, expected_count: int):
    """One full pass over ``loader``; checks that every sample came once (by count and feature sum)."""

    def run():
        total, count = 0.0, 0
        for xb, yb in loader:
            count += len(yb)
            total += float(xb.sum())
        if count != expected_count or not np.isclose(total, expected_sum, rtol=1e-4):
            raise AssertionError(f"epoch delivered {count} samples with sum {total}, expected "
                                 f"{expected_count} and {expected_sum}")

    return run


class _RowsMinigrad(mdata.Dataset):
    """Per-sample dataset: (feature row Tensor, int label)."""

    def __init__(self, x, y):
        self.x, self.y = mg.tensor(x), y.tolist()

    def __len__(self):
        return len(self.y)

    def __getitem__(self, i):
        return self.x[i], self.y[i]


class _RowsTorch(tdata.Dataset):
    """The same dataset for PyTorch."""

    def __init__(self, x, y):
        self.x, self.y = torch.from_numpy(x), y.tolist()

    def __len__(self):
        return len(self.y)

    def __getitem__(self, i):
        return self.x[i], self.y[i]


def loaders(x: np.ndarray, y: np.ndarray) -> dict:
    """The benchmark cases: name -> (minigrad loader, PyTorch loader)."""
    mds = mdata.TensorDataset(mg.tensor(x), mg.tensor(y))
    tds = tdata.TensorDataset(torch.from_numpy(x), torch.from_numpy(y))
    return {
        "tensor_shuffle": (
            mdata.DataLoader(mds, batch_size=BATCH, shuffle=True, generator=mg.Generator().manual_seed(0)),
            tdata.DataLoader(tds, batch_size=BATCH, shuffle=True, generator=torch.Generator().manual_seed(0)),
        ),
        "tensor_sequential": (
            mdata.DataLoader(mds, batch_size=BATCH),
            tdata.DataLoader(tds, batch_size=BATCH),
        ),
        "custom_dataset": (
            mdata.DataLoader(_RowsMinigrad(x, y), batch_size=BATCH, shuffle=True),
            tdata.DataLoader(_RowsTorch(x, y), batch_size=BATCH, shuffle=True),
        ),
    }


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--threads", type=int, default=1, help="threads for both NumPy's BLAS and PyTorch")
    parser.add_argument("--quick", action="store_true", help="fewer rounds (a smoke run)")
    parser.add_argument("--out", default=str(HERE / "results" / "dataloader.json"))
    args = parser.parse_args(argv)

    torch.set_num_threads(args.threads)
    rounds, repeat = (3, 5) if args.quick else (9, 20)
    digits = load_digits()
    x = digits.data.astype(np.float32)
    y = digits.target.astype(np.int64)
    expected_sum = float(x.sum(dtype=np.float64))
    results = {}
    with threadpool_limits(limits=args.threads):
        for name, (mg_loader, torch_loader) in loaders(x, y).items():
            t_mg, t_torch = alternate(
                epoch_fn(mg_loader, expected_sum, len(y)), epoch_fn(torch_loader, expected_sum, len(y)), rounds, repeat
            )
            results[name] = entry(t_mg * 1e3, t_torch * 1e3, "ms per epoch")
    report = {
        "benchmark": "dataloader",
        "data": f"sklearn digits {x.shape[0]}x{x.shape[1]} float32, int64 labels",
        "batch_size": BATCH,
        "batches_per_epoch": -(-len(y) // BATCH),
        "num_workers": 0,
        "threads": args.threads,
        "rounds": rounds,
        "epochs_per_round": repeat,
        "python": sys.version.split()[0],
        "numpy": np.__version__,
        "torch": torch.__version__,
        "machine": platform.machine(),
        "cpu_count": os.cpu_count(),
        "results": results,
    }
    _print(report)
    out = write_report(report, args.out)
    print(f"wrote {out}")
    return report


def _print(report):
    print(f"{report['data']}, batch {report['batch_size']}, threads={report['threads']}, "
          f"numpy {report['numpy']}, torch {report['torch']}")
    print(f"{'epoch (ms)':24s} {'minigrad':>10s} {'torch':>10s} {'ratio':>7s}")
    for name, e in report["results"].items():
        print(f"{name:24s} {e['minigrad']:10.3f} {e['torch']:10.3f} {e['ratio']:7.3f}")


if __name__ == "__main__":
    main()
