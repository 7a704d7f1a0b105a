"""PyTorch's type promotion: the dtype in which ``a op b`` is computed.

NumPy and PyTorch agree when both operands have one dtype, and disagree on
mixed ones: NumPy keeps precision (``float32 + int64`` is float64), PyTorch
keeps the tensor's dtype unless a *category* is crossed. minigrad follows
PyTorch. The rules, in the order ``result_type`` applies them:

1. Every dtype has a category: bool < integer < floating < complex.
2. Every operand falls into one of three groups: dimensioned tensors
   (``ndim >= 1``), zero-dimensional tensors, and scalars (Python and NumPy
   numbers). A scalar counts only by its category: a Python ``int`` is int64,
   a ``float`` the default dtype (``get_default_dtype()``, float32), a
   ``complex`` the matching complex dtype (complex64).
3. Within a group, dtypes combine with ``promote_types``: the higher category
   wins outright (``int64`` with ``float16`` is float16); within a category the
   wider dtype wins (``uint8`` with ``int8`` is int16, as in NumPy).
4. The groups combine from the lowest priority up (scalars, then 0-d tensors,
   then dimensioned tensors): the higher-priority group's dtype stands unless
   the lower one has a higher category, whose dtype then wins; a floating
   dtype meeting a lower-priority complex one becomes complex of its own
   precision (``float64`` tensor + ``1j`` is complex128).

::

    float32[3] + int64[3]          -> float32   (category of the tensor with dims wins)
    float32[3] + float64[] (0-d)   -> float32   (same category: dims win)
    int32[3]   + float64[] (0-d)   -> float64   (higher category: the 0-d dtype)
    int32[3]   + 2.5               -> float32   (higher category: the default dtype)
    int8[3]    + 1000              -> int8      (the int wraps around, like PyTorch)
    float16[3] + 1j                -> complex64 (PyTorch: complex32, which NumPy lacks)

Arrays given as operands count as tensors of their dtype and shape.

Where minigrad differs from PyTorch:

* there is no complex32: where PyTorch gives it (float16 with a complex
  scalar), minigrad gives complex64;
* NumPy scalars count as the Python scalar of their category. PyTorch reads
  ``np.bool_`` as a float and drops the imaginary part of ``np.complex64``
  (argument-parsing accidents, not promotion rules); minigrad does not;
* for now, a NumPy scalar given to an operator (``t * np.float64(2.5)``)
  counts as a 0-d tensor: ops receive it as ``FunctionNode.__call__`` passes
  it on, and cannot tell it from the data of a 0-d Tensor (see
  ``_pair_result``). This differs from PyTorch only when the scalar's
  category is above every tensor's: an int64 tensor times ``np.float64(2.5)``
  is float64, not float32. ``result_type``, ``where`` and ``clamp`` follow
  PyTorch.

The default dtype lives here and only here: ``get_default_dtype()`` (read at
each call; the caches below are keyed on it).
"""

from __future__ import annotations

import numpy as np

from minigrad.tensor import Tensor

__all__ = ["get_default_dtype", "set_default_dtype", "promote_types", "result_type", "promote_operands"]

_default_dtype = np.dtype(np.float32)


def get_default_dtype() -> np.dtype:
    """The dtype of Python floats in tensors and promotion (float32 unless ``set_default_dtype`` changed it)."""
    return _default_dtype


_DEFAULT_DTYPE_CHOICES = tuple(np.dtype(t) for t in (np.float16, np.float32, np.float64))


def set_default_dtype(d) -> None:
    """Make ``d`` the dtype of Python floats, like ``torch.set_default_dtype``.

    It is the dtype of ``mg.tensor([1.5])``, of ``zeros``/``randn``/``arange``
    of floats and the other factories given no ``dtype``, of new layers'
    parameters, and of Python floats in type promotion (an int64 tensor plus
    ``2.5``, ``int / int``); the complex default follows it (complex128 for
    float64). It is a process-wide setting, as in PyTorch.

    Args:
        d: a floating dtype: ``mg.float32``, ``mg.float64`` or ``mg.float16``
            (PyTorch also takes bfloat16, which NumPy lacks).

    Raises:
        TypeError: ``d`` is not one of those (an integer, complex or bool
            dtype, NumPy's longdouble, None, or not a dtype at all).
    """
    global _default_dtype
    try:
        dtype = None if d is None else np.dtype(d)
    except TypeError:
        dtype = None
    if dtype is None or dtype not in _DEFAULT_DTYPE_CHOICES:
        raise TypeError(
            f"set_default_dtype(): only floating-point types are supported as the default type, got {d!r}; "
            "use mg.float32, mg.float64 or mg.float16"
        )
    _default_dtype = dtype


# -- categories and the promotion lattice -------------------------------------------------------

_BOOL, _INTEGER, _FLOATING, _COMPLEX = range(4)
_CATEGORY_OF_KIND = {"b": _BOOL, "u": _INTEGER, "i": _INTEGER, "f": _FLOATING, "c": _COMPLEX}
# PyTorch promotes these unsigned dtypes only with themselves and with floating dtypes.
_LIMITED_UNSIGNED = frozenset(np.dtype(t) for t in (np.uint16, np.uint32, np.uint64))
_INT64 = np.dtype(np.int64)
_BOOL_DTYPE = np.dtype(np.bool_)

_promoted: dict = {}  # (dtype, dtype) -> dtype, filled by promote_types


def _category(dtype: np.dtype) -> int:
    try:
        return _CATEGORY_OF_KIND[dtype.kind]
    except KeyError:
        raise TypeError(f"type promotion: dtype {dtype} is not numeric (bool, integer, floating or complex)") from None


def _complex_of(dtype: np.dtype) -> np.dtype:
    """The complex dtype with ``dtype``'s precision (complex64 for float16: NumPy has no complex32)."""
    return np.result_type(dtype, np.complex64)


def promote_types(type1, type2) -> np.dtype:
    """The dtype that two tensors of ``type1`` and ``type2`` (of equal standing) combine into.

    Like ``torch.promote_types``: the higher category (bool < integer <
    floating < complex) wins, so ``int64`` with ``float16`` is float16; within
    a category the wider dtype wins (``uint8`` with ``int8`` is int16), and a
    floating dtype with a complex one gives complex of the wider precision
    (``float64`` with ``complex64`` is complex128).

    Args:
        type1, type2: anything ``numpy.dtype`` accepts (``mg.float32``, ``"int8"``, a dtype).

    Returns:
        a NumPy dtype.

    Raises:
        TypeError: a dtype is not numeric, or it is uint16/uint32/uint64 paired
            with another non-floating dtype (PyTorch does not promote those).
    """
    try:
        return _promoted[type1, type2]
    except (KeyError, TypeError):  # TypeError: an unhashable argument
        pass
    d1, d2 = np.dtype(type1), np.dtype(type2)
    c1, c2 = _category(d1), _category(d2)
    if d1 != d2 and (d1 in _LIMITED_UNSIGNED or d2 in _LIMITED_UNSIGNED) and _FLOATING not in (c1, c2):
        raise TypeError(
            f"promote_types: promotion of {d1} with {d2} is not supported (as in PyTorch, uint16, uint32 "
            "and uint64 combine only with themselves and floating dtypes); convert one with .to(dtype)"
        )
    if c1 == c2 or {c1, c2} == {_FLOATING, _COMPLEX}:
        result = np.promote_types(d1, d2)
    else:
        result = d1 if c1 > c2 else d2
    try:
        _promoted[type1, type2] = result
    except TypeError:
        pass
    return result


def _join(higher, lower):
    """The dtype of a higher-priority group (``higher``) joined by a lower-priority one (``lower``).

    Either may be None (an empty group). The lower group matters only when
    its category is above the higher group's (rule 4 of the module docstring).
    """
    if higher is None:
        return lower
    if lower is None:
        return higher
    high, low = _category(higher), _category(lower)
    if low <= high:
        return higher
    if low == _COMPLEX:
        return _complex_of(higher) if high == _FLOATING else lower
    return promote_types(higher, lower)  # the lower group's dtype, or an error for uint16 and the like


# -- operands ---------------------------------------------------------------------------------

_DIMENSIONED, _ZERO_DIM, _SCALAR = range(3)


def _scalar_dtype(value) -> np.dtype:
    """The dtype a Python or NumPy scalar stands for (rule 2)."""
    if isinstance(value, (bool, np.bool_)):
        return _BOOL_DTYPE
    if isinstance(value, (int, np.integer)):
        return _INT64
    if isinstance(value, (float, np.floating)):
        return get_default_dtype()
    if isinstance(value, (complex, np.complexfloating)):
        return _complex_of(get_default_dtype())
    raise TypeError(
        f"type promotion: expected Tensors, arrays or numbers, got {type(value).__name__} {value!r:.40}"
    )


def _group_and_dtype(operand) -> tuple:
    """(group, dtype) of an operand: a Tensor, an array (NumPy or CuPy) or a number."""
    if isinstance(operand, Tensor):
        operand = operand.array
        if isinstance(operand, np.generic):  # some Tensors hold a NumPy scalar: still a 0-d tensor
            return _ZERO_DIM, operand.dtype
    elif isinstance(operand, np.generic):
        return _SCALAR, _scalar_dtype(operand)
    dtype = getattr(operand, "dtype", None)
    if dtype is None or not hasattr(operand, "ndim"):
        return _SCALAR, _scalar_dtype(operand)
    _category(dtype)
    return (_DIMENSIONED if operand.ndim else _ZERO_DIM), dtype


def result_type(*operands) -> np.dtype:
    """The dtype of an arithmetic op on ``operands``, following ``torch.result_type``.

    Args:
        operands: minigrad Tensors, NumPy/CuPy arrays (counted as tensors),
            Python numbers and NumPy scalars (counted by category only).

    Returns:
        a NumPy dtype. See the module docstring for the rules, e.g.
        ``result_type(float32 tensor, int64 tensor)`` is float32 and
        ``result_type(int64 tensor, 2.5)`` is ``get_default_dtype()``.

    Raises:
        TypeError: no operands, an operand that is neither a Tensor, an array
            nor a number, a non-numeric dtype, or dtypes ``promote_types`` rejects.
    """
    if not operands:
        raise TypeError("result_type() needs at least one operand")
    groups = [None, None, None]
    for operand in operands:
        group, dtype = _group_and_dtype(operand)
        current = groups[group]
        groups[group] = dtype if current is None else promote_types(current, dtype)
    return _join(groups[_DIMENSIONED], _join(groups[_ZERO_DIM], groups[_SCALAR]))


# -- casting the operands of an op ---------------------------------------------------------------

_ndarray = np.ndarray
_pair_results: dict = {}  # (key of a, key of b, default dtype) -> result dtype; see _pair_result


def _key(x):
    """What the promotion of an operand depends on: its dtype and whether it has dims, or its type."""
    dtype = getattr(x, "dtype", None)
    if dtype is None:
        return type(x)
    return dtype, x.ndim != 0


def _as_zero_dim(x):
    """A NumPy scalar as a 0-d array (it is the data of a 0-d Tensor); anything else as it is."""
    return np.asarray(x) if isinstance(x, np.generic) else x


def _pair_result(a, b) -> np.dtype:
    """``result_type(a, b)`` for the raw operands of an op, cached by operand kind.

    An op cannot tell a NumPy scalar given by the user from the data of a 0-d
    Tensor (NumPy reductions of 0-d arrays give scalars, and some Tensors hold
    them), so here NumPy scalars count as 0-d tensors. The public entry
    points (``where``, ``clamp``, ``result_type``) see the user's values and
    count them as Python numbers.
    """
    key = (_key(a), _key(b), _default_dtype)
    dtype = _pair_results.get(key)
    if dtype is None:
        dtype = _pair_results[key] = result_type(_as_zero_dim(a), _as_zero_dim(b))
    return dtype


def _scalar_as(value, dtype: np.dtype):
    """``value`` as a NumPy scalar of ``dtype``; integers out of range wrap around, as in PyTorch."""
    try:
        return dtype.type(value)
    except OverflowError:
        return np.asarray(value).astype(dtype)[()]


def _convert(x, dtype: np.dtype, other_is_array: bool):
    """One raw operand made to take part in ``dtype`` arithmetic under NumPy's rules.

    Arrays and NumPy scalars are cast. Python floats, complexes and bools
    beside an array stay as they are (NumPy then treats them as weak, like
    PyTorch); integers meet an integer dtype as a NumPy scalar of it, so that
    out-of-range values wrap.
    """
    if hasattr(x, "dtype"):
        return x if x.dtype == dtype else x.astype(dtype)
    if other_is_array and (dtype.kind in "fcb" or type(x) is not int):
        return x
    return _scalar_as(x, dtype)


def _dtype_of(x):
    return getattr(x, "dtype", None)


def promote_operands(a, b, true_divide: bool = False):
    """Make NumPy compute ``a op b`` in PyTorch's result dtype; for the ops' forwards.

    Args:
        a, b: the raw operands of a binary op: arrays, NumPy scalars (taken
            as 0-d tensors, see ``_pair_result``) or Python numbers.
        true_divide: the op is ``/``: an integer or bool result dtype becomes
            the default dtype (``int / int`` is float32, as in PyTorch).

    Returns:
        None when NumPy computes in the right dtype already (one dtype on both
        sides, or a floating array with a Python int or float: the hot path,
        kept to a few type checks). Otherwise ``(a, b, input_dtypes)``: the
        operands converted (see ``_convert``) and the original dtypes of the
        array operands (None for Python numbers), which the backward casts
        each input's gradient back to.

    Raises:
        TypeError: as ``result_type``.
    """
    if type(a) is _ndarray:
        if type(b) is _ndarray:
            if a.dtype is b.dtype and (not true_divide or a.dtype.kind in "fc"):
                return None
        elif (type(b) is float or type(b) is int) and a.dtype.kind in "fc":
            return None
    elif type(b) is _ndarray and (type(a) is float or type(a) is int) and b.dtype.kind in "fc":
        return None
    return _promote(a, b, true_divide)


def _promote(a, b, true_divide):
    """The general case of ``promote_operands``."""
    dtype = _pair_result(a, b)
    if true_divide and dtype.kind in "biu":
        dtype = get_default_dtype()
    a_is_array, b_is_array = _dtype_of(a) is not None, _dtype_of(b) is not None
    return (
        _convert(a, dtype, b_is_array),
        _convert(b, dtype, a_is_array),
        (_dtype_of(a), _dtype_of(b)),
    )
