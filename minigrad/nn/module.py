"""``Module``: the base class of layers and models, with PyTorch's API.

A module owns three ordered registries, filled by attribute assignment:

- ``_parameters``: ``Parameter`` attributes (``self.weight = Parameter(...)``),
- ``_buffers``: tensors registered with ``register_buffer`` (running
  statistics, masks): saved in ``state_dict`` but not trained,
- ``_modules``: sub-module attributes (``self.fc = Linear(...)``).

Everything recursive (``parameters()``, ``state_dict()``, ``to()``, ...)
walks these registries in registration order, so names and orders match
PyTorch's for the same model definition (``"encoder.0.weight"``).

Attribute reads of registered names go through ``__getattr__`` (only called
when normal lookup fails), exactly like PyTorch, so the registries are the
single source of truth.
"""

from __future__ import annotations

import itertools
from collections import OrderedDict
from typing import NamedTuple

import numpy as np

from minigrad import backend
from minigrad.grad_mode import no_grad
from minigrad.nn.buffer import Buffer
from minigrad.nn.parameter import Parameter
from minigrad.tensor import Tensor

_hook_ids = itertools.count()


class RemovableHandle:
    """Returned by hook registration; ``remove()`` unregisters the hook.

    Also a context manager that removes the hook on exit.
    """

    def __init__(self, hooks: dict, *flag_sets: set):
        self.id = next(_hook_ids)
        self._hooks = hooks
        self._flag_sets = flag_sets

    def remove(self) -> None:
        """Unregister the hook (no error if it was already removed)."""
        self._hooks.pop(self.id, None)
        for flags in self._flag_sets:
            flags.discard(self.id)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()
        return False


class IncompatibleKeys(NamedTuple):
    """What ``load_state_dict`` could not match: keys the model expects but did not
    get (``missing_keys``) and keys it got but has no place for (``unexpected_keys``)."""

    missing_keys: list
    unexpected_keys: list

    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return f"IncompatibleKeys(missing_keys={self.missing_keys}, unexpected_keys={self.unexpected_keys})"


class Module:
    """Base class for all neural-network modules.

    Subclasses call ``super().__init__()`` first, assign parameters, buffers
    and sub-modules as attributes, and define ``forward``. Call the module
    (``model(x)``), not ``forward``, so that forward hooks run.

    Example::

        class MLP(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc1 = nn.Linear(4, 8)
                self.fc2 = nn.Linear(8, 1)

            def forward(self, x):
                return self.fc2(F.relu(self.fc1(x)))

    Not reproduced from PyTorch: backward hooks on modules, global module
    hooks, state-dict hooks, ``_version`` metadata in ``state_dict``.
    """

    training: bool

    def __init__(self):
        # object.__setattr__: our __setattr__ needs these dicts to exist.
        setattr_ = object.__setattr__
        setattr_(self, "training", True)
        setattr_(self, "_parameters", {})
        setattr_(self, "_buffers", {})
        setattr_(self, "_non_persistent_buffers_set", set())
        setattr_(self, "_modules", {})
        setattr_(self, "_forward_pre_hooks", {})
        setattr_(self, "_forward_pre_hooks_with_kwargs", set())
        setattr_(self, "_forward_hooks", {})
        setattr_(self, "_forward_hooks_with_kwargs", set())
        setattr_(self, "_forward_hooks_always_called", set())

    # -- calling ---------------------------------------------------------------

    def forward(self, *args, **kwargs):
        """The computation of this module; every subclass defines it.

        Raises:
            NotImplementedError: the subclass did not define ``forward``.
        """
        raise NotImplementedError(
            f'Module [{type(self).__name__}] is missing the required "forward" function'
        )

    def __call__(self, *args, **kwargs):
        if self._forward_pre_hooks or self._forward_hooks:
            return self._call_with_hooks(args, kwargs)
        return self.forward(*args, **kwargs)

    def _call_with_hooks(self, args, kwargs):
        for hook_id, hook in list(self._forward_pre_hooks.items()):
            if hook_id in self._forward_pre_hooks_with_kwargs:
                result = hook(self, args, kwargs)
                if result is not None:
                    if not (isinstance(result, tuple) and len(result) == 2):
                        raise RuntimeError(
                            "forward pre-hook must return None or a tuple of (new_args, new_kwargs), "
                            f"but got {result!r}"
                        )
                    args, kwargs = result
            else:
                result = hook(self, args)
                if result is not None:
                    args = result if isinstance(result, tuple) else (result,)
        try:
            output = self.forward(*args, **kwargs)
        except BaseException:
            for hook_id, hook in list(self._forward_hooks.items()):
                if hook_id in self._forward_hooks_always_called:
                    self._run_forward_hook(hook_id, hook, args, kwargs, None)
            raise
        for hook_id, hook in list(self._forward_hooks.items()):
            result = self._run_forward_hook(hook_id, hook, args, kwargs, output)
            if result is not None:
                output = result
        return output

    def _run_forward_hook(self, hook_id, hook, args, kwargs, output):
        if hook_id in self._forward_hooks_with_kwargs:
            return hook(self, args, kwargs, output)
        return hook(self, args, output)

    def register_forward_pre_hook(self, hook, *, prepend=False, with_kwargs=False) -> RemovableHandle:
        """Run ``hook`` before every ``forward`` call.

        The hook is called as ``hook(module, args)`` and may return a new
        ``args`` (a tuple, or a single value that is wrapped in one) or None.
        With ``with_kwargs=True`` it is called as ``hook(module, args, kwargs)``
        and may return ``(new_args, new_kwargs)`` or None. ``prepend=True`` runs
        it before the hooks already registered.

        Returns:
            a handle whose ``remove()`` unregisters the hook.
        """
        handle = RemovableHandle(self._forward_pre_hooks, self._forward_pre_hooks_with_kwargs)
        _insert_hook(self._forward_pre_hooks, handle.id, hook, prepend)
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs.add(handle.id)
        return handle

    def register_forward_hook(
        self, hook, *, prepend=False, with_kwargs=False, always_call=False
    ) -> RemovableHandle:
        """Run ``hook`` after every ``forward`` call.

        The hook is called as ``hook(module, args, output)`` (or
        ``hook(module, args, kwargs, output)`` with ``with_kwargs=True``); a
        non-None return value replaces the output. ``prepend=True`` runs it
        before the hooks already registered; ``always_call=True`` runs it (with
        ``output=None``) even when ``forward`` raised.

        Returns:
            a handle whose ``remove()`` unregisters the hook.
        """
        handle = RemovableHandle(
            self._forward_hooks, self._forward_hooks_with_kwargs, self._forward_hooks_always_called
        )
        _insert_hook(self._forward_hooks, handle.id, hook, prepend)
        if with_kwargs:
            self._forward_hooks_with_kwargs.add(handle.id)
        if always_call:
            self._forward_hooks_always_called.add(handle.id)
        return handle

    # -- registration ----------------------------------------------------------

    def register_parameter(self, name: str, param) -> None:
        """Register ``param`` (a ``Parameter`` or None) under ``name``.

        Raises:
            TypeError: ``name`` is not a str, or ``param`` is neither a Parameter nor None.
            KeyError: ``name`` is empty, contains ".", or is already a non-parameter attribute.
        """
        self._check_new_name(name, "parameter", self._parameters)
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(
                f"cannot assign {_type_name(param)} object to parameter '{name}' "
                "(minigrad.nn.Parameter or None required)"
            )
        if param is not None and param.grad_fn is not None:
            raise ValueError(
                f"cannot assign non-leaf Tensor to parameter '{name}'. Model parameters must be "
                "created explicitly; to express '{name}' as a function of another Tensor, "
                "compute the value in the forward() method."
            )
        self._parameters[name] = param

    def register_buffer(self, name: str, tensor, persistent: bool = True) -> None:
        """Register ``tensor`` (a Tensor or None) as a buffer named ``name``.

        Buffers are state that is not trained (running statistics, masks).
        They move with ``to()``, and persistent ones are saved in ``state_dict``.

        Raises:
            TypeError: ``name`` is not a str, or ``tensor`` is neither a Tensor nor None.
            KeyError: ``name`` is empty, contains ".", or is already another attribute.
        """
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        self._check_new_name(name, "buffer", self._buffers)
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(
                f"cannot assign {_type_name(tensor)} object to buffer '{name}' (Tensor or None required)"
            )
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def add_module(self, name: str, module) -> None:
        """Register ``module`` (a Module or None) as a child named ``name``.

        Raises:
            TypeError: ``name`` is not a str, or ``module`` is not a Module or None.
            KeyError: ``name`` is empty, contains ".", or is already another attribute.
        """
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{_type_name(module)} is not a Module subclass")
        self._check_new_name(name, "module", self._modules)
        self._modules[name] = module

    register_module = add_module

    def _check_new_name(self, name, kind, registry):
        if "_parameters" not in self.__dict__:
            raise AttributeError(f"cannot assign {kind} before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"{kind} name should be a string, got {type(name).__name__}")
        if name == "":
            raise KeyError(f'{kind} name can\'t be empty string ""')
        if "." in name:
            raise KeyError(f'{kind} name can\'t contain ".", got {name!r}')
        if hasattr(self, name) and name not in registry:
            raise KeyError(f"attribute '{name}' already exists")

    def __setattr__(self, name, value):
        params = self.__dict__.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            self._forget(name, keep=self._parameters)  # a re-assigned parameter keeps its place in the order
            self.register_parameter(name, value)
            return
        if params is not None and name in params:
            _clear_slot(params, name, value, "parameter", "minigrad.nn.Parameter")
            return
        modules = self.__dict__.get("_modules")
        if isinstance(value, Module):
            if modules is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            self._forget(name, keep=modules)  # a re-assigned child keeps its place (Sequential runs in this order)
            modules[name] = value
            return
        if modules is not None and name in modules:
            _clear_slot(modules, name, value, "child module", "minigrad.nn.Module")
            return
        if isinstance(value, Buffer):  # nn.Buffer: register_buffer with the buffer's persistence
            self.register_buffer(name, value, persistent=value.persistent)
            return
        buffers = self.__dict__.get("_buffers")
        if buffers is not None and name in buffers:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(
                    f"cannot assign {_type_name(value)} as buffer '{name}' (Tensor or None expected)"
                )
            buffers[name] = value
            return
        object.__setattr__(self, name, value)

    def _forget(self, name, keep=None):
        """Drop ``name`` from every place an attribute can live but ``keep`` (the dict it is re-registered in)."""
        self.__dict__.pop(name, None)
        for registry in (self._parameters, self._buffers, self._modules):
            if registry is not keep:
                registry.pop(name, None)
        self._non_persistent_buffers_set.discard(name)

    def __getattr__(self, name):
        # Only reached when normal lookup fails. Read __dict__ directly: during
        # unpickling or copying the registries may not exist yet.
        d = self.__dict__
        for registry in ("_parameters", "_buffers", "_modules"):
            values = d.get(registry)
            if values is not None and name in values:
                return values[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name):
        if name in self._parameters:
            del self._parameters[name]
        elif name in self._buffers:
            del self._buffers[name]
            self._non_persistent_buffers_set.discard(name)
        elif name in self._modules:
            del self._modules[name]
        else:
            object.__delattr__(self, name)

    def __dir__(self):
        names = list(super().__dir__())
        names += list(self._parameters) + list(self._buffers) + list(self._modules)
        return sorted(set(n for n in names if not n[0].isdigit()))

    # -- traversal -------------------------------------------------------------

    def named_modules(self, memo=None, prefix: str = "", remove_duplicate: bool = True):
        """Yield ``(name, module)`` for this module and all descendants, depth first.

        This module comes first with name ``prefix``; a module reachable by
        several paths is yielded once unless ``remove_duplicate=False``.
        ``memo`` is a set of modules to skip (filled with the ones yielded).
        """
        if memo is None:
            memo = set()
        stack = [(prefix, self)]
        while stack:
            name, module = stack.pop()
            if remove_duplicate:
                if module in memo:
                    continue
                memo.add(module)
            yield name, module
            children = [
                (name + ("." if name else "") + child_name, child)
                for child_name, child in module._modules.items()
                if child is not None
            ]
            stack.extend(reversed(children))

    def modules(self):
        """Yield this module and all its descendants (each once)."""
        for _, module in self.named_modules():
            yield module

    def named_children(self):
        """Yield ``(name, module)`` for the direct children (each once)."""
        seen = set()
        for name, module in self._modules.items():
            if module is not None and id(module) not in seen:
                seen.add(id(module))
                yield name, module

    def children(self):
        """Yield the direct child modules (each once)."""
        for _, module in self.named_children():
            yield module

    def _named_members(self, registry, prefix, recurse, remove_duplicate):
        if recurse:
            modules = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate)
        else:
            modules = [(prefix, self)]
        seen = set()
        for module_prefix, module in modules:
            for name, value in getattr(module, registry).items():
                if value is None:
                    continue
                if remove_duplicate:
                    if id(value) in seen:
                        continue
                    seen.add(id(value))
                yield module_prefix + ("." if module_prefix else "") + name, value

    def named_parameters(self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True):
        """Yield ``(name, parameter)`` in registration order, sub-modules included.

        Names are dotted paths (``"layers.0.weight"``). A parameter shared by
        several modules is yielded once unless ``remove_duplicate=False``.
        """
        return self._named_members("_parameters", prefix, recurse, remove_duplicate)

    def parameters(self, recurse: bool = True):
        """Yield the parameters in registration order (each once)."""
        for _, param in self.named_parameters(recurse=recurse):
            yield param

    def named_buffers(self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True):
        """Yield ``(name, buffer)`` in registration order, sub-modules included."""
        return self._named_members("_buffers", prefix, recurse, remove_duplicate)

    def buffers(self, recurse: bool = True):
        """Yield the buffers in registration order (each once)."""
        for _, buf in self.named_buffers(recurse=recurse):
            yield buf

    def get_submodule(self, target: str) -> Module:
        """The descendant at dotted path ``target`` (``""`` is this module).

        Raises:
            TypeError: ``target`` is not a string.
            AttributeError: some component of the path is not a sub-module.
        """
        if not isinstance(target, str):
            raise TypeError(f"get_submodule: target must be a dotted path string, got {type(target).__name__}")
        module = self
        if target == "":
            return module
        for part in target.split("."):
            child = module._modules.get(part)
            if child is None:
                raise AttributeError(f"{type(module).__name__} has no submodule `{part}` (in {target!r})")
            module = child
        return module

    def get_parameter(self, target: str) -> Parameter:
        """The parameter at dotted path ``target`` (``"fc.weight"``).

        Raises:
            AttributeError: the path does not name a parameter.
        """
        module_path, _, name = target.rpartition(".")
        module = self.get_submodule(module_path)
        param = module._parameters.get(name)
        if param is None:
            raise AttributeError(f"{type(module).__name__} has no parameter `{name}` (in {target!r})")
        return param

    def apply(self, fn) -> Module:
        """Call ``fn(m)`` on every sub-module (children first) and on this module; returns self."""
        for child in self.children():
            child.apply(fn)
        fn(self)
        return self

    # -- modes -----------------------------------------------------------------

    def train(self, mode: bool = True) -> Module:
        """Set training mode (``mode=True``) or evaluation mode on this module and all descendants.

        Raises:
            ValueError: ``mode`` is not a bool.
        """
        if not isinstance(mode, bool):
            raise ValueError(f"training mode is expected to be boolean, got {type(mode).__name__}")
        for module in self.modules():
            object.__setattr__(module, "training", mode)
        return self

    def eval(self) -> Module:
        """Set evaluation mode (same as ``train(False)``); returns self."""
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        """Set ``requires_grad`` of every parameter; returns self."""
        for param in self.parameters():
            param.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients of all parameters.

        With ``set_to_none=True`` (the default) ``.grad`` becomes None;
        otherwise it is zeroed (see ``reset_grad``).
        """
        for param in self.parameters():
            reset_grad(param, set_to_none)

    # -- moving and casting ----------------------------------------------------

    def to(self, *args, device=None, dtype=None, non_blocking=False) -> Module:
        """Move parameters and buffers to ``device`` and/or cast the floating ones to ``dtype``.

        Accepts ``m.to("cuda:0")``, ``m.to(mg.float64)``, ``m.to("cpu", mg.float32)``; a trailing
        ``non_blocking`` flag (positional or keyword) is accepted and ignored (copies are synchronous).
        Parameters keep their identity (their ``.array`` and ``.grad`` are
        replaced), so optimizers built before the call keep working; buffers
        are replaced by new tensors. Modifies the module in place and returns it.

        Raises:
            ValueError/RuntimeError: the device name is invalid or unavailable.
            TypeError: ``dtype`` is not a floating dtype; more than one device, dtype or flag, or more
                than three positional arguments.
        """
        if len(args) > 3:
            raise TypeError(f"Module.to takes at most 3 positional arguments (device, dtype, non_blocking), "
                            f"got {len(args)}")
        given = set()
        for arg in args:
            if isinstance(arg, bool):
                kind = "non_blocking"
            elif isinstance(arg, (str, int)):
                kind, device = "device", arg
            else:
                kind, dtype = "dtype", arg
            if kind in given:
                raise TypeError(f"Module.to: got more than one {kind} among the positional arguments {args!r}")
            given.add(kind)
        if device is not None:
            device = backend.normalize_device(device)
        if dtype is not None:
            try:
                dtype = np.dtype(dtype)
            except TypeError:
                raise TypeError(f"Module.to: {dtype!r} is neither a device nor a dtype") from None
            if dtype.kind not in "fc":
                raise TypeError(
                    f"Module.to only accepts floating point dtypes, but got desired dtype={dtype}"
                )

        def convert(array):
            if device is not None:
                array = backend.to_device(array, device)
            if dtype is not None and array.dtype.kind in "fc" and array.dtype != dtype:
                array = array.astype(dtype)
            return array

        return self._apply(convert)

    def _apply(self, fn) -> Module:
        """Replace every parameter's/gradient's array and every buffer by ``fn(array)``."""
        for module in self.modules():
            for param in module._parameters.values():
                if param is None:
                    continue
                param.array = fn(param.array)
                if param.grad is not None:
                    param.grad = Tensor(fn(param.grad.array))
            for name, buf in module._buffers.items():
                if buf is not None:
                    new = Tensor(fn(buf.array))
                    if buf.requires_grad and new.dtype.kind in "fc":
                        new.requires_grad_(True)
                    module._buffers[name] = new
        return self

    def cpu(self) -> Module:
        """Move everything to the CPU; returns self."""
        return self.to("cpu")

    def cuda(self, device=None) -> Module:
        """Move everything to a CUDA device (default: the current one); returns self."""
        return self.to("cuda" if device is None else backend.normalize_device(device))

    def float(self) -> Module:
        """Cast floating parameters and buffers to float32; returns self."""
        return self.to(dtype=np.float32)

    def double(self) -> Module:
        """Cast floating parameters and buffers to float64; returns self."""
        return self.to(dtype=np.float64)

    def half(self) -> Module:
        """Cast floating parameters and buffers to float16; returns self."""
        return self.to(dtype=np.float16)

    # -- state dict ------------------------------------------------------------

    def state_dict(self, destination=None, prefix: str = "", keep_vars: bool = False):
        """An ordered dict from dotted names to the parameters and persistent buffers.

        Values share memory with the module (they are detached tensors, or the
        parameters themselves with ``keep_vars=True``), as in PyTorch: save or
        copy them before training on.
        """
        if destination is None:
            destination = OrderedDict()
        # Without de-duplication, like PyTorch: a module reachable by two paths
        # (tied layers) appears under both names.
        for module_prefix, module in self.named_modules(remove_duplicate=False):
            module._save_to_state_dict(
                destination, prefix + (module_prefix + "." if module_prefix else ""), keep_vars
            )
        return destination

    def _save_to_state_dict(self, destination, prefix, keep_vars) -> None:
        """Put this module's own parameters and persistent buffers into ``destination``."""
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if keep_vars else param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if keep_vars else buf.detach()

    def load_state_dict(self, state_dict, strict: bool = True, assign: bool = False) -> IncompatibleKeys:
        """Copy parameters and buffers from ``state_dict`` into this module and its descendants.

        Values may be Tensors or NumPy/CuPy arrays; they are copied into the
        existing arrays (cast to their dtype and device). With ``assign=True``
        parameters and buffers are replaced by the given values instead.

        Args:
            state_dict: a mapping like the one ``state_dict()`` returns.
            strict: require the keys to match exactly.

        Returns:
            ``IncompatibleKeys(missing_keys, unexpected_keys)``.

        Raises:
            RuntimeError: a shape mismatch or a value that is not an array
                (always), or missing/unexpected keys (with ``strict``); the
                message lists every problem, naming the keys.
        """
        if not hasattr(state_dict, "keys") or not hasattr(state_dict, "items"):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict).__name__}.")
        missing, unexpected, errors = [], [], []
        with no_grad():
            for module_prefix, module in self.named_modules(remove_duplicate=False):
                # Keys are always collected; ``strict`` only decides whether they are errors.
                module._load_from_state_dict(
                    state_dict, module_prefix + "." if module_prefix else "", True,
                    missing, unexpected, errors, assign,
                )
        if strict:
            if unexpected:
                errors.insert(0, "Unexpected key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in unexpected)))
            if missing:
                errors.insert(0, "Missing key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in missing)))
        if errors:
            details = "\n\t".join(errors)
            raise RuntimeError(f"Error(s) in loading state_dict for {type(self).__name__}:\n\t{details}")
        return IncompatibleKeys(missing, unexpected)

    def _load_from_state_dict(
        self, state_dict, prefix, strict, missing_keys, unexpected_keys, error_msgs, assign=False
    ) -> None:
        """Load this module's own entries of ``state_dict`` (keys under ``prefix``).

        Appends to ``missing_keys``/``unexpected_keys`` (the latter only with
        ``strict``) and ``error_msgs`` instead of raising; ``load_state_dict``
        reports them all at once.
        """
        persistent_buffers = {
            k: v for k, v in self._buffers.items() if k not in self._non_persistent_buffers_set
        }
        local = {**{k: v for k, v in self._parameters.items() if v is not None},
                 **{k: v for k, v in persistent_buffers.items() if v is not None}}
        for name, target in local.items():
            key = prefix + name
            if key not in state_dict:
                missing_keys.append(key)
                continue
            error = _copy_into(self, name, target, state_dict[key], key, assign)
            if error:
                error_msgs.append(error)
        if strict:
            self._collect_unexpected(state_dict, prefix, local, unexpected_keys)

    def _collect_unexpected(self, state_dict, prefix, local, unexpected_keys):
        for key in state_dict.keys():
            if not isinstance(key, str) or not key.startswith(prefix):
                continue
            parts = key[len(prefix):].split(".", 1)
            known = self._modules if len(parts) > 1 else local
            if parts[0] not in known:
                unexpected_keys.append(key)

    # -- printing --------------------------------------------------------------

    def extra_repr(self) -> str:
        """Extra text shown inside this module's repr (layers override it)."""
        return ""

    def _get_name(self) -> str:
        return type(self).__name__

    def __repr__(self):
        lines = []
        extra = self.extra_repr()
        if extra:
            lines = extra.split("\n")
        for name, module in self._modules.items():
            child = repr(module).replace("\n", "\n  ")
            lines.append(f"({name}): {child}")
        if not lines:
            return f"{self._get_name()}()"
        if len(lines) == 1 and not self._modules:
            return f"{self._get_name()}({lines[0]})"
        return self._get_name() + "(\n  " + "\n  ".join(lines) + "\n)"


def reset_grad(tensor: Tensor, set_to_none: bool = True) -> None:
    """Set ``tensor.grad`` to None, or to zeros.

    Zeros are written in place (keeping the gradient tensor, as PyTorch does)
    when its array is writeable; a read-only gradient (the engine may store
    a broadcast view) is replaced by a new zero array.
    """
    grad = tensor.grad
    if grad is None:
        return
    if set_to_none:
        tensor.grad = None
        return
    grad.detach_()
    data = grad.array
    if backend.is_writeable(data):
        data[...] = 0
    else:
        xp = backend.get_array_module(data)
        with backend.device_context(backend.device_of(data)):
            grad.array = xp.zeros(data.shape, dtype=data.dtype)


def _copy_into(module, name, target, value, key, assign):
    """Copy ``value`` into parameter/buffer ``target``; return an error message or None."""
    if isinstance(value, Tensor):
        array = value.array
    elif backend.is_array(value):
        array = value
    else:
        return (
            f'While copying the parameter named "{key}", expected a Tensor or array from the '
            f"checkpoint but received {type(value).__name__}"
        )
    if tuple(array.shape) != tuple(target.shape):
        return (
            f"size mismatch for {key}: copying a param with shape {tuple(array.shape)} from "
            f"checkpoint, the shape in current model is {tuple(target.shape)}."
        )
    if assign:
        _assign(module, name, target, array)
    else:
        target.array[...] = backend.to_device(array, target.device)
    return None


def _assign(module, name, target, array):
    if isinstance(target, Parameter):
        module._parameters[name] = Parameter(array, requires_grad=target.requires_grad)
    else:
        module._buffers[name] = Tensor(array)


def _insert_hook(hooks, hook_id, hook, prepend):
    hooks[hook_id] = hook
    if prepend:
        items = list(hooks.items())
        hooks.clear()
        hooks[hook_id] = hook
        hooks.update(items)


def _clear_slot(slots: dict, name: str, value, kind: str, expected: str) -> None:
    """``slots[name] = None``: only None may replace a registered parameter or child module (TypeError otherwise)."""
    if value is not None:
        raise TypeError(f"cannot assign {_type_name(value)} as {kind} '{name}' ({expected} or None expected)")
    slots[name] = None


def _type_name(obj) -> str:
    return f"'{type(obj).__module__}.{type(obj).__name__}'"
