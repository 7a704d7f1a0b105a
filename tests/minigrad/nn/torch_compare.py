"""Helpers for tests that run one program in minigrad and in PyTorch and compare the results.

``run_both(program, *arrays)`` builds float64 leaves of the same values in
both libraries, runs ``program(lib, F, *leaves)``, checks the outputs agree,
backpropagates the same random seed gradient and checks every leaf's
gradient agrees too.
"""

from __future__ import annotations

import warnings

import numpy as np
import torch
import torch.nn.functional as TF

import minigrad as mg
import minigrad.nn.functional as F
from minigrad import backend


def to_np(t) -> np.ndarray:
    """The values of a minigrad or torch Tensor as a NumPy array."""
    if isinstance(t, torch.Tensor):
        return t.detach().numpy()
    return backend.to_numpy(t.array)


def assert_close(mine, theirs, rtol=1e-10, atol=1e-12) -> None:
    """Same shape, same dtype (by name), values within tolerance (NaN equal to NaN, inf to inf)."""
    a, b = to_np(mine), to_np(theirs)
    assert a.shape == b.shape, (a.shape, b.shape)
    assert a.dtype == b.dtype, (a.dtype, b.dtype)
    np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, equal_nan=True)


def leaves(*arrays, requires_grad=True, dtype=np.float64):
    """(minigrad leaves, torch leaves) with the same values; integer arrays keep their dtype and need no grad."""
    mine, theirs = [], []
    for a in arrays:
        a = np.asarray(a)
        if a.dtype.kind == "f":
            a = a.astype(dtype)
        grad = requires_grad and a.dtype.kind == "f"
        mine.append(mg.tensor(a, requires_grad=grad))
        theirs.append(torch.tensor(a, requires_grad=grad))
    return mine, theirs


def run_both(program, *arrays, rtol=1e-10, atol=1e-12, seed=0, backward=True):
    """Run ``program(lib, F, *leaves)`` in both libraries; compare outputs and (float) leaves' gradients.

    Returns the two outputs.
    """
    mine, theirs = leaves(*arrays)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # both libraries warn alike; tests of warnings check them separately
        out = program(mg, F, *mine)
        tout = program(torch, TF, *theirs)
    assert_close(out, tout, rtol, atol)
    if backward and tout.requires_grad:
        g = np.random.default_rng(seed).standard_normal(tuple(tout.shape))
        out.backward(mg.tensor(g))
        tout.backward(torch.tensor(g))
        for m, t in zip(mine, theirs):
            if t.requires_grad:
                if t.grad is None:
                    assert m.grad is None or not to_np(m.grad).any()
                else:
                    assert_close(m.grad, t.grad, rtol, atol)
    return out, tout


def same_error(program, *arrays, match=None):
    """Both libraries raise the same exception type for ``program``; returns minigrad's exception."""
    mine, theirs = leaves(*arrays, requires_grad=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a broadcasting warning may precede the error
        try:
            program(torch, TF, *theirs)
        except Exception as error:  # noqa: BLE001  (any type: the point is to compare them)
            expected = type(error)
        else:
            raise AssertionError("PyTorch raised nothing")
        try:
            program(mg, F, *mine)
        except Exception as error:  # noqa: BLE001
            assert isinstance(error, expected), f"minigrad raised {type(error).__name__}: {error}; " \
                f"PyTorch {expected.__name__}"
            if match is not None:
                assert match in str(error), str(error)
            return error
    raise AssertionError(f"minigrad raised nothing; PyTorch raised {expected.__name__}")
