"""Megatron tensor parallelism on 1, 2 and 4 real MPI ranks, compared with one process on the full model.

Hypothesis draws the mesh ``(dp, tp)``, the MLP's widths, the batch, biases,
activation and seed. The ranks cut the full model into a
``TensorParallelMLP`` over the ``tp`` group and split the batch over the
``dp`` group (gradients averaged over it by hand); the pytest process trains
the full model on the full batch. Outputs, input gradients, parameter
gradients (the shards put back together) and the parameters after several
SGD-with-momentum steps must equal the local ones within 1e-10 (float64).
"""

from __future__ import annotations

import pickle
import socket

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from tests.dist.conftest import get_pool
from tests.dist.tensor_parallel import programs_tensor_parallel as programs

pytestmark = pytest.mark.timeout(300)

PHASES = [Phase.explicit, Phase.reuse, Phase.generate]  # no shrinking: a failing case restarts the pool
MESHES = {1: [(1, 1)], 2: [(1, 2), (2, 1)], 4: [(2, 2), (1, 4)]}


@st.composite
def cases(draw, world_size):
    dp, tp = draw(st.sampled_from(MESHES[world_size]))
    return {
        "world_size": world_size,
        "dp": dp,
        "tp": tp,
        "in": draw(st.integers(1, 4)),
        "hidden": tp * draw(st.integers(1, 3)),
        "out": draw(st.integers(1, 3)),
        "batch": dp * draw(st.integers(1, 3)),
        "bias": draw(st.booleans()),
        "activation": draw(st.sampled_from(sorted(programs.ACTIVATIONS))),
        "seed": draw(st.integers(0, 2**32 - 1)),
        "steps": 3,
        "lr": 0.1,
        "momentum": 0.9,
    }


def close(got, want, what):
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12, err_msg=what)


def put_together(per_rank, case, which):
    """The full parameters (or gradients) from one dp replica's tp shards, in ``local_training``'s order.

    Column shards (fc1's weight and bias) join along dim 0, row shards (fc2's
    weight) along dim 1; fc2's bias is replicated: every shard must equal it.
    """
    axes = [0, 0, 1, None] if case["bias"] else [0, 1]
    joined = []
    for i, axis in enumerate(axes):
        shards = [result[which][i] for result in per_rank]
        if axis is None:
            for shard in shards[1:]:
                np.testing.assert_array_equal(shard, shards[0])
            joined.append(shards[0])
        else:
            joined.append(np.concatenate(shards, axis=axis))
    return joined


def check_training(case):
    check_results(get_pool(case["world_size"]).run(programs.tp_training, case, timeout=120), case)


def check_results(results, case):
    """Each rank's rows of the output and input gradient, and each dp replica's gathered shards, against local."""
    want = programs.local_training(case)
    per_rank_rows = case["batch"] // case["dp"]
    for r, result in enumerate(results):
        d, t = result["coordinate"]
        assert (d, t) == (r // case["tp"], r % case["tp"]), (r, case)
        rows = slice(d * per_rank_rows, (d + 1) * per_rank_rows)
        close(result["output"], want["output"][rows], f"output, rank {r}, {case}")
        # Each dp replica's loss is the mean over its rows: dp times the full batch's weight per row.
        close(result["input_grad"], case["dp"] * want["input_grad"][rows], f"input grad, rank {r}, {case}")
    for d in range(case["dp"]):
        replica = results[d * case["tp"] : (d + 1) * case["tp"]]
        for which, want_list in (("grads", want["grads"]), ("params", want["params"])):
            for i, (got, expected) in enumerate(zip(put_together(replica, case, which), want_list)):
                close(got, expected, f"{which}[{i}], dp replica {d}, {case}")


@settings(max_examples=20, deadline=None, derandomize=True, phases=PHASES, suppress_health_check=list(HealthCheck))
@given(data=st.data())
@pytest.mark.parametrize("world_size", [1, 2])
def test_tp_mlp_matches_local_training_on_one_and_two_ranks(world_size, data):
    """Forward, input and parameter gradients, and parameters after 3 SGD-momentum steps equal the local model's."""
    check_training(data.draw(cases(world_size)))


@settings(max_examples=5, deadline=None, derandomize=True, phases=PHASES, suppress_health_check=list(HealthCheck))
@given(case=cases(4))
def test_tp_mlp_matches_local_training_on_four_ranks(case):
    """As above on 4 ranks, as a (2, 2) dp x tp mesh or 4-way tensor parallel."""
    check_training(case)


@settings(max_examples=6, deadline=None, derandomize=True, phases=PHASES, suppress_health_check=list(HealthCheck))
@given(data=st.data())
@pytest.mark.parametrize("world_size", [2, 4])
def test_parallelize_module_matches_local_training(world_size, data):
    """parallelize_module on an nn.Sequential MLP (ranks other than 0 start from other weights: rank 0's are
    broadcast), both layout choices: the same outputs, gradients and trained parameters as the local model."""
    case = data.draw(cases(world_size).filter(lambda c: c["dp"] == 1))
    case["layouts"] = data.draw(st.sampled_from(["default", "replicated"]))
    results = get_pool(world_size).run(programs.plan_training, case, timeout=120)
    assert all(r["types"] == ["ColumnParallelLinear", case_activation(case), "RowParallelLinear"] for r in results)
    check_results(results, case)


def case_activation(case):
    return type(programs.ACTIVATIONS[case["activation"]]()).__name__


@pytest.mark.parametrize("world_size", [2, 4])
def test_gather_output_and_scatter_input_match_local(world_size):
    """ColumnParallelLinear(gather_output=True) into RowParallelLinear(input_is_parallel=False), and
    gather(scatter(x)) == x with the identity's gradient, on every rank."""
    case = {
        "world_size": world_size,
        "dp": 1,
        "tp": world_size,
        "in": 2 * world_size,
        "hidden": 2 * world_size,
        "out": 3,
        "batch": 3,
        "bias": True,
        "activation": "tanh",
        "seed": 7,
        "steps": 1,
        "lr": 0.1,
        "momentum": 0.9,
    }
    x = programs.data(case)[0][0]
    fc1, activation, fc2 = programs.full_model(case)
    import minigrad as mg  # noqa: PLC0415  (the reference only)

    x_local = mg.tensor(x, requires_grad=True)
    y = fc2(activation(fc1(x_local)))
    (y**2).sum().backward()
    for r, result in enumerate(get_pool(world_size).run(programs.gather_scatter_roundtrip, case, timeout=60)):
        close(result["output"], y.detach().numpy(), f"output, rank {r}")
        np.testing.assert_array_equal(result["roundtrip"], x)
        close(result["input_grad"], x_local.grad.numpy() + x, f"input grad, rank {r}")


@st.composite
def vocab_cases(draw, world_size):
    vocabulary = world_size * draw(st.integers(1, 4))
    return {
        "world_size": world_size,
        "vocab": vocabulary,
        "dim": draw(st.integers(1, 4)),
        "batch": draw(st.integers(1, 3)),
        "seq": draw(st.integers(1, 3)),
        "padding_idx": draw(st.none() | st.integers(0, vocabulary - 1)),
        "ignore": draw(st.booleans()),
        "reduction": draw(st.sampled_from(["mean", "sum", "none"])),
        "seed": draw(st.integers(0, 2**32 - 1)),
    }


@settings(max_examples=10, deadline=None, derandomize=True, phases=PHASES, suppress_health_check=list(HealthCheck))
@given(data=st.data())
@pytest.mark.parametrize("world_size", [1, 2, 4])
def test_vocab_parallel_embedding_and_cross_entropy_match_local(world_size, data):
    """Embedding and head split along the vocabulary, with the vocab-parallel cross-entropy: loss and the
    gradients of the embedding rows and the head (shards joined) equal the full model's with F.cross_entropy."""
    case = data.draw(vocab_cases(world_size if world_size < 4 else 4))
    want = programs.vocab_local(case)
    results = get_pool(world_size).run(programs.vocab_parallel, case, timeout=120)
    for r, result in enumerate(results):
        close(result["loss"].reshape(-1), want["loss"].reshape(-1), f"loss, rank {r}, {case}")
    for i, expected in enumerate(want["grads"]):
        close(np.concatenate([result["grads"][i] for result in results]), expected, f"grads[{i}], {case}")


@st.composite
def attention_cases(draw, world_size):
    return {
        "world_size": world_size,
        "heads": world_size * draw(st.integers(1, 2)),
        "head_dim": draw(st.integers(1, 3)),
        "batch": draw(st.integers(1, 2)),
        "length": draw(st.integers(1, 4)),
        "bias": draw(st.booleans()),
        "batch_first": draw(st.booleans()),
        "causal": draw(st.booleans()),
        "seed": draw(st.integers(0, 2**32 - 1)),
    }


def join_attention_grads(results, case):
    """The full ``nn.MultiheadAttention`` gradients from the ranks' head shards."""
    width = case["heads"] // case["world_size"] * case["head_dim"]
    joined = {}
    for name, mha_name in (("qkv.weight", "in_proj_weight"), ("qkv.bias", "in_proj_bias")):
        if name in results[0]["grads"]:
            # each rank's rows: its heads of W_Q, then of W_K, then of W_V
            parts = [[r["grads"][name][i * width : (i + 1) * width] for r in results] for i in range(3)]
            joined[mha_name] = np.concatenate([np.concatenate(p) for p in parts])
    joined["out_proj.weight"] = np.concatenate([r["grads"]["out_proj.weight"] for r in results], axis=1)
    if "out_proj.bias" in results[0]["grads"]:
        joined["out_proj.bias"] = results[0]["grads"]["out_proj.bias"]
        for r in results:
            np.testing.assert_array_equal(r["grads"]["out_proj.bias"], joined["out_proj.bias"])
    return joined


@settings(max_examples=10, deadline=None, derandomize=True, phases=PHASES, suppress_health_check=list(HealthCheck))
@given(data=st.data())
@pytest.mark.parametrize("world_size", [1, 2, 4])
def test_tp_self_attention_matches_multihead_attention(world_size, data):
    """Heads split over the ranks: output, input gradient and the parameters' gradients (shards joined) equal
    nn.MultiheadAttention's (causal or not, either layout, with or without biases)."""
    case = data.draw(attention_cases(world_size))
    want = programs.attention_local(case)
    results = get_pool(world_size).run(programs.attention_parallel, case, timeout=120)
    for r, result in enumerate(results):
        close(result["output"], want["output"], f"output, rank {r}, {case}")
        close(result["input_grad"], want["input_grad"], f"input grad, rank {r}, {case}")
    joined = join_attention_grads(results, case)
    assert sorted(joined) == sorted(want["grads"])
    for name, expected in want["grads"].items():
        close(joined[name], expected, f"{name}, {case}")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_parallelize_module_matches_pytorch(tmp_path):
    """The same plans with PyTorch's parallelize_module (two gloo processes, DTensor shards), both layout
    choices and a sequence-parallel block (SequenceParallel LayerNorm, Shard(1) layouts): the same outputs,
    input gradients, local shard gradients and trained local shards, rank by rank."""
    torch_mp = pytest.importorskip("torch.multiprocessing")
    base = {
        "world_size": 2, "dp": 1, "tp": 2, "in": 3, "hidden": 4, "out": 2, "batch": 3, "bias": True,
        "activation": "tanh", "seed": 11, "steps": 3, "lr": 0.1, "momentum": 0.9,
    }  # fmt: skip
    sequence_parallel = {
        "world_size": 2, "width": 3, "hidden": 4, "batch": 2, "seq": 4, "activation": "gelu", "seed": 13,
        "steps": 3, "lr": 0.05, "momentum": 0.9,
    }  # fmt: skip
    cases = [
        {**base, "layouts": "default"},
        {**base, "layouts": "replicated", "activation": "gelu", "seed": 12},
        sequence_parallel,
    ]
    torch_mp.spawn(programs.torch_plan_training, args=(2, _free_port(), cases, str(tmp_path)), nprocs=2)
    theirs = [pickle.loads((tmp_path / f"{r}.pkl").read_bytes()) for r in range(2)]
    for c, case in enumerate(cases):
        program = programs.sp_parallel if "seq" in case else programs.plan_training
        ours = get_pool(2).run(program, case, timeout=60)
        for r in range(2):
            for key in ("output", "input_grad"):
                close(ours[r][key], theirs[r][c][key], f"{key}, rank {r}, {case}")
            for key in ("grads", "params"):
                assert len(ours[r][key]) == len(theirs[r][c][key])
                for i, (mine, torch_value) in enumerate(zip(ours[r][key], theirs[r][c][key])):
                    assert mine.shape == torch_value.shape, (key, i, r)
                    close(mine, torch_value, f"{key}[{i}], rank {r}, {case}")


@pytest.mark.parametrize("world_size", [2, 4])
def test_double_backward_through_f_and_g_matches_local(world_size):
    """create_graph=True through the TP MLP (f's backward is g, g's is f): second-order gradients equal local."""
    case = {
        "world_size": world_size, "dp": 1, "tp": world_size, "in": 3, "hidden": 2 * world_size, "out": 2,
        "batch": 2, "bias": True, "activation": "tanh", "seed": 5, "steps": 1, "lr": 0.1, "momentum": 0.9,
    }  # fmt: skip
    want = programs.double_backward_local(case)
    results = get_pool(world_size).run(programs.double_backward_parallel, case, timeout=60)
    for r, result in enumerate(results):
        close(result["input_grad"], want["input_grad"], f"input grad, rank {r}")
    for i, (got, expected) in enumerate(zip(put_together(results, case, "grads"), want["grads"])):
        close(got, expected, f"grads[{i}]")


@st.composite
def sp_cases(draw, world_size):
    return {
        "world_size": world_size,
        "width": draw(st.integers(2, 4)),
        "hidden": world_size * draw(st.integers(1, 2)),
        "batch": draw(st.integers(1, 2)),
        "seq": world_size * draw(st.integers(1, 2)),
        "activation": draw(st.sampled_from(sorted(programs.ACTIVATIONS))),
        "seed": draw(st.integers(0, 2**32 - 1)),
        "steps": 3,
        "lr": 0.05,
        "momentum": 0.9,
    }


@settings(max_examples=8, deadline=None, derandomize=True, phases=PHASES, suppress_health_check=list(HealthCheck))
@given(data=st.data())
@pytest.mark.parametrize("world_size", [2, 4])
def test_sequence_parallel_block_matches_local_training(world_size, data):
    """LayerNorm (SequenceParallel) -> Colwise(input Shard(1)) -> activation -> Rowwise(output Shard(1)), each rank
    on its slice of the sequence: outputs, input gradients, gradients (LayerNorm's summed over the ranks, the
    linear layers' shards joined) and parameters after 3 SGD-momentum steps equal the local model's."""
    case = data.draw(sp_cases(world_size))
    want = programs.sp_local(case)
    results = get_pool(world_size).run(programs.sp_parallel, case, timeout=120)
    per_rank = case["seq"] // world_size
    for r, result in enumerate(results):
        positions = slice(r * per_rank, (r + 1) * per_rank)
        close(result["output"], want["output"][:, positions], f"output, rank {r}, {case}")
        close(result["input_grad"], want["input_grad"][:, positions], f"input grad, rank {r}, {case}")
    axes = [None, None, 0, 0, 1, None]  # LayerNorm weight and bias, fc1 (column), fc2 weight (row), fc2 bias
    for which in ("grads", "params"):
        for i, axis in enumerate(axes):
            shards = [result[which][i] for result in results]
            got = shards if axis is None else [np.concatenate(shards, axis=axis)]
            for g in got:
                close(g, want[which][i], f"{which}[{i}], {case}")
