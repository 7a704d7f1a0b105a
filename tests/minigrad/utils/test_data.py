"""``minigrad.utils.data`` against ``torch.utils.data``: datasets, samplers, collation, DataLoader, workers."""

from __future__ import annotations

import collections
import subprocess
import sys
import threading
import time
import warnings

import numpy as np
import pytest
import torch
import torch.utils.data as tdata
import torch.utils.data.distributed as tdist
from hypothesis import given, settings
from hypothesis import strategies as st

import minigrad as mg
import minigrad.utils.data as mdata
from minigrad.utils.data import distributed as mdist

FEW = settings(max_examples=15, deadline=None)

Point = collections.namedtuple("Point", ["x", "y"])


# -- helpers -------------------------------------------------------------------


def plain(obj):
    """A comparable form of a (nested) batch from either library: types, dtypes, shapes and values."""
    if isinstance(obj, mg.Tensor):
        return ("tensor", str(obj.dtype), obj.shape, obj.numpy().tolist())
    if isinstance(obj, torch.Tensor):
        array = obj.detach().numpy()
        return ("tensor", str(array.dtype), tuple(array.shape), array.tolist())
    if isinstance(obj, np.ndarray):
        return ("ndarray", str(obj.dtype), obj.shape, obj.tolist())
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):
        return (type(obj).__name__, [plain(v) for v in obj])
    if isinstance(obj, (list, tuple)):
        return (type(obj).__name__, [plain(v) for v in obj])
    if isinstance(obj, dict):
        return ("dict", {k: plain(v) for k, v in obj.items()})
    return (type(obj).__name__, obj)


def both_tensors(array: np.ndarray):
    """The same data as a minigrad and a PyTorch tensor."""
    return mg.tensor(array), torch.from_numpy(array.copy())


def tensor_datasets(n: int, seed: int = 0):
    """The same TensorDataset (float32 features of shape (2, 3), int64 labels) in both libraries."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, 2, 3)).astype(np.float32)
    y = rng.integers(0, 10, n).astype(np.int64)
    (mx, tx), (my, ty) = both_tensors(x), both_tensors(y)
    return mdata.TensorDataset(mx, my), tdata.TensorDataset(tx, ty)


def labels(loader) -> list:
    """The label batches of a TensorDataset loader as lists."""
    return [yb.tolist() for _, yb in loader]


def error_type(fn):
    try:
        fn()
    except Exception as error:  # noqa: BLE001  (the type is what is compared)
        return type(error)
    return None


def same_error(mg_fn, torch_fn):
    """Both raise, and with the same exception type."""
    expected = error_type(torch_fn)
    assert expected is not None, "the PyTorch side did not raise"
    assert error_type(mg_fn) is expected


class RangeStream(mdata.IterableDataset):
    """0..n-1 as a stream; with workers, each worker streams its own contiguous share."""

    def __init__(self, n, shard=False):
        self.n, self.shard = n, shard

    def __iter__(self):
        info = mdata.get_worker_info()
        if not self.shard or info is None:
            return iter(range(self.n))
        per = -(-self.n // info.num_workers)
        return iter(range(info.id * per, min(self.n, (info.id + 1) * per)))

    def __len__(self):
        return self.n


class TorchRangeStream(tdata.IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        return iter(range(self.n))

    def __len__(self):
        return self.n


# -- DataLoader: order, batching, lengths (vs PyTorch) -------------------------


@FEW
@given(n=st.integers(0, 40), batch_size=st.integers(1, 12), drop_last=st.booleans())
def test_sequential_batches_match_torch(n, batch_size, drop_last):
    mds, tds = tensor_datasets(n)
    ml = mdata.DataLoader(mds, batch_size=batch_size, drop_last=drop_last)
    tl = tdata.DataLoader(tds, batch_size=batch_size, drop_last=drop_last)
    assert len(ml) == len(tl)
    assert [plain(b) for b in ml] == [plain(b) for b in tl]


@FEW
@given(n=st.integers(1, 30), batch_size=st.integers(1, 8), drop_last=st.booleans())
def test_general_collate_path_matches_fast_path(n, batch_size, drop_last):
    """A TensorDataset batch by fancy indexing equals default_collate of the samples, for many dtypes."""
    rng = np.random.default_rng(n)
    tensors = [
        mg.tensor(rng.standard_normal((n, 3)).astype(np.float32)),
        mg.tensor(rng.standard_normal((n,))),
        mg.tensor(rng.integers(-5, 5, (n, 2, 2)).astype(np.int32)),
        mg.tensor(rng.random(n) > 0.5),
    ]
    ds = mdata.TensorDataset(*tensors)
    fast = mdata.DataLoader(ds, batch_size=batch_size, drop_last=drop_last)
    general = mdata.DataLoader(ds, batch_size=batch_size, drop_last=drop_last,
                               collate_fn=lambda batch: mdata.default_collate(batch))
    assert [plain(b) for b in fast] == [plain(b) for b in general]
    # A Subset of a TensorDataset takes the fast path too, with the Subset's indices.
    picks = rng.permutation(n)[: max(1, n // 2)].tolist()
    sub = mdata.Subset(ds, picks)
    assert [plain(b) for b in mdata.DataLoader(sub, batch_size=batch_size)] == [
        plain(mdata.default_collate([ds[i] for i in picks[k : k + batch_size]]))
        for k in range(0, len(picks), batch_size)
    ]


def test_fast_path_with_custom_batch_sampler_and_bad_indices():
    mds, tds = tensor_datasets(6)
    batches = [[5, -1, 0], [2, 2]]
    assert [plain(b) for b in mdata.DataLoader(mds, batch_sampler=batches)] == [
        plain(b) for b in tdata.DataLoader(tds, batch_sampler=batches)
    ]
    same_error(lambda: list(mdata.DataLoader(mds, batch_sampler=[[0, 6]])),
               lambda: list(tdata.DataLoader(tds, batch_sampler=[[0, 6]])))


def test_fast_path_respects_subclasses_and_other_datasets():
    class Shifted(mdata.TensorDataset):
        def __getitem__(self, index):
            (x,) = super().__getitem__(index)
            return (x + 100,)

    assert [b.tolist() for (b,) in mdata.DataLoader(Shifted(mg.arange(4)), batch_size=3)] == [[100, 101, 102], [103]]
    samples = [(np.float32(i), i) for i in range(5)]
    sub_m, sub_t = mdata.Subset(samples, [4, 1, 3]), tdata.Subset(samples, [4, 1, 3])
    assert [plain(b) for b in mdata.DataLoader(sub_m, batch_size=2)] == [
        plain(b) for b in tdata.DataLoader(sub_t, batch_size=2)]


def test_fast_path_keeps_autograd():
    w = mg.tensor(np.arange(8.0).reshape(4, 2), requires_grad=True)
    (xb,) = next(iter(mdata.DataLoader(mdata.TensorDataset(w), batch_sampler=[[0, 3, 3]])))
    assert xb.grad_fn is not None
    xb.sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), [[1, 1], [0, 0], [0, 0], [2, 2]])


@FEW
@given(n=st.integers(0, 12))
def test_batch_size_none_matches_torch(n):
    samples = [(np.full(2, i, dtype=np.float32), i, float(i)) for i in range(n)]
    ml = mdata.DataLoader(samples, batch_size=None)
    tl = tdata.DataLoader(samples, batch_size=None)
    assert len(ml) == len(tl) == n
    assert [plain(b) for b in ml] == [plain(b) for b in tl]


@FEW
@given(n=st.integers(0, 30), batch_size=st.one_of(st.none(), st.integers(1, 7)), drop_last=st.booleans())
def test_iterable_dataset_matches_torch(n, batch_size, drop_last):
    drop_last = drop_last and batch_size is not None
    ml = mdata.DataLoader(RangeStream(n), batch_size=batch_size, drop_last=drop_last)
    tl = tdata.DataLoader(TorchRangeStream(n), batch_size=batch_size, drop_last=drop_last)
    assert len(ml) == len(tl)
    assert [plain(b) for b in ml] == [plain(b) for b in tl]


def test_iterable_dataset_longer_than_reported_warns():
    class Liar(RangeStream):
        def __len__(self):
            return 2

    loader = mdata.DataLoader(Liar(4), batch_size=None)
    assert len(loader) == 2
    with pytest.warns(UserWarning, match="reported to be 2"):
        assert len(list(loader)) == 4


# -- shuffling -----------------------------------------------------------------


@FEW
@given(n=st.integers(1, 50), batch_size=st.integers(1, 9), seed=st.integers(0, 2**32))
def test_shuffle_is_a_seeded_permutation(n, batch_size, seed):
    mds, _ = tensor_datasets(n)
    loader = mdata.DataLoader(mds, batch_size=batch_size, shuffle=True, generator=mg.Generator().manual_seed(seed))
    first = labels(loader)
    order = [i for batch in mdata.DataLoader(mdata.TensorDataset(mg.arange(n)), batch_size=batch_size, shuffle=True,
                                             generator=mg.Generator().manual_seed(seed)) for i in batch[0].tolist()]
    assert sorted(order) == list(range(n))
    assert [len(b) for b in first] == [len(b) for b in labels(mdata.DataLoader(mds, batch_size=batch_size))]
    again = mdata.DataLoader(mds, batch_size=batch_size, shuffle=True, generator=mg.Generator().manual_seed(seed))
    assert labels(again) == first


def test_shuffle_changes_between_epochs_and_follows_manual_seed():
    ds = mdata.TensorDataset(mg.arange(30))
    loader = mdata.DataLoader(ds, batch_size=30, shuffle=True)
    mg.manual_seed(5)
    epochs = [next(iter(loader))[0].tolist() for _ in range(2)]
    assert epochs[0] != epochs[1]
    assert sorted(epochs[0]) == list(range(30))
    mg.manual_seed(5)
    assert [next(iter(loader))[0].tolist() for _ in range(2)] == epochs


def test_samplers_reject_foreign_generators():
    with pytest.raises(TypeError, match="generator"):
        mdata.RandomSampler(range(3), generator=np.random.default_rng(0))
    with pytest.raises(TypeError, match="generator"):
        mdata.DataLoader(range(3), shuffle=True, generator=torch.Generator())


# -- samplers ------------------------------------------------------------------


@FEW
@given(n=st.integers(1, 20), num_samples=st.integers(1, 70), replacement=st.booleans())
def test_random_sampler(n, num_samples, replacement):
    sampler = mdata.RandomSampler(range(n), replacement=replacement, num_samples=num_samples,
                                  generator=mg.Generator().manual_seed(1))
    drawn = list(sampler)
    assert len(sampler) == len(drawn) == num_samples == len(tdata.RandomSampler(range(n), replacement=replacement,
                                                                                  num_samples=num_samples))
    assert all(type(i) is int and 0 <= i < n for i in drawn)
    if not replacement:
        for start in range(0, num_samples, n):
            block = drawn[start : start + n]
            assert len(set(block)) == len(block)
    assert drawn == list(mdata.RandomSampler(range(n), replacement=replacement, num_samples=num_samples,
                                             generator=mg.Generator().manual_seed(1)))


@pytest.mark.parametrize("kwargs", [{"replacement": 1}, {"num_samples": 0}, {"num_samples": 2.0}])
def test_random_sampler_errors_match_torch(kwargs):
    same_error(lambda: mdata.RandomSampler(range(3), **kwargs), lambda: tdata.RandomSampler(range(3), **kwargs))
    same_error(lambda: mdata.RandomSampler([]), lambda: tdata.RandomSampler([]))


def test_subset_random_sampler():
    indices = [10, 4, 7, 7, 2]
    drawn = list(mdata.SubsetRandomSampler(indices, generator=mg.Generator().manual_seed(3)))
    assert sorted(drawn) == sorted(indices)
    assert len(mdata.SubsetRandomSampler(indices)) == 5


def test_weighted_random_sampler():
    g = mg.Generator().manual_seed(0)
    drawn = list(mdata.WeightedRandomSampler([0.0, 1.0, 0.0, 3.0], 4000, generator=g))
    assert set(drawn) == {1, 3}
    assert abs(drawn.count(3) / 4000 - 0.75) < 0.04
    unique = list(mdata.WeightedRandomSampler(mg.tensor([1.0, 0.0, 5.0, 2.0]), 3, replacement=False, generator=g))
    assert sorted(unique) == [0, 2, 3]
    # Without replacement, zero weights come last, once the others are used up (as PyTorch's).
    exhausted = list(mdata.WeightedRandomSampler([1.0, 0.0, 0.0], 2, replacement=False, generator=g))
    assert exhausted[0] == 0 and exhausted == list(tdata.WeightedRandomSampler([1.0, 0.0, 0.0], 2, replacement=False))
    assert len(mdata.WeightedRandomSampler([1, 2], 7)) == 7


@pytest.mark.parametrize(("weights", "num_samples", "kwargs"), [
    ([[1.0, 2.0]], 2, {}),
    ([1.0, 2.0], 0, {}),
    ([1.0, 2.0], True, {}),
    ([1.0, 2.0], 2, {"replacement": 0}),
])
def test_weighted_random_sampler_construction_errors_match_torch(weights, num_samples, kwargs):
    same_error(lambda: mdata.WeightedRandomSampler(weights, num_samples, **kwargs),
               lambda: tdata.WeightedRandomSampler(weights, num_samples, **kwargs))


@pytest.mark.parametrize(("weights", "num_samples", "replacement"), [
    ([1.0, -1.0], 2, True), ([0.0, 0.0], 2, True), ([1.0, 2.0], 3, False), ([1.0, float("nan")], 1, True),
])
def test_weighted_random_sampler_draw_errors_match_torch(weights, num_samples, replacement):
    same_error(lambda: list(mdata.WeightedRandomSampler(weights, num_samples, replacement)),
               lambda: list(tdata.WeightedRandomSampler(weights, num_samples, replacement)))


@FEW
@given(n=st.integers(0, 30), batch_size=st.integers(1, 8), drop_last=st.booleans())
def test_batch_sampler_matches_torch(n, batch_size, drop_last):
    mine = mdata.BatchSampler(mdata.SequentialSampler(range(n)), batch_size, drop_last)
    theirs = tdata.BatchSampler(tdata.SequentialSampler(range(n)), batch_size, drop_last)
    assert list(mine) == list(theirs)
    assert len(mine) == len(theirs)
    assert list(mdata.BatchSampler(range(n), batch_size, drop_last)) == list(theirs)


@pytest.mark.parametrize(("batch_size", "drop_last"), [(0, False), (2.0, False), (True, False), (2, 1)])
def test_batch_sampler_errors_match_torch(batch_size, drop_last):
    same_error(lambda: mdata.BatchSampler(range(4), batch_size, drop_last),
               lambda: tdata.BatchSampler(range(4), batch_size, drop_last))


def test_sampler_base_needs_iter():
    with pytest.raises(NotImplementedError):
        iter(mdata.Sampler())


# -- collation -----------------------------------------------------------------


def _samples(lib):
    """Batches of samples of many kinds, built the same way for minigrad ("mg") and PyTorch ("torch")."""
    as_tensor = (lambda a: mg.tensor(a)) if lib == "mg" else (lambda a: torch.from_numpy(a.copy()))
    f32, i32 = np.float32, np.int32
    return {
        "ints": [1, 2, 3],
        "floats": [1.5, 2.0],
        "int_then_float": [2, 1.5],
        "bools": [True, False],
        "strings": ["a", "bc"],
        "bytes": [b"a", b"b"],
        "numpy_scalars": [np.float32(1.5), np.float32(2.0)],
        "numpy_int_scalars": [np.int32(1), np.int32(4)],
        "numpy_bool_scalars": [np.bool_(True), np.bool_(False)],
        "numpy_arrays": [np.ones((2, 3), f32), np.zeros((2, 3), f32)],
        "numpy_int_arrays": [np.arange(3, dtype=i32), np.arange(3, dtype=i32)],
        "tensors_f64": [as_tensor(np.ones(2)), as_tensor(np.arange(2.0))],
        "tensors_0d": [as_tensor(np.array(3, np.int64)), as_tensor(np.array(4, np.int64))],
        "tuples": [(as_tensor(np.ones(2, f32)), 1, "a"), (as_tensor(np.zeros(2, f32)), 2, "b")],
        "lists": [[1, 2.5], [3, 4.5]],
        "dicts": [{"x": np.ones(2, f32), "y": 1, "z": {"w": 0.5}}, {"x": np.zeros(2, f32), "y": 2, "z": {"w": 1.5}}],
        "ordered_dicts": [collections.OrderedDict(a=1), collections.OrderedDict(a=2)],
        "namedtuples": [Point(1, 2.0), Point(3, 4.0)],
        "nested": [([1, (2.0, np.int32(3))], {"k": [True]}), ([4, (5.0, np.int32(6))], {"k": [False]})],
    }


@pytest.mark.parametrize("name", list(_samples("mg")))
def test_default_collate_matches_torch(name):
    assert plain(mdata.default_collate(_samples("mg")[name])) == plain(tdata.default_collate(_samples("torch")[name]))


@pytest.mark.parametrize("name", list(_samples("mg")))
def test_default_convert_matches_torch(name):
    mine = [mdata.default_convert(s) for s in _samples("mg")[name]]
    theirs = [tdata.default_convert(s) for s in _samples("torch")[name]]
    assert [plain(s) for s in mine] == [plain(s) for s in theirs]


@pytest.mark.parametrize("batch", [
    [],
    [None],
    [object()],
    [[1, 2], [3]],
    [np.array(["a"]), np.array(["b"])],
    [np.zeros(2), np.zeros(3)],
], ids=["empty", "none", "object", "ragged", "strings", "shapes"])
def test_default_collate_errors_match_torch(batch):
    same_error(lambda: mdata.default_collate(batch), lambda: tdata.default_collate(batch))


def test_default_collate_tensor_errors_match_torch():
    same_error(lambda: mdata.default_collate([mg.zeros(2), mg.zeros(3)]),
               lambda: tdata.default_collate([torch.zeros(2), torch.zeros(3)]))
    same_error(lambda: mdata.default_collate([mg.zeros(2, requires_grad=True), mg.zeros(3)]),
               lambda: tdata.default_collate([torch.zeros(2, requires_grad=True), torch.zeros(3)]))


def test_default_collate_records_autograd():
    a = mg.tensor([1.0, 2.0], requires_grad=True)
    b = mg.tensor([3.0, 4.0])
    batch = mdata.default_collate([a, b])
    (batch * mg.tensor([[1.0, 1.0], [2.0, 2.0]])).sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), [1.0, 1.0])


def test_collate_with_custom_map():
    def as_count(batch, *, collate_fn_map):
        return len(batch)

    custom = {**mdata.collate.default_collate_fn_map, str: as_count}
    assert mdata.collate.collate([("a", 1), ("b", 2)], collate_fn_map=custom)[0] == 2


# -- DataLoader options: PyTorch's errors ---------------------------------------


@pytest.mark.parametrize("kwargs", [
    {"sampler": [0, 1], "shuffle": True},
    {"batch_sampler": [[0]], "batch_size": 2},
    {"batch_sampler": [[0]], "shuffle": True},
    {"batch_sampler": [[0]], "sampler": [0]},
    {"batch_sampler": [[0]], "drop_last": True},
    {"batch_size": None, "drop_last": True},
    {"num_workers": -1},
    {"timeout": -1},
    {"prefetch_factor": 2},
    {"persistent_workers": True},
    {"multiprocessing_context": "spawn"},
    {"num_workers": 1, "multiprocessing_context": "no-such-method"},
    {"num_workers": 1, "multiprocessing_context": 3},
    {"batch_size": 0},
    {"batch_size": 2, "drop_last": "yes"},
])
def test_dataloader_option_errors_match_torch(kwargs):
    same_error(lambda: mdata.DataLoader(list(range(4)), **kwargs), lambda: tdata.DataLoader(list(range(4)), **kwargs))


@pytest.mark.parametrize("kwargs", [{"shuffle": True}, {"sampler": [0]}, {"batch_sampler": [[0]]}])
def test_iterable_dataset_option_errors_match_torch(kwargs):
    same_error(lambda: mdata.DataLoader(RangeStream(3), **kwargs),
               lambda: tdata.DataLoader(TorchRangeStream(3), **kwargs))


def test_dataloader_attributes_are_frozen_and_timeout_needs_workers():
    for name in ("batch_size", "sampler", "batch_sampler", "drop_last", "dataset", "persistent_workers"):
        same_error(lambda name=name: setattr(mdata.DataLoader(range(3)), name, None),
                   lambda name=name: setattr(tdata.DataLoader(range(3)), name, None))
    loader = mdata.DataLoader(range(3))
    loader.num_workers = 0  # not frozen, as in PyTorch
    same_error(lambda: list(mdata.DataLoader(range(3), timeout=1)), lambda: list(tdata.DataLoader(range(3), timeout=1)))


def test_dataloader_defaults_match_torch():
    ml, tl = mdata.DataLoader(range(5)), tdata.DataLoader(range(5))
    assert (ml.batch_size, ml.drop_last, ml.num_workers, ml.prefetch_factor) == (
        tl.batch_size, tl.drop_last, tl.num_workers, tl.prefetch_factor)
    assert type(ml.sampler).__name__ == type(tl.sampler).__name__ == "SequentialSampler"
    assert mdata.DataLoader(range(5), num_workers=2).prefetch_factor == 2
    assert type(mdata.DataLoader(range(5), shuffle=True).sampler) is mdata.RandomSampler
    assert mdata.DataLoader(range(5), batch_sampler=[[0]]).batch_size is None


def test_pin_memory_is_accepted_and_says_it_does_nothing():
    ds, _ = tensor_datasets(4)
    with pytest.warns(UserWarning, match="pin_memory"):
        batches = list(mdata.DataLoader(ds, batch_size=2, pin_memory=True))
    assert [plain(b) for b in batches] == [plain(b) for b in mdata.DataLoader(ds, batch_size=2)]


# -- datasets ------------------------------------------------------------------


def test_tensor_dataset_matches_torch():
    mds, tds = tensor_datasets(5)
    assert len(mds) == len(tds) == 5
    assert plain(mds[3]) == plain(tds[3])
    assert plain(mds[-1]) == plain(tds[-1])
    same_error(lambda: mdata.TensorDataset(mg.zeros(3), mg.zeros(4)),
               lambda: tdata.TensorDataset(torch.zeros(3), torch.zeros(4)))
    same_error(lambda: mdata.TensorDataset(np.zeros(3)), lambda: tdata.TensorDataset(np.zeros(3)))
    same_error(lambda: mdata.TensorDataset(mg.tensor(1.0)), lambda: tdata.TensorDataset(torch.tensor(1.0)))
    same_error(lambda: len(mdata.TensorDataset()), lambda: len(tdata.TensorDataset()))


@FEW
@given(lengths=st.lists(st.integers(0, 5), min_size=1, max_size=4), data=st.data())
def test_concat_dataset_matches_torch(lengths, data):
    parts = [list(range(100 * k, 100 * k + n)) for k, n in enumerate(lengths)]
    mine, theirs = mdata.ConcatDataset(parts), tdata.ConcatDataset(parts)
    assert len(mine) == len(theirs)
    assert mine.cumulative_sizes == theirs.cumulative_sizes
    total = len(theirs)
    for idx in range(-total, total):
        assert mine[idx] == theirs[idx]
    bad = data.draw(st.sampled_from([total, total + 3, -total - 1]))
    same_error(lambda: mine[bad], lambda: theirs[bad])


def test_concat_dataset_errors_match_torch():
    same_error(lambda: mdata.ConcatDataset([]), lambda: tdata.ConcatDataset([]))
    same_error(lambda: mdata.ConcatDataset([RangeStream(2)]), lambda: tdata.ConcatDataset([TorchRangeStream(2)]))


def test_dataset_addition_and_chain():
    a, b = mdata.TensorDataset(mg.arange(3)), mdata.TensorDataset(mg.arange(3, 5))
    both = a + b
    assert isinstance(both, mdata.ConcatDataset)
    assert [int(both[i][0]) for i in range(len(both))] == [0, 1, 2, 3, 4]
    chain = RangeStream(2) + RangeStream(3)
    assert isinstance(chain, mdata.ChainDataset)
    assert list(chain) == [0, 1, 0, 1, 2]
    assert len(chain) == 5
    with pytest.raises(AssertionError):
        list(mdata.ChainDataset([[1, 2]]))
    with pytest.raises(NotImplementedError):
        mdata.Dataset()[0]


def test_stack_dataset_matches_torch():
    mx, tx = both_tensors(np.arange(6.0).reshape(3, 2))
    for args in [(mdata.TensorDataset(mx), [10, 11, 12]), ()]:
        theirs_args = (tdata.TensorDataset(tx), [10, 11, 12]) if args else ()
        if not args:
            same_error(lambda: mdata.StackDataset(), lambda: tdata.StackDataset())
            continue
        mine, theirs = mdata.StackDataset(*args), tdata.StackDataset(*theirs_args)
        assert plain(mine[1]) == plain(theirs[1])
        assert [plain(s) for s in mine.__getitems__([2, 0])] == [plain(s) for s in theirs.__getitems__([2, 0])]
    mine = mdata.StackDataset(a=[1, 2], b=["x", "y"])
    assert mine[1] == {"a": 2, "b": "y"}
    assert plain(next(iter(mdata.DataLoader(mine, batch_size=2)))) == plain(
        next(iter(tdata.DataLoader(tdata.StackDataset(a=[1, 2], b=["x", "y"]), batch_size=2))))
    same_error(lambda: mdata.StackDataset([1], [1, 2]), lambda: tdata.StackDataset([1], [1, 2]))
    same_error(lambda: mdata.StackDataset([1], b=[1]), lambda: tdata.StackDataset([1], b=[1]))


def test_subset():
    mds, tds = tensor_datasets(6)
    mine, theirs = mdata.Subset(mds, [4, 0, 2]), tdata.Subset(tds, [4, 0, 2])
    assert len(mine) == 3
    assert plain(mine[0]) == plain(theirs[0])
    assert plain(mine[[1, 2]]) == plain(theirs[[1, 2]])
    assert [plain(s) for s in mine.__getitems__([2, 1])] == [plain(s) for s in theirs.__getitems__([2, 1])]

    class Broken(mdata.Subset):
        def __getitem__(self, idx):
            return 0

    with pytest.raises(NotImplementedError, match="__getitems__"):
        Broken(mds, [0])


@FEW
@given(lengths=st.lists(st.integers(0, 8), min_size=1, max_size=4), seed=st.integers(0, 1000))
def test_random_split_lengths_and_disjointness(lengths, seed):
    n = sum(lengths)
    parts = mdata.random_split(range(n), lengths, generator=mg.Generator().manual_seed(seed))
    assert [len(p) for p in parts] == lengths
    assert sorted(i for p in parts for i in p.indices) == list(range(n))
    again = mdata.random_split(range(n), lengths, generator=mg.Generator().manual_seed(seed))
    assert [p.indices for p in again] == [p.indices for p in parts]


@pytest.mark.parametrize(("n", "fractions"), [(10, [0.33, 0.33, 0.34]), (7, [0.5, 0.5]), (3, [1.0]), (5, [0.2, 0.8])])
def test_random_split_fraction_lengths_match_torch(n, fractions):
    mine = mdata.random_split(range(n), fractions)
    theirs = tdata.random_split(range(n), fractions)
    assert [len(p) for p in mine] == [len(p) for p in theirs]


def test_random_split_errors_and_warnings_match_torch():
    same_error(lambda: mdata.random_split(range(3), [1, 1]), lambda: tdata.random_split(range(3), [1, 1]))
    same_error(lambda: mdata.random_split(range(3), [1.5, -0.5]), lambda: tdata.random_split(range(3), [1.5, -0.5]))
    with pytest.warns(UserWarning, match="index 2"):
        parts = mdata.random_split(range(3), [0.5, 0.5, 0.0])
    assert [len(p) for p in parts] == [2, 1, 0]
    with pytest.raises(ValueError, match="non-negative"):
        mdata.random_split(range(2), [-1, 3])


def test_random_split_follows_manual_seed():
    mg.manual_seed(11)
    first = [p.indices for p in mdata.random_split(range(20), [5, 15])]
    mg.manual_seed(11)
    assert [p.indices for p in mdata.random_split(range(20), [5, 15])] == first


# -- Generator -----------------------------------------------------------------


def test_generator_seeds_like_torch():
    assert mg.Generator().initial_seed() == torch.Generator().initial_seed()
    g, tg = mg.Generator(), torch.Generator()
    assert g.manual_seed(7) is g
    for seed in (0, -5, -(2**63), 2**64 - 1):
        assert g.manual_seed(seed).initial_seed() == tg.manual_seed(seed).initial_seed()
    for seed in (True, 1.5, 2**64, -(2**63) - 1):
        same_error(lambda seed=seed: g.manual_seed(seed), lambda seed=seed: tg.manual_seed(seed))
    chosen = g.seed()
    assert g.initial_seed() == chosen and 0 <= chosen < 2**64


def test_generator_state_round_trip():
    g = mg.Generator().manual_seed(3)
    list(mdata.RandomSampler(range(10), generator=g))
    state = g.get_state()
    assert state.dtype == np.uint8
    expected = list(mdata.RandomSampler(range(10), generator=g))
    other = mg.Generator().set_state(state)
    assert other.initial_seed() == 3
    assert list(mdata.RandomSampler(range(10), generator=other)) == expected
    tg = torch.Generator()
    same_error(lambda: g.set_state([1, 2]), lambda: tg.set_state([1, 2]))
    same_error(lambda: g.set_state(mg.zeros(3)), lambda: tg.set_state(torch.zeros(3)))
    same_error(lambda: g.set_state(mg.zeros(3, dtype=np.uint8)),
               lambda: tg.set_state(torch.zeros(3, dtype=torch.uint8)))


# -- worker threads ------------------------------------------------------------


@pytest.mark.filterwarnings("ignore:DataLoader. 3 worker threads")
@pytest.mark.parametrize("num_workers", [1, 3])
def test_workers_give_the_same_batches_in_the_same_order(num_workers):
    mds, _ = tensor_datasets(37)
    loaders = [
        mdata.DataLoader(mds, batch_size=5, shuffle=True, num_workers=workers, generator=mg.Generator().manual_seed(4))
        for workers in (0, num_workers)
    ]
    expected, got = ([plain(b) for b in loader] for loader in loaders)
    assert got == expected
    assert [plain(b) for b in loaders[1]] == [plain(b) for b in loaders[0]]  # the second epoch too


def test_persistent_workers_keep_their_threads_and_order():
    ds = mdata.TensorDataset(mg.arange(23))

    def persistent_loader(workers, seen):
        return mdata.DataLoader(ds, batch_size=4, shuffle=True, num_workers=workers, persistent_workers=True,
                                worker_init_fn=seen.append, generator=mg.Generator().manual_seed(2))

    seen = []
    loader = persistent_loader(2, seen)
    reference = mdata.DataLoader(ds, batch_size=4, shuffle=True, generator=mg.Generator().manual_seed(2))
    first = iter(loader)
    # Abandon the first epoch after one batch: its prefetched batches must not leak into the next.
    assert plain(next(first)) == plain(next(iter(reference)))
    second = [b.tolist() for (b,) in loader]
    assert iter(loader) is first
    assert sorted(i for b in second for i in b) == list(range(23))
    assert [len(b) for b in second] == [4] * 5 + [3]
    assert sorted(seen) == [0, 1]  # worker_init_fn ran once per worker, not per epoch
    # The epochs draw the same shuffles whatever the number of workers.
    single = persistent_loader(1, [])
    next(iter(single))
    assert [b.tolist() for (b,) in single] == second


def test_iterable_dataset_with_sharding_workers():
    loader = mdata.DataLoader(RangeStream(10, shard=True), batch_size=2, num_workers=2)
    # Worker 0 streams 0..4 and worker 1 streams 5..9; batches alternate between them.
    assert [b.tolist() for b in loader] == [[0, 1], [5, 6], [2, 3], [7, 8], [4], [9]]
    unsharded = mdata.DataLoader(RangeStream(3), batch_size=None, num_workers=2)
    assert [int(b) for b in unsharded] == [0, 0, 1, 1, 2, 2]


@pytest.mark.filterwarnings("ignore:DataLoader. 3 worker threads")
def test_uneven_iterable_workers_drain_in_order():
    loader = mdata.DataLoader(RangeStream(5, shard=True), batch_size=1, num_workers=3)
    # Shares: worker 0 -> 0, 1; worker 1 -> 2, 3; worker 2 -> 4.
    assert [b.tolist() for b in loader] == [[0], [2], [4], [1], [3]]


def test_worker_info_and_init_fn():
    info_seen = {}

    class Probe(mdata.Dataset):
        def __len__(self):
            return 6

        def __getitem__(self, i):
            info = mdata.get_worker_info()
            copied = info.dataset is self and self is not probe  # each worker reads its own shallow copy
            info_seen[i] = (info.id, info.num_workers, copied, threading.current_thread().name)
            return i

    probe = Probe()
    assert mdata.get_worker_info() is None
    ids = []
    loader = mdata.DataLoader(probe, batch_size=2, num_workers=2, worker_init_fn=ids.append)
    assert [b.tolist() for b in loader] == [[0, 1], [2, 3], [4, 5]]
    assert sorted(ids) == [0, 1]
    assert {i: seen[0] for i, seen in info_seen.items()} == {0: 0, 1: 0, 2: 1, 3: 1, 4: 0, 5: 0}
    assert all(seen[1] == 2 and seen[2] and seen[3].startswith("DataLoader worker") for seen in info_seen.values())
    info = mdata.WorkerInfo(id=0, num_workers=1, seed=0, dataset=None)
    with pytest.raises(AttributeError, match="read-only"):
        info.id = 3


def test_worker_random_streams_are_seeded_per_worker():
    class Noise(mdata.Dataset):
        def __len__(self):
            return 4

        def __getitem__(self, i):
            return mg.rand(3)

    def run():
        loader = mdata.DataLoader(Noise(), batch_size=1, num_workers=2, generator=mg.Generator().manual_seed(9))
        return [b.numpy().tolist() for b in loader]

    first = run()
    assert run() == first
    assert first[0] != first[1]  # batches 0 and 1 come from different workers' streams


def test_worker_errors_reach_the_caller():
    class Failing(mdata.Dataset):
        def __len__(self):
            return 4

        def __getitem__(self, i):
            if i == 2:
                raise KeyError(f"sample {i} is missing")
            return i

    loader = mdata.DataLoader(Failing(), batch_size=1, num_workers=2)
    it = iter(loader)
    assert next(it).tolist() == [0]
    assert next(it).tolist() == [1]
    with pytest.raises(KeyError, match="sample 2") as caught:
        next(it)
    assert any("worker thread 0" in note for note in caught.value.__notes__)
    assert next(it).tolist() == [3]

    def bad_init(worker_id):
        raise ValueError(f"init failed in {worker_id}")

    with pytest.raises(ValueError, match="init failed"):
        list(mdata.DataLoader(range(4), num_workers=1, worker_init_fn=bad_init))


def test_worker_timeout():
    class Slow(mdata.Dataset):
        def __len__(self):
            return 2

        def __getitem__(self, i):
            time.sleep(0.5)
            return i

    with pytest.raises(RuntimeError, match="timed out"):
        list(mdata.DataLoader(Slow(), num_workers=1, timeout=0.05))


def test_worker_threads_end_with_the_epoch_or_the_iterator():
    before = set(threading.enumerate())
    mds, _ = tensor_datasets(12)
    assert len(list(mdata.DataLoader(mds, batch_size=2, num_workers=2))) == 6
    it = iter(mdata.DataLoader(mds, batch_size=2, num_workers=2))
    next(it)
    del it
    deadline = time.monotonic() + 5
    while set(threading.enumerate()) - before and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not set(threading.enumerate()) - before


# -- DistributedSampler --------------------------------------------------------


@FEW
@given(n=st.integers(0, 30), replicas=st.integers(1, 4), drop_last=st.booleans(), data=st.data())
def test_distributed_sampler_matches_torch_without_shuffle(n, replicas, drop_last, data):
    rank = data.draw(st.integers(0, replicas - 1))
    mine = mdist.DistributedSampler(range(n), num_replicas=replicas, rank=rank, shuffle=False, drop_last=drop_last)
    theirs = tdist.DistributedSampler(range(n), num_replicas=replicas, rank=rank, shuffle=False, drop_last=drop_last)
    assert list(mine) == list(theirs)
    assert len(mine) == len(theirs)
    assert (mine.num_samples, mine.total_size) == (theirs.num_samples, theirs.total_size)


def test_distributed_sampler_shuffles_per_epoch_and_feeds_a_loader():
    ds = mdata.TensorDataset(mg.arange(20))
    samplers = [mdata.DistributedSampler(ds, num_replicas=2, rank=r, seed=3) for r in range(2)]
    shards = [list(s) for s in samplers]
    assert sorted(shards[0] + shards[1]) == list(range(20))
    for s in samplers:
        s.set_epoch(1)
    assert samplers[0].epoch == 1
    assert [list(s) for s in samplers] != shards
    loader = mdata.DataLoader(ds, batch_size=4, sampler=samplers[0])
    assert [i for (b,) in loader for i in b.tolist()] == list(samplers[0])
    assert len(loader) == 3


def test_distributed_sampler_errors_match_torch():
    same_error(lambda: mdist.DistributedSampler(range(4)), lambda: tdist.DistributedSampler(range(4)))
    same_error(lambda: mdist.DistributedSampler(range(4), num_replicas=2, rank=2),
               lambda: tdist.DistributedSampler(range(4), num_replicas=2, rank=2))


def test_import_keeps_mpi_out_and_namespace_like_torch():
    code = "import sys, minigrad as mg; mg.utils.data.DataLoader; print('mpi4py' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
    for name in ("DataLoader", "Dataset", "IterableDataset", "TensorDataset", "ConcatDataset", "ChainDataset",
                 "StackDataset", "Subset", "random_split", "Sampler", "SequentialSampler", "RandomSampler",
                 "SubsetRandomSampler", "WeightedRandomSampler", "BatchSampler", "DistributedSampler",
                 "default_collate", "default_convert", "get_worker_info"):
        assert hasattr(mdata, name) and hasattr(tdata, name), name
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert isinstance(mdata.Dataset[int], object)  # subscriptable like PyTorch's generic classes
