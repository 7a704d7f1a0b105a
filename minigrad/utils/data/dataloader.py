"""``DataLoader``: batches from a dataset, in sampler order (``torch.utils.data.DataLoader``).

::

    loader = DataLoader(TensorDataset(x, y), batch_size=64, shuffle=True, generator=g)
    for xb, yb in loader:          # one epoch; iterate again for the next
        ...

How a batch is made (the same with or without worker threads):

1. The index sampler yields what to fetch: a list of indices (a
   ``BatchSampler`` around ``sampler``, built from ``batch_size``,
   ``shuffle`` and ``drop_last``), or single indices with ``batch_size=None``.
2. A fetcher reads those samples from the dataset (``__getitems__`` when
   the dataset has it) and applies ``collate_fn`` (``default_collate``, or
   ``default_convert`` with ``batch_size=None``).
3. With ``num_workers > 0`` steps 2 run in worker threads (see ``worker``)
   and the batches still come out in sampler order.
"""

from __future__ import annotations

import copy
import functools
import itertools
import multiprocessing
import numbers
import os
import queue
import time
import warnings
from collections.abc import Iterable
from typing import Generic, TypeVar

from minigrad.generator import numpy_rng
from minigrad.utils.data import worker as _worker
from minigrad.utils.data.collate import default_collate, default_convert
from minigrad.utils.data.dataset import IterableDataset
from minigrad.utils.data.fetch import make_fetcher
from minigrad.utils.data.sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler

T_co = TypeVar("T_co", covariant=True)

# Seconds between liveness checks while waiting for a worker's reply.
_POLL_INTERVAL = 1.0
# Attributes that fix how batches are made; PyTorch forbids changing them after construction.
_FROZEN = ("batch_size", "batch_sampler", "sampler", "drop_last", "dataset", "persistent_workers")


class _InfiniteConstantSampler(Sampler):
    """Yields None forever: the index sampler of an iterable dataset (the dataset decides what comes next)."""

    def __iter__(self):
        return itertools.repeat(None)


class DataLoader(Generic[T_co]):
    """Iterate over a dataset in batches (PyTorch's arguments and rules).

    Args:
        dataset: a map-style ``Dataset`` (anything with ``__getitem__`` and
            ``__len__``) or an ``IterableDataset``.
        batch_size: samples per batch (default 1); None turns batching off:
            each sample passes through ``collate_fn`` (``default_convert``) alone.
        shuffle: reshuffle the indices every epoch (a ``RandomSampler``).
        sampler: the order of the indices (any iterable of indices with ``__len__``).
        batch_sampler: yields whole lists of indices; excludes ``batch_size``,
            ``shuffle``, ``sampler`` and ``drop_last``.
        num_workers: worker *threads* that fetch and collate ahead (0: in the
            calling thread). Batches come out in the same order as with 0.
        collate_fn: list of samples -> batch (default ``default_collate``).
        pin_memory: accepted for PyTorch's signature; minigrad has no pinned
            host memory, so it changes nothing (a warning says so).
        drop_last: drop the last batch when it is short.
        timeout: seconds to wait for a worker's batch before RuntimeError
            (0: wait as long as it takes); only with ``num_workers > 0``.
        worker_init_fn: called with the worker id in each worker thread
            before it loads anything.
        multiprocessing_context: validated as PyTorch does, then unused:
            workers are threads.
        generator: a ``minigrad.Generator`` for the shuffle and the workers'
            base seed (default: the global generator, ``mg.manual_seed``).
        prefetch_factor: batches in flight per worker (default 2 with workers).
        persistent_workers: keep the worker threads (and their dataset
            copies) from one epoch to the next.
        pin_memory_device: accepted and unused, like ``pin_memory``.
        in_order: accepted; batches always come out in sampler order, which
            ``in_order=False`` permits.

    ``len(loader)`` is the number of batches (for an ``IterableDataset``, an
    estimate from ``len(dataset)``).

    Raises:
        ValueError: conflicting or invalid options, with PyTorch's rules:
            ``sampler`` with ``shuffle``; ``batch_sampler`` with ``batch_size``,
            ``shuffle``, ``sampler`` or ``drop_last``; ``batch_size=None`` with
            ``drop_last``; ``shuffle``/``sampler``/``batch_sampler`` with an
            ``IterableDataset``; a negative ``num_workers`` or ``timeout``;
            ``prefetch_factor`` or ``persistent_workers`` without workers;
            setting ``batch_size``, ``sampler``, ... after construction.
        TypeError: ``num_workers`` is not an int; ``timeout`` is not a number;
            ``collate_fn`` or ``worker_init_fn`` is not callable; ``sampler`` or
            ``batch_sampler`` is not an iterable (or is a str); ``generator``
            is not a Generator; ``dataset`` has no ``__getitem__`` and is not an
            ``IterableDataset``, or has no length while the default sampler needs it.
        AssertionError: iterating with ``timeout > 0`` and ``num_workers=0``
            (PyTorch's type for this error).
    """

    _initialized = False

    def __init__(
        self,
        dataset,
        batch_size=1,
        shuffle=None,
        sampler=None,
        batch_sampler=None,
        num_workers=0,
        collate_fn=None,
        pin_memory=False,
        drop_last=False,
        timeout=0,
        worker_init_fn=None,
        multiprocessing_context=None,
        generator=None,
        *,
        prefetch_factor=None,
        persistent_workers=False,
        pin_memory_device="",
        in_order=True,
    ):
        if not isinstance(num_workers, int) or isinstance(num_workers, bool):
            raise TypeError(f"DataLoader: num_workers must be an int, got {type(num_workers).__name__}")
        if num_workers < 0:
            raise ValueError(f"DataLoader: num_workers option should be non-negative, got {num_workers}; "
                             f"use num_workers=0 to load in the calling thread")
        if not isinstance(timeout, numbers.Real):
            raise TypeError(f"DataLoader: timeout must be a number of seconds, got {type(timeout).__name__}")
        if timeout < 0:
            raise ValueError(f"DataLoader: timeout option should be non-negative, got {timeout}")
        for name, fn in (("collate_fn", collate_fn), ("worker_init_fn", worker_init_fn)):
            if fn is not None and not callable(fn):
                raise TypeError(f"DataLoader: {name} must be callable or None, got {type(fn).__name__}")
        for name, indices in (("sampler", sampler), ("batch_sampler", batch_sampler)):
            if indices is not None and (isinstance(indices, (str, bytes)) or not isinstance(indices, Iterable)):
                raise TypeError(f"DataLoader: {name} must be an iterable of indices (a Sampler), "
                                f"got {type(indices).__name__}")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("DataLoader: prefetch_factor option could only be specified with worker threads; "
                             "set num_workers > 0, or leave prefetch_factor=None")
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        elif prefetch_factor is not None and prefetch_factor < 1:
            raise ValueError(f"DataLoader: prefetch_factor must be >= 1 (batches in flight per worker), "
                             f"got {prefetch_factor}")
        if persistent_workers and num_workers == 0:
            raise ValueError("DataLoader: persistent_workers option needs num_workers > 0")
        if generator is not None:
            numpy_rng(generator, "DataLoader")  # TypeError now rather than at the first epoch

        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.in_order = in_order

        iterable = isinstance(dataset, IterableDataset)
        if not iterable and not hasattr(dataset, "__getitem__"):
            raise TypeError(f"DataLoader: dataset must be a map-style dataset (with __getitem__ and __len__) or an "
                            f"IterableDataset, got {type(dataset).__name__}")
        if iterable:
            if shuffle not in (False, None):
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified shuffle option, "
                                 f"but got shuffle={shuffle}")
            if sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified sampler option, "
                                 f"but got sampler={sampler}")
            if batch_sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified batch_sampler option, "
                                 f"but got batch_sampler={batch_sampler}")
        else:
            shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError("DataLoader: sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("DataLoader: batch_sampler option is mutually exclusive with batch_size, "
                                 "shuffle, sampler, and drop_last")
            batch_size = None
            drop_last = False
        elif batch_size is None and drop_last:
            raise ValueError("DataLoader: batch_size=None option disables auto-batching and is mutually "
                             "exclusive with drop_last")

        if sampler is None and batch_sampler is None and not iterable:
            try:  # the default samplers need it (PyTorch finds out at the first epoch)
                len(dataset)
            except TypeError as error:
                raise TypeError(f"DataLoader: the default sampler needs len(dataset) ({error}); give the dataset a "
                                "__len__ or pass a sampler") from error
        if sampler is None:
            if iterable:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        if collate_fn is None:
            collate_fn = default_collate if batch_sampler is not None else default_convert

        self._iterable = iterable
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers
        self._iterable_len = None  # len(dataset) once len(loader) was asked (PyTorch warns past it)
        self._iterator = None
        self._initialized = True
        self._check_worker_count()

    @property
    def multiprocessing_context(self):
        """The validated ``multiprocessing_context`` (unused: workers are threads)."""
        return self._multiprocessing_context

    @multiprocessing_context.setter
    def multiprocessing_context(self, context):
        if context is not None:
            if self.num_workers == 0:
                raise ValueError(f"DataLoader: multiprocessing_context can only be used with worker loading "
                                 f"(num_workers > 0), but got num_workers={self.num_workers}")
            if isinstance(context, str):
                methods = multiprocessing.get_all_start_methods()
                if context not in methods:
                    raise ValueError(f"DataLoader: multiprocessing_context option should specify a valid start "
                                     f"method in {methods!r}, but got multiprocessing_context={context!r}")
                context = multiprocessing.get_context(context)
            if not isinstance(context, multiprocessing.context.BaseContext):
                raise TypeError(f"DataLoader: multiprocessing_context option should be a valid context object or "
                                f"a string naming a start method, but got multiprocessing_context={context!r}")
        object.__setattr__(self, "_multiprocessing_context", context)

    def __setattr__(self, name, value):
        if self._initialized and name in _FROZEN:
            raise ValueError(f"DataLoader: {name} attribute should not be set after DataLoader is initialized")
        object.__setattr__(self, name, value)

    @property
    def _auto_collation(self) -> bool:
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        return self.batch_sampler if self.batch_sampler is not None else self.sampler

    def __iter__(self):
        if self.num_workers == 0:
            return _SingleThreadIterator(self)
        if not self.persistent_workers:
            return _WorkerThreadIterator(self)
        if self._iterator is None:
            self._iterator = _WorkerThreadIterator(self)
        else:
            self._iterator._reset(self)
        return self._iterator

    def __len__(self):
        if not self._iterable:
            return len(self._index_sampler)
        length = self._iterable_len = len(self.dataset)
        if self.batch_size is None:
            return length
        if self.drop_last:
            return length // self.batch_size
        return -(-length // self.batch_size)

    def _check_worker_count(self):
        if self.num_workers == 0:
            return
        cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
        if cpus is not None and self.num_workers > cpus:
            warnings.warn(f"DataLoader: {self.num_workers} worker threads on {cpus} CPUs; more workers than CPUs "
                          f"rarely load faster and use more memory", stacklevel=3)


class _BaseIterator:
    """What both iterators share: the index sampler's iterator, the base seed, the length warning."""

    def __init__(self, loader: DataLoader):
        self._dataset = loader.dataset
        self._auto_collation = loader._auto_collation
        self._collate_fn = loader.collate_fn
        self._drop_last = loader.drop_last
        self._index_sampler = loader._index_sampler
        self._iterable = loader._iterable
        self._sampler_iter = iter(self._index_sampler)
        # Drawn before the sampler's first draw, as PyTorch does, so workers or not the shuffle is the same.
        self._base_seed = int(numpy_rng(loader.generator, "DataLoader").integers(2**63))
        self._reported_len = loader._iterable_len
        self._num_yielded = 0
        if loader.pin_memory:
            warnings.warn("DataLoader: pin_memory=True has no effect in minigrad (there is no pinned host "
                          "memory); batches stay where the dataset put them", stacklevel=3)

    def __iter__(self):
        return self

    def __len__(self):
        return len(self._index_sampler)

    def _count(self, data):
        """Warn when the batches outnumber the length an IterableDataset reported (as PyTorch does)."""
        if self._reported_len is not None:
            self._num_yielded += 1
            if self._num_yielded > self._reported_len:
                warnings.warn(f"DataLoader: length of IterableDataset {self._dataset} was reported to be "
                              f"{self._reported_len} (when accessing len(dataloader)), but {self._num_yielded} "
                              f"samples have been fetched", stacklevel=3)
        return data


class _SingleThreadIterator(_BaseIterator):
    """Fetches each batch in the calling thread when asked for it."""

    def __init__(self, loader: DataLoader):
        super().__init__(loader)
        if loader.timeout != 0:
            raise AssertionError(f"DataLoader: timeout={loader.timeout} applies to worker threads only; "
                                 f"set num_workers > 0 or timeout=0")
        self._fetcher = make_fetcher(self._dataset, self._auto_collation, self._collate_fn, self._drop_last)

    def __next__(self):
        data = self._fetcher.fetch(next(self._sampler_iter))
        if self._reported_len is None:
            return data
        return self._count(data)


class _WorkerThreadIterator(_BaseIterator):
    """Sends batches' indices to worker threads round-robin and yields their replies in order."""

    def __init__(self, loader: DataLoader):
        super().__init__(loader)
        self._timeout = loader.timeout
        self._prefetch = loader.prefetch_factor * loader.num_workers
        self._persistent = loader.persistent_workers
        self._closed = False
        fetcher = functools.partial(
            make_fetcher, auto_collation=self._auto_collation, collate_fn=self._collate_fn, drop_last=self._drop_last
        )
        n = loader.num_workers
        self._workers = [
            _worker.WorkerThread(
                i, n, copy.copy(self._dataset), fetcher, self._base_seed + i, loader.worker_init_fn, self._iterable
            )
            for i in range(n)
        ]
        for w in self._workers:
            w.start()
        self._start_epoch()

    def _start_epoch(self):
        n = len(self._workers)
        self._active = [True] * n
        self._next_worker = itertools.cycle(range(n))
        self._task_worker = {}  # task number -> worker it went to
        self._sent = 0
        self._received = 0
        for _ in range(self._prefetch):
            self._send_task()

    def _reset(self, loader: DataLoader):
        """Start another epoch on the same (persistent) workers."""
        self._sampler_iter = iter(loader._index_sampler)
        self._reported_len = loader._iterable_len
        self._num_yielded = 0
        for w in self._workers:
            w.tasks.put(_worker._RESUME)
        for i in range(len(self._workers)):
            tag = None
            while tag != _worker.RESUMED:  # earlier replies answer the previous epoch's unread tasks
                tag, _ = self._receive(i)
        self._start_epoch()

    def _send_task(self):
        try:
            index = next(self._sampler_iter)
        except StopIteration:
            return
        for _ in range(len(self._workers)):
            worker = next(self._next_worker)
            if self._active[worker]:
                break
        else:
            return  # every worker's stream is exhausted
        self._workers[worker].tasks.put(index)
        self._task_worker[self._sent] = worker
        self._sent += 1

    def _receive(self, worker: int):
        thread = self._workers[worker]
        deadline = time.monotonic() + self._timeout if self._timeout > 0 else None
        while True:
            wait = _POLL_INTERVAL if deadline is None else max(0.0, min(_POLL_INTERVAL, deadline - time.monotonic()))
            try:
                return thread.replies.get(timeout=wait)
            except queue.Empty:
                if not thread.is_alive():
                    raise RuntimeError(f"DataLoader worker thread {worker} exited unexpectedly") from None
                if deadline is not None and time.monotonic() >= deadline:
                    raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds waiting for "
                                       f"worker thread {worker}") from None

    def __next__(self):
        while True:
            # Skip tasks queued to workers whose stream ended: they will not reply.
            while self._received < self._sent and not self._active[self._task_worker[self._received]]:
                del self._task_worker[self._received]
                self._received += 1
            if self._received == self._sent:
                if not self._persistent:
                    self._shutdown(join=True)
                raise StopIteration
            worker = self._task_worker.pop(self._received)
            self._received += 1
            tag, payload = self._receive(worker)
            if tag == _worker.EXHAUSTED:
                self._active[worker] = False
                self._send_task()
                continue
            self._send_task()
            if tag == _worker.ERROR:
                raise payload
            return self._count(payload)

    def _shutdown(self, join: bool):
        if self._closed:
            return
        self._closed = True
        for w in self._workers:
            w.stopping.set()
            w.tasks.put(_worker._STOP)
        if join:
            for w in self._workers:
                w.join(timeout=_POLL_INTERVAL)

    def __del__(self):
        if getattr(self, "_workers", None) is not None:
            self._shutdown(join=False)
