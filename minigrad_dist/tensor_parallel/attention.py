"""Megatron's self-attention block: the heads split over a tensor-parallel group.

Attention heads are independent until the output projection, so each rank
computes whole heads, ``num_heads / p`` of them, in the order of the forward:

1. **f** (inside the fused projection): the replicated input ``X`` enters the split region.
2. One ``ColumnParallelLinear`` computes this rank's heads' queries, keys and
   values: its weight stacks the rows of ``W_Q``, ``W_K`` and ``W_V`` that
   belong to those heads, so one matmul (and one all-reduce of ``X``'s
   gradient in the backward) serves all three.
3. ``scaled_dot_product_attention`` over this rank's heads alone.
4. A ``RowParallelLinear`` multiplies the heads' outputs by the matching
   columns of ``W_O``, and **g** sums the ranks' partial outputs; the bias is
   added once, replicated.

As for the MLP block: one all-reduce forward (g), one backward (f's).
"""

from __future__ import annotations

from minigrad.grad_mode import no_grad
from minigrad.nn.attention import MultiheadAttention, scaled_dot_product_attention
from minigrad.nn.module import Module
from minigrad.ops.shape import cat
from minigrad.tensor import Tensor
from minigrad_dist import collectives
from minigrad_dist.tensor_parallel.layers import ColumnParallelLinear, RowParallelLinear, _positive

__all__ = ["TensorParallelSelfAttention"]


class TensorParallelSelfAttention(Module):
    """Multi-head self-attention with its heads split over a tensor-parallel group (Megatron's attention block).

    Args:
        embed_dim (int): the model width ``E``.
        num_heads (int): heads in all; must divide by the group size (and ``E`` by ``num_heads``).
        bias (bool): the projections learn biases. Default True.
        batch_first (bool): input and output are ``(N, L, E)``; default False:
            ``(L, N, E)``, as ``nn.MultiheadAttention``.
        process_group (ProcessGroup, optional): the tensor-parallel group (default: the world).
        device, dtype: as for ``nn.Linear``.

    Attributes:
        qkv (ColumnParallelLinear): ``(3 * E / p, E)``: this rank's heads' rows of W_Q, then W_K, then W_V.
        out_proj (RowParallelLinear): ``(E, E / p)``: the matching columns of W_O.

    The constructor draws each projection from a full ``nn.Linear``'s
    distribution; ``from_multihead_attention`` copies an ``nn.MultiheadAttention``
    exactly. No dropout, masks other than the causal one, or attention weights.

    Raises:
        ValueError: ``num_heads`` does not divide by the group size, or ``embed_dim`` by ``num_heads``.
    """

    def __init__(self, embed_dim, num_heads, bias=True, batch_first=False, process_group=None, device=None, dtype=None):
        super().__init__()
        layer = "TensorParallelSelfAttention"
        self.embed_dim = _positive(embed_dim, layer, "embed_dim")
        self.num_heads = _positive(num_heads, layer, "num_heads")
        size = collectives.get_world_size(process_group)
        if num_heads % size or embed_dim % num_heads:
            raise ValueError(
                f"{layer}: num_heads={num_heads} must divide by the tensor-parallel group size {size}, and "
                f"embed_dim={embed_dim} by num_heads"
            )
        self.heads_per_rank = num_heads // size
        self.head_dim = embed_dim // num_heads
        self.batch_first = bool(batch_first)
        self.qkv = ColumnParallelLinear(embed_dim, 3 * embed_dim, bias, False, process_group, device, dtype)
        self.out_proj = RowParallelLinear(embed_dim, embed_dim, bias, True, process_group, device, dtype)

    @classmethod
    def from_multihead_attention(cls, mha, process_group=None) -> TensorParallelSelfAttention:
        """This rank's heads of the full ``mha`` (weights copied), computing ``mha(x, x, x)[0]``.

        Raises:
            TypeError: ``mha`` is not an ``nn.MultiheadAttention``.
            ValueError: ``mha`` has separate key/value widths, ``add_bias_kv``,
                ``add_zero_attn`` or dropout; or its heads do not divide by the group size.
        """
        if not isinstance(mha, MultiheadAttention):
            raise TypeError(f"from_multihead_attention: expected an nn.MultiheadAttention, got {type(mha).__name__}")
        if not mha._qkv_same_embed_dim or mha.bias_k is not None or mha.add_zero_attn or mha.dropout:
            raise ValueError(
                "from_multihead_attention: only plain self-attention is split here (kdim = vdim = embed_dim, no "
                "add_bias_kv, no add_zero_attn, dropout 0)"
            )
        weight = mha.in_proj_weight
        block = cls(
            mha.embed_dim,
            mha.num_heads,
            mha.in_proj_bias is not None,
            mha.batch_first,
            process_group,
            device=weight.device,
            dtype=weight.dtype,
        )
        e, width = mha.embed_dim, block.heads_per_rank * block.head_dim
        start = collectives.get_rank(process_group) * width
        rows = [slice(part * e + start, part * e + start + width) for part in range(3)]  # in W_Q, W_K, W_V
        with no_grad():
            block.qkv.weight.copy_(_stack([weight[r] for r in rows]))
            if mha.in_proj_bias is not None:
                block.qkv.bias.copy_(_stack([mha.in_proj_bias[r] for r in rows]))
        block.out_proj = RowParallelLinear.from_linear(mha.out_proj, process_group)
        return block

    def forward(self, x, is_causal: bool = False) -> Tensor:
        """Self-attention of ``x`` (``(L, N, E)``, or ``(N, L, E)`` with ``batch_first``); same shape out.

        Args:
            is_causal (bool): position ``i`` attends to positions ``0..i`` only.
        """
        if not isinstance(x, Tensor) or x.ndim != 3 or x.shape[-1] != self.embed_dim:
            raise ValueError(
                f"TensorParallelSelfAttention: expected input of shape (L, N, {self.embed_dim}) (or (N, L, "
                f"{self.embed_dim}) with batch_first), got {getattr(x, 'shape', type(x))}"
            )
        if not self.batch_first:
            x = x.transpose(0, 1)
        batch, length, _ = x.shape
        width = self.heads_per_rank * self.head_dim
        projected = self.qkv(x)  # (N, L, 3 * width): this rank's heads' q, k, v
        q, k, v = (self._heads(projected[..., i * width : (i + 1) * width]) for i in range(3))
        attended = scaled_dot_product_attention(q, k, v, is_causal=is_causal)  # (N, heads, L, head_dim)
        y = self.out_proj(attended.transpose(1, 2).reshape(batch, length, width))
        return y if self.batch_first else y.transpose(0, 1)

    def _heads(self, t: Tensor) -> Tensor:
        """``(N, L, heads * head_dim)`` -> ``(N, heads, L, head_dim)``."""
        batch, length, _ = t.shape
        return t.reshape(batch, length, self.heads_per_rank, self.head_dim).transpose(1, 2)


def _stack(parts) -> Tensor:
    return cat(parts, 0)
