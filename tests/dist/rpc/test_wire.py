"""The RPC wire format (single process): Tensors and arrays survive a round trip exactly.

Small Tensors travel as bytes, dtype and shape inside the pickle; large
ones as out-of-band buffers. Both must give back a writable Tensor with the
same dtype, shape, values and ``requires_grad``, and report the Tensors that
require grad in pickling order (the send/recv node inputs).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minigrad as mg
from minigrad_dist.rpc import wire

DTYPES = [np.bool_, np.int8, np.int32, np.int64, np.uint16, np.float16, np.float32, np.float64, np.complex128]


def _round_trip(payload, track_grad=True):
    header, buffers, grad_tensors = wire.encode(payload, track_grad=track_grad)
    # The receiver gets the raw buffers as bytes it owns.
    received = [np.frombuffer(bytes(b), dtype=np.uint8).copy() for b in buffers]
    decoded, tracked = wire.decode(header, received)
    return decoded, tracked, grad_tensors, buffers


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(DTYPES).flatmap(lambda dt: hnp.arrays(dt, hnp.array_shapes(min_dims=0, max_dims=3, min_side=0))),
       st.booleans(), st.booleans())
def test_small_tensors_round_trip_exactly(array, transpose, requires_grad):
    if transpose and array.ndim >= 2:
        array = array.swapaxes(0, 1)  # not contiguous
    requires_grad = requires_grad and array.dtype.kind in "fc"
    t = mg.tensor(array, requires_grad=requires_grad) if requires_grad else mg.tensor(array)
    decoded, tracked, grad_tensors, buffers = _round_trip(("x", t))
    out = decoded[1]
    assert not buffers  # small: inside the pickle
    assert out.dtype == array.dtype and out.shape == array.shape
    np.testing.assert_array_equal(out.array, array)
    assert out.requires_grad == requires_grad
    assert out.array.flags.writeable
    assert len(tracked) == len(grad_tensors) == (1 if requires_grad else 0)


def test_large_tensor_travels_out_of_band_and_is_writable():
    array = np.arange(wire.INBAND_LIMIT // 4 * 2, dtype=np.float32).reshape(2, -1)
    decoded, _, _, buffers = _round_trip(mg.tensor(array))
    assert len(buffers) == 1 and buffers[0].nbytes == array.nbytes
    np.testing.assert_array_equal(decoded.array, array)
    decoded.array[0, 0] = -1.0  # writable, like any received array


def test_tracked_tensors_keep_pickling_order():
    a = mg.tensor(np.ones(3), requires_grad=True)
    b = mg.tensor(np.zeros((2, 2)), requires_grad=True)
    c = mg.tensor(np.arange(3.0))
    decoded, tracked, grad_tensors, _ = _round_trip((b, c, [a]))
    assert grad_tensors == [b, a]
    assert [slot for slot, _ in tracked] == [0, 1]
    assert tracked[0][1] is decoded[0] and tracked[1][1] is decoded[2][0]


def test_untracked_encoding_reports_no_grad_tensors():
    a = mg.tensor(np.ones(3), requires_grad=True)
    decoded, tracked, grad_tensors, _ = _round_trip(a, track_grad=False)
    assert grad_tensors == [] and tracked == []
    assert decoded.requires_grad


@pytest.mark.parametrize("dtype", [np.float32, np.int64])
def test_plain_arrays_round_trip(dtype):
    array = np.arange(12, dtype=dtype).reshape(3, 4)
    decoded, _, _, _ = _round_trip({"a": array})
    np.testing.assert_array_equal(decoded["a"], array)
