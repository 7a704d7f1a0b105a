"""``fully_shard``: FSDP2's in-place front to the same algorithm (``torch.distributed.fsdp.fully_shard``).

``fully_shard(module)`` turns ``module`` itself into an FSDP unit instead of
returning a wrapper, so the usual FSDP2 recipe works unchanged::

    for layer in model.layers:
        fully_shard(layer)
    fully_shard(model)
    optimizer = minigrad.optim.Adam(model.parameters())

How, in three steps:

1. A new object of the module's class takes over the module's contents
   (its ``__dict__``: parameters, children, buffers, hooks).
2. The module's class becomes ``FSDP<Class>``, a subclass of both
   ``FullyShardedDataParallel`` and the original class (made once per
   class), so ``isinstance(module, Class)`` still holds, as in PyTorch.
3. ``FullyShardedDataParallel.__init__`` runs on the module, with the new
   object as the wrapped module. Everything else (flat shards, hooks,
   prefetch, state dicts) is ``FullyShardedDataParallel``'s.

Differences from PyTorch's FSDP2: shards are one flat parameter per unit
(FSDP1's layout), not one DTensor per parameter, so ``parameters()`` yields
``..._flat_param`` shards; ``state_dict()`` is the full one by default
(``FullyShardedDataParallel.state_dict_type`` selects the sharded one); and
the group is a ``process_group``, not a device mesh.
"""

from __future__ import annotations

from minigrad.nn.module import Module
from minigrad_dist.fsdp.fully_sharded import FullyShardedDataParallel
from minigrad_dist.fsdp.wrap import auto_wrap

_CLASSES = {}


def fully_shard(module, *, process_group=None, reshard_after_forward: bool = True, mp_policy=None,
                sync_module_states: bool = False):
    """Make ``module`` an FSDP unit in place; returns ``module`` (now also a ``FullyShardedDataParallel``).

    Call it on the submodules that should be units of their own first, then
    on the root. Collective: every rank calls it on the same modules in the
    same order.

    Args:
        module: the module to shard.
        process_group: the group to shard over (default: the world).
        reshard_after_forward: as ``FullyShardedDataParallel``'s.
        mp_policy: a ``MixedPrecisionPolicy``, or None.
        sync_module_states: broadcast rank 0's values before sharding.

    Raises:
        TypeError: ``module`` is not a Module.
        ValueError: ``module`` is already sharded (and the errors of
            ``FullyShardedDataParallel``).
    """
    if not isinstance(module, Module):
        raise TypeError(f"fully_shard: module must be a minigrad.nn.Module, got {type(module).__name__}")
    if isinstance(module, FullyShardedDataParallel):
        raise ValueError("fully_shard: the module is already sharded; call fully_shard once per module")
    cls = type(module)
    contents = cls.__new__(cls)
    contents.__dict__.update(module.__dict__)
    saved = dict(module.__dict__)
    module.__dict__.clear()
    module.__class__ = _sharded_class(cls)
    try:
        FullyShardedDataParallel.__init__(module, contents, process_group=process_group,
                                          reshard_after_forward=reshard_after_forward, mixed_precision=mp_policy,
                                          sync_module_states=sync_module_states)
    except BaseException:
        module.__class__ = cls  # leave the module as it was
        module.__dict__.clear()
        module.__dict__.update(saved)
        raise
    return module


def apply_wrap_policy(module, policy, **fully_shard_kwargs):
    """``fully_shard`` the submodules ``policy`` chooses (bottom-up), then ``module``; returns ``module``.

    The FSDP1 ``auto_wrap_policy`` (``ModuleWrapPolicy``,
    ``size_based_auto_wrap_policy``) for the FSDP2 front.
    """
    if not callable(policy):
        raise TypeError(f"apply_wrap_policy: policy must be callable, got {type(policy).__name__}")

    def shard(child):
        return fully_shard(child, **fully_shard_kwargs)

    auto_wrap(module, policy, shard, lambda m: isinstance(m, FullyShardedDataParallel))
    return fully_shard(module, **fully_shard_kwargs)


def _sharded_class(cls):
    """``FSDP<cls>``: FullyShardedDataParallel's behaviour first, then ``cls``'s (one class per ``cls``)."""
    sharded = _CLASSES.get(cls)
    if sharded is None:
        doc = f"A {cls.__name__} made an FSDP unit in place by fully_shard (see minigrad_dist.fsdp.in_place)."
        sharded = type(f"FSDP{cls.__name__}", (FullyShardedDataParallel, cls), {"__doc__": doc})
        _CLASSES[cls] = sharded
    return sharded
