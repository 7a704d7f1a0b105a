"""minigrad/settings.py and minigrad/backends.py against PyTorch's process-wide switches."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import minigrad as mg


@pytest.fixture(params=["minigrad", "torch"])
def lib(request):
    return mg if request.param == "minigrad" else torch


def test_rng_state_round_trip_replays_the_stream(lib):
    lib.manual_seed(11)
    state = lib.get_rng_state()
    assert state.dtype == lib.uint8 and state.ndim == 1
    first = lib.rand(5)
    lib.set_rng_state(state)
    np.testing.assert_array_equal(lib.rand(5).numpy(), first.numpy())


def test_set_rng_state_refuses_other_things(lib):
    with pytest.raises(TypeError):
        lib.set_rng_state([1, 2, 3])


def test_initial_seed_is_the_manual_seed(lib):
    lib.manual_seed(1234)
    assert lib.initial_seed() == 1234
    fresh = lib.seed()
    assert isinstance(fresh, int) and lib.initial_seed() == fresh


def test_inference_mode_turns_recording_off_and_back(lib):
    x = lib.ones(2, requires_grad=True)
    with lib.inference_mode():
        assert not (x * 2).requires_grad and lib.is_inference_mode_enabled()
    assert (x * 2).requires_grad
    with lib.inference_mode(False):
        assert (x * 2).requires_grad

    @lib.inference_mode()
    def doubled(t):
        return t * 2

    @lib.inference_mode
    def tripled(t):
        return t * 3

    assert not doubled(x).requires_grad and not tripled(x).requires_grad


def test_deterministic_flag_reads_back(lib):
    before = lib.are_deterministic_algorithms_enabled()
    try:
        lib.use_deterministic_algorithms(True)
        assert lib.are_deterministic_algorithms_enabled()
        with pytest.raises(TypeError):
            lib.use_deterministic_algorithms("yes")
    finally:
        lib.use_deterministic_algorithms(before)


def test_num_threads_round_trip(lib):
    before = lib.get_num_threads()
    try:
        lib.set_num_threads(1)
        assert lib.get_num_threads() == 1
    finally:
        lib.set_num_threads(before)


def test_set_num_threads_rejects_nonpositive():
    with pytest.raises(RuntimeError):  # PyTorch's class
        mg.set_num_threads(0)


def test_compile_returns_something_that_computes_the_same(lib):
    lib.manual_seed(0)
    model = lib.nn.Linear(3, 2)
    compiled = lib.compile(model) if lib is mg else model  # torch.compile needs a C++ compiler at run time
    x = lib.ones(4, 3)
    np.testing.assert_array_equal(compiled(x).detach().numpy(), model(x).detach().numpy())


def test_compile_as_a_decorator_keeps_the_function():
    def f(t):
        return t + 1

    assert mg.compile(f) is f and mg.compile(mode="reduce-overhead")(f) is f


def test_printoptions_change_how_tensors_print():
    try:
        for lib in (mg, torch):
            lib.set_printoptions(precision=2)
            assert "3.14" in repr(lib.tensor([3.14159])) and "3.142" not in repr(lib.tensor([3.14159]))
            lib.set_printoptions(profile="default")
            lib.set_printoptions(threshold=5, edgeitems=2)
            assert "..." in repr(lib.arange(100.0)) and "..." not in repr(lib.arange(5.0))
        with pytest.raises(ValueError):
            mg.set_printoptions(profile="tiny")
    finally:
        mg.set_printoptions(profile="default")
        torch.set_printoptions(profile="default")


@pytest.mark.parametrize("values, dtype", [
    ([1.5, 2.25], "float32"), ([1.0, 2.0], "float32"), ([1e-5, 1.0], "float32"), ([1.5, 1e9], "float32"),
    ([0.0, -0.5], "float32"), ([3.14159265], "float64"), ([1, 2], "int64"), ([1, 2], "int32"),
    ([True, False], "bool"), ([[1.25, 2.0], [3.0, 4.5]], "float32"), (2.5, "float32"), ([], "float32"),
])
def test_repr_matches_pytorch(values, dtype):
    mine = repr(mg.tensor(values, dtype=getattr(mg, dtype)))
    theirs = repr(torch.tensor(values, dtype=getattr(torch, dtype))).replace("torch.", "")
    assert mine == theirs


def test_backends_probes_match_a_cpu_build_of_pytorch():
    assert mg.backends.mps.is_available() == torch.backends.mps.is_available() is False
    mg.backends.cudnn.benchmark = True
    assert mg.backends.cudnn.benchmark and not mg.backends.cudnn.is_available()
    mg.backends.cudnn.benchmark = False
