"""Attention, as in PyTorch: ``F.scaled_dot_product_attention`` and ``nn.MultiheadAttention``.

Both are built from the ordinary differentiable ops (matmul, softmax,
where, dropout, linear), so gradients of every order come for free.

Mask conventions differ between the two, exactly as in PyTorch:

- ``scaled_dot_product_attention``: a boolean ``attn_mask`` says which
  query/key pairs **take part** (True = attend); a float mask is added to the
  scores.
- ``MultiheadAttention``: a boolean ``attn_mask`` or ``key_padding_mask``
  says which pairs are **left out** (True = masked); a float mask is added.

A query whose every key is masked out gets an output of zeros from
``scaled_dot_product_attention`` (and from ``MultiheadAttention`` with
``need_weights=False``, which goes through it), and NaN from
``MultiheadAttention`` with ``need_weights=True``, as in PyTorch.
"""

from __future__ import annotations

import math
import numbers
import warnings

import numpy as np

from minigrad import backend
from minigrad.nn import functional as F
from minigrad.nn import init
from minigrad.nn.layers import Linear, _empty_parameter
from minigrad.nn.module import Module
from minigrad.ops.elementwise import where
from minigrad.ops.shape import cat
from minigrad.tensor import Tensor

__all__ = ["scaled_dot_product_attention", "MultiheadAttention"]


# -- scaled dot-product attention ------------------------------------------------------------------


def _constant(array) -> Tensor:
    return Tensor._make(array, False, None, 0)


def _check_sdpa_args(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa):
    fn = "scaled_dot_product_attention()"
    for name, t in (("query", query), ("key", key), ("value", value)):
        if not isinstance(t, Tensor):
            raise TypeError(f"{fn}: argument '{name}' must be a Tensor, got {type(t).__name__}")
    if min(query.ndim, key.ndim, value.ndim) < 2:
        raise RuntimeError(
            f"{fn}: expected query, key and value to be at least 2-dimensional, got shapes "
            f"{query.shape}, {key.shape} and {value.shape}"
        )
    if not query.dtype == key.dtype == value.dtype:
        raise RuntimeError(
            f"{fn}: expected query, key and value to have the same dtype, got {query.dtype}, {key.dtype} "
            f"and {value.dtype}"
        )
    if query.dtype.kind != "f":
        raise RuntimeError(f"{fn}: expected floating point query, key and value, got dtype {query.dtype}")
    if not query.device == key.device == value.device:
        raise RuntimeError(
            f"{fn}: query, key and value must be on one device, got {query.device}, {key.device} and {value.device}"
        )
    if key.shape[-1] != query.shape[-1]:
        raise RuntimeError(
            f"{fn}: query and key must have the same embedding size (last dimension), got shapes "
            f"{query.shape} and {key.shape}"
        )
    if key.shape[-2] != value.shape[-2]:
        raise RuntimeError(
            f"{fn}: key and value must have the same sequence length (dimension -2), got shapes "
            f"{key.shape} and {value.shape}"
        )
    if not isinstance(dropout_p, numbers.Real) or isinstance(dropout_p, bool):
        raise TypeError(f"{fn}: argument 'dropout_p' must be a float, got {type(dropout_p).__name__}")
    if not 0.0 <= dropout_p <= 1.0:
        raise RuntimeError(f"{fn}: dropout probability has to be between 0 and 1, but got {dropout_p!r}")
    for name, flag in (("is_causal", is_causal), ("enable_gqa", enable_gqa)):
        if not isinstance(flag, (bool, np.bool_)):
            raise TypeError(f"{fn}: argument '{name}' must be a bool, got {type(flag).__name__}")
    if scale is not None and (not isinstance(scale, numbers.Real) or isinstance(scale, bool)):
        raise TypeError(f"{fn}: argument 'scale' must be a float or None, got {type(scale).__name__}")
    if attn_mask is not None:
        if not isinstance(attn_mask, Tensor):
            raise TypeError(f"{fn}: argument 'attn_mask' must be Tensor, not {type(attn_mask).__name__}")
        if is_causal:
            raise RuntimeError(f"{fn}: Explicit attn_mask should not be set when is_causal=True")
        kind = attn_mask.dtype
        if kind != np.bool_ and kind != np.float32 and kind != query.dtype:
            raise RuntimeError(
                f"{fn}: expected attn_mask dtype to be bool or float or to match query dtype, but got "
                f"attn_mask dtype {kind} and query dtype {query.dtype}"
            )
        if attn_mask.device != query.device:
            raise RuntimeError(f"{fn}: attn_mask is on {attn_mask.device} but query is on {query.device}")
    if enable_gqa and key.shape[-3:-2] != query.shape[-3:-2]:
        if query.ndim < 3 or key.ndim < 3 or value.ndim < 3:
            raise RuntimeError(f"{fn}: enable_gqa needs a head dimension (-3) in query, key and value")
        heads, kv_heads = query.shape[-3], key.shape[-3]
        if value.shape[-3] != kv_heads or heads % kv_heads:
            raise RuntimeError(
                f"{fn}: with enable_gqa, key and value must have the same number of heads, and it must divide "
                f"the query's: got {heads} query, {kv_heads} key and {value.shape[-3]} value heads"
            )


def _repeat_heads(t: Tensor, groups: int) -> Tensor:
    """(..., Hkv, S, E) -> (..., Hkv * groups, S, E), each head repeated ``groups`` times in a row."""
    lead, (heads, length, size) = t.shape[:-3], t.shape[-3:]
    expanded = t.unsqueeze(-3).expand(*lead, heads, groups, length, size)
    return expanded.reshape(*lead, heads * groups, length, size)


def _safe_softmax(scores: Tensor) -> Tensor:
    """Softmax over the last dimension where a row that is all -inf (fully masked) gives zeros, not NaN."""
    xp = backend.get_array_module(scores.array)
    dead = xp.isneginf(scores.array).all(-1, keepdims=True)
    if not dead.any():
        return F.softmax(scores, -1)
    # Replace the dead rows before the softmax as well, so that no NaN reaches the backward.
    return where(dead, 0.0, F.softmax(where(dead, 0.0, scores), -1))


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
                                 enable_gqa=False):
    """Attention ``softmax(query @ key^T * scale + mask) @ value``, PyTorch's reference semantics.

    Args:
        query: (..., L, E). key: (..., S, E). value: (..., S, Ev). The leading
            dimensions broadcast against each other, as in matmul.
        attn_mask: optional, broadcastable to (..., L, S): a bool mask (True =
            the pair takes part) or a float mask added to the scores (float32
            or the query's dtype; differentiable).
        dropout_p: dropout on the attention weights, applied whenever it is
            positive (there is no training flag: pass 0.0 in evaluation).
        is_causal: query i attends to keys 0..i only (the lower triangle of
            an L x S matrix, from the top left); excludes ``attn_mask``.
        scale: the score scale; default 1 / sqrt(E).
        enable_gqa: grouped-query attention: key and value may have fewer heads
            (dimension -3) than query, each key/value head serving a
            consecutive group of query heads.

    Returns:
        Tensor (..., L, Ev). A query with no key left to attend to gets zeros.

    Raises:
        TypeError: an argument is not a Tensor, ``dropout_p``/``scale`` not a
            number, ``is_causal``/``enable_gqa`` not a bool.
        RuntimeError: shapes, dtypes or devices that do not fit (names them),
            ``attn_mask`` together with ``is_causal``, ``dropout_p`` outside [0, 1].
    """
    _check_sdpa_args(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa)
    if enable_gqa and query.ndim >= 3 and key.shape[-3] != query.shape[-3]:
        groups = query.shape[-3] // key.shape[-3]
        key, value = _repeat_heads(key, groups), _repeat_heads(value, groups)
    try:
        batch = np.broadcast_shapes(query.shape[:-2], key.shape[:-2], value.shape[:-2])
    except ValueError:
        raise RuntimeError(
            f"scaled_dot_product_attention(): the batch dimensions of query {query.shape}, key {key.shape} and "
            f"value {value.shape} do not broadcast"
        ) from None
    length, source = query.shape[-2], key.shape[-2]
    if scale is None:
        scale = 1.0 / math.sqrt(query.shape[-1]) if query.shape[-1] else math.inf
    scores = (query @ key.mT) * float(scale)
    masked = False
    if is_causal:
        xp = backend.get_array_module(query.array)
        with backend.device_context(query.device):
            allowed = xp.tril(xp.ones((length, source), dtype=bool))
        scores = where(allowed, scores, -math.inf)
        masked = True
    elif attn_mask is not None:
        shape = batch + (length, source)
        try:
            fits = np.broadcast_shapes(attn_mask.shape, shape) == shape
        except ValueError:
            fits = False
        if not fits:
            raise RuntimeError(
                f"scaled_dot_product_attention(): attn_mask of shape {attn_mask.shape} does not broadcast to the "
                f"attention scores' shape {shape}"
            )
        scores = where(attn_mask, scores, -math.inf) if attn_mask.dtype == np.bool_ else scores + attn_mask
        masked = True
    weights = _safe_softmax(scores) if masked else F.softmax(scores, -1)
    if dropout_p > 0:
        weights = F.dropout(weights, dropout_p, True)
    return weights @ value


# -- multi-head attention ---------------------------------------------------------------------------


class NonDynamicallyQuantizableLinear(Linear):
    """The output projection of ``MultiheadAttention``: a ``Linear`` under PyTorch's class name (for its repr)."""


def _canonical_mask(mask, name: str, other, other_name: str, dtype):
    """``mask`` as an additive float mask (bool True -> -inf), or None; checks its dtype like PyTorch.

    Raises:
        AssertionError: the mask is neither bool nor floating point (PyTorch's type).
    """
    if mask is None:
        return None
    if not isinstance(mask, Tensor):
        raise TypeError(f"MultiheadAttention: {name} must be a Tensor, got {type(mask).__name__}")
    if mask.dtype != np.bool_ and mask.dtype.kind != "f":
        raise AssertionError(f"MultiheadAttention: only bool and floating types of {name} are supported, "
                             f"got {mask.dtype}")
    if other is not None and other.dtype != mask.dtype:
        warnings.warn(
            f"Support for mismatched {name} and {other_name} is deprecated. Use same type for both instead.",
            UserWarning, stacklevel=4,
        )
    if mask.dtype != np.bool_:
        return mask
    xp = backend.get_array_module(mask.array)
    with backend.device_context(mask.device):
        return _constant(xp.where(mask.array, -xp.inf, 0.0).astype(dtype))


def _pad_last(mask: Tensor) -> Tensor:
    """``mask`` with one zero column appended on the last dimension (for the extra key)."""
    xp = backend.get_array_module(mask.array)
    with backend.device_context(mask.device):
        zeros = _constant(xp.zeros(mask.shape[:-1] + (1,), dtype=mask.dtype))
    return cat([mask, zeros], -1)


class MultiheadAttention(Module):
    """Attention over ``num_heads`` heads of size ``embed_dim // num_heads``, as ``torch.nn.MultiheadAttention``.

    ``out = out_proj(concat_h softmax(q_h k_h^T / sqrt(head_dim) + mask) v_h)`` with
    ``q, k, v`` the input projections of query, key and value.

    Args:
        embed_dim: features of the query (and of the output).
        num_heads: parallel heads; must divide ``embed_dim``.
        dropout: dropout on the attention weights, in training mode only (default 0).
        bias: learn ``in_proj_bias`` and ``out_proj.bias`` (default True).
        add_bias_kv: learn ``bias_k``, ``bias_v`` (1, 1, embed_dim), appended to the
            projected key and value as one more source position.
        add_zero_attn: append a zero key and value to every head (one more source position).
        kdim, vdim: features of key and value (default ``embed_dim``). When either
            differs, the projections are ``q_proj_weight``, ``k_proj_weight``,
            ``v_proj_weight``; otherwise one ``in_proj_weight`` (3 * embed_dim, embed_dim).
        batch_first: inputs and output are (N, L, E) instead of (L, N, E).

    Parameters are PyTorch's (names, shapes, order, initialization: Xavier-uniform
    projections, zero biases, Xavier-normal ``bias_k``/``bias_v``; ``out_proj`` a
    Linear), so ``state_dict`` keys match.

    Raises:
        TypeError: ``embed_dim``, ``num_heads``, ``kdim`` or ``vdim`` is not an int, or ``dropout`` not a number.
        ValueError: ``embed_dim`` or ``num_heads`` is not positive, or ``dropout`` is not in [0, 1].
        RuntimeError: ``kdim`` or ``vdim`` is negative.
        AssertionError: ``num_heads`` does not divide ``embed_dim`` (PyTorch's type).
    """

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0, bias: bool = True,
                 add_bias_kv: bool = False, add_zero_attn: bool = False, kdim=None, vdim=None,
                 batch_first: bool = False, device=None, dtype=None):
        super().__init__()
        for name, value in (("embed_dim", embed_dim), ("num_heads", num_heads), ("kdim", kdim), ("vdim", vdim)):
            if value is not None and (not isinstance(value, (int, np.integer)) or isinstance(value, bool)):
                raise TypeError(f"MultiheadAttention: {name} must be an int, got {type(value).__name__}")
        for name, value in (("kdim", kdim), ("vdim", vdim)):
            if value is not None and value < 0:  # PyTorch's type for a negative size
                raise RuntimeError(f"MultiheadAttention: {name} must be non-negative, got {value}")
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(
                f"MultiheadAttention: embed_dim and num_heads must be greater than 0, got embed_dim={embed_dim} "
                f"and num_heads={num_heads} instead"
            )
        if embed_dim % num_heads:
            raise AssertionError(
                f"MultiheadAttention: embed_dim must be divisible by num_heads, got embed_dim={embed_dim} and "
                f"num_heads={num_heads}"
            )
        if not isinstance(dropout, numbers.Real) or isinstance(dropout, bool):  # PyTorch's forward: TypeError
            raise TypeError(f"MultiheadAttention: dropout must be a number, got {type(dropout).__name__}")
        if not 0.0 <= dropout <= 1.0:
            raise ValueError(f"MultiheadAttention: dropout must be a probability in [0, 1], got {dropout!r}")
        self.embed_dim = int(embed_dim)
        self.kdim = int(kdim) if kdim is not None else self.embed_dim
        self.vdim = int(vdim) if vdim is not None else self.embed_dim
        self._qkv_same_embed_dim = self.kdim == self.embed_dim and self.vdim == self.embed_dim
        self.num_heads = int(num_heads)
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = self.embed_dim // self.num_heads
        e = self.embed_dim
        if self._qkv_same_embed_dim:
            self.in_proj_weight = _empty_parameter((3 * e, e), device, dtype)
            for name in ("q_proj_weight", "k_proj_weight", "v_proj_weight"):
                self.register_parameter(name, None)
        else:
            self.q_proj_weight = _empty_parameter((e, e), device, dtype)
            self.k_proj_weight = _empty_parameter((e, self.kdim), device, dtype)
            self.v_proj_weight = _empty_parameter((e, self.vdim), device, dtype)
            self.register_parameter("in_proj_weight", None)
        if bias:
            self.in_proj_bias = _empty_parameter((3 * e,), device, dtype)
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(e, e, bias=bias, device=device, dtype=dtype)
        if add_bias_kv:
            self.bias_k = _empty_parameter((1, 1, e), device, dtype)
            self.bias_v = _empty_parameter((1, 1, e), device, dtype)
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self) -> None:
        """PyTorch's initialization (the output projection keeps Linear's weight init)."""
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            init.xavier_uniform_(self.q_proj_weight)
            init.xavier_uniform_(self.k_proj_weight)
            init.xavier_uniform_(self.v_proj_weight)
        if self.in_proj_bias is not None:
            init.zeros_(self.in_proj_bias)
            init.zeros_(self.out_proj.bias)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
            init.xavier_normal_(self.bias_v)

    def forward(self, query, key, value, key_padding_mask=None, need_weights: bool = True, attn_mask=None,
                average_attn_weights: bool = True, is_causal: bool = False):
        """Attend from ``query`` to ``key``/``value``.

        Args:
            query: (L, N, embed_dim), (N, L, embed_dim) with ``batch_first``, or (L, embed_dim) unbatched.
            key: (S, N, kdim) (same batching); value: (S, N, vdim).
            key_padding_mask: (N, S) (or (S,) unbatched): bool True = ignore that key,
                or a float mask added to the scores.
            need_weights: also return the attention weights (computed explicitly;
                otherwise the call goes through ``scaled_dot_product_attention``).
            attn_mask: (L, S) or (N * num_heads, L, S) (or (num_heads, L, S)
                unbatched): bool True = not allowed to attend, or a float mask added.
            average_attn_weights: average the returned weights over the heads.
            is_causal: a hint that ``attn_mask`` is the causal mask (it must be
                given). As in PyTorch, without a key padding mask and with
                ``need_weights=False`` the causal pattern is applied and
                ``attn_mask`` itself is not read.

        Returns:
            ``(attn_output, attn_weights)``: attn_output shaped like ``query``;
            attn_weights (N, L, S) averaged, or (N, num_heads, L, S), without N
            when unbatched, after dropout; None when ``need_weights`` is False.
            S counts the extra positions of ``add_bias_kv``/``add_zero_attn``.

        Raises:
            AssertionError: wrong numbers of dimensions, feature sizes, mask types
                or key padding mask shape (PyTorch's type for these).
            RuntimeError: attn_mask of the wrong shape, batch sizes or dtypes that
                do not match, ``is_causal`` without ``attn_mask``.
        """
        batched = self._check_dims(query, key, value, key_padding_mask, attn_mask)
        self_attention = query is key and key is value  # before the layout changes make new tensors
        if batched and self.batch_first:
            query, key, value = (t.transpose(0, 1) for t in (query, key, value))
        elif not batched:
            query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
            if key_padding_mask is not None:
                key_padding_mask = key_padding_mask.unsqueeze(0)
        length, batch, _ = query.shape
        source = key.shape[0]
        key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask", attn_mask, "attn_mask",
                                           query.dtype)
        if is_causal and attn_mask is None:
            raise RuntimeError(
                "MultiheadAttention: Need attn_mask if specifying the is_causal hint. You may use the Transformer "
                "module method `generate_square_subsequent_mask` to create this mask."
            )
        if is_causal and key_padding_mask is None and not need_weights:
            attn_mask = None  # the hint is taken at its word: sdpa applies the causal pattern
        else:
            attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query.dtype)
            is_causal = False
        self._check_inputs(query, key, value, batch, source)
        heads, head_dim = self.num_heads, self.head_dim
        if attn_mask is not None:
            attn_mask = self._check_attn_mask(attn_mask, batch, length, source)
        if key_padding_mask is not None and key_padding_mask.shape != (batch, source):
            raise AssertionError(
                f"MultiheadAttention: expected key_padding_mask of shape {(batch, source)} (batch, source length), "
                f"got {key_padding_mask.shape}"
            )
        q, k, v = self._in_projection(query, key, value, self_attention)
        if self.bias_k is not None:
            k = cat([k, self.bias_k.expand(1, batch, self.embed_dim)], 0)
            v = cat([v, self.bias_v.expand(1, batch, self.embed_dim)], 0)
            attn_mask = None if attn_mask is None else _pad_last(attn_mask)
            key_padding_mask = None if key_padding_mask is None else _pad_last(key_padding_mask)
        # (L, N, E) -> (N * heads, L, head_dim)
        q = q.reshape(length, batch * heads, head_dim).transpose(0, 1)
        k = k.reshape(k.shape[0], batch * heads, head_dim).transpose(0, 1)
        v = v.reshape(v.shape[0], batch * heads, head_dim).transpose(0, 1)
        if self.add_zero_attn:
            xp = backend.get_array_module(k.array)
            with backend.device_context(k.device):
                zeros = _constant(xp.zeros((batch * heads, 1, head_dim), dtype=k.dtype))
            k, v = cat([k, zeros], 1), cat([v, zeros], 1)
            attn_mask = None if attn_mask is None else _pad_last(attn_mask)
            key_padding_mask = None if key_padding_mask is None else _pad_last(key_padding_mask)
        source = k.shape[1]
        if key_padding_mask is not None:
            padding = key_padding_mask.reshape(batch, 1, 1, source).expand(batch, heads, 1, source)
            padding = padding.reshape(batch * heads, 1, source)
            attn_mask = padding if attn_mask is None else attn_mask + padding
        dropout_p = self.dropout if self.training else 0.0
        if need_weights:
            scores = (q * math.sqrt(1.0 / head_dim)) @ k.mT
            if attn_mask is not None:
                scores = scores + attn_mask
            weights = F.softmax(scores, -1)
            if dropout_p > 0:
                weights = F.dropout(weights, dropout_p, True)
            out = (weights @ v).transpose(0, 1).reshape(length * batch, self.embed_dim)
            weights = weights.reshape(batch, heads, length, source)
            if average_attn_weights:
                weights = weights.mean(1)
        else:
            if attn_mask is not None:
                attn_mask = (attn_mask.unsqueeze(0) if attn_mask.shape[0] == 1
                             else attn_mask.reshape(batch, heads, -1, source))
            out = scaled_dot_product_attention(
                q.reshape(batch, heads, length, head_dim), k.reshape(batch, heads, source, head_dim),
                v.reshape(batch, heads, source, head_dim), attn_mask, dropout_p, is_causal,
            )
            out = out.permute(2, 0, 1, 3).reshape(length * batch, self.embed_dim)
            weights = None
        out = F.linear(out, self.out_proj.weight, self.out_proj.bias).reshape(length, batch, self.embed_dim)
        if not batched:
            out = out.squeeze(1)
            weights = None if weights is None else weights.squeeze(0)
        elif self.batch_first:
            out = out.transpose(0, 1)
        return out, weights

    # -- helpers ------------------------------------------------------------------------------------

    def _check_dims(self, query, key, value, key_padding_mask, attn_mask) -> bool:
        """PyTorch's dimension checks; returns whether the input is batched."""
        for name, t in (("query", query), ("key", key), ("value", value)):
            if not isinstance(t, Tensor):
                raise TypeError(f"MultiheadAttention: {name} must be a Tensor, got {type(t).__name__}")
        for name, mask in (("key_padding_mask", key_padding_mask), ("attn_mask", attn_mask)):
            if mask is not None and not isinstance(mask, Tensor):
                raise TypeError(f"MultiheadAttention: {name} must be a Tensor or None, got {type(mask).__name__}")
        if query.ndim in (2, 3):
            ndim = query.ndim
            kind = "batched (3-D)" if ndim == 3 else "unbatched (2-D)"
            if key.ndim != ndim or value.ndim != ndim:
                raise AssertionError(
                    f"MultiheadAttention: for {kind} query, expected key and value to be {ndim}-D, got "
                    f"{key.ndim}-D and {value.ndim}-D tensors"
                )
            if key_padding_mask is not None and key_padding_mask.ndim != ndim - 1:
                raise AssertionError(
                    f"MultiheadAttention: for {kind} query, expected key_padding_mask to be None or {ndim - 1}-D, "
                    f"got a {key_padding_mask.ndim}-D tensor"
                )
            if attn_mask is not None and attn_mask.ndim not in (2, 3):
                raise AssertionError(
                    f"MultiheadAttention: for {kind} query, expected attn_mask to be None, 2-D or 3-D, "
                    f"got a {attn_mask.ndim}-D tensor"
                )
            if ndim == 2 and attn_mask is not None:
                expected = (self.num_heads, query.shape[0], key.shape[0])
                if attn_mask.ndim == 3 and attn_mask.shape != expected:
                    raise AssertionError(
                        f"MultiheadAttention: expected attn_mask of shape {expected}, got {attn_mask.shape}"
                    )
            return ndim == 3
        raise AssertionError(
            f"MultiheadAttention: query should be unbatched 2D or batched 3D tensor but received {query.ndim}-D "
            "query tensor"
        )

    def _check_inputs(self, query, key, value, batch, source) -> None:
        """Feature sizes, batch sizes, dtypes and devices of the (L, N, E) inputs."""
        if query.shape[-1] != self.embed_dim:
            raise AssertionError(
                f"MultiheadAttention: was expecting embedding dimension of {self.embed_dim}, but got "
                f"{query.shape[-1]}"
            )
        if self._qkv_same_embed_dim:
            if key.shape != value.shape:
                raise AssertionError(
                    f"MultiheadAttention: key shape {key.shape} does not match value shape {value.shape}"
                )
            if key.shape[-1] != self.embed_dim:
                raise RuntimeError(
                    f"MultiheadAttention: key and value must have embed_dim={self.embed_dim} features, got shape "
                    f"{key.shape} (construct the module with kdim/vdim for other sizes)"
                )
        else:
            if key.shape[:2] != value.shape[:2]:
                raise AssertionError(
                    f"MultiheadAttention: key's sequence and batch dims {key.shape[:2]} do not match value's "
                    f"{value.shape[:2]}"
                )
            for name, t, size in (("key", key, self.kdim), ("value", value, self.vdim)):
                if t.shape[-1] != size:
                    raise AssertionError(
                        f"MultiheadAttention: expected {name} with {size} features ({name[0]}dim), got shape {t.shape}"
                    )
        if key.shape[1] != batch:
            raise RuntimeError(
                f"MultiheadAttention: query has batch size {batch} but key has {key.shape[1]} (shapes in the "
                f"module's layout: query {query.shape}, key {key.shape})"
            )
        weight = self.in_proj_weight if self._qkv_same_embed_dim else self.q_proj_weight
        for name, t in (("query", query), ("key", key), ("value", value)):
            if t.dtype != weight.dtype:
                raise RuntimeError(
                    f"MultiheadAttention: {name} has dtype {t.dtype} but the weights have dtype {weight.dtype}; "
                    "convert one of them"
                )
            if t.device != weight.device:
                raise RuntimeError(f"MultiheadAttention: {name} is on {t.device} but the weights are on "
                                   f"{weight.device}")

    def _check_attn_mask(self, attn_mask, batch, length, source) -> Tensor:
        """``attn_mask`` as (1 or N * heads, L, S); RuntimeError on a wrong shape (PyTorch's type)."""
        if attn_mask.ndim == 2:
            if attn_mask.shape != (length, source):
                raise RuntimeError(
                    f"MultiheadAttention: The shape of the 2D attn_mask is {attn_mask.shape}, but should be "
                    f"{(length, source)}."
                )
            return attn_mask.unsqueeze(0)
        expected = (batch * self.num_heads, length, source)
        if attn_mask.shape != expected:
            raise RuntimeError(
                f"MultiheadAttention: The shape of the 3D attn_mask is {attn_mask.shape}, but should be {expected}."
            )
        return attn_mask

    def _in_projection(self, query, key, value, self_attention: bool):
        """The projected q, k, v, each (length, N, embed_dim)."""
        e = self.embed_dim
        bias = self.in_proj_bias
        b_q, b_k, b_v = (None, None, None) if bias is None else (bias[:e], bias[e : 2 * e], bias[2 * e :])
        if not self._qkv_same_embed_dim:
            return (F.linear(query, self.q_proj_weight, b_q), F.linear(key, self.k_proj_weight, b_k),
                    F.linear(value, self.v_proj_weight, b_v))
        weight = self.in_proj_weight
        if self_attention:  # one matmul for all three
            projected = F.linear(query, weight, bias)
            return projected[..., :e], projected[..., e : 2 * e], projected[..., 2 * e :]
        return (F.linear(query, weight[:e], b_q), F.linear(key, weight[e : 2 * e], b_k),
                F.linear(value, weight[2 * e :], b_v))
