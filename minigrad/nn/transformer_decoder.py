"""Transformer decoder blocks and the whole encoder-decoder model, as in ``torch.nn``.

``TransformerDecoderLayer`` is self-attention over the target, attention from
the target to the encoder's output (``memory``), and a position-wise
feed-forward network, each wrapped in a residual connection with layer
normalization, after the residual sum (``norm_first=False``)::

    x = norm1(x + dropout1(self_attn(x, x, x)))
    x = norm2(x + dropout2(multihead_attn(x, memory, memory)))
    x = norm3(x + dropout3(linear2(dropout(activation(linear1(x))))))

or before each sub-block (``norm_first=True``: ``x = x + block(norm(x))``).
``TransformerDecoder`` stacks copies of a layer; ``Transformer`` joins a
``TransformerEncoder`` (``minigrad/nn/transformer.py``) and a
``TransformerDecoder``, each followed by a final ``LayerNorm``.

Sub-module names match PyTorch's, so ``state_dict`` keys do too and weights
load across the two libraries.
"""

from __future__ import annotations

import copy
import numbers

import numpy as np

from minigrad import backend
from minigrad.nn import init
from minigrad.nn.attention import MultiheadAttention
from minigrad.nn.layers import Dropout, LayerNorm, ModuleList
from minigrad.nn.module import Module
from minigrad.nn.transformer import TransformerEncoder, TransformerEncoderLayer, _activation, _feed_forward
from minigrad.promotion import get_default_dtype
from minigrad.tensor import Tensor

__all__ = ["TransformerDecoderLayer", "TransformerDecoder", "Transformer"]


def _decoder_activation(activation):
    """``_activation`` with the decoder's name in its error message."""
    try:
        return _activation(activation)
    except RuntimeError:
        raise RuntimeError(f"TransformerDecoderLayer: activation should be relu/gelu, not {activation}") from None


class TransformerDecoderLayer(Module):
    """Self-attention, attention to ``memory`` and a feed-forward network, each with a residual and layer norm.

    Args:
        d_model: features of the target, the memory and the output.
        dropout: dropout on the attention weights, inside the feed-forward network
            and on the three residual branches (default 0.1; training mode only).
        batch_first: inputs (N, T, d_model) instead of (T, N, d_model).
        nhead, dim_feedforward, activation, layer_norm_eps, norm_first, bias: as in
            ``TransformerEncoderLayer`` (heads that divide ``d_model``, 2048 hidden features,
            "relu", 1e-5, post-norm and biases by default).

    Sub-modules: ``self_attn``, ``multihead_attn`` (MultiheadAttention), ``linear1``,
    ``dropout``, ``linear2``, ``norm1``, ``norm2``, ``norm3``, ``dropout1``,
    ``dropout2``, ``dropout3``.

    Raises:
        AssertionError, RuntimeError, TypeError: as ``TransformerEncoderLayer`` (the same arguments).
    """

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048, dropout: float = 0.1,
                 activation="relu", layer_norm_eps: float = 1e-5, batch_first: bool = False,
                 norm_first: bool = False, bias: bool = True, device=None, dtype=None):
        super().__init__()
        kwargs = {"device": device, "dtype": dtype}
        activation_fn = _decoder_activation(activation)
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first,
                                            **kwargs)
        self.multihead_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                                 batch_first=batch_first, **kwargs)
        self.linear1, self.dropout, self.linear2 = _feed_forward("TransformerDecoderLayer", d_model, dim_feedforward,
                                                                 dropout, bias, kwargs)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kwargs)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kwargs)
        self.norm3 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kwargs)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.dropout3 = Dropout(dropout)
        self.activation = activation_fn

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal: bool = False, memory_is_causal: bool = False):
        """Decode ``tgt`` attending to ``memory``.

        Args:
            tgt: (T, N, d_model), (N, T, d_model) with ``batch_first``, or (T, d_model).
            memory: the encoder's output: (S, N, d_model), (N, S, d_model) or (S, d_model).
            tgt_mask: (T, T) or (N * nhead, T, T) mask of the self-attention: bool True =
                not allowed to attend, or a float mask added to the scores (e.g.
                ``Transformer.generate_square_subsequent_mask(T)``).
            memory_mask: (T, S) or (N * nhead, T, S) mask of the attention to ``memory``.
            tgt_key_padding_mask: (N, T): bool True = that target position is padding.
            memory_key_padding_mask: (N, S): bool True = that memory position is padding.
            tgt_is_causal: a hint that ``tgt_mask`` is the causal mask (see ``MultiheadAttention``).
            memory_is_causal: the same hint for ``memory_mask``.

        Returns:
            Tensor shaped like ``tgt``; shape and mask errors (RuntimeError/AssertionError) are
            ``MultiheadAttention``'s.
        """
        x = tgt
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask, tgt_is_causal)
            x = x + self._mha_block(self.norm2(x), memory, memory_mask, memory_key_padding_mask, memory_is_causal)
            x = x + self._ff_block(self.norm3(x))
        else:
            x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask, tgt_is_causal))
            x = self.norm2(x + self._mha_block(x, memory, memory_mask, memory_key_padding_mask, memory_is_causal))
            x = self.norm3(x + self._ff_block(x))
        return x

    # The self-attention block is the encoder layer's: the same sub-modules (``self_attn``, ``dropout1``).
    _sa_block = TransformerEncoderLayer._sa_block

    def _mha_block(self, x, memory, attn_mask, key_padding_mask, is_causal):
        x = self.multihead_attn(x, memory, memory, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                                need_weights=False, is_causal=is_causal)[0]
        return self.dropout2(x)

    def _ff_block(self, x):
        x = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return self.dropout3(x)


def _check_num_layers(num_layers, owner: str) -> int:
    if not isinstance(num_layers, numbers.Integral) or isinstance(num_layers, bool):
        raise TypeError(f"{owner}: num_layers must be an int, got {type(num_layers).__name__}")
    if num_layers < 0:
        raise ValueError(f"{owner}: num_layers must be non-negative, got {num_layers}")
    return int(num_layers)


class TransformerDecoder(Module):
    """A stack of ``num_layers`` deep copies of ``decoder_layer``, then an optional ``norm``.

    Args:
        decoder_layer: the layer to copy (e.g. a ``TransformerDecoderLayer``); each copy
            gets its own parameters (equal at first).
        num_layers: how many copies, registered as ``layers.0``, ``layers.1``, ...
        norm: optional module applied to the last layer's output.

    Raises:
        TypeError: ``decoder_layer`` is not a Module, or ``num_layers`` is not an int.
        ValueError: ``num_layers`` is negative.
    """

    def __init__(self, decoder_layer, num_layers: int, norm=None):
        super().__init__()
        if not isinstance(decoder_layer, Module):
            raise TypeError(f"TransformerDecoder: decoder_layer must be a Module, got {type(decoder_layer).__name__}")
        num_layers = _check_num_layers(num_layers, "TransformerDecoder")
        self.layers = ModuleList([copy.deepcopy(decoder_layer) for _ in range(num_layers)])
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=None, memory_is_causal: bool = False):
        """Pass ``tgt`` through every layer (each attending to ``memory``, all with the same masks), then ``norm``.

        Args:
            tgt, memory, masks: see ``TransformerDecoderLayer.forward``.
            tgt_is_causal: a hint that ``tgt_mask`` is causal; None (the default) means: find out
                by comparing ``tgt_mask`` with ``Transformer.generate_square_subsequent_mask``.
            memory_is_causal: a hint that ``memory_mask`` is causal.

        Returns:
            Tensor shaped like ``tgt``.
        """
        seq_len = None
        if tgt_mask is not None and isinstance(tgt, Tensor) and tgt.ndim >= 2:
            batch_first = getattr(self.layers[0].self_attn, "batch_first", False) if len(self.layers) else False
            seq_len = tgt.shape[1] if batch_first and tgt.ndim == 3 else tgt.shape[0]
        tgt_is_causal = _detect_is_causal_mask(tgt_mask, tgt_is_causal, seq_len)
        output = tgt
        for layer in self.layers:
            output = layer(output, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                           tgt_key_padding_mask=tgt_key_padding_mask,
                           memory_key_padding_mask=memory_key_padding_mask, tgt_is_causal=tgt_is_causal,
                           memory_is_causal=memory_is_causal)
        if self.norm is not None:
            output = self.norm(output)
        return output


def _detect_is_causal_mask(mask, is_causal, size) -> bool:
    """``is_causal`` if given; else whether ``mask`` equals the causal mask of its size (False without a mask)."""
    if is_causal is not None:
        return bool(is_causal)
    if mask is None or mask.ndim != 2:
        return False
    size = mask.shape[-2] if size is None else size
    if tuple(mask.shape) != (size, size):
        return False
    causal = Transformer.generate_square_subsequent_mask(size, device=mask.device, dtype=mask.dtype)
    return bool((mask.array == causal.array).all())


class Transformer(Module):
    """The encoder-decoder Transformer ("Attention Is All You Need"), as ``torch.nn.Transformer``.

    ``forward(src, tgt)`` encodes ``src`` into ``memory`` with a ``TransformerEncoder``
    of ``num_encoder_layers`` layers and a final ``LayerNorm``, then decodes ``tgt``
    against ``memory`` with a ``TransformerDecoder`` of ``num_decoder_layers`` layers
    and a final ``LayerNorm``. Embeddings, positional encodings and the output
    projection are left to the caller, as in PyTorch. Every parameter with more
    than one dimension is initialized with ``xavier_uniform_``.

    Args:
        d_model: features of inputs and outputs (default 512).
        nhead: attention heads (default 8).
        num_encoder_layers, num_decoder_layers: layers of each stack (default 6 each).
        dim_feedforward: hidden features of the feed-forward networks (default 2048).
        dropout: dropout of the layers (default 0.1).
        activation: "relu" (default), "gelu" or a callable.
        custom_encoder, custom_decoder: modules used instead of the standard stacks.
        layer_norm_eps: the layer norms' eps (default 1e-5).
        batch_first: inputs (N, S, d_model) instead of (S, N, d_model).
        norm_first: normalize before each sub-block (see the layers).
        bias: learn the biases of the linear layers and layer norms (default True).

    Sub-modules: ``encoder`` (``layers.i``, ``norm``) and ``decoder`` (``layers.i``, ``norm``).

    Raises:
        RuntimeError: an unknown activation name.
    """

    def __init__(self, d_model: int = 512, nhead: int = 8, num_encoder_layers: int = 6,
                 num_decoder_layers: int = 6, dim_feedforward: int = 2048, dropout: float = 0.1,
                 activation="relu", custom_encoder=None, custom_decoder=None, layer_norm_eps: float = 1e-5,
                 batch_first: bool = False, norm_first: bool = False, bias: bool = True, device=None, dtype=None):
        super().__init__()
        kwargs = {"device": device, "dtype": dtype}

        def stack(custom, layer_type, stack_type, num_layers):
            """``custom``, or ``num_layers`` copies of a ``layer_type`` layer followed by a LayerNorm."""
            if custom is not None:
                return custom
            layer = layer_type(d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps, batch_first,
                               norm_first, bias, **kwargs)
            return stack_type(layer, num_layers, LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kwargs))

        self.encoder = stack(custom_encoder, TransformerEncoderLayer, TransformerEncoder, num_encoder_layers)
        self.decoder = stack(custom_decoder, TransformerDecoderLayer, TransformerDecoder, num_decoder_layers)
        self._reset_parameters()
        self.d_model = d_model
        self.nhead = nhead
        self.batch_first = batch_first

    def _reset_parameters(self) -> None:
        """Xavier-uniform initialization of every parameter with more than one dimension."""
        for p in self.parameters():
            if p.ndim > 1:
                init.xavier_uniform_(p)

    def forward(self, src, tgt, src_mask=None, tgt_mask=None, memory_mask=None, src_key_padding_mask=None,
                tgt_key_padding_mask=None, memory_key_padding_mask=None, src_is_causal=None, tgt_is_causal=None,
                memory_is_causal: bool = False):
        """Encode ``src``, then decode ``tgt`` against the result.

        Args:
            src: (S, N, d_model), (N, S, d_model) with ``batch_first``, or (S, d_model).
            tgt: (T, N, d_model), (N, T, d_model) with ``batch_first``, or (T, d_model).
            src_mask: (S, S) or (N * nhead, S, S) mask of the encoder's self-attention.
            tgt_mask: (T, T) or (N * nhead, T, T) mask of the decoder's self-attention
                (usually ``generate_square_subsequent_mask(T)``).
            memory_mask: (T, S) or (N * nhead, T, S) mask of the attention to the memory.
            src_key_padding_mask: (N, S); tgt_key_padding_mask: (N, T);
                memory_key_padding_mask: (N, S): bool True = padding.
            src_is_causal, tgt_is_causal, memory_is_causal: hints that the masks are causal.

        Returns:
            Tensor shaped like ``tgt``.

        Raises:
            RuntimeError: the batch sizes of ``src`` and ``tgt`` differ, or their last
                dimension is not ``d_model`` (PyTorch's messages); mask and shape errors
                of ``MultiheadAttention``.
        """
        is_batched = src.ndim == 3
        batch_dim = 0 if self.batch_first else 1
        if is_batched and src.shape[batch_dim] != tgt.shape[batch_dim]:
            raise RuntimeError("the batch number of src and tgt must be equal")
        if src.shape[-1] != self.d_model or tgt.shape[-1] != self.d_model:
            raise RuntimeError("the feature number of src and tgt must be equal to d_model")
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask,
                              is_causal=src_is_causal)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask, tgt_is_causal=tgt_is_causal,
                            memory_is_causal=memory_is_causal)

    @staticmethod
    def generate_square_subsequent_mask(sz: int, device=None, dtype=None) -> Tensor:
        """The (sz, sz) causal mask: ``-inf`` above the diagonal (future positions), 0 elsewhere.

        Added to attention scores it stops position i from attending to positions after i.
        ``dtype`` defaults to the default dtype; a bool ``dtype`` gives True above the diagonal.

        Raises:
            TypeError: ``sz`` is not an int. RuntimeError: ``sz`` is negative.
        """
        if not isinstance(sz, numbers.Integral) or isinstance(sz, bool):
            raise TypeError(f"generate_square_subsequent_mask: sz must be an int, got {type(sz).__name__}")
        if sz < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {sz}: [{sz}, {sz}]")
        device = backend.normalize_device(device)
        dtype = get_default_dtype() if dtype is None else np.dtype(dtype)
        xp = backend.module_for_device(device)
        with backend.device_context(device):
            upper = xp.triu(xp.ones((sz, sz), dtype=bool), 1)
            if dtype == np.bool_:
                return Tensor(upper)
            return Tensor(xp.where(upper, -np.inf, 0.0).astype(dtype))
