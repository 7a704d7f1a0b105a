"""Transformer encoder blocks, as in ``torch.nn``: ``TransformerEncoderLayer`` and ``TransformerEncoder``.

A layer is self-attention followed by a position-wise feed-forward network,
each wrapped in a residual connection with layer normalization, either after
the residual sum (``norm_first=False``, the original Transformer)::

    x = norm1(x + dropout1(self_attn(x)))
    x = norm2(x + dropout2(linear2(dropout(activation(linear1(x))))))

or before the sub-block (``norm_first=True``)::

    x = x + dropout1(self_attn(norm1(x)))
    x = x + dropout2(linear2(dropout(activation(linear1(norm2(x))))))

Sub-module names match PyTorch's, so ``state_dict`` keys do too.
"""

from __future__ import annotations

import copy
import numbers

from minigrad.nn import functional as F
from minigrad.nn.attention import MultiheadAttention
from minigrad.nn.layers import Dropout, LayerNorm, Linear, ModuleList
from minigrad.nn.module import Module

__all__ = ["TransformerEncoderLayer", "TransformerEncoder"]


def _activation(activation):
    """"relu"/"gelu" as the functional, a callable as it is.

    Raises:
        RuntimeError: an unknown name (PyTorch's type). TypeError: neither a name nor callable.
    """
    if isinstance(activation, str):
        if activation == "relu":
            return F.relu
        if activation == "gelu":
            return F.gelu
        raise RuntimeError(f"TransformerEncoderLayer: activation should be relu/gelu, not {activation}")
    if not callable(activation):
        raise TypeError(
            f"TransformerEncoderLayer: activation must be 'relu', 'gelu' or a callable, got {type(activation).__name__}"
        )
    return activation


def _feed_forward(owner: str, d_model: int, dim_feedforward: int, dropout: float, bias: bool, kwargs: dict) -> tuple:
    """A layer's feed-forward block ``(linear1, dropout, linear2)``: d_model -> dim_feedforward -> d_model.

    Raises:
        TypeError: ``dim_feedforward`` is not an int. RuntimeError: it is negative (PyTorch's classes, from
        allocating ``linear1``'s weight).
    """
    if not isinstance(dim_feedforward, numbers.Integral) or isinstance(dim_feedforward, bool):
        raise TypeError(f"{owner}: dim_feedforward must be an int, got {dim_feedforward!r}")
    if dim_feedforward < 0:
        raise RuntimeError(f"{owner}: dim_feedforward must be non-negative, got {dim_feedforward}")
    return (
        Linear(d_model, dim_feedforward, bias=bias, **kwargs),
        Dropout(dropout),
        Linear(dim_feedforward, d_model, bias=bias, **kwargs),
    )


class TransformerEncoderLayer(Module):
    """Self-attention and a feed-forward network, each with a residual connection and layer norm.

    Args:
        d_model: features of the input and output.
        nhead: attention heads (must divide ``d_model``).
        dim_feedforward: hidden features of the feed-forward network (default 2048).
        dropout: dropout on the attention weights, inside the feed-forward network
            and on both residual branches (default 0.1; training mode only).
        activation: "relu" (default), "gelu", or a callable (a Module is registered
            as the sub-module ``activation``, as in PyTorch).
        layer_norm_eps: the layer norms' eps (default 1e-5).
        batch_first: input (N, S, d_model) instead of (S, N, d_model).
        norm_first: normalize before each sub-block instead of after the residual sum.
        bias: learn the biases of the linear layers and layer norms (default True).

    Sub-modules: ``self_attn`` (MultiheadAttention), ``linear1``, ``dropout``,
    ``linear2``, ``norm1``, ``norm2``, ``dropout1``, ``dropout2``.

    Raises:
        RuntimeError: an unknown activation name; a negative ``dim_feedforward``.
        TypeError: an activation that is neither a name nor callable; a ``dim_feedforward`` that is not an int.
        AssertionError: ``nhead`` does not divide ``d_model`` (from MultiheadAttention).
    """

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048, dropout: float = 0.1,
                 activation="relu", layer_norm_eps: float = 1e-5, batch_first: bool = False,
                 norm_first: bool = False, bias: bool = True, device=None, dtype=None):
        super().__init__()
        activation_fn = _activation(activation)
        kwargs = {"device": device, "dtype": dtype}
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first,
                                            **kwargs)
        self.linear1, self.dropout, self.linear2 = _feed_forward("TransformerEncoderLayer", d_model, dim_feedforward,
                                                                 dropout, bias, kwargs)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kwargs)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kwargs)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.activation = activation_fn

    def forward(self, src, src_mask=None, src_key_padding_mask=None, is_causal: bool = False):
        """Encode ``src``.

        Args:
            src: (S, N, d_model), (N, S, d_model) with ``batch_first``, or (S, d_model).
            src_mask: (S, S) or (N * nhead, S, S): bool True = not allowed to attend,
                or a float mask added to the attention scores.
            src_key_padding_mask: (N, S) (or (S,)): bool True = padding, ignored as a key.
            is_causal: a hint that ``src_mask`` is the causal mask (see ``MultiheadAttention``).

        Returns:
            Tensor shaped like ``src``.

        Raises:
            RuntimeError/AssertionError: as ``MultiheadAttention`` for shapes and masks.
        """
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal)
            x = x + self._ff_block(self.norm2(x))
        else:
            x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal))
            x = self.norm2(x + self._ff_block(x))
        return x

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask, need_weights=False,
                           is_causal=is_causal)[0]
        return self.dropout1(x)

    def _ff_block(self, x):
        x = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return self.dropout2(x)


class TransformerEncoder(Module):
    """A stack of ``num_layers`` deep copies of ``encoder_layer``, then an optional ``norm``.

    Args:
        encoder_layer: the layer to copy (e.g. a ``TransformerEncoderLayer``);
            each copy gets its own parameters (equal at first).
        num_layers: how many copies, registered as ``layers.0``, ``layers.1``, ...
        norm: optional module applied to the last layer's output.
        enable_nested_tensor, mask_check: accepted for ported code and ignored:
            they tune PyTorch's nested-tensor inference path, which minigrad does
            not have. So, unlike PyTorch in that path, outputs at padded positions
            are computed as usual rather than set to zero.

    Raises:
        TypeError: ``encoder_layer`` is not a Module, or ``num_layers`` is not an int.
        ValueError: ``num_layers`` is negative.
    """

    def __init__(self, encoder_layer, num_layers: int, norm=None, enable_nested_tensor: bool = True,
                 mask_check: bool = True):
        super().__init__()
        if not isinstance(encoder_layer, Module):
            raise TypeError(f"TransformerEncoder: encoder_layer must be a Module, got {type(encoder_layer).__name__}")
        if not isinstance(num_layers, numbers.Integral) or isinstance(num_layers, bool):
            raise TypeError(f"TransformerEncoder: num_layers must be an int, got {type(num_layers).__name__}")
        if num_layers < 0:
            raise ValueError(f"TransformerEncoder: num_layers must be non-negative, got {num_layers}")
        self.layers = ModuleList([copy.deepcopy(encoder_layer) for _ in range(num_layers)])
        self.num_layers = int(num_layers)
        self.norm = norm
        self.enable_nested_tensor = enable_nested_tensor
        self.mask_check = mask_check

    def forward(self, src, mask=None, src_key_padding_mask=None, is_causal=None):
        """Pass ``src`` through every layer (with the same masks), then ``norm``.

        Args:
            src: the input sequence, as the layers expect it.
            mask: the attention mask (see ``TransformerEncoderLayer``).
            src_key_padding_mask: the key padding mask (see ``TransformerEncoderLayer``).
            is_causal: a hint that ``mask`` is causal; None counts as False (PyTorch
                then checks whether the mask is causal, which only picks a faster kernel).

        Returns:
            Tensor shaped like ``src``.
        """
        output = src
        for layer in self.layers:
            output = layer(output, src_mask=mask, src_key_padding_mask=src_key_padding_mask,
                           is_causal=bool(is_causal))
        if self.norm is not None:
            output = self.norm(output)
        return output
