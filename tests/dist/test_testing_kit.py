"""The testing kit: the worked example of its docstring, the oracle's reports, strategies, the pool.

The hooks and the model below are the docstring's "myproject/hooks.py";
they are top-level functions of this module, so the ranks import them by name.
"""

from __future__ import annotations

import functools
import re
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minigrad_dist as dist
from minigrad import nn
from minigrad_dist import testing
from minigrad_dist.futures import completed_future
from minigrad_dist.testing import (
    PoolTimeout,
    RankFailure,
    assert_ddp_matches_local,
    get_pool,
    mlp_from_spec,
    strategies,
)

pytestmark = pytest.mark.timeout(300)


def mean_hook(process_group, bucket):
    group = process_group if process_group is not None else dist.get_default_group()
    buffer = bucket.buffer().array
    group.allreduce(buffer)
    buffer /= group.size()
    return completed_future(buffer)


def forgetful_hook(process_group, bucket):
    group = process_group if process_group is not None else dist.get_default_group()
    buffer = bucket.buffer().array
    group.allreduce(buffer)
    return completed_future(buffer)


def small_model():
    return nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3)).double()


_rng = np.random.default_rng(0)
DATA = (_rng.standard_normal((2, 8, 4)), _rng.integers(0, 3, size=(2, 8)))


# -- the docstring's worked example ---------------------------------------------------------


def test_mean_hook_trains_like_one_process():
    match = assert_ddp_matches_local(small_model, DATA, comm_hook=mean_hook, world_size=2)
    assert match.steps == 2 and match.world_size == 2
    assert match.max_grad_error < 1e-12 and match.max_param_error < 1e-12


def test_the_kit_catches_the_forgetful_hook():
    with pytest.raises(AssertionError, match="not divided by the world size") as caught:
        assert_ddp_matches_local(small_model, DATA, comm_hook=forgetful_hook, world_size=2)
    report = str(caught.value)
    assert "comm hook: tests.dist.test_testing_kit.forgetful_hook" in report
    assert "First difference: step 0, rank 0, gradient of '0.weight'" in report
    assert "DDP is 2x local everywhere" in report


def test_drawn_models_with_the_docstring_hook():
    @settings(max_examples=4, deadline=None, derandomize=True)
    @given(case=strategies.ddp_cases(world_size=2))
    def check(case):
        assert_ddp_matches_local(case.model_fn, case.data, comm_hook=mean_hook, world_size=2,
                                 ddp_kwargs=case.ddp_kwargs, seed=case.seed)

    check()


def docstring_files() -> dict:
    """The code blocks of the kit's docstring that start with a ``# path.py`` comment, by path."""
    files = {}
    for match in re.finditer(r"::\n\n((?: {4}.*\n|\n)+)", testing.__doc__):
        code = textwrap.dedent(match.group(1))
        first = code.splitlines()[0]
        if first.startswith("# ") and first.endswith(".py"):
            files[first[2:]] = code
    return files


def test_the_docstring_example_runs_as_a_user_project(tmp_path):
    """The example as written, in a project outside this repository: the ranks must import it too."""
    files = docstring_files()
    assert sorted(files) == ["myproject/hooks.py", "tests/test_hooks.py"]
    for name, code in files.items():
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text(code)
    (tmp_path / "myproject" / "__init__.py").write_text("")
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_hooks.py"]
    proc = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=200, check=False)
    assert proc.returncode == 0 and "2 passed" in proc.stdout, proc.stdout + proc.stderr


# -- what else the oracle catches ---------------------------------------------------------------


def double_divide_hook(process_group, bucket):
    """Divides twice: DDP's gradients are 1/world of the true ones."""
    group = process_group if process_group is not None else dist.get_default_group()
    buffer = bucket.buffer().array
    buffer /= group.size()
    group.allreduce(buffer)
    buffer /= group.size()
    return completed_future(buffer)


def drifting_hook(process_group, bucket):
    """Correct to 1 ulp, but the ranks' replicas differ in the last bit: they drift apart."""
    group = process_group if process_group is not None else dist.get_default_group()
    buffer = mean_hook(group, bucket).value()
    if group.rank() == 1:
        buffer += np.spacing(buffer)
    return completed_future(buffer)


def test_dividing_twice_is_named():
    six_rows = (DATA[0][:, :6], DATA[1][:, :6])
    with pytest.raises(AssertionError, match="divided by the world size twice"):
        assert_ddp_matches_local(small_model, six_rows, comm_hook=double_divide_hook, world_size=3, steps=1)


def test_replicas_differing_by_one_ulp_are_caught_bitwise():
    with pytest.raises(AssertionError, match="differs bitwise from rank 0's") as caught:
        assert_ddp_matches_local(small_model, DATA, comm_hook=drifting_hook, world_size=2, steps=1)
    assert "step 0, rank 1, parameter '0.weight' after the step" in str(caught.value)


def raising_hook(process_group, bucket):
    raise RuntimeError("this hook is broken")


def test_a_hook_that_raises_reports_the_rank_traceback():
    with pytest.raises(RankFailure, match="this hook is broken"):
        assert_ddp_matches_local(small_model, DATA, comm_hook=raising_hook, world_size=2, steps=1)


def test_adam_mse_and_default_reduction_match():
    rng = np.random.default_rng(1)
    data = (rng.standard_normal((2, 6, 3)), rng.standard_normal((2, 6, 2)))
    spec = {"in_features": 3, "hidden": [4], "classes": 2, "activation": "relu"}
    match = assert_ddp_matches_local(functools.partial(mlp_from_spec, spec), data, world_size=3, loss="mse",
                                     optimizer="Adam", optimizer_kwargs={"lr": 0.01},
                                     ddp_kwargs={"bucket_cap_mb": 1e-6})
    assert match.steps == 2


# -- argument checks, before any rank runs ------------------------------------------------------


def test_functions_must_travel_by_name():
    with pytest.raises(TypeError, match="lambda or a local function"):
        assert_ddp_matches_local(lambda: small_model(), DATA)

    def local_model():
        return small_model()

    with pytest.raises(TypeError, match="model_fn must be a top-level function"):
        assert_ddp_matches_local(local_model, DATA)
    with pytest.raises(TypeError, match="comm_hook must be a top-level function"):
        assert_ddp_matches_local(small_model, DATA, comm_hook=lambda state, bucket: None)
    with pytest.raises(TypeError, match="must be callable"):
        assert_ddp_matches_local("small_model", DATA)


def test_data_and_option_errors():
    with pytest.raises(ValueError, match="multiple of world_size"):
        assert_ddp_matches_local(small_model, DATA, world_size=3)
    with pytest.raises(ValueError, match=r"x of shape \(steps, global_batch, ...\)"):
        assert_ddp_matches_local(small_model, (DATA[0][0], DATA[1][0]))
    with pytest.raises(TypeError, match="pair"):
        assert_ddp_matches_local(small_model, DATA[0])
    with pytest.raises(ValueError, match="steps must be between 1 and the 2 batches"):
        assert_ddp_matches_local(small_model, DATA, steps=3)
    with pytest.raises(ValueError, match="loss must be one of"):
        assert_ddp_matches_local(small_model, DATA, loss="hinge")
    with pytest.raises(ValueError, match="optimizer must name a class"):
        assert_ddp_matches_local(small_model, DATA, optimizer="Lion")
    with pytest.raises(TypeError, match="hook_state is pickled and sent to every rank"):
        assert_ddp_matches_local(small_model, DATA, comm_hook=mean_hook, hook_state=threading.Lock())


# -- strategies --------------------------------------------------------------------------------


@settings(max_examples=30, deadline=None, derandomize=True)
@given(world=strategies.world_sizes(), data=st.data())
def test_drawn_cases_are_consistent(world, data):
    case = data.draw(strategies.ddp_cases(world))
    x, y = case.data
    assert x.shape[1] % world == 0 and x.shape[:2] == y.shape
    assert x.shape[2] == case.spec["in_features"] and 0 <= y.min() and y.max() < case.spec["classes"]
    assert case.ddp_kwargs["find_unused_parameters"] == case.spec["unused_branch"]
    model = case.model_fn()
    names = [n for n, _ in model.named_parameters()]
    assert len(names) == 2 * (len(case.spec["hidden"]) + 1) + (2 if case.spec["unused_branch"] else 0)
    assert all(p.dtype == np.float64 for p in model.parameters())


@settings(max_examples=30, deadline=None, derandomize=True)
@given(data=st.data(), parts=st.integers(1, 6), world=st.integers(1, 4))
def test_worker_placements(data, parts, world):
    placement = data.draw(strategies.worker_placements(parts, world))
    assert len(placement) == parts and all(0 <= w < world for w in placement)
    if parts >= world:
        everywhere = data.draw(strategies.worker_placements(parts, world, use_every_worker=True))
        assert sorted(set(everywhere)) == list(range(world)) and len(everywhere) == parts
    else:
        with pytest.raises(ValueError, match="cannot use all"):
            data.draw(strategies.worker_placements(parts, world, use_every_worker=True))


def test_strategy_argument_errors():
    with pytest.raises(ValueError, match="subset of"):
        strategies.model_specs(activations=("swish",))
    with pytest.raises(ValueError, match="max_classes >= 2"):
        strategies.model_specs(max_classes=1)
    with pytest.raises(ValueError, match="dtype must be"):
        mlp_from_spec({"in_features": 1, "hidden": [], "classes": 2, "activation": "tanh"}, dtype="int8")


# -- the pool ------------------------------------------------------------------------------------


def rank_and_size():
    from minigrad_dist.mpi import load_mpi

    comm = load_mpi().COMM_WORLD
    return comm.Get_rank(), comm.Get_size()


def sleep_forever():
    import time

    time.sleep(3600)


def unpicklable_result():
    return lambda: None


def test_pool_runs_on_every_rank_and_recovers_from_a_timeout():
    pool = get_pool(3)
    assert pool.run(rank_and_size) == [(0, 3), (1, 3), (2, 3)]
    with pytest.raises(PoolTimeout, match="no result from the 3-rank pool within 0.5 s"):
        pool.run(sleep_forever, timeout=0.5)
    assert pool.run(rank_and_size) == [(0, 3), (1, 3), (2, 3)], "the pool must restart after a timeout"


def test_an_unpicklable_result_is_an_error_not_a_hang():
    with pytest.raises(RankFailure, match="unpicklable_result failed on rank"):
        get_pool(2).run(unpicklable_result, timeout=30)


def print_then_return(value):
    print(f"rank output before the result: {value}", flush=True)
    return value


def test_a_task_that_prints_just_before_its_result_is_answered_every_time():
    # The printed line and the result line often arrive in one read: the result must not be left waiting
    # in a buffer while the pool waits for more output (that failed as a false PoolTimeout).
    pool = get_pool(1)
    assert [pool.run(print_then_return, i, timeout=30)[0] for i in range(30)] == list(range(30))
    assert any("rank output before the result: 29" in line for line in pool.output_tail)
