"""Samplers: the order in which a ``DataLoader`` visits a map-style dataset (``torch.utils.data.sampler``).

A sampler is an iterable of indices (``SequentialSampler``, ``RandomSampler``,
``SubsetRandomSampler``, ``WeightedRandomSampler``); ``BatchSampler`` groups
them into lists, one per batch. Random samplers draw from the ``generator``
they are given (a ``minigrad.Generator``) or, without one, from the global
generator seeded by ``mg.manual_seed``: the same seed gives the same order.
"""

from __future__ import annotations

import itertools
from typing import Generic, TypeVar

import numpy as np

from minigrad import backend
from minigrad.generator import Generator, numpy_rng
from minigrad.tensor import Tensor

T_co = TypeVar("T_co", covariant=True)

# RandomSampler with replacement draws indices in chunks of this many.
_REPLACEMENT_CHUNK = 32


class Sampler(Generic[T_co]):
    """Base class of samplers: subclass it and define ``__iter__`` (and ``__len__`` when known).

    Args:
        data_source: ignored (kept for PyTorch's signature).
    """

    def __init__(self, data_source=None):
        """Nothing to set up: subclasses keep what they need (PyTorch's base ignores data_source too)."""

    def __iter__(self):
        raise NotImplementedError(f"{type(self).__name__} must define __iter__ (subclasses of Sampler do)")


def _check_generator(generator, caller):
    if generator is not None and not isinstance(generator, Generator):
        raise TypeError(f"{caller}: generator must be a minigrad.Generator or None, got {type(generator).__name__}")


class SequentialSampler(Sampler[int]):
    """Indices 0, 1, ..., len(data_source) - 1 in order."""

    def __init__(self, data_source):
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self):
        return len(self.data_source)


class RandomSampler(Sampler[int]):
    """Indices in random order: a fresh permutation each pass, or draws with replacement.

    Args:
        data_source: a sized dataset.
        replacement: draw ``num_samples`` indices independently (with repeats).
        num_samples: how many indices per pass (default ``len(data_source)``);
            without replacement, more than the length chains several permutations.
        generator: a ``minigrad.Generator``; without one, every pass draws
            its own seed from the global generator (``mg.manual_seed``).

    Raises:
        TypeError: ``replacement`` is not a bool, or ``generator`` is not a Generator.
        ValueError: ``num_samples`` (or the data set's length) is not a positive int.
    """

    def __init__(self, data_source, replacement=False, num_samples=None, generator=None):
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(replacement, bool):
            raise TypeError(f"RandomSampler: replacement should be a boolean value, but got replacement={replacement}")
        n = self.num_samples
        if not isinstance(n, int) or n <= 0:
            raise ValueError(f"RandomSampler: num_samples should be a positive integer value, but got num_samples={n}")
        _check_generator(generator, "RandomSampler")

    @property
    def num_samples(self) -> int:
        """Indices per pass: the given ``num_samples``, else the data set's length."""
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self):
        n = len(self.data_source)
        if n == 0:
            raise RuntimeError("RandomSampler: cannot draw indices from an empty data source")
        if self.generator is None:
            # A private stream per pass: the global generator advances by one draw only.
            rng = np.random.default_rng(int(backend.generator("cpu").integers(2**63)))
        else:
            rng = numpy_rng(self.generator, "RandomSampler")
        if self.replacement:
            for _ in range(self.num_samples // _REPLACEMENT_CHUNK):
                yield from rng.integers(0, n, _REPLACEMENT_CHUNK).tolist()
            yield from rng.integers(0, n, self.num_samples % _REPLACEMENT_CHUNK).tolist()
        else:
            for _ in range(self.num_samples // n):
                yield from rng.permutation(n).tolist()
            yield from rng.permutation(n)[: self.num_samples % n].tolist()

    def __len__(self):
        return self.num_samples


class SubsetRandomSampler(Sampler[int]):
    """The given indices in a random order (a fresh permutation each pass).

    Args:
        indices: a sequence of indices.
        generator: a ``minigrad.Generator`` (default: the global generator).

    Raises:
        TypeError: ``generator`` is not a Generator.
    """

    def __init__(self, indices, generator=None):
        _check_generator(generator, "SubsetRandomSampler")
        self.indices = indices
        self.generator = generator

    def __iter__(self):
        for i in numpy_rng(self.generator, "SubsetRandomSampler").permutation(len(self.indices)).tolist():
            yield self.indices[i]

    def __len__(self):
        return len(self.indices)


class WeightedRandomSampler(Sampler[int]):
    """Indices 0..len(weights)-1 drawn with probability proportional to ``weights``.

    Args:
        weights: a 1-D sequence (or Tensor) of non-negative weights, not
            necessarily summing to one.
        num_samples: how many indices per pass.
        replacement: with replacement (default) an index may repeat; without,
            each draw excludes the indices already drawn.
        generator: a ``minigrad.Generator`` (default: the global generator).

    Raises:
        ValueError: ``num_samples`` is not a positive int, ``replacement`` is
            not a bool, or ``weights`` is not 1-D.
        TypeError: ``weights`` is None or a string, or ``generator`` is not a Generator.
        RuntimeError (when iterated): a weight is negative or not finite, the
            weights sum to zero, or ``num_samples`` exceeds the number of
            weights without replacement.

    Without replacement, once the non-zero weights are used up the draws
    continue with the zero-weight indices (as PyTorch's do).
    """

    def __init__(self, weights, num_samples, replacement=True, generator=None):
        if not isinstance(num_samples, int) or isinstance(num_samples, bool) or num_samples <= 0:
            raise ValueError(
                f"WeightedRandomSampler: num_samples should be a positive integer value, but got "
                f"num_samples={num_samples}"
            )
        if not isinstance(replacement, bool):
            raise ValueError(
                f"WeightedRandomSampler: replacement should be a boolean value, but got replacement={replacement}"
            )
        _check_generator(generator, "WeightedRandomSampler")
        if weights is None or isinstance(weights, (str, bytes)):
            raise TypeError(
                "WeightedRandomSampler: weights must be a 1-D sequence or Tensor of numbers, got "
                f"{type(weights).__name__}"
            )
        data = backend.to_numpy(weights.array) if isinstance(weights, Tensor) else weights
        weights = np.asarray(data, dtype=np.float64)
        if weights.ndim != 1:
            raise ValueError(
                f"WeightedRandomSampler: weights should be a 1d sequence but given weights have shape "
                f"{tuple(weights.shape)}"
            )
        self.weights = Tensor(weights)
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self):
        weights = self.weights.array
        if not np.all(np.isfinite(weights)) or np.any(weights < 0):
            raise RuntimeError("WeightedRandomSampler: invalid weights (each must be finite and >= 0)")
        total = weights.sum()
        if not total > 0:
            raise RuntimeError("WeightedRandomSampler: invalid weights (their sum must be > 0)")
        rng = numpy_rng(self.generator, "WeightedRandomSampler")
        if self.replacement:
            # Inverse CDF: a uniform draw lands in index i's slice of [0, total); empty slices never win.
            cdf = np.cumsum(weights)
            picks = np.searchsorted(cdf, rng.random(self.num_samples) * cdf[-1], side="right")
            # A draw that rounds up to the total belongs to the last index with a non-zero weight.
            picks = np.minimum(picks, np.flatnonzero(weights)[-1])
        else:
            if self.num_samples > len(weights):
                raise RuntimeError(
                    f"WeightedRandomSampler: cannot draw {self.num_samples} samples without replacement from "
                    f"{len(weights)} weights"
                )
            # Exponential keys divided by the weights, smallest first: the order of successive
            # draws without replacement, each proportional to the remaining weights. Zero weights
            # get infinite keys: drawn last, in index order, once the others are used up (as PyTorch).
            with np.errstate(divide="ignore"):
                keys = rng.standard_exponential(len(weights)) / weights
            picks = np.argsort(keys, kind="stable")[: self.num_samples]
        yield from picks.tolist()

    def __len__(self):
        return self.num_samples


class BatchSampler(Sampler[list]):
    """Groups the indices of ``sampler`` into lists of ``batch_size``.

    Args:
        sampler: any iterable of indices (a Sampler, a range, a list).
        batch_size: indices per batch.
        drop_last: drop the last batch when it is short.

    Raises:
        ValueError: ``batch_size`` is not a positive int or ``drop_last`` not a bool.
    """

    def __init__(self, sampler, batch_size, drop_last):
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
            raise ValueError(f"BatchSampler: batch_size should be a positive integer value, but got "
                             f"batch_size={batch_size}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"BatchSampler: drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self):
        indices = iter(self.sampler)
        if self.drop_last:
            # zip stops at the first short group, which is the one to drop.
            for batch in zip(*([indices] * self.batch_size)):
                yield list(batch)
        else:
            batch = list(itertools.islice(indices, self.batch_size))
            while batch:
                yield batch
                batch = list(itertools.islice(indices, self.batch_size))

    def __len__(self):
        if self.drop_last:
            return len(self.sampler) // self.batch_size
        return (len(self.sampler) + self.batch_size - 1) // self.batch_size
