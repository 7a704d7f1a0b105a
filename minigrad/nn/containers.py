"""Dict and list containers: ``ModuleDict``, ``ParameterList``, ``ParameterDict``.

They hold their items in the owner's registries (``_modules`` for
``ModuleDict``; ``_parameters`` for the parameter containers, whose items
are attributes named by their index or key), so ``parameters()``,
``named_parameters()``, ``state_dict()`` (keys such as ``"heads.query.weight"``
or ``"params.0"``) and ``to()`` see them, as in PyTorch.

``Sequential`` and ``ModuleList`` live in ``minigrad.nn.layers``.

The parameter containers convert a plain Tensor to a ``Parameter`` when it
is stored, and keep other objects as plain attributes (shown as ``Object of
type: ...`` in the repr), as PyTorch's do.
"""

from __future__ import annotations

import operator
from collections import OrderedDict
from collections.abc import Iterable, Mapping

from minigrad.nn.module import Module
from minigrad.nn.parameter import Parameter
from minigrad.tensor import Tensor

__all__ = ["ModuleDict", "ParameterList", "ParameterDict"]


def _pairs(container: str, items):
    """``items`` (a mapping or an iterable of key/value pairs) as a list of pairs, with PyTorch's errors.

    Raises:
        TypeError: ``items`` is not iterable, or an element is not.
        ValueError: an element is not a pair.
    """
    if not isinstance(items, Iterable) or (isinstance(items, Tensor) and items.ndim == 0):
        raise TypeError(
            f"{container}.update should be called with an iterable of key/value pairs, but got "
            f"{type(items).__name__}"
        )
    if isinstance(items, Mapping | ModuleDict | ParameterDict):
        return list(items.items())
    pairs = []
    for j, item in enumerate(items):
        if not isinstance(item, Iterable) or (isinstance(item, Tensor) and item.ndim == 0):
            raise TypeError(f"{container} update sequence element #{j} should be Iterable; is{type(item).__name__}")
        item = tuple(item)
        if len(item) != 2:
            raise ValueError(f"{container} update sequence element #{j} has length {len(item)}; 2 is required")
        pairs.append(item)
    return pairs


class ModuleDict(Module):
    """An ordered dict of named sub-modules, registered as children (so their parameters are found).

    Built from a mapping (insertion order is kept) or an iterable of
    ``(name, module)`` pairs. Supports ``len``, iteration over the names,
    ``in``, ``d[name]``, ``d[name] = module``, ``del d[name]``, ``keys``,
    ``values``, ``items``, ``pop``, ``clear`` and ``update``. It has no
    ``forward``: look modules up in the owner's ``forward``.

    Raises:
        TypeError: a name is not a str, or a value is not a Module (from ``add_module``);
            ``update`` got something that is not an iterable of pairs.
        KeyError: a name is empty, contains ".", clashes with an attribute, or is missing (lookup).
        ValueError: an element of an update sequence is not a pair.
    """

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key: str) -> Module:
        return self._modules[key]

    def __setitem__(self, key: str, module: Module) -> None:
        self.add_module(key, module)

    def __delitem__(self, key: str) -> None:
        del self._modules[key]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules)

    def __contains__(self, key) -> bool:
        return key in self._modules

    def clear(self) -> None:
        """Remove every module."""
        self._modules.clear()

    def pop(self, key: str) -> Module:
        """Remove the module named ``key`` and return it (KeyError if there is none)."""
        module = self[key]
        del self[key]
        return module

    def keys(self):
        """The names, in order."""
        return self._modules.keys()

    def items(self):
        """The ``(name, module)`` pairs, in order."""
        return self._modules.items()

    def values(self):
        """The modules, in order."""
        return self._modules.values()

    def update(self, modules) -> None:
        """Add (or replace) the modules of a mapping or of an iterable of ``(name, module)`` pairs, in order."""
        for key, module in _pairs("ModuleDict", modules):
            self[key] = module


def _parameter_line(key, value, type_name) -> str:
    """One line of a parameter container's repr (``(0): Parameter containing: [torch.float32 of size 2x3]``)."""
    if not isinstance(value, Tensor):
        return f"  ({key}): Object of type: {type(value).__name__}"
    kind = "Parameter" if isinstance(value, Parameter) else "Tensor"
    size = "x".join(str(s) for s in value.shape)
    device = value.device
    where = f" ({device})" if device.type == "cuda" else ""
    return f"  ({key}): {kind} containing: [{type_name(value)} of size {size}{where}]"


def _store(module, name: str, value) -> None:
    """``setattr(module, name, value)``, except that a Parameter replacing a Parameter keeps its place in
    ``_parameters`` (and so in ``parameters()`` and ``state_dict()``), as in PyTorch."""
    if isinstance(value, Parameter) and module._parameters.get(name) is not None:
        module._parameters[name] = value
    else:
        setattr(module, name, value)


def _as_parameter(value):
    """A plain Tensor becomes a Parameter (sharing its array); anything else is kept as it is."""
    if isinstance(value, Tensor) and not isinstance(value, Parameter):
        return Parameter(value)
    return value


class ParameterList(Module):
    """A list of parameters, registered as attributes "0", "1", ... (so ``parameters()`` and
    ``state_dict()`` see them).

    A plain Tensor stored in it becomes a ``Parameter`` (sharing its data);
    other objects are kept as they are. Supports ``len``, iteration,
    indexing (a slice gives a new ParameterList holding the same
    parameters), assignment, ``append``, ``extend`` and ``+=``. It cannot be
    called.

    Raises:
        IndexError: an index out of range.
        TypeError: ``extend`` (or the constructor) got something that is not an iterable, or a Tensor.
        RuntimeError: the list is called.
    """

    def __init__(self, values=None):
        super().__init__()
        self._size = 0
        if values is not None:
            self += values

    def _key(self, idx) -> str:
        idx = operator.index(idx)
        if not -len(self) <= idx < len(self):
            raise IndexError(f"index {idx} is out of range")
        return str(idx % len(self))

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            out = type(self)()
            for i in range(*idx.indices(len(self))):
                out.append(self[i])
            return out
        return getattr(self, self._key(idx))

    def __setitem__(self, idx, value) -> None:
        _store(self, self._key(idx), _as_parameter(value))

    def __len__(self) -> int:
        return self._size

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    def __iadd__(self, values) -> ParameterList:
        return self.extend(values)

    def __dir__(self):
        return [name for name in super().__dir__() if not name.isdigit()]

    def append(self, value) -> ParameterList:
        """Add ``value`` at the end (a Tensor becomes a Parameter); returns self."""
        self._size += 1
        self[self._size - 1] = value
        return self

    def extend(self, values) -> ParameterList:
        """Append every item of the iterable ``values``; returns self.

        Raises:
            TypeError: ``values`` is not iterable, or is a Tensor.
        """
        if not isinstance(values, Iterable) or isinstance(values, Tensor):
            raise TypeError(f"ParameterList.extend should be called with an iterable, but got {type(values).__name__}")
        for value in values:
            self.append(value)
        return self

    def __call__(self, *args, **kwargs):
        raise RuntimeError("ParameterList should not be called.")

    def extra_repr(self) -> str:
        # PyTorch's format: the dtype as ``torch.float32`` (the strings of ``Tensor.type()`` are PyTorch's too).
        return "\n".join(_parameter_line(i, value, lambda t: f"torch.{t.dtype}") for i, value in enumerate(self))


class ParameterDict(Module):
    """An ordered dict of parameters keyed by strings, each registered as the attribute of its key.

    Built from an ``OrderedDict``, another ``ParameterDict`` or an iterable
    of ``(key, value)`` pairs (in their order), or from any other mapping
    (in sorted key order, as PyTorch does). A plain Tensor stored in it
    becomes a ``Parameter``; other objects are kept as they are. Supports the
    dict API: ``len``, iteration over keys, ``in``, ``reversed``, ``d[key]``,
    assignment, ``del``, ``keys``, ``values``, ``items``, ``get``,
    ``setdefault``, ``pop``, ``popitem``, ``clear``, ``update``, ``copy``,
    ``fromkeys`` and ``|``/``|=``. It cannot be called.

    Raises:
        TypeError: a key is not a str; ``update`` got something that is not an iterable of pairs.
        AttributeError: reading or popping a missing key (PyTorch's type: entries are attributes).
        KeyError: deleting a missing key, ``popitem`` on an empty dict.
        ValueError: an element of an update sequence is not a pair.
        RuntimeError: the dict is called.
    """

    def __init__(self, parameters=None):
        super().__init__()
        self._keys: dict = {}
        if parameters is not None:
            self.update(parameters)

    @staticmethod
    def _attr(key) -> str:
        if not isinstance(key, str):
            raise TypeError(
                "Index given to ParameterDict cannot be used as a key as it is not a string "
                f"(type is '{type(key).__name__}')."
            )
        return key

    def __getitem__(self, key):
        attr = self._attr(key)
        if attr not in self._keys:  # PyTorch's type: the entries are attributes
            raise AttributeError(f"'ParameterDict' object has no attribute '{key}' (no such key)")
        return getattr(self, attr)

    def __setitem__(self, key, value) -> None:
        attr = self._attr(key)
        _store(self, attr, _as_parameter(value))
        self._keys[key] = None

    def __delitem__(self, key) -> None:
        attr = self._attr(key)
        if attr not in self._keys:
            raise KeyError(key)
        del self._keys[key]
        delattr(self, attr)

    def __len__(self) -> int:
        return len(self._keys)

    def __iter__(self):
        return iter(self._keys)

    def __reversed__(self):
        return reversed(list(self._keys))

    def __contains__(self, key) -> bool:
        return key in self._keys

    def copy(self) -> ParameterDict:
        """A new ParameterDict holding the same parameters."""
        return ParameterDict(OrderedDict(self.items()))

    def setdefault(self, key, default=None):
        """``self[key]``, first setting it to ``default`` when missing."""
        if key not in self:
            self[key] = default
        return self[key]

    def clear(self) -> None:
        """Remove every entry."""
        for key in list(self._keys):
            del self[key]

    def pop(self, key):
        """Remove the entry ``key`` and return its value (AttributeError if there is none, as in PyTorch)."""
        value = self[key]
        del self[key]
        return value

    def popitem(self):
        """Remove the last entry and return it as ``(key, value)``.

        Raises:
            KeyError: the dict is empty.
        """
        if not self._keys:
            raise KeyError("popitem(): dictionary is empty")
        key = next(reversed(self._keys))
        return key, self.pop(key)

    def get(self, key, default=None):
        """``self[key]``, or ``default`` when missing."""
        return self[key] if key in self else default

    def fromkeys(self, keys, default=None) -> ParameterDict:
        """A new ParameterDict with every key of ``keys`` set to ``default``."""
        return ParameterDict((key, default) for key in keys)

    def keys(self):
        """The keys, in order."""
        return self._keys.keys()

    def items(self):
        """The ``(key, value)`` pairs, in order."""
        return ((key, self[key]) for key in self._keys)

    def values(self):
        """The values, in order."""
        return (self[key] for key in self._keys)

    def update(self, parameters) -> None:
        """Add (or replace) entries from a mapping or an iterable of ``(key, value)`` pairs.

        An ``OrderedDict``, a ``ParameterDict`` or a sequence gives its
        order; any other mapping is added in sorted key order, as in PyTorch.
        """
        ordered = isinstance(parameters, OrderedDict | ParameterDict) or not isinstance(parameters, Mapping)
        pairs = _pairs("ParameterDict", parameters)
        for key, value in pairs if ordered else sorted(pairs, key=operator.itemgetter(0)):
            self[key] = value

    def __or__(self, other) -> ParameterDict:
        out = self.copy()
        out.update(other)
        return out

    def __ror__(self, other) -> ParameterDict:
        out = ParameterDict(other)
        out.update(self)
        return out

    def __ior__(self, other) -> ParameterDict:
        self.update(other)
        return self

    def __call__(self, *args, **kwargs):
        raise RuntimeError("ParameterDict should not be called.")

    def extra_repr(self) -> str:
        return "\n".join(_parameter_line(key, value, Tensor.type) for key, value in self.items())
