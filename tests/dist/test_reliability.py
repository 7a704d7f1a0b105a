"""Reliability of the distributed layer: failing ranks, timeouts, debug checks, checkpoint and resume.

Multi-process cases run either in the persistent rank pool (``programs_reliability``)
or, when a rank must die or hang, as scripts under a real ``mpiexec``
(``scripts/``) with a timeout that kills every rank if the job does not end.
"""

from __future__ import annotations

import io
import os
import pickle
import random
import re
import sys
import threading
import time
import zipfile
from pathlib import Path

import numpy as np
import pytest

import minigrad as mg
import minigrad_dist as dist
from minigrad.serialization import CheckpointError
from minigrad_dist import checkpoint, debug, failure
from minigrad_dist.process_group import ProcessGroup
from tests.dist import programs_reliability as programs
from tests.dist.conftest import get_pool
from tests.dist.mpi_pool import run_script

SCRIPTS = Path(__file__).resolve().parent / "scripts"
JOB_DEADLINE_S = 10.0  # a failed job must be over within this (startup included)


def run_timed(script: str, world_size: int, args=(), env=None):
    start = time.monotonic()
    result = run_script(SCRIPTS / script, world_size, args, timeout=40, env=env)
    return result, time.monotonic() - start


# -- 1. a failing rank ends the job --------------------------------------------------------


@pytest.mark.timeout(60)
@pytest.mark.parametrize("world_size", [2, 3])
def test_exception_on_one_rank_ends_the_job_with_its_traceback(world_size):
    failing = world_size - 1
    result, elapsed = run_timed("ddp_failure.py", world_size, ["raise", failing, 3])
    out = result.stdout
    assert result.returncode != 0, out
    assert elapsed < JOB_DEADLINE_S, f"the job took {elapsed:.1f} s to end:\n{out}"
    assert f"[rank {failing}] Traceback (most recent call last):" in out, out
    assert f"[rank {failing}] RuntimeError: injected failure on rank {failing} at step 3" in out, out
    assert "finished rank" not in out


@pytest.mark.timeout(60)
def test_exception_in_a_thread_ends_the_job():
    result, elapsed = run_timed("ddp_failure.py", 2, ["thread", 0, 2])
    out = result.stdout
    assert result.returncode != 0, out
    assert elapsed < JOB_DEADLINE_S, out
    assert "[rank 0] minigrad_dist: uncaught RuntimeError on rank 0 in thread 'broken-helper'" in out, out
    assert "[rank 0] RuntimeError: injected failure in a thread of rank 0 at step 2" in out, out
    assert "finished rank" not in out


@pytest.mark.timeout(60)
@pytest.mark.parametrize("world_size", [2, 3])
def test_sigkill_of_one_rank_ends_the_job(world_size):
    result, elapsed = run_timed("ddp_failure.py", world_size, ["sigkill", 1, 3])
    out = result.stdout
    assert result.returncode != 0, out
    assert elapsed < JOB_DEADLINE_S, out
    assert "finished rank" not in out


@pytest.mark.timeout(60)
def test_hung_rank_makes_the_others_time_out_and_end_the_job():
    result, elapsed = run_timed("ddp_failure.py", 3, ["hang", 1, 3], env={"MINIGRAD_DIST_TIMEOUT": "2"})
    out = result.stdout
    assert result.returncode != 0, out
    assert elapsed < JOB_DEADLINE_S, out
    assert re.search(r"\[rank [02]\] TimeoutError: all_reduce did not complete within 2\.0 s", out), out
    assert "finished rank" not in out


@pytest.fixture
def fresh_hooks(monkeypatch):
    """Failure handlers uninstalled before and after; MPI hidden so no hook can abort pytest."""
    monkeypatch.delitem(sys.modules, "mpi4py.MPI", raising=False)
    failure.uninstall_failure_handlers()
    saved = sys.excepthook, threading.excepthook
    yield
    failure.uninstall_failure_handlers()
    sys.excepthook, threading.excepthook = saved


def test_install_is_idempotent_and_uninstall_restores(fresh_hooks):
    before = sys.excepthook, threading.excepthook
    failure.install_failure_handlers()
    failure.install_failure_handlers()
    assert sys.excepthook is failure._excepthook
    assert threading.excepthook is failure._threading_excepthook
    failure.uninstall_failure_handlers()
    assert (sys.excepthook, threading.excepthook) == before


def test_without_mpi_the_hook_defers_to_the_previous_one(fresh_hooks):
    seen = []
    sys.excepthook = lambda *info: seen.append(info[1])
    failure.install_failure_handlers()
    error = ValueError("no MPI here")
    sys.excepthook(ValueError, error, None)
    assert seen == [error]


def test_rank_traceback_format():
    try:
        raise KeyError("missing")
    except KeyError as exc:
        text = failure.format_rank_traceback(3, KeyError, exc, exc.__traceback__, thread_name="loader")
    lines = text.splitlines()
    assert all(line.startswith("[rank 3] ") for line in lines)
    assert "uncaught KeyError on rank 3 in thread 'loader'" in lines[0] and "MPI_Abort" in lines[0]
    assert lines[1] == "[rank 3] Traceback (most recent call last):"
    assert lines[-1] == "[rank 3] KeyError: 'missing'"


# -- 2. timeouts and debug mode -------------------------------------------------------------


@pytest.mark.timeout(60)
@pytest.mark.parametrize("op,late,world_size", [
    ("all_reduce", 1, 2), ("all_reduce", 2, 3), ("broadcast", 0, 2), ("barrier", 1, 2), ("all_gather", 0, 3),
])
def test_skipped_collective_raises_timeout_naming_it(op, late, world_size):
    timeout = 0.5
    spec = {"op": op, "late": late, "timeout": timeout}
    results = get_pool(world_size).run(programs.skipped_collective, spec)
    for rank, res in enumerate(results):
        if rank == late:
            assert res["message"] is None
            continue
        assert res["message"] is not None, f"rank {rank} did not time out"
        assert res["message"].startswith(f"{op} did not complete within {timeout:.1f} s"), res["message"]
        assert timeout <= res["waited"] < timeout + 3, res["waited"]


CALL = {"f3": "all_reduce(shape=(3,), float32, SUM)", "f4": "all_reduce(shape=(4,), float32, SUM)",
        "f5": "all_reduce(shape=(5,), float32, SUM)"}


@pytest.mark.timeout(60)
@pytest.mark.parametrize("world_size", [2, 3])
def test_debug_mode_shape_mismatch_raises_on_every_rank_showing_each_call(world_size):
    messages = get_pool(world_size).run(programs.debug_mismatch, {"case": "shape"})
    expected = "; ".join(f"rank {r}: {CALL['f' + str(3 + r)]}" for r in range(world_size))
    for message in messages:
        assert message is not None and expected in message, message
        assert "MINIGRAD_DIST_DEBUG=detail" in message


@pytest.mark.timeout(60)
@pytest.mark.parametrize("case,expected", [
    ("operation",
     "rank 0: broadcast(shape=(3,), float32, src=0); rank 1: all_reduce(shape=(3,), float32, SUM)"),
    ("dtype", "rank 0: all_reduce(shape=(3,), float32, SUM); rank 1: all_reduce(shape=(3,), float64, SUM)"),
    ("root", "rank 0: broadcast(shape=(2,), float64, src=0); rank 1: broadcast(shape=(2,), float64, src=1)"),
    ("reduce_op",
     "rank 0: all_reduce(shape=(2,), float64, SUM); rank 1: all_reduce(shape=(2,), float64, MAX)"),
])
def test_debug_mode_detects_each_kind_of_mismatch(case, expected):
    for message in get_pool(2).run(programs.debug_mismatch, {"case": case}):
        assert message is not None and expected in message, message


@pytest.mark.timeout(60)
def test_debug_mode_accepts_matching_calls():
    assert get_pool(3).run(programs.debug_mismatch, {"case": "matching"}) == [None, None, None]


@pytest.mark.timeout(60)
def test_debug_mode_checks_ddp_without_changing_its_results():
    for res in get_pool(2).run(programs.debug_ddp, {"stray": False}):
        assert res["same_as_without_debug"] and res["error"] is None


@pytest.mark.timeout(60)
def test_debug_mode_catches_a_stray_collective_against_a_ddp_bucket():
    n_params = 4 * 16 + 16 + 16 * 3 + 3
    results = get_pool(2).run(programs.debug_ddp, {"stray": True})
    expected = (f"rank 0: all_reduce(shape=(1,), float64, SUM); "
                f"rank 1: all_reduce(shape=({n_params},), float64, SUM)")
    for res in results:
        assert res["error"] is not None and expected in res["error"], res["error"]


@pytest.mark.timeout(60)
@pytest.mark.parametrize("world_size", [2, 3])
def test_debug_mode_from_the_environment(world_size):
    result, _ = run_timed("debug_mismatch.py", world_size, env={"MINIGRAD_DIST_DEBUG": "detail"})
    out = result.stdout
    assert result.returncode == 0, out
    expected = "; ".join(f"rank {r}: {CALL['f' + str(3 + r)]}" for r in range(world_size))
    for rank in range(world_size):
        assert f"rank {rank} debug level DETAIL" in out, out
        assert f"rank {rank} caught: MINIGRAD_DIST_DEBUG=detail: the ranks called different collectives" \
               f" on the same process group: {expected}." in out, out


@pytest.mark.timeout(60)
def test_debug_check_honours_the_collective_timeout():
    env = {"MINIGRAD_DIST_DEBUG": "detail", "MINIGRAD_DIST_TIMEOUT": "1"}
    result, elapsed = run_timed("debug_mismatch.py", 3, ["skip"], env=env)
    out = result.stdout
    assert result.returncode != 0, out
    assert elapsed < JOB_DEADLINE_S, out
    assert re.search(r"\[rank [01]\] TimeoutError: all_reduce\(shape=\(3,\), float32, SUM\) \(", out), out


@pytest.fixture
def debug_off():
    yield
    debug.set_debug_level("off")


def test_debug_level_switches_the_checks_each_collective_makes(debug_off):
    plain = ProcessGroup.__dict__["allreduce"]
    dist.set_debug_level("DETAIL")
    assert dist.get_debug_level() is dist.DebugLevel.DETAIL and debug.checking()
    dist.set_debug_level(dist.DebugLevel.OFF)
    assert not debug.checking()
    assert ProcessGroup.__dict__["allreduce"] is plain  # the collectives call the checker; nothing is patched


def test_debug_level_errors_and_environment(monkeypatch, debug_off):
    with pytest.raises(ValueError, match="unknown debug level 'verbose'; expected one of off, detail"):
        dist.set_debug_level("verbose")
    with pytest.raises(TypeError, match="DebugLevel or a level name, got int"):
        dist.set_debug_level(2)
    monkeypatch.setenv("MINIGRAD_DIST_DEBUG", "Detail")
    dist.set_debug_level_from_env()
    assert dist.get_debug_level() is dist.DebugLevel.DETAIL
    monkeypatch.setenv("MINIGRAD_DIST_DEBUG", "INFO")
    with pytest.raises(ValueError, match="MINIGRAD_DIST_DEBUG: unknown debug level 'INFO'"):
        dist.set_debug_level_from_env()


# -- 3. checkpoint and resume ----------------------------------------------------------------


@pytest.mark.timeout(120)
def test_resume_from_checkpoint_is_bitwise_equal_to_an_uninterrupted_run(tmp_path):
    spec = {"path": str(tmp_path / "train.ckpt"), "total": 8, "stop_at": 4}
    results = get_pool(2).run(programs.resume_equals_uninterrupted, spec)
    for rank, res in enumerate(results):
        assert res["step"] == 4 and res["extra"] == {"note": "mid-epoch"}
        assert res["epoch_after_load"] == 1  # 3 steps per epoch: step 4 is in epoch 1
        for name, want in res["straight"].items():
            assert res["resumed"][name].tobytes() == want.tobytes(), f"rank {rank}: {name} differs"
        # Without the generator states the dropout masks and noise differ: the test can tell.
        assert any(res["resumed_without_rng"][n].tobytes() != w.tobytes() for n, w in res["straight"].items())
    assert [p.tobytes() for p in results[0]["resumed"].values()] == \
        [p.tobytes() for p in results[1]["resumed"].values()]


@pytest.mark.timeout(120)
def test_resume_in_a_new_job_is_bitwise_equal_to_an_uninterrupted_run(tmp_path):
    path, total, stop_at = tmp_path / "train.ckpt", 7, 5
    for phase in ("straight", "first", "resume"):
        result, _ = run_timed("train_resume.py", 2, [phase, path, tmp_path / phase, total, stop_at])
        assert result.returncode == 0, result.stdout
    for rank in range(2):
        straight = np.load(tmp_path / f"straight.rank{rank}.npz")
        resumed = np.load(tmp_path / f"resume.rank{rank}.npz")
        stopped = np.load(tmp_path / f"first.rank{rank}.npz")
        for name in straight.files:
            assert resumed[name].tobytes() == straight[name].tobytes(), f"rank {rank}: {name}"
            assert stopped[name].tobytes() != straight[name].tobytes(), "the resumed job must do the rest"


@pytest.mark.timeout(60)
def test_failed_save_raises_on_every_rank_and_keeps_the_previous_checkpoint(tmp_path):
    results = get_pool(2).run(programs.save_fails_midway, {"path": str(tmp_path / "train.ckpt")})
    assert results[0]["error"] == "OSError: [Errno 28] No space left on device (injected)"
    assert results[1]["error"].startswith("RuntimeError: save_checkpoint(")
    assert "failed on another rank: rank 0: OSError: [Errno 28] No space left" in results[1]["error"]
    for res in results:
        assert res["step"] == 1 and res["extra"] == {"marker": "good"} and res["params_equal_good"]
    assert [p.name for p in tmp_path.iterdir()] == ["train.ckpt"], "the failed write left a temporary file"


@pytest.mark.timeout(60)
def test_rank_killed_during_save_leaves_the_previous_checkpoint_loadable(tmp_path):
    path, expected = tmp_path / "train.ckpt", tmp_path / "expected.npz"
    result, elapsed = run_timed("checkpoint_killed_midway.py", 2, [path, expected])
    assert result.returncode != 0 and "save survived" not in result.stdout, result.stdout
    leftovers = [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
    assert len(leftovers) == 1, f"rank 0 should have died mid-write, leaving its temporary file: {leftovers}"
    model = programs.DropoutMLP().double()
    opt = mg.optim.Adam(model.parameters(), lr=0.05)
    with pytest.raises(ValueError, match="saved by 2 ranks but 1 are loading it"):
        dist.load_checkpoint(path, model, opt)
    loaded = dist.load_checkpoint(path, model, opt, restore_rng=False)
    assert loaded == (2, {"marker": "good"})
    want = np.load(expected)
    for name, value in programs.params_of(model).items():
        assert value.tobytes() == want[name].tobytes(), name


@pytest.mark.timeout(60)
def test_unsafe_checkpoint_is_refused_on_every_rank(tmp_path):
    path = tmp_path / "evil.ckpt"
    path.write_bytes(pickle.dumps(_Evil(str(tmp_path / "pwned"))))
    for message in get_pool(2).run(programs.load_refused, {"path": str(path)}):
        assert message is not None and message.startswith("CheckpointError:") and "pickle" in message, message
    assert not (tmp_path / "pwned").exists()


class _Evil:
    """Unpickling this creates a file: the proof that a loader unpickled."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return open, (self.marker, "w")


def single_process_training(seed=0):
    mg.manual_seed(seed)
    model = programs.DropoutMLP().double()
    opt = mg.optim.Adam(model.parameters(), lr=0.05)
    sampler = dist.DistributedSampler(programs.DATASET_SIZE, num_replicas=1, rank=0, seed=7)
    return model, opt, sampler


def test_single_process_round_trip_restores_every_generator(tmp_path):
    model, opt, sampler = single_process_training()
    programs.train_steps(model, opt, sampler, 0, 2, programs.dataset())
    sampler.set_epoch(5)
    dist.save_checkpoint(tmp_path / "c.ckpt", model, opt, sampler, step=2, extra={"lr": [0.05, (1, "a")]})
    draws = _draw_everything()
    model2, opt2, sampler2 = single_process_training(seed=1)
    loaded = dist.load_checkpoint(tmp_path / "c.ckpt", model2, opt2, sampler2)
    assert loaded.step == 2 and loaded.extra == {"lr": [0.05, (1, "a")]} and sampler2.epoch == 5
    assert _draw_everything() == draws
    for (name, p), p2 in zip(model.named_parameters(), model2.parameters()):
        assert p.array.tobytes() == p2.array.tobytes(), name
    state, state2 = opt.state_dict()["state"], opt2.state_dict()["state"]
    for index in state:
        for key in ("step", "exp_avg", "exp_avg_sq"):
            assert state[index][key].array.tobytes() == state2[index][key].array.tobytes(), (index, key)


def _draw_everything():
    return (mg.rand(3).array.tolist(), np.random.standard_normal(2).tolist(), random.random())


def test_error_during_save_keeps_the_previous_checkpoint(tmp_path, monkeypatch):
    model, opt, sampler = single_process_training()
    path = tmp_path / "c.ckpt"
    dist.save_checkpoint(path, model, opt, sampler, step=1)
    programs.train_steps(model, opt, sampler, 0, 1, programs.dataset())

    def disk_full(archive, entry, array):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("minigrad.serialization._write_array", disk_full)
    with pytest.raises(OSError, match="No space left"):
        dist.save_checkpoint(path, model, opt, sampler, step=2)
    monkeypatch.undo()
    fresh, fresh_opt, fresh_sampler = single_process_training(seed=5)
    assert dist.load_checkpoint(path, fresh, fresh_opt, fresh_sampler).step == 1
    assert os.listdir(tmp_path) == ["c.ckpt"]


def test_object_array_in_checkpoint_is_refused(tmp_path):
    model, opt, sampler = single_process_training()
    good, evil = tmp_path / "good.ckpt", tmp_path / "evil.ckpt"
    dist.save_checkpoint(good, model, opt, sampler)
    with zipfile.ZipFile(good) as src, zipfile.ZipFile(evil, "w") as dst:
        for info in src.infolist():
            data = src.read(info)
            if info.filename == "arrays/0.npy":
                buffer = io.BytesIO()
                np.save(buffer, np.array([_Evil(str(tmp_path / "pwned"))], dtype=object), allow_pickle=True)
                data = buffer.getvalue()
            dst.writestr(info, data)
    with pytest.raises(CheckpointError, match="object-dtype array"):
        dist.load_checkpoint(evil, *single_process_training())
    assert not (tmp_path / "pwned").exists()


def test_foreign_files_are_refused_clearly(tmp_path):
    plain = tmp_path / "plain.ckpt"
    mg.save({"weights": np.zeros(2)}, plain)
    with pytest.raises(CheckpointError, match="not a training checkpoint written by save_checkpoint"):
        dist.load_checkpoint(plain, *single_process_training())
    pickled = tmp_path / "pickled.ckpt"
    pickled.write_bytes(pickle.dumps({"model": {}}))
    with pytest.raises(CheckpointError, match="is a pickle file"):
        dist.load_checkpoint(pickled, *single_process_training())
    with pytest.raises(FileNotFoundError):
        dist.load_checkpoint(tmp_path / "missing.ckpt", *single_process_training())


def test_checkpoint_argument_errors(tmp_path):
    model, opt, sampler = single_process_training()
    path = tmp_path / "c.ckpt"
    with pytest.raises(TypeError, match="model must be a minigrad.nn.Module"):
        dist.save_checkpoint(path, {"w": 1}, opt)
    with pytest.raises(TypeError, match="optimizer must be a minigrad.optim.Optimizer"):
        dist.save_checkpoint(path, model, "adam")
    with pytest.raises(ValueError, match="step must be >= 0, got -1"):
        dist.save_checkpoint(path, model, opt, step=-1)
    with pytest.raises(TypeError, match="cannot store an object of type"):
        dist.save_checkpoint(path, model, opt, extra={"f": print})
    assert not path.exists()
    dist.save_checkpoint(path, model, None, None)
    with pytest.raises(ValueError, match="holds no optimizer state"):
        dist.load_checkpoint(path, model, opt)
    with pytest.raises(ValueError, match="holds no sampler state"):
        dist.load_checkpoint(path, model, None, sampler)
    dist.save_checkpoint(path, model, opt, sampler)
    other_seed = dist.DistributedSampler(programs.DATASET_SIZE, num_replicas=1, rank=0, seed=8)
    with pytest.raises(ValueError, match="saved with sampler seed 7 but the sampler's seed is 8"):
        dist.load_checkpoint(path, model, opt, other_seed)
    assert checkpoint.load_checkpoint(path, model, opt, sampler).step == 0
