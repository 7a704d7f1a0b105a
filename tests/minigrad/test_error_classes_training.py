# ruff: noqa: N803  (every case takes the library module as `L`: `L=torch` or `L=minigrad`)
"""The exception classes of the training utilities match PyTorch's for the same bad input.

Optimizers, LR schedulers, ``utils.data``, distributions, serialization and
settings: each case runs the same bad call with ``L=torch`` and ``L=minigrad``
and compares the nearest builtin class of the two errors, so a ported
``except RuntimeError:`` (or ``KeyError``, ``TypeError``...) catches ours.
"""

from __future__ import annotations

import io
import zipfile

import pytest
import torch

import minigrad
from tests.error_classes import assert_same_class_as_torch


def _param(L):
    return L.nn.Parameter(L.ones(2))


def _sgd(L, groups=1):
    return L.optim.SGD([{"params": [_param(L)]} for _ in range(groups)], lr=0.1, momentum=0.9)


def _sched(L):
    return L.optim.lr_scheduler


def _data(L):
    return L.utils.data


def _dist(L):
    return L.distributions


# -- optimizers ------------------------------------------------------------------


def _load_other_layout(L, groups_saved, groups_loaded):
    saved = _sgd(L, groups_saved).state_dict()
    _sgd(L, groups_loaded).load_state_dict(saved)


def _load_fewer_params(L):
    saved = L.optim.SGD([_param(L), _param(L)], lr=0.1).state_dict()
    L.optim.SGD([_param(L)], lr=0.1).load_state_dict(saved)


def _lbfgs_step_with_two_groups(L):
    optimizer = L.optim.LBFGS([_param(L)])
    optimizer.add_param_group({"params": [_param(L)]})
    optimizer.step(lambda: 1.0)


def _same_param_in_two_groups(L):
    p = _param(L)
    L.optim.SGD([{"params": [p]}, {"params": [p]}], lr=0.1)


def _add_overlapping_group(L):
    p = _param(L)
    L.optim.SGD([p], lr=0.1).add_param_group({"params": [p]})


OPTIM_CASES = [
    ("sgd negative lr", lambda L: L.optim.SGD([_param(L)], lr=-1.0)),
    ("sgd lr not a number", lambda L: L.optim.SGD([_param(L)], lr="fast")),
    ("sgd negative momentum", lambda L: L.optim.SGD([_param(L)], lr=0.1, momentum=-0.5)),
    ("sgd negative weight_decay", lambda L: L.optim.SGD([_param(L)], lr=0.1, weight_decay=-1.0)),
    ("sgd nesterov without momentum", lambda L: L.optim.SGD([_param(L)], lr=0.1, nesterov=True)),
    ("sgd empty parameter list", lambda L: L.optim.SGD([], lr=0.1)),
    ("sgd a single tensor", lambda L: L.optim.SGD(_param(L), lr=0.1)),
    ("sgd a non-tensor", lambda L: L.optim.SGD([1.0], lr=0.1)),
    ("sgd a non-leaf", lambda L: L.optim.SGD([_param(L) * 2], lr=0.1)),
    ("sgd a param in two groups", _same_param_in_two_groups),
    ("add_param_group overlapping", _add_overlapping_group),
    ("add_param_group not a dict", lambda L: L.optim.SGD([_param(L)], lr=0.1).add_param_group([_param(L)])),
    ("a group without params", lambda L: L.optim.SGD([{"lr": 0.1}], lr=0.1)),
    ("adam beta1 = 1", lambda L: L.optim.Adam([_param(L)], betas=(1.0, 0.999))),
    ("adam betas a float", lambda L: L.optim.Adam([_param(L)], betas=0.9)),
    ("adam betas None", lambda L: L.optim.Adam([_param(L)], betas=None)),
    ("adam negative eps", lambda L: L.optim.Adam([_param(L)], eps=-1e-8)),
    ("adamw negative weight_decay", lambda L: L.optim.AdamW([_param(L)], weight_decay=-0.1)),
    ("adagrad negative lr_decay", lambda L: L.optim.Adagrad([_param(L)], lr_decay=-1.0)),
    ("adadelta rho above 1", lambda L: L.optim.Adadelta([_param(L)], rho=1.5)),
    ("rmsprop negative alpha", lambda L: L.optim.RMSprop([_param(L)], alpha=-1.0)),
    ("lbfgs two groups", lambda L: L.optim.LBFGS([{"params": [_param(L)]}, {"params": [_param(L)]}])),
    ("lbfgs step after add_param_group", _lbfgs_step_with_two_groups),
    ("lbfgs closure not callable", lambda L: L.optim.LBFGS([_param(L)]).step(3)),
    ("load_state_dict more groups", lambda L: _load_other_layout(L, 2, 1)),
    ("load_state_dict fewer params", _load_fewer_params),
    ("load_state_dict missing param_groups", lambda L: _sgd(L).load_state_dict({"state": {}})),
    ("load_state_dict a list", lambda L: _sgd(L).load_state_dict([])),
    ("load_state_dict group not a dict", lambda L: _sgd(L).load_state_dict({"state": {}, "param_groups": [3]})),
    (
        "load_state_dict group without params",
        lambda L: _sgd(L).load_state_dict({"state": {}, "param_groups": [{"lr": 0.1}]}),
    ),
]


# -- LR schedulers --------------------------------------------------------------------


def _sequential(L, milestones, second_optimizer=False):
    optimizer = _sgd(L)
    other = _sgd(L) if second_optimizer else optimizer
    schedulers = [_sched(L).StepLR(optimizer, 2), _sched(L).StepLR(other, 2)]
    _sched(L).SequentialLR(optimizer, schedulers, milestones=milestones)


def _chained_two_optimizers(L):
    _sched(L).ChainedScheduler([_sched(L).StepLR(_sgd(L), 2), _sched(L).StepLR(_sgd(L), 2)])


def _onecycle_past_the_end(L):
    optimizer = _sgd(L)
    scheduler = _sched(L).OneCycleLR(optimizer, max_lr=1.0, total_steps=2)
    for _ in range(3):
        optimizer.step()
        scheduler.step()


def _plateau_after_a_new_group(L):
    optimizer = _sgd(L)
    scheduler = _sched(L).ReduceLROnPlateau(optimizer, min_lr=[0.0], patience=0)
    optimizer.add_param_group({"params": [_param(L)]})
    for loss in (1.0, 2.0, 3.0):
        scheduler.step(loss)


SCHEDULER_CASES = [
    ("scheduler of a non-optimizer", lambda L: _sched(L).StepLR(3, step_size=2)),
    ("resume without initial_lr", lambda L: _sched(L).StepLR(_sgd(L), step_size=2, last_epoch=3)),
    ("LambdaLR lambdas of the wrong length", lambda L: _sched(L).LambdaLR(_sgd(L, 2), [lambda e: 1.0])),
    ("LambdaLR not callable", lambda L: _sched(L).LambdaLR(_sgd(L), 3)),
    ("MultiplicativeLR lambdas of the wrong length", lambda L: _sched(L).MultiplicativeLR(_sgd(L, 2), [lambda e: 1.0])),
    ("MultiplicativeLR not callable", lambda L: _sched(L).MultiplicativeLR(_sgd(L), 3)),
    ("MultiStepLR milestones an int", lambda L: _sched(L).MultiStepLR(_sgd(L), 3)),
    ("ConstantLR factor above 1", lambda L: _sched(L).ConstantLR(_sgd(L), factor=2.0)),
    ("LinearLR start_factor 0", lambda L: _sched(L).LinearLR(_sgd(L), start_factor=0.0)),
    ("LinearLR end_factor above 1", lambda L: _sched(L).LinearLR(_sgd(L), end_factor=2.0)),
    ("OneCycleLR no length", lambda L: _sched(L).OneCycleLR(_sgd(L), max_lr=1.0)),
    ("OneCycleLR total_steps 0", lambda L: _sched(L).OneCycleLR(_sgd(L), max_lr=1.0, total_steps=0)),
    (
        "OneCycleLR pct_start above 1",
        lambda L: _sched(L).OneCycleLR(_sgd(L), max_lr=1.0, total_steps=10, pct_start=2.0),
    ),
    (
        "OneCycleLR anneal_strategy",
        lambda L: _sched(L).OneCycleLR(_sgd(L), max_lr=1.0, total_steps=10, anneal_strategy="step"),
    ),
    ("OneCycleLR max_lr of the wrong length", lambda L: _sched(L).OneCycleLR(_sgd(L, 2), max_lr=[1.0], total_steps=10)),
    (
        "OneCycleLR without momentum",
        lambda L: _sched(L).OneCycleLR(L.optim.Adagrad([_param(L)]), max_lr=1.0, total_steps=10),
    ),
    ("OneCycleLR past total_steps", _onecycle_past_the_end),
    ("SequentialLR milestones count", lambda L: _sequential(L, [2, 3])),
    ("SequentialLR two optimizers", lambda L: _sequential(L, [2], second_optimizer=True)),
    ("SequentialLR no schedulers", lambda L: _sched(L).SequentialLR(_sgd(L), [], milestones=[])),
    ("ChainedScheduler two optimizers", _chained_two_optimizers),
    ("ChainedScheduler no schedulers", lambda L: _sched(L).ChainedScheduler([])),
    ("ReduceLROnPlateau factor 1", lambda L: _sched(L).ReduceLROnPlateau(_sgd(L), factor=1.0)),
    ("ReduceLROnPlateau mode", lambda L: _sched(L).ReduceLROnPlateau(_sgd(L), mode="lowest")),
    ("ReduceLROnPlateau min_lr of the wrong length", lambda L: _sched(L).ReduceLROnPlateau(_sgd(L, 2), min_lr=[0.1])),
    ("ReduceLROnPlateau after a new group", _plateau_after_a_new_group),
]


# -- utils.data -----------------------------------------------------------------------


def _dataset(L, n=6):
    return _data(L).TensorDataset(L.arange(n, dtype=L.float32))


def _batches(L):
    return _data(L).BatchSampler(_data(L).SequentialSampler(range(6)), 2, False)


def _stream(L):
    class Stream(_data(L).IterableDataset):
        def __iter__(self):
            return iter(range(3))

    return Stream()


def _loader(L, **options):
    return _data(L).DataLoader(_dataset(L), **options)


def _worker_info_is_read_only(L):
    if L is torch:
        from torch.utils.data._utils.worker import WorkerInfo  # noqa: PLC0415  (not exported by torch.utils.data)
    else:
        WorkerInfo = L.utils.data.WorkerInfo  # noqa: N806
    WorkerInfo(id=0, num_workers=1, seed=0, dataset=None).id = 3


def _draw_weighted(L, weights, n, replacement=True):
    return list(_data(L).WeightedRandomSampler(weights, n, replacement=replacement))


DATA_CASES = [
    ("DataLoader negative num_workers", lambda L: _loader(L, num_workers=-1)),
    ("DataLoader negative timeout", lambda L: _loader(L, timeout=-1)),
    ("DataLoader timeout without workers", lambda L: next(iter(_loader(L, timeout=1)))),
    ("DataLoader prefetch_factor without workers", lambda L: _loader(L, prefetch_factor=2)),
    ("DataLoader persistent_workers without workers", lambda L: _loader(L, persistent_workers=True)),
    ("DataLoader sampler with shuffle", lambda L: _loader(L, sampler=range(6), shuffle=True)),
    ("DataLoader batch_sampler with batch_size", lambda L: _loader(L, batch_sampler=_batches(L), batch_size=2)),
    ("DataLoader batch_sampler with shuffle", lambda L: _loader(L, batch_sampler=_batches(L), shuffle=True)),
    ("DataLoader batch_sampler with sampler", lambda L: _loader(L, batch_sampler=_batches(L), sampler=range(6))),
    ("DataLoader batch_sampler with drop_last", lambda L: _loader(L, batch_sampler=_batches(L), drop_last=True)),
    ("DataLoader batch_size None with drop_last", lambda L: _loader(L, batch_size=None, drop_last=True)),
    ("DataLoader batch_size 0", lambda L: _loader(L, batch_size=0)),
    ("DataLoader IterableDataset with shuffle", lambda L: _data(L).DataLoader(_stream(L), shuffle=True)),
    ("DataLoader multiprocessing_context without workers", lambda L: _loader(L, multiprocessing_context="spawn")),
    ("DataLoader attribute set after init", lambda L: setattr(_loader(L), "batch_size", 3)),
    ("DataLoader dataset without len", lambda L: list(_data(L).DataLoader(3))),
    ("RandomSampler num_samples 0", lambda L: _data(L).RandomSampler(range(3), num_samples=0)),
    ("RandomSampler replacement not a bool", lambda L: _data(L).RandomSampler(range(3), replacement="yes")),
    ("RandomSampler empty data source", lambda L: list(_data(L).RandomSampler([]))),
    ("WeightedRandomSampler num_samples 0", lambda L: _data(L).WeightedRandomSampler([1.0], 0)),
    ("WeightedRandomSampler 2-d weights", lambda L: _data(L).WeightedRandomSampler([[1.0]], 1)),
    ("WeightedRandomSampler weights None", lambda L: _data(L).WeightedRandomSampler(None, 1)),
    ("WeightedRandomSampler negative weight", lambda L: _draw_weighted(L, [-1.0, 1.0], 2)),
    ("WeightedRandomSampler zero weights", lambda L: _draw_weighted(L, [0.0, 0.0], 2)),
    (
        "WeightedRandomSampler too many without replacement",
        lambda L: _draw_weighted(L, [1.0, 1.0], 3, replacement=False),
    ),
    ("BatchSampler batch_size 0", lambda L: _data(L).BatchSampler(range(3), 0, False)),
    ("BatchSampler drop_last not a bool", lambda L: _data(L).BatchSampler(range(3), 2, 1)),
    ("random_split lengths not summing", lambda L: _data(L).random_split(range(10), [3, 3])),
    ("random_split fractions not summing", lambda L: _data(L).random_split(range(10), [0.5, 0.6])),
    ("random_split fraction below 0", lambda L: _data(L).random_split(range(10), [-0.5, 1.5])),
    ("random_split non-integer lengths", lambda L: _data(L).random_split(range(10), [2.5, 7.5])),
    ("random_split a string length", lambda L: _data(L).random_split(range(10), ["a", 5])),
    ("TensorDataset size mismatch", lambda L: _data(L).TensorDataset(L.ones(3), L.ones(4))),
    ("TensorDataset 0-d tensor", lambda L: _data(L).TensorDataset(L.tensor(1.0))),
    ("ConcatDataset empty", lambda L: _data(L).ConcatDataset([])),
    ("ConcatDataset of a stream", lambda L: _data(L).ConcatDataset([_stream(L)])),
    ("ConcatDataset index past the end", lambda L: _data(L).ConcatDataset([_dataset(L), _dataset(L)])[12]),
    ("ConcatDataset negative index past the start", lambda L: _data(L).ConcatDataset([_dataset(L), _dataset(L)])[-13]),
    ("Subset index out of range", lambda L: _data(L).Subset(_dataset(L), [0, 10])[1]),
    ("StackDataset size mismatch", lambda L: _data(L).StackDataset(_dataset(L, 3), _dataset(L, 4))),
    ("IterableDataset without __iter__", lambda L: _data(L).IterableDataset()),
    ("collate tensors of different shapes", lambda L: _data(L).default_collate([L.ones(2), L.ones(3)])),
    ("collate a tensor then a number", lambda L: _data(L).default_collate([L.ones(2), 1])),
    ("collate lists of different lengths", lambda L: _data(L).default_collate([[1, 2], [1, 2, 3]])),
    ("collate dicts with other keys", lambda L: _data(L).default_collate([{"a": 1}, {"b": 2}])),
    ("collate objects", lambda L: _data(L).default_collate([object(), object()])),
    ("collate an empty batch", lambda L: _data(L).default_collate([])),
    ("WorkerInfo is read-only", _worker_info_is_read_only),
]


# -- distributions ----------------------------------------------------------------------


DISTRIBUTION_CASES = [
    ("Bernoulli probs and logits", lambda L: _dist(L).Bernoulli(probs=L.tensor(0.5), logits=L.tensor(0.0))),
    ("Bernoulli neither", lambda L: _dist(L).Bernoulli()),
    ("Bernoulli probs above 1", lambda L: _dist(L).Bernoulli(probs=L.tensor(1.5))),
    ("Categorical probs and logits", lambda L: _dist(L).Categorical(probs=L.ones(3), logits=L.ones(3))),
    ("Categorical neither", lambda L: _dist(L).Categorical()),
    ("Categorical 0-d probs", lambda L: _dist(L).Categorical(probs=L.tensor(1.0))),
    ("Categorical negative probs", lambda L: _dist(L).Categorical(probs=L.tensor([-1.0, 2.0]))),
    ("Normal negative scale", lambda L: _dist(L).Normal(L.tensor(0.0), L.tensor(-1.0))),
    ("Normal a string loc", lambda L: _dist(L).Normal("a", 1.0)),
    ("Normal shapes that do not broadcast", lambda L: _dist(L).Normal(L.ones(2), L.ones(3))),
    ("Uniform low above high", lambda L: _dist(L).Uniform(L.tensor(1.0), L.tensor(0.0))),
    ("Gamma negative concentration", lambda L: _dist(L).Gamma(L.tensor(-1.0), L.tensor(1.0))),
    ("log_prob of a non-tensor", lambda L: _dist(L).Normal(0.0, 1.0).log_prob(1.0)),
    ("log_prob outside the support", lambda L: _dist(L).Bernoulli(probs=L.tensor(0.5)).log_prob(L.tensor(0.5))),
    ("log_prob of the wrong shape", lambda L: _dist(L).Normal(L.ones(3), L.ones(3)).log_prob(L.ones(2))),
    ("sample shape an int", lambda L: _dist(L).Normal(0.0, 1.0).sample(3)),
    ("sample shape of floats", lambda L: _dist(L).Normal(0.0, 1.0).sample((1.5,))),
    ("Normal sample shape negative", lambda L: _dist(L).Normal(0.0, 1.0).rsample((2, -1))),
    ("Uniform sample shape negative", lambda L: _dist(L).Uniform(0.0, 1.0).sample((-1,))),
    ("Categorical sample shape negative", lambda L: _dist(L).Categorical(probs=L.ones(3)).sample((2, -1))),
    ("expand to an incompatible shape", lambda L: _dist(L).Normal(L.ones(2), L.ones(2)).expand((3,))),
    ("expand to a negative size", lambda L: _dist(L).Normal(L.ones(2), L.ones(2)).expand((-2,))),
    (
        "Gamma sample with integer concentration",
        lambda L: _dist(L).Gamma(L.tensor(1), L.tensor(1), validate_args=False).sample(),
    ),
    (
        "Beta sample with integer concentrations",
        lambda L: _dist(L).Beta(L.tensor(1), L.tensor(1), validate_args=False).sample(),
    ),
    ("Bernoulli rsample", lambda L: _dist(L).Bernoulli(probs=L.tensor(0.5)).rsample()),
    (
        "kl_divergence of an unregistered pair",
        lambda L: _dist(L).kl_divergence(_dist(L).Normal(0.0, 1.0), _dist(L).Bernoulli(probs=L.tensor(0.5))),
    ),
    ("set_default_validate_args not a bool", lambda L: _dist(L).Distribution.set_default_validate_args("on")),
]


# -- serialization and settings ----------------------------------------------------------


def _saved(L, obj) -> io.BytesIO:
    buffer = io.BytesIO()
    L.save(obj, buffer)
    buffer.seek(0)
    return buffer


def _load_truncated(L):
    data = _saved(L, {"w": L.ones(64)}).getvalue()
    L.load(io.BytesIO(data[: len(data) // 2]))


def _load_foreign_zip(L):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("notes.txt", "not a checkpoint")
    buffer.seek(0)
    L.load(buffer)


def _load_the_other_library(L):
    other = minigrad if L is torch else torch
    L.load(_saved(other, {"w": other.ones(2)}))


SERIALIZATION_AND_SETTINGS_CASES = [
    ("load a missing file", lambda L: L.load("/nonexistent-minigrad-dir/model.pt")),
    ("load a truncated archive", _load_truncated),
    ("load a zip that is no checkpoint", _load_foreign_zip),
    ("load the other library's checkpoint", _load_the_other_library),
    ("load map_location a list", lambda L: L.load(_saved(L, L.ones(2)), map_location=[1])),
    ("load map_location dict of floats", lambda L: L.load(_saved(L, L.ones(2)), map_location={"cpu": 3.5})),
    ("set_num_threads 0", lambda L: L.set_num_threads(0)),
    ("set_num_threads a float", lambda L: L.set_num_threads(1.5)),
    ("set_rng_state a list", lambda L: L.set_rng_state([1, 2])),
    ("set_rng_state a float tensor", lambda L: L.set_rng_state(L.zeros(10))),
    ("set_rng_state bytes of no state", lambda L: L.set_rng_state(L.zeros(10, dtype=L.uint8))),
    ("use_deterministic_algorithms a string", lambda L: L.use_deterministic_algorithms("yes")),
    ("set_default_dtype an int dtype", lambda L: L.set_default_dtype(L.int64)),
    ("Generator.manual_seed a string", lambda L: L.Generator().manual_seed("a")),
    ("Generator.manual_seed too large", lambda L: L.Generator().manual_seed(2**64)),
    ("Generator.set_state too short", lambda L: L.Generator().set_state(L.zeros(10, dtype=L.uint8))),
    ("Generator.set_state a list", lambda L: L.Generator().set_state([1])),
]

CASES = OPTIM_CASES + SCHEDULER_CASES + DATA_CASES + DISTRIBUTION_CASES + SERIALIZATION_AND_SETTINGS_CASES


@pytest.mark.parametrize(("name", "run"), CASES, ids=[name for name, _ in CASES])
def test_error_class_matches_torch(name, run):
    assert_same_class_as_torch(name, run)
