"""Shard layouts: which elements of a list of parameters each rank owns.

A *segment* is an ordered list of parameters (one parameter group of one
dtype, or one DDP bucket). Think of their flattened values laid end to end
as one vector of length ``L``. A layout cuts that vector into one *shard*
per rank; every shard has the same length ``k`` (``shard_numel``), padded
where needed, so that one all-gather of ``k`` elements per rank brings
every rank the whole segment. A rank's shard is a list of *pieces*: a
piece is a contiguous run ``[start, stop)`` of one parameter's flat view,
stored at ``offset`` in the shard.

Three layouts:

1. ``flat_layout``: ``k = ceil(L / N)``; rank ``r`` owns elements
   ``[r*k, (r+1)*k)`` of the vector (the last ranks own fewer, or none,
   when ``L`` is not a multiple of ``N``). Pieces cut parameters at shard
   boundaries, so every rank owns 1/N of the elements (ZeRO's balance).
2. ``parameter_layout``: every parameter goes whole to one rank, largest
   first, each to the least loaded rank (PyTorch's sorted-greedy
   partition); for optimizers that need a whole parameter (LBFGS).
3. ``whole_layout``: the whole segment on one rank (PyTorch's
   ``shard_buckets=False`` for DDP buckets).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Piece:
    """A run of one parameter's flat elements owned by one rank.

    Attributes:
        param: index of the parameter in the segment.
        start, stop: the run ``[start, stop)`` within the parameter's flat view.
        offset: where the run begins in the owner's shard.
    """

    param: int
    start: int
    stop: int
    offset: int

    @property
    def numel(self) -> int:
        """Number of elements in the run."""
        return self.stop - self.start


@dataclass(frozen=True)
class ShardLayout:
    """Which rank owns which elements of a segment (see the module docstring).

    Attributes:
        numels: element count of each parameter of the segment, in order.
        world_size: number of ranks N.
        pieces: ``pieces[r]`` is the tuple of ``Piece`` rank ``r`` owns, in shard order.
        shard_numel: k, every rank's (padded) shard length; N*k >= sum(numels).
        kind: "flat", "parameters" or "whole".
    """

    numels: tuple
    world_size: int
    pieces: tuple
    shard_numel: int
    kind: str

    @property
    def total(self) -> int:
        """L, the number of elements of the segment (without padding)."""
        return sum(self.numels)

    def shard_range(self, rank: int) -> tuple:
        """``(begin, end)`` of ``rank``'s shard in the concatenated vector (flat layouts only)."""
        begin = min(rank * self.shard_numel, self.total)
        return begin, min(begin + self.shard_numel, self.total)

    def owners(self) -> list:
        """The ranks that own at least one element."""
        return [r for r in range(self.world_size) if self.pieces[r]]


def _offsets(numels) -> list:
    offsets, total = [], 0
    for n in numels:
        offsets.append(total)
        total += n
    return offsets


def flat_layout(numels, world_size: int) -> ShardLayout:
    """Rank r owns elements ``[r*k, (r+1)*k)`` of the concatenation, ``k = ceil(L / N)``."""
    numels = tuple(int(n) for n in numels)
    total = sum(numels)
    k = -(-total // world_size)
    starts = _offsets(numels)
    pieces = []
    for rank in range(world_size):
        begin, end = min(rank * k, total), min((rank + 1) * k, total)
        own = []
        for index, (first, n) in enumerate(zip(starts, numels)):
            lo, hi = max(begin, first), min(end, first + n)
            if lo < hi:
                own.append(Piece(index, lo - first, hi - first, lo - begin))
        pieces.append(tuple(own))
    return ShardLayout(numels, world_size, tuple(pieces), k, "flat")


def parameter_layout(numels, world_size: int, loads=None) -> ShardLayout:
    """Whole parameters, largest first, each to the least loaded rank (ties: the lowest rank).

    Args:
        numels: element counts of the segment's parameters.
        world_size: N.
        loads: elements each rank already owns from earlier segments (updated in
            place), so that several segments balance together; None starts at zero.
    """
    numels = tuple(int(n) for n in numels)
    loads = loads if loads is not None else [0] * world_size
    owner = {}
    for index in sorted(range(len(numels)), key=lambda i: -numels[i]):
        rank = min(range(world_size), key=lambda r: loads[r])
        owner[index] = rank
        loads[rank] += numels[index]
    return _whole_parameters(numels, world_size, [owner[i] for i in range(len(numels))], "parameters")


def whole_layout(numels, world_size: int, owner: int) -> ShardLayout:
    """The whole segment on rank ``owner``."""
    numels = tuple(int(n) for n in numels)
    return _whole_parameters(numels, world_size, [owner] * len(numels), "whole")


def _whole_parameters(numels, world_size, owners, kind) -> ShardLayout:
    pieces = [[] for _ in range(world_size)]
    filled = [0] * world_size
    for index, (n, rank) in enumerate(zip(numels, owners)):
        pieces[rank].append(Piece(index, 0, n, filled[rank]))
        filled[rank] += n
    return ShardLayout(numels, world_size, tuple(tuple(p) for p in pieces), max(filled, default=0), kind)
