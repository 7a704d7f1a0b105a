"""Ways to make tensors: ``tensor``, ``zeros``, ``randn``, ... with PyTorch's dtype and device rules.

Python floats become the default dtype (float32 unless ``set_default_dtype``
changed it), Python complex numbers its complex counterpart, Python ints
int64 (as in PyTorch); NumPy and CuPy arrays keep their dtype. Without
``device=``, tensors are made on the default device (``set_default_device``;
the CPU unless changed), except ``tensor``/``as_tensor`` of a Tensor or an
array, which keep its device. Random tensors come from the per-device
generators of ``backend`` (seeded by ``manual_seed``).
"""

from __future__ import annotations

import math

import numpy as np

from minigrad import backend
from minigrad.dtypes import bool_, float16, float32, float64, int32, int64, long  # noqa: F401  (re-exported)
from minigrad.inplace import integer_limits, storable
from minigrad.promotion import get_default_dtype
from minigrad.tensor import Tensor, resolve_numeric_dtype


def _resolve_dtype(dtype):
    if dtype is None:
        return None
    return resolve_numeric_dtype(dtype, "dtype must be a NumPy dtype such as mg.float32, got {given!r}",
                                 "dtype must be a numeric (bool, integer, floating or complex) dtype, got {given!r}")


def _expect_tensor(fn: str, t) -> None:
    if not isinstance(t, Tensor):
        raise TypeError(f"{fn}(): argument 'input' must be a Tensor, got {type(t).__name__}")


def _is_real(value) -> bool:
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)


def _shape(size, fn: str) -> tuple:
    """``size`` as a tuple of ints: TypeError for an entry that is not an int, RuntimeError for a negative one."""
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    for n in size:
        if not isinstance(n, (int, np.integer)) or isinstance(n, bool):
            raise TypeError(f"{fn}: size must be non-negative ints, got {size!r}")
    for n in size:
        if n < 0:
            raise RuntimeError(f"{fn}: size must be non-negative ints, got {size!r}")
    return tuple(int(n) for n in size)


_PYTHON_NUMBER_DTYPES = (np.dtype(np.float64), np.dtype(np.complex128))


def _python_number_dtype(numpy_dtype):
    """The dtype of Python floats (float64 in NumPy) or complexes (complex128): the default dtype or its complex."""
    default = get_default_dtype()
    if numpy_dtype.kind == "c":
        return np.result_type(default, np.complex64)
    return default


def tensor(data, requires_grad=False, dtype=None, device=None) -> Tensor:
    """A new tensor holding a copy of ``data`` (list, number, array or Tensor).

    Python floats take the default dtype and complex numbers its complex
    counterpart (complex64 for float32). ``device=None`` keeps the device of
    a Tensor or array ``data`` and uses the default device otherwise.

    Raises:
        TypeError: a string or bytes element (the message names the first
            element that is not numeric, like ``data[1]``), or ``dtype`` is
            not a dtype.
        ValueError: nested lists of different lengths at one depth (ragged;
            a number beside a list at one depth is a TypeError, as in PyTorch),
            an integer that does not fit in 64 bits, or a string in the first
            position of a list (PyTorch reads it as one more dimension).
        RuntimeError: an element of another kind (None, a dict, any object)
            when no ``dtype`` is given (TypeError with one), a number an
            integer ``dtype`` cannot hold (300 in uint8), or
            ``requires_grad`` on a non-floating dtype.
    """
    dtype = _resolve_dtype(dtype)
    if isinstance(data, Tensor):
        data = data.array
    if backend.is_array(data):
        device = backend.device_of(data) if device is None else backend.normalize_device(device)
        array = backend.to_device(data, device).astype(dtype or data.dtype, copy=True)
    else:
        device = backend.normalize_device(device)
        array = _nested_to_array(data)  # first as it is: None or strings give object/str arrays, refused below
        if array.dtype.kind in "biufc":
            if dtype is not None:
                _check_integer_range(array, dtype)
                array = array.astype(dtype)
            elif array.dtype in _PYTHON_NUMBER_DTYPES and not isinstance(data, np.generic):
                array = array.astype(_python_number_dtype(array.dtype))
    if array.dtype.kind not in "biufc":
        raise _not_numeric_error(data, array, dtype is not None)
    return Tensor(backend.to_device(array, device), requires_grad=requires_grad)


def _nested_to_array(data):
    """``np.array(data)``; a ragged nest of lists gets an error saying where it is ragged, as PyTorch's does.

    Raises:
        ValueError: a sequence has another length than the first one at its depth.
        TypeError: a number where a sequence is expected, or the reverse.
    """
    try:
        return np.array(data)
    except ValueError:
        if not isinstance(data, (list, tuple)):
            raise
        problem = _ragged_problem(data, _first_shape(data), 0, "")
        if problem is None:
            raise
        kind, text = problem
        message = f"tensor(): {text}; nested sequence data must be rectangular (the same length at each depth)"
        raise kind(message) from None


def _is_sequence(value) -> bool:
    return isinstance(value, (list, tuple)) or (hasattr(value, "shape") and len(value.shape) > 0)


def _first_shape(data) -> list:
    """The shape implied by the first element at every depth (how PyTorch reads a nest of lists)."""
    shape = []
    while _is_sequence(data):
        shape.append(len(data))
        if not len(data):
            break
        data = data[0]
    return shape


def _ragged_problem(data, shape, dim, where):
    """``(exception type, message)`` for the first element (depth first) that breaks ``shape``; None if none."""
    if dim == len(shape):
        if _is_sequence(data):
            return TypeError, f"expected a number at data{where} (dim {dim}), got a sequence of length {len(data)}"
        return None
    if not _is_sequence(data):
        return TypeError, (
            f"expected a sequence of length {shape[dim]} at data{where} (dim {dim}), "
            f"got {type(data).__name__} {data!r:.40}"
        )
    if len(data) != shape[dim]:
        return ValueError, f"expected sequence of length {shape[dim]} at dim {dim} (got {len(data)}) at data{where}"
    for i, item in enumerate(data):
        problem = _ragged_problem(item, shape, dim + 1, f"{where}[{i}]")
        if problem is not None:
            return problem
    return None


def _check_integer_range(array, dtype) -> None:
    """RuntimeError, as PyTorch's, when Python numbers in ``array`` overflow the integer ``dtype`` they go to.

    NumPy's cast would wrap them silently (300 -> 44 in uint8). As PyTorch, an
    unsigned dtype still takes negatives down to ``-max`` (stored wrapped around)
    and floats are truncated toward zero.
    """
    if dtype.kind not in "iu" or array.dtype.kind not in "iuf" or array.size == 0:
        return
    low, high = integer_limits(dtype)
    values = np.trunc(array) if array.dtype.kind == "f" else array
    for value in (values.min(), values.max()):
        if not low <= value <= high:
            raise RuntimeError(f"tensor(): value {value} cannot be converted to type {dtype} without overflow; "
                               "use a wider dtype")


def _not_numeric_error(data, array, dtype_given: bool) -> Exception:
    """Why ``data`` makes no numeric tensor, naming the first offending element of a nest of sequences.

    The class is PyTorch's for that element: ValueError for an integer past 64 bits and for a string
    PyTorch takes for one more dimension (one reached through first elements only, like ``data[0][0]``),
    TypeError for other strings and bytes, RuntimeError for any other object (None, a dict) when the
    dtype is to be inferred, TypeError when a ``dtype`` was given (PyTorch then converts each element).
    """
    culprit, where = _first_non_number(data, "")
    if culprit is _NUMBERS_ONLY:
        kind = type(data).__name__
        return TypeError(f"tensor(): cannot make a numeric tensor from {kind} data of dtype {array.dtype}")
    if isinstance(culprit, int):
        return ValueError(f"tensor(): the integer at data{where} does not fit in 64 bits ({culprit:.3e}); "
                          "pass it as a float (or dtype=mg.float64)")
    if isinstance(culprit, str) and where and set(where.split("]")) <= {"[0", ""}:
        kind = ValueError
    elif isinstance(culprit, (str, bytes)):
        kind = TypeError
    else:
        kind = TypeError if dtype_given else RuntimeError
    return kind(f"tensor(): could not infer dtype of {type(culprit).__name__} at data{where} ({culprit!r:.40}); "
                "data must hold numbers or bools")


_NUMBERS_ONLY = object()  # what _first_non_number finds in data that holds only numbers


def _first_non_number(data, where):
    """``(element, index)`` of the first element (depth first) neither a number nor a sequence, or an int past
    64 bits; ``(_NUMBERS_ONLY, "")`` when there is none."""
    if isinstance(data, (list, tuple)):
        for i, item in enumerate(data):
            culprit, at = _first_non_number(item, f"{where}[{i}]")
            if culprit is not _NUMBERS_ONLY:
                return culprit, at
        return _NUMBERS_ONLY, ""
    if isinstance(data, int) and not isinstance(data, bool):
        return (data, where) if not -(2**63) <= data < 2**64 else (_NUMBERS_ONLY, "")
    if isinstance(data, (bool, float, complex, np.number, np.bool_, Tensor)) or backend.is_array(data):
        return _NUMBERS_ONLY, ""
    return data, where


def as_tensor(data, dtype=None, device=None) -> Tensor:
    """Like ``tensor`` but shares memory with a Tensor or array when no conversion is needed.

    ``device=None`` keeps a Tensor's or array's device (the default device for other data).
    """
    if isinstance(data, Tensor) or backend.is_array(data):
        array = data.array if isinstance(data, Tensor) else data
        if array.dtype.kind not in "biufc":
            raise TypeError(f"as_tensor: cannot make a numeric tensor from an array of dtype {array.dtype}")
        same_device = device is None or backend.device_of(array) == backend.normalize_device(device)
        if same_device and (dtype is None or _resolve_dtype(dtype) == array.dtype):
            return data if isinstance(data, Tensor) else Tensor(data)
    return tensor(data, dtype=dtype, device=device)


def from_numpy(array) -> Tensor:
    """A tensor sharing ``array``'s memory (writes through either are seen by both), as ``torch.from_numpy``.

    Raises:
        TypeError: ``array`` is not a NumPy array, or its dtype is not numeric.
    """
    if not isinstance(array, np.ndarray):
        raise TypeError(f"from_numpy: expected np.ndarray, got {type(array).__name__}")
    if array.dtype.kind not in "biufc":
        raise TypeError(f"from_numpy: can't convert an array of dtype {array.dtype}; only numeric and bool "
                        "arrays are supported")
    return Tensor(array)


def _filled(fn, size, dtype, device, requires_grad, fill):
    device = backend.normalize_device(device)
    dtype = _resolve_dtype(dtype) or get_default_dtype()
    xp = backend.module_for_device(device)
    shape = _shape(size, fn)
    with backend.device_context(device):
        data = allocate(fn, shape, dtype, lambda: fill(xp, shape, dtype))
    return Tensor(data, requires_grad=requires_grad)


_MAX_BYTES = np.iinfo(np.intp).max


def allocate(fn: str, shape: tuple, dtype, make):
    """``make()``, the new array of ``shape`` and ``dtype``, with PyTorch's RuntimeError when it cannot exist.

    The sizes are looked at only when ``make`` fails, so a factory call pays nothing for the check.

    Raises:
        RuntimeError: the array would need more bytes than an address space
            holds, or the memory is not there (names ``fn``, the shape, dtype and size).
    """
    try:
        return make()
    except (MemoryError, ValueError, OverflowError) as error:  # NumPy's MemoryError subclass, CuPy's OutOfMemoryError
        nbytes = math.prod(shape) * np.dtype(dtype).itemsize  # Python ints: exact for any shape
        if nbytes > _MAX_BYTES or any(n > _MAX_BYTES for n in shape):
            raise RuntimeError(
                f"{fn}(): a tensor of shape {shape} and dtype {np.dtype(dtype)} would need {nbytes:.3e} bytes, more "
                "than any array can hold; check the sizes"
            ) from None
        if not isinstance(error, MemoryError):
            raise
        raise RuntimeError(
            f"{fn}(): cannot allocate {nbytes} bytes ({nbytes / 2**30:.1f} GiB) for a tensor of shape {shape} and "
            f"dtype {np.dtype(dtype)}: out of memory"
        ) from None


def zeros(*size, dtype=None, device=None, requires_grad=False) -> Tensor:
    """A tensor of zeros of shape ``size`` (``get_default_dtype()`` by default)."""
    return _filled("zeros", size, dtype, device, requires_grad, lambda xp, s, d: xp.zeros(s, d))


def ones(*size, dtype=None, device=None, requires_grad=False) -> Tensor:
    """A tensor of ones of shape ``size`` (``get_default_dtype()`` by default)."""
    return _filled("ones", size, dtype, device, requires_grad, lambda xp, s, d: xp.ones(s, d))


def empty(*size, dtype=None, device=None, requires_grad=False) -> Tensor:
    """An uninitialized tensor of shape ``size`` (``get_default_dtype()`` by default)."""
    return _filled("empty", size, dtype, device, requires_grad, lambda xp, s, d: xp.empty(s, d))


def full(size, fill_value, dtype=None, device=None, requires_grad=False) -> Tensor:
    """A tensor of shape ``size`` filled with ``fill_value``.

    Raises:
        TypeError: ``fill_value`` is not a number (bool, int, float or complex).
        RuntimeError: an integer ``dtype`` cannot hold ``fill_value`` (as PyTorch: 300 in uint8; -1
            wraps around to 255). A float dtype takes any float (1e6 in float16 is inf).
    """
    if not isinstance(fill_value, (bool, int, float, complex, np.number, np.bool_)):
        raise TypeError(f"full(): fill_value must be a number, got {type(fill_value).__name__}")
    if dtype is None and isinstance(fill_value, bool):
        dtype = np.bool_
    elif dtype is None and isinstance(fill_value, int):
        dtype = np.int64
    elif dtype is None and isinstance(fill_value, complex):
        dtype = _python_number_dtype(np.dtype(np.complex128))
    elif dtype is not None and _resolve_dtype(dtype).kind in "iu":
        fill_value = storable(fill_value, _resolve_dtype(dtype), "full")
    return _filled("full", (size,), dtype, device, requires_grad, lambda xp, s, d: xp.full(s, fill_value, d))


def zeros_like(t, dtype=None, requires_grad=False) -> Tensor:
    """Zeros with ``t``'s shape, dtype and device (TypeError unless ``t`` is a Tensor)."""
    _expect_tensor("zeros_like", t)
    return zeros(t.shape, dtype=dtype or t.dtype, device=t.device, requires_grad=requires_grad)


def ones_like(t, dtype=None, requires_grad=False) -> Tensor:
    """Ones with ``t``'s shape, dtype and device (TypeError unless ``t`` is a Tensor)."""
    _expect_tensor("ones_like", t)
    return ones(t.shape, dtype=dtype or t.dtype, device=t.device, requires_grad=requires_grad)


def full_like(t, fill_value, dtype=None, requires_grad=False) -> Tensor:
    """``fill_value`` everywhere, with ``t``'s shape, dtype and device (TypeError unless a Tensor)."""
    _expect_tensor("full_like", t)
    return full(t.shape, fill_value, dtype=dtype or t.dtype, device=t.device, requires_grad=requires_grad)


def randn(*size, dtype=None, device=None, requires_grad=False) -> Tensor:
    """Standard normal samples of shape ``size`` (``get_default_dtype()`` by default)."""
    return _float_samples("randn", "standard_normal", size, dtype, device, requires_grad)


def rand(*size, dtype=None, device=None, requires_grad=False) -> Tensor:
    """Uniform samples in [0, 1) of shape ``size`` (``get_default_dtype()`` by default)."""
    return _float_samples("rand", "random", size, dtype, device, requires_grad)


def _float_samples(fn: str, method: str, size, dtype, device, requires_grad) -> Tensor:
    """Floating samples from the device's generator's ``method`` (``standard_normal`` or ``random``)."""
    device = backend.normalize_device(device)
    dtype = _resolve_dtype(dtype) or get_default_dtype()
    _check_float(dtype, fn)
    shape = _shape(size, fn)
    draw = getattr(backend.generator(device), method)
    data = allocate(fn, shape, dtype, lambda: draw(shape, dtype=_draw_dtype(dtype)))
    return Tensor(data.astype(dtype, copy=False), requires_grad=requires_grad)


def randint(low, high=None, size=None, dtype=None, device=None) -> Tensor:
    """Integers uniform in [low, high) of shape ``size`` (int64 by default).

    As PyTorch's: ``randint(high, size)`` draws from [0, high).

    Raises:
        TypeError: ``low`` or ``high`` is not an int, or no ``size`` is given.
        RuntimeError: ``low >= high``, as PyTorch.
    """
    if size is None:
        if high is None or not isinstance(high, (tuple, list)):
            raise TypeError("randint(): give a size: randint(high, size) or randint(low, high, size)")
        low, high, size = 0, low, high
    for name, bound in (("low", low), ("high", high)):
        if not isinstance(bound, (int, np.integer)) or isinstance(bound, bool):
            raise TypeError(f"randint(): argument '{name}' must be an int, got {type(bound).__name__} {bound!r:.40}")
    if low >= high:
        raise RuntimeError(f"randint(): expects low < high, got low={low} and high={high}")
    device = backend.normalize_device(device)
    dtype = _resolve_dtype(dtype) or np.int64
    shape = _shape((size,), "randint")
    data = allocate("randint", shape, dtype, lambda: backend.generator(device).integers(low, high, shape, dtype=dtype))
    return Tensor(data)


def randperm(n, device=None) -> Tensor:
    """A random permutation of 0..n-1 (int64).

    Raises:
        TypeError: ``n`` is not an int. RuntimeError: ``n`` is negative, as PyTorch.
    """
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool):
        raise TypeError(f"randperm(): n must be an int, got {type(n).__name__}")
    if n < 0:
        raise RuntimeError(f"randperm(): n must be non-negative, got {n}")
    device = backend.normalize_device(device)
    return Tensor(backend.generator(device).permutation(n).astype(np.int64))


def arange(start, end=None, step=1, dtype=None, device=None, requires_grad=False) -> Tensor:
    """Values from ``start`` to ``end`` (exclusive) by ``step``; int64 for int arguments, else the default dtype.

    Raises:
        TypeError: a bound or the step is not a real number.
        RuntimeError: ``step`` is zero, a bound is not finite, or ``step`` points away from ``end``, as PyTorch.
    """
    if end is None:
        start, end = 0, start
    for name, value in (("start", start), ("end", end), ("step", step)):
        if not _is_real(value):
            raise TypeError(f"arange(): {name} must be a real number, got {type(value).__name__}")
        if not np.isfinite(value):
            raise RuntimeError(f"arange(): {name} must be finite, got {value}")
    if step == 0:
        raise RuntimeError("arange(): step must be nonzero")
    if (end - start) * step < 0:
        raise RuntimeError(f"arange(): upper bound and lower bound inconsistent with step sign "
                           f"(start={start}, end={end}, step={step})")
    if dtype is None:
        all_int = all(isinstance(v, (int, np.integer)) for v in (start, end, step))
        dtype = np.int64 if all_int else get_default_dtype()
    device = backend.normalize_device(device)
    xp = backend.module_for_device(device)
    with backend.device_context(device):
        data = xp.arange(start, end, step, dtype=_resolve_dtype(dtype))
    return Tensor(data, requires_grad=requires_grad)


def linspace(start, end, steps, dtype=None, device=None) -> Tensor:
    """``steps`` evenly spaced values from ``start`` to ``end`` inclusive (``get_default_dtype()`` by default).

    Raises:
        TypeError: ``start``/``end`` is not a real number or ``steps`` not an int.
        RuntimeError: ``steps`` is negative, as PyTorch.
    """
    for name, value in (("start", start), ("end", end)):
        if not _is_real(value):
            raise TypeError(f"linspace(): {name} must be a real number, got {type(value).__name__}")
    if not isinstance(steps, (int, np.integer)) or isinstance(steps, bool):
        raise TypeError(f"linspace(): steps must be an int, got {type(steps).__name__}")
    if steps < 0:
        raise RuntimeError(f"linspace(): number of steps must be non-negative, got {steps}")
    device = backend.normalize_device(device)
    xp = backend.module_for_device(device)
    with backend.device_context(device):
        data = xp.linspace(start, end, steps, dtype=_resolve_dtype(dtype) or get_default_dtype())
    return Tensor(data)


def _draw_dtype(dtype):
    """The dtype to draw random floats in: NumPy's and CuPy's generators make no float16, so it is drawn as float32."""
    return _FLOAT32 if dtype == _FLOAT16 else dtype


_FLOAT16, _FLOAT32 = np.dtype(np.float16), np.dtype(np.float32)


def _check_float(dtype, fn):
    """NotImplementedError (PyTorch's class: no integer or bool kernel) unless ``dtype`` is real floating."""
    if dtype.kind != "f":
        raise NotImplementedError(f"{fn}: expected a floating point dtype, got {dtype}")
