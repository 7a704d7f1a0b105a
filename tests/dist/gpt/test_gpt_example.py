"""examples/gpt: the same losses on 1 rank and under data x pipeline x tensor parallelism.

A tiny GPT (2 blocks, 2 heads, width 16, 8 characters, a global batch of 8
in 2 microbatches) trains 3 Adam steps from one seed under several
factorisations of the world. Its losses must equal those of one rank (and
of the plain ``GPT`` of ``model.py`` trained in this process, without any
parallel layer): to 1e-10 in float64, within float32 rounding in float32.
A factorisation that does not match the world raises a clear error on every rank.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.dist.conftest import get_pool
from tests.dist.gpt import programs_gpt as programs

pytestmark = pytest.mark.timeout(240)

TINY = [
    *("--steps", "3", "--batch-size", "8", "--microbatches", "2", "--seq-len", "8"),
    *("--n-layer", "2", "--n-head", "2", "--n-embd", "16", "--lr", "1e-2", "--seed", "3", "--sample", "0"),
]


def mesh_args(dp, pp, tp):
    return ["--dp", str(dp), "--pp", str(pp), "--tp", str(tp)]


def train_on(world_size, argv):
    """Rank 0's result of ``train.main(argv)``; every rank must report the same losses and sample."""
    results = get_pool(world_size).run(programs.train_on_ranks, argv, timeout=150)
    for rank, result in enumerate(results[1:], start=1):
        np.testing.assert_array_equal(result["losses"], results[0]["losses"], err_msg=f"rank {rank} vs rank 0")
        assert result["sample"] == results[0]["sample"], f"rank {rank} vs rank 0"
    return results[0]


def losses_on(world_size, argv):
    """The losses of ``train.main(argv)`` on ``world_size`` ranks, as one array."""
    return np.array(train_on(world_size, argv)["losses"])


def test_float64_losses_equal_one_rank_and_the_plain_model_on_four_ranks():
    argv = [*TINY, "--dtype", "float64"]
    plain = np.array(programs.local_losses(argv))
    one_rank = losses_on(1, [*argv, *mesh_args(1, 1, 1)])
    np.testing.assert_allclose(one_rank, plain, rtol=1e-10, err_msg="1 rank vs the plain GPT")
    for mesh in [(1, 2, 2), (2, 2, 1)]:
        np.testing.assert_allclose(
            losses_on(4, [*argv, *mesh_args(*mesh)]), one_rank, rtol=1e-10, err_msg=f"(dp, pp, tp) = {mesh}"
        )
    assert one_rank[-1] < one_rank[0] - 0.05, f"the model should learn in 3 steps: {one_rank}"


def test_float32_losses_and_sample_on_eight_ranks_equal_one_rank():
    argv = [*TINY, "--sample", "6"]  # the later --sample wins
    one_rank = train_on(1, [*argv, *mesh_args(1, 1, 1)])
    eight = train_on(8, [*argv, *mesh_args(2, 2, 2)])
    np.testing.assert_allclose(
        eight["losses"], one_rank["losses"], rtol=1e-6, err_msg="(dp, pp, tp) = (2, 2, 2) vs 1 rank, float32"
    )
    assert len(one_rank["sample"]) == len("The ") + 6 and one_rank["sample"].startswith("The ")
    assert eight["sample"] == one_rank["sample"]


BAD = [  # (command line on 2 ranks, what every rank's ValueError must say)
    (mesh_args(2, 2, 2), ["needs dp*pp*tp = 8 processes, but the world has 2", "mpiexec -n 8"]),
    ([*mesh_args(1, 1, 2), "--n-head", "3", "--n-embd", "18"], ["--tp 2 must divide --n-head 3"]),
    ([*mesh_args(1, 2, 1), "--n-layer", "1"], ["--pp 2 needs at least 2 blocks"]),
    ([*mesh_args(2, 1, 1), "--batch-size", "6"], ["--batch-size 6 must divide by dp*microbatches = 2*2"]),
]


def test_a_mesh_that_does_not_fit_the_world_or_the_model_names_the_fix():
    argvs = [[*TINY, *argv] for argv, _ in BAD]
    per_rank = get_pool(2).run(programs.errors_on_ranks, argvs, timeout=60)
    for errors in per_rank:
        for error, (argv, phrases) in zip(errors, BAD):
            assert error is not None and error[0] == "ValueError", (argv, error)
            for phrase in phrases:
                assert phrase in error[1], (argv, error)
