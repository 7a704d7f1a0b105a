"""The memory helper counts the arrays the framework holds, once each, and the ledger's peaks."""

from __future__ import annotations

import gc

import numpy as np
import pytest

import minigrad as mg
from minigrad import nn, optim
from minigrad_dist import memory


def test_report_counts_parameters_gradients_and_optimizer_state():
    model = nn.Linear(10, 4).double()
    opt = optim.Adam(model.parameters(), lr=0.1)
    model(mg.ones(3, 10, dtype=mg.float64)).sum().backward()
    opt.step()
    report = memory.memory_report(model, opt)
    param_bytes = (10 * 4 + 4) * 8
    assert report["parameters"] == param_bytes
    assert report["gradients"] == param_bytes
    steps = sum(state["step"].array.nbytes for state in opt.state.values())
    assert report["optimizer_state"] == 2 * param_bytes + steps  # exp_avg, exp_avg_sq and the step counts


def test_views_of_one_buffer_count_once():
    flat = np.zeros(100)
    assert memory.held_bytes([flat[:10], flat[10:], flat]) == 800


def test_ledger_tracks_live_and_peak_bytes():
    ledger = memory.MemoryLedger()
    a = ledger.track("gathered_parameters", np.zeros(1000))
    b = ledger.track("gathered_parameters", np.zeros(500))
    assert ledger.live["gathered_parameters"] == 12000
    del a
    gc.collect()
    assert ledger.live["gathered_parameters"] == 4000
    assert ledger.peak["gathered_parameters"] == 12000
    ledger.reset_peaks()
    assert ledger.peak["gathered_parameters"] == 4000
    del b


def test_ledger_rejects_unknown_categories_and_non_arrays():
    ledger = memory.MemoryLedger()
    with pytest.raises(ValueError, match="unknown category"):
        ledger.track("activations?", np.zeros(3))
    with pytest.raises(TypeError, match="pass an array"):
        ledger.track("gradients", 3.0)
