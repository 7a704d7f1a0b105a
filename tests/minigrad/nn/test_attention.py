"""Attention and transformer layers (``F.scaled_dot_product_attention``, ``nn.MultiheadAttention``,
``nn.TransformerEncoderLayer``, ``nn.TransformerEncoder``) against PyTorch.

Modules are built in both libraries and PyTorch's weights copied into
minigrad's (float64); outputs, attention weights and the gradients of every
parameter, input and float mask are compared.
"""

from __future__ import annotations

import copy
import math
import warnings

import numpy as np
import pytest
import torch
import torch.nn.functional as TF
from hypothesis import given, settings
from hypothesis import strategies as st

import minigrad as mg
from minigrad import backend
from minigrad import nn as mnn
from minigrad.nn import functional as F

TOL = {"rtol": 1e-8, "atol": 1e-10}


@pytest.fixture(params=("cpu", "cuda"))
def device(request) -> str:
    """The device a test runs on; "cuda" skips when no GPU can be used."""
    if request.param == "cuda" and not backend.cuda_is_available():
        pytest.skip(backend.cuda_unavailable_reason())
    return request.param


def _normal(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def _tensors(arrays: dict, lib, device="cpu") -> dict:
    """NumPy arrays as ``lib`` tensors; float ones require grad (the same object where an array repeats)."""
    made = {}
    out = {}
    for name, a in arrays.items():
        if a is None or not isinstance(a, np.ndarray):
            out[name] = a
            continue
        if id(a) not in made:
            grad = a.dtype.kind == "f"
            made[id(a)] = (mg.tensor(a, device=device, requires_grad=grad) if lib is mg
                           else torch.tensor(a, requires_grad=grad))
        out[name] = made[id(a)]
    return out


def compare_call(fn, reference_fn, arrays: dict, device="cpu", module=None, reference=None, **options):
    """Call ``fn(**tensors, **options)`` and ``reference_fn`` likewise; compare outputs and gradients."""
    mine_in, theirs_in = _tensors(arrays, mg, device), _tensors(arrays, torch)
    out, expected = fn(**mine_in, **options), reference_fn(**theirs_in, **options)
    outs = list(out) if isinstance(out, tuple) else [out]
    exps = list(expected) if isinstance(expected, tuple) else [expected]
    rng = np.random.default_rng(7)
    mine_loss, their_loss = 0.0, 0.0
    for mine, theirs in zip(outs, exps):
        assert (mine is None) == (theirs is None)
        if theirs is None:
            continue
        assert mine.shape == tuple(theirs.shape)
        np.testing.assert_allclose(backend.to_numpy(mine.array), theirs.detach().numpy(), **TOL)
        upstream = rng.standard_normal(theirs.shape)
        mine_loss = mine_loss + (mine * mg.tensor(upstream, device=device)).sum()
        their_loss = their_loss + (theirs * torch.tensor(upstream)).sum()
    mine_loss.backward()
    their_loss.backward()
    for name in arrays:
        theirs = theirs_in[name]
        if not isinstance(theirs, torch.Tensor) or not theirs.requires_grad:
            continue
        mine = mine_in[name].grad
        if theirs.grad is None:  # not used (a mask replaced by the causal hint)
            assert mine is None, name
        else:
            np.testing.assert_allclose(backend.to_numpy(mine.array), theirs.grad.numpy(), **TOL, err_msg=name)
    if reference is not None:
        for name, param in reference.named_parameters():
            mine = module.get_parameter(name).grad
            np.testing.assert_allclose(backend.to_numpy(mine.array), param.grad.numpy(), **TOL, err_msg=name)
    return out


def twin(module, reference):
    """``module`` (float64) holding ``reference``'s weights; ``reference`` is made float64 too."""
    reference.double()
    module.double().load_state_dict({k: v.detach().numpy() for k, v in reference.state_dict().items()})
    return module


# -- scaled_dot_product_attention -----------------------------------------------------------------


def _sdpa_mask(kind, shape, rng):
    if kind == "bool":
        return rng.random(shape) < 0.7  # some rows are fully masked: they give zeros
    if kind == "float":
        mask = rng.standard_normal(shape)
        mask[rng.random(shape) < 0.2] = -np.inf
        return mask
    return None


@settings(max_examples=25, deadline=None)
@given(batch=st.sampled_from([(), (2,), (2, 3)]), sizes=st.tuples(*[st.integers(1, 4)] * 4),
       mask=st.sampled_from(["none", "bool", "float", "causal", "bool broadcast"]),
       scale=st.sampled_from([None, 0.7]), seed=st.integers(0, 100))
def test_sdpa_matches_pytorch(batch, sizes, mask, scale, seed):
    length, source, embed, value_embed = sizes
    rng = np.random.default_rng(seed)
    arrays = dict(query=rng.standard_normal((*batch, length, embed)),
                  key=rng.standard_normal((*batch, source, embed)),
                  value=rng.standard_normal((*batch, source, value_embed)))
    if mask == "bool broadcast":
        arrays["attn_mask"] = _sdpa_mask("bool", (length, source), rng)
    elif mask in ("bool", "float"):
        arrays["attn_mask"] = _sdpa_mask(mask, (*batch, length, source), rng)
    compare_call(F.scaled_dot_product_attention, TF.scaled_dot_product_attention, arrays,
                 is_causal=mask == "causal", scale=scale)


@pytest.mark.parametrize("kv_heads", [1, 2])
def test_sdpa_grouped_query_attention_matches_pytorch(kv_heads, device):
    rng = np.random.default_rng(0)
    arrays = dict(query=rng.standard_normal((2, 4, 3, 5)), key=rng.standard_normal((2, kv_heads, 6, 5)),
                  value=rng.standard_normal((2, kv_heads, 6, 2)), attn_mask=rng.random((3, 6)) < 0.6)
    compare_call(F.scaled_dot_product_attention, TF.scaled_dot_product_attention, arrays, device,
                 enable_gqa=True)


def test_sdpa_causal_with_more_keys_than_queries_and_broadcast_batches():
    rng = np.random.default_rng(1)
    arrays = dict(query=rng.standard_normal((1, 4, 2, 3)), key=rng.standard_normal((2, 4, 5, 3)),
                  value=rng.standard_normal((2, 1, 5, 3)))
    compare_call(F.scaled_dot_product_attention, TF.scaled_dot_product_attention, arrays, is_causal=True)


def test_sdpa_dropout():
    rng = np.random.default_rng(2)
    q, k, v = (mg.tensor(rng.standard_normal((2, 3, 4))) for _ in range(3))
    assert not F.scaled_dot_product_attention(q, k, v, dropout_p=1.0).numpy().any()
    mg.manual_seed(5)
    first = F.scaled_dot_product_attention(q, k, v, dropout_p=0.5).numpy()
    mg.manual_seed(5)
    np.testing.assert_array_equal(F.scaled_dot_product_attention(q, k, v, dropout_p=0.5).numpy(), first)
    assert not np.allclose(first, F.scaled_dot_product_attention(q, k, v).numpy())


SDPA_ERRORS = [
    ("embedding sizes", dict(q=(2, 3, 4), k=(2, 5, 3), v=(2, 5, 6))),
    ("sequence lengths", dict(q=(2, 3, 4), k=(2, 5, 4), v=(2, 4, 6))),
    ("1-D inputs", dict(q=(4,), k=(4,), v=(4,))),
    ("batch dimensions", dict(q=(4, 3, 5), k=(2, 2, 6, 5), v=(2, 2, 6, 7))),
    ("heads without enable_gqa", dict(q=(2, 4, 3, 5), k=(2, 2, 6, 5), v=(2, 2, 6, 7))),
    ("gqa heads that do not divide", dict(q=(2, 3, 3, 5), k=(2, 2, 6, 5), v=(2, 2, 6, 7), enable_gqa=True)),
    ("mask shape", dict(q=(2, 3, 4), k=(2, 5, 4), v=(2, 5, 6), mask=np.zeros((3, 4), dtype=bool))),
    ("mask larger than the scores", dict(q=(2, 3, 4), k=(2, 5, 4), v=(2, 5, 6), mask=np.zeros((4, 2, 3, 5)))),
    ("integer mask", dict(q=(2, 3, 4), k=(2, 5, 4), v=(2, 5, 6), mask=np.zeros((3, 5), dtype=np.int64))),
    ("half mask", dict(q=(2, 3, 4), k=(2, 5, 4), v=(2, 5, 6), mask=np.zeros((3, 5), dtype=np.float16))),
    ("mask with is_causal", dict(q=(2, 3, 4), k=(2, 5, 4), v=(2, 5, 6), mask=np.ones((3, 5), dtype=bool),
                                 is_causal=True)),
    ("dropout above 1", dict(q=(2, 3, 4), k=(2, 5, 4), v=(2, 5, 6), dropout_p=1.5)),
    ("dtypes", dict(q=(2, 3, 4), k=(2, 5, 4), v=(2, 5, 6), v_dtype=np.float32)),
    ("integer inputs", dict(q=(2, 3, 4), k=(2, 5, 4), v=(2, 5, 6), dtype=np.int64)),
]


@pytest.mark.parametrize("case", [c[1] for c in SDPA_ERRORS], ids=[c[0] for c in SDPA_ERRORS])
def test_sdpa_errors_match_pytorch(case):
    dtype = case.get("dtype", np.float64)
    q, k = np.zeros(case["q"], dtype), np.zeros(case["k"], dtype)
    v = np.zeros(case["v"], case.get("v_dtype", dtype))
    options = dict(dropout_p=case.get("dropout_p", 0.0), is_causal=case.get("is_causal", False),
                   enable_gqa=case.get("enable_gqa", False))
    mask = case.get("mask")
    with pytest.raises(Exception) as expected:
        TF.scaled_dot_product_attention(*map(torch.tensor, (q, k, v)), attn_mask=None if mask is None else
                                        torch.tensor(mask), **options)
    with pytest.raises(expected.type, match="scaled_dot_product_attention"):
        F.scaled_dot_product_attention(*map(mg.tensor, (q, k, v)), attn_mask=None if mask is None else
                                       mg.tensor(mask), **options)


# -- MultiheadAttention -----------------------------------------------------------------------------


def _mha_masks(rng, kind_kpm, kind_attn, batch, heads, length, source):
    """Masks that leave every query at least one key (column 0), so need_weights never meets NaN."""
    kpm = attn = None
    kpm_shape = (source,) if batch is None else (batch, source)
    if kind_kpm == "bool":
        kpm = rng.random(kpm_shape) < 0.4
        kpm[..., 0] = False
    elif kind_kpm == "float":
        kpm = rng.standard_normal(kpm_shape)
    if kind_attn == "bool":
        attn = rng.random((length, source)) < 0.4
        attn[:, 0] = False
    elif kind_attn == "float 3-D":
        attn = rng.standard_normal((heads * (1 if batch is None else batch), length, source))
    return kpm, attn


@settings(max_examples=25, deadline=None)
@given(heads=st.integers(1, 2), head_dim=st.integers(1, 3), kdim=st.sampled_from([None, 2]),
       vdim=st.sampled_from([None, 3]), bias=st.booleans(), add_bias_kv=st.booleans(),
       add_zero_attn=st.booleans(), batch_first=st.booleans(), batch=st.sampled_from([None, 1, 2]),
       lengths=st.tuples(st.integers(1, 3), st.integers(1, 3)), self_attention=st.booleans(),
       kpm=st.sampled_from(["none", "bool", "float"]), attn=st.sampled_from(["none", "bool", "float 3-D"]),
       need_weights=st.booleans(), average=st.booleans(), seed=st.integers(0, 100))
def test_multihead_attention_matches_pytorch(heads, head_dim, kdim, vdim, bias, add_bias_kv, add_zero_attn,
                                             batch_first, batch, lengths, self_attention, kpm, attn,
                                             need_weights, average, seed):
    embed = heads * head_dim
    options = dict(bias=bias, add_bias_kv=add_bias_kv, add_zero_attn=add_zero_attn, kdim=kdim, vdim=vdim,
                   batch_first=batch_first)
    reference = torch.nn.MultiheadAttention(embed, heads, **options)
    module = twin(mnn.MultiheadAttention(embed, heads, dtype=mg.float64, **options), reference)
    rng = np.random.default_rng(seed)
    length, source = lengths
    if self_attention and kdim is None and vdim is None:
        source = length
    lead = (lambda n: (n,)) if batch is None else (lambda n: (batch, n) if batch_first else (n, batch))
    query = rng.standard_normal((*lead(length), embed))
    if source == length and kdim is None and vdim is None and self_attention:
        key = value = query
    else:
        key = rng.standard_normal((*lead(source), kdim or embed))
        value = rng.standard_normal((*lead(source), vdim or embed))
    key_padding_mask, attn_mask = _mha_masks(rng, kpm, attn, batch, heads, length, source)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # mixed bool/float masks warn in both libraries
        compare_call(module, reference, dict(query=query, key=key, value=value, key_padding_mask=key_padding_mask,
                                             attn_mask=attn_mask), module=module, reference=reference,
                     need_weights=need_weights, average_attn_weights=average)


def test_multihead_attention_on_every_device(device):
    reference = torch.nn.MultiheadAttention(4, 2, add_bias_kv=True, batch_first=True)
    module = twin(mnn.MultiheadAttention(4, 2, add_bias_kv=True, batch_first=True, dtype=mg.float64), reference)
    module.to(device)
    x = _normal((2, 3, 4))
    mask = np.array([[False, False, True], [False, True, True]])
    compare_call(module, reference, dict(query=x, key=x, value=x, key_padding_mask=mask), device, module=module,
                 reference=reference)


@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")  # the NaN PyTorch gives too
def test_multihead_attention_fully_masked_queries_like_pytorch():
    """With need_weights=False (through sdpa) a query with no key gets zeros; with need_weights, NaN."""
    reference = torch.nn.MultiheadAttention(4, 2)
    module = twin(mnn.MultiheadAttention(4, 2, dtype=mg.float64), reference)
    x = _normal((3, 2, 4))
    padding = np.zeros((2, 3), dtype=bool)
    padding[1] = True
    arrays = dict(query=x, key=x, value=x, key_padding_mask=padding)
    out, _ = compare_call(module, reference, arrays, module=module, reference=reference, need_weights=False)
    np.testing.assert_array_equal(out.detach().numpy()[:, 1], 0.0)
    out, weights = module(*(mg.tensor(x),) * 3, key_padding_mask=mg.tensor(padding))
    assert np.isnan(out.detach().numpy()[:, 1]).all() and np.isnan(weights.detach().numpy()[1]).all()
    assert np.isfinite(out.detach().numpy()[:, 0]).all()


def test_multihead_attention_causal_hint():
    reference = torch.nn.MultiheadAttention(4, 2)
    module = twin(mnn.MultiheadAttention(4, 2, dtype=mg.float64), reference)
    x = _normal((3, 2, 4))
    causal = np.triu(np.ones((3, 3), dtype=bool), 1)
    for need_weights in (False, True):
        compare_call(module, reference, dict(query=x, key=x, value=x, attn_mask=causal), module=module,
                     reference=reference, is_causal=True, need_weights=need_weights)
    with pytest.raises(RuntimeError, match="Need attn_mask"):
        module(*(mg.tensor(x),) * 3, is_causal=True)


@pytest.mark.parametrize("options", [
    {}, dict(bias=False), dict(kdim=3, vdim=5), dict(add_bias_kv=True), dict(kdim=2, bias=False, add_bias_kv=True),
])
def test_multihead_attention_parameters_match_pytorch(options):
    module, reference = mnn.MultiheadAttention(4, 2, **options), torch.nn.MultiheadAttention(4, 2, **options)
    assert [(k, tuple(v.shape)) for k, v in module.state_dict().items()] == [
        (k, tuple(v.shape)) for k, v in reference.state_dict().items()]
    assert [n for n, _ in module.named_parameters()] == [n for n, _ in reference.named_parameters()]
    assert repr(module) == repr(reference)
    if module.in_proj_bias is not None:
        assert not module.in_proj_bias.array.any() and not module.out_proj.bias.array.any()
    weight = module.in_proj_weight if module.in_proj_weight is not None else module.k_proj_weight
    fan_out, fan_in = weight.shape
    assert np.abs(weight.array).max() <= math.sqrt(6 / (fan_in + fan_out)), "Xavier-uniform"


def test_multihead_attention_dropout_in_training_only():
    module = mnn.MultiheadAttention(4, 2, dropout=1.0, dtype=mg.float64)
    x = mg.tensor(_normal((3, 2, 4)))
    out, weights = module(x, x, x)
    assert not weights.detach().numpy().any(), "every weight dropped"
    np.testing.assert_allclose(out.detach().numpy(), 0.0)  # out_proj's bias starts at zero
    module.eval()
    out, weights = module(x, x, x)
    np.testing.assert_allclose(weights.detach().numpy().sum(-1), 1.0, **TOL)


MHA_ERRORS = [
    ("4-D query", dict(query=(1, 3, 2, 4))),
    ("key and value shapes", dict(key=(3, 2, 3), value=(3, 2, 4))),
    ("query features", dict(query=(3, 2, 3), key=(3, 2, 3), value=(3, 2, 3))),
    ("key features", dict(key=(3, 2, 3), value=(3, 2, 3))),
    ("batch sizes", dict(key=(3, 1, 4), value=(3, 1, 4))),
    ("key padding mask shape", dict(kpm=np.zeros((2, 4), dtype=bool))),
    ("key padding mask dims", dict(kpm=np.zeros((2, 3, 1), dtype=bool))),
    ("integer key padding mask", dict(kpm=np.zeros((2, 3), dtype=np.int64))),
    ("2-D attn_mask shape", dict(attn_mask=np.zeros((3, 4), dtype=bool))),
    ("3-D attn_mask shape", dict(attn_mask=np.zeros((2, 3, 3), dtype=bool))),
    ("4-D attn_mask", dict(attn_mask=np.zeros((1, 1, 3, 3), dtype=bool))),
    ("integer attn_mask", dict(attn_mask=np.zeros((3, 3), dtype=np.int64))),
    ("unbatched query, batched key", dict(query=(3, 4), key=(3, 2, 4), value=(3, 2, 4))),
    ("unbatched 2-D key padding mask", dict(query=(3, 4), key=(3, 4), value=(3, 4), kpm=np.zeros((1, 3), bool))),
    ("unbatched 3-D attn_mask shape", dict(query=(3, 4), key=(3, 4), value=(3, 4),
                                           attn_mask=np.zeros((1, 3, 3), bool))),
    ("is_causal without a mask", dict(is_causal=True)),
    ("dtype", dict(dtype=np.float32)),
]


@pytest.mark.parametrize("case", [c[1] for c in MHA_ERRORS], ids=[c[0] for c in MHA_ERRORS])
def test_multihead_attention_errors_match_pytorch(case):
    dtype = case.get("dtype", np.float64)
    q = np.zeros(case.get("query", (3, 2, 4)), dtype)
    k, v = np.zeros(case.get("key", (3, 2, 4)), dtype), np.zeros(case.get("value", (3, 2, 4)), dtype)
    masks = dict(key_padding_mask=case.get("kpm"), attn_mask=case.get("attn_mask"))
    reference = torch.nn.MultiheadAttention(4, 2, dtype=torch.float64)
    with pytest.raises(Exception) as expected:
        reference(*map(torch.tensor, (q, k, v)), **{n: None if m is None else torch.tensor(m)
                                                    for n, m in masks.items()}, is_causal=case.get("is_causal", False))
    module = mnn.MultiheadAttention(4, 2, dtype=mg.float64)
    with pytest.raises(expected.type, match="MultiheadAttention"):
        module(*map(mg.tensor, (q, k, v)), **{n: None if m is None else mg.tensor(m) for n, m in masks.items()},
               is_causal=case.get("is_causal", False))


@pytest.mark.parametrize("args", [(5, 2), (0, 2), (4, 0)])
def test_multihead_attention_constructor_errors_match_pytorch(args):
    with pytest.raises(Exception) as expected:
        torch.nn.MultiheadAttention(*args)
    with pytest.raises(expected.type):
        mnn.MultiheadAttention(*args)


def test_mismatched_mask_types_warn_like_pytorch():
    module = mnn.MultiheadAttention(4, 2)
    x = mg.zeros(3, 2, 4)
    with pytest.warns(UserWarning, match="mismatched key_padding_mask and attn_mask"):
        module(x, x, x, key_padding_mask=mg.zeros(2, 3), attn_mask=mg.zeros(3, 3, dtype=mg.bool_))


# -- transformer encoder ----------------------------------------------------------------------------


@settings(max_examples=20, deadline=None)
@given(norm_first=st.booleans(), activation=st.sampled_from(["relu", "gelu", "module"]), batch_first=st.booleans(),
       bias=st.booleans(), batch=st.sampled_from([None, 1, 2]), length=st.integers(1, 4),
       src_mask=st.sampled_from(["none", "causal", "causal hint", "bool"]), padding=st.booleans(),
       seed=st.integers(0, 100))
def test_transformer_encoder_layer_matches_pytorch(norm_first, activation, batch_first, bias, batch, length,
                                                   src_mask, padding, seed):
    def build(lib):
        act = lib.nn.GELU(approximate="tanh") if activation == "module" else activation
        return lib.nn.TransformerEncoderLayer(4, 2, dim_feedforward=6, dropout=0.0, activation=act,
                                              layer_norm_eps=1e-4, batch_first=batch_first, norm_first=norm_first,
                                              bias=bias)

    reference = build(torch)
    module = twin(build(mg), reference)
    rng = np.random.default_rng(seed)
    shape = (length, 4) if batch is None else ((batch, length, 4) if batch_first else (length, batch, 4))
    arrays = dict(src=rng.standard_normal(shape))
    if src_mask in ("causal", "causal hint"):
        arrays["src_mask"] = np.triu(np.full((length, length), -np.inf), 1)
    elif src_mask == "bool":
        arrays["src_mask"] = rng.random((length, length)) < 0.4
        arrays["src_mask"][:, 0] = False
    if padding:
        arrays["src_key_padding_mask"] = rng.random((length,) if batch is None else (batch, length)) < 0.4
        arrays["src_key_padding_mask"][..., 0] = False
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # mixed bool/float masks warn in both libraries
        compare_call(module, reference, arrays, module=module, reference=reference,
                     is_causal=src_mask == "causal hint")


def test_transformer_encoder_matches_pytorch_and_copies_the_layer(device):
    def build(lib):
        layer = lib.nn.TransformerEncoderLayer(4, 2, dim_feedforward=8, dropout=0.0, batch_first=True)
        return layer, lib.nn.TransformerEncoder(layer, 2, norm=lib.nn.LayerNorm(4), enable_nested_tensor=False)

    layer, module = build(mg)
    for copied in module.layers:
        assert copied is not layer and copied.linear1.weight is not layer.linear1.weight
        np.testing.assert_array_equal(copied.linear1.weight.array, layer.linear1.weight.array)
    assert module.layers[0].self_attn.in_proj_weight is not module.layers[1].self_attn.in_proj_weight
    reference = build(torch)[1]
    with torch.no_grad():  # make the two layers differ, so that a shared parameter would show
        for p in reference.parameters():
            p.add_(0.1 * torch.randn(p.shape))
    module = twin(module, reference)
    assert list(module.state_dict()) == list(reference.state_dict())
    x = _normal((2, 3, 4))
    causal = np.triu(np.full((3, 3), -np.inf), 1)
    padding = np.array([[False, False, True], [False, False, False]])
    module.to(device)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a float mask beside a bool padding mask warns in both libraries
        compare_call(module, reference, dict(src=x, mask=causal, src_key_padding_mask=padding), device,
                     module=module, reference=reference)


def test_transformer_layer_eval_and_train():
    reference = torch.nn.TransformerEncoderLayer(4, 2, dim_feedforward=8, dropout=0.5)
    module = twin(mnn.TransformerEncoderLayer(4, 2, dim_feedforward=8, dropout=0.5, dtype=mg.float64), reference)
    reference.eval()
    module.eval()
    x = _normal((3, 2, 4))
    compare_call(module, reference, dict(src=x), module=module, reference=reference)
    module.train()
    mg.manual_seed(0)
    trained = module(mg.tensor(x)).detach().numpy()
    module.eval()
    assert not np.allclose(trained, module(mg.tensor(x)).detach().numpy()), "dropout acts in training"


def test_transformer_errors_match_pytorch():
    for lib in (torch, mg):
        with pytest.raises(RuntimeError, match="relu/gelu"):
            lib.nn.TransformerEncoderLayer(4, 2, activation="tanh")
        layer = lib.nn.TransformerEncoderLayer(4, 2, dim_feedforward=8)
        with pytest.raises(RuntimeError, match="Need attn_mask"):
            layer(lib.zeros(3, 2, 4), is_causal=True)
        with pytest.raises(RuntimeError, match="Need attn_mask"):
            lib.nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)(lib.zeros(3, 2, 4), is_causal=True)
        with pytest.raises(AssertionError):
            lib.nn.TransformerEncoderLayer(5, 2)


def test_transformer_state_dict_and_repr_match_pytorch():
    for options in ({}, dict(bias=False, norm_first=True)):
        module = mnn.TransformerEncoderLayer(4, 2, dim_feedforward=8, **options)
        reference = torch.nn.TransformerEncoderLayer(4, 2, dim_feedforward=8, **options)
        assert [(k, tuple(v.shape)) for k, v in module.state_dict().items()] == [
            (k, tuple(v.shape)) for k, v in reference.state_dict().items()]
        assert repr(module) == repr(reference)
    clone = copy.deepcopy(module)
    assert clone.self_attn.out_proj.weight is not module.self_attn.out_proj.weight
