"""Source of 02_ddp_buckets_hooks_overlap.ipynb (build it with examples/notebooks/build.py)."""

# %% [markdown]
# # DDP: buckets, hooks and overlapping communication with the backward pass
#
# `minigrad_dist.DistributedDataParallel` (DDP) trains one model replica per process. After
# `loss.backward()` every replica must hold the **average** of all replicas' gradients. This
# notebook follows how that happens, as in PyTorch's DDP design note:
#
# 1. **buckets**: gradients are averaged in a few large flat buffers, not one by one;
# 2. **hooks**: one post-accumulate-grad hook per parameter tells the Reducer "this gradient is
#    ready" (notebook 01, section 5);
# 3. **the order of allreduce launches**: a bucket is reduced as soon as it is full, while the
#    backward pass goes on computing the other gradients; every rank launches the buckets in the
#    same order;
# 4. **bucket size**: a curve of step time against the bucket cap, measured on 2 ranks;
# 5. **ring allreduce**: the algorithm behind the averaging, walked through step by step and
#    run on real ranks.
#
# The distributed parts run under MPI: the notebook launches `mpiexec -n 2` on small scripts in
# `scripts/` (each prints one `RESULT {json}` line) and shows what they report. Every cell
# checks what it shows with `assert`.

# %%
import matplotlib.pyplot as plt
import numpy as np
from notebook_helpers import SCRIPTS, function_source, run_ranks

from minigrad import nn
from minigrad_dist.algorithms.ring_allreduce import chunk_bounds
from minigrad_dist.ddp.bucket import FIRST_BUCKET_CAP_BYTES, assign_buckets

assert (SCRIPTS / "ddp_events.py").exists(), "run this notebook from its folder, examples/notebooks"

# %% [markdown]
# ## 1. Buckets
#
# Sending one message per parameter would pay the latency of a collective call for every
# bias vector. The Reducer instead packs gradients into **buckets**: flat buffers of up to
# `bucket_cap_mb` MiB (25 by default; the first bucket is capped at 1 MiB so that the first
# allreduce can start early). Buckets are filled in **reverse registration order**, because the
# backward pass produces the last layer's gradients first.
#
# The assignment is a pure function, `assign_buckets`, which the Reducer calls at
# construction. The model here is also the one `scripts/ddp_events.py` trains below: three
# `Linear` layers (8 -> 16 -> 16 -> 4) in float64, registered as `first`, `middle`, `last`.

# %%
class Sequential3(nn.Module):
    """``first -> tanh -> middle -> tanh -> last`` (the model of scripts/ddp_events.py)."""

    def __init__(self):
        super().__init__()
        self.first = nn.Linear(8, 16)
        self.middle = nn.Linear(16, 16)
        self.last = nn.Linear(16, 4)

    def forward(self, x):
        return self.last(self.middle(self.first(x).tanh()).tanh())


model = Sequential3().double()
param_names = [name for name, _ in model.named_parameters()]
params = list(model.parameters())


def buckets_for(cap_bytes, first_cap_bytes=None):
    """Parameter names per bucket, in the Reducer's order (bucket 0 is reduced first)."""
    order = list(reversed(range(len(params))))  # reverse registration order
    groups = assign_buckets(params, order, cap_bytes, first_cap_bytes or cap_bytes)
    return [[param_names[i] for i in group] for group in groups]


for name, param in model.named_parameters():
    print(f"{name:14s} {str(param.shape):9s} {param.nbytes:5d} bytes")
print()
for cap in (32, 256, 2048, 25 * 2**20):
    first = FIRST_BUCKET_CAP_BYTES if cap == 25 * 2**20 else cap
    print(f"cap {cap:>8d} bytes (first bucket {first} bytes):")
    for index, members in enumerate(buckets_for(cap, first)):
        print(f"    bucket {index}: {members}")

assert buckets_for(256) == [["last.bias", "last.weight"], ["middle.bias", "middle.weight"],
                            ["first.bias", "first.weight"]]
assert len(buckets_for(32)) == 6 and len(buckets_for(25 * 2**20, FIRST_BUCKET_CAP_BYTES)) == 1

# %% [markdown]
# A bucket is closed once it **reaches** the cap, so with a cap of 256 bytes each layer's bias
# (128 bytes or less) waits for its weight: one bucket per layer. That is the cap the next
# section uses (`bucket_cap_mb = first_bucket_cap_mb = 256 / 2**20`).
#
# ## 2. Hooks, and 3. the order of the allreduce launches
#
# At construction DDP registers one **post-accumulate-grad hook** per parameter. When a
# gradient is ready, its hook copies it into the parameter's slot of its bucket; when a bucket
# is full, the Reducer **launches** its allreduce (asynchronously) and the backward pass goes
# on. Launches happen strictly in bucket-index order on every rank: MPI matches collective
# calls by order, so ranks that launched buckets in different orders would add up the wrong
# buffers, or hang. (When every rank runs on one node and no comm hook is registered, the
# Reducer sums the buckets through MPI shared memory instead of an allreduce, about twice as
# fast for large buckets; `minigrad_dist/ddp/shared_memory.py` shows how. The comm hook used
# below keeps the allreduce.)
#
# To watch this, `scripts/ddp_events.py` registers two recorders on every rank:
#
# * a post-accumulate-grad hook on every parameter, registered *before* DDP's own (so it runs
#   first): `grad <name>`;
# * a **comm hook** (`ddp.register_comm_hook(state, hook)`), which the Reducer calls to reduce a
#   bucket: it records `launch <bucket index>` and then averages the bucket like DDP's default,
#   `allreduce_hook`.
#
# The comm hook from the script:

# %%
print(function_source("ddp_events.py", "recording_hook"))


def describe(event):
    """One line for an event ``[kind, ..., ms]`` recorded by the script."""
    if event[0] == "grad":
        return f"gradient of {event[1]} ready"
    if event[0] == "launch":
        return f"    -> launch allreduce of bucket {event[1]} {event[2]}"
    return "backward() returned: all buckets reduced, averaged .grad written"


def show_events(iteration_events, title):
    """Print one rank's events of one iteration as a timeline."""
    print(title)
    for event in iteration_events:
        print(f"  {event[-1]:7.3f} ms  {describe(event)}")


def launch_order(iteration_events):
    return [event[1] for event in iteration_events if event[0] == "launch"]


def launched_before_all_grads(iteration_events):
    """Bucket indices launched while some gradient of the iteration was still to come (overlap)."""
    last_grad = max(i for i, event in enumerate(iteration_events) if event[0] == "grad")
    return [event[1] for i, event in enumerate(iteration_events) if event[0] == "launch" and i < last_grad]


# %%
sequential = run_ranks("ddp_events.py", 2, "--model", "sequential", "--cap-bytes", "256", timeout=60)
print("buckets (from ddp.reducer.bucket_order() on rank 0):", sequential["buckets"][0], "\n")
for iteration, events in enumerate(sequential["events"][0]):
    show_events(events, f"rank 0, iteration {iteration}:")

assert sequential["buckets"][0] == buckets_for(256)  # the Reducer used assign_buckets' assignment
for rank_events in sequential["events"]:
    for events in rank_events:
        assert launch_order(events) == [0, 1, 2]
        assert launched_before_all_grads(events) == [0, 1]  # communication overlaps the backward pass
assert sequential["grads_equal_across_ranks"]

# %% [markdown]
# The allreduce of bucket 0 (the last layer) starts while the gradients of the middle and first
# layers are still being computed: that is the **overlap** of communication with computation.
# (Here the events are fractions of a millisecond apart and the times vary from run to run;
# the order does not.)
#
# **When gradients arrive in an unexpected order.** The `shuffled` model registers the same
# layers the other way round (`last`, `middle`, `first`), so its buckets start with the `first`
# layer, whose gradient is computed *last*. Bucket 2 is complete first, but it must wait for
# buckets 0 and 1: in iteration 0 nothing can be launched before the very last gradient.
# After the first iteration the Reducer **rebuilds** its buckets in the order gradients
# actually arrived (rank 0's order, broadcast so every rank builds the same buckets), and from
# iteration 1 on the overlap is back.

# %%
shuffled = run_ranks("ddp_events.py", 2, "--model", "shuffled", "--cap-bytes", "256", timeout=60)
print("buckets before iteration 0:", shuffled["buckets"][0])
print("buckets after iteration 0: ", shuffled["buckets"][1], "\n")
for iteration, events in enumerate(shuffled["events"][0]):
    show_events(events, f"rank 0, iteration {iteration}:")

assert shuffled["buckets"][0][0] == ["first.bias", "first.weight"]
assert shuffled["buckets"][1] == sequential["buckets"][0]  # rebuilt in arrival order
for iteration0, iteration1 in shuffled["events"]:  # on every rank
    assert launch_order(iteration0) == launch_order(iteration1) == [0, 1, 2]
    assert launched_before_all_grads(iteration0) == []  # no overlap before the rebuild
    assert launched_before_all_grads(iteration1) == [0, 1]
assert shuffled["grads_equal_across_ranks"]

# %% [markdown]
# ## 4. How big should a bucket be?
#
# Small buckets start communicating early but pay a per-call cost many times; one huge bucket
# pays it once but cannot start before the whole backward pass is over. The VLDB paper on
# PyTorch DDP measures this trade-off; `scripts/bucket_sweep.py` does the same on a small scale:
# on 2 ranks, an MLP 256-512-512-512-512-512-10 (float32, 1.2 M parameters, 64 rows per rank),
# the median step time for several caps, and the same training without DDP in one process.

# %%
sweep = run_ranks("bucket_sweep.py", 2, "--sizes", "256,512,512,512,512,512,10",
                  "--caps", "0.00001,0.01,0.3,2,8", "--steps", "8", timeout=60)
print(f"{sweep['params']} parameters; one process without DDP: {sweep['local_ms']:.1f} ms per step")
for point in sweep["sweep"]:
    print(f"bucket_cap_mb {point['cap_mb']:<8g} {point['buckets']:3d} buckets  {point['step_ms']:6.1f} ms per step")

caps = [point["cap_mb"] for point in sweep["sweep"]]
step_ms = [point["step_ms"] for point in sweep["sweep"]]
buckets = [point["buckets"] for point in sweep["sweep"]]
fig, ax = plt.subplots(figsize=(7, 3.5))
ax.plot(caps, step_ms, "o-", label=f"DDP, {sweep['world_size']} ranks")
ax.axhline(sweep["local_ms"], color="grey", linestyle="--", label="one process, no DDP")
for cap, ms, count in zip(caps, step_ms, buckets):
    ax.annotate(f"{count} bucket{'s' if count > 1 else ''}", (cap, ms), textcoords="offset points", xytext=(4, 6))
ax.set_xscale("log")
ax.set_ylim(bottom=0)
ax.set_xlabel("bucket_cap_mb (first bucket too)")
ax.set_ylabel("median step time (ms)")
ax.set_title("Step time against bucket size")
ax.legend()
plt.show()

assert buckets == [12, 6, 5, 3, 1]  # one per parameter, one per layer, ..., all in one
assert all(ms > 0 for ms in step_ms) and sweep["local_ms"] > 0

# %% [markdown]
# Read the curve with care: here both ranks share one small machine, so "communication" is a
# memory copy and the curve is mostly noise around the cost of the backward pass. Across real
# networks the per-call latency and the overlap both matter, and the curve has a minimum at a
# few MiB to a few tens of MiB, which is why PyTorch defaults to 25.
#
# ## 5. Ring allreduce, step by step
#
# What does an allreduce do? `minigrad_dist.algorithms.ring_allreduce` spells out the algorithm
# that NCCL and Horovod use for large buffers: N ranks stand in a ring, each sends only to its
# right neighbour, and the buffer is cut into N chunks (`chunk_bounds`).
#
# * **Reduce-scatter** (N - 1 steps): at step s, rank r sends chunk (r - s) mod N to the right
#   and adds the chunk (r - s - 1) mod N it receives from the left. Afterwards rank r holds the
#   complete sum of chunk (r + 1) mod N.
# * **All-gather** (N - 1 steps): the complete chunks travel once more around the ring,
#   overwriting the partial ones.
#
# Here are both phases simulated in NumPy for 3 ranks, with the same chunk schedule as the real
# code. Rank 0 holds 1..6, rank 1 ten times that, rank 2 a hundred times, so each digit of a
# sum tells which ranks contributed to it.

# %%
def simulate_ring(buffers):
    """Run the ring allreduce on a list of per-rank arrays, printing every step; returns them."""
    world = len(buffers)
    bounds = chunk_bounds(buffers[0].size, world)
    chunk = [slice(start, stop) for start, stop in bounds]

    def show(title):
        print(title)
        for r, buffer in enumerate(buffers):
            print(f"    rank {r}: " + " | ".join(str(buffer[c].tolist()) for c in chunk))

    show("start")
    for step in range(world - 1):
        sent = [buffers[r][chunk[(r - step) % world]].copy() for r in range(world)]  # all send at once
        for r in range(world):
            mine = buffers[r][chunk[(r - step - 1) % world]]
            mine += sent[(r - 1) % world]
        show(f"reduce-scatter step {step}")
    for step in range(world - 1):
        sent = [buffers[r][chunk[(r + 1 - step) % world]].copy() for r in range(world)]
        for r in range(world):
            buffers[r][chunk[(r - step) % world]] = sent[(r - 1) % world]
        show(f"all-gather step {step}")
    return buffers


start = [np.arange(1, 7) * 10**r for r in range(3)]
result = simulate_ring([b.copy() for b in start])
for buffer in result:
    np.testing.assert_array_equal(buffer, sum(start))
print("every rank holds", result[0].tolist())

# %% [markdown]
# Each rank sent 2 (N - 1) messages of one chunk each: 2 (N - 1) / N of the buffer, whatever the
# number of ranks. That is why the ring is bandwidth-optimal for large buffers; its price is
# 2 (N - 1) message latencies, so MPI libraries use tree-shaped algorithms for small ones.
#
# Now the real thing, on 2 and then 3 MPI ranks (`scripts/ring_check.py`): each rank reduces the
# same inputs with `ring_allreduce` and with MPI's own `Allreduce`, for several dtypes, sizes
# (including fewer elements than ranks, where some chunks are empty) and ops.

# %%
for world_size in (2, 3):
    report = run_ranks("ring_check.py", world_size, "--timing-elements", "1000000", timeout=60)
    print(f"{world_size} ranks:")
    for case in report["cases"]:
        print(f"    {case['op']:3s} {case['dtype']:7s} x{case['elements']:<5d} "
              f"max |ring - MPI| = {case['max_abs_diff']:.2g}  bitwise equal: {case['exact']!s:5s}  "
              f"same bits on every rank: {case['same_on_every_rank']}")
        assert case["same_on_every_rank"]
        tolerance = 1e-5 if case["dtype"] == "float32" else 1e-12
        assert case["max_abs_diff"] <= tolerance
        if case["dtype"] == "int64" or case["op"] == "MAX":
            assert case["exact"]  # integer sums and maxima do not depend on the order of operations
    timing = report["timing_ms"]
    print(f"    {timing['elements']} float32: ring {timing['ring']:.2f} ms, MPI Allreduce {timing['mpi']:.2f} ms")

# %% [markdown]
# Float sums may differ from MPI's in the last bits (the additions happen in another order),
# but every rank ends with the **same bits**, since the all-gather copies one rank's sum to all.
# DDP needs exactly that: replicas that drift apart by rounding would no longer be replicas.
# `ring_allreduce_hook` plugs the ring into DDP as a comm hook; notebook 04 tests hooks like it
# against training in one process.
