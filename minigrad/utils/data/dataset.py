"""Datasets: what a ``DataLoader`` reads samples from (``torch.utils.data.dataset``).

Two kinds, as in PyTorch:

* map-style (``Dataset``): ``dataset[i]`` returns sample ``i`` and
  ``len(dataset)`` counts them; a sampler chooses the indices.
* iterable-style (``IterableDataset``): ``iter(dataset)`` yields the samples
  in the order the dataset decides (streams, generators).

Built from those: ``TensorDataset`` (rows of tensors), ``StackDataset``
(several datasets side by side), ``ConcatDataset`` and ``ChainDataset`` (one
after another), ``Subset`` and ``random_split`` (a selection of indices).
"""

from __future__ import annotations

import bisect
import itertools
import math
import numbers
import warnings
from abc import abstractmethod
from collections.abc import Iterable
from typing import Generic, TypeVar

import numpy as np

from minigrad import backend
from minigrad.generator import numpy_rng
from minigrad.tensor import Tensor

T_co = TypeVar("T_co", covariant=True)


class Dataset(Generic[T_co]):
    """A map from keys (usually ints 0..len-1) to samples: subclass it and define ``__getitem__``.

    Define ``__len__`` too for the default samplers and ``len(loader)``; define
    ``__getitems__(indices) -> list`` to fetch a whole batch at once. ``a + b``
    concatenates two datasets (``ConcatDataset``).
    """

    def __getitem__(self, index):
        raise NotImplementedError(f"{type(self).__name__} must define __getitem__ (subclasses of Dataset do)")

    def __add__(self, other):
        return ConcatDataset([self, other])


class IterableDataset(Dataset[T_co], Iterable):
    """A stream of samples: subclass it and define ``__iter__``.

    With ``num_workers > 0`` every worker thread iterates its own shallow copy
    of the dataset, so each sample appears once per worker unless ``__iter__``
    splits the work by ``get_worker_info()`` (as in PyTorch). ``a + b`` chains
    two streams (``ChainDataset``).

    ``__iter__`` is abstract: making an ``IterableDataset`` (or a subclass)
    that does not define it raises TypeError, as in PyTorch.
    """

    @abstractmethod
    def __iter__(self):
        raise NotImplementedError(f"{type(self).__name__} must define __iter__ (subclasses of IterableDataset do)")

    def __add__(self, other):
        return ChainDataset([self, other])


class TensorDataset(Dataset):
    """Rows of tensors: sample ``i`` is ``tuple(t[i] for t in tensors)``.

    Args:
        *tensors: Tensors with the same size of the first dimension.

    A ``DataLoader`` with the default collate function fetches a batch of a
    TensorDataset by indexing each tensor with all the batch's indices at
    once (the same values as stacking the rows one by one, much faster).

    Raises:
        TypeError: an argument is not a Tensor.
        IndexError: an argument is a 0-d Tensor (it has no first dimension).
        AssertionError: the first dimensions differ (PyTorch's type for this error).
    """

    def __init__(self, *tensors):
        for i, t in enumerate(tensors):
            if not isinstance(t, Tensor):
                raise TypeError(
                    f"TensorDataset: argument {i} must be a Tensor, got {type(t).__name__} "
                    f"(wrap arrays with mg.as_tensor)"
                )
            if t.ndim == 0:
                raise IndexError(f"TensorDataset: argument {i} is a 0-d Tensor; every tensor needs a first dimension")
        if any(t.shape[0] != tensors[0].shape[0] for t in tensors):
            raise AssertionError(
                f"TensorDataset: size mismatch between tensors, first dimensions {[t.shape[0] for t in tensors]}"
            )
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self):
        if not self.tensors:
            raise IndexError("TensorDataset holds no tensors, so it has no length")
        return self.tensors[0].shape[0]

    def _collated(self, indices):
        """``default_collate([self[i] for i in indices])`` by one fancy index per tensor.

        Returns None (the caller then takes the sample-by-sample path) when
        the indices are not a flat, non-empty sequence of integers or a
        tensor records gradients (so the batch keeps its autograd history).
        """
        idx = np.asarray(indices)
        if idx.ndim != 1 or idx.dtype.kind not in "iu" or idx.size == 0 or not self.tensors:
            return None
        batch = []
        for t in self.tensors:
            if t.requires_grad:
                return None
            data = t.array
            if type(data) is np.ndarray:
                batch.append(Tensor(data[idx]))
            else:
                batch.append(Tensor(data[backend.get_array_module(data).asarray(idx)]))
        return batch


class StackDataset(Dataset):
    """Several datasets of equal length side by side: sample ``i`` gathers sample ``i`` of each.

    ``StackDataset(a, b)[i] == (a[i], b[i])``; ``StackDataset(x=a, y=b)[i] == {"x": a[i], "y": b[i]}``.

    Raises:
        ValueError: no datasets, both positional and keyword datasets, or different lengths.
    """

    def __init__(self, *args, **kwargs):
        if args and kwargs:
            raise ValueError("StackDataset: give datasets either positionally (tuple samples) or by keyword "
                             "(dict samples), not both")
        if not args and not kwargs:
            raise ValueError("StackDataset: at least one dataset is needed")
        datasets = args or kwargs
        lengths = [len(d) for d in (args or kwargs.values())]
        if any(n != lengths[0] for n in lengths):
            raise ValueError(f"StackDataset: size mismatch between datasets, lengths {lengths}")
        self.datasets = datasets
        self._length = lengths[0]

    def __getitem__(self, index):
        if isinstance(self.datasets, dict):
            return {key: dataset[index] for key, dataset in self.datasets.items()}
        return tuple(dataset[index] for dataset in self.datasets)

    def __getitems__(self, indices):
        parts = self.datasets.items() if isinstance(self.datasets, dict) else enumerate(self.datasets)
        columns = {key: _fetch_many(dataset, indices, "StackDataset") for key, dataset in parts}
        if isinstance(self.datasets, dict):
            return [{key: column[j] for key, column in columns.items()} for j in range(len(indices))]
        return [tuple(column[j] for column in columns.values()) for j in range(len(indices))]

    def __len__(self):
        return self._length


def _fetch_many(dataset, indices, caller):
    """``[dataset[i] for i in indices]``, through ``dataset.__getitems__`` when it has one."""
    getitems = getattr(dataset, "__getitems__", None)
    if not callable(getitems):
        return [dataset[i] for i in indices]
    items = getitems(indices)
    if len(items) != len(indices):
        raise ValueError(f"{caller}: a nested dataset's __getitems__ returned {len(items)} samples "
                         f"for {len(indices)} indices")
    return items


class ConcatDataset(Dataset):
    """Map-style datasets one after another: indices run through the first, then the second, ...

    Args:
        datasets: an iterable of map-style datasets (with ``__len__``).

    Attributes:
        cumulative_sizes: running totals of the lengths (the last is ``len(self)``).

    Negative indices count from the end. Raises AssertionError (PyTorch's
    type) for no datasets or an ``IterableDataset`` among them, ValueError
    for a negative index beyond the length, IndexError past the end.
    """

    def __init__(self, datasets):
        self.datasets = list(datasets)
        if not self.datasets:
            raise AssertionError("ConcatDataset: datasets should not be an empty iterable")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise AssertionError("ConcatDataset does not support IterableDataset (use ChainDataset)")
        self.cumulative_sizes = list(itertools.accumulate(len(d) for d in self.datasets))

    @staticmethod
    def cumsum(sequence):
        """Running totals of the lengths of ``sequence``'s datasets."""
        return list(itertools.accumulate(len(d) for d in sequence))

    def __len__(self):
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx):
        if idx < 0:
            if -idx > len(self):
                raise ValueError(f"ConcatDataset: absolute value of index {idx} should not exceed the "
                                 f"dataset length {len(self)}")
            idx = len(self) + idx
        which = bisect.bisect_right(self.cumulative_sizes, idx)
        if which == len(self.datasets):
            raise IndexError(f"ConcatDataset: index {idx} is out of range for length {len(self)}")
        offset = self.cumulative_sizes[which - 1] if which else 0
        return self.datasets[which][idx - offset]


class ChainDataset(IterableDataset):
    """Iterable datasets one after another, chained as they are iterated.

    Raises:
        AssertionError: while iterating (or in ``len``), a member is not an ``IterableDataset``.
    """

    def __init__(self, datasets):
        self.datasets = datasets

    def __iter__(self):
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError(f"ChainDataset only supports IterableDataset, got {type(d).__name__}")
            yield from d

    def __len__(self):
        total = 0
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError(f"ChainDataset only supports IterableDataset, got {type(d).__name__}")
            total += len(d)
        return total


class Subset(Dataset):
    """The samples of ``dataset`` at ``indices``: ``Subset(d, idx)[i] == d[idx[i]]``.

    A subclass that overrides ``__getitem__`` must override ``__getitems__``
    too (the ``DataLoader`` fetches batches through it).

    Raises:
        NotImplementedError: a subclass overrides ``__getitem__`` but not ``__getitems__``.
    """

    def __init__(self, dataset, indices):
        self.dataset = dataset
        self.indices = indices
        cls = type(self)
        if cls.__getitem__ is not Subset.__getitem__ and cls.__getitems__ is Subset.__getitems__:
            raise NotImplementedError(
                f"{cls.__name__} overrides __getitem__ but not __getitems__; the DataLoader fetches batches "
                f"through __getitems__, so define it too, e.g. "
                f"def __getitems__(self, indices): return [self[i] for i in indices]"
            )

    def __getitem__(self, idx):
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __getitems__(self, indices):
        return _fetch_many(self.dataset, [self.indices[i] for i in indices], "Subset")

    def __len__(self):
        return len(self.indices)

    def _collated(self, indices):
        """The default-collated batch through the wrapped dataset's fast path, or None (see TensorDataset)."""
        inner = _collating_fetch(self.dataset)
        return None if inner is None else inner([self.indices[i] for i in indices])


def _collating_fetch(dataset):
    """A function ``indices -> default_collate(samples)`` (or None to decline), when the dataset has one.

    Only the exact classes qualify: a subclass may have changed what a sample is.
    """
    if type(dataset) is TensorDataset or type(dataset) is Subset:
        return dataset._collated
    return None


def random_split(dataset, lengths, generator=None):
    """Split ``dataset`` into non-overlapping ``Subset``\\ s of the given lengths, at random.

    Args:
        dataset: a sized dataset.
        lengths: the lengths of the parts (summing to ``len(dataset)``), or
            fractions summing to 1: each part gets ``floor(fraction * len)``
            and the remainder is dealt one by one to the parts from the first.
        generator: a ``minigrad.Generator`` for the permutation (default: the
            global generator, seeded by ``mg.manual_seed``).

    Returns:
        A list of ``Subset``, one per length, together a permutation of the indices.

    Warns when a fraction gives an empty part.

    Raises:
        ValueError: a fraction outside [0, 1], a negative length, or lengths
            that do not add up to ``len(dataset)``.
        TypeError: ``dataset`` has no length, a length is not a number (or is
            a non-integer while the lengths are not fractions summing to 1),
            or ``generator`` is not a minigrad ``Generator``.
    """
    try:
        total = len(dataset)
    except TypeError as error:
        raise TypeError(f"random_split: dataset must be a sized dataset ({error})") from error
    try:
        lengths = list(lengths)
    except TypeError as error:
        raise TypeError(f"random_split: lengths must be a sequence of ints or fractions ({error})") from error
    for i, n in enumerate(lengths):
        if not isinstance(n, numbers.Real) or isinstance(n, bool):
            raise TypeError(f"random_split: lengths must be ints or fractions, got {n!r:.40} at index {i}")
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        parts = []
        for i, fraction in enumerate(lengths):
            if not 0 <= fraction <= 1:
                raise ValueError(f"random_split: fraction at index {i} is {fraction}, not between 0 and 1")
            parts.append(math.floor(total * fraction))
        for i in range(total - sum(parts)):
            parts[i % len(parts)] += 1
        for i, n in enumerate(parts):
            if n == 0:
                warnings.warn(f"random_split: length of split at index {i} is 0; this split is an empty dataset",
                              stacklevel=2)
        lengths = parts
    if sum(lengths) != total:
        raise ValueError(f"random_split: sum of input lengths ({sum(lengths)}) does not equal the length of the "
                         f"input dataset ({total})")
    for i, n in enumerate(lengths):  # after the sum, as in PyTorch: [0.5, 0.6] is a ValueError, [2.5, 7.5] a TypeError
        if not isinstance(n, (int, np.integer)):
            raise TypeError(f"random_split: lengths must be non-negative ints (or fractions summing to 1), "
                            f"got {n!r} at index {i}")
        if n < 0:
            raise ValueError(f"random_split: lengths must be non-negative ints (or fractions summing to 1), "
                             f"got {n!r} at index {i}")
    order = numpy_rng(generator, "random_split").permutation(total).tolist()
    ends = itertools.accumulate(lengths)
    return [Subset(dataset, order[end - n : end]) for end, n in zip(ends, lengths)]
