"""Where the ranks of a group sit: nodes, local ranks, and the communicators of a two-level reduction.

A *node* is a set of ranks that can map each other's memory. MPI finds them
(``Split_type(COMM_TYPE_SHARED)``); host names are never used, so MPICH's
simulated nodes behave like real ones (``MPIR_CVAR_NUM_CLIQUES=2`` puts 4
ranks on two "nodes", round-robin: ranks 0,2 and 1,3; ``MPIR_CVAR_NOLOCAL=1``
puts every rank on a node of its own).

``Topology.of(comm)`` works it out, once per process group:

1. Split ``comm`` by shared memory, keyed by rank, so that the local ranks
   of a node follow the group's rank order.
2. Each rank learns its node's leader (the group rank of local rank 0) and
   its local rank; one allgather gives every rank everybody's.
3. Nodes are numbered in the order of their leaders' ranks.

Whether reductions go through two levels is the setting
``MINIGRAD_DIST_HIERARCHICAL`` (``hierarchical_setting``), read once by each
object that decides (a ``ProcessGroup`` when it is built, for ``all_reduce``;
a DDP model when it is built, for its buckets): ``auto`` (the default) uses
two levels when the group spans several nodes and some node holds two ranks
or more; ``1`` whenever the group spans several nodes; ``0`` never.

``Hierarchy.split(comm, topology)`` builds the communicators a two-level
reduction (Horovod's and ChainerMN's hierarchical allreduce) needs: the node
communicator, and across nodes, for each slice of a buffer this rank sums,
a communicator of the ranks that sum the same slice on the other nodes.
Every buffer is cut into ``parts`` slices, ``parts`` being the largest
number of ranks on a node; local rank ``l`` of a node with ``n`` ranks sums
the slices ``s`` with ``s % n == l``, so every rank of every node works.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass

from minigrad_dist.mpi import load_mpi

HIERARCHICAL_VARIABLE = "MINIGRAD_DIST_HIERARCHICAL"
_SETTINGS = {
    "": "auto",
    "auto": "auto",
    "1": "1",
    "on": "1",
    "true": "1",
    "yes": "1",
    "0": "0",
    "off": "0",
    "false": "0",
    "no": "0",
}


@dataclass(frozen=True)
class Topology:
    """The node layout of a group, the same on every rank except ``rank``.

    Attributes:
        rank: this process's rank in the group.
        node_of: the node id of each group rank (nodes numbered by their leaders' ranks).
        local_rank_of: each group rank's rank among the ranks of its node.
        node_cores: the cores each node's ranks may run on together, by node
            id (the union of their CPU affinities; empty when unknown).

    Everything else is derived: ``node_id``, ``local_rank``, ``local_size``,
    ``num_nodes``, ``leaders``, ``local_sizes``, ``ranks_on(node)``, ``oversubscribed``.
    """

    rank: int
    node_of: tuple
    local_rank_of: tuple
    node_cores: tuple = ()

    @classmethod
    def of(cls, comm) -> Topology:
        """The topology of ``comm`` (collective over ``comm``: steps 1-3 of the module docstring)."""
        MPI = load_mpi()
        rank = comm.Get_rank()
        node = comm.Split_type(MPI.COMM_TYPE_SHARED, key=rank)
        try:
            local_rank = node.Get_rank()
            leader = node.bcast(rank, root=0)
            cores = len(set().union(*node.allgather(_affinity())))
        finally:
            node.Free()
        everyone = comm.allgather((leader, local_rank, cores))
        leader_of = [leader for leader, _, _ in everyone]
        cores_of = {leader: cores for leader, _, cores in everyone}
        topology = cls.from_leaders(rank, leader_of, [local for _, local, _ in everyone])
        return dataclasses.replace(topology, node_cores=tuple(cores_of[leader] for leader in topology.leaders))

    @classmethod
    def from_leaders(cls, rank: int, leader_of, local_rank_of) -> Topology:
        """The topology where group rank ``r`` has leader ``leader_of[r]`` and local rank ``local_rank_of[r]``.

        Its ``node_cores`` are unknown (empty): nothing counts as oversubscribed.

        Raises:
            ValueError: the lists differ in length, or a leader is not local rank 0 of its own node.
        """
        leader_of, local_rank_of = list(leader_of), list(local_rank_of)
        if len(leader_of) != len(local_rank_of) or not 0 <= rank < len(leader_of):
            raise ValueError(
                f"Topology: leader_of ({len(leader_of)}) and local_rank_of ({len(local_rank_of)}) must both have "
                f"one entry per rank, and rank {rank} must be one of them"
            )
        leaders = sorted(set(leader_of))
        if any(leader_of[leader] != leader or local_rank_of[leader] != 0 for leader in leaders):
            raise ValueError(f"Topology: every leader must be local rank 0 of its own node, got leaders {leader_of}")
        node_id = {leader: i for i, leader in enumerate(leaders)}
        return cls(rank, tuple(node_id[leader] for leader in leader_of), tuple(local_rank_of))

    @property
    def size(self) -> int:
        """Number of ranks in the group."""
        return len(self.node_of)

    @property
    def node_id(self) -> int:
        """This rank's node (0 .. ``num_nodes - 1``)."""
        return self.node_of[self.rank]

    @property
    def local_rank(self) -> int:
        """This rank's rank among the ranks of its node."""
        return self.local_rank_of[self.rank]

    @property
    def local_size(self) -> int:
        """Number of ranks on this rank's node."""
        return self.local_sizes[self.node_id]

    @property
    def num_nodes(self) -> int:
        """Number of nodes the group spans."""
        return max(self.node_of) + 1

    @property
    def leaders(self) -> tuple:
        """The group rank of each node's local rank 0, by node id."""
        return tuple(self.ranks_on(node)[0] for node in range(self.num_nodes))

    @property
    def local_sizes(self) -> tuple:
        """Number of ranks on each node, by node id."""
        return tuple(self.node_of.count(node) for node in range(self.num_nodes))

    def ranks_on(self, node: int) -> list:
        """The group ranks on ``node``, in local-rank order."""
        ranks = [r for r, n in enumerate(self.node_of) if n == node]
        return sorted(ranks, key=lambda r: self.local_rank_of[r])

    @property
    def oversubscribed(self) -> bool:
        """Whether some node holds more of the group's ranks than cores its ranks may run on.

        A node's cores are the union of its ranks' CPU affinities (``node_cores``),
        so ranks an MPI launcher bound to a core each are not oversubscribed,
        and ranks bound to the same core are.
        """
        return any(size > cores for size, cores in zip(self.local_sizes, self.node_cores))

    @property
    def spans_nodes(self) -> bool:
        """Whether the group has ranks on more than one node."""
        return self.num_nodes > 1

    def wants_two_levels(self, setting: str) -> bool:
        """Whether reductions over the group should go through two levels, under ``hierarchical_setting()``."""
        if setting == "0" or not self.spans_nodes:
            return False
        return setting == "1" or max(self.local_sizes) > 1


def _affinity() -> list:
    """The cores this process may run on (its CPU affinity; all ``os.cpu_count()`` of them where that is unknown)."""
    try:
        return sorted(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return list(range(os.cpu_count() or 1))


def hierarchical_setting(environ=None) -> str:
    """``MINIGRAD_DIST_HIERARCHICAL`` as ``"auto"`` (unset), ``"1"`` or ``"0"``.

    Args:
        environ: the mapping to read (default ``os.environ``).

    Raises:
        ValueError: another value (names the variable and the accepted ones).
    """
    environ = os.environ if environ is None else environ
    raw = environ.get(HIERARCHICAL_VARIABLE, "")
    setting = _SETTINGS.get(raw.strip().lower())
    if setting is None:
        raise ValueError(
            f"{HIERARCHICAL_VARIABLE}={raw!r} is not a valid setting: use 'auto' (two-level reductions when "
            "the group spans nodes), '1' (always when it spans nodes) or '0' (never)"
        )
    return setting


class Hierarchy:
    """The communicators of a reduction through shared memory: the node's, and one per slice across nodes.

    Build it with ``Hierarchy.split(comm, topology)`` (collective); the
    constructor only stores the parts.

    Args:
        node_comm: the ranks of this rank's node, in local-rank order.
        parts: how many slices a buffer is cut into (the largest node's rank count).
        cross: ``{slice index: communicator}`` for each slice this rank sums: the
            ranks summing that slice on every node, in node order. Empty when
            the group is one node (the node is then the whole reduction).
    """

    def __init__(self, node_comm, parts: int, cross=None):
        self.node_comm = node_comm
        self.parts = parts
        self.cross = dict(cross or {})

    @classmethod
    def split(cls, comm, topology: Topology) -> Hierarchy:
        """The communicators of ``comm`` with the layout ``topology`` (``Topology.of(comm)``); collective."""
        MPI = load_mpi()
        node_comm = comm.Split_type(MPI.COMM_TYPE_SHARED, key=comm.Get_rank())
        parts = max(topology.local_sizes)
        hierarchy = cls(node_comm, parts)
        if not topology.spans_nodes:
            return hierarchy
        owned = owned_slices(parts, topology.local_size, topology.local_rank)
        if len(set(topology.local_sizes)) == 1:
            # Every node alike: one split, by local rank, makes the communicator of each slice.
            hierarchy.cross[topology.local_rank] = comm.Split(topology.local_rank, key=topology.node_id)
            return hierarchy
        for part in range(parts):
            sub = comm.Split(0 if part in owned else MPI.UNDEFINED, key=topology.node_id)
            if part in owned:
                hierarchy.cross[part] = sub
        return hierarchy

    def free(self) -> None:
        """Free the communicators (collective over the group)."""
        for sub in self.cross.values():
            sub.Free()
        self.cross = {}
        if self.node_comm is not None:
            self.node_comm.Free()
            self.node_comm = None


def owned_slices(parts: int, local_size: int, local_rank: int) -> list:
    """The slices of ``parts`` that local rank ``local_rank`` of a node of ``local_size`` ranks sums."""
    return [part for part in range(parts) if part % local_size == local_rank]
