"""Fully Sharded Data Parallel: parameters, gradients and optimizer state sharded over the ranks.

``FullyShardedDataParallel`` (``torch.distributed.fsdp.FullyShardedDataParallel``,
FSDP1's module wrapper) implements the algorithm of Zhao et al., "PyTorch
FSDP: Experiences on Scaling Fully Sharded Data Parallel" (VLDB 2023);
``fully_shard`` (``torch.distributed.fsdp.fully_shard``, FSDP2's name) makes
a module that same wrapper in place (``in_place.py``). In the paper's
terms: the model is decomposed into *FSDP units*; each unit's parameters
form one ``FlatParameter``, which is *sharded* (each rank keeps ``1/N``)
except while the unit computes, when it is *unsharded* by an all-gather;
gradients are reduced by a *reduce-scatter* so each rank receives only its
shard's gradient; and the optimizer steps the shards.

The algorithm, in the order the code (``fully_sharded.py``, ``flat_param.py``) follows it:

1. **Construction.** With an ``auto_wrap_policy`` the chosen submodules
   become units first, bottom-up (``wrap.py``). A unit's own parameters
   (those not in a nested unit) are concatenated into a flat vector, padded
   to a multiple of the world size ``N``; rank ``r`` keeps slice ``r`` as a
   leaf ``Parameter`` (``_flat_param``), the only thing ``parameters()``
   yields. The original ``Parameter`` objects stay on their modules as plain
   attributes pointing at placeholders that raise when used. Each original
   parameter gets a post-accumulate-grad hook. The outermost unit is the
   *root*: it records the order units run in and drives the end of backward.
2. **Forward: unshard.** A unit's forward all-gathers its flat shard (in
   the mixed precision ``param_dtype``) into a full buffer (tracked as
   ``gathered_parameters`` by ``minigrad_dist.memory``) and points each
   original parameter's ``.array`` at its view of it. From the second
   iteration on (*forward prefetch*), it first starts the all-gather of the
   unit that ran next in the first iteration, so that gather overlaps this
   unit's compute.
3. **Forward: reshard.** After its forward, a non-root unit frees the full
   buffer (``reshard_after_forward``) and registers a hook on its outputs
   that require grad. Ops keep the parameter Tensors and read ``.array``
   only when their backward runs, so re-pointing it before then suffices.
4. **Backward: unshard again.** When the gradient of one of a unit's
   outputs arrives (its pre-backward hook), the unit all-gathers again and,
   with *backward prefetch*, starts the all-gather of the unit expected next
   in reverse forward order. The first hook of a backward queues the root's
   final callback (``minigrad.engine.queue_callback``).
5. **Backward: reduce-scatter.** Gradients accumulate into the original
   parameters' ``.grad`` (they are leaves). When every parameter of a unit
   has its gradient (post-accumulate-grad hooks, counted; autograd runs a
   leaf's accumulation once per backward, after all of its uses), the unit
   flattens them into a padded vector (``reduce_dtype``), clears them,
   starts an averaging reduce-scatter into this rank's slice, and reshards.
   Under ``no_sync()`` it keeps the full gradients instead (they accumulate
   until the next synchronized backward reduces their sum).
6. **End of backward (root's callback).** One small allreduce on the
   root's own communicator tells every rank which units still hold
   gradients that no rank reduced (parameters with no gradient in this
   backward, or accumulated under ``no_sync``); those are reduce-scattered
   now, with zeros for missing gradients (a unit no rank used keeps
   ``.grad`` None). Ranks that reduced different units raise instead of
   hanging. Then it waits for every reduce-scatter in launch order, casts
   each result to the master dtype and adds it to the shard's ``.grad``
   (accumulating, as PyTorch does), and reshards every unit.
7. **Optimizer step.** Any optimizer built on ``model.parameters()`` steps
   the shards with their averaged gradients; its state is shard-sized. The
   next forward gathers the updated values.

State: ``state_dict()`` gives the unwrapped model's full state dict on every
rank (collective, or local inside ``summon_full_params``);
``StateDictType.SHARDED_STATE_DICT`` gives each rank's shards and layout.
``optim_state_dict`` / ``optim_state_dict_to_load`` convert the optimizer's
shard state to and from full tensors keyed by parameter name.
``minigrad_dist.save_checkpoint(path, model, optimizer)`` and
``load_checkpoint`` use both on every rank (the model's checkpoint protocol,
``checkpoint_state`` and ``optim_checkpoint_state``): the file holds the full
state dict and the full optimizer state, loadable with any number of ranks,
or ``sharded=True`` writes each rank's shards.
"""

from minigrad_dist.fsdp.flat_param import ReshardedArray
from minigrad_dist.fsdp.fully_sharded import FSDP as FSDP  # the short name users give it (not exported)
from minigrad_dist.fsdp.fully_sharded import FullyShardedDataParallel, StateDictType
from minigrad_dist.fsdp.in_place import apply_wrap_policy, fully_shard
from minigrad_dist.fsdp.mixed_precision import MixedPrecision, MixedPrecisionPolicy
from minigrad_dist.fsdp.wrap import ModuleWrapPolicy, size_based_auto_wrap_policy

__all__ = [
    "FullyShardedDataParallel", "MixedPrecision", "MixedPrecisionPolicy", "ModuleWrapPolicy",
    "ReshardedArray", "StateDictType", "apply_wrap_policy", "fully_shard", "size_based_auto_wrap_policy",
]
