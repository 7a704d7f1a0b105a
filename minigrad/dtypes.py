"""PyTorch's dtype names (``mg.float``, ``mg.long``, ``mg.cfloat``, ...), ``finfo``/``iinfo`` and ``is_floating_point``.

minigrad tensors hold NumPy or CuPy arrays, so a tensor's ``dtype`` is a
NumPy dtype, and so is every name here: ``mg.float`` *is*
``numpy.dtype("float32")``. NumPy keeps one instance per built-in dtype,
so ``t.dtype == mg.float``, ``t.dtype is mg.float32``,
``t.dtype in (mg.half, mg.float)`` and ``{mg.float32: ...}[t.dtype]`` all
work, as with PyTorch's dtypes; ``mg.dtype`` is ``numpy.dtype`` (for
``isinstance(t.dtype, mg.dtype)``).

Not here, because NumPy has no such dtype: ``bfloat16``, ``complex32``
(``chalf``), the float8 family and the quantized dtypes. PyTorch's dtype
attributes (``mg.float.is_floating_point``, ``.is_signed``) do not exist on
NumPy dtypes: use ``mg.is_floating_point(t)`` / ``t.is_floating_point()``,
or the dtype's ``kind`` and ``itemsize``.
"""

from __future__ import annotations

import builtins

import numpy as np

from minigrad.promotion import get_default_dtype
from minigrad.tensor import Tensor

__all__ = [
    "dtype", "float16", "half", "float32", "float", "float64", "double", "complex64", "cfloat", "complex128",
    "cdouble", "uint8", "int8", "int16", "short", "int32", "int", "int64", "long", "uint16", "uint32", "uint64",
    "bool", "finfo", "iinfo", "is_floating_point", "is_complex",
]

dtype = np.dtype

float16 = half = np.dtype(np.float16)
float32 = np.dtype(np.float32)
float = float32  # noqa: A001  (PyTorch's name: torch.float is float32)
float64 = double = np.dtype(np.float64)
complex64 = cfloat = np.dtype(np.complex64)
complex128 = cdouble = np.dtype(np.complex128)
uint8 = np.dtype(np.uint8)
int8 = np.dtype(np.int8)
int16 = short = np.dtype(np.int16)
int32 = np.dtype(np.int32)
int = int32  # noqa: A001  (PyTorch's name: torch.int is int32)
int64 = long = np.dtype(np.int64)
uint16 = np.dtype(np.uint16)
uint32 = np.dtype(np.uint32)
uint64 = np.dtype(np.uint64)
bool = np.dtype(np.bool_)  # noqa: A001  (PyTorch's name)
bool_ = bool


def _as_dtype(value, fn: str):
    try:
        return np.dtype(value)
    except TypeError:
        raise TypeError(f"{fn}(): expected a dtype such as mg.float32, got {value!r}") from None


def finfo(type=None):  # noqa: A002  (PyTorch's argument name)
    """Machine limits of a floating dtype (NumPy's ``finfo``): ``eps``, ``max``, ``min``, ``tiny``, ``bits``, ...

    Args:
        type: a floating or complex dtype (complex gives its real part's
            limits, as in PyTorch); default: ``get_default_dtype()``.

    Raises:
        TypeError: ``type`` is not a floating or complex dtype (use ``iinfo`` for integers).
    """
    resolved = get_default_dtype() if type is None else _as_dtype(type, "finfo")
    if resolved.kind not in "fc":
        raise TypeError(f"finfo() requires a floating point dtype, got {resolved}; use mg.iinfo for integer dtypes")
    return np.finfo(resolved)


def iinfo(type):  # noqa: A002  (PyTorch's argument name)
    """Machine limits of an integer dtype (NumPy's ``iinfo``): ``min``, ``max``, ``bits``, ``dtype``.

    Raises:
        TypeError: ``type`` is not an integer dtype (bool included, as in
            PyTorch; use ``finfo`` for floating dtypes).
    """
    resolved = _as_dtype(type, "iinfo")
    if resolved.kind not in "iu":
        raise TypeError(f"iinfo() requires an integer dtype, got {resolved}; use mg.finfo for floating dtypes")
    return np.iinfo(resolved)


def is_floating_point(input) -> builtins.bool:  # noqa: A002  (PyTorch's argument name)
    """True when ``input``'s dtype is a floating-point one (float16/32/64; complex is not).

    Raises:
        TypeError: ``input`` is not a Tensor.
    """
    return _tensor_dtype(input, "is_floating_point").kind == "f"


def is_complex(input) -> builtins.bool:  # noqa: A002  (PyTorch's argument name)
    """True when ``input``'s dtype is complex (complex64 or complex128).

    Raises:
        TypeError: ``input`` is not a Tensor.
    """
    return _tensor_dtype(input, "is_complex").kind == "c"


def _tensor_dtype(value, fn: str):
    if not isinstance(value, Tensor):
        raise TypeError(f"{fn}(): argument 'input' must be a Tensor, not {builtins.type(value).__name__}")
    return value.array.dtype
