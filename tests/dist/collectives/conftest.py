"""The collectives tests' PyTorch oracle: the exception types torch.distributed raises for the calls we compare."""

from __future__ import annotations

import pytest

from tests.dist.programs_common import message_of


@pytest.fixture(scope="module")
def torch_errors(tmp_path_factory):
    """The exception type names PyTorch raises for the calls we compare (one-process gloo group)."""
    torch = pytest.importorskip("torch")
    tdist = pytest.importorskip("torch.distributed")
    store = tmp_path_factory.mktemp("torch_store") / "store"
    tdist.init_process_group("gloo", init_method=f"file://{store}", world_size=1, rank=0)
    try:
        calls = {
            "no_dst": lambda: tdist.send(torch.ones(2)),
            "send_to_self": lambda: tdist.send(torch.ones(2), dst=0),
            "negative_tag": lambda: tdist.isend(torch.ones(2), dst=1, tag=-1),
            "bad_op": lambda: tdist.P2POp(tdist.send, torch.ones(2), 0),
            "a2a_dtypes": lambda: tdist.all_to_all([torch.zeros(2)], [torch.zeros(2, dtype=torch.float64)]),
            "a2a_list_length": lambda: tdist.all_to_all([torch.zeros(2)] * 2, [torch.zeros(2)]),
            "single_split_sum": lambda: tdist.all_to_all_single(torch.zeros(1), torch.zeros(1), [1], [2]),
            "single_dtypes": lambda: tdist.all_to_all_single(torch.zeros(2), torch.zeros(2, dtype=torch.float64)),
        }
        errors = {name: message_of(call) for name, call in calls.items()}
    finally:
        tdist.destroy_process_group()
    for name, kwargs in {
        "bad_init_method": dict(backend="gloo", init_method="carrier-pigeon://x", world_size=1, rank=0),
        "rank_not_int": dict(backend="gloo", init_method=f"file://{store}2", world_size=1, rank="0"),
    }.items():
        errors[name] = message_of(lambda kwargs=kwargs: tdist.init_process_group(**kwargs))
        if tdist.is_initialized():
            tdist.destroy_process_group()
    return {name: error[0] for name, error in errors.items() if error is not None}
