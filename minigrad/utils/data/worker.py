"""Worker threads of a ``DataLoader`` with ``num_workers > 0``, and ``get_worker_info``.

PyTorch's workers are processes. minigrad's are threads, because a process
that has initialized MPI (``minigrad_dist``, mpi4py) must not fork: threads
share the dataset and need no pickling. They pay off when loading waits on
files, the network or NumPy code that releases the GIL; pure-Python sample
code runs no faster than with ``num_workers=0``.

Protocol (one task queue and one reply queue per worker, both FIFO):

1. The loader's iterator sends each batch's indices to the next active
   worker in turn, keeping ``prefetch_factor * num_workers`` batches in flight.
2. A worker fetches and collates each task in order and replies with the
   batch, the exception it raised, or (iterable datasets) "exhausted".
3. The iterator reads the replies in the order it sent the tasks, so the
   batches come out as with ``num_workers=0``. A worker that replied
   "exhausted" gets no more tasks and ignores those already queued.

Each worker has a shallow copy of the dataset (``get_worker_info().dataset``),
so a ``worker_init_fn`` may reconfigure its copy as with PyTorch's
per-process copies; arrays and other members stay shared. The worker seeds
minigrad's generators for its own thread with ``base_seed + worker_id``;
Python's ``random`` and NumPy's global state are process-wide and are not
reseeded.
"""

from __future__ import annotations

import queue
import threading

import numpy as np

from minigrad import backend

# Control messages on a worker's task queue.
_STOP = "stop"
_RESUME = "resume"

# Tags of a worker's replies.
DATA = 0
ERROR = 1
EXHAUSTED = 2
RESUMED = 3


class WorkerInfo:
    """What a worker thread is (read-only): returned by ``get_worker_info()`` inside a worker.

    Attributes:
        id: this worker's index in [0, num_workers).
        num_workers: how many workers the ``DataLoader`` runs.
        seed: the seed of minigrad's generators in this worker (``base_seed + id``).
        dataset: this worker's shallow copy of the dataset.
    """

    __slots__ = ("id", "num_workers", "seed", "dataset")

    def __init__(self, id, num_workers, seed, dataset):  # noqa: A002  (PyTorch's name)
        for name, value in (("id", id), ("num_workers", num_workers), ("seed", seed), ("dataset", dataset)):
            object.__setattr__(self, name, value)

    def __setattr__(self, name, value):
        raise AttributeError(f"WorkerInfo is read-only: cannot assign {name!r}")  # PyTorch's class (a frozen dataclass)

    def __repr__(self):
        return f"WorkerInfo(id={self.id}, num_workers={self.num_workers}, seed={self.seed}, dataset={self.dataset!r})"


_local = threading.local()


def get_worker_info():
    """The ``WorkerInfo`` of the calling ``DataLoader`` worker thread, or None outside workers.

    Call it in an ``IterableDataset.__iter__`` or a ``worker_init_fn`` to give
    each worker its own share of the data.
    """
    return getattr(_local, "info", None)


def _seed_this_thread(seed: int) -> None:
    """Give the calling thread its own CPU generator seeded with ``seed`` (other threads keep theirs).

    backend keeps one generator per device and thread; this replaces the
    calling thread's, marked current for the latest ``manual_seed``.
    """
    backend._random.generators = {"cpu": np.random.default_rng(seed)}
    backend._random.epoch = backend._seeding[1]


class WorkerThread(threading.Thread):
    """One loader worker: fetches and collates the tasks sent to it, in order.

    Args:
        worker_id: its index among the loader's workers.
        num_workers: how many workers the loader runs.
        dataset: this worker's copy of the dataset.
        make_fetcher: ``dataset -> fetcher`` (called at start and on each resume).
        seed: the seed for minigrad's generators in this thread.
        init_fn: the loader's ``worker_init_fn`` (called with ``worker_id``) or None.
        iterable: the dataset is iterable-style (StopIteration means exhausted).
    """

    def __init__(self, worker_id, num_workers, dataset, make_fetcher, seed, init_fn, iterable):
        super().__init__(name=f"DataLoader worker {worker_id}", daemon=True)
        self.worker_id = worker_id
        self.num_workers = num_workers
        self.dataset = dataset
        self.make_fetcher = make_fetcher
        self.seed = seed
        self.init_fn = init_fn
        self.iterable = iterable
        self.tasks = queue.SimpleQueue()
        self.replies = queue.SimpleQueue()
        self.stopping = threading.Event()

    def _failed(self, error: Exception):
        error.add_note(f"(raised in DataLoader worker thread {self.worker_id})")
        return error

    def _setup(self):
        """A fresh fetcher, or the exception that prevented it (replied to every task)."""
        try:
            return self.make_fetcher(self.dataset), None
        except Exception as error:
            return None, self._failed(error)

    def run(self):
        """Set up (worker info, seed, ``init_fn``, fetcher), then serve tasks until told to stop."""
        _local.info = WorkerInfo(self.worker_id, self.num_workers, self.seed, self.dataset)
        _seed_this_thread(self.seed)
        init_error = None
        if self.init_fn is not None:
            try:
                self.init_fn(self.worker_id)
            except Exception as error:
                init_error = self._failed(error)
        fetcher, setup_error = self._setup() if init_error is None else (None, init_error)
        exhausted = False
        while True:
            task = self.tasks.get()
            if task is _STOP or self.stopping.is_set():
                return
            if task is _RESUME:
                if init_error is None:
                    fetcher, setup_error = self._setup()
                exhausted = False
                self.replies.put((RESUMED, None))
                continue
            if exhausted:
                continue
            if setup_error is not None:
                self.replies.put((ERROR, setup_error))
                continue
            try:
                self.replies.put((DATA, fetcher.fetch(task)))
            except StopIteration as stop:
                if self.iterable:
                    exhausted = True
                    self.replies.put((EXHAUSTED, None))
                else:
                    self.replies.put((ERROR, self._failed(stop)))
            except Exception as error:
                self.replies.put((ERROR, self._failed(error)))
