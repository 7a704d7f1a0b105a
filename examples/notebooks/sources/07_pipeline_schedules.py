"""Source of 07_pipeline_schedules.ipynb (build it with examples/notebooks/build.py)."""

# %% [markdown]
# # Pipeline parallelism: GPipe, 1F1B and interleaved schedules
#
# Tensor parallelism (notebook 06) splits every layer over ranks. Pipeline parallelism splits the
# model **by layers**: stage `s` (a run of consecutive layers) lives on rank `s`, and activations
# flow from rank to rank forward, gradients back. One batch through `p` stages would keep only one
# rank busy at a time, so the batch is cut into `m` **microbatches** that follow each other
# through the pipeline. What remains idle, at the start and at the end of a step, is the
# **bubble**. A *schedule* says in which order each rank runs its forwards and backwards:
#
# * **GPipe** (Huang et al. 2018): all forwards, then all backwards;
# * **1F1B** (PipeDream-Flush; Narayanan et al., SC 2021): after a warm-up, alternate one forward
#   and one backward, so activations are freed early;
# * **interleaved 1F1B** (same paper): each rank holds several smaller stages, which shrinks the
#   bubble.
#
# In `minigrad_dist.pipelining` a schedule is **data**: a list of actions per rank, which we can
# print, check and simulate without any MPI (sections 1 to 3), before running two of them on real
# ranks (section 4). Every cell checks what it shows with `assert`.

# %%
import ast
import tempfile
from pathlib import Path

import IPython.display as ipd
import matplotlib.pyplot as plt
from notebook_helpers import SCRIPTS, run_ranks

import minigrad_dist.testing.models
from minigrad_dist.pipelining import actions as A
from minigrad_dist.pipelining import trace

assert (SCRIPTS / "pp_schedules.py").exists(), "run this notebook from its folder, examples/notebooks"

# %% [markdown]
# ## 1. The schedules as action lists
#
# `pipeline_order(schedule, pp, n_microbatches)` gives every rank's compute actions, printed as
# PyTorch prints them: `1F0` is stage 1's forward of microbatch 0, `0B2` stage 0's backward of
# microbatch 2. With 4 ranks and 4 microbatches:

# %%
P, M = 4, 4
orders = {name: A.pipeline_order(name, P, M) for name in ("gpipe", "1f1b")}
for name, order in orders.items():
    print(name)
    for rank, actions in order.items():
        print(f"  rank {rank}: " + " ".join(map(str, actions)))

assert [str(a) for a in orders["gpipe"][0]] == ["0F0", "0F1", "0F2", "0F3", "0B0", "0B1", "0B2", "0B3"]
assert [str(a) for a in orders["1f1b"][2]] == ["2F0", "2F1", "2B0", "2F2", "2B1", "2F3", "2B2", "2B3"]

# %% [markdown]
# Under 1F1B, rank `r` runs `p - r - 1` warm-up forwards (rank 2: one, `2F0`), then alternates a
# forward and the backward of its oldest microbatch. The last rank (`p - 1`) warms up with none:
# it computes each microbatch's loss and starts its backward at once.
# With `m = p`, as here, rank 0's warm-up takes every forward, so its list is GPipe's; the other
# ranks' lists differ, and so does what they hold in memory (section 2).
#
# `with_communication` adds the messages: a receive before every forward whose input comes from
# the stage before and every backward whose gradient comes from the stage after; a send after
# them. `validate_order` checks the rules a schedule must keep (every forward and backward once,
# on the rank that owns the stage, each microbatch's forward before its backward, every send
# matched by exactly one receive) and simulates the ranks together, so a deadlock would be
# reported here, not on a cluster:

# %%
full = {name: {r: A.with_communication(o, P) for r, o in order.items()} for name, order in orders.items()}
print("1F1B, rank 1 with its messages:\n ", " ".join(map(str, full["1f1b"][1])))
simulations = {name: A.validate_order(full[name], P, M) for name in full}

broken = {r: list(o) for r, o in full["1f1b"].items()}
broken[1].remove(A.Action(1, A.SEND_F, 2))  # rank 1 forgets to send microbatch 2 on
try:
    A.validate_order(broken, P, M)
    raise AssertionError("a missing send must be caught")
except A.ScheduleError as error:
    print("\nwith one send removed:", error)

# %% [markdown]
# ## 2. The pictures
#
# `actions.simulate` runs the lists with a cost per action (here a forward takes 1 unit of time, a
# backward 2, messages are free) and `actions.draw` prints the result: a digit is the forward of
# that microbatch, a letter its backward (`a` for microbatch 0), one column per unit of time,
# dots are the bubble:

# %%
for name, simulation in simulations.items():
    print(f"{name}  (makespan {simulation.makespan:.0f})\n{A.draw(simulation)}\n")
    assert simulation.makespan == (M + P - 1) * (1 + 2)

# %% [markdown]
# Both take `(m + p - 1)(f + b)` = 21 units, of which each rank computes `m (f + b)` = 12: the
# bubble is the same, `(p - 1)/(m + p - 1)`. What differs is **memory**. Under GPipe every stage
# holds the activations of all `m` microbatches at the turn from forward to backward; under 1F1B
# stage `s` never holds more than `p - s`. The simulator counts the microbatches whose forward has
# run and backward not, per stage; with more microbatches the difference grows:

# %%
for m in (4, 8, 16):
    peaks = {}
    for name in ("gpipe", "1f1b"):
        order = {r: A.with_communication(o, P) for r, o in A.pipeline_order(name, P, m).items()}
        peaks[name] = A.simulate(order, P).peak_live
    print(f"m = {m:2d}: peak live microbatches per stage  GPipe {list(peaks['gpipe'].values())}  "
          f"1F1B {list(peaks['1f1b'].values())}")
    assert all(peaks["gpipe"][s] == m for s in range(P))
    assert all(peaks["1f1b"][s] == min(P - s, m) for s in range(P))

# %% [markdown]
# **Interleaved 1F1B** gives each rank `v` stages (rank `r` holds stages `r, r + p, ...`), each
# `1/v` of the work; a microbatch crosses every rank `v` times. With 2 ranks, 2 stages each and 4
# microbatches (forward cost 1/2, backward 1; `v` times the messages):

# %%
V = 2
interleaved = {r: A.with_communication(o, 2 * V) for r, o in A.pipeline_order("interleaved", 2, 4, V).items()}
plain = {r: A.with_communication(o, 2) for r, o in A.pipeline_order("1f1b", 2, 4).items()}
for rank, actions in A.pipeline_order("interleaved", 2, 4, V).items():
    print(f"rank {rank}: " + " ".join(map(str, actions)))
A.validate_order(interleaved, 2 * V, 4)  # the rules hold; then simulate with each stage's half costs
sim_interleaved = A.simulate(interleaved, 2 * V, 1 / V, 2 / V)
sim_plain = A.simulate(plain, 2)
print(f"\n1F1B, 2 ranks:        makespan {sim_plain.makespan:.2f}, idle rank 0 {sim_plain.idle_fraction(0):.3f}")
print(f"interleaved, v = 2:   makespan {sim_interleaved.makespan:.2f}, idle rank 0 "
      f"{sim_interleaved.idle_fraction(0):.3f}")
print(A.draw(sim_interleaved, forward_cost=1 / V))
assert sim_interleaved.makespan < sim_plain.makespan
assert all(sim_interleaved.idle_fraction(r) < sim_plain.idle_fraction(r) for r in range(2))

# %% [markdown]
# (In the drawing each column is half a unit now, and a digit or letter is the microbatch
# whichever of the rank's two stages runs it: see the action list above for which.)
#
# ## 3. The ideal bubble against the number of microbatches
#
# With balanced stages and free messages, GPipe and 1F1B idle `(p - 1)/(m + p - 1)` of the step
# on every rank (`trace.bubble_fraction`). More microbatches shrink it, at the price of smaller
# matrix products per action. The simulator agrees with the formula at every point plotted:

# %%
ms = list(range(1, 33))
fig, ax = plt.subplots(figsize=(7, 3.5))
for p in (2, 4, 8):
    ax.plot(ms, [trace.bubble_fraction(p, m) for m in ms], label=f"p = {p}")
    for m in (1, 4, 16, 32):
        order = {r: A.with_communication(o, p) for r, o in A.pipeline_order("1f1b", p, m).items()}
        simulated = A.simulate(order, p).idle_fraction(0)
        assert abs(simulated - trace.bubble_fraction(p, m)) < 1e-12, (p, m)
        ax.plot(m, simulated, "k.", markersize=5)
ax.set_xlabel("microbatches m")
ax.set_ylabel("idle fraction (p - 1)/(m + p - 1)")
ax.set_title("The pipeline bubble (lines: formula; dots: simulated 1F1B)")
ax.legend()
plt.show()
print(f"p = 4: m = 4 idles {trace.bubble_fraction(4, 4):.0%}, m = 32 idles {trace.bubble_fraction(4, 32):.0%}")

# %% [markdown]
# ## 4. On real ranks: the measured bubble
#
# `scripts/pp_schedules.py` runs GPipe and 1F1B on 2 ranks, one stage each, 4 microbatches,
# through `Schedule1F1B` / `ScheduleGPipe`: activations and gradients go between the ranks as
# nonblocking MPI point-to-point messages, every action is timed (`schedule.events`), and
# `trace.idle_fractions` measures each rank's idle share of each step.
#
# **Why the stages sleep.** Each stage's compute is a stand-in that sleeps, 20 ms forward and 40
# ms backward around a tiny `Linear`, as the pipelining tests do. A bubble is about *waiting*, and
# to measure it the stages must be balanced and run truly at the same time. Real matrix products
# would make the measurement depend on the machine: this one has 2 cores, shared with the MPI
# ranks' busy-polling and with whatever else runs (on a busy machine real stages measured idle
# fractions from 0.18 to 0.44 against the ideal 0.2). A sleeping rank leaves the cores to the others,
# so what is measured is the schedule's bubble plus our per-action overhead. The stand-in:

# %%
script = Path(minigrad_dist.testing.models.__file__).read_text()  # the testing kit's SleepingLinear uses it
stand_in = next(n for n in ast.walk(ast.parse(script)) if isinstance(n, ast.ClassDef) and n.name == "_Sleep")
print(ast.get_source_segment(script, stand_in))
assert "time.sleep(f)" in ast.get_source_segment(script, stand_in)

# %%
out = Path(tempfile.mkdtemp())
measured = run_ranks("pp_schedules.py", 2, str(out), timeout=90)
ideal = trace.bubble_fraction(2, 4)
print(f"ideal (p - 1)/(m + p - 1) = {ideal:.3f}")
for name in ("gpipe", "1f1b"):
    steps = measured["idle"][name]
    for step, fractions in enumerate(steps):
        print(f"{name:6s} step {step}: idle rank 0 {fractions['0']:.3f}, rank 1 {fractions['1']:.3f}")
    later = steps[1:]  # step 0 warms up (first messages, first allocation)
    for rank in ("0", "1"):
        median = sorted(f[rank] for f in later)[len(later) // 2]
        assert abs(median - ideal) <= 0.10, f"{name} rank {rank}: measured idle {median:.3f}, ideal {ideal:.3f}"

# %% [markdown]
# The measured idle fractions sit within a few hundredths of the ideal 0.2 (the acceptance bound is
# 0.10): what is left over is the time spent in messages and bookkeeping. The Gantt chart of the
# last step of each (`trace.save_trace`, which also writes a Chrome trace JSON you can open in
# https://ui.perfetto.dev): blue forwards, green backwards, labelled by microbatch, gray bars where
# a rank waits for a message.

# %%
for name in ("gpipe", "1f1b"):
    png = Path(measured["pngs"][name])
    assert png.exists() and png.with_suffix(".json").exists(), png
    ipd.display(ipd.Image(filename=str(png)))

# %% [markdown]
# And the peaks of live activations that the stages counted during the real steps: GPipe held all
# 4 microbatches on both stages, 1F1B at most `p - s` (2 on stage 0, 1 on the last stage):

# %%
for name in ("gpipe", "1f1b"):
    peaks = {stage: count for per_rank in measured["peak"][name] for stage, count in per_rank.items()}
    print(f"{name:6s} peak live microbatches per stage: {peaks}")
    assert peaks == ({"0": 4, "1": 4} if name == "gpipe" else {"0": 2, "1": 1})

# %% [markdown]
# ## 5. Pipelining does not change the training
#
# The gradients of a step are summed over the microbatches and divided by `m`, so with a loss
# that averages over its microbatch one step gives the gradient of the whole batch. The script
# trains an MLP 6 -> 8 -> 8 -> 3, cut in two with `split_sequential`, for 3 steps of SGD with
# momentum under each schedule, and the same model in one process on the full batch:

# %%
for name, differences in measured["max_difference"].items():
    print(f"{name:6s} largest |parameter - local training's| per rank: " + ", ".join(f"{d:.1e}" for d in differences))
    assert all(d < 1e-12 for d in differences), name

# %% [markdown]
# ## Where to read next
#
# * `minigrad_dist/pipelining/__init__.py`: the three schedules in numbered steps, with their
#   pictures; `actions.py`: the schedules as data, the messages, the simulator, the validation.
# * `schedules.py`: how a rank runs its list (receives posted early, sends nonblocking);
#   `stage.py`: a stage's forward and backward per microbatch; `trace.py`: the timelines.
# * `minigrad_dist/device_mesh.py`: `init_device_mesh((dp, pp, tp), ...)` lays the ranks out so that
#   pipeline, tensor and data parallelism each get their own group (`mesh["pp"].get_group()` is
#   what `PipelineStage(..., group=...)` takes).
