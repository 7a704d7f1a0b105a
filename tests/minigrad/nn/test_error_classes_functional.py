# ruff: noqa: N803  (every case takes the library module as `L`: `L=torch` or `L=minigrad`)
"""Bad inputs to the functional API, losses, normalizations, pooling, attention and distances raise PyTorch's class.

Each case runs one bad call written in PyTorch's idiom against ``torch`` and against ``minigrad`` (``L`` is the
library module), and the test compares the builtin class each raises, so that a ported program's
``except RuntimeError:`` (or ``ValueError``, ``IndexError``, ``AssertionError``, ...) catches our error too.
Covered here: ``nn.functional`` (linear, layer_norm, softmax, dropout, gelu, embedding, unfold, the losses),
batch/group/instance norm, pooling, scaled_dot_product_attention and MultiheadAttention, the distances, and the
modules of ``nn.layers`` (Linear, Conv2d, Embedding, LayerNorm, Dropout, GELU, Sequential) and the loss modules.
Where PyTorch accepts a module's argument and only its forward fails, the case runs the forward.
"""

import pytest

from tests.error_classes import assert_same_class_as_torch


def F(L):  # noqa: N802  (PyTorch's alias for nn.functional)
    return L.nn.functional


def _x(L, *shape, **kwargs):
    return L.ones(*shape, **kwargs)


def _long(L, *shape):
    return L.ones(*shape, dtype=L.int64)


def _half(L, *shape):
    return L.full(shape, 0.5)


def _mha(L, q, k, v, **kwargs):
    return L.nn.MultiheadAttention(4, 2)(q, k, v, **kwargs)


CASES = [
    # -- linear and layer_norm
    ("linear: bias of the wrong size", lambda L: F(L).linear(_x(L, 2, 3), _x(L, 4, 3), _x(L, 3))),
    ("linear: input features do not match", lambda L: F(L).linear(_x(L, 2, 3), _x(L, 4, 5))),
    ("linear: 3-D weight", lambda L: F(L).linear(_x(L, 2, 3), _x(L, 4, 3, 1))),
    ("linear: 0-d input", lambda L: F(L).linear(L.tensor(1.0), _x(L, 4, 3))),
    ("linear: weight dtype differs", lambda L: F(L).linear(_x(L, 2, 3), _x(L, 4, 3, dtype=L.float64))),
    ("linear: bias dtype differs", lambda L: F(L).linear(_x(L, 2, 3), _x(L, 4, 3), _x(L, 4, dtype=L.float64))),
    ("linear: input is a list", lambda L: F(L).linear([1.0, 2.0, 3.0], _x(L, 4, 3))),
    ("conv2d: weight dtype differs", lambda L: F(L).conv2d(_x(L, 1, 1, 3, 3), _x(L, 1, 1, 2, 2, dtype=L.float64))),
    ("layer_norm: shape is not a suffix", lambda L: F(L).layer_norm(_x(L, 2, 3), (4,))),
    ("layer_norm: shape longer than input", lambda L: F(L).layer_norm(_x(L, 3), (2, 3))),
    ("layer_norm: empty shape", lambda L: F(L).layer_norm(_x(L, 3), ())),
    ("layer_norm: weight shape", lambda L: F(L).layer_norm(_x(L, 2, 3), (3,), _x(L, 4))),
    ("layer_norm: bias shape", lambda L: F(L).layer_norm(_x(L, 2, 3), (3,), _x(L, 3), _x(L, 2))),
    ("layer_norm: weight dtype", lambda L: F(L).layer_norm(_x(L, 2, 3), (3,), _x(L, 3, dtype=L.float64))),
    ("layer_norm: integer input", lambda L: F(L).layer_norm(_long(L, 2, 3), (3,))),
    ("layer_norm: integer input, float weight", lambda L: F(L).layer_norm(_long(L, 2, 3), (3,), _x(L, 3))),
    ("layer_norm: shape is a string", lambda L: F(L).layer_norm(_x(L, 3), "a")),
    # -- softmax, dropout, gelu
    ("softmax: dim out of range", lambda L: F(L).softmax(_x(L, 2, 3), dim=2)),
    ("log_softmax: negative dim out of range", lambda L: F(L).log_softmax(_x(L, 2, 3), dim=-3)),
    ("softmax: float dim", lambda L: F(L).softmax(_x(L, 2, 3), dim=1.0)),
    ("softmax: integer input", lambda L: F(L).softmax(_long(L, 2), dim=0)),
    ("log_softmax: integer input", lambda L: F(L).log_softmax(_long(L, 2), dim=0)),
    ("softmax: integer dtype argument", lambda L: F(L).softmax(_x(L, 2), 0, dtype=L.int64)),
    ("softmax: dtype is a string", lambda L: F(L).softmax(_x(L, 2), 0, dtype="a")),
    ("dropout: p above 1", lambda L: F(L).dropout(_x(L, 2), p=1.5)),
    ("dropout: p is a string", lambda L: F(L).dropout(_x(L, 2), p="a")),
    ("dropout: p is None", lambda L: F(L).dropout(_x(L, 2), None)),
    ("dropout: integer input", lambda L: F(L).dropout(_long(L, 2), p=0.5)),
    ("dropout: bool input", lambda L: F(L).dropout(_x(L, 2, dtype=L.bool), p=0.5)),
    ("dropout1d: p is a string", lambda L: F(L).dropout1d(_x(L, 2, 3), "a")),
    ("dropout2d: p is a string", lambda L: F(L).dropout2d(_x(L, 2, 3, 4), "a")),
    ("dropout1d: 4-D input", lambda L: F(L).dropout1d(_x(L, 2, 3, 4, 5))),
    ("gelu: unknown approximation", lambda L: F(L).gelu(_x(L, 2), approximate="erf")),
    ("gelu: integer input", lambda L: F(L).gelu(_long(L, 2))),
    # -- classification losses
    ("nll_loss: batch sizes differ", lambda L: F(L).nll_loss(_x(L, 3, 4), L.tensor([0, 1]))),
    ("nll_loss: class out of range", lambda L: F(L).nll_loss(_x(L, 2, 4), L.tensor([0, 4]))),
    ("nll_loss: negative class", lambda L: F(L).nll_loss(_x(L, 2, 4), L.tensor([0, -2]))),
    ("nll_loss: 0-d input", lambda L: F(L).nll_loss(L.tensor(1.0), L.tensor(0))),
    ("nll_loss: float target", lambda L: F(L).nll_loss(_x(L, 2, 4), L.tensor([0.0, 1.0]))),
    ("nll_loss: int32 target", lambda L: F(L).nll_loss(_x(L, 2, 4), L.tensor([0, 1], dtype=L.int32))),
    ("nll_loss: target is a list", lambda L: F(L).nll_loss(_x(L, 2, 4), [0, 1])),
    ("nll_loss: weight of the wrong size", lambda L: F(L).nll_loss(_x(L, 2, 4), L.tensor([0, 1]), weight=_x(L, 3))),
    (
        "nll_loss: weight dtype differs",
        lambda L: F(L).nll_loss(_x(L, 2, 4), L.tensor([0, 1]), weight=_x(L, 4, dtype=L.float64)),
    ),
    ("nll_loss: integer input", lambda L: F(L).nll_loss(_long(L, 2, 4), L.tensor([0, 1]))),
    ("nll_loss: unknown reduction", lambda L: F(L).nll_loss(_x(L, 2, 4), L.tensor([0, 1]), reduction="avg")),
    ("cross_entropy: batch sizes differ", lambda L: F(L).cross_entropy(_x(L, 3, 4), L.tensor([0, 1]))),
    ("cross_entropy: class out of range", lambda L: F(L).cross_entropy(_x(L, 2, 4), L.tensor([0, 4]))),
    (
        "cross_entropy: label_smoothing above 1",
        lambda L: F(L).cross_entropy(_x(L, 2, 4), L.tensor([0, 1]), label_smoothing=1.5),
    ),
    (
        "cross_entropy: label_smoothing is a string",
        lambda L: F(L).cross_entropy(_x(L, 2, 4), L.tensor([0, 1]), label_smoothing="a"),
    ),
    ("cross_entropy: probabilities of another shape", lambda L: F(L).cross_entropy(_x(L, 2, 4), _x(L, 2, 3))),
    ("cross_entropy: integer target of the input's shape", lambda L: F(L).cross_entropy(_x(L, 2, 4), _long(L, 2, 4))),
    (
        "cross_entropy: ignore_index with probabilities",
        lambda L: F(L).cross_entropy(_x(L, 2, 4), _x(L, 2, 4), ignore_index=1),
    ),
    (
        "cross_entropy: weight of the wrong size (probabilities)",
        lambda L: F(L).cross_entropy(_x(L, 2, 4), _x(L, 2, 4), weight=_x(L, 3)),
    ),
    (
        "cross_entropy: weight of the wrong size (indices)",
        lambda L: F(L).cross_entropy(_x(L, 2, 4), L.tensor([0, 1]), weight=_x(L, 3)),
    ),
    ("cross_entropy: 0-d input", lambda L: F(L).cross_entropy(L.tensor(1.0), L.tensor(0))),
    ("cross_entropy: float target without the class dim", lambda L: F(L).cross_entropy(_x(L, 2, 4), _x(L, 2))),
    ("cross_entropy: integer input", lambda L: F(L).cross_entropy(_long(L, 2, 3), L.tensor([0, 1]))),
    (
        "cross_entropy: unknown reduction",
        lambda L: F(L).cross_entropy(_x(L, 2, 4), L.tensor([0, 1]), reduction="avg"),
    ),
    # -- pointwise losses
    ("mse_loss: shapes do not broadcast", lambda L: F(L).mse_loss(_x(L, 2, 3), _x(L, 4, 5))),
    ("mse_loss: integer tensors", lambda L: F(L).mse_loss(_long(L, 2), _long(L, 2))),
    ("mse_loss: bool tensors", lambda L: F(L).mse_loss(_x(L, 2, dtype=L.bool), _x(L, 2, dtype=L.bool))),
    ("mse_loss: unknown reduction", lambda L: F(L).mse_loss(_x(L, 2), _x(L, 2), reduction="avg")),
    ("l1_loss: shapes do not broadcast", lambda L: F(L).l1_loss(_x(L, 2, 3), _x(L, 4, 5))),
    ("l1_loss: integer tensors", lambda L: F(L).l1_loss(_long(L, 2), _long(L, 2))),
    ("l1_loss: unknown reduction", lambda L: F(L).l1_loss(_x(L, 2), _x(L, 2), reduction="avg")),
    ("smooth_l1_loss: integer tensors", lambda L: F(L).smooth_l1_loss(_long(L, 2), _long(L, 2))),
    ("smooth_l1_loss: negative beta", lambda L: F(L).smooth_l1_loss(_x(L, 2), _x(L, 2), beta=-1.0)),
    ("huber_loss: integer tensors", lambda L: F(L).huber_loss(_long(L, 2), _long(L, 2))),
    ("huber_loss: integer input, float target", lambda L: F(L).huber_loss(_long(L, 2), _x(L, 2))),
    ("huber_loss: zero delta", lambda L: F(L).huber_loss(_x(L, 2), _x(L, 2), delta=0.0)),
    ("huber_loss: weight shape", lambda L: F(L).huber_loss(_x(L, 2, 3), _x(L, 2, 3), weight=_x(L, 3))),
    ("gaussian_nll_loss: negative var", lambda L: F(L).gaussian_nll_loss(_x(L, 2, 3), _x(L, 2, 3), -_x(L, 2, 3))),
    ("gaussian_nll_loss: var shape", lambda L: F(L).gaussian_nll_loss(_x(L, 2, 3), _x(L, 2, 3), _x(L, 4))),
    ("poisson_nll_loss: shapes do not broadcast", lambda L: F(L).poisson_nll_loss(_x(L, 2, 3), _x(L, 4, 5))),
    ("binary_cross_entropy: shapes differ", lambda L: F(L).binary_cross_entropy(_half(L, 2, 3), _half(L, 1, 3))),
    ("binary_cross_entropy: input above 1", lambda L: F(L).binary_cross_entropy(_x(L, 2) * 2, _half(L, 2))),
    ("binary_cross_entropy: integer input", lambda L: F(L).binary_cross_entropy(_long(L, 2), _long(L, 2))),
    (
        "binary_cross_entropy: weight shape",
        lambda L: F(L).binary_cross_entropy(_half(L, 2, 3), _half(L, 2, 3), weight=_x(L, 4)),
    ),
    ("bce_with_logits: shapes differ", lambda L: F(L).binary_cross_entropy_with_logits(_x(L, 2, 3), _x(L, 2, 2))),
    ("bce_with_logits: integer target", lambda L: F(L).binary_cross_entropy_with_logits(_x(L, 2), _long(L, 2))),
    (
        "bce_with_logits: pos_weight shape",
        lambda L: F(L).binary_cross_entropy_with_logits(_x(L, 2, 3), _x(L, 2, 3), pos_weight=_x(L, 4)),
    ),
    ("kl_div: shapes do not broadcast", lambda L: F(L).kl_div(_x(L, 2, 3), _x(L, 4, 5))),
    ("kl_div: integer input", lambda L: F(L).kl_div(_long(L, 2), _x(L, 2))),
    ("soft_margin_loss: integer input", lambda L: F(L).soft_margin_loss(_long(L, 2), _long(L, 2))),
    (
        "margin_ranking_loss: numbers of dims differ",
        lambda L: F(L).margin_ranking_loss(_x(L, 2, 3), _x(L, 3), _x(L, 2, 3)),
    ),
    ("cosine_embedding_loss: 2-D target", lambda L: F(L).cosine_embedding_loss(_x(L, 2, 3), _x(L, 2, 3), _x(L, 2, 3))),
    (
        "cosine_embedding_loss: 1-D inputs for a 1-D target",
        lambda L: F(L).cosine_embedding_loss(_x(L, 3), _x(L, 3), _x(L, 2)),
    ),
    # -- embedding and unfold
    ("embedding: 1-D weight", lambda L: F(L).embedding(L.tensor([0, 1]), _x(L, 4))),
    ("embedding: 3-D weight", lambda L: F(L).embedding(L.tensor([0, 1]), _x(L, 4, 2, 2))),
    ("embedding: index out of range", lambda L: F(L).embedding(L.tensor([0, 4]), _x(L, 4, 2))),
    ("embedding: float indices", lambda L: F(L).embedding(L.tensor([0.0, 1.0]), _x(L, 4, 2))),
    ("embedding: int16 indices", lambda L: F(L).embedding(L.tensor([0, 1], dtype=L.int16), _x(L, 4, 2))),
    ("embedding: uint8 indices", lambda L: F(L).embedding(L.tensor([0, 1], dtype=L.uint8), _x(L, 4, 2))),
    ("embedding: indices are a list", lambda L: F(L).embedding([0, 1], _x(L, 4, 2))),
    ("embedding: padding_idx too large", lambda L: F(L).embedding(L.tensor([0, 1]), _x(L, 4, 2), padding_idx=5)),
    ("embedding: padding_idx too small", lambda L: F(L).embedding(L.tensor([0, 1]), _x(L, 4, 2), padding_idx=-5)),
    ("unfold: 1-D input", lambda L: F(L).unfold(_x(L, 3), 2)),
    ("unfold: 2-D input", lambda L: F(L).unfold(_x(L, 3, 3), 2)),
    ("unfold: 5-D input", lambda L: F(L).unfold(_x(L, 1, 1, 1, 3, 3), 2)),
    ("unfold: kernel larger than the input", lambda L: F(L).unfold(_x(L, 1, 1, 3, 3), 4)),
    # -- normalization
    ("batch_norm: 1-D input", lambda L: F(L).batch_norm(_x(L, 3), _x(L, 3), _x(L, 3))),
    ("batch_norm: running stats of the wrong size", lambda L: F(L).batch_norm(_x(L, 2, 3), _x(L, 4), _x(L, 4))),
    ("batch_norm: no running stats in eval", lambda L: F(L).batch_norm(_x(L, 2, 3), None, None)),
    (
        "batch_norm: one value per channel in training",
        lambda L: F(L).batch_norm(_x(L, 1, 3), None, None, training=True),
    ),
    ("BatchNorm1d: 4-D input", lambda L: L.nn.BatchNorm1d(3)(_x(L, 2, 3, 4, 5))),
    ("BatchNorm1d: channels differ", lambda L: L.nn.BatchNorm1d(3)(_x(L, 2, 4))),
    ("BatchNorm1d: negative num_features", lambda L: L.nn.BatchNorm1d(-1)),
    ("BatchNorm1d: float num_features", lambda L: L.nn.BatchNorm1d(2.5)),
    ("group_norm: groups do not divide channels", lambda L: F(L).group_norm(_x(L, 2, 6), 4)),
    ("group_norm: weight size", lambda L: F(L).group_norm(_x(L, 2, 6), 2, weight=_x(L, 4))),
    ("GroupNorm: groups do not divide channels", lambda L: L.nn.GroupNorm(4, 6)),
    ("instance_norm: one spatial element", lambda L: F(L).instance_norm(_x(L, 2, 3, 1))),
    ("instance_norm: 1-D input", lambda L: F(L).instance_norm(_x(L, 3))),
    (
        "instance_norm: 1-D input with running stats",
        lambda L: F(L).instance_norm(_x(L, 3), _x(L, 3), _x(L, 3), use_input_stats=False),
    ),
    (
        "instance_norm: no stats without input stats",
        lambda L: F(L).instance_norm(_x(L, 2, 3, 4), use_input_stats=False),
    ),
    ("InstanceNorm1d: 4-D input", lambda L: L.nn.InstanceNorm1d(3)(_x(L, 2, 3, 4, 5))),
    # -- pooling
    ("max_pool2d: kernel larger than the input", lambda L: F(L).max_pool2d(_x(L, 1, 1, 3, 3), 4)),
    ("max_pool2d: padding above half the kernel", lambda L: F(L).max_pool2d(_x(L, 1, 1, 3, 3), 2, padding=2)),
    ("max_pool2d: zero stride", lambda L: F(L).max_pool2d(_x(L, 1, 1, 3, 3), 2, stride=0)),
    ("max_pool2d: 2-D input", lambda L: F(L).max_pool2d(_x(L, 3, 3), 2)),
    ("max_pool1d: 4-D input", lambda L: F(L).max_pool1d(_x(L, 1, 1, 1, 3), 2)),
    ("avg_pool2d: 1-D input", lambda L: F(L).avg_pool2d(_x(L, 3), 2)),
    ("avg_pool2d: 2-D input", lambda L: F(L).avg_pool2d(_x(L, 3, 3), 2)),
    ("avg_pool2d: 5-D input", lambda L: F(L).avg_pool2d(_x(L, 1, 1, 1, 3, 3), 2)),
    ("avg_pool2d: zero divisor", lambda L: F(L).avg_pool2d(_x(L, 1, 1, 3, 3), 2, divisor_override=0)),
    ("avg_pool1d: kernel larger than the input", lambda L: F(L).avg_pool1d(_x(L, 1, 1, 3), 4)),
    ("adaptive_avg_pool2d: negative size", lambda L: F(L).adaptive_avg_pool2d(_x(L, 1, 1, 3, 3), -1)),
    ("adaptive_max_pool1d: two sizes", lambda L: F(L).adaptive_max_pool1d(_x(L, 1, 1, 3), (2, 2))),
    ("MaxPool2d: zero kernel", lambda L: L.nn.MaxPool2d(0)(_x(L, 1, 1, 3, 3))),
    # -- attention
    (
        "sdpa: embedding sizes differ",
        lambda L: F(L).scaled_dot_product_attention(_x(L, 2, 3, 4), _x(L, 2, 3, 5), _x(L, 2, 3, 4)),
    ),
    (
        "sdpa: mask shape",
        lambda L: F(L).scaled_dot_product_attention(
            _x(L, 2, 3, 4), _x(L, 2, 3, 4), _x(L, 2, 3, 4), attn_mask=_x(L, 4, 4)
        ),
    ),
    (
        "sdpa: dropout above 1",
        lambda L: F(L).scaled_dot_product_attention(_x(L, 2, 3, 4), _x(L, 2, 3, 4), _x(L, 2, 3, 4), dropout_p=1.5),
    ),
    ("MultiheadAttention: heads do not divide embed_dim", lambda L: L.nn.MultiheadAttention(5, 2)),
    ("MultiheadAttention: zero heads", lambda L: L.nn.MultiheadAttention(4, 0)),
    ("MultiheadAttention: integer dtype", lambda L: L.nn.MultiheadAttention(4, 2, dtype=L.int64)),
    (
        "MultiheadAttention: dropout is a string",
        lambda L: L.nn.MultiheadAttention(4, 2, dropout="a")(_x(L, 3, 2, 4), _x(L, 3, 2, 4), _x(L, 3, 2, 4)),
    ),
    (
        "MultiheadAttention: dropout above 1",
        lambda L: L.nn.MultiheadAttention(4, 2, dropout=1.5)(_x(L, 3, 2, 4), _x(L, 3, 2, 4), _x(L, 3, 2, 4)),
    ),
    ("MultiheadAttention: query features", lambda L: _mha(L, _x(L, 3, 2, 5), _x(L, 3, 2, 5), _x(L, 3, 2, 5))),
    ("MultiheadAttention: 4-D query", lambda L: _mha(L, _x(L, 3, 2, 4, 1), _x(L, 3, 2, 4), _x(L, 3, 2, 4))),
    (
        "MultiheadAttention: 2-D mask shape",
        lambda L: _mha(L, _x(L, 3, 2, 4), _x(L, 3, 2, 4), _x(L, 3, 2, 4), attn_mask=_x(L, 4, 4)),
    ),
    (
        "MultiheadAttention: integer mask",
        lambda L: _mha(L, _x(L, 3, 2, 4), _x(L, 3, 2, 4), _x(L, 3, 2, 4), attn_mask=_long(L, 3, 3)),
    ),
    (
        "MultiheadAttention: key_padding_mask shape",
        lambda L: _mha(L, _x(L, 3, 2, 4), _x(L, 3, 2, 4), _x(L, 3, 2, 4), key_padding_mask=_x(L, 2, 4, dtype=L.bool)),
    ),
    # -- distances
    ("normalize: dim out of range", lambda L: F(L).normalize(_x(L, 2, 3), dim=2)),
    ("normalize: integer input", lambda L: F(L).normalize(_long(L, 2, 3))),
    ("cosine_similarity: shapes do not broadcast", lambda L: F(L).cosine_similarity(_x(L, 2, 3), _x(L, 2, 4))),
    ("cosine_similarity: integer tensors", lambda L: F(L).cosine_similarity(_long(L, 2, 3), _long(L, 2, 3))),
    ("cosine_similarity: dim out of range", lambda L: F(L).cosine_similarity(_x(L, 2, 3), _x(L, 2, 3), dim=2)),
    ("pairwise_distance: shapes do not broadcast", lambda L: F(L).pairwise_distance(_x(L, 2, 3), _x(L, 2, 4))),
    ("pairwise_distance: keepdim is an int", lambda L: F(L).pairwise_distance(_x(L, 2, 3), _x(L, 2, 3), keepdim=1)),
    # -- modules
    ("Linear: negative in_features", lambda L: L.nn.Linear(-1, 3)),
    ("Linear: float in_features", lambda L: L.nn.Linear(2.5, 3)),
    ("Linear: integer dtype", lambda L: L.nn.Linear(3, 4, dtype=L.int64)),
    ("Linear: dtype is a string", lambda L: L.nn.Linear(3, 4, dtype="abc")),
    ("Linear: input features", lambda L: L.nn.Linear(3, 4)(_x(L, 2, 5))),
    ("LayerNorm: negative size", lambda L: L.nn.LayerNorm(-1)),
    ("LayerNorm: float size in a tuple", lambda L: L.nn.LayerNorm((2, 2.5))),
    ("LayerNorm: integer dtype", lambda L: L.nn.LayerNorm(4, dtype=L.int64)),
    ("LayerNorm: input of another shape", lambda L: L.nn.LayerNorm(4)(_x(L, 2, 3))),
    ("LayerNorm: integer input", lambda L: L.nn.LayerNorm(3)(_long(L, 2, 3))),
    ("Embedding: negative num_embeddings", lambda L: L.nn.Embedding(-1, 2)),
    ("Embedding: padding_idx too large", lambda L: L.nn.Embedding(4, 2, padding_idx=5)),
    ("Embedding: padding_idx too small", lambda L: L.nn.Embedding(4, 2, padding_idx=-5)),
    ("Embedding: _weight shape", lambda L: L.nn.Embedding(4, 2, _weight=_x(L, 3, 2))),
    ("Embedding: from_pretrained 1-D", lambda L: L.nn.Embedding.from_pretrained(_x(L, 4))),
    ("Embedding: integer dtype", lambda L: L.nn.Embedding(4, 2, dtype=L.int64)),
    ("Dropout: p above 1", lambda L: L.nn.Dropout(1.5)),
    ("Dropout: p is a string", lambda L: L.nn.Dropout("a")),
    ("Dropout1d: p is a string", lambda L: L.nn.Dropout1d("a")),
    ("Dropout2d: p is a string", lambda L: L.nn.Dropout2d("a")),
    ("GELU: unknown approximation", lambda L: L.nn.GELU("erf")(_x(L, 2))),
    ("Conv2d: negative in_channels", lambda L: L.nn.Conv2d(-1, 2, 3)),
    ("Conv2d: float in_channels", lambda L: L.nn.Conv2d(2.5, 2, 3)),
    ("Conv2d: groups do not divide", lambda L: L.nn.Conv2d(3, 2, 3, groups=2)),
    ("Conv2d: zero groups", lambda L: L.nn.Conv2d(2, 2, 3, groups=0)),
    ("Conv2d: kernel_size is a string", lambda L: L.nn.Conv2d(2, 2, "a")),
    ("Conv2d: float kernel_size", lambda L: L.nn.Conv2d(2, 2, 2.5)),
    ("Conv2d: zero kernel_size", lambda L: L.nn.Conv2d(2, 2, 0)(_x(L, 1, 2, 5, 5))),
    ("Conv2d: three kernel sizes", lambda L: L.nn.Conv2d(2, 2, (3, 3, 3))(_x(L, 1, 2, 5, 5))),
    ("Conv2d: zero stride", lambda L: L.nn.Conv2d(2, 2, 3, stride=0)(_x(L, 1, 2, 5, 5))),
    ("Conv2d: zero dilation", lambda L: L.nn.Conv2d(2, 2, 3, dilation=0)(_x(L, 1, 2, 5, 5))),
    ("Conv2d: negative padding", lambda L: L.nn.Conv2d(2, 2, 3, padding=-1)(_x(L, 1, 2, 5, 5))),
    ("Conv2d: unknown padding string", lambda L: L.nn.Conv2d(2, 2, 3, padding="full")),
    ("Conv2d: padding='same' with a stride", lambda L: L.nn.Conv2d(2, 2, 3, padding="same", stride=2)),
    ("Conv2d: integer dtype", lambda L: L.nn.Conv2d(2, 2, 3, dtype=L.int64)),
    ("Conv2d: input channels", lambda L: L.nn.Conv2d(2, 2, 3)(_x(L, 1, 3, 5, 5))),
    ("Sequential: index out of range", lambda L: L.nn.Sequential(L.nn.ReLU())[3]),
    ("Sequential: insert a non-module", lambda L: L.nn.Sequential(L.nn.ReLU()).insert(0, 3)),
    ("Sequential: insert out of range", lambda L: L.nn.Sequential(L.nn.ReLU()).insert(5, L.nn.ReLU())),
    (
        "CrossEntropyLoss: label_smoothing above 1",
        lambda L: L.nn.CrossEntropyLoss(label_smoothing=1.5)(_x(L, 2, 3), L.tensor([0, 1])),
    ),
    ("MSELoss: unknown reduction", lambda L: L.nn.MSELoss(reduction="avg")(_x(L, 2), _x(L, 2))),
    ("NLLLoss: weight is a list", lambda L: L.nn.NLLLoss(weight=[1.0, 2.0])),
    ("HuberLoss: negative delta", lambda L: L.nn.HuberLoss(delta=-1.0)(_x(L, 2), _x(L, 2))),
]


@pytest.mark.parametrize(("name", "call"), CASES, ids=[name for name, _ in CASES])
def test_bad_input_raises_the_class_pytorch_raises(name, call):
    assert_same_class_as_torch(name, call)
