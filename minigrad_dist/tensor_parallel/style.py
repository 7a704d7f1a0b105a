"""``parallelize_module`` with ``ColwiseParallel`` / ``RowwiseParallel``, as ``torch.distributed.tensor.parallel``.

A plan maps submodule names to styles; each named ``nn.Linear`` is replaced,
in place, by this rank's shard of it::

    mesh = init_device_mesh("cpu", (2,), mesh_dim_names=("tp",))
    model = nn.Sequential(nn.Linear(8, 32), nn.GELU(), nn.Linear(32, 8))
    parallelize_module(model, mesh["tp"], {"0": ColwiseParallel(), "2": RowwiseParallel()})

PyTorch turns the parameters into DTensors and converts the layouts with
hooks; minigrad has no DTensor, so the layouts a style may ask for are the
ones Megatron's layers handle, with plain local tensors in and out
(``use_local_output=True``):

| style | input layouts | output layouts | becomes |
| --- | --- | --- | --- |
| ``ColwiseParallel`` | ``Replicate()``*, ``Shard(d)`` | ``Shard(-1)``*, ``Replicate()`` | ``ColumnParallelLinear`` |
| ``RowwiseParallel`` | ``Shard(-1)``*, ``Replicate()`` | ``Replicate()``*, ``Shard(d)`` | ``RowParallelLinear`` |
| ``SequenceParallel`` | ``Shard(sequence_dim)`` | ``Shard(sequence_dim)`` | the module, gradients summed |

(* the default.)

``Shard(d)`` with ``d >= 0`` is sequence parallelism (``d`` the sequence
dimension, 1 for ``(batch, sequence, features)``): ``ColwiseParallel``'s input
is all-gathered along ``d`` (in place of f), ``RowwiseParallel``'s output
reduce-scattered along ``d`` (in place of g). ``SequenceParallel`` keeps a
module that works position by position (LayerNorm, dropout) as it is, on this
rank's slice of the sequence; each of its parameters then sees only that
slice, so a gradient hook sums the parameter's gradient over the group.
Other layouts raise ``NotImplementedError`` naming the supported ones.

``parallelize_module`` runs these steps, in the order the code below follows:

1. **Check** the mesh (1-D), the plan (styles, names of submodules; an
   ``nn.Linear`` for the column and row styles) and the layouts.
2. **Agree on the weights**: with ``src_data_rank`` (default 0), every named
   module's parameters are broadcast from that rank of the mesh, so the
   shards cut in step 3 come from one model (as PyTorch's).
3. **Apply**: each named ``Linear`` is replaced on its parent by this rank's
   ``ColumnParallelLinear`` / ``RowParallelLinear`` (``from_linear``); each
   ``SequenceParallel`` module gets its gradient hooks.
"""

from __future__ import annotations

from minigrad.nn.layers import Linear
from minigrad.nn.module import Module
from minigrad_dist import collectives
from minigrad_dist.tensor_parallel.layers import ColumnParallelLinear, RowParallelLinear
from minigrad_dist.tensor_parallel.mappings import reduce_from_tensor_parallel_region

__all__ = [
    "ColwiseParallel", "ParallelStyle", "Replicate", "RowwiseParallel", "SequenceParallel", "Shard",
    "parallelize_module",
]  # fmt: skip


class Replicate:
    """The layout of a tensor held whole, the same, on every rank of the mesh (``torch.distributed.tensor``'s)."""

    def __eq__(self, other) -> bool:
        return isinstance(other, Replicate)

    def __hash__(self) -> int:
        return hash("Replicate")

    def __repr__(self) -> str:
        return "Replicate()"


class Shard:
    """The layout of a tensor cut into equal slices along ``dim``, slice ``i`` on mesh rank ``i``.

    Args:
        dim (int): the dimension cut; the styles here support ``-1`` (the last).
    """

    def __init__(self, dim: int):
        if not isinstance(dim, int) or isinstance(dim, bool):
            raise TypeError(f"Shard: dim must be an int, got {type(dim).__name__}")
        self.dim = dim

    def __eq__(self, other) -> bool:
        return isinstance(other, Shard) and other.dim == self.dim

    def __hash__(self) -> int:
        return hash(("Shard", self.dim))

    def __repr__(self) -> str:
        return f"Shard(dim={self.dim})"


def _sequence_shard(layout) -> bool:
    """A ``Shard`` of a non-negative dimension: a slice of the sequence (or of the batch)."""
    return isinstance(layout, Shard) and layout.dim >= 0


class ParallelStyle:
    """How one module is parallelized: the base of ``ColwiseParallel``, ``RowwiseParallel`` and ``SequenceParallel``.

    Subclasses say which layouts they take (``accepts``, ``allowed``) and what
    the module becomes (``apply``).
    """

    allowed = ""  # the supported layouts, in words, for the error message
    default_input = None
    default_output = None

    def __init__(self, *, input_layouts=None, output_layouts=None, use_local_output: bool = True):
        self.input_layouts = input_layouts if input_layouts is not None else self.default_input
        self.output_layouts = output_layouts if output_layouts is not None else self.default_output
        if not use_local_output:
            raise NotImplementedError(
                f"{type(self).__name__}(use_local_output=False) needs DTensor outputs, which minigrad does not have; "
                "leave use_local_output=True (plain local tensors)"
            )
        self.use_local_output = use_local_output

    def accepts(self, input_layout, output_layout) -> bool:
        """Whether the style can give this pair of layouts (see the module's table)."""
        raise NotImplementedError(f"{type(self).__name__} is abstract: use ColwiseParallel or RowwiseParallel")

    def check(self, name: str, module) -> None:
        """Raise when ``module`` (named ``name``) or the layouts do not fit the style.

        Raises:
            TypeError: a column or row style on something other than an ``nn.Linear``.
            NotImplementedError: an unsupported layout pair.
        """
        style = type(self).__name__
        if not isinstance(module, Linear):
            raise TypeError(f"parallelize_module: {name!r} is a {type(module).__name__}; {style} splits nn.Linear only")
        if not self.accepts(self.input_layouts, self.output_layouts):
            raise NotImplementedError(
                f"parallelize_module: {style} for {name!r} with input_layouts={self.input_layouts}, output_layouts="
                f"{self.output_layouts} is not supported; {style} takes {self.allowed}"
            )

    def apply(self, module, group):
        """What ``module`` becomes on this rank (a shard of it, or itself with hooks)."""
        raise NotImplementedError(f"{type(self).__name__} is abstract: use ColwiseParallel or RowwiseParallel")

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(input_layouts={self.input_layouts}, output_layouts={self.output_layouts}, "
            f"use_local_output={self.use_local_output})"
        )


class ColwiseParallel(ParallelStyle):
    """Split an ``nn.Linear`` by its output features (a ``ColumnParallelLinear``).

    Keyword Args:
        input_layouts: ``Replicate()`` (the default) or ``Shard(d)``, ``d >= 0``
            (sequence parallelism: the input is this rank's slice along ``d``,
            all-gathered before the matmul).
        output_layouts: ``Shard(-1)`` (default: each rank its slice of the
            output features) or ``Replicate()`` (all-gathered).
        use_local_output (bool): must be True (plain tensors; minigrad has no DTensor).
    """

    allowed = "input_layouts Replicate() or Shard(d) with d >= 0, and output_layouts Shard(-1) or Replicate()"
    default_input = Replicate()
    default_output = Shard(-1)

    def accepts(self, input_layout, output_layout) -> bool:
        return (input_layout == Replicate() or _sequence_shard(input_layout)) and output_layout in (
            Shard(-1), Replicate(),
        )  # fmt: skip

    def apply(self, module, group) -> Module:
        sequence_dim = self.input_layouts.dim if _sequence_shard(self.input_layouts) else None
        return ColumnParallelLinear.from_linear(
            module, group, gather_output=self.output_layouts == Replicate(), sequence_dim=sequence_dim
        )


class RowwiseParallel(ParallelStyle):
    """Split an ``nn.Linear`` by its input features (a ``RowParallelLinear``).

    Keyword Args:
        input_layouts: ``Shard(-1)`` (default: each rank gets its slice of
            the input features, as a ``ColwiseParallel`` layer leaves them) or
            ``Replicate()`` (the layer keeps its slice of the whole input).
        output_layouts: ``Replicate()`` (the default) or ``Shard(d)``, ``d >= 0``
            (sequence parallelism: the partial sums are reduce-scattered along ``d``).
        use_local_output (bool): must be True (plain tensors; minigrad has no DTensor).
    """

    allowed = "input_layouts Shard(-1) or Replicate(), and output_layouts Replicate() or Shard(d) with d >= 0"
    default_input = Shard(-1)
    default_output = Replicate()

    def accepts(self, input_layout, output_layout) -> bool:
        return input_layout in (Shard(-1), Replicate()) and (
            output_layout == Replicate() or _sequence_shard(output_layout)
        )

    def apply(self, module, group) -> Module:
        sequence_dim = self.output_layouts.dim if _sequence_shard(self.output_layouts) else None
        return RowParallelLinear.from_linear(
            module, group, input_is_parallel=self.input_layouts == Shard(-1), sequence_dim=sequence_dim
        )


class SequenceParallel(ParallelStyle):
    """Run a position-wise module (``nn.LayerNorm``, ``nn.Dropout``, ...) on this rank's slice of the sequence.

    The module is kept as it is (replicated parameters); its input and output
    are this rank's slice along ``sequence_dim``, as a ``ColwiseParallel``
    with ``input_layouts=Shard(sequence_dim)`` takes and a ``RowwiseParallel``
    with ``output_layouts=Shard(sequence_dim)`` gives. Each parameter sees only
    this rank's positions, so a hook sums its gradient over the group (as the
    full model's gradient sums over all positions).

    Keyword Args:
        sequence_dim (int): the sequence dimension (default 1: ``(batch, sequence, features)``).

    Unlike PyTorch's, the output is a plain local tensor (no DTensor), and
    the module must work position by position: this style cannot check that.
    """

    def __init__(self, *, sequence_dim: int = 1):
        if not isinstance(sequence_dim, int) or isinstance(sequence_dim, bool) or sequence_dim < 0:
            raise ValueError(f"SequenceParallel: sequence_dim must be a non-negative int, got {sequence_dim!r}")
        super().__init__(input_layouts=Shard(sequence_dim), output_layouts=Shard(sequence_dim))
        self.sequence_dim = sequence_dim

    def check(self, name: str, module) -> None:
        """Any module may be given (its parameters get the hooks)."""

    def apply(self, module, group) -> Module:
        for parameter in module.parameters():
            if parameter.requires_grad:
                parameter.register_hook(lambda grad: reduce_from_tensor_parallel_region(grad, group))
        return module

    def __repr__(self) -> str:
        return f"SequenceParallel(sequence_dim={self.sequence_dim})"


def parallelize_module(module, device_mesh, parallelize_plan, *, src_data_rank: int | None = 0):
    """Replace the ``nn.Linear`` submodules named in ``parallelize_plan`` by their tensor-parallel shards.

    Modules named with ``SequenceParallel`` stay, with gradient hooks.

    Every rank of the mesh must call it with the same plan (it broadcasts the
    weights: a collective).

    Args:
        module (nn.Module): the model, changed in place.
        device_mesh (DeviceMesh): a 1-D mesh (slice a larger one: ``mesh["tp"]``).
        parallelize_plan (ParallelStyle | dict[str, ParallelStyle]): one style
            for ``module`` itself (which must then be an ``nn.Linear``), or
            submodule names (as ``named_modules`` gives them) to styles.
        src_data_rank (int | None): the mesh rank whose full weights every
            rank shards (default 0); None: each rank shards its own (they must
            already be equal).

    Returns:
        nn.Module: ``module``, or its replacement when the plan is a single style.

    Raises:
        TypeError: the mesh is not a ``DeviceMesh``, a style is not a
            ``ParallelStyle``, or a module named for a column or row style is not an ``nn.Linear``.
        ValueError: the mesh is not 1-D, a name is not a submodule, or
            ``src_data_rank`` is not a rank of the mesh.
        NotImplementedError: a style asks for unsupported layouts.
    """
    group = _tp_group(device_mesh)
    plan = {"": parallelize_plan} if isinstance(parallelize_plan, ParallelStyle) else parallelize_plan
    targets = _checked_plan(module, plan)
    if src_data_rank is not None:
        _broadcast_full_weights([target for target, _ in targets.values()], device_mesh, src_data_rank)
    for name, (target, style) in targets.items():
        shard = style.apply(target, group)
        if name == "":
            return shard
        parent_name, _, child = name.rpartition(".")
        # add_module keeps the child's place among its siblings (an nn.Sequential runs them in that order).
        (module.get_submodule(parent_name) if parent_name else module).add_module(child, shard)
    return module


# -- step 1: checks ---------------------------------------------------------------------------------


def _tp_group(device_mesh):
    from minigrad_dist.device_mesh import DeviceMesh  # noqa: PLC0415  (the mesh module needs no TP at import)

    if not isinstance(device_mesh, DeviceMesh):
        raise TypeError(f"parallelize_module: device_mesh must be a DeviceMesh, got {type(device_mesh).__name__}")
    if device_mesh.ndim != 1:
        raise ValueError(
            f"parallelize_module: takes a 1-D mesh, got {device_mesh.ndim} dimensions {device_mesh.shape}; "
            'slice it first, e.g. mesh["tp"]'
        )
    return device_mesh.get_group()


def _checked_plan(module, plan) -> dict:
    """``{name: (the module, its style)}``, in the plan's order, after checking every entry."""
    if not isinstance(plan, dict):
        raise TypeError(
            f"parallelize_module: parallelize_plan must be a ParallelStyle or a dict of names to styles, got "
            f"{type(plan).__name__}"
        )
    modules = dict(module.named_modules())
    targets = {}
    for name, style in plan.items():
        if not isinstance(style, ParallelStyle):
            raise TypeError(
                f"parallelize_module: the plan's entry {name!r} must be a ColwiseParallel or RowwiseParallel, got "
                f"{type(style).__name__}"
            )
        if name not in modules:
            known = [n for n in modules if n]
            raise ValueError(f"parallelize_module: {name!r} is not a submodule of the model; its submodules: {known}")
        style.check(name, modules[name])
        targets[name] = (modules[name], style)
    return targets


# -- step 2: agree on the weights ---------------------------------------------------------------------


def _broadcast_full_weights(modules, device_mesh, src_data_rank) -> None:
    ranks = device_mesh.get_group().world_ranks
    if not isinstance(src_data_rank, int) or not 0 <= src_data_rank < len(ranks):
        raise ValueError(
            f"parallelize_module: src_data_rank must be a rank of the mesh, 0 to {len(ranks) - 1}, or None; got "
            f"{src_data_rank!r}"
        )
    for module in modules:
        for parameter in module.parameters():
            collectives.broadcast(parameter, ranks[src_data_rank], device_mesh.get_group())
