"""PyTorch's legacy tensor types: ``mg.FloatTensor(...)``, ``isinstance(t, mg.LongTensor)``, ``t.type()``.

Old PyTorch code names tensors by type (``torch.FloatTensor``,
``torch.cuda.LongTensor``) instead of by dtype and device. minigrad has one
``Tensor`` class; each legacy type here is a stand-in for "a Tensor of this
dtype on this kind of device":

* calling it makes such a Tensor: ``mg.FloatTensor([1, 2])`` from data,
  ``mg.FloatTensor(2, 3)`` from sizes, ``mg.FloatTensor(t)`` as an alias of
  a Tensor that already has the dtype;
* ``isinstance(t, mg.FloatTensor)`` is true for float32 Tensors on the CPU
  (``mg.cuda.FloatTensor`` for CUDA ones); as in PyTorch, the legacy types
  are not subclasses of ``Tensor``;
* ``t.type()`` gives PyTorch's name of a tensor's type (``"torch.FloatTensor"``,
  ``"torch.cuda.LongTensor"``: PyTorch's exact strings, for code that
  compares them), and ``t.type(name_or_dtype_or_legacy_type)`` converts.

Where minigrad differs from PyTorch:

* a tensor made from sizes is filled with zeros (PyTorch leaves it
  uninitialized, so no correct program reads those values);
* a tuple of ints is data (as in PyTorch), and so is a minigrad shape, which
  is a plain tuple: ``mg.FloatTensor(t.shape)`` gives the shape's values
  where ``torch.FloatTensor(t.shape)`` (a ``torch.Size``) gives that shape;
  write ``mg.FloatTensor(*t.shape)``;
* there is no ``BFloat16Tensor`` (NumPy has no bfloat16).
"""

from __future__ import annotations

import numpy as np

from minigrad import backend, dtypes
from minigrad import factory as _factory
from minigrad.device import device as _device
from minigrad.promotion import get_default_dtype
from minigrad.tensor import Tensor

__all__ = [
    "FloatTensor", "DoubleTensor", "HalfTensor", "LongTensor", "IntTensor", "ShortTensor", "CharTensor",
    "ByteTensor", "BoolTensor", "CUDA_TYPES", "type_name", "tensor_type",
]

# dtype -> the name PyTorch gives tensors of that dtype (after "torch." or "torch.cuda.").
_NAMES = {
    dtypes.float32: "FloatTensor",
    dtypes.float64: "DoubleTensor",
    dtypes.float16: "HalfTensor",
    dtypes.int64: "LongTensor",
    dtypes.int32: "IntTensor",
    dtypes.int16: "ShortTensor",
    dtypes.int8: "CharTensor",
    dtypes.uint8: "ByteTensor",
    dtypes.bool: "BoolTensor",
    dtypes.complex64: "ComplexFloatTensor",
    dtypes.complex128: "ComplexDoubleTensor",
    dtypes.uint16: "UInt16Tensor",
    dtypes.uint32: "UInt32Tensor",
    dtypes.uint64: "UInt64Tensor",
}
_DTYPES = {name: dtype for dtype, name in _NAMES.items()}
_PREFIXES = (("torch.cuda.", True), ("minigrad.cuda.", True), ("torch.", False), ("minigrad.", False))


def type_name(dtype, cuda: bool) -> str:
    """PyTorch's name for tensors of ``dtype`` on the CPU or a CUDA device: ``"torch.cuda.FloatTensor"``."""
    return ("torch.cuda." if cuda else "torch.") + _NAMES[np.dtype(dtype)]


def _parse_name(name: str) -> tuple:
    """``(dtype, cuda)`` for a type name such as ``"torch.LongTensor"`` or ``"torch.cuda.FloatTensor"``."""
    for prefix, cuda in _PREFIXES:
        if name.startswith(prefix):
            dtype = _DTYPES.get(name[len(prefix):])
            if dtype is not None:
                return dtype, cuda
            break
    hint = " (NumPy has no bfloat16)" if "BFloat16" in name else ""
    raise ValueError(f"type(): invalid type {name!r}{hint}; expected a name such as 'torch.FloatTensor', "
                     "'torch.cuda.LongTensor', a dtype or a legacy type such as mg.DoubleTensor")


def tensor_type(t: Tensor, dtype=None, non_blocking: bool = False):
    """``Tensor.type``: the type name of ``t``, or ``t`` converted to a type (see the module docstring).

    Args:
        dtype: None (return the name), a type name (``"torch.DoubleTensor"``:
            dtype and device kind), a legacy type (``mg.LongTensor``), or a
            dtype (the device is kept). ``mg.Tensor`` means the default dtype
            on the CPU.
        non_blocking: accepted for PyTorch's signature; minigrad's copies
            between devices are synchronous either way.

    Returns:
        the name, or ``t`` itself when it already has that type, or a
        converted copy (differentiable, like ``t.to``).

    Raises:
        ValueError: an unknown type name.
        TypeError: ``dtype`` is neither a name, a legacy type nor a dtype.
        RuntimeError: a CUDA type was asked for and CUDA is not available.
    """
    if dtype is None:
        return type_name(t.array.dtype, t.is_cuda)
    cuda = None  # keep the device
    if isinstance(dtype, _device):
        raise TypeError(f"type(): expected a type name, a legacy tensor type or a dtype, got the device {dtype!r}; "
                        "use .to(device) to move a tensor")
    if isinstance(dtype, str):
        dtype, cuda = _parse_name(dtype)
    elif isinstance(dtype, LegacyTensorType):
        dtype, cuda = dtype.dtype, dtype.is_cuda
    elif dtype is Tensor:
        dtype, cuda = get_default_dtype(), False
    else:
        try:
            dtype = np.dtype(dtype)
        except TypeError:
            raise TypeError(f"type(): dtype must be a type name, a legacy tensor type or a dtype, "
                            f"got {type(dtype).__name__}") from None
    result = t
    if cuda is not None and cuda != t.is_cuda:
        result = result.to("cuda" if cuda else "cpu")
    return result.to(dtype)


class LegacyTensorType(type):
    """The metaclass of ``mg.FloatTensor`` and co: calling one makes a Tensor, ``isinstance`` checks the dtype.

    Class attributes of each legacy type: ``dtype`` and ``is_cuda``.
    """

    dtype: np.dtype
    is_cuda: bool

    def __instancecheck__(cls, obj) -> bool:
        return isinstance(obj, Tensor) and obj.array.dtype == cls.dtype and obj.is_cuda == cls.is_cuda

    def __call__(cls, *args, device=None, size=None, data=None) -> Tensor:
        """A Tensor of this type: ``T()`` (empty), ``T(*sizes)``, ``T(data)`` or ``T(tensor)`` (an alias).

        Args:
            args: nothing; ints (the shape; the tensor is filled with zeros);
                one list, tuple or array (the data, converted to this dtype);
                or one Tensor of this dtype and device kind (returned as an
                alias sharing its memory, with autograd history).
            device: a device of this type's kind (``"cpu"``; ``"cuda:1"`` for
                ``mg.cuda`` types, default the current CUDA device).
            size, data: keyword forms of the shape and the data.

        Raises:
            TypeError: the arguments match none of the forms (a float, a mix
                of ints and other values, a Tensor of another dtype), or a
                CUDA type is used where CUDA is not available.
            RuntimeError: a size is negative, or ``device`` is of the other kind.
        """
        name = f"{cls.__module__}.{cls.__name__}"
        if size is not None or data is not None:
            if args or (size is not None and data is not None):
                raise TypeError(f"{name}(): pass the sizes or the data once: positionally, or as size= or data=")
            if data is not None:
                args = (data,)
            else:
                if not isinstance(size, (tuple, list)) or not _all_ints(size):
                    raise TypeError(f"{name}(): size must be a tuple of ints, got {size!r}")
                return cls._from_sizes(tuple(size), cls._target_device(device), name)
        target = cls._target_device(device)
        if not args:
            return _factory.zeros(0, dtype=cls.dtype, device=target)
        if _all_ints(args):
            return cls._from_sizes(args, target, name)
        if len(args) == 1:
            (value,) = args
            if isinstance(value, Tensor):
                return cls._alias(value, name)
            if isinstance(value, (list, tuple)) or backend.is_array(value):
                return _factory.tensor(value, dtype=cls.dtype, device=target)
            raise TypeError(f"{name}(): data must be a sequence (got {type(value).__name__})")
        kinds = ", ".join(type(a).__name__ for a in args)
        raise TypeError(f"{name}(): expected sizes (ints) or one sequence of data, got ({kinds})")

    def _from_sizes(cls, sizes, target, name: str) -> Tensor:
        if any(n < 0 for n in sizes):
            raise RuntimeError(f"{name}(): trying to create a tensor with a negative dimension: {list(sizes)}")
        return _factory.zeros(*(int(n) for n in sizes), dtype=cls.dtype, device=target)

    def _target_device(cls, device):
        """The device a tensor of this type is made on, given the constructor's ``device``."""
        name = f"{cls.__module__}.{cls.__name__}"
        if cls.is_cuda and not backend.cuda_is_available():
            raise TypeError(f"type {name} not available: {backend.cuda_unavailable_reason()}")
        kind = "cuda" if cls.is_cuda else "cpu"
        if device is None:
            return kind
        wanted = _device(device)
        if wanted.type != kind:
            raise RuntimeError(f"{name}(): this legacy constructor makes {kind} tensors, but device "
                               f"{str(wanted)!r} was passed")
        return wanted if cls.is_cuda else "cpu"

    def _alias(cls, other: Tensor, name: str) -> Tensor:
        if other.array.dtype != cls.dtype or other.is_cuda != cls.is_cuda:
            raise TypeError(f"{name}(): expected a tensor of type {name}, got {other.type()}; "
                            f"convert it with .type({name!r}) or .to(dtype)")
        return other[...]


def _all_ints(values) -> bool:
    return all(isinstance(n, (int, np.integer)) and not isinstance(n, (bool, np.bool_)) for n in values)


def _legacy_type(name: str, dtype, cuda: bool) -> LegacyTensorType:
    where = "a CUDA device" if cuda else "the CPU"
    doc = (f"Legacy type of {np.dtype(dtype)} tensors on {where}: ``{name}(*sizes)``, ``{name}(data)``, "
           f"``isinstance(t, {name})``; see ``minigrad.legacy_tensors``.")
    module = "minigrad.cuda" if cuda else "minigrad"
    return LegacyTensorType(name, (), {"dtype": np.dtype(dtype), "is_cuda": cuda, "__module__": module,
                                       "__doc__": doc})


_CLASSES = (
    ("FloatTensor", dtypes.float32), ("DoubleTensor", dtypes.float64), ("HalfTensor", dtypes.float16),
    ("LongTensor", dtypes.int64), ("IntTensor", dtypes.int32), ("ShortTensor", dtypes.int16),
    ("CharTensor", dtypes.int8), ("ByteTensor", dtypes.uint8), ("BoolTensor", dtypes.bool),
)

FloatTensor, DoubleTensor, HalfTensor, LongTensor, IntTensor, ShortTensor, CharTensor, ByteTensor, BoolTensor = (
    _legacy_type(name, dtype, False) for name, dtype in _CLASSES
)
# The mg.cuda.* types, by name (minigrad.cuda exports them).
CUDA_TYPES = {name: _legacy_type(name, dtype, True) for name, dtype in _CLASSES}
