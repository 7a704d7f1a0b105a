"""Collation: turning a list of samples into one batch (``torch.utils.data._utils.collate``).

``default_collate`` walks the structure of the first sample and builds the
same structure of batched tensors, with PyTorch's types:

=========================  =================================================
each sample holds          the batch holds
=========================  =================================================
Tensor                     the tensors stacked on a new first dimension
NumPy array                the same, as a Tensor of the array's dtype
NumPy scalar               a 1-D Tensor of its dtype
float                      a float64 Tensor
int (bool)                 an int64 (bool) Tensor, float32 if floats follow
str, bytes                 the list of them, unchanged
dict (any Mapping)         the same keys, each value collated
namedtuple                 the same namedtuple, each field collated
tuple                      a *list*, each position collated (as PyTorch)
list (other Sequence)      the same type, each position collated
=========================  =================================================

``default_convert`` is what a ``DataLoader`` with ``batch_size=None``
applies instead: NumPy arrays and scalars become tensors, the rest stays.

Extend the default by adding a type to ``default_collate_fn_map`` or by
calling ``collate(batch, collate_fn_map=...)`` with a map of your own; each
function there takes ``(batch, *, collate_fn_map)``.
"""

from __future__ import annotations

import collections.abc
import copy
import operator
import re

import numpy as np

from minigrad import backend, factory
from minigrad.ops.shape import stack
from minigrad.tensor import Tensor

# dtype.str of arrays that cannot become tensors: bytes, strings, unicode, objects.
_NON_NUMERIC_DTYPE = re.compile(r"[SaUO]")

_requires_grad = operator.attrgetter("requires_grad")
_data = operator.attrgetter("array")

_ERROR = "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}"


def default_convert(data):
    """Turn the NumPy arrays and scalars inside ``data`` into tensors, keeping the structure.

    Tensors stay as they are; mappings, namedtuples and sequences are
    rebuilt with converted members (a tuple becomes a list, as in PyTorch);
    arrays of strings or objects and everything else are returned unchanged.
    """
    if isinstance(data, Tensor):
        return data
    if isinstance(data, (np.ndarray, np.generic)) and not isinstance(data, (np.str_, np.bytes_)):
        if isinstance(data, np.ndarray) and _NON_NUMERIC_DTYPE.search(data.dtype.str):
            return data
        return factory.as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        return _rebuild_mapping(data, {key: default_convert(data[key]) for key in data})
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        return _rebuild_sequence(data, [default_convert(d) for d in data])
    return data


def _rebuild_mapping(template, values: dict):
    """A mapping like ``template`` (same type when it can be built) holding ``values``."""
    try:
        if isinstance(template, collections.abc.MutableMapping):
            clone = copy.copy(template)
            clone.update(values)
            return clone
        return type(template)(values)
    except TypeError:
        return values


def _rebuild_sequence(template, values: list):
    """A sequence like ``template`` (same type when it can be built) holding ``values``."""
    try:
        if isinstance(template, collections.abc.MutableSequence):
            clone = copy.copy(template)
            for i, value in enumerate(values):
                clone[i] = value
            return clone
        return type(template)(values)
    except TypeError:
        return values


def collate(batch, *, collate_fn_map=None):
    """Collate ``batch`` (a list of samples) by the structure of its first sample.

    Args:
        batch: a non-empty list (or tuple) of samples of the same structure.
        collate_fn_map: ``{type or tuple of types: fn(batch, *, collate_fn_map)}``
            for the leaves; the first sample's exact type is looked up first,
            then the keys in order with ``isinstance``.

    Raises:
        IndexError: ``batch`` is empty.
        RuntimeError: sequences of different lengths in one position.
        TypeError: a leaf type the map does not handle.
    """
    elem = batch[0]
    if collate_fn_map is not None:
        fn = collate_fn_map.get(type(elem))
        if fn is not None:
            return fn(batch, collate_fn_map=collate_fn_map)
        for leaf_type, fn in collate_fn_map.items():
            if isinstance(elem, leaf_type):
                return fn(batch, collate_fn_map=collate_fn_map)
    if isinstance(elem, collections.abc.Mapping):
        values = {key: collate([d[key] for d in batch], collate_fn_map=collate_fn_map) for key in elem}
        return _rebuild_mapping(elem, values)
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):
        return type(elem)(*(collate(column, collate_fn_map=collate_fn_map) for column in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        if len(set(map(len, batch))) != 1:
            raise RuntimeError(
                f"default_collate: each element in list of batch should be of equal size, got lengths "
                f"{[len(sample) for sample in batch]}"
            )
        # Each column is a tuple, passed on as is (strings come back as that tuple, as in PyTorch).
        columns = [collate(column, collate_fn_map=collate_fn_map) for column in zip(*batch)]
        if isinstance(elem, tuple):
            return columns
        return _rebuild_sequence(elem, columns)
    raise TypeError(_ERROR.format(type(elem)))


def collate_tensor_fn(batch, *, collate_fn_map=None):
    """Stack tensors of one shape on a new first dimension (recorded for autograd when one requires grad).

    Raises:
        RuntimeError: the shapes differ, or the tensors live on different devices.
        TypeError: a sample after the first is not a Tensor (names it).
    """
    try:
        if any(map(_requires_grad, batch)):
            _check_shapes([t.shape for t in batch], "tensor")
            return stack(list(batch), 0)
        arrays = list(map(_data, batch))
    except AttributeError as error:
        _check_tensors(batch, error)
        raise
    if type(arrays[0]) is np.ndarray:
        try:
            # np.array stacks equal shapes in one C pass (faster than np.stack); it raises on the rest.
            return Tensor(np.array(arrays))
        except (ValueError, TypeError):
            return _stack_checked(arrays)
    return _stack_checked(arrays)


def _check_tensors(batch, error) -> None:
    """TypeError naming the first sample that is not a Tensor, in a batch that starts with a Tensor."""
    for i, value in enumerate(batch):
        if not isinstance(value, Tensor):
            raise TypeError(f"default_collate: the batch starts with tensors but entry {i} is "
                            f"{type(value).__name__} ({value!r:.40})") from error


def _stack_checked(arrays):
    """Stack with errors that name the devices or the first shape that differ."""
    xp = backend.get_array_module(*arrays)
    _check_shapes([a.shape for a in arrays], "tensor")
    return Tensor(xp.stack(arrays))


def collate_numpy_array_fn(batch, *, collate_fn_map=None):
    """Stack NumPy arrays into one Tensor of their dtype.

    Raises:
        TypeError: the arrays hold strings, bytes or objects.
        RuntimeError: the shapes differ.
    """
    dtype = batch[0].dtype
    if _NON_NUMERIC_DTYPE.search(dtype.str):
        raise TypeError(_ERROR.format(dtype))
    _check_shapes([a.shape for a in batch], "array")
    return Tensor(np.array(batch))  # a plain ndarray even from memmaps


def _check_shapes(shapes, what):
    """RuntimeError naming the first entry whose shape differs from entry 0's."""
    for i, shape in enumerate(shapes):
        if shape != shapes[0]:
            raise RuntimeError(
                f"default_collate: stack expects each {what} to be equal size, but got {list(shapes[0])} at "
                f"entry 0 and {list(shape)} at entry {i}"
            )


def collate_numpy_scalar_fn(batch, *, collate_fn_map=None):
    """NumPy scalars to a 1-D Tensor of their dtype."""
    return factory.as_tensor(np.asarray(batch))


def collate_float_fn(batch, *, collate_fn_map=None):
    """Python floats to a float64 Tensor.

    Raises:
        TypeError: a sample after the first is not a number (names it).
    """
    try:
        return factory.tensor(batch, dtype=np.float64)
    except (TypeError, ValueError) as error:
        _check_numbers(batch, error)
        raise


def collate_int_fn(batch, *, collate_fn_map=None):
    """Python ints to an int64 Tensor (bools to bool, float32 when floats follow: ``mg.tensor``'s rules).

    Raises:
        TypeError: a sample after the first is a string, bytes or a sequence (names it).
        RuntimeError: a sample is None or another object (``mg.tensor``'s error, as PyTorch's).
    """
    try:
        return factory.tensor(batch)
    except (TypeError, ValueError) as error:
        _check_numbers(batch, error)
        raise


def _check_numbers(batch, error) -> None:
    """TypeError naming the first sample that is not a number, in a batch that starts with numbers."""
    for i, value in enumerate(batch):
        if not isinstance(value, (int, float, np.number, np.bool_)):
            raise TypeError(f"default_collate: the batch starts with numbers but entry {i} is "
                            f"{type(value).__name__} ({value!r:.40})") from error


def collate_str_fn(batch, *, collate_fn_map=None):
    """Strings and bytes stay a list."""
    return batch


default_collate_fn_map = {
    Tensor: collate_tensor_fn,
    np.ndarray: collate_numpy_array_fn,
    (np.bool_, np.number, np.object_): collate_numpy_scalar_fn,
    float: collate_float_fn,
    int: collate_int_fn,
    str: collate_str_fn,
    bytes: collate_str_fn,
}


def default_collate(batch):
    """Collate a list of samples into a batch with PyTorch's default rules (see the module docstring).

    ``default_collate([(x0, 0), (x1, 1)]) == [stack([x0, x1]), tensor([0, 1])]``.

    Raises:
        IndexError: ``batch`` is empty.
        RuntimeError: tensors or arrays of different shapes, or sequences of
            different lengths, in one position.
        TypeError: a sample holds something other than tensors, NumPy
            arrays, numbers, strings, mappings or sequences (None, objects).
    """
    return collate(batch, collate_fn_map=default_collate_fn_map)
