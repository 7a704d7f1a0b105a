"""Source of 05_sharded_data_parallel.ipynb (build it with examples/notebooks/build.py)."""

# %% [markdown]
# # Sharded data parallel: ZeRO stages 1 and 2, and FSDP
#
# DDP (notebook 02) keeps a full copy of everything on every rank: parameters, gradients and
# optimizer state. With N ranks, N - 1 of those copies are redundant. The Zero Redundancy
# Optimizer paper (Rajbhandari et al., SC 2020) removes the redundancy in three stages, and
# PyTorch's Fully Sharded Data Parallel (Zhao et al., VLDB 2023) is the third stage built into
# the model wrapper:
#
# | stage | what each rank keeps 1/N of | minigrad |
# | --- | --- | --- |
# | ZeRO-1 | optimizer state | `minigrad_dist.optim.ZeroRedundancyOptimizer` over a DDP model |
# | ZeRO-2 | ... and gradients | DDP + `hook_with_zero_step(..., shard_gradients=True)`: buckets are reduce-scattered |
# | ZeRO-3 / FSDP | ... and parameters | `minigrad_dist.fsdp.fully_shard` / `FullyShardedDataParallel` |
#
# This notebook measures what each rank holds under each of them (from the arrays the framework
# keeps, with `minigrad_dist.memory`), checks that all four train the same model to the same
# parameters, and draws when FSDP's all-gathers and reduce-scatters run. The distributed parts run
# small scripts in `scripts/` under `mpiexec`; every cell checks what it shows with `assert`.

# %%
import tempfile
from pathlib import Path

import IPython.display as ipd
import matplotlib.pyplot as plt
from notebook_helpers import SCRIPTS, run_ranks

assert (SCRIPTS / "sharded_memory.py").exists(), "run this notebook from its folder, examples/notebooks"
MIB = 2**20

# %% [markdown]
# ## 1. The memory formula
#
# With Psi parameters, the paper counts, per parameter, 2 bytes of fp16 parameter, 2 of fp16
# gradient and K = 12 bytes of optimizer state (fp32 master copy, momentum, variance) for
# mixed-precision Adam:
#
# | | DDP | ZeRO-1 | ZeRO-2 | ZeRO-3 (FSDP) |
# | --- | --- | --- | --- | --- |
# | bytes | (2 + 2 + K) Psi | (2 + 2) Psi + K Psi / N | 2 Psi + (2 + K) Psi / N | (2 + 2 + K) Psi / N |
#
# minigrad trains in one precision, so there is no master copy. In float64 with Adam a parameter
# costs 8 bytes, its gradient 8, and its optimizer state K = 16 (two moments; plus one small
# step counter per parameter tensor). The formula for our setting, as a function:

# %%
def predicted_bytes(num_params, world_size, stage, param_bytes=8, grad_bytes=8, state_bytes=16):
    """The paper's formula with our sizes: bytes of (parameters, gradients, optimizer state) on one rank."""
    n = world_size
    params = num_params * param_bytes / (n if stage >= 3 else 1)
    grads = num_params * grad_bytes / (n if stage >= 2 else 1)
    state = num_params * state_bytes / (n if stage >= 1 else 1)
    return params, grads, state


for stage, name in enumerate(["DDP", "ZeRO-1", "ZeRO-2", "ZeRO-3"]):
    p, g, s = predicted_bytes(1_575_168, 4, stage)
    print(f"{name:7s} parameters {p / MIB:6.2f} MiB  gradients {g / MIB:6.2f} MiB  optimizer state {s / MIB:6.2f} MiB")

# %% [markdown]
# ## 2. Measured: what each of 4 ranks holds
#
# `scripts/sharded_memory.py` trains one MLP (256 -> 1024 -> 1024 -> 256, float64, 1.6 million
# parameters) with Adam for two steps in each of the four ways, on 4 ranks, and every rank
# reports `memory.memory_report(model, optimizer)` just after its last backward: the bytes of
# distinct memory behind the parameters the model shows, their `.grad`, and the optimizer's
# state tensors (views of one buffer count once), plus what the sharded objects add through
# `memory_holdings()`. Then it compares each mode's trained parameters with DDP's.

# %%
measured = run_ranks("sharded_memory.py", 4, timeout=150)
modes = ["ddp", "zero1", "zero2", "fsdp"]
num_params = measured["num_parameters"]
print(f"{num_params:,} parameters, {measured['world_size']} ranks\n")
print(f"{'mode':6s} {'rank':>4s} {'parameters':>12s} {'gradients':>12s} {'optimizer':>12s}   (MiB)")
for mode in modes:
    for rank, report in enumerate(measured["reports"][mode]):
        print(f"{mode:6s} {rank:4d} {report['parameters'] / MIB:12.2f} {report['gradients'] / MIB:12.2f} "
              f"{report['optimizer_state'] / MIB:12.2f}")

# %% [markdown]
# Each stage divides one more row by N = 4, and the numbers agree with the formula within the
# padding of the shards and the optimizer's step counters (checked here to 2%):

# %%
for stage, mode in enumerate(modes):
    want = predicted_bytes(num_params, measured["world_size"], stage)
    for report in measured["reports"][mode]:
        got = (report["parameters"], report["gradients"], report["optimizer_state"])
        for what, g, w in zip(("parameters", "gradients", "optimizer state"), got, want):
            assert abs(g - w) / w < 0.02, f"{mode}: {what} {g} bytes, the formula says {w:.0f}"
print("every rank of every mode holds what the formula predicts (within 2%)")

fig, ax = plt.subplots(figsize=(7, 3.5))
bottom = [0.0] * len(modes)
for category, color in (("parameters", "tab:blue"), ("gradients", "tab:orange"), ("optimizer_state", "tab:green")):
    values = [measured["reports"][mode][0][category] / MIB for mode in modes]
    ax.bar(["DDP", "ZeRO-1", "ZeRO-2", "FSDP"], values, bottom=bottom, color=color, label=category)
    bottom = [b + v for b, v in zip(bottom, values)]
ax.set_ylabel("MiB on rank 0 (of 4)")
ax.set_title("What one rank holds, MLP of 1.6 M float64 parameters, Adam")
ax.legend()
plt.show()

# %% [markdown]
# Sharding changes where the numbers live, not what they are: after two steps every mode's
# parameters equal DDP's to rounding (ZeRO-1 even bitwise: it steps the same averaged gradients
# element by element; ZeRO-2 and FSDP average in a different order, a reduce-scatter).

# %%
for mode, difference in measured["max_difference_from_ddp"].items():
    print(f"{mode:6s} largest |parameter - DDP's| = {difference:.1e}")
    assert difference < 1e-12, mode

# %% [markdown]
# ## 3. FSDP's peak: one unit at a time
#
# FSDP keeps only its shard of each unit (each Linear here) and **all-gathers** a unit's full
# parameters just before the unit's forward, and again before its backward; it frees them after
# (`reshard_after_forward=True`). While one unit computes, the next one's all-gather is already
# on its way (**prefetch**), so at most two units' parameters are gathered at once. The ledger of
# `minigrad_dist.memory` tracks every gathered buffer from allocation to release and keeps the
# peak: it stays below full/N + the largest unit + the prefetched unit.

# %%
fsdp = measured["reports"]["fsdp"][0]
full = measured["reports"]["ddp"][0]["parameters"]
largest_unit = 1024 * 1024 * 8 + 1024 * 8  # the middle Linear's weight and bias
prefetched = 256 * 1024 * 8 + 1024 * 8  # the unit gathered ahead of it
peak = fsdp["peak"]["gathered_parameters"]
print(f"peak of gathered parameters {peak / MIB:.2f} MiB; full model {full / MIB:.2f} MiB; "
      f"bound full/N + largest unit + prefetch = {(full / 4 + largest_unit + prefetched) / MIB:.2f} MiB")
assert 0 < peak <= full / 4 + largest_unit + prefetched

# %% [markdown]
# ## 4. When the all-gathers and reduce-scatters run
#
# `scripts/sharded_timeline.py` trains a 4-Linear MLP under FSDP on 2 ranks with a
# `ddp.trace.Tracer` as the model's `timeline`: every all-gather (`gather`, or `prefetch` of the
# next unit), unit forward, reshard and reduce-scatter is recorded in the DDP trace format
# (notebook 02), beside every backward graph node. Unit 0 is the root (the model itself; it has
# no parameters of its own here), units 1 to 4 the Linears. The second iteration, in order:

# %%
out = Path(tempfile.mkdtemp())
timeline = run_ranks("sharded_timeline.py", 2, str(out), timeout=120)
events = timeline["fsdp_events"]
for lane, name in events:
    print(f"  {lane:15s} {name}")

# %% [markdown]
# In the forward, unit k + 1's prefetch starts before unit k + 1 runs (while unit k computes),
# and each unit is resharded right after its forward. In the backward, the unit expected next is
# prefetched before the current unit's gradients are reduce-scattered. On this machine's 2 cores
# communication cannot truly run in parallel with compute, so what this shows is the mechanism:
# the order in which the work is issued.

# %%
names = [name for _, name in events]
for unit in (2, 3, 4):
    assert names.index(f"prefetch unit {unit}") < names.index(f"forward unit {unit}"), unit
backward = names[names.index("forward unit 4"):]
for unit in (4, 3, 2):
    assert backward.index(f"prefetch unit {unit - 1}") < backward.index(f"reduce_scatter unit {unit}"), unit

lanes = ["forward", "all-gather", "reshard", "reduce-scatter"]
fig, ax = plt.subplots(figsize=(10, 2.6))
for step, (lane, name) in enumerate(events):
    ax.plot(step, lanes.index(lane), "o", color=f"C{lanes.index(lane)}")
    ax.annotate(name.split()[-1], (step, lanes.index(lane)), textcoords="offset points", xytext=(0, 6),
                ha="center", fontsize=7)
ax.set_yticks(range(len(lanes)))
ax.set_yticklabels(lanes)
ax.set_ylim(-0.6, len(lanes) - 0.3)
ax.set_xlabel("event number (rank 0, second iteration); the label is the unit")
ax.set_title("FSDP: the order of all-gathers, forwards, reshards and reduce-scatters")
plt.show()

# %% [markdown]
# The same events against time, on both ranks (the Gantt chart that `write_trace` and
# `plot_gantt` draw for DDP; open `fsdp_trace.json` in https://ui.perfetto.dev for a zoomable
# view):

# %%
assert (out / "fsdp_trace.png").exists() and (out / "fsdp_trace.json").exists()
ipd.display(ipd.Image(filename=str(out / "fsdp_trace.png")))

# %% [markdown]
# ZeRO-2 needs no new machinery in the timeline: its buckets go through DDP's Reducer, launched
# in bucket order as their gradients become ready; only the collective changed (a reduce-scatter
# instead of an allreduce, so each rank receives just its shard). DDP's own trace shows them on
# its `allreduce` lane:

# %%
assert timeline["zero2_reductions"] > 0 and timeline["zero2_reductions"] % 2 == 0  # same buckets, 2 iterations
print(f"{timeline['zero2_reductions']} bucket reductions (reduce-scatters) in 2 iterations on rank 0")
ipd.display(ipd.Image(filename=str(out / "zero2_trace.png")))

# %% [markdown]
# ## Where to read next
#
# * `minigrad_dist/zero/`: `flat_shard.py` (which rank owns which elements), `optimizer.py`
#   (ZeRO-1), `overlap.py` (stepping shards during DDP's backward; ZeRO-2's reduce-scatter).
# * `minigrad_dist/fsdp/`: the package docstring walks FSDP's algorithm in numbered steps;
#   `flat_param.py` is the flat sharded parameter, `fully_sharded.py` the hooks around each unit.
# * `minigrad_dist/memory.py`: how the bytes above are counted.
# * `benchmarks/bench_sharded.py`: step times of all of this beside PyTorch's FSDP2.
