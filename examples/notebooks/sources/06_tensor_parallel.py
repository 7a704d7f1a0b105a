"""Source of 06_tensor_parallel.ipynb (build it with examples/notebooks/build.py)."""

# %% [markdown]
# # Tensor parallelism: Megatron's split of an MLP
#
# Data parallelism (notebooks 02 and 05) gives every rank a different slice of the **batch**.
# Tensor parallelism (Megatron-LM, Shoeybi et al. 2019) gives every rank the **same batch** and
# a slice of every large **weight matrix**: one layer is computed by several ranks together. For
# the transformer's MLP block `Z = GeLU(X A) B` the paper's split is
#
# 1. `A` by **columns**: rank `i` holds `A_i` and computes `Y_i = GeLU(X A_i)`, its slice of the
#    hidden units, from the whole `X`;
# 2. `B` by **rows**: rank `i` holds `B_i`, the rows that multiply its hidden units, and computes
#    the partial product `Y_i B_i`;
# 3. the partials are **summed** over the ranks: `Z = sum_i Y_i B_i`.
#
# Two conjugate operators carry the communication: **f** (identity forward, all-reduce of the
# gradient backward) where the replicated `X` enters, and **g** (all-reduce forward, identity
# backward) where the partials are summed. This notebook checks the algebra on one process with
# plain arrays first, then runs `minigrad_dist.tensor_parallel.TensorParallelMLP` on 2 ranks and
# counts its all-reduces. Every cell checks what it shows with `assert`.

# %%
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.patches import Rectangle
from notebook_helpers import SCRIPTS, function_source, run_ranks

import minigrad as mg
from minigrad import nn
from minigrad.nn import functional as F

assert (SCRIPTS / "tp_mlp.py").exists(), "run this notebook from its folder, examples/notebooks"

# %% [markdown]
# ## 1. The split by hand, on one process
#
# A minigrad (and PyTorch) `Linear` computes `y = x W^T + b` with `W` of shape
# `(out_features, in_features)`. So the paper's `A` is `fc1.weight.T`: splitting `A` by
# **columns** means taking **rows** of `fc1.weight`, and splitting `B` by **rows** means taking
# **columns** of `fc2.weight`. Here is an MLP 6 -> 16 -> 10 cut in `p = 2` by hand:

# %%
IN, HIDDEN, OUT, BATCH, P = 6, 16, 10, 4, 2
mg.manual_seed(0)
fc1 = nn.Linear(IN, HIDDEN, dtype=mg.float64)
fc2 = nn.Linear(HIDDEN, OUT, dtype=mg.float64)
gelu = nn.GELU()
x = mg.tensor(np.random.default_rng(1).standard_normal((BATCH, IN)))

full = fc2(gelu(fc1(x)))
width = HIDDEN // P
partials = []
for i in range(P):
    own = slice(i * width, (i + 1) * width)  # rank i's hidden units
    w1_i, b1_i = fc1.weight[own], fc1.bias[own]  # column split of A: rows of fc1.weight
    w2_i = fc2.weight[:, own]  # row split of B: columns of fc2.weight
    y_i = gelu(F.linear(x, w1_i, b1_i))  # no communication: GeLU acts on rank i's columns alone
    partial = F.linear(y_i, w2_i)  # rank i's partial product, no bias yet
    partials.append(partial)
    print(f"rank {i}: fc1 shard {tuple(w1_i.shape)}, Y_{i} {tuple(y_i.shape)}, fc2 shard {tuple(w2_i.shape)}, "
          f"partial {tuple(partial.shape)}")
    assert tuple(w1_i.shape) == (HIDDEN // P, IN) and tuple(w2_i.shape) == (OUT, HIDDEN // P)
    assert tuple(partial.shape) == tuple(full.shape) == (BATCH, OUT)

summed = partials[0] + partials[1] + fc2.bias  # g: the all-reduce; the bias is added once, after it
difference = np.abs(summed.detach().numpy() - full.detach().numpy()).max()
print(f"\nfull output {tuple(full.shape)}; largest |sum of partials + bias - full| = {difference:.1e}")
assert difference < 1e-12

# %% [markdown]
# Each partial product has the **full** output shape `(batch, 10)`, but it is only a share of the
# output: neither partial is close to it on its own. Only the sum is.
#
# Why this order, column then row? The other way round, splitting `A` by rows, each rank would
# hold a partial sum of `X A` and GeLU would have to wait for the total: `GeLU(a + b)` is not
# `GeLU(a) + GeLU(b)`. That would cost a second all-reduce in the middle of the block:

# %%
for partial in partials:
    assert np.abs(partial.detach().numpy() - full.detach().numpy()).max() > 0.1

split_rows = [F.linear(x[:, i * (IN // 2):(i + 1) * (IN // 2)], fc1.weight[:, i * (IN // 2):(i + 1) * (IN // 2)])
              for i in range(P)]
gelu_of_sum = gelu(split_rows[0] + split_rows[1] + fc1.bias)
sum_of_gelus = gelu(split_rows[0] + fc1.bias) + gelu(split_rows[1])
gap = np.abs(gelu_of_sum.detach().numpy() - sum_of_gelus.detach().numpy()).max()
print(f"splitting A by rows: |GeLU(sum of partials) - sum of GeLU(partials)| up to {gap:.2f}")
assert gap > 0.1

# %% [markdown]
# ## 2. On 2 ranks: `TensorParallelMLP`
#
# `TensorParallelMLP.from_linears(fc1, activation, fc2, process_group)` does the cutting above
# for a rank: `fc1` becomes a `ColumnParallelLinear` (input through f), `fc2` a
# `RowParallelLinear` (output through g, then the replicated bias). `scripts/tp_mlp.py` builds
# the same full MLP on every rank, cuts it over the `tp` group of a 1-D device mesh
# (`init_device_mesh("cpu", (2,), mesh_dim_names=("tp",))`), and runs a forward and a backward of
# both. To count the communication it wraps `collectives.all_reduce`, the one collective f and g
# call, with a recorder:

# %%
print(function_source("tp_mlp.py", "recording_all_reduces"))

# %%
result = run_ranks("tp_mlp.py", 2, timeout=60)
assert result["world_size"] == 2
for rank, report in enumerate(result["ranks"]):
    print(f"rank {rank} holds", ", ".join(f"{name} {tuple(shape)}" for name, shape in report["shapes"].items()))
    assert report["shapes"] == {"fc1.weight": [8, 6], "fc1.bias": [8], "fc2.weight": [10, 8], "fc2.bias": [10]}

# %% [markdown]
# Each rank holds half of `fc1` (8 of the 16 hidden units) and half of `fc2`'s columns, and the
# whole (replicated) `fc2.bias`. The block computes what the full MLP computes, and its
# backward gives the full model's gradients: the input gradient whole on every rank, each
# weight gradient as this rank's slice of the full one:

# %%
for rank, report in enumerate(result["ranks"]):
    for what, difference in report["max_difference"].items():
        print(f"rank {rank}  {what:16s} largest |tensor parallel - full| = {difference:.1e}")
        assert difference < 1e-12, (rank, what)

# %% [markdown]
# ## 3. The all-reduces: one forward (g), one backward (f)
#
# The recorder saw every all-reduce of one forward and one backward, with the shape of the tensor
# reduced:

# %%
for rank, report in enumerate(result["ranks"]):
    print(f"rank {rank}:", report["all_reduces"])
    assert report["all_reduces"] == [["forward", [4, 10]], ["backward", [4, 6]]]

# %% [markdown]
# Exactly two, as the paper says:
#
# * **forward**: g sums the partial products, a `(batch, out) = (4, 10)` tensor;
# * **backward**: g passes `dL/dZ` to every rank unchanged (identity), and the gradient with
#   respect to `X` comes back from each rank's half of the hidden units; f's backward sums them,
#   a `(batch, in) = (4, 6)` tensor.
#
# Nothing is communicated between the two layers, in either direction, and nothing for the
# weights: their gradients stay where the weights are. What the block pays per layer is two
# all-reduces of activations, whatever the hidden size; what it saves, on every rank, is `1 - 1/p`
# of the weights (all but the replicated output bias), of their gradients and optimizer state,
# and of the hidden activations.
#
# The picture: the two weight matrices in the paper's orientation (`A = fc1.weight.T`,
# `B = fc2.weight.T`) coloured by the rank that holds each part, with the tensors f and g move.

# %%
shapes = result["ranks"][0]["shapes"]
hidden_per_rank = shapes["fc1.weight"][0]  # rank 0's fc1 shard: (hidden / p, in)
assert hidden_per_rank * P == HIDDEN
s = 0.3  # drawing units per matrix element
colors = ["tab:blue", "tab:orange"]
fig, ax = plt.subplots(figsize=(10, 3.4))
ax.add_patch(Rectangle((0, 0), IN * s, BATCH * s, color="lightgray"))  # X (batch, in)
for rank in range(P):  # A (in, hidden): columns per rank; B (hidden, out): rows per rank
    ax.add_patch(Rectangle((3.2 + rank * hidden_per_rank * s, 0), hidden_per_rank * s, IN * s, color=colors[rank]))
    ax.add_patch(Rectangle((10.5, (P - 1 - rank) * hidden_per_rank * s), OUT * s, hidden_per_rank * s,
                           color=colors[rank]))
ax.add_patch(Rectangle((16, 0), OUT * s, BATCH * s, color="lightgray"))  # Z (batch, out)
labels = [(0.9, f"X {BATCH}x{IN}\nreplicated"), (5.6, f"A = fc1.weight.T, {IN}x{HIDDEN}\ncolumns split"),
          (12.0, f"B = fc2.weight.T, {HIDDEN}x{OUT}\nrows split"), (17.5, f"Z {BATCH}x{OUT}\nreplicated")]
for left, text in labels:
    ax.text(left, HIDDEN * s + 0.3, text, ha="center", fontsize=9)
for left, text in [(2.4, "f"), (9.3, "GeLU\n(local)"), (15.0, "g")]:
    ax.text(left, 0.8, text, ha="center", va="center", fontsize=14 if len(text) == 1 else 9)
ax.text(9, -0.9, "blue: rank 0, orange: rank 1.   f: identity forward, all-reduce of dL/dX backward.   "
        "g: all-reduce of the partial products forward, identity backward.", ha="center", fontsize=8)
ax.set_xlim(-0.3, 19.5)
ax.set_ylim(-1.3, HIDDEN * s + 1.3)
ax.set_aspect("equal")
ax.axis("off")
ax.set_title("Megatron's MLP on 2 ranks: fc1 column-parallel, fc2 row-parallel")
plt.show()

# %% [markdown]
# ## Where to read next
#
# * `minigrad_dist/tensor_parallel/__init__.py`: the algorithm in numbered steps, with the
#   attention block (heads split over ranks) and sequence parallelism.
# * `mappings.py`: f, g and the gather/scatter pairs as autograd `Function`s, each one's backward
#   its conjugate; `layers.py`: `ColumnParallelLinear`, `RowParallelLinear`, `TensorParallelMLP`.
# * `style.py`: `parallelize_module(model, mesh, {"fc1": ColwiseParallel(), "fc2":
#   RowwiseParallel()})` does the same to plain `nn.Linear` layers, as
#   `torch.distributed.tensor.parallel` does.
# * Notebook 07: pipeline parallelism, which splits the model by layers instead.
