"""Fetchers: read one batch (or one sample) from a dataset and collate it.

A ``DataLoader`` iterator, or each of its worker threads, owns one fetcher.
``fetch(index)`` takes what the index sampler yielded: a list of indices
when batching is on (``auto_collation``), a single index otherwise; for an
iterable dataset the index only says how many samples to take.
"""

from __future__ import annotations

from minigrad.utils.data.collate import default_collate
from minigrad.utils.data.dataset import IterableDataset, _collating_fetch


class MapFetcher:
    """Fetches from a map-style dataset: ``collate_fn([dataset[i] for i in index])``.

    The batch comes from ``dataset.__getitems__(index)`` when the dataset
    defines it. With the default collate function and a ``TensorDataset``
    (or a ``Subset`` of one), the whole batch is one fancy index per tensor:
    the same tensors ``default_collate`` would stack, without building the
    samples one by one.
    """

    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.dataset = dataset
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn
        self.collated = _collating_fetch(dataset) if auto_collation and collate_fn is default_collate else None
        getitems = getattr(dataset, "__getitems__", None)
        self.getitems = getitems if callable(getitems) else None

    def fetch(self, index):
        """The collated batch for the indices ``index`` (or the converted sample at ``index``)."""
        if not self.auto_collation:
            return self.collate_fn(self.dataset[index])
        if self.collated is not None:
            batch = self.collated(index)
            if batch is not None:
                return batch
        if self.getitems is not None:
            return self.collate_fn(self.getitems(index))
        dataset = self.dataset
        return self.collate_fn([dataset[i] for i in index])


class IterableFetcher:
    """Fetches from an iterable dataset: the next ``len(index)`` samples, collated.

    Raises StopIteration when the stream is exhausted, or when only a short
    batch is left and ``drop_last`` is set.
    """

    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.dataset_iter = iter(dataset)
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn
        self.drop_last = drop_last
        self.ended = False

    def fetch(self, index):
        """The next batch of ``len(index)`` samples (or the next sample), collated."""
        if self.ended:
            raise StopIteration
        if not self.auto_collation:
            return self.collate_fn(next(self.dataset_iter))
        data = []
        for _ in index:
            try:
                data.append(next(self.dataset_iter))
            except StopIteration:
                self.ended = True
                break
        if not data or (self.drop_last and len(data) < len(index)):
            raise StopIteration
        return self.collate_fn(data)


def make_fetcher(dataset, auto_collation, collate_fn, drop_last):
    """The fetcher for ``dataset``'s kind (iterable or map-style)."""
    kind = IterableFetcher if isinstance(dataset, IterableDataset) else MapFetcher
    return kind(dataset, auto_collation, collate_fn, drop_last)
