"""init_device_mesh on 1, 2 and 4 real MPI ranks: layout, coordinates, groups, sub-meshes and errors.

The expected groups are worked out here by brute force (the ranks whose
coordinates differ only along one dimension), independently of the mesh's
own construction, and every group is exercised with an all_reduce.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from tests.dist.conftest import get_pool
from tests.dist.tensor_parallel import programs_tensor_parallel as programs

pytestmark = pytest.mark.timeout(120)


def coordinate(rank, shape):
    return tuple(int(i) for i in np.unravel_index(rank, shape))


def group_along(rank, shape, dim):
    """The ranks sharing every coordinate of ``rank`` but the ``dim``-th, in order."""
    mine = coordinate(rank, shape)
    world = int(np.prod(shape))
    return [
        r for r in range(world) if all(c == m for i, (c, m) in enumerate(zip(coordinate(r, shape), mine)) if i != dim)
    ]


@pytest.mark.parametrize(
    ("world_size", "shape", "names"),
    [
        (1, (1,), ("tp",)),
        (2, (2,), ("tp",)),
        (2, (2, 1), ("dp", "tp")),
        (4, (2, 2), ("dp", "tp")),
        (4, (2, 1, 2), ("dp", "pp", "tp")),
    ],
)
def test_mesh_groups_coordinates_and_submeshes(world_size, shape, names):
    case = {"shape": shape, "names": names}
    layout = np.arange(world_size).reshape(shape)
    for rank, result in enumerate(get_pool(world_size).run(programs.mesh_layout, case, timeout=60)):
        assert result["coordinate"] == coordinate(rank, shape)
        assert result["layout"] == layout.tolist()
        assert (result["shape"], result["size"]) == (shape, world_size)
        for dim, name in enumerate(names):
            expected = group_along(rank, shape, dim)
            assert result["groups"][name] == expected, (rank, name)
            assert result["local_ranks"][name] == coordinate(rank, shape)[dim]
            assert result["sub_layouts"][name] == expected
            assert result["sums"][name] == sum(expected)
        if len(names) == 2:
            assert result["reversed_layout"] == layout.T.tolist()


def test_mesh_of_four_ranks_as_two_by_two():
    """The usual picture: tp groups {0,1} and {2,3}, dp groups {0,2} and {1,3}."""
    results = get_pool(4).run(programs.mesh_layout, {"shape": (2, 2), "names": ("dp", "tp")}, timeout=60)
    assert [r["groups"]["tp"] for r in results] == [[0, 1], [0, 1], [2, 3], [2, 3]]
    assert [r["groups"]["dp"] for r in results] == [[0, 2], [1, 3], [0, 2], [1, 3]]
    assert [r["coordinate"] for r in results] == list(itertools.product(range(2), range(2)))


EXPECTED_ERRORS = {
    "product": ("RuntimeError", "the sizes' product must equal the world size"),
    "repeated_names": ("RuntimeError", "repeats ['x']"),
    "names_length": ("RuntimeError", "give one name per dimension"),
    "device_index": ("ValueError", "no device index"),
    "not_ints": ("TypeError", "mesh_shape must be a tuple of ints"),
    "ranks_disagree": ("ValueError", "every rank must pass the same"),
    "group_without_dim": ("RuntimeError", "pass mesh_dim"),
    "unknown_name": ("KeyError", "no dimension named 'pp'"),
    "dim_out_of_range": ("IndexError", "out of range for a 2-D mesh"),
    "slice_unnamed": ("RuntimeError", "built without mesh_dim_names"),
    "column_not_divisible": ("ValueError", "does not divide by the tensor-parallel group size"),
    "row_not_divisible": ("ValueError", "does not divide by the tensor-parallel group size"),
    "column_input": ("RuntimeError", "expected input of shape (*, 3)"),
    "plan_2d_mesh": ("ValueError", 'slice it first, e.g. mesh["tp"]'),
    "plan_unknown_name": ("ValueError", "'fc9' is not a submodule of the model"),
    "plan_not_linear": ("TypeError", "'1' is a Tanh"),
    "plan_unsupported_layout": ("NotImplementedError", "output_layouts=Shard(dim=-1) is not supported"),
    "plan_dtensor_output": ("NotImplementedError", "leave use_local_output=True"),
    "plan_not_style": ("TypeError", "must be a ColwiseParallel or RowwiseParallel"),
}


NEED_TWO_RANKS = ("ranks_disagree", "column_not_divisible", "row_not_divisible")


@pytest.mark.parametrize("world_size", [1, 2])
def test_errors_are_clear_and_raised_on_every_rank(world_size):
    for rank, errors in enumerate(get_pool(world_size).run(programs.mesh_errors, {}, timeout=60)):
        for name, (kind, fragment) in EXPECTED_ERRORS.items():
            if name in NEED_TWO_RANKS and world_size == 1:
                assert errors[name] is None  # one rank cannot disagree with itself, and every size divides by 1
                continue
            assert errors[name] is not None, (rank, name)
            assert errors[name][0] == kind, (rank, name, errors[name])
            assert fragment in errors[name][1], (rank, name, errors[name])
