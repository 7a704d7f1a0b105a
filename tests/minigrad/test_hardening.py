"""Inputs a hostile or careless user would try: each is refused with an error that names the op, the
argument and the fix (PyTorch's exception type where PyTorch has the API), never a NumPy internal message,
a silent wrong result or an unsafe read.

1. ``mg.load``: extra (pickle) members, unsafe member names, zip bombs, encrypted and repeated members.
2. ``mg.tensor`` of ragged nested lists, non-numbers and integers past 64 bits.
3. ``t[index] = value`` with a value that does not broadcast to the indexed region.
4. ``nn.Conv2d`` / ``F.conv2d`` / ``nn.Conv1d`` with sizes below their minimum.
5. ``set_detect_anomaly``: bools only, and a context manager that restores the previous mode.
"""

from __future__ import annotations

import io
import json
import pickle
import struct
import threading
import zipfile

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import minigrad as mg
from minigrad import nn
from minigrad.nn import functional as F
from minigrad.serialization import CheckpointError

UNPICKLED = []


class _Trap:
    def __reduce__(self):
        return (UNPICKLED.append, ("unpickled!",))


def _torch_error(call):
    try:
        call()
    except Exception as error:  # noqa: BLE001  (we compare types with PyTorch's)
        return type(error)
    return None


# -- 1. mg.load -------------------------------------------------------------------------------------


def _checkpoint_bytes(obj=None) -> bytes:
    buffer = io.BytesIO()
    mg.save({"w": mg.arange(6.0).reshape(2, 3)} if obj is None else obj, buffer)
    return buffer.getvalue()


def _with_extra_member(tmp_path, member, content, compress_type=zipfile.ZIP_STORED):
    """A valid checkpoint with one more member appended (written with zipfile, as an attacker would)."""
    path = tmp_path / "ckpt"
    path.write_bytes(_checkpoint_bytes())
    with zipfile.ZipFile(path, "a") as archive:
        archive.writestr(zipfile.ZipInfo(member), content, compress_type=compress_type)
    return path


def test_a_valid_checkpoint_with_an_extra_pickle_member_is_refused(tmp_path):
    for member in ("data.pkl", "arrays/extra.bin"):  # by its name, or by its first byte
        path = _with_extra_member(tmp_path, member, pickle.dumps(_Trap()))
        with pytest.raises(CheckpointError, match=rf"the member '{member}' is a pickle.*refuses files holding"):
            mg.load(path)
    path = _with_extra_member(tmp_path, "notes.txt", b"hello")
    with pytest.raises(CheckpointError, match="unexpected member 'notes.txt'.*only manifest.json and arrays"):
        mg.load(path)
    assert UNPICKLED == []


@pytest.mark.parametrize("member", ["../../x.npy", "arrays/../../x.npy", "/etc/x.npy", "C:/x.npy", "..\\x.npy"])
def test_member_names_leaving_the_archive_are_refused(tmp_path, member):
    path = _with_extra_member(tmp_path, member, b"\x93NUMPY")
    with pytest.raises(CheckpointError, match="refused the member .*must be relative paths") as info:
        mg.load(path)
    assert repr(member) in str(info.value)


def _set_declared_size(content: bytes, member: str, size: int) -> bytes:
    """Overwrite ``member``'s uncompressed size in the local header and the central directory."""
    data = bytearray(content)
    name = member.encode()
    for signature, size_offset, name_offset in ((b"PK\x03\x04", 22, 30), (b"PK\x01\x02", 24, 46)):
        start = 0
        while (start := data.find(signature, start)) >= 0:
            if data[start + name_offset : start + name_offset + len(name)] == name:
                struct.pack_into("<I", data, start + size_offset, size)
            start += 4
    return bytes(data)


def test_a_member_declaring_an_absurd_size_is_refused_before_reading(tmp_path):
    content = _checkpoint_bytes()
    path = tmp_path / "stored_bomb"
    path.write_bytes(_set_declared_size(content, "arrays/0.npy", 2**32 - 1))
    with pytest.raises(CheckpointError, match=r"'arrays/0.npy' declares an uncompressed size of 4294967295 bytes"):
        mg.load(path)
    # A deflated member declaring more than deflate can expand (a classic zip bomb).
    path = _with_extra_member(tmp_path, "arrays/1.npy", b"\0" * 100_000, zipfile.ZIP_DEFLATED)
    path.write_bytes(_set_declared_size(path.read_bytes(), "arrays/1.npy", 2**32 - 1))
    with pytest.raises(CheckpointError, match="'arrays/1.npy' declares .* zip bomb"):
        mg.load(path)


def test_an_npy_header_asking_for_more_than_the_member_holds_is_refused(tmp_path):
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(header, {"descr": "<f8", "fortran_order": False, "shape": (10**12,)})
    manifest = {
        "format": "minigrad-checkpoint",
        "version": 1,
        "root": {"type": "tensor", "entry": "arrays/0.npy", "dtype": "<f8", "shape": [10**12]},
    }
    path = tmp_path / "huge_shape"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("manifest.json", json.dumps(manifest))
        archive.writestr("arrays/0.npy", header.getvalue() + b"\0" * 64)
    with pytest.raises(CheckpointError, match=r"arrays/0.npy declares \d+ bytes but its .npy header .* needs"):
        mg.load(path)


def test_repeated_and_encrypted_members_are_refused(tmp_path):
    path = tmp_path / "twice"
    with pytest.warns(UserWarning, match="Duplicate name"):
        path = _with_extra_member(tmp_path, "arrays/0.npy", b"\x93NUMPY")
    with pytest.raises(CheckpointError, match="'arrays/0.npy' appears twice"):
        mg.load(path)
    content = bytearray(_checkpoint_bytes())
    flags = content.find(b"PK\x01\x02") + 8  # the central directory's general purpose flags of the first member
    content[flags] |= 0x1
    (tmp_path / "encrypted").write_bytes(bytes(content))
    with pytest.raises(CheckpointError, match="'manifest.json' is encrypted"):
        mg.load(tmp_path / "encrypted")


def test_checkpoints_still_round_trip(tmp_path):
    state = {"w": mg.randn(3, 4, dtype=mg.float64), "step": 3, "empty": mg.zeros(0, 5)}
    loaded = mg.load(io.BytesIO(_checkpoint_bytes(state)))
    assert loaded["step"] == 3 and loaded["empty"].shape == (0, 5)
    np.testing.assert_array_equal(loaded["w"].array, state["w"].array)


_GOOD_CHECKPOINT = _checkpoint_bytes({"w": mg.arange(12.0).reshape(3, 4), "b": [mg.zeros(2, dtype=mg.int64), None]})


@settings(max_examples=300, deadline=None, derandomize=True)
@given(data=st.data(), kind=st.sampled_from(["flip", "truncate", "insert", "overwrite"]))
def test_fuzz_damaged_checkpoints_load_or_raise_checkpoint_error(data, kind):
    content = bytearray(_GOOD_CHECKPOINT)
    at = data.draw(st.integers(0, len(content) - 5))
    if kind == "flip":
        content[at] ^= data.draw(st.integers(1, 255))
    elif kind == "truncate":
        del content[at:]
    elif kind == "insert":
        content[at:at] = data.draw(st.binary(min_size=1, max_size=8))
    else:  # sizes and offsets set to extremes
        content[at : at + 4] = data.draw(st.sampled_from([b"\xff\xff\xff\xff", b"\0\0\0\0", b"\xff\xff\xff\x7f"]))
    try:
        mg.load(io.BytesIO(bytes(content)))
    except CheckpointError:
        pass  # anything else (zipfile's NotImplementedError, a negative seek's ValueError, ...) fails the test


# -- 2. mg.tensor of ragged or non-numeric data ----------------------------------------------------


@pytest.mark.parametrize(
    "data, match",
    [
        ([1, [2, 3]], r"expected a number at data\[1\] \(dim 1\), got a sequence of length 2"),
        ([[1, 2], [3]], r"expected sequence of length 2 at dim 1 \(got 1\) at data\[1\]"),
        ([[1, 2], 3], r"expected a sequence of length 2 at data\[1\] \(dim 1\), got int 3"),
        ([[1], [[2]]], r"expected a number at data\[1\]\[0\] \(dim 2\)"),
        ([[[1, 2], [3, 4]], [[5, 6], [7]]], r"expected sequence of length 2 at dim 2 \(got 1\) at data\[1\]\[1\]"),
    ],
)
def test_ragged_nested_lists_name_where_they_are_ragged(data, match):
    expected = _torch_error(lambda: torch.tensor(data))
    with pytest.raises(expected, match=match) as info:
        mg.tensor(data)
    assert "tensor():" in str(info.value) and "must be rectangular" in str(info.value)
    assert "inhomogeneous" not in str(info.value), "no NumPy wording"


@pytest.mark.parametrize(
    "data, match",
    [
        ([1.0, None], r"could not infer dtype of NoneType at data\[1\]"),
        ([[1, 2], [3, "a"]], r"could not infer dtype of str at data\[1\]\[1\]"),
        ({"a": 1}, "could not infer dtype of dict at data"),
        ([1, 2**70], r"the integer at data\[1\] does not fit in 64 bits"),
    ],
)
def test_non_numeric_data_names_the_first_offending_element(data, match):
    expected = _torch_error(lambda: torch.tensor(data))  # RuntimeError, TypeError or ValueError by the element
    with pytest.raises(expected, match=match):
        mg.tensor(data)


def test_rectangular_data_still_works():
    assert mg.tensor([[1, 2], [3, 4]]).shape == (2, 2)
    assert mg.tensor([[], []]).shape == (2, 0)
    assert mg.tensor([np.ones(2), np.zeros(2)]).shape == (2, 2)
    assert mg.tensor([mg.tensor(1.0), mg.tensor(2.0)]).tolist() == [1.0, 2.0]


# -- 3. t[index] = value ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "index, value_shape, region",
    [
        (0, (5,), [4]),  # basic index: a view
        (slice(0, 2), (3, 4), [2, 4]),
        ((slice(None), 1), (2,), [3]),
        ([0, 1], (3, 4), [2, 4]),  # advanced index
        ("mask", (5,), [0]),  # boolean mask selecting nothing
        (0, (2, 1, 4), [4]),
    ],
)
def test_setitem_names_both_shapes_when_the_value_does_not_fit(index, value_shape, region):
    t, tt = mg.zeros(3, 4), torch.zeros(3, 4)
    if index == "mask":
        index, torch_index = t > 0, tt > 0
    else:
        torch_index = index
    value = mg.randn(*value_shape)
    with pytest.raises(
        RuntimeError,
        match=(
            rf"__setitem__ \(tensor\[index\] = value\): shape mismatch: value tensor of shape "
            rf"\[{', '.join(map(str, value_shape))}\] cannot be broadcast to indexing result of shape "
            rf"\[{', '.join(map(str, region))}\]"
        ),
    ):
        t[index] = value

    def torch_set():
        tt[torch_index] = torch.randn(*value_shape)

    assert _torch_error(torch_set) is RuntimeError
    assert np.all(t.array == 0), "nothing was written"


def test_setitem_accepts_what_pytorch_accepts():
    t, tt = mg.zeros(3, 4), torch.zeros(3, 4)
    values = [np.arange(4.0).reshape(1, 1, 4), np.arange(4.0).reshape(1, 4), np.array(7.0)]
    for i, v in enumerate(values):  # extra leading dimensions of size 1 are dropped, as in PyTorch
        t[i] = mg.tensor(v, dtype=mg.float32)
        tt[i] = torch.tensor(v, dtype=torch.float32)
    t[[0, 2], 1:3] = mg.ones(1, 2, 2)
    tt[[0, 2], 1:3] = torch.ones(1, 2, 2)
    np.testing.assert_array_equal(t.array, tt.numpy())


def test_setitem_with_a_value_that_requires_grad_drops_leading_ones_differentiably():
    x = mg.randn(1, 4, requires_grad=True)
    t = mg.zeros(3, 4)
    t[1] = x
    t.sum().backward()
    np.testing.assert_array_equal(x.grad.array, np.ones((1, 4)))


# -- 4. convolutions --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"kernel_size": 0}, "kernel_size must be positive"),
        ({"kernel_size": (3, -1)}, "kernel_size must be positive"),
        ({"kernel_size": 3, "stride": 0}, "stride must be positive"),
        ({"kernel_size": 3, "stride": -2}, "stride must be positive"),
        ({"kernel_size": 3, "dilation": 0}, "dilation must be positive"),
        ({"kernel_size": 3, "padding": -1}, "padding must be non-negative"),
        ({"kernel_size": 3, "groups": 2}, r"in_channels \(3\) and out_channels \(8\) must both be divisible by groups"),
        ({"kernel_size": 3, "groups": 0}, "groups must be a positive integer"),
    ],
)
@pytest.mark.filterwarnings("ignore:Initializing zero-element tensors")
def test_conv2d_refuses_sizes_below_their_minimum_when_built(kwargs, match):
    # PyTorch builds most of these and fails in forward (RuntimeError); we fail at once, with the class PyTorch
    # raises (ValueError from its constructor for groups).
    expected = ValueError if "groups" in kwargs else RuntimeError
    assert _torch_error(lambda: torch.nn.Conv2d(3, 8, **kwargs)(torch.randn(1, 3, 6, 6))) is expected
    with pytest.raises(expected, match=f"Conv2d: {match}"):
        nn.Conv2d(3, 8, **kwargs)


def test_conv2d_takes_numpy_ints_and_huge_kernels_fail_by_name():
    layer = nn.Conv2d(np.int64(4), 8, np.int32(3), groups=np.int64(2))
    assert layer.groups == 2 and type(layer.groups) is int and layer.weight.shape == (8, 2, 3, 3)
    with pytest.raises(RuntimeError, match=r"Conv2d\(\): a tensor of shape .* more than any array can hold"):
        nn.Conv2d(3, 8, kernel_size=2**40)
    with pytest.raises(RuntimeError, match=r"zeros\(\): a tensor of shape \(1099511627776, 1099511627776\)"):
        mg.zeros(2**40, 2**40)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"kernel_size": 0},
        {"kernel_size": 3, "stride": 0},
        {"kernel_size": 3, "padding": -1},
        {"kernel_size": 3, "output_padding": -1},
    ],
)
@pytest.mark.filterwarnings("ignore:Initializing zero-element tensors")
def test_conv1d_and_transposed_refuse_sizes_below_their_minimum(kwargs):
    # PyTorch builds these and fails in forward with RuntimeError; we fail at once, with its class.
    if "output_padding" not in kwargs:
        assert _torch_error(lambda: torch.nn.Conv1d(3, 8, **kwargs)(torch.randn(1, 3, 6))) is RuntimeError
        with pytest.raises(RuntimeError, match="Conv1d: .* must be at least"):
            nn.Conv1d(3, 8, **kwargs)
    assert _torch_error(lambda: torch.nn.ConvTranspose2d(3, 8, **kwargs)(torch.randn(1, 3, 6, 6))) is RuntimeError
    with pytest.raises(RuntimeError, match="ConvTranspose2d: .* must be at least"):
        nn.ConvTranspose2d(3, 8, **kwargs)


def test_a_weight_with_an_empty_kernel_is_refused_as_pytorch_does():
    x = mg.randn(1, 3, 5, 5)
    with pytest.raises(RuntimeError, match="conv2d\\(\\): kernel size should be greater than zero"):
        F.conv2d(x, mg.randn(8, 3, 0, 0))
    with pytest.raises(RuntimeError, match="conv1d\\(\\): kernel size should be greater than zero"):
        F.conv1d(mg.randn(1, 3, 5), mg.randn(8, 3, 0))
    with pytest.raises(RuntimeError, match="conv_transpose2d\\(\\): kernel size should be greater than zero"):
        F.conv_transpose2d(x, mg.randn(3, 8, 0, 2))
    assert (
        _torch_error(lambda: torch.nn.functional.conv2d(torch.randn(1, 3, 5, 5), torch.randn(8, 3, 0, 0)))
        is RuntimeError
    )


# -- 5. anomaly mode --------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["yes", 1, None, 0.0])
def test_set_detect_anomaly_takes_bools_only(mode):
    assert _torch_error(lambda: torch.autograd.set_detect_anomaly(mode)) is TypeError
    with pytest.raises(TypeError, match=r"set_detect_anomaly\(\): argument 'mode' \(position 1\) must be bool"):
        mg.autograd.set_detect_anomaly(mode)
    assert not mg.autograd.is_anomaly_enabled()
    with pytest.raises(TypeError, match="argument 'check_nan'"):
        mg.autograd.set_detect_anomaly(True, check_nan=mode)
    with pytest.raises(TypeError, match="argument 'check_nan'"):
        mg.autograd.detect_anomaly(check_nan=mode)
    assert not mg.autograd.is_anomaly_enabled()


def test_set_detect_anomaly_is_a_call_and_a_context_manager_like_pytorch():
    for lib in (torch.autograd, mg.autograd):
        enabled = torch.is_anomaly_enabled if lib is torch.autograd else mg.autograd.is_anomaly_enabled
        with lib.set_detect_anomaly(True):
            assert enabled()
            with lib.set_detect_anomaly(False):
                assert not enabled()
            assert enabled(), "the inner block restored the outer mode"
        assert not enabled(), "the previous mode is back after the block"
        lib.set_detect_anomaly(True)  # a plain call switches it on and leaves it on
        try:
            assert enabled()
        finally:
            lib.set_detect_anomaly(False)
        assert not enabled()


def test_an_exception_in_the_block_still_restores_the_mode():
    with pytest.raises(KeyError), mg.autograd.set_detect_anomaly(True):
        raise KeyError("boom")
    assert not mg.autograd.is_anomaly_enabled()


def test_check_nan_false_records_traces_without_checking():
    x = mg.tensor([0.0], requires_grad=True)
    with np.errstate(divide="ignore"), mg.autograd.detect_anomaly(check_nan=False):
        assert mg.autograd.is_anomaly_enabled()
        x.log().sum().backward()  # inf gradient: not checked
    assert np.isinf(x.grad.array).all()
    x.grad = None
    with np.errstate(divide="ignore"), mg.autograd.detect_anomaly(), pytest.raises(RuntimeError, match="inf"):
        x.log().sum().backward()


# -- fuzzing: odd values into the hardened entry points --------------------------------------------


ODD = st.sampled_from(
    [
        None,
        "a",
        b"x",
        1.5,
        -1,
        0,
        2**70,
        float("nan"),
        [],
        [[]],
        [1, [2]],
        [[1], 2],
        (),
        {},
        object(),
        threading.Lock(),
        np.array("s"),
        np.zeros((0, 3)),
        mg.zeros(0),
        True,
    ]
)
RAISED = (TypeError, ValueError, RuntimeError, IndexError)
NUMPY_WORDS = (
    "inhomogeneous",
    "setting an array element",
    "could not be broadcast",
    "operands could not",
    "object arrays are not supported",
    "only integers, slices",
)


def _raises_cleanly(op, call):
    """``call()`` works or raises one of RAISED naming ``op``, never in NumPy's words."""
    try:
        call()
    except RAISED as error:
        assert op in str(error) and not any(word in str(error) for word in NUMPY_WORDS), str(error)


@settings(max_examples=200, deadline=None, derandomize=True)
@given(data=ODD, index=st.sampled_from([0, -1, slice(None), (0, 0), [0, 2], "mask", None, (), ...]))
def test_fuzz_tensor_setitem_and_conv_never_leak_numpy_errors(data, index):
    _raises_cleanly("tensor", lambda: mg.tensor(data))
    t = mg.zeros(3, 4)
    _raises_cleanly("__setitem__", lambda: t.__setitem__(t > 0 if index == "mask" else index, data))
    _raises_cleanly("Conv2d", lambda: nn.Conv2d(3, 8, kernel_size=data))
    _raises_cleanly("Conv2d", lambda: nn.Conv2d(3, 8, 3, stride=data))
    _raises_cleanly("set_detect_anomaly", lambda: mg.autograd.set_detect_anomaly(data).__exit__(None, None, None))
    assert not mg.autograd.is_anomaly_enabled(), "a refused mode changes nothing; an accepted one was restored"


@pytest.mark.parametrize("value", [-1, -129, -255, -256, 255, 256, -1.5, 3])
def test_setitem_of_ints_into_uint8_wraps_or_refuses_as_pytorch(value):
    """PyTorch stores a negative int down to -255 into uint8 modulo 256 and refuses what lies beyond."""
    import torch

    results = []
    for lib in (mg, torch):
        t = lib.zeros(3, dtype=lib.uint8)
        try:
            t[0] = value
            results.append(int(t[0].item()))
        except RuntimeError:
            results.append("RuntimeError")
    assert results[0] == results[1]
