"""The vocabulary split over a tensor-parallel group: ``VocabParallelEmbedding`` and its cross-entropy.

A language model's two largest matrices are ``(vocabulary, hidden)``: the input
embedding and the output head. Megatron-LM splits both along the vocabulary;
rank ``i`` of ``p`` holds the rows of tokens ``i*V/p`` to ``(i+1)*V/p``.

``VocabParallelEmbedding``, in the order of its forward:

1. Tokens outside this rank's range are masked; the others are shifted to
   the local row numbering.
2. Look up the local rows; the masked tokens' rows are multiplied by zero
   (so they also get no gradient).
3. **g** (all-reduce forward, identity backward): each token's row comes from
   exactly one rank, so the sum is the full embedding, on every rank.

``vocab_parallel_cross_entropy(logits, target)`` takes logits split along
the vocabulary (what a ``ColumnParallelLinear`` head leaves, with
``gather_output=False``) and never gathers them: only two numbers per token
cross the group, instead of ``V`` logits.

1. The maximum logit over the whole vocabulary: the local maximum, all-reduced
   (MAX). It only keeps ``exp`` in range; the loss does not depend on it, so it
   takes no part in the gradient.
2. ``sum(exp(logit - max))`` over the local vocabulary, summed across the
   group by **g**.
3. The target's shifted logit: taken by the rank that holds the target's
   row (zero elsewhere) and summed by **g**.
4. ``loss = log(sum_exp) - target_logit`` per token, then the reduction.

Backward follows from the autograd graph: each rank gets
``softmax - one_hot(target)`` for its own slice of the vocabulary.
"""

from __future__ import annotations

import math

from minigrad import backend
from minigrad.factory import tensor as make_tensor
from minigrad.grad_mode import no_grad
from minigrad.nn import functional as F
from minigrad.nn import init
from minigrad.nn.layers import Embedding, _empty_parameter
from minigrad.nn.module import Module
from minigrad.tensor import Tensor
from minigrad_dist import collectives
from minigrad_dist.process_group import ReduceOp
from minigrad_dist.tensor_parallel.layers import _shard_width
from minigrad_dist.tensor_parallel.mappings import reduce_from_tensor_parallel_region

__all__ = ["VocabParallelEmbedding", "vocab_parallel_cross_entropy"]


def _vocab_range(per_rank: int, group) -> tuple:
    start = collectives.get_rank(group) * per_rank
    return start, start + per_rank


def _local_ids(ids, start: int, end: int):
    """``(local ids, in-range mask)`` as arrays: ids outside ``[start, end)`` become 0 and are masked out."""
    xp = backend.get_array_module(ids)
    inside = (ids >= start) & (ids < end)
    return xp.where(inside, ids - start, 0), inside


class VocabParallelEmbedding(Module):
    """An ``nn.Embedding`` split along the vocabulary over a tensor-parallel group (Megatron's).

    Rank ``i`` of ``p`` holds rows ``i*V/p`` to ``(i+1)*V/p``; the output is
    the full embedding of every token, replicated (one all-reduce forward).

    Args:
        num_embeddings (int): the vocabulary size ``V``; must divide by the group size.
        embedding_dim (int): size of each row.
        padding_idx (int, optional): a row that starts at zero and gets no gradient.
        process_group (ProcessGroup, optional): the tensor-parallel group (default: the world).
        device, dtype: as for ``nn.Embedding``.

    Shapes: input ``(*)`` of token ids in ``[0, V)``; output ``(*, embedding_dim)``;
    ``weight`` ``(V / p, embedding_dim)``, drawn from N(0, 1) as ``nn.Embedding``'s
    (use ``from_embedding`` to copy a full one).

    Raises:
        ValueError: ``num_embeddings`` does not divide by the group size,
            ``padding_idx`` is out of range; in the forward, an id outside ``[0, V)``.
        TypeError: the forward's input is not an integer Tensor.
    """

    def __init__(self, num_embeddings, embedding_dim, padding_idx=None, process_group=None, device=None, dtype=None):
        super().__init__()
        layer = "VocabParallelEmbedding"
        self.num_embeddings = num_embeddings
        self.num_embeddings_per_rank = _shard_width(num_embeddings, process_group, layer, "num_embeddings")
        self.embedding_dim = embedding_dim
        if padding_idx is not None and not -num_embeddings <= padding_idx < num_embeddings:
            raise ValueError(
                f"{layer}: padding_idx must be within num_embeddings ({num_embeddings}), got {padding_idx}"
            )
        self.padding_idx = None if padding_idx is None else padding_idx % num_embeddings
        self.process_group = process_group
        self.vocab_start, self.vocab_end = _vocab_range(self.num_embeddings_per_rank, process_group)
        self.weight = _empty_parameter((self.num_embeddings_per_rank, embedding_dim), device, dtype)
        self.reset_parameters()

    def _local_padding_idx(self):
        if self.padding_idx is None or not self.vocab_start <= self.padding_idx < self.vocab_end:
            return None
        return self.padding_idx - self.vocab_start

    def reset_parameters(self) -> None:
        """Draw the rows from N(0, 1) (each rank its own), zeroing the padding row where this rank holds it."""
        init.normal_(self.weight)
        local_padding = self._local_padding_idx()
        if local_padding is not None:
            with no_grad():
                self.weight[local_padding] = 0

    @classmethod
    def from_embedding(cls, embedding, process_group=None) -> VocabParallelEmbedding:
        """This rank's rows of the full ``embedding`` (copied).

        Raises:
            TypeError: ``embedding`` is not an ``nn.Embedding``.
            ValueError: its vocabulary does not divide by the group size.
        """
        if not isinstance(embedding, Embedding):
            raise TypeError(f"VocabParallelEmbedding.from_embedding: expected an nn.Embedding, got {type(embedding)}")
        layer = cls(
            embedding.num_embeddings,
            embedding.embedding_dim,
            embedding.padding_idx,
            process_group,
            device=embedding.weight.device,
            dtype=embedding.weight.dtype,
        )
        with no_grad():
            layer.weight.copy_(embedding.weight[layer.vocab_start : layer.vocab_end])
        return layer

    def forward(self, input):  # noqa: A002
        """The embedding of every token of ``input``, the same on every rank of the group."""
        ids = _token_ids(input, self.num_embeddings, "VocabParallelEmbedding")
        local, inside = _local_ids(ids, self.vocab_start, self.vocab_end)
        rows = F.embedding(make_tensor(local), self.weight, self._local_padding_idx())
        keep = make_tensor(inside[..., None].astype(self.weight.array.dtype))
        return reduce_from_tensor_parallel_region(rows * keep, self.process_group)

    def extra_repr(self) -> str:
        return (
            f"{self.num_embeddings} ({self.num_embeddings_per_rank} per rank: {self.vocab_start} to "
            f"{self.vocab_end - 1}), {self.embedding_dim}"
        )


def _token_ids(input, vocabulary: int, fn: str):  # noqa: A002
    """``input``'s array of token ids, checked to be integers in ``[0, vocabulary)``."""
    if not isinstance(input, Tensor) or input.dtype.kind not in "iu":
        raise TypeError(f"{fn}: expected an integer Tensor of token ids, got {getattr(input, 'dtype', type(input))}")
    ids = input.array
    if ids.size and (int(ids.min()) < 0 or int(ids.max()) >= vocabulary):
        raise ValueError(
            f"{fn}: token ids must be in [0, {vocabulary}), got ids from {int(ids.min())} to {int(ids.max())}"
        )
    return ids


def vocab_parallel_cross_entropy(
    logits, target, *, ignore_index: int = -100, reduction: str = "mean", process_group=None
) -> Tensor:
    """Cross-entropy of logits split along the vocabulary, without gathering them (Megatron's).

    Equals ``F.cross_entropy(full_logits, target)`` where ``full_logits`` are
    every rank's slices concatenated along the last dimension in group-rank
    order, on every rank, and so do the gradients of each rank's slice.

    Args:
        logits (Tensor): ``(*, V / p)``, this rank's slice of the vocabulary
            (as a ``ColumnParallelLinear`` head leaves them).
        target (Tensor): ``(*)`` integer ids in ``[0, V)`` (or ``ignore_index``), the same on every rank.
        ignore_index (int): targets that add nothing to the loss (nor its mean's count).
        reduction (str): ``"mean"`` (over the counted tokens), ``"sum"`` or ``"none"``.
        process_group (ProcessGroup, optional): the tensor-parallel group (default: the world).

    Returns:
        Tensor: the loss (a scalar, or ``(*)`` for ``"none"``), the same on every rank.

    Raises:
        ValueError: the shapes do not fit, ``reduction`` is unknown, or a target is out of range.
        TypeError: ``logits`` is not a floating Tensor, or ``target`` not an integer Tensor.
    """
    fn = "vocab_parallel_cross_entropy"
    if not isinstance(logits, Tensor) or logits.dtype.kind != "f" or logits.ndim == 0:
        raise TypeError(f"{fn}: logits must be a floating Tensor of shape (*, V / p), got {logits!r}")
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{fn}: reduction must be 'mean', 'sum' or 'none', got {reduction!r}")
    if not isinstance(target, Tensor) or tuple(target.shape) != tuple(logits.shape[:-1]):
        raise ValueError(
            f"{fn}: target must have the logits' shape without the last dim, "
            f"{tuple(logits.shape[:-1])}; got {getattr(target, 'shape', type(target))}"
        )
    per_rank = logits.shape[-1]
    vocabulary = per_rank * collectives.get_world_size(process_group)
    xp = backend.get_array_module(logits.array)
    counted = target.array != ignore_index
    ids = _token_ids(make_tensor(xp.where(counted, target.array, 0)), vocabulary, fn)
    # Step 1: a shift for exp's range only (the loss does not depend on it), so no gradient.
    shift = xp.array(logits.array.max(axis=-1), copy=True)
    collectives.all_reduce(shift, ReduceOp.MAX, process_group)
    shifted = logits - make_tensor(shift[..., None])
    # Step 2: the softmax's denominator over the whole vocabulary.
    sum_exp = reduce_from_tensor_parallel_region(shifted.exp().sum(dim=-1), process_group)
    # Step 3: the target's shifted logit, from the rank that holds it.
    start, end = _vocab_range(per_rank, process_group)
    local, inside = _local_ids(ids, start, end)
    one_hot = (xp.arange(per_rank) == local[..., None]) & inside[..., None]
    picked = (shifted * make_tensor(one_hot.astype(logits.array.dtype))).sum(dim=-1)
    target_logit = reduce_from_tensor_parallel_region(picked, process_group)
    # Step 4: the loss per token, and the reduction.
    losses = (sum_exp.log() - target_logit) * make_tensor(counted.astype(logits.array.dtype))
    if reduction == "none":
        return losses
    total = losses.sum()
    if reduction == "sum":
        return total
    count = int(counted.sum())
    return total / count if count else total * math.nan  # no counted token: NaN, as PyTorch's mean of nothing
