"""``nn.TransformerDecoderLayer``, ``nn.TransformerDecoder`` and ``nn.Transformer`` against PyTorch.

Modules are built in both libraries with dropout 0, PyTorch's weights are
loaded into minigrad's through ``load_state_dict`` (so the keys must match),
and outputs and the gradients of every parameter, input and float mask are
compared in float64.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import minigrad as mg
from minigrad import backend
from minigrad import nn as mnn
from tests.minigrad.nn.test_attention import compare_call, twin

pytestmark = pytest.mark.filterwarnings("ignore:enable_nested_tensor is True:UserWarning")


@pytest.fixture(params=("cpu", "cuda"))
def device(request) -> str:
    """The device a test runs on; "cuda" skips when no GPU can be used."""
    if request.param == "cuda" and not backend.cuda_is_available():
        pytest.skip(backend.cuda_unavailable_reason())
    return request.param


def _shape(batch, length, d_model, batch_first):
    if batch is None:
        return (length, d_model)
    return (batch, length, d_model) if batch_first else (length, batch, d_model)


def _causal(length):
    return np.triu(np.full((length, length), -np.inf), 1)


@settings(max_examples=20, deadline=None)
@given(norm_first=st.booleans(), activation=st.sampled_from(["relu", "gelu", "module"]), batch_first=st.booleans(),
       bias=st.booleans(), batch=st.sampled_from([None, 1, 2]), tgt_len=st.integers(1, 4), src_len=st.integers(1, 4),
       tgt_mask=st.sampled_from(["none", "causal", "causal hint", "bool"]),
       memory_mask=st.sampled_from(["none", "float", "bool"]), padding=st.booleans(), seed=st.integers(0, 100))
def test_decoder_layer_matches_pytorch(norm_first, activation, batch_first, bias, batch, tgt_len, src_len, tgt_mask,
                                       memory_mask, padding, seed):
    def build(lib):
        act = lib.nn.GELU(approximate="tanh") if activation == "module" else activation
        return lib.nn.TransformerDecoderLayer(4, 2, dim_feedforward=6, dropout=0.0, activation=act,
                                              layer_norm_eps=1e-4, batch_first=batch_first, norm_first=norm_first,
                                              bias=bias)

    reference = build(torch)
    module = twin(build(mg), reference)
    assert list(module.state_dict()) == list(reference.state_dict())
    rng = np.random.default_rng(seed)
    arrays = dict(tgt=rng.standard_normal(_shape(batch, tgt_len, 4, batch_first)),
                  memory=rng.standard_normal(_shape(batch, src_len, 4, batch_first)))
    if tgt_mask in ("causal", "causal hint"):
        arrays["tgt_mask"] = _causal(tgt_len)
    elif tgt_mask == "bool":
        arrays["tgt_mask"] = rng.random((tgt_len, tgt_len)) < 0.4
        arrays["tgt_mask"][:, 0] = False
    if memory_mask == "float":
        arrays["memory_mask"] = rng.standard_normal((tgt_len, src_len))
    elif memory_mask == "bool":
        arrays["memory_mask"] = rng.random((tgt_len, src_len)) < 0.4
        arrays["memory_mask"][:, 0] = False
    if padding:
        for name, length in (("tgt_key_padding_mask", tgt_len), ("memory_key_padding_mask", src_len)):
            arrays[name] = rng.random((length,) if batch is None else (batch, length)) < 0.4
            arrays[name][..., 0] = False
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # mixed bool/float masks warn in both libraries
        compare_call(module, reference, arrays, module=module, reference=reference,
                     tgt_is_causal=tgt_mask == "causal hint")


def test_decoder_stack_matches_pytorch_and_copies_the_layer(device):
    def build(lib):
        layer = lib.nn.TransformerDecoderLayer(4, 2, dim_feedforward=8, dropout=0.0, batch_first=True)
        return layer, lib.nn.TransformerDecoder(layer, 2, norm=lib.nn.LayerNorm(4))

    layer, module = build(mg)
    for copied in module.layers:
        assert copied is not layer and copied.linear1.weight is not layer.linear1.weight
        np.testing.assert_array_equal(copied.linear1.weight.array, layer.linear1.weight.array)
    reference = build(torch)[1]
    with torch.no_grad():  # make the two layers differ, so that a shared parameter would show
        for p in reference.parameters():
            p.add_(0.1 * torch.randn(p.shape))
    module = twin(module, reference)
    assert list(module.state_dict()) == list(reference.state_dict())
    rng = np.random.default_rng(0)
    tgt, memory = rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 5, 4))
    padding = np.array([[False, False, False, True, True], [False, False, False, False, False]])
    module.to(device)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a float mask beside a bool padding mask warns in both libraries
        for tgt_is_causal in (None, True):  # None: the stack detects that the mask is causal
            compare_call(module, reference, dict(tgt=tgt, memory=memory, tgt_mask=_causal(3),
                                                 memory_key_padding_mask=padding), device, module=module,
                         reference=reference, tgt_is_causal=tgt_is_causal)
            module.zero_grad()
            reference.zero_grad()


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("norm_first", [False, True])
def test_transformer_matches_pytorch(batch_first, norm_first):
    def build(lib):
        return lib.nn.Transformer(d_model=8, nhead=2, num_encoder_layers=2, num_decoder_layers=2,
                                  dim_feedforward=16, dropout=0.0, activation="gelu", batch_first=batch_first,
                                  norm_first=norm_first)

    reference = build(torch)
    module = twin(build(mg), reference)
    assert list(module.state_dict()) == list(reference.state_dict())
    rng = np.random.default_rng(3)
    src, tgt = rng.standard_normal(_shape(2, 5, 8, batch_first)), rng.standard_normal(_shape(2, 4, 8, batch_first))
    arrays = dict(src=src, tgt=tgt, tgt_mask=_causal(4),
                  src_key_padding_mask=np.array([[False] * 5, [False, False, False, True, True]]),
                  memory_key_padding_mask=np.array([[False] * 5, [False, False, False, True, True]]),
                  tgt_key_padding_mask=np.array([[False, False, False, True], [False] * 4]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        compare_call(module, reference, arrays, module=module, reference=reference)
    unbatched = dict(src=rng.standard_normal((5, 8)), tgt=rng.standard_normal((3, 8)), tgt_mask=_causal(3))
    module.zero_grad()
    reference.zero_grad()
    compare_call(module, reference, unbatched, module=module, reference=reference)


def test_transformer_initialization_mask_and_errors():
    mg.manual_seed(0)
    model = mnn.Transformer(d_model=8, nhead=2, num_encoder_layers=1, num_decoder_layers=1, dim_feedforward=16)
    reference = torch.nn.Transformer(d_model=8, nhead=2, num_encoder_layers=1, num_decoder_layers=1,
                                     dim_feedforward=16)
    assert list(model.state_dict()) == list(reference.state_dict())
    assert model.d_model == 8 and model.nhead == 2 and model.batch_first is False
    for name, p in model.named_parameters():
        theirs = reference.get_parameter(name)
        assert p.shape == tuple(theirs.shape) and p.dtype == np.float32
        if p.ndim > 1:  # xavier-uniform: within the bound, and spread over it
            fan_out, fan_in = p.shape[0], int(np.prod(p.shape[1:]))
            bound = np.sqrt(6 / (fan_in + fan_out))
            assert np.abs(p.array).max() <= bound and np.abs(p.array).max() > 0.5 * bound
    for size in (0, 1, 4):
        for dtype, tdtype in ((None, None), (mg.float64, torch.float64), (mg.bool, torch.bool)):
            mine = mnn.Transformer.generate_square_subsequent_mask(size, dtype=dtype)
            theirs = torch.nn.Transformer.generate_square_subsequent_mask(size, dtype=tdtype)
            assert mine.dtype == np.dtype(str(theirs.dtype).removeprefix("torch."))
            np.testing.assert_array_equal(mine.array, theirs.numpy())
    x = mg.randn(3, 2, 8)
    with pytest.raises(RuntimeError, match="the batch number of src and tgt must be equal"):
        model(x, mg.randn(3, 1, 8))
    with pytest.raises(RuntimeError):
        reference(torch.randn(3, 2, 8), torch.randn(3, 1, 8))
    with pytest.raises(RuntimeError, match="the feature number of src and tgt must be equal to d_model"):
        model(x, mg.randn(3, 2, 4))
    with pytest.raises(RuntimeError, match="activation should be relu/gelu, not tanh"):
        mnn.TransformerDecoderLayer(8, 2, activation="tanh")
    with pytest.raises(RuntimeError):
        torch.nn.TransformerDecoderLayer(8, 2, activation="tanh")
    with pytest.raises(AssertionError):
        mnn.TransformerDecoderLayer(8, 3)
    with pytest.raises(TypeError):
        mnn.TransformerDecoder(mnn.TransformerDecoderLayer(8, 2), 1.5)
    with pytest.raises(TypeError):
        mnn.TransformerDecoder("layer", 2)
    out = model(x, mg.randn(4, 2, 8), tgt_mask=mnn.Transformer.generate_square_subsequent_mask(4))
    assert out.shape == (4, 2, 8) and out.dtype == np.float32


def test_custom_encoder_decoder_and_eval_mode():
    encoder = mnn.TransformerEncoder(mnn.TransformerEncoderLayer(4, 1, 8, dropout=0.5), 1)
    decoder = mnn.TransformerDecoder(mnn.TransformerDecoderLayer(4, 1, 8, dropout=0.5), 1)
    model = mnn.Transformer(d_model=4, nhead=1, custom_encoder=encoder, custom_decoder=decoder)
    assert model.encoder is encoder and model.decoder is decoder and decoder.norm is None
    model.eval()
    src, tgt = mg.randn(3, 1, 4), mg.randn(2, 1, 4)
    np.testing.assert_array_equal(model(src, tgt).array, model(src, tgt).array)  # no dropout in eval mode
    model.train()
    mg.manual_seed(0)
    first = model(src, tgt).array
    assert not np.array_equal(first, model(src, tgt).array)  # dropout in training mode
