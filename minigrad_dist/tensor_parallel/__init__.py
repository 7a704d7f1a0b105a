"""Tensor parallelism as in Megatron-LM (Shoeybi et al. 2019): one layer's weights split over a group of ranks.

Every rank of a tensor-parallel group sees the same batch; each holds a
slice of every large weight matrix and computes a slice of the layer. Two
conjugate operators move activations between the *replicated* region (the
same tensor on every rank) and the *split* region (one slice per rank):

* **f**: identity forward, all-reduce (sum) of the gradient backward
  (``copy_to_tensor_parallel_region``);
* **g**: all-reduce (sum) forward, identity backward
  (``reduce_from_tensor_parallel_region``).

**The MLP block** ``Z = dropout(GeLU(X A) B)``, with ``A`` split by columns
and ``B`` by rows (``TensorParallelMLP``):

1. ``X`` (replicated) enters through **f**.
2. Rank ``i`` computes ``Y_i = GeLU(X A_i)`` with its columns ``A_i`` of
   ``A`` (``ColumnParallelLinear``). The column split keeps GeLU local:
   GeLU of a sum would need the sum first, GeLU of a slice of columns does not.
3. Rank ``i`` computes the partial product ``Y_i B_i`` with its rows ``B_i``
   of ``B`` (``RowParallelLinear``); no communication between steps 2 and 3.
4. **g** sums the partials: ``Z = sum_i Y_i B_i``, replicated; the bias and
   dropout follow on the replicated tensor.

Backward runs the same picture right to left: g passes ``dL/dZ`` to every
rank unchanged, and f sums the ranks' ``dL/dX_i``. One all-reduce forward,
one backward::

               replicated        |        split over ranks          |  replicated
                                 |                                  |
           +---+   X   +-------------------+  Y_1  +-------------+  |  +---+
      X -->| f |------>| GeLU(X A_1)       |------>| Y_1 B_1     |---->|   |
           +---+   |   +-------------------+       +-------------+  |  | g |--> Z
                   |   +-------------------+  Y_2  +-------------+  |  |   |
                   +-->| GeLU(X A_2)       |------>| Y_2 B_2     |---->|   |
                       +-------------------+       +-------------+  |  +---+

**The self-attention block** (heads split over ranks; ``TensorParallelSelfAttention``):

1. ``X`` enters through **f**.
2. The query, key and value projections are split by columns, a group of
   whole heads per rank: rank ``i`` computes ``Q_i, K_i, V_i`` of its heads.
3. Each rank runs attention for its heads alone (heads are independent).
4. The output projection is split by rows: rank ``i`` multiplies its heads'
   outputs by its rows of ``W_O``.
5. **g** sums the partials; bias and dropout follow, replicated.

**Sequence parallelism** (Korthikanti et al. 2022, optional): in the
replicated regions between the blocks (LayerNorm, dropout, the residual
adds) each rank keeps only its slice of the sequence. f becomes an
all-gather along the sequence (its backward a reduce-scatter) and g a
reduce-scatter (its backward an all-gather): the same traffic as two
all-reduces, with the activations of those regions divided by ``p``
(``sequence_dim`` of the two linear layers; ``SequenceParallel`` for the
modules in between).

Modules: ``mappings`` (f, g, gather, split, and the sequence-parallel pair), ``layers``
(``ColumnParallelLinear``, ``RowParallelLinear``, ``TensorParallelMLP``),
``attention`` (``TensorParallelSelfAttention``),
``vocab`` (``VocabParallelEmbedding``, ``vocab_parallel_cross_entropy``),
``style`` (``parallelize_module`` with ``ColwiseParallel`` / ``RowwiseParallel``,
as ``torch.distributed.tensor.parallel``, for plain ``nn.Linear`` layers).
Build the groups with ``minigrad_dist.device_mesh.init_device_mesh``:
``mesh["tp"].get_group()``.
"""

from minigrad_dist.tensor_parallel.attention import TensorParallelSelfAttention
from minigrad_dist.tensor_parallel.layers import ColumnParallelLinear, RowParallelLinear, TensorParallelMLP
from minigrad_dist.tensor_parallel.mappings import (
    copy_to_tensor_parallel_region,
    gather_from_sequence_parallel_region,
    gather_from_tensor_parallel_region,
    reduce_from_tensor_parallel_region,
    reduce_scatter_to_sequence_parallel_region,
    scatter_to_tensor_parallel_region,
)
from minigrad_dist.tensor_parallel.style import (
    ColwiseParallel,
    ParallelStyle,
    Replicate,
    RowwiseParallel,
    SequenceParallel,
    Shard,
    parallelize_module,
)
from minigrad_dist.tensor_parallel.vocab import VocabParallelEmbedding, vocab_parallel_cross_entropy

__all__ = [
    "TensorParallelSelfAttention",
    "VocabParallelEmbedding",
    "vocab_parallel_cross_entropy",
    "ColwiseParallel",
    "ParallelStyle",
    "Replicate",
    "RowwiseParallel",
    "SequenceParallel",
    "Shard",
    "parallelize_module",
    "ColumnParallelLinear",
    "RowParallelLinear",
    "TensorParallelMLP",
    "copy_to_tensor_parallel_region",
    "gather_from_tensor_parallel_region",
    "reduce_from_tensor_parallel_region",
    "scatter_to_tensor_parallel_region",
    "gather_from_sequence_parallel_region",
    "reduce_scatter_to_sequence_parallel_region",
]
