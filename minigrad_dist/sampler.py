"""``DistributedSampler``: each rank draws a disjoint slice of the data set's indices."""

from __future__ import annotations

import math

import numpy as np

from minigrad._checks import expect_at_least, expect_ints


def _dataset_length(dataset_or_length) -> int:
    if isinstance(dataset_or_length, int) and not isinstance(dataset_or_length, bool):
        return dataset_or_length
    if hasattr(dataset_or_length, "__len__"):
        return len(dataset_or_length)
    raise TypeError(f"DistributedSampler: dataset_or_length must be a sized data set or an int, "
                    f"got {type(dataset_or_length).__name__}")


def _check_split(length: int, num_replicas, rank, seed) -> None:
    expect_ints("DistributedSampler", num_replicas=num_replicas, rank=rank, seed=seed)
    expect_at_least("seed", seed, 0, "DistributedSampler")
    expect_at_least("the data set length", length, 0, "DistributedSampler")
    expect_at_least("num_replicas", num_replicas, 1, "DistributedSampler")
    if not 0 <= rank < num_replicas:
        raise ValueError(f"DistributedSampler: rank must be in [0, {num_replicas}), got {rank}")


class DistributedSampler:
    """Indices of a data set split across ranks, reshuffled each epoch (PyTorch's sampler).

    The index list is shuffled with a generator seeded by ``seed + epoch``
    (identical on every rank), padded by repeating indices (or trimmed with
    ``drop_last``) to a multiple of ``num_replicas``, and rank r takes every
    ``num_replicas``-th index starting at r.

    Args:
        dataset_or_length: a sized data set or its length.
        num_replicas: number of ranks (default: the world size).
        rank: this rank (default: ``get_rank()``).
        shuffle: reshuffle each epoch.
        seed: base seed; must be the same on every rank.
        drop_last: drop the tail instead of padding.

    Call ``set_epoch(epoch)`` at the start of each epoch, or every epoch
    yields the same order.

    Raises:
        TypeError: the data set has no length, or ``num_replicas``, ``rank``
            or ``seed`` is not an int.
        ValueError: rank out of range, a negative length or seed.
    """

    def __init__(self, dataset_or_length, num_replicas=None, rank=None, shuffle=True, seed=0, drop_last=False):
        from minigrad_dist import collectives  # noqa: PLC0415  (only when ranks are not given)

        if num_replicas is None:
            num_replicas = collectives.get_world_size()
        if rank is None:
            rank = collectives.get_rank()
        length = _dataset_length(dataset_or_length)
        _check_split(length, num_replicas, rank, seed)
        self.length = length
        self.num_replicas = num_replicas
        self.rank = rank
        self.shuffle = shuffle
        self.seed = seed
        self.drop_last = drop_last
        self.epoch = 0
        if drop_last and length % num_replicas:
            self.num_samples = length // num_replicas
        else:
            self.num_samples = math.ceil(length / num_replicas)
        self.total_size = self.num_samples * num_replicas

    def set_epoch(self, epoch: int) -> None:
        """Use the shuffle of ``epoch`` (the same on every rank)."""
        self.epoch = int(epoch)

    def indices(self) -> np.ndarray:
        """This rank's indices for the current epoch (int64 array)."""
        if self.shuffle:
            order = np.random.default_rng(self.seed + self.epoch).permutation(self.length)
        else:
            order = np.arange(self.length)
        if self.drop_last:
            order = order[: self.total_size]
        elif self.total_size > len(order) and len(order) > 0:
            repeats = math.ceil((self.total_size - len(order)) / len(order))
            order = np.concatenate([order] + [order] * repeats)[: self.total_size]
        return order[self.rank : self.total_size : self.num_replicas].astype(np.int64)

    def __iter__(self):
        return iter(self.indices().tolist())

    def __len__(self):
        return self.num_samples
