"""Megatron's parallel layers: ``ColumnParallelLinear``, ``RowParallelLinear`` and the MLP block built of them.

A ``Linear`` ``y = x W^T + b`` with ``W`` of shape ``(out, in)`` splits two ways
over the ``p`` ranks of a tensor-parallel group:

* **by columns of the output** (rows of ``W``): rank ``i`` holds
  ``W[i*out/p : (i+1)*out/p, :]`` and that slice of ``b``, and computes its
  slice of ``y`` from the whole ``x``. ``x`` enters through **f**.
* **by rows of the input** (columns of ``W``): rank ``i`` holds
  ``W[:, i*in/p : (i+1)*in/p]`` and computes a partial sum from its slice of
  ``x``; **g** sums the partials, then the replicated ``b`` is added once.

Column then row needs no communication between them, so an MLP block costs
one all-reduce forward (g) and one backward (f's). ``from_linear`` cuts a given
full ``Linear`` into these shards, so the sharded model computes exactly what
the full one does (the tests use it).
"""

from __future__ import annotations

import math

from minigrad.grad_mode import no_grad
from minigrad.nn import functional as F
from minigrad.nn import init
from minigrad.nn.layers import Linear, _empty_parameter
from minigrad.nn.module import Module
from minigrad_dist import collectives
from minigrad_dist.tensor_parallel import mappings

__all__ = ["ColumnParallelLinear", "RowParallelLinear", "TensorParallelMLP"]


def _positive(features, layer: str, name: str) -> int:
    if not isinstance(features, int) or isinstance(features, bool) or features < 1:
        raise ValueError(f"{layer}: {name} must be a positive int, got {features!r}")
    return features


def _shard_width(features: int, group, layer: str, name: str) -> int:
    size = collectives.get_world_size(group)
    _positive(features, layer, name)
    if features % size:
        raise ValueError(
            f"{layer}: {name}={features} does not divide by the tensor-parallel group size {size}; "
            f"pick a multiple of {size}"
        )
    return features // size


def _check_input(x, features: int, layer: str, what: str) -> None:
    if x.ndim == 0 or x.shape[-1] != features:
        raise RuntimeError(f"{layer}: expected input of shape (*, {features}) ({what}), got {tuple(x.shape)}")


def _full_linear(linear, layer: str) -> Linear:
    if not isinstance(linear, Linear):
        raise TypeError(f"{layer}.from_linear: expected an nn.Linear, got {type(linear).__name__}")
    return linear


class _ParallelLinear(Module):
    """What both splits share: the sizes, an empty weight shard and bias, a full ``Linear``'s draw, copying a shard."""

    def _init_shard(self, in_features, out_features, weight_shape, bias_shape, group, sequence_dim, device, dtype):
        self.in_features = in_features
        self.out_features = out_features
        self.process_group = group
        self.sequence_dim = sequence_dim
        self.weight = _empty_parameter(weight_shape, device, dtype)
        if bias_shape is None:
            self.register_parameter("bias", None)
        else:
            self.bias = _empty_parameter(bias_shape, device, dtype)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Draw the shard from a full ``nn.Linear``'s distribution, U(-1/sqrt(in_features), 1/sqrt(in_features))."""
        bound = 1 / math.sqrt(self.in_features)
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    @classmethod
    def from_linear(cls, linear, process_group=None, *args, sequence_dim=None, **kwargs):
        """This rank's shard of the full ``linear``: a layer of its sizes, bias, device and dtype, its weights copied.

        Further arguments go to the constructor: ``gather_output`` for the
        column split, ``input_is_parallel`` for the row split.

        Raises:
            TypeError: ``linear`` is not an ``nn.Linear``.
            ValueError: the split features do not divide by the group size.
        """
        _full_linear(linear, cls.__name__)
        weight = linear.weight
        layer = cls(linear.in_features, linear.out_features, linear.bias is not None, *args,
                    process_group=process_group, device=weight.device, dtype=weight.dtype, sequence_dim=sequence_dim,
                    **kwargs)  # fmt: skip
        weight_index, bias_index = layer._own_indices()
        with no_grad():
            layer.weight.copy_(weight[weight_index])
            if layer.bias is not None:
                layer.bias.copy_(linear.bias[bias_index])
        return layer


class ColumnParallelLinear(_ParallelLinear):
    """A ``Linear`` split along its output features over a tensor-parallel group (Megatron's column split).

    Rank ``i`` of the group holds rows ``i*out/p`` to ``(i+1)*out/p`` of the
    full ``weight`` (and that slice of ``bias``). The replicated input passes
    through **f** (identity forward, all-reduce of its gradient backward), so
    the input gradient is the full model's on every rank.

    Args:
        in_features (int): size of the input's last dimension (replicated).
        out_features (int): the full layer's output features; must divide by the group size.
        bias (bool): learn a bias (sharded like the output). Default True.
        gather_output (bool): all-gather the output slices so every rank gets
            ``(*, out_features)``; default False: ``(*, out_features / p)``.
        process_group (ProcessGroup, optional): the tensor-parallel group (default: the world).
        sequence_dim (int, optional): sequence parallelism: the input is this
            rank's slice of the sequence along ``sequence_dim``, all-gathered
            in place of f (backward: reduce-scatter). Default None: replicated input.
        device, dtype: as for ``nn.Linear``.

    Shapes: input ``(*, in_features)``; ``weight`` ``(out_features / p, in_features)``.
    Parameters are drawn from U(-1/sqrt(in_features), 1/sqrt(in_features)),
    the distribution of a full ``nn.Linear``; use ``from_linear`` to copy one.

    Raises:
        ValueError: ``out_features`` does not divide by the group size.
        RuntimeError: the forward's input has the wrong last dimension (as ``F.linear``).
    """

    def __init__(self, in_features, out_features, bias=True, gather_output=False, process_group=None,
                 device=None, dtype=None, *, sequence_dim=None):  # fmt: skip
        super().__init__()
        layer = "ColumnParallelLinear"
        _positive(in_features, layer, "in_features")
        self.out_features_per_rank = width = _shard_width(out_features, process_group, layer, "out_features")
        self.gather_output = bool(gather_output)
        bias_shape = (width,) if bias else None
        self._init_shard(in_features, out_features, (width, in_features), bias_shape, process_group, sequence_dim,
                         device, dtype)  # fmt: skip

    def _own_indices(self):
        """Where this rank's weight rows and bias entries sit in the full layer's."""
        rows = _own_range(self.out_features_per_rank, self.process_group)
        return rows, rows

    def forward(self, input):  # noqa: A002
        """``f(input) @ weight.T + bias``: this rank's output slice (all of them with ``gather_output``)."""
        _check_input(input, self.in_features, "ColumnParallelLinear", "replicated")
        if self.sequence_dim is None:
            x = mappings.copy_to_tensor_parallel_region(input, self.process_group)
        else:
            x = mappings.gather_from_sequence_parallel_region(input, self.sequence_dim, self.process_group)
        y = F.linear(x, self.weight, self.bias)
        return mappings.gather_from_tensor_parallel_region(y, self.process_group) if self.gather_output else y

    def extra_repr(self) -> str:
        return (
            f"in_features={self.in_features}, out_features={self.out_features} "
            f"({self.out_features_per_rank} per rank), bias={self.bias is not None}, gather_output={self.gather_output}"
        )


class RowParallelLinear(_ParallelLinear):
    """A ``Linear`` split along its input features over a tensor-parallel group (Megatron's row split).

    Rank ``i`` of the group holds columns ``i*in/p`` to ``(i+1)*in/p`` of the
    full ``weight``; its matmul gives a partial sum, which **g** (all-reduce
    forward, identity backward) adds up on every rank; then the replicated
    ``bias`` is added. Every rank's ``bias`` and its gradient equal the full
    model's.

    Args:
        in_features (int): the full layer's input features; must divide by the group size.
        out_features (int): size of the output's last dimension (replicated).
        bias (bool): learn a bias (replicated, the same on every rank). Default True.
        input_is_parallel (bool): the input is already this rank's slice
            ``(*, in_features / p)`` (as a ``ColumnParallelLinear`` leaves it);
            False: it is the full ``(*, in_features)`` and the layer keeps its slice.
        process_group (ProcessGroup, optional): the tensor-parallel group (default: the world).
        sequence_dim (int, optional): sequence parallelism: reduce-scatter the
            partial sums along ``sequence_dim`` in place of g, so each rank
            gets its slice of the sequence; the bias then passes through f (it
            meets only this rank's slice, so its gradient is summed over the
            ranks). Default None: replicated output.
        device, dtype: as for ``nn.Linear``.

    Shapes: ``weight`` ``(out_features, in_features / p)``; output ``(*, out_features)``.
    The constructor draws from a full ``nn.Linear``'s distribution and
    broadcasts the bias from the group's first rank (so the replicas agree:
    a collective); use ``from_linear`` to copy a full layer.

    Raises:
        ValueError: ``in_features`` does not divide by the group size (each rank must hold
            whole input features).
        RuntimeError: the forward's input has the wrong last dimension (as ``F.linear``).
    """

    def __init__(self, in_features, out_features, bias=True, input_is_parallel=True, process_group=None,
                 device=None, dtype=None, *, sequence_dim=None):  # fmt: skip
        super().__init__()
        layer = "RowParallelLinear"
        self.in_features_per_rank = width = _shard_width(in_features, process_group, layer, "in_features")
        _positive(out_features, layer, "out_features")
        self.input_is_parallel = bool(input_is_parallel)
        bias_shape = (out_features,) if bias else None
        self._init_shard(in_features, out_features, (out_features, width), bias_shape, process_group, sequence_dim,
                         device, dtype)  # fmt: skip

    def reset_parameters(self) -> None:
        """Draw the shard from a full ``nn.Linear``'s distribution; broadcast the bias from the group's first rank."""
        super().reset_parameters()
        if self.bias is not None:
            group = collectives._group(self.process_group)
            collectives.broadcast(self.bias, group.world_ranks[0], self.process_group)

    def _own_indices(self):
        """Where this rank's weight columns sit in the full layer's (the bias is whole)."""
        return (slice(None), _own_range(self.in_features_per_rank, self.process_group)), slice(None)

    def forward(self, input):  # noqa: A002
        """``g(input_slice @ weight.T) + bias``: the full output, the same on every rank."""
        if self.input_is_parallel:
            _check_input(input, self.in_features_per_rank, "RowParallelLinear", "this rank's slice")
            x = input
        else:
            _check_input(input, self.in_features, "RowParallelLinear", "replicated")
            x = mappings.scatter_to_tensor_parallel_region(input, self.process_group)
        partial = F.linear(x, self.weight)
        if self.sequence_dim is None:
            y = mappings.reduce_from_tensor_parallel_region(partial, self.process_group)
            return y + self.bias if self.bias is not None else y
        y = mappings.reduce_scatter_to_sequence_parallel_region(partial, self.sequence_dim, self.process_group)
        if self.bias is None:
            return y
        return y + mappings.copy_to_tensor_parallel_region(self.bias, self.process_group)

    def extra_repr(self) -> str:
        return (
            f"in_features={self.in_features} ({self.in_features_per_rank} per rank), "
            f"out_features={self.out_features}, bias={self.bias is not None}, "
            f"input_is_parallel={self.input_is_parallel}"
        )


def _own_range(width: int, group) -> slice:
    rank = collectives.get_rank(group)
    return slice(rank * width, (rank + 1) * width)


class TensorParallelMLP(Module):
    """Megatron's MLP block: ``RowParallelLinear(activation(ColumnParallelLinear(x)))``.

    The hidden layer is split over the group, each rank computing its slice of
    hidden units from the whole input (no communication between the two
    layers, the activation being elementwise); the block costs one all-reduce
    forward (g) and one backward (f). Input and output are replicated.

    Args:
        in_features (int): input size.
        hidden_features (int): hidden size; must divide by the group size.
        out_features (int, optional): output size (default ``in_features``).
        bias (bool): both layers learn biases. Default True.
        activation (Module, optional): an elementwise module (default ``nn.GELU()``).
        process_group (ProcessGroup, optional): the tensor-parallel group (default: the world).

    Attributes:
        fc1 (ColumnParallelLinear), activation, fc2 (RowParallelLinear).

    Raises:
        ValueError: ``hidden_features`` does not divide by the group size.
    """

    def __init__(
        self,
        in_features,
        hidden_features,
        out_features=None,
        bias=True,
        activation=None,
        process_group=None,
        device=None,
        dtype=None,
    ):
        super().__init__()
        from minigrad.nn import GELU  # noqa: PLC0415  (nn's package imports are heavy; only the default needs it)

        out_features = in_features if out_features is None else out_features
        self.fc1 = ColumnParallelLinear(in_features, hidden_features, bias, False, process_group, device, dtype)
        self.activation = GELU() if activation is None else activation
        self.fc2 = RowParallelLinear(hidden_features, out_features, bias, True, process_group, device, dtype)

    @classmethod
    def from_linears(cls, fc1, activation, fc2, process_group=None) -> TensorParallelMLP:
        """The block that computes ``fc2(activation(fc1(x)))`` of the given full ``nn.Linear`` layers.

        Raises:
            TypeError: ``fc1`` or ``fc2`` is not an ``nn.Linear``.
            ValueError: ``fc1.out_features != fc2.in_features``, or it does not divide by the group size.
        """
        _full_linear(fc1, "TensorParallelMLP")
        _full_linear(fc2, "TensorParallelMLP")
        if fc1.out_features != fc2.in_features:
            raise ValueError(
                f"TensorParallelMLP.from_linears: fc1 has {fc1.out_features} outputs but fc2 takes "
                f"{fc2.in_features} inputs; they must match"
            )
        block = cls.__new__(cls)
        Module.__init__(block)
        block.fc1 = ColumnParallelLinear.from_linear(fc1, process_group)
        block.activation = activation
        block.fc2 = RowParallelLinear.from_linear(fc2, process_group)
        return block

    def forward(self, input):  # noqa: A002
        """The replicated ``(*, out_features)`` output of the block."""
        return self.fc2(self.activation(self.fc1(input)))
