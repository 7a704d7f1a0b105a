"""Hypothesis strategies for distributed-training property tests.

Everything drawn is plain data (dicts, lists, NumPy arrays), so it can be
shipped to the ranks of a pool and printed in a falsifying example.

* ``model_specs``: MLP specs for ``models.mlp_from_spec`` (depth, widths,
  activation, an unused branch).
* ``training_data``: ``(x, y)`` batches for a spec and a world size.
* ``bucket_caps``, ``world_sizes``: DDP bucket caps and numbers of ranks.
* ``ddp_cases``: all of the above for one DDP-vs-local comparison.
* ``worker_placements``: which worker runs each part of a model (for RPC
  and distributed autograd tests).

Needs ``hypothesis`` (a test dependency): import this module only in tests.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
from hypothesis import strategies as st

from minigrad_dist.testing.models import ACTIVATIONS, mlp_from_spec

# One parameter per bucket, a few parameters per bucket, everything in one bucket.
BUCKET_CAPS_MB = (1e-6, 1e-4, 25.0)


def model_specs(max_depth: int = 3, max_width: int = 8, max_in_features: int = 6, max_classes: int = 4,
                activations=("tanh", "relu", "sigmoid"), unused_branch=None):
    """MLP specs: ``{"in_features", "hidden", "classes", "activation", "unused_branch"}``.

    Args:
        max_depth: most hidden layers (0 gives a single linear layer).
        max_width: widest hidden layer.
        max_in_features, max_classes: input and output widths are drawn from 1 (2 for classes) up to these.
        activations: names from ``models.ACTIVATIONS`` to choose from.
        unused_branch: True or False to fix it; None draws both.

    Raises:
        ValueError: an unknown activation, or bounds below their minimum.
    """
    unknown = [a for a in activations if a not in ACTIVATIONS]
    if unknown or not activations:
        raise ValueError(f"model_specs: activations must be a non-empty subset of {sorted(ACTIVATIONS)}, "
                         f"got {list(activations)}")
    if max_depth < 0 or max_width < 1 or max_in_features < 1 or max_classes < 2:
        raise ValueError(
            "model_specs: need max_depth >= 0, max_width >= 1, max_in_features >= 1, max_classes >= 2"
        )
    return st.fixed_dictionaries({
        "in_features": st.integers(1, max_in_features),
        "hidden": st.lists(st.integers(1, max_width), min_size=0, max_size=max_depth),
        "classes": st.integers(2, max_classes),
        "activation": st.sampled_from(list(activations)),
        "unused_branch": st.booleans() if unused_branch is None else st.just(bool(unused_branch)),
    })


def bucket_caps():
    """DDP ``bucket_cap_mb`` values that give one, a few, or all parameters per bucket."""
    return st.sampled_from(BUCKET_CAPS_MB)


def world_sizes(max_size: int = 4):
    """Numbers of ranks from 1 to ``max_size``."""
    return st.integers(1, max_size)


@st.composite
def training_data(draw, spec: dict, world_size: int, max_steps: int = 3, max_batch_per_rank: int = 4):
    """``(x, y)``: ``x`` of shape ``(steps, world_size * b, in_features)`` float64, ``y`` class labels.

    ``b`` (rows per rank per step) and ``steps`` are drawn; the values come
    from a drawn seed (standard normal inputs, uniform labels).
    """
    steps = draw(st.integers(1, max_steps))
    batch = world_size * draw(st.integers(1, max_batch_per_rank))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    x = rng.standard_normal((steps, batch, spec["in_features"]))
    y = rng.integers(0, spec["classes"], size=(steps, batch))
    return x, y


@dataclass(frozen=True)
class DDPCase:
    """One drawn DDP-vs-local comparison.

    Attributes:
        spec: the model spec (``models.mlp_from_spec``).
        data: ``(x, y)`` from ``training_data``.
        ddp_kwargs: ``DistributedDataParallel`` keyword arguments (bucket cap,
            ``gradient_as_bucket_view``, and ``find_unused_parameters`` when
            the model has an unused branch).
        seed: model seed (rank r initializes with ``seed + r``, so DDP must broadcast rank 0's weights).
    """

    spec: dict
    data: tuple
    ddp_kwargs: dict
    seed: int

    @property
    def model_fn(self):
        """A float64 model builder that travels to the ranks by name."""
        return functools.partial(mlp_from_spec, self.spec)


@st.composite
def ddp_cases(draw, world_size: int, specs=None, max_steps: int = 3, max_batch_per_rank: int = 4):
    """``DDPCase``s for ``world_size`` ranks (``specs`` defaults to ``model_specs()``)."""
    spec = draw(specs if specs is not None else model_specs())
    data = draw(training_data(spec, world_size, max_steps, max_batch_per_rank))
    ddp_kwargs = {
        "bucket_cap_mb": draw(bucket_caps()),
        "gradient_as_bucket_view": draw(st.booleans()),
        "find_unused_parameters": bool(spec["unused_branch"]),
    }
    return DDPCase(spec, data, ddp_kwargs, draw(st.integers(0, 2**16)))


@st.composite
def worker_placements(draw, num_parts: int, world_size: int, use_every_worker: bool = False):
    """Lists of ``num_parts`` worker ranks: where each part (layer, stage) of a model runs.

    Args:
        num_parts: length of the placement.
        world_size: ranks are drawn from ``range(world_size)``.
        use_every_worker: every rank gets at least one part (needs ``num_parts >= world_size``).

    Raises:
        ValueError: ``use_every_worker`` with fewer parts than workers, or sizes below 1.
    """
    if num_parts < 1 or world_size < 1:
        raise ValueError(
            f"worker_placements: need num_parts >= 1 and world_size >= 1, got {num_parts}, {world_size}"
        )
    if use_every_worker and num_parts < world_size:
        raise ValueError(f"worker_placements: {num_parts} parts cannot use all {world_size} workers")
    if not use_every_worker:
        return draw(st.lists(st.integers(0, world_size - 1), min_size=num_parts, max_size=num_parts))
    rest = num_parts - world_size
    extra = draw(st.lists(st.integers(0, world_size - 1), min_size=rest, max_size=rest))
    return draw(st.permutations(list(range(world_size)) + extra))
