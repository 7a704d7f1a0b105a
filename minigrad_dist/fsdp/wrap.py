"""Auto-wrap policies: which submodules become FSDP units of their own (``torch.distributed.fsdp.wrap``).

A policy is called as ``policy(module=..., recurse=..., nonwrapped_numel=...)``:

* with ``recurse=True`` it answers whether to look inside ``module`` for
  units (its children are visited first, bottom-up);
* with ``recurse=False`` whether ``module`` itself becomes a unit, given
  ``nonwrapped_numel``, the number of its parameters not already in a unit
  below it.

``auto_wrap`` applies a policy to a module's descendants (the root is
wrapped by the caller), replacing each chosen child in its parent, in place,
by ``wrap_fn(child)``.
"""

from __future__ import annotations

from minigrad.nn import Module, ModuleDict, ModuleList


class ModuleWrapPolicy:
    """Wrap every submodule whose type is one of ``module_classes`` (``{nn.Linear}``, a Transformer block...).

    Args:
        module_classes: an iterable of ``Module`` subclasses.

    Raises:
        TypeError: an entry is not a ``Module`` subclass.
    """

    def __init__(self, module_classes):
        classes = tuple(module_classes)
        bad = [c for c in classes if not (isinstance(c, type) and issubclass(c, Module))]
        if bad:
            raise TypeError(f"ModuleWrapPolicy: expected Module subclasses, got {bad!r}")
        self.module_classes = classes

    def __call__(self, module, recurse: bool, nonwrapped_numel: int) -> bool:
        return True if recurse else isinstance(module, self.module_classes)

    def __repr__(self):
        return f"ModuleWrapPolicy({{{', '.join(c.__name__ for c in self.module_classes)}}})"


def size_based_auto_wrap_policy(module, recurse: bool, nonwrapped_numel: int, min_num_params: int = int(1e8),
                                force_leaf_modules=None, exclude_wrap_modules=None) -> bool:
    """Wrap a submodule once it holds at least ``min_num_params`` parameters not yet in a unit.

    Use it as ``functools.partial(size_based_auto_wrap_policy, min_num_params=...)``.
    It recurses only into modules that large (and not of a ``force_leaf_modules``
    type), and never wraps containers of type ``exclude_wrap_modules`` (default
    ``ModuleList`` and ``ModuleDict``, which have no forward).
    """
    force_leaf_modules = () if force_leaf_modules is None else tuple(force_leaf_modules)
    exclude_wrap_modules = (ModuleList, ModuleDict) if exclude_wrap_modules is None else tuple(exclude_wrap_modules)
    is_large = nonwrapped_numel >= min_num_params
    if recurse:
        return is_large and not isinstance(module, force_leaf_modules)
    return is_large and not isinstance(module, exclude_wrap_modules)


def auto_wrap(module, policy, wrap_fn, is_unit) -> int:
    """Wrap ``module``'s descendants chosen by ``policy`` with ``wrap_fn``, bottom-up; returns its unwrapped numel.

    ``is_unit(m)`` tells modules that are units already (they are left alone).
    Children are replaced in their parent's registry in place, so the order
    of ``Sequential`` layers is kept.
    """
    remaining = sum(p.numel() for p in module._parameters.values() if p is not None)
    for name, child in list(module._modules.items()):
        if child is None or is_unit(child):
            continue
        child_total = sum(p.numel() for p in _unwrapped_params(child, is_unit))
        if policy(module=child, recurse=True, nonwrapped_numel=child_total):
            child_total = auto_wrap(child, policy, wrap_fn, is_unit)
        if policy(module=child, recurse=False, nonwrapped_numel=child_total):
            module._modules[name] = wrap_fn(child)
        else:
            remaining += child_total
    return remaining


def _unwrapped_params(module, is_unit):
    stack = [module]
    while stack:
        m = stack.pop()
        if m is not module and is_unit(m):
            continue
        yield from (p for p in m._parameters.values() if p is not None)
        stack.extend(c for c in m._modules.values() if c is not None)
