"""``python -m minigrad_dist.run`` (torchrun's surface over mpiexec) and the per-rank ``minigrad_dist.launch``."""

from __future__ import annotations

import json
import os
import pickle
import signal
import subprocess
import sys

import pytest

from minigrad_dist.launch import launcher_environment
from minigrad_dist.run import parse_args
from tests.dist.mpi_pool import ROOT, mpi_env

pytestmark = pytest.mark.timeout(120)

SCRIPT = "tests/dist/scripts/launch_env.py"


def run_cli(*args, timeout=60):
    """``python -m minigrad_dist.run args`` from the repository root; kills the whole job after ``timeout``."""
    env = mpi_env()
    env.pop("OMP_NUM_THREADS")  # the launcher sets it
    proc = subprocess.Popen([sys.executable, "-m", "minigrad_dist.run", *map(str, args)], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        pytest.fail(f"minigrad_dist.run {args} did not finish in {timeout} s:\n{out}\n{err}")
    return proc.returncode, out, err


def reports(directory):
    """The ranks' reports (``rank-R.json`` files), in rank order."""
    files = sorted(directory.glob("rank-*.json"), key=lambda f: int(f.stem.split("-")[1]))
    return [json.loads(f.read_text()) for f in files]


def test_ranks_see_torchruns_environment_and_their_arguments(tmp_path):
    code, out, err = run_cli("--nproc-per-node", 3, SCRIPT, "--foo", "bar", "--backend", "gloo",
                             "--report-dir", tmp_path)
    assert code == 0, out + err
    ranks = reports(tmp_path)
    assert [r["RANK"] for r in ranks] == ["0", "1", "2"]
    for r in ranks:
        assert r["WORLD_SIZE"] == "3" and r["LOCAL_WORLD_SIZE"] == "3" and r["LOCAL_RANK"] == r["RANK"]
        assert r["GROUP_RANK"] == "0" and r["MASTER_ADDR"] == "127.0.0.1" and r["MASTER_PORT"] == "29500"
        assert r["OMP_NUM_THREADS"] == "1", "like torchrun, one OpenMP thread per rank when ranks share the machine"
        assert r["argv"] == ["--foo", "bar", "--backend", "gloo", "--report-dir", str(tmp_path)]
        assert r["name"] == "__main__"
        assert r["path0"] == str(ROOT / "tests" / "dist" / "scripts"), "sys.path[0] is the script's directory"
        assert r["total"] == 3.0 and r["backend"] == "gloo"
    assert err.count("backend 'gloo' runs on MPI") == 1, "rank 0 says once that gloo runs on MPI"


def test_module_mode_underscore_options_and_master_address(tmp_path):
    code, out, err = run_cli("--nproc_per_node=2", "--master_addr", "10.0.0.1", "--master-port", "1234", "-m",
                             "tests.dist.scripts.launch_env", "--backend", "mpi", "--report-dir", tmp_path)
    assert code == 0, out + err
    ranks = reports(tmp_path)
    assert len(ranks) == 2 and all(r["MASTER_ADDR"] == "10.0.0.1" and r["MASTER_PORT"] == "1234" for r in ranks)
    assert all(r["backend"] == "mpi" and r["path0"] == str(ROOT) for r in ranks)
    assert "runs on MPI" not in err


def test_no_python_runs_an_executable_with_the_rank_variables(tmp_path):
    code, out, err = run_cli("--nproc-per-node", 2, "--no-python", "sh", "-c",
                             'printenv LOCAL_RANK WORLD_SIZE > "$0/rank-$RANK"', tmp_path)
    assert code == 0, err
    assert [(tmp_path / f"rank-{r}").read_text().split() for r in (0, 1)] == [["0", "2"], ["1", "2"]]


def test_exit_status_of_a_failing_rank_is_the_jobs(tmp_path):
    code, out, err = run_cli("--nproc-per-node", 2, SCRIPT, "--fail-rank", 1, "--exit-code", 3,
                             "--report-dir", tmp_path)
    assert code == 3, out + err


def test_an_exception_on_one_rank_fails_the_job_with_its_traceback(tmp_path):
    code, out, err = run_cli("--nproc-per-node", 2, SCRIPT, "--raise-on", 1, "--report-dir", tmp_path)
    assert code != 0
    assert "[rank 1]" in out + err and "launch_env was asked to fail here" in out + err


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--nnodes", "2", SCRIPT], "mpiexec (or srun)"),
        (["--nproc-per-node", "0", SCRIPT], "positive int"),
        (["--max-restarts", "1", SCRIPT], "not supported"),
        (["--node-rank", "1", SCRIPT], "node rank is 0"),
    ],
)
def test_unsupported_options_are_refused_with_the_way_out(args, words, capsys):
    with pytest.raises(SystemExit) as exit_info:
        parse_args(args)
    assert exit_info.value.code == 2 and words in capsys.readouterr().err


def test_launch_reads_open_mpi_and_slurm_variables():
    ompi = {"OMPI_COMM_WORLD_RANK": "5", "OMPI_COMM_WORLD_SIZE": "8", "OMPI_COMM_WORLD_LOCAL_RANK": "1",
            "OMPI_COMM_WORLD_LOCAL_SIZE": "4"}
    assert launcher_environment(ompi) == {"RANK": "5", "WORLD_SIZE": "8", "LOCAL_RANK": "1", "LOCAL_WORLD_SIZE": "4"}
    slurm = {"SLURM_PROCID": "3", "SLURM_NTASKS": "4", "SLURM_LOCALID": "0", "SLURM_NTASKS_PER_NODE": "1"}
    assert launcher_environment(slurm)["RANK"] == "3" and launcher_environment(slurm)["LOCAL_WORLD_SIZE"] == "1"


# -- minigrad_dist.multiprocessing: spawn and Process from a plain `python script.py` --------------------

SPAWN_SCRIPT = "tests/dist/scripts/spawn_tutorial.py"


def run_python(*args, timeout=90):
    """``python args`` from the repository root (no mpiexec); kills its whole session after ``timeout``."""
    proc = subprocess.Popen([sys.executable, *map(str, args)], cwd=ROOT, env=mpi_env(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        pytest.fail(f"python {args} did not finish in {timeout} s:\n{out}\n{err}")
    return proc.returncode, out, err


def test_spawn_runs_fn_on_every_rank_of_one_mpi_world(tmp_path):
    code, out, err = run_python(SPAWN_SCRIPT, "spawn", tmp_path)
    assert code == 0, out + err
    ranks = reports(tmp_path)
    assert [r["rank"] for r in ranks] == [0, 1, 2], "fn receives its rank first, and it is the MPI rank"
    assert all(r["mpi_world"] == 3 and r["sum"] == [6.0, 6.0] for r in ranks)
    assert [r["token"] for r in ranks] == [3.0, 2.0, 3.0], "the token went round the ring"
    assert len({r["pid"] for r in ranks} | {os.getpid()}) == 4, "three new processes; the parent is not a rank"
    assert json.loads((tmp_path / "result.json").read_text()) == {"ok": True}


def test_one_process_per_rank_as_the_tutorial_starts_them(tmp_path):
    code, out, err = run_python(SPAWN_SCRIPT, "process", tmp_path)
    assert code == 0, out + err
    assert [r["tensor"] for r in reports(tmp_path)] == [[1.0], [1.0]]
    assert json.loads((tmp_path / "result.json").read_text()) == {"exitcodes": [0, 0], "alive": [False, False]}


def test_spawn_reports_a_failing_rank_like_pytorch(tmp_path):
    code, out, err = run_python(SPAWN_SCRIPT, "failures", tmp_path)
    assert code == 0, out + err
    result = json.loads((tmp_path / "result.json").read_text())
    raised = result["raised"]
    assert raised["index"] == 1 and isinstance(raised["pid"], int)
    assert "-- Process 1 terminated with the following error:" in raised["msg"]
    assert "ValueError: rank 1 cannot go on" in raised["msg"] and "fail_on_one" in raised["msg"]
    assert result["exited"] == {"index": 0, "code": 3, "msg": "process 0 terminated with exit code 3"}
    try:
        pickle.dumps(lambda rank: None)
    except Exception as error:  # noqa: BLE001  (Python's own error for the same lambda)
        python_type = type(error).__name__
    assert result["lambda"]["type"] in (python_type, "AttributeError")
    assert "top level of a module" in result["lambda"]["notes"][0]
    assert result["context"] == {"pids": 2, "early": False, "final": True}
    assert result["process_exitcode"] == 1
    assert "Process Process-" in err and "ValueError: rank 1 cannot go on" in err, "a Process prints its traceback"
    assert "BAD TERMINATION" not in out + err, "the job is stopped quietly"


def test_spawn_without_the_main_guard_is_refused_in_the_new_ranks():
    code, out, err = run_python("tests/dist/scripts/spawn_unguarded.py")
    assert code == 0, out + err
    assert "REFUSED: True" in out


def test_process_exceptions_mirror_pytorchs():
    from minigrad_dist import multiprocessing as mp

    torch_mp = pytest.importorskip("torch.multiprocessing")
    ours = mp.ProcessExitedException("process 2 terminated with signal SIGKILL", 2, 1234, 9, "SIGKILL")
    theirs = torch_mp.ProcessExitedException("process 2 terminated with signal SIGKILL", 2, 1234, 9, "SIGKILL")
    for name in ("error_index", "error_pid", "exit_code", "signal_name"):
        assert getattr(ours, name) == getattr(theirs, name)
    assert str(ours) == str(theirs)
    assert pickle.loads(pickle.dumps(ours)).exit_code == 9
    raised = mp.ProcessRaisedException("boom", 1, 42)
    assert (raised.error_index, raised.error_pid, str(raised)) == (1, 42, "boom")
    assert issubclass(mp.ProcessRaisedException, mp.ProcessException)
    with pytest.raises(ValueError, match="spawn"):
        mp.set_start_method("fork")
    with pytest.raises(ValueError, match="nprocs"):
        mp.spawn(print, nprocs=0)


@pytest.mark.parametrize("variable", ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE"])
def test_another_mpis_launcher_is_a_clear_error_not_a_world_per_process(variable):
    # Open MPI's mpiexec starting a program whose mpi4py uses MPICH (or the reverse) gives each process
    # a world of one: each would train alone, silently. The launcher's own count gives it away.
    program = (
        "import minigrad_dist as dist\n"
        "try:\n"
        "    dist.init_process_group()\n"
        "except ValueError as error:\n"
        "    print(error)\n"
        "else:\n"
        "    print('initialized a world of', dist.get_world_size())\n"
    )
    env = dict(mpi_env(), **{variable: "3"})
    done = subprocess.run([sys.executable, "-W", "ignore", "-c", program], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=60)
    assert f"the launcher started 3 processes ({variable}=3) but MPI sees a world of 1" in done.stdout, done
    assert "mpiexec" in done.stdout
