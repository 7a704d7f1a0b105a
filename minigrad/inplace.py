"""In-place ops: write a tensor's memory and keep autograd honest about it.

Every in-place method (``add_``, ``mul_``, ``t[i] = v``, ``p -= lr * g``, ...)
goes through ``apply_inplace`` with two descriptions of the same update:

* ``update(array)`` writes the new value into the array in place (NumPy's
  ``out=``); used when nothing needs recording.
* ``compute(old)`` returns the new value as a recorded, out-of-place Tensor
  op on ``old`` (a Tensor standing for the value before the write); used in
  grad mode when the tensor or an operand requires grad.

``apply_inplace`` then follows PyTorch's rules:

1. In grad mode, a leaf that requires grad, or a view of one, may not be
   written in place (its ``.grad`` would stop meaning anything).
2. Nothing to record: ``update`` the memory, bump the version counter.
3. A tensor that is not a view: its history becomes ``compute``'s node.
   The new value is copied into the tensor's own memory (views of it must
   see it), and the tensor's ``grad_fn`` now points at that node, whose
   edges lead to the old history.
4. A view: the write is recorded on its root base as a ``CopySlices`` node
   (the base's old history, with the view's region replaced by
   ``compute``'s result); the view's own history is replayed on top of the
   base's new one.

After the write the shared version counter is bumped, so every graph node
that saved this memory for its backward raises instead of using the new
values (``views.py``).
"""

from __future__ import annotations

import math
import threading

import numpy as np

from minigrad import backend, views
from minigrad.function import FunctionNode
from minigrad.function import _sequence as _node_sequence
from minigrad.grad_mode import _state as _grad_state
from minigrad.graph import walk
from minigrad.tensor import Tensor

LEAF_MESSAGE = "a leaf Variable that requires grad is being used in an in-place operation."
VIEW_OF_LEAF_MESSAGE = "a view of a leaf Variable that requires grad is being used in an in-place operation."
OVERLAP_MESSAGE = (
    "unsupported operation: more than one element of the written-to tensor refers to a single memory "
    "location. Please clone() the tensor before performing the operation."
)


def apply_inplace(tensor, fn, update, compute, operands=()):
    """Write a new value into ``tensor``'s memory, recording it for autograd when needed.

    Args:
        tensor: the Tensor written.
        fn: the op's name, for error messages (``"add_"``).
        update: ``update(array)`` writes the new value into ``array`` in place.
        compute: ``compute(old) -> Tensor``, the new value out of place from
            the Tensor ``old`` (recorded ops); same shape as ``tensor``.
        operands: the other Tensors the new value depends on.

    When an op recorded by ``compute`` saved ``old`` for its backward
    (``mul_``, ``div_``, ``sin_``), ``old`` gets its own copy of the memory
    before the write overwrites it, as PyTorch saves the original self.

    Returns:
        ``tensor``.

    Raises:
        RuntimeError: in grad mode, ``tensor`` is a leaf that requires grad or
            a view of one; the memory is a broadcast (expanded) view; the new
            value's shape or dtype cannot be stored in ``tensor``.
    """
    grad_mode = _grad_state.enabled
    if grad_mode and tensor.requires_grad:
        _check_not_leaf(tensor)
    if not backend.is_writeable(tensor.array):  # a broadcast view: several elements share one memory location
        raise RuntimeError(OVERLAP_MESSAGE)
    if not (grad_mode and (tensor.requires_grad or _any_requires_grad(operands))):
        _write(tensor, update)
    elif tensor._view is None:
        _record_on_tensor(tensor, compute, fn)
    else:
        _record_on_view(tensor, compute, fn)
    return tensor


def _any_requires_grad(operands) -> bool:
    for x in operands:
        if isinstance(x, Tensor) and x.requires_grad:
            return True
    return False


def _check_not_leaf(tensor) -> None:
    if tensor.grad_fn is None and tensor._view is None:
        raise RuntimeError(LEAF_MESSAGE)
    view = tensor._view
    if view is not None and view.base.grad_fn is None and view.base.requires_grad:
        raise RuntimeError(VIEW_OF_LEAF_MESSAGE)


# Unrecorded in-place writes hold this lock: NumPy releases the GIL inside a ufunc, so two RPC
# handler threads doing ``p.grad += g`` at once could otherwise interleave and lose elements
# (PyTorch's own unlocked ``+=`` can); the version bump is counted under it too.
_write_lock = threading.Lock()


def _write(tensor, update) -> None:
    """Write in place without recording, then count the write."""
    data = tensor.array
    with _write_lock:
        update(data)
        views.bump_version(tensor)


def _alias(tensor) -> Tensor:
    """A Tensor standing for ``tensor``'s value and history before the write (same memory)."""
    return Tensor._make(tensor.array, tensor.requires_grad, tensor.grad_fn, tensor._output_nr)


def _new_value(tensor, old, compute, fn) -> Tensor:
    """``compute(old)``, checked to fit ``tensor`` and cast to its dtype (recorded).

    ``old`` gets a private copy of its memory when a node recorded here saved it.
    """
    first = next(_node_sequence)
    new = compute(old)
    if _saves(new, old, first):
        old.array = old.array.copy()
    if new.shape != tensor.shape:
        raise RuntimeError(
            f"{fn}: output with shape {list(tensor.shape)} doesn't match the broadcast shape {list(new.shape)}"
        )
    if new.dtype != tensor.dtype:
        check_castable(new.dtype, tensor.dtype, fn)
        new = new.to(tensor.dtype)
    return new


def _saves(new, old, first) -> bool:
    """Whether a node recorded after sequence number ``first`` on the way to ``new`` saved ``old``."""

    def older(node):  # inputs are recorded before the ops using them: nothing past such a node is newer
        return not isinstance(node, FunctionNode) or -node.priority <= first

    for node in walk([new.grad_fn], skip=older):
        saved = node._saved_inputs
        if saved is not None and any(x is old for x in saved):
            return True
    return False


def _record_on_tensor(tensor, compute, fn) -> None:
    new = _new_value(tensor, _alias(tensor), compute, fn)
    tensor.array[...] = new.array
    views.bump_version(tensor)
    tensor.grad_fn = new.grad_fn
    tensor._output_nr = new._output_nr
    tensor._requires_grad = new.requires_grad
    _save_result_in_place(new, tensor)


def _save_result_in_place(new, tensor) -> None:
    """An op that saved its result (``tanh_``, ``exp_``) now keeps it in ``tensor``'s memory, as PyTorch's
    in-place ops do: one copy, and a later write to ``tensor`` is caught by the version check."""
    node = new.grad_fn
    if isinstance(node, FunctionNode):
        node.rebind_saved_output(new._output_nr, tensor)


def _record_on_view(tensor, compute, fn) -> None:
    info = tensor._view
    base = info.base
    old_base = _alias(base)
    old_view = info.replay(old_base)
    new_view = _new_value(tensor, old_view, compute, fn)
    rebased = CopySlices(info, base.array)(old_base, new_view)  # writes the region into base.array
    views.bump_version(base)
    base.grad_fn = rebased.grad_fn
    base._output_nr = 0
    base._requires_grad = True
    _save_result_in_place(new_view, tensor)
    views.refresh_view(tensor)


class CopySlices(FunctionNode):
    """The base after an in-place op on one of its views: ``base`` with the view's region set to ``src``.

    Forward writes ``src`` into the region of the base's own array and
    returns that array (no copy). Backward: the base's old value gets the
    gradient outside the region (inside it was overwritten), ``src`` the
    gradient inside it.
    """

    def __init__(self, info, base_array):
        self.info = info
        self.base_array = base_array

    def forward(self, base, src):
        self.info.view_array(base)[...] = src
        return base

    def backward(self, g):
        need_base, need_src = self.needs_input_grad
        grad_base = ZeroRegion(self.info, self.base_array)(g) if need_base else None
        grad_src = self.info.replay(g) if need_src else None
        return grad_base, grad_src


class ZeroRegion(FunctionNode):
    """``g`` with a view's region of the base set to zero (its own adjoint)."""

    def __init__(self, info, base_array):
        self.info = info
        self.base_array = base_array

    def forward(self, g):
        out = self.xp.empty_like(self.base_array)  # the base's layout: the view chain gives views again
        out[...] = g
        region = self.info.view_array(out)
        if region.size and not views.is_view_array(region, out):
            raise RuntimeError(
                "internal error: the view written in place could not be replayed as a view of its base's "
                "gradient; please report this with the view ops used"
            )
        region[...] = 0
        return out

    def backward(self, gg):
        return ZeroRegion(self.info, self.base_array)(gg)


def check_castable(result, target, fn: str) -> None:
    """PyTorch's rule for in-place results: the result dtype must cast to the tensor's within its kind.

    Raises:
        RuntimeError: e.g. a float result into an integer tensor (PyTorch's message).
    """
    if result != target and not np.can_cast(result, target, "same_kind"):
        raise RuntimeError(f"{fn}: result type {_torch_name(result)} can't be cast to the desired output type "
                           f"{_torch_name(target)}")


def _torch_name(dtype) -> str:
    names = {"f": "Float", "i": "Long", "u": "Byte", "b": "Bool", "c": "ComplexFloat"}
    return f"{names.get(np.dtype(dtype).kind, '')} ({np.dtype(dtype)})".strip()


class CopyFrom(FunctionNode):
    """``old`` replaced by ``src`` broadcast to its shape and cast to its dtype (``copy_``, ``fill_``, ``zero_``).

    The old value gets a zero gradient (it was overwritten), ``src`` the
    gradient summed over the broadcast, in its own dtype.
    """

    def forward(self, old, src):
        self.shape, self.dtype = old.shape, old.dtype
        self.src_shape = getattr(src, "shape", ())
        self.src_dtype = getattr(src, "dtype", None)
        out = self.xp.empty(old.shape, old.dtype)
        out[...] = src
        return out

    def backward(self, g):
        need_old, need_src = self.needs_input_grad
        grad_old = Tensor._make(self.xp.zeros(self.shape, self.dtype), False, None, 0) if need_old else None
        grad_src = None
        if need_src:
            grad_src = unbroadcast(g, self.src_shape)
            if grad_src.dtype != self.src_dtype:
                grad_src = grad_src.to(self.src_dtype)
        return grad_old, grad_src


class IndexPut(FunctionNode):
    """``old`` with ``old[index] = value`` (advanced indices; basic ones write through a view)."""

    def __init__(self, index):
        self.index = index

    def forward(self, old, value):
        self.value_shape = getattr(value, "shape", ())
        out = old.copy()
        out[self.index] = value
        return out

    def backward(self, g):
        need_old, need_value = self.needs_input_grad
        grad_old = grad_value = None
        if need_old:
            grad_old = IndexPut(self.index)(g, Tensor._make(self.xp.zeros((), g.dtype), False, None, 0))
        if need_value:
            grad_value = unbroadcast(g[self.index], self.value_shape)
        return grad_old, grad_value


def unbroadcast(grad, shape):
    """See ``minigrad.ops._util.unbroadcast`` (imported late: the ops import this module's Tensor)."""
    from minigrad.ops._util import unbroadcast as _unbroadcast  # noqa: PLC0415

    return _unbroadcast(grad, shape)


# -- the in-place methods' bodies (Tensor's methods call these) -------------------


def operand(tensor, other, fn: str):
    """``other``'s array or number, checked: a Tensor, an array or a number on ``tensor``'s device.

    Raises:
        TypeError: ``other`` holds no numbers.
    """
    data = other.array if isinstance(other, Tensor) else other
    if isinstance(data, _NUMBERS):
        return data
    if not (backend.is_array(data) and data.dtype.kind in "biufc"):
        raise TypeError(f"{fn}: other must be a Tensor, an array or a number, got {type(other).__name__}")
    backend.get_array_module(tensor.array, data)  # raises, naming both devices, when they differ
    return data


_NUMBERS = (int, float, complex, np.number, np.bool_)


def binary(tensor, other, fn: str, ufunc, op):
    """``tensor <op>= other`` in place: ``ufunc(data, other, out=data)``; recorded as ``op(old, other)``."""
    other_data = operand(tensor, other, fn)

    def update(data):
        try:
            ufunc(data, other_data, out=data, casting="same_kind")
        except TypeError as error:  # NumPy refuses the cast: the result's kind does not fit the tensor
            check_castable(np.result_type(data, other_data), data.dtype, fn)
            # Left: a float result of int operands (div_), or bool - bool; PyTorch's class is RuntimeError.
            raise RuntimeError(f"{fn}: {error}") from None
        except ValueError:
            raise RuntimeError(_broadcast_message(tensor, other_data, fn)) from None

    def compute(old):
        if not _fits(tensor, other_data):
            raise RuntimeError(_broadcast_message(tensor, other_data, fn))
        return op()(old, other)

    return apply_inplace(tensor, fn, update, compute, (other,))


def _fits(tensor, other_data) -> bool:
    shape = getattr(other_data, "shape", ())
    try:
        return np.broadcast_shapes(tensor.shape, shape) == tensor.shape
    except ValueError:
        return False


def _broadcast_message(tensor, other_data, fn: str) -> str:
    shape = list(getattr(other_data, "shape", ()))
    try:
        broadcast = list(np.broadcast_shapes(tensor.shape, tuple(shape)))
    except ValueError:
        return f"{fn}: the size of tensor a {list(tensor.shape)} must match the size of tensor b {shape}"
    return f"{fn}: output with shape {list(tensor.shape)} doesn't match the broadcast shape {broadcast}"


def unary(tensor, fn: str, update, op):
    """``tensor = op(tensor)`` in place: ``update(data)`` writes it; recorded as ``op(old)``."""
    return apply_inplace(tensor, fn, update, op, ())


def copy_from(tensor, src, fn: str = "copy_"):
    """``tensor[...] = src`` (broadcast, cast to ``tensor``'s dtype and device); differentiable in ``src``."""
    src_data = operand(tensor, src, fn) if not isinstance(src, Tensor) or src.device == tensor.device else None
    if src_data is None:  # another device: copy_ moves it, as PyTorch's does
        src = src.to(tensor.device)
        src_data = src.array
    if not _fits(tensor, src_data):
        raise RuntimeError(_broadcast_message(tensor, src_data, fn))

    def update(data):
        data[...] = src_data

    def compute(old):
        return CopyFrom()(old, src)

    return apply_inplace(tensor, fn, update, compute, (src,))


def fill(tensor, value, fn: str):
    """Every element set to ``value`` (a number, or a 0-d Tensor that may require grad).

    Raises:
        RuntimeError: a number the dtype cannot hold (``storable``: 300 in uint8, 1e6 in float16).
    """
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise RuntimeError(f"{fn} only supports 0-dimension value tensor but got tensor with {value.ndim} "
                               "dimensions.")
    elif not isinstance(value, _NUMBERS):
        raise TypeError(f"{fn}: value must be a number or a 0-d Tensor, got {type(value).__name__}")
    else:
        value = storable(value, tensor.dtype, fn)
    return copy_from(tensor, value, fn)


def set_item(tensor, index, value):
    """``tensor[index] = value``: basic indices write through a view, advanced ones through ``IndexPut``.

    ``value`` may have more dimensions than the indexed region when the extra
    leading ones have size 1 (as in PyTorch and NumPy); they are dropped.

    Raises:
        TypeError: ``value`` is not a Tensor, a numeric array or a number.
        IndexError: ``index`` does not fit ``tensor``'s shape.
        RuntimeError: ``value`` does not broadcast to the indexed region (names both shapes).
    """
    from minigrad.ops import indexing  # noqa: PLC0415  (indexing imports the Tensor this module needs)

    if not (isinstance(value, (Tensor, *_NUMBERS)) or backend.is_array(value)):
        raise TypeError(f"__setitem__: value must be a Tensor, an array or a number, got {type(value).__name__}")
    if backend.is_array(value) and value.dtype.kind not in "biufc":
        raise TypeError(f"__setitem__: value must hold numbers, got an array of dtype {value.dtype}")
    number = isinstance(value, _NUMBERS)
    if number:
        value = storable(value, tensor.dtype)
    index = indexing.unwrap_index(index, tensor.device)
    if not indexing.is_advanced(index):
        region = indexing.index(tensor, index)
        if region._view is not None:  # always, for basic indices: written through, the base sees it
            copy_from(region, value if number else _fit_value(value, region.shape), "__setitem__")
            return tensor
    if number:  # a number fits any region; only the index needs checking, and only if the write fails
        try:
            return _index_put(tensor, index, value)
        except IndexError:
            _indexed_shape(tensor, index)  # raises the IndexError that names the op, the index and the shape
            raise
    value_dtype = value.dtype
    if value_dtype.kind == "c" and tensor.dtype.kind != "c":
        raise RuntimeError(  # PyTorch's index_put refuses it too, rather than dropping the imaginary part
            f"__setitem__: index put requires the source and destination dtypes to match, got {tensor.dtype} for "
            f"the destination and {value_dtype} for the source; use .real or a complex tensor"
        )
    recorded = _grad_state.enabled and (tensor.requires_grad or getattr(value, "requires_grad", False))
    if not recorded:  # the array write broadcasts by itself; shapes are worked out only to explain a failure
        try:
            return _index_put(tensor, index, value)
        except (ValueError, IndexError, TypeError):  # NumPy's words for a shape that does not fit (a mask: TypeError)
            pass  # the checks below raise the error that names the op and both shapes
    value = _fit_value(value, _indexed_shape(tensor, index))  # also checks the index, naming the op
    return _index_put(tensor, index, value)


def _index_put(tensor, index, value):
    """``tensor[index] = value`` for an advanced index, in place (recorded as ``IndexPut`` when autograd needs it)."""
    value_data = value.array if isinstance(value, Tensor) else value

    def update(data):
        data[index] = value_data

    def compute(old):
        return IndexPut(index)(old, value)

    return apply_inplace(tensor, "__setitem__", update, compute, (value,))


_FLOAT32_MAX = float(np.finfo(np.float32).max)


def integer_limits(dtype) -> tuple[int, int]:
    """The ints PyTorch stores in the integer ``dtype``: its range, plus, for an unsigned dtype, the
    negatives down to ``-max``, stored wrapped around (uint8: -255 to 255)."""
    info = np.iinfo(dtype)
    return (-int(info.max) if dtype.kind == "u" else int(info.min)), int(info.max)


def storable(number, dtype, fn: str = "__setitem__"):
    """The number ``tensor[index] = number`` (or ``fill_``, or ``full`` of an integer dtype) writes: a complex
    with no imaginary part becomes real, a negative int in an unsigned dtype wraps around; RuntimeError, as
    PyTorch's, when ``dtype`` cannot hold it."""
    if isinstance(number, (complex, np.complexfloating)) and dtype.kind != "c":
        if number.imag != 0:
            raise RuntimeError(
                f"{fn}: the complex value {number!r} cannot be stored in a tensor of dtype {dtype} (its "
                "imaginary part would be lost); use a complex tensor, or store number.real"
            )
        number = number.real
    if type(number) is float and dtype.kind == "f":  # the usual case, decided without the dtype's limits
        if dtype.itemsize == 8 or (dtype.itemsize == 4 and -_FLOAT32_MAX <= number <= _FLOAT32_MAX):
            return number  # a Python float is a float64; a float32 holds any finite float in its range
    finite = not isinstance(number, (float, np.floating)) or math.isfinite(number)  # ints: exact, never inf
    wraps = dtype.kind == "u" and isinstance(number, (int, np.integer)) and not isinstance(number, (bool, np.bool_))
    if wraps:  # as PyTorch: a negative int down to -max wraps around (uint8: -1 is stored as 255)
        low, high = integer_limits(dtype)
        fits = low <= number <= high
        number = int(number) % (high + 1) if fits else number
    elif dtype.kind in "iu" and not isinstance(number, (bool, np.bool_)):
        info = np.iinfo(dtype)
        fits = finite and int(info.min) <= number <= int(info.max)
    elif dtype.kind == "f" and not isinstance(number, (bool, np.bool_)):
        fits = not finite or abs(number) <= float(np.finfo(dtype).max)
    else:
        fits = True
    if not fits:
        raise RuntimeError(
            f"{fn}: value {number!r:.40} cannot be converted to type {dtype} without overflow; store it in a "
            "tensor of a wider dtype"
        )
    return number


def _indexed_shape(tensor, index) -> tuple:
    """The shape of ``tensor[index]`` for an advanced index, without reading or copying ``tensor``."""
    xp = backend.get_array_module(tensor.array)
    probe = xp.broadcast_to(xp.zeros((), dtype=bool), tensor.shape)  # zero strides: no memory of tensor's size
    try:
        return probe[index].shape
    except IndexError as error:
        raise IndexError(f"__setitem__: index {_describe_index(index)} is invalid for a tensor of shape "
                         f"{tensor.shape}: {error}") from None


def _describe_index(index) -> str:
    """An index for a message: arrays by shape and dtype (a mask's repr can be huge)."""
    parts = index if isinstance(index, tuple) else (index,)
    text = ", ".join(f"<array of shape {p.shape}, dtype {p.dtype}>" if backend.is_array(p) else repr(p) for p in parts)
    return f"({text})" if isinstance(index, tuple) else text


def _fit_value(value, region_shape):
    """``value`` without the leading size-1 dimensions the region lacks; RuntimeError unless it then broadcasts."""
    shape = tuple(getattr(value, "shape", ()))
    if shape == tuple(region_shape):
        return value  # the usual case, without the broadcast arithmetic below
    kept = shape
    while len(kept) > len(region_shape) and kept[0] == 1:
        kept = kept[1:]
    try:
        fits = np.broadcast_shapes(region_shape, kept) == tuple(region_shape)
    except ValueError:
        fits = False
    if not fits:
        raise RuntimeError(
            f"__setitem__ (tensor[index] = value): shape mismatch: value tensor of shape {list(shape)} cannot be "
            f"broadcast to indexing result of shape {list(region_shape)}; give a value of shape "
            f"{list(region_shape)} or one that broadcasts to it"
        )
    return value.reshape(kept) if kept != shape else value


def expect_floating(tensor, fn: str) -> None:
    """NotImplementedError (PyTorch's: its kernel has no integer version) unless ``tensor`` is floating point."""
    if tensor.dtype.kind not in "fc":
        raise NotImplementedError(f"{fn}: not implemented for dtype {tensor.dtype}; fill a floating point tensor")


def random_fill(tensor, fn: str, sample):
    """Overwrite ``tensor`` with ``sample(generator, shape, dtype)`` drawn on its device (no gradient).

    Raises:
        RuntimeError: the generator refuses the parameters (``uniform_(2, 1)``, ``normal_(0, -1)``), as PyTorch.
    """
    device = tensor.device
    with backend.device_context(device):
        try:
            samples = sample(backend.generator(device), tensor.shape)
        except ValueError as error:  # NumPy's words for bad parameters
            raise RuntimeError(f"{fn}: {error}") from None
    return copy_from(tensor, samples, fn)
