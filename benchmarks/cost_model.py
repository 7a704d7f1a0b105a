"""An alpha-beta cost model of one DDP training step: the arithmetic, without any measuring.

``scale_model.py`` measures this machine, fits the model's constants, checks
its predictions against measured DDP steps, and then predicts GPU clusters
with the same functions. The model, in the order the code below follows it:

1. **Compute.** A rank's forward, backward and optimizer step take what one
   process alone takes (``t_local``), times the slowdown when ``ranks``
   processes share ``cores`` cores. On a GPU cluster every rank has its own
   GPU (slowdown 1); on this machine the compute of every rank count is
   measured, and its slowdown compared with the rule ``max(1, ranks /
   cores)`` (``oversubscription``).
2. **One level.** A link level (shared memory inside a node, the network
   between nodes, NVLink, InfiniBand) has a latency ``alpha`` (seconds per
   ring step) and an inverse bandwidth ``beta`` (seconds per byte). A ring
   allreduce of ``b`` bytes over ``n`` ranks makes ``2(n-1)`` steps, each
   rank sending ``b/n`` bytes per step: ``2(n-1) alpha + 2(n-1)/n b beta``
   (``ring_allreduce_time``); a collective also pays a fixed ``base`` once.
   The whole time is multiplied by ``scale``: 1 where links and copy engines
   move the bytes (``alpha``, ``beta`` in seconds). On this machine MPI and
   the shared-memory sums run on the compute cores, so a reduction slows down
   by whatever slows the compute (more ranks than cores, other jobs); there
   ``alpha`` and ``beta`` are fractions of the rank's compute step and
   ``scale`` is that step, measured at the same rank count.
3. **Two levels.** With ``local`` ranks on each of ``nodes`` nodes, a
   hierarchical allreduce sums inside each node (a reduce-scatter), allreduces
   each rank's ``1/local`` slice across the nodes, and gathers inside each
   node (an allgather): the two node phases cost one ring allreduce over
   ``local`` ranks, and the middle one a ring allreduce of ``b/local`` bytes
   over ``nodes`` ranks (``hierarchical_allreduce_time``).
4. **Overlap.** Buckets are reduced one after another, in bucket order. Bucket
   ``i`` is ready when the backward pass has produced its gradients: at
   ``forward + backward * ready_i``, ``ready_i`` the fraction of the
   gradient bytes in buckets ``0..i`` (gradients arrive at a steady rate).
   With a separate engine for communication (a GPU's copy engines and
   NICs), bucket ``i`` starts at ``max(ready_i, end_{i-1})`` and the step
   ends at ``max(forward + backward, end_last) + optimizer``: only the last
   buckets' tail shows. Without one (this machine: the reductions run on the
   compute core, ``MPI_NOTES.md``), communication adds to compute
   (``step_time``).
5. **Fit.** ``alpha`` and ``beta`` of a level are the non-negative values
   that minimize the sum of the relative errors' magnitudes of step 2's
   formula on measured reductions of several sizes at several rank counts:
   every point counts as a fraction of its time (small reductions as much as
   large ones), and a point slowed down by another job on a shared machine
   pulls the fit less than under least squares (``fit_level``, iteratively
   reweighted least squares).
6. **Scaling efficiency** is the ideal step (compute alone) over the predicted
   step (``scaling_efficiency``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

FIRST_BUCKET_BYTES = 1024 * 1024  # PyTorch's and our Reducer's first bucket cap


@dataclass(frozen=True)
class Level:
    """One level of the topology in the alpha-beta model.

    Attributes:
        name: what the level is (``"shared memory"``, ``"InfiniBand HDR"``, ...).
        alpha: seconds per ring step (latency).
        beta: seconds per byte each rank sends (1 / bandwidth).
        base: seconds paid once per collective (launch overhead).

    Fitted on this machine, the three are fractions of a compute step
    instead of seconds (step 2 of the module docstring).
    """

    name: str
    alpha: float
    beta: float
    base: float = 0.0

    def __post_init__(self):
        for field in ("alpha", "beta", "base"):
            value = getattr(self, field)
            if not (np.isfinite(value) and value >= 0):
                raise ValueError(f"Level {self.name!r}: {field} must be a finite number >= 0, got {value!r}")

    @classmethod
    def from_bandwidth(cls, name: str, latency_s: float, bytes_per_s: float, base: float = 0.0) -> Level:
        """A level from a latency in seconds and a bandwidth in bytes per second (per direction)."""
        if not bytes_per_s > 0:
            raise ValueError(f"Level {name!r}: bandwidth must be > 0 bytes/s, got {bytes_per_s!r}")
        return cls(name, latency_s, 1.0 / bytes_per_s, base)


# -- step 1: compute ---------------------------------------------------------------------------


def oversubscription(ranks: int, cores: int) -> float:
    """The slowdown rule for ``ranks`` busy processes on ``cores`` cores: ``max(1, ranks / cores)``."""
    _check_count("ranks", ranks)
    _check_count("cores", cores)
    return max(1.0, ranks / cores)


# -- step 2: one level -----------------------------------------------------------------------------


def ring_allreduce_time(nbytes: float, ranks: int, level: Level, scale: float = 1.0) -> float:
    """Seconds for a ring allreduce of ``nbytes`` over ``ranks`` ranks on ``level``.

    ``scale * (base + 2(n-1) alpha + 2(n-1)/n nbytes beta)``; 0 for one
    rank (nothing to exchange).

    Raises:
        ValueError: ``ranks`` < 1, ``nbytes`` < 0 or ``scale`` <= 0.
    """
    _check_count("ranks", ranks)
    if nbytes < 0:
        raise ValueError(f"nbytes must be >= 0, got {nbytes!r}")
    if not scale > 0:
        raise ValueError(f"scale must be > 0 (1 for times in seconds), got {scale!r}")
    if ranks == 1:
        return 0.0
    steps = 2 * (ranks - 1)
    return scale * (level.base + steps * level.alpha + steps / ranks * nbytes * level.beta)


def ring_features(nbytes: float, ranks: int, scale: float = 1.0) -> tuple[float, float]:
    """The coefficients of ``alpha`` and ``beta`` in ``ring_allreduce_time`` (the fit's design row)."""
    steps = 2 * (ranks - 1)
    return scale * steps, scale * steps / ranks * nbytes


# -- step 3: two levels ------------------------------------------------------------------------------


def hierarchical_allreduce_time(
    nbytes: float, local: int, nodes: int, intra: Level, inter: Level, scale: float = 1.0
) -> float:
    """Seconds for a two-level allreduce of ``nbytes``: ``local`` ranks on each of ``nodes`` nodes.

    The reduce-scatter and allgather inside each node cost one ring allreduce
    over ``local`` ranks on ``intra``; each rank's slice of ``nbytes / local``
    is allreduced across the ``nodes`` nodes on ``inter`` (all slices at once,
    each on its own rank's link).
    """
    _check_count("local", local)
    _check_count("nodes", nodes)
    inside = ring_allreduce_time(nbytes, local, intra, scale)
    across = ring_allreduce_time(nbytes / local, nodes, inter, scale)
    return inside + across


# -- step 4: overlap ---------------------------------------------------------------------------------


def bucket_sizes(total_bytes: float, cap_bytes: float, first_cap_bytes: float = FIRST_BUCKET_BYTES) -> list:
    """Bucket sizes for ``total_bytes`` of gradients cut evenly: the first bucket ``first_cap_bytes``, the rest
    ``cap_bytes`` (the last one what is left); a stand-in for a real model's parameter boundaries."""
    if total_bytes <= 0 or cap_bytes <= 0 or first_cap_bytes <= 0:
        raise ValueError(f"sizes must be > 0, got total {total_bytes!r}, cap {cap_bytes!r}, first {first_cap_bytes!r}")
    sizes = [min(first_cap_bytes, total_bytes)]
    left = total_bytes - sizes[0]
    while left > 0:
        sizes.append(min(cap_bytes, left))
        left -= sizes[-1]
    return sizes


def step_time(forward: float, backward: float, optimizer: float, bucket_bytes, comm_times, overlap: bool) -> dict:
    """The step of one rank: compute, and the buckets' reductions launched in order (step 4).

    Args:
        forward, backward, optimizer: seconds of each phase.
        bucket_bytes: each bucket's size, in launch order (the order gradients become ready).
        comm_times: each bucket's reduction time, same order.
        overlap: whether communication runs beside compute (its own engine) or on the compute core.

    Returns:
        ``{"step": seconds, "compute": forward + backward + optimizer, "exposed_comm": step - compute,
        "ends": [each bucket's end]}``.
    """
    bucket_bytes, comm_times = list(bucket_bytes), list(comm_times)
    if len(bucket_bytes) != len(comm_times):
        raise ValueError(f"{len(bucket_bytes)} bucket sizes but {len(comm_times)} communication times")
    compute = forward + backward + optimizer
    if not overlap:
        ends = list(forward + backward + np.cumsum(comm_times)) if comm_times else []
        step = compute + sum(comm_times)
        return {"step": step, "compute": compute, "exposed_comm": step - compute, "ends": ends}
    total = sum(bucket_bytes)
    ready = forward + backward * np.cumsum(bucket_bytes) / total if total else []
    end, ends = 0.0, []
    for ready_at, seconds in zip(ready, comm_times):
        end = max(float(ready_at), end) + seconds
        ends.append(end)
    step = max(forward + backward, end) + optimizer
    return {"step": step, "compute": compute, "exposed_comm": step - compute, "ends": ends}


# -- step 5: fit ---------------------------------------------------------------------------------------


def fit_level(name: str, samples, iterations: int = 50) -> tuple[Level, list]:
    """Fit ``alpha`` and ``beta`` of one level to measured ring allreduces (step 5).

    Minimizes the sum of ``|predicted / measured - 1|`` over the samples with
    ``alpha, beta >= 0``, by ``iterations`` rounds of least squares reweighted by
    each sample's current error (the first round is plain relative least squares).

    Args:
        name: the level's name.
        samples: ``(nbytes, ranks, scale, seconds)`` tuples: at least two,
            with two different sizes or rank counts.
        iterations: reweighting rounds.

    Returns:
        ``(Level, relative_errors)``: the fitted level and, per sample,
        (predicted - measured) / measured.

    Raises:
        ValueError: fewer than two samples, a time that is not > 0, or samples
            that cannot separate latency from bandwidth.
    """
    samples = list(samples)
    if len(samples) < 2:
        raise ValueError(f"fit_level({name!r}) needs at least 2 samples, got {len(samples)}")
    rows, times = [], []
    for nbytes, ranks, scale, seconds in samples:
        if not seconds > 0:
            raise ValueError(f"fit_level({name!r}): measured time must be > 0, got {seconds!r}")
        rows.append(ring_features(nbytes, ranks, scale))
        times.append(seconds)
    design, times = np.asarray(rows, dtype=float), np.asarray(times, dtype=float)
    if np.linalg.matrix_rank(design) < 2:
        raise ValueError(f"fit_level({name!r}): the samples need two different sizes (or rank counts) to fit")
    relative = design / times[:, None]  # row @ (alpha, beta) = predicted / measured
    weights = np.ones_like(times)
    for _ in range(max(1, iterations)):
        root = np.sqrt(weights)
        alpha, beta = _nonnegative_least_squares(relative * root[:, None], root)
        errors = relative @ np.array([alpha, beta]) - 1
        weights = 1.0 / np.maximum(np.abs(errors), 1e-6)  # then sum(weight * error**2) = sum(|error|)
    return Level(name, alpha, beta), list(errors)


def _nonnegative_least_squares(a, b):
    """Two-unknown least squares with both unknowns >= 0 (the unconstrained solution, else the best on an edge)."""
    solution, *_ = np.linalg.lstsq(a, b, rcond=None)
    if (solution >= 0).all():
        return float(solution[0]), float(solution[1])
    best = None
    for column in range(2):
        x = max(0.0, float(a[:, column] @ b) / float(a[:, column] @ a[:, column]))
        candidate = [0.0, 0.0]
        candidate[column] = x
        residual = float(np.sum((a @ np.array(candidate) - b) ** 2))
        if best is None or residual < best[0]:
            best = (residual, candidate)
    return best[1][0], best[1][1]


# -- step 6: efficiency --------------------------------------------------------------------------------


def scaling_efficiency(compute: float, step: float) -> float:
    """Ideal step over predicted step: the fraction of linear speed-up kept (1.0 is linear)."""
    if not (compute > 0 and step >= compute):
        raise ValueError(f"need 0 < compute <= step, got compute {compute!r}, step {step!r}")
    return compute / step


def _check_count(name: str, value) -> None:
    if not (isinstance(value, (int, np.integer)) and value >= 1):
        raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
