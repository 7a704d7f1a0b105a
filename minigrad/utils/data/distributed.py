"""``DistributedSampler`` for a ``DataLoader``: each rank loads its own shard (``torch.utils.data.distributed``).

The sharding is ``minigrad_dist.DistributedSampler``'s (shuffle with
``seed + epoch``, pad or trim to a multiple of the ranks, rank r takes every
``num_replicas``-th index from r). This module imports ``minigrad_dist``
only when a sampler is built, so ``import minigrad.utils.data`` never
touches MPI.
"""

from __future__ import annotations

from minigrad.utils.data.sampler import Sampler


def _shard_attribute(name: str, doc: str) -> property:
    """A read-only property reading ``name`` from the wrapped ``minigrad_dist`` sampler."""

    def read(self):
        return getattr(self._shard, name)

    return property(read, doc=doc)


class DistributedSampler(Sampler[int]):
    """The indices of ``dataset`` that this rank loads, reshuffled each epoch (PyTorch's signature).

    Args:
        dataset: a sized dataset.
        num_replicas: number of ranks (default: the process group's world size).
        rank: this rank (default: the process group's rank).
        shuffle: shuffle the indices, with ``seed + epoch`` (the same on every rank).
        seed: base seed, the same on every rank.
        drop_last: drop the tail so every rank gets the same count, instead
            of padding with repeated indices.

    Call ``set_epoch(epoch)`` before each epoch, or every epoch repeats the
    first one's order::

        sampler = DistributedSampler(data)
        loader = DataLoader(data, batch_size=32, sampler=sampler)
        for epoch in range(epochs):
            sampler.set_epoch(epoch)
            for xb, yb in loader: ...

    Raises:
        ValueError: ``num_replicas`` or ``rank`` is left out before
            ``minigrad_dist.init_process_group``; ``rank`` outside
            [0, num_replicas); a negative seed.
        TypeError: the dataset has no length, or ``num_replicas``, ``rank``
            or ``seed`` is not an int.
    """

    def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True, seed=0, drop_last=False):
        from minigrad_dist import collectives, sampler  # noqa: PLC0415  (MPI stays out of plain imports)

        if (num_replicas is None or rank is None) and not collectives.is_initialized():
            raise ValueError(
                "DistributedSampler: num_replicas and rank default to the process group's; call "
                "minigrad_dist.init_process_group(backend='mpi') first, or pass num_replicas= and rank="
            )
        self.dataset = dataset
        self._shard = sampler.DistributedSampler(
            dataset, num_replicas=num_replicas, rank=rank, shuffle=shuffle, seed=seed, drop_last=drop_last
        )

    num_replicas = _shard_attribute("num_replicas", "Number of ranks sharing the dataset.")
    rank = _shard_attribute("rank", "This rank.")
    shuffle = _shard_attribute("shuffle", "Whether each epoch shuffles the indices.")
    seed = _shard_attribute("seed", "Base seed of the shuffle.")
    drop_last = _shard_attribute("drop_last", "Whether the tail is dropped instead of padded.")
    num_samples = _shard_attribute("num_samples", "Indices per rank per epoch.")
    total_size = _shard_attribute("total_size", "Indices over all ranks per epoch.")
    epoch = _shard_attribute("epoch", "The epoch whose shuffle ``__iter__`` gives.")

    def set_epoch(self, epoch: int) -> None:
        """Use the shuffle of ``epoch`` (call it with the same value on every rank)."""
        self._shard.set_epoch(epoch)

    def __iter__(self):
        return iter(self._shard)

    def __len__(self):
        return len(self._shard)
