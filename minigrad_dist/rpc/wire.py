"""How RPC messages are encoded: a pickled header plus raw array buffers.

A message is pickled with protocol 5 and a ``buffer_callback``: contiguous
NumPy arrays of 64 KiB or more (the data of Tensors, and plain arrays) are
not copied into the pickle but travel as separate raw MPI messages and are
rebuilt on the receiver directly over the received memory (no extra copy on
either side); smaller ones ride inside the pickle, where a copy costs less
than another message. CuPy arrays are moved to host memory for the trip and arrive on the
CPU.

Tensors are pickled by value (data and ``requires_grad``), never with their
graph. Distributed autograd sees them through two results: ``encode``
returns the Tensors that require grad (the send node's inputs, collected
by ``Encoder`` when ``track_grad``), and ``decode`` returns the rebuilt
ones with their slots (the agent then attaches the recv node to them).
"""

from __future__ import annotations

import io
import pickle
import threading

import numpy as np

from minigrad import backend
from minigrad.tensor import Tensor


def _rebuild_small_tensor(raw, dtype, shape, requires_grad, slot):
    data = np.frombuffer(bytearray(raw), dtype=dtype).reshape(shape)  # bytearray: writable, like a sent array
    return _rebuild_tensor(data, requires_grad, slot)


def _rebuild_tensor(data, requires_grad, slot):
    t = Tensor(data)
    if requires_grad:
        t.requires_grad_(True)
    if slot is not None:
        _decoding.tensors.append((slot, t))
    return t


# Arrays smaller than this travel inside the pickled header: a copy is cheaper than a message.
INBAND_LIMIT = 64 * 1024


class _DecodeState(threading.local):
    def __init__(self):
        self.tensors = []


_decoding = _DecodeState()


class Encoder(pickle.Pickler):
    """Pickles a payload; Tensors by value, arrays out of band.

    Attributes:
        grad_tensors: Tensors that require grad, in the order they were pickled.
        buffers: the out-of-band buffers (to send as raw messages).
    """

    def __init__(self, file, track_grad: bool):
        buffers = self.buffers = []

        def out_of_band(buffer) -> bool:
            # Large buffers go as raw messages; small ones stay in the pickle (one MPI message less).
            # A closure, not a method: a bound method held by the pickler would make a reference cycle.
            if buffer.raw().nbytes < INBAND_LIMIT:
                return True
            buffers.append(buffer)
            return False

        super().__init__(file, protocol=5, buffer_callback=out_of_band)
        self.track_grad = track_grad
        self.grad_tensors = []

    def reducer_override(self, obj):
        if isinstance(obj, Tensor):
            data = backend.to_numpy(obj.array)
            slot = None
            if self.track_grad and obj.requires_grad:
                slot = len(self.grad_tensors)
                self.grad_tensors.append(obj)
            requires_grad = bool(obj.requires_grad)
            if data.nbytes < INBAND_LIMIT and data.dtype.kind in "biufc":
                # Bytes, dtype and shape pickle faster than an ndarray (no nested reduce, no buffer callback).
                return _rebuild_small_tensor, (data.tobytes(), data.dtype.str, data.shape, requires_grad, slot)
            return _rebuild_tensor, (np.ascontiguousarray(data), requires_grad, slot)
        if backend.is_array(obj) and backend.device_of(obj) != "cpu":
            return np.asarray, (backend.to_numpy(obj),)
        return NotImplemented


def encode(payload, track_grad: bool = False):
    """Pickle ``payload``: returns ``(header bytes, raw buffers, tensors requiring grad)``."""
    stream = io.BytesIO()
    encoder = Encoder(stream, track_grad)
    encoder.dump(payload)
    raw = [memoryview(b.raw()) for b in encoder.buffers]
    return stream.getvalue(), raw, encoder.grad_tensors


class _Probe(Encoder):
    """An ``Encoder`` that pickles RRefs as None: pickling a real one adds a reference count at its owner."""

    def reducer_override(self, obj):
        from minigrad_dist.rpc.rref import RRef  # noqa: PLC0415  (rref builds on the agent, which imports wire)

        if isinstance(obj, RRef):
            return type(None), ()
        return super().reducer_override(obj)


def unpicklable_argument(args, kwargs):
    """The first of a call's arguments that cannot be encoded, as ``(label, value, error)``; None when all can.

    ``label`` is ``"args[i]"`` or ``"kwargs['name']"``. Each argument is
    pickled on its own, as ``encode`` would, so only use it once ``encode``
    of the whole call has failed (it costs a second pickling).
    """
    labelled = [(f"args[{i}]", value) for i, value in enumerate(args)]
    labelled += [(f"kwargs[{key!r}]", value) for key, value in (kwargs or {}).items()]
    for label, value in labelled:
        try:
            _Probe(io.BytesIO(), track_grad=False).dump(value)
        except Exception as error:  # noqa: BLE001  (PicklingError, TypeError, AttributeError: any reason to refuse)
            return label, value, error
    return None


def decode(header: bytes, buffers):
    """Unpickle a message: returns ``(payload, [(slot, tensor)...])`` for tensors that were tracked."""
    previous = _decoding.tensors
    _decoding.tensors = []
    try:
        payload = pickle.loads(header, buffers=buffers)
        tracked = sorted(_decoding.tensors, key=lambda item: item[0])
    finally:
        _decoding.tensors = previous
    return payload, tracked
