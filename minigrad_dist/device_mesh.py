"""A device mesh: the world's ranks laid out as an n-dimensional array, one process group per dimension.

``torch.distributed.device_mesh.init_device_mesh`` over MPI. A 3-D parallel
job on 8 ranks names its dimensions and slices them::

    mesh = init_device_mesh("cpu", (2, 2, 2), mesh_dim_names=("dp", "pp", "tp"))
    tp_group = mesh["tp"].get_group()      # the 2 ranks this rank splits its layers with
    dp, pp, tp = mesh.get_coordinate()     # where this rank sits

The ranks fill the mesh in row-major order (the last dimension varies
fastest), as in PyTorch: in a ``(2, 4)`` mesh named ``("dp", "tp")``, ranks
0-3 form one tensor-parallel group and ranks 0 and 4 one data-parallel group.
Put the dimension whose traffic is heaviest (tensor parallelism) last, so its
ranks are neighbours (on one node, when nodes hold consecutive ranks).

``init_device_mesh`` runs these steps, in the order the code below follows:

1. **Check locally**: the device type, the shape (positive ints whose
   product is the world size) and the names (one per dimension, distinct).
2. **Agree**: one ``all_gather`` of every rank's shape and names; every rank
   raises the same error when they differ (instead of hanging in step 4).
3. **Lay out**: ``arange(world_size).reshape(mesh_shape)``; this rank's
   coordinate is its index in that array.
4. **One group per dimension**: for dimension ``d``, the ranks that share
   every coordinate but the ``d``-th form a group. Every rank takes part in
   making every group (``new_group`` is collective over the world, in the
   same order everywhere) and keeps the one it belongs to.

``mesh["tp"]`` (or ``mesh["dp", "tp"]``) is a sub-mesh: the ranks that share
this rank's coordinates on the other dimensions, with the groups of the named
dimensions. Slicing makes no new communicator.
"""

from __future__ import annotations

import math

import numpy as np

from minigrad.factory import tensor
from minigrad_dist import collectives

__all__ = ["DeviceMesh", "init_device_mesh"]

_DEVICE_TYPES = ("cpu", "cuda")


class DeviceMesh:
    """This rank's view of a mesh of ranks: the layout, its coordinate, and one ``ProcessGroup`` per dimension.

    Build one with ``init_device_mesh`` (every rank, same arguments); slice it
    with ``mesh["name"]``. Every rank of the world holds its own
    ``DeviceMesh``; they share the layout and differ in coordinate and groups.

    Args:
        device_type (str): ``"cpu"`` or ``"cuda"``.
        layout (numpy.ndarray): the global ranks, in the mesh's shape.
        groups (list[ProcessGroup]): this rank's group along each dimension.
        mesh_dim_names (tuple[str], optional): the dimensions' names.

    Attributes:
        device_type (str): ``"cpu"`` or ``"cuda"``, as given to ``init_device_mesh``.
        mesh_dim_names (tuple[str] | None): the dimensions' names.
    """

    def __init__(self, device_type: str, layout: np.ndarray, groups: list, mesh_dim_names=None):
        self.device_type = device_type
        self._layout = layout
        self._groups = list(groups)
        self.mesh_dim_names = tuple(mesh_dim_names) if mesh_dim_names is not None else None
        rank = collectives.get_rank()
        where = np.argwhere(layout == rank)
        self._coordinate = tuple(int(i) for i in where[0]) if len(where) else None

    # -- the layout ------------------------------------------------------------------------

    @property
    def mesh(self):
        """The global ranks of the mesh, as an int64 Tensor of the mesh's shape."""
        return tensor(self._layout.copy())

    @property
    def ndim(self) -> int:
        """The number of dimensions."""
        return self._layout.ndim

    @property
    def shape(self) -> tuple:
        """The size of each dimension."""
        return tuple(self._layout.shape)

    def size(self, mesh_dim: int | str | None = None) -> int:
        """The number of ranks in the mesh, or along dimension ``mesh_dim`` (an index or a name)."""
        if mesh_dim is None:
            return int(self._layout.size)
        return int(self._layout.shape[self._dim_index(mesh_dim, "size")])

    def get_rank(self) -> int:
        """This process's global rank."""
        return collectives.get_rank()

    def get_coordinate(self) -> tuple | None:
        """This rank's index along every dimension (None when the rank is not in this mesh)."""
        return self._coordinate

    # -- groups ---------------------------------------------------------------------------

    def get_group(self, mesh_dim: int | str | None = None):
        """The ``ProcessGroup`` of dimension ``mesh_dim``: the ranks that differ from this one only along it.

        Args:
            mesh_dim (int | str, optional): an index or a name; may be left out on a 1-D mesh.

        Raises:
            RuntimeError: ``mesh_dim`` left out on a mesh of several dimensions.
            KeyError: no dimension has that name. IndexError: no dimension has that index.
        """
        if mesh_dim is None:
            if self.ndim != 1:
                raise RuntimeError(
                    f"DeviceMesh.get_group: the mesh has {self.ndim} dimensions {self._names_text()}; pass "
                    "mesh_dim (an index or a name), or call get_all_groups()"
                )
            mesh_dim = 0
        return self._groups[self._dim_index(mesh_dim, "get_group")]

    def get_all_groups(self) -> list:
        """The ``ProcessGroup`` of every dimension, in dimension order."""
        return list(self._groups)

    def get_local_rank(self, mesh_dim: int | str | None = None) -> int:
        """This rank's rank in the group of dimension ``mesh_dim`` (its coordinate along it).

        Raises:
            RuntimeError: ``mesh_dim`` left out on a mesh of several dimensions.
        """
        if mesh_dim is None and self.ndim != 1:
            raise RuntimeError(
                f"DeviceMesh.get_local_rank: the mesh has {self.ndim} dimensions {self._names_text()}; pass mesh_dim"
            )
        return self.get_group(mesh_dim).rank()

    # -- slicing --------------------------------------------------------------------------

    def __getitem__(self, mesh_dim_names):
        """The sub-mesh of the named dimensions (in the order named) through this rank.

        Args:
            mesh_dim_names (str | tuple[str]): one name, or several distinct names.

        Returns:
            DeviceMesh: the ranks that share this rank's coordinates on every
            other dimension, with those dimensions' groups (no new communicator).

        Raises:
            RuntimeError: the mesh has no names.
            KeyError: a name is not one of the mesh's dimensions, or repeats.
        """
        if self.mesh_dim_names is None:
            raise RuntimeError("DeviceMesh: cannot slice a mesh built without mesh_dim_names; name its dimensions")
        names = (mesh_dim_names,) if isinstance(mesh_dim_names, str) else tuple(mesh_dim_names)
        if len(set(names)) != len(names):
            raise KeyError(f"DeviceMesh: repeated dimension in {names}; name each dimension once")
        dims = [self._dim_index(name, "__getitem__") for name in names]
        if dims == list(range(self.ndim)):
            return self
        fixed = tuple(slice(None) if d in dims else self._coordinate[d] for d in range(self.ndim))
        kept = [d for d in range(self.ndim) if d in dims]  # the order the fixed indexing leaves them in
        layout = np.transpose(self._layout[fixed], [kept.index(d) for d in dims])
        return DeviceMesh(self.device_type, layout, [self._groups[d] for d in dims], names)

    # -- helpers ----------------------------------------------------------------------------

    def _dim_index(self, mesh_dim, fn: str) -> int:
        if isinstance(mesh_dim, str):
            if self.mesh_dim_names is None or mesh_dim not in self.mesh_dim_names:
                raise KeyError(f"DeviceMesh.{fn}: no dimension named {mesh_dim!r}; the mesh has {self._names_text()}")
            return self.mesh_dim_names.index(mesh_dim)
        if isinstance(mesh_dim, bool) or not isinstance(mesh_dim, (int, np.integer)):
            raise TypeError(f"DeviceMesh.{fn}: mesh_dim must be an int or a name, got {type(mesh_dim).__name__}")
        if not -self.ndim <= mesh_dim < self.ndim:
            raise IndexError(f"DeviceMesh.{fn}: mesh_dim {mesh_dim} is out of range for a {self.ndim}-D mesh")
        return int(mesh_dim) % self.ndim

    def _names_text(self) -> str:
        if self.mesh_dim_names is None:
            return f"shape {self.shape}"
        return "(" + ", ".join(f"{n}={s}" for n, s in zip(self.mesh_dim_names, self.shape)) + ")"

    def __repr__(self) -> str:
        names = f", mesh_dim_names={self.mesh_dim_names}" if self.mesh_dim_names else ""
        return f"DeviceMesh('{self.device_type}', {self._layout.tolist()}{names})"


def init_device_mesh(device_type: str, mesh_shape, *, mesh_dim_names=None) -> DeviceMesh:
    """Lay the world's ranks out as a mesh of ``mesh_shape`` and make one process group per dimension.

    Every rank must call it, with the same arguments (they are checked: a
    mismatch raises on every rank). Initializes the default process group
    (MPI) first when that was not done, as PyTorch does.

    Args:
        device_type (str): ``"cpu"`` or ``"cuda"`` (no device index: each rank
            picks its own GPU).
        mesh_shape (tuple[int]): the size of each dimension; their product
            must be the world size.
        mesh_dim_names (tuple[str], optional): one distinct name per dimension,
            needed to slice the mesh (``mesh["tp"]``).

    Returns:
        DeviceMesh: this rank's view of the mesh. Its groups are ordinary
        ``new_group`` groups: ``destroy_process_group()`` frees them (or each
        one, ``destroy_process_group(group)`` for ``mesh.get_all_groups()``).

    Raises:
        TypeError: ``mesh_shape`` is not a tuple of ints, or a name not a str.
        RuntimeError: the product of the sizes differs from the world size,
            or the names do not match the dimensions or repeat (PyTorch's
            class for these).
        ValueError: a size is not positive, the device type is unknown or
            has an index, or the ranks passed different shapes or names (on
            every rank).

    Example::

        >>> mesh = init_device_mesh("cpu", (2, 2), mesh_dim_names=("dp", "tp"))
        >>> mesh["tp"].get_group().size()
        2
    """
    if not collectives.is_initialized():
        collectives.init_process_group()
    world = collectives.get_default_group()
    shape, names, problem = _check_arguments(device_type, mesh_shape, mesh_dim_names, world.size())
    _agree(world, shape, names, problem)
    layout = np.arange(world.size()).reshape(shape)
    groups = [_group_along(layout, d, world.rank()) for d in range(len(shape))]
    return DeviceMesh(device_type, layout, groups, names)


# -- step 1: local checks ------------------------------------------------------------------


def _check_arguments(device_type, mesh_shape, mesh_dim_names, world_size):
    """``(shape, names, None)``, or ``(what could be read, None, the error)`` for the peers to see first."""
    try:
        return *_checked(device_type, mesh_shape, mesh_dim_names, world_size), None
    except (TypeError, ValueError, RuntimeError) as error:
        shape = tuple(mesh_shape) if isinstance(mesh_shape, (tuple, list)) else mesh_shape
        return shape, mesh_dim_names, error


def _checked(device_type, mesh_shape, mesh_dim_names, world_size):
    if not isinstance(device_type, str) or device_type not in _DEVICE_TYPES:
        hint = " (no device index: each rank picks its own GPU)" if isinstance(device_type, str) else ""
        raise ValueError(f"init_device_mesh: device_type must be one of {_DEVICE_TYPES}, got {device_type!r}{hint}")
    if isinstance(mesh_shape, int) and not isinstance(mesh_shape, bool):
        mesh_shape = (mesh_shape,)
    if not isinstance(mesh_shape, (tuple, list)) or not all(
        isinstance(s, (int, np.integer)) and not isinstance(s, bool) for s in mesh_shape
    ):
        raise TypeError(f"init_device_mesh: mesh_shape must be a tuple of ints, got {mesh_shape!r}")
    shape = tuple(int(s) for s in mesh_shape)
    if not shape or any(s < 1 for s in shape):
        raise ValueError(f"init_device_mesh: mesh_shape must hold positive sizes, got {shape}")
    if math.prod(shape) != world_size:
        raise RuntimeError(
            f"init_device_mesh: mesh_shape {shape} holds {math.prod(shape)} ranks but the world has {world_size}; "
            "the sizes' product must equal the world size (the number of processes mpiexec started)"
        )
    if mesh_dim_names is None:
        return shape, None
    if isinstance(mesh_dim_names, str) or not all(isinstance(n, str) for n in mesh_dim_names):
        raise TypeError(f"init_device_mesh: mesh_dim_names must be a tuple of str, got {mesh_dim_names!r}")
    names = tuple(mesh_dim_names)
    if len(names) != len(shape):
        raise RuntimeError(
            f"init_device_mesh: mesh_dim_names {names} names {len(names)} dimensions but mesh_shape {shape} has "
            f"{len(shape)}; give one name per dimension"
        )
    if len(set(names)) != len(names):
        repeated = sorted({n for n in names if names.count(n) > 1})
        raise RuntimeError(f"init_device_mesh: mesh_dim_names {names} repeats {repeated}; each name must be unique")
    return shape, names


# -- step 2: agree across the world ----------------------------------------------------------


def _agree(world, shape, names, problem) -> None:
    """Raise the first rank's problem on every rank, or a ValueError when the ranks' shapes or names differ."""
    reports = world.allgather_obj((shape, names, problem))
    for r, (_, _, other) in enumerate(reports):
        if other is not None:
            if r == world.rank():
                raise problem
            raise type(other)(f"{other} (found on rank {r}; every rank raises)")
    for r, (other_shape, other_names, _) in enumerate(reports):
        if (other_shape, other_names) != (shape, names):
            raise ValueError(
                f"init_device_mesh: rank {r} passed mesh_shape={other_shape}, mesh_dim_names={other_names} but rank "
                f"{world.rank()} passed mesh_shape={shape}, mesh_dim_names={names}; every rank must pass the same"
            )


# -- step 4: one group per dimension ----------------------------------------------------------


def _group_along(layout: np.ndarray, dim: int, rank: int):
    """This rank's group along ``dim``; every rank makes every group of that dimension, in the same order."""
    rows = np.moveaxis(layout, dim, -1).reshape(-1, layout.shape[dim])
    mine = None
    for row in rows:
        group = collectives.new_group(row.tolist())
        if rank in row:
            mine = group
    return mine
