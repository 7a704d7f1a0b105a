"""Datasets, samplers and the ``DataLoader`` (``torch.utils.data``'s names and behaviour).

::

    from minigrad.utils.data import DataLoader, TensorDataset, random_split

    train, val = random_split(TensorDataset(x, y), [0.8, 0.2], generator=mg.Generator().manual_seed(0))
    for xb, yb in DataLoader(train, batch_size=64, shuffle=True):
        ...

Layout: ``dataset`` (datasets, ``random_split``), ``sampler``, ``collate``
(``default_collate``, ``default_convert``), ``fetch`` (reading one batch),
``worker`` (worker threads, ``get_worker_info``), ``dataloader``,
``distributed`` (``DistributedSampler``, importing ``minigrad_dist`` lazily).
"""

from minigrad.utils.data.collate import default_collate, default_convert
from minigrad.utils.data.dataloader import DataLoader
from minigrad.utils.data.dataset import (
    ChainDataset,
    ConcatDataset,
    Dataset,
    IterableDataset,
    StackDataset,
    Subset,
    TensorDataset,
    random_split,
)
from minigrad.utils.data.distributed import DistributedSampler
from minigrad.utils.data.sampler import (
    BatchSampler,
    RandomSampler,
    Sampler,
    SequentialSampler,
    SubsetRandomSampler,
    WeightedRandomSampler,
)
from minigrad.utils.data.worker import WorkerInfo, get_worker_info

__all__ = [
    "BatchSampler", "ChainDataset", "ConcatDataset", "DataLoader", "Dataset", "DistributedSampler",
    "IterableDataset", "RandomSampler", "Sampler", "SequentialSampler", "StackDataset", "Subset",
    "SubsetRandomSampler", "TensorDataset", "WeightedRandomSampler", "WorkerInfo", "default_collate",
    "default_convert", "get_worker_info", "random_split",
]
