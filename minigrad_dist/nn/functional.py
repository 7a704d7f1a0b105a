"""Differentiable collectives, as ``torch.distributed.nn.functional``.

Each function runs the collective of ``minigrad_dist`` on a copy of its
inputs (they are never written), returns new Tensors, and records one graph
node whose backward runs the *adjoint* collective on the output gradients::

    import minigrad_dist.nn.functional as dist_fn

    y = dist_fn.all_reduce(x)  # the sum of every rank's x, on every rank
    loss = my_loss(y)          # may differ from rank to rank
    loss.backward()            # x.grad = d(sum of every rank's loss) / dx

The objective is the sum of the ranks' losses: each rank's ``x.grad`` is the
derivative of that sum, as if one process had computed every rank's loss.

Why the backward is another collective: stack every rank's input into one
vector ``x`` and every rank's output into ``y``. Each collective below (with
``ReduceOp.SUM`` or ``AVG``) is a linear map ``y = A x``, and the objective
``L = sum_r loss_r(y_r)`` has the gradient ``dL/dx = A^T dL/dy``, where
``dL/dy`` stacks each rank's own output gradient. So the backward applies
the transpose ``A^T``, and the transpose of a collective is a collective:
a block copied to many places (broadcast) transposes into the sum of those
places back into the block (reduce); a permutation of blocks (scatter,
gather, all_to_all) transposes into the inverse permutation.

| forward | backward: the adjoint, on the output gradients |
| --- | --- |
| ``all_reduce`` SUM | ``all_reduce`` SUM (``A`` is symmetric) |
| ``all_reduce`` AVG | ``all_reduce`` AVG |
| ``broadcast`` from src | ``reduce`` SUM to src; zero on the other ranks |
| ``reduce`` SUM to dst | ``broadcast`` from dst (AVG: divided by the size) |
| ``all_gather`` | ``reduce_scatter`` SUM |
| ``reduce_scatter`` SUM | ``all_gather`` (AVG: divided by the size) |
| ``gather`` to dst | ``scatter`` from dst |
| ``scatter`` from src | ``gather`` to src; zero on the other ranks |
| ``all_to_all`` | ``all_to_all`` with inputs and outputs swapped |
| ``all_to_all_single`` | ``all_to_all_single`` with the split sizes swapped |

``MIN``, ``MAX`` and ``PRODUCT`` are not linear. Their forward works, but
their backward raises, where PyTorch's versions return gradients that are
not their derivatives (``all_reduce`` reduces the gradients with the same
op, ``reduce`` and ``reduce_scatter`` treat it as SUM). To differentiate
through them, ``all_gather`` the tensors and reduce the stack locally. For
AVG, ``reduce`` and ``reduce_scatter`` divide the gradients by the group
size, the derivative of the average; PyTorch's pass them on as for SUM.

Every call runs these steps, in the order the code below follows:

1. **Check locally**: tensors, list lengths, shapes, roots, split sizes.
   A problem is kept, not raised yet: raising alone would leave the other
   ranks waiting in the collective.
2. **Agree**: one small ``all_gather`` of what each rank passed (shapes,
   dtypes, roots, op, split sizes, its problem, whether it records a
   gradient). Every rank raises the same error when some rank found a
   problem or the ranks' arguments do not fit together.
3. **Record on every rank, or on none**: when any rank records the node,
   every rank does, even one whose own inputs need no gradient (a scatter's
   receivers, a broadcast's non-source ranks): its backward still has to
   take part in the adjoint collective that the other ranks' gradients
   pass through.
4. **Forward**: the plain collective into new arrays (and, for the
   functions that take output tensors, a differentiable copy into them).
5. **Backward**: the adjoint collective of the table, itself one of these
   functions, so ``create_graph=True`` gives differentiable gradients
   (double backward).

Warning:
    Every rank must call the same functions in the same order (they are
    collectives), and every rank must backpropagate through each call's
    outputs, because each backward is a collective too: a rank whose loss
    does not use a call's outputs leaves the others waiting in that call's
    backward (``init_process_group(timeout=...)`` turns the wait into a
    ``TimeoutError``). Pass the same ``create_graph`` on every rank.
"""

from __future__ import annotations

import math

from minigrad import backend
from minigrad.autograd import Function
from minigrad.grad_mode import _state as _grad_state
from minigrad.tensor import Tensor
from minigrad_dist import collectives
from minigrad_dist.process_group import ReduceOp

__all__ = [
    "broadcast", "gather", "scatter", "reduce", "reduce_scatter", "all_gather", "all_to_all", "all_to_all_single",
    "all_reduce",
]

_LINEAR_OPS = (ReduceOp.SUM, ReduceOp.AVG)


# -- step 1: local checks ---------------------------------------------------------------


def _local_check(check):
    """Run ``check()``; return ``(its summary, None)`` or ``(None, the error)`` for the peers to see."""
    try:
        return check(), None
    except (TypeError, ValueError, RuntimeError) as error:
        return None, error


def _tensor_arg(value, fn: str, name: str) -> Tensor:
    if not isinstance(value, Tensor):
        raise TypeError(f"{fn}: {name} must be a Tensor, got {type(value).__name__}")
    return value


def _tensor_list(items, size: int, fn: str, name: str, like=None) -> list:
    """``items`` as a list of ``size`` Tensors, all of the shape and dtype of ``like`` (default: of the first)."""
    return collectives._per_rank_list(items, size, fn, name, lambda t, where: _tensor_arg(t, fn, where), like, "Tensor")


def _writable(tensor: Tensor, fn: str, name: str) -> Tensor:
    """An output tensor the result is copied into: not a leaf that requires grad (in-place writes raise there)."""
    if _grad_state.enabled and tensor.requires_grad and tensor.grad_fn is None:
        raise RuntimeError(
            f"{fn}: {name} receives the result in place (as PyTorch's), so it cannot be a leaf that requires grad; "
            "pass a tensor that does not require grad (e.g. from mg.empty)"
        )
    return tensor


def _items(items) -> list:
    """The items of a list argument (none when it is not a list: step 1 reports that)."""
    return list(items) if isinstance(items, (list, tuple)) else []


def _summary(tensor: Tensor, **arguments) -> dict:
    return {"shape": tuple(tensor.shape), "dtype": str(tensor.dtype), **arguments}


def _exchange_counts(dtype, send: list, receive: list) -> dict:
    """An all-to-all's summary: the elements this rank sends to and expects from each peer."""
    return {"dtype": str(dtype), "send": send, "receive": receive}


# -- step 2: agree across the group -------------------------------------------------------


def _same_everywhere(summaries, ranks):
    """Why the ranks' summaries differ (naming two ranks), or None when they are all equal."""
    for r, summary in enumerate(summaries):
        if summary != summaries[0]:
            return (
                f"rank {ranks[r]} passed {_describe(summary)} but rank {ranks[0]} passed {_describe(summaries[0])}; "
                f"every rank must pass the same {_and(list(summaries[0]))}"
            )
    return None


def _counts_fit(summaries, ranks):
    """Why the ranks' all-to-all sizes or dtypes do not fit together, or None when they do."""
    dtypes = {s["dtype"] for s in summaries}
    if len(dtypes) > 1:
        found = ", ".join(f"rank {ranks[r]}: {s['dtype']}" for r, s in enumerate(summaries))
        return f"every rank must pass tensors of one dtype, got {found}"
    wrong = [
        f"rank {ranks[i]} sends rank {ranks[j]} {summaries[i]['send'][j]} elements but rank {ranks[j]} expects "
        f"{summaries[j]['receive'][i]} from it"
        for i in range(len(summaries))
        for j in range(len(summaries))
        if summaries[i]["send"][j] != summaries[j]["receive"][i]
    ]
    return "; ".join(wrong) if wrong else None


def _and(words: list) -> str:
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} and {words[-1]}"


def _describe(summary: dict) -> str:
    return ", ".join(f"{key}={value}" for key, value in summary.items())


def _agree(fn: str, group, summary, problem, tensors, consistent=_same_everywhere) -> bool:
    """Step 2: share each rank's summary and problem; raise the same error everywhere, or say whether to record.

    Returns:
        True when some rank records the node (grad mode on and an input that requires grad).

    Raises:
        The first rank's problem (with its type), on every rank; ValueError when
        ``consistent`` finds the summaries do not fit; RuntimeError when some
        rank records and another runs under ``no_grad``.
    """
    g = collectives._group(group)
    wants = _grad_state.enabled and any(isinstance(t, Tensor) and t.requires_grad for t in tensors)
    reports = g.allgather_obj((summary, problem, wants, _grad_state.enabled))
    for r, (_, other_problem, _, _) in enumerate(reports):
        if other_problem is not None:
            if r == g.rank():
                raise problem
            raise type(other_problem)(f"{other_problem} (found on rank {g.world_ranks[r]}; every rank raises)")
    if consistent is not None:
        mismatch = consistent([report[0] for report in reports], g.world_ranks)
        if mismatch:
            raise ValueError(f"{fn}: {mismatch}")
    recording = [r for r, report in enumerate(reports) if report[2]]
    off = [r for r, report in enumerate(reports) if not report[3]]
    if recording and off:
        raise RuntimeError(
            f"{fn}: rank {g.world_ranks[recording[0]]} records gradients but rank {g.world_ranks[off[0]]} runs under "
            "no_grad; the backward is a collective too, so every rank must call it with grad mode on, or none"
        )
    return bool(recording)


# -- step 3: record on every rank, or on none ------------------------------------------------


def _apply(function, record: bool, *args):
    """``function.apply(*args)``, recording the node here too whenever ``record`` (some rank records)."""
    tensors = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
    if record and not any(args[i].requires_grad for i in tensors) and args[tensors[0]].dtype.kind in "fc":
        # None of this rank's inputs needs a gradient, but other ranks' gradients pass through this
        # rank's backward: record it on a leaf copy that requires grad (its gradient is dropped).
        i = tensors[0]
        args = args[:i] + (args[i].detach().requires_grad_(),) + args[i + 1 :]
    return function.apply(*args)


def _adjoint(function, group, *args):
    """Step 5: apply the adjoint ``function`` to output gradients inside a backward.

    Under ``create_graph`` the ranks agree whether to record it (double
    backward needs every rank's node); otherwise nothing is recorded and the
    arguments need no new check (the forward's check covered their shapes).
    """
    record = False
    if _grad_state.enabled:
        record = _agree(function.__name__, group, None, None, args, consistent=None)
    return _apply(function, record, *args)


def _require_linear(op, fn: str) -> None:
    if op not in _LINEAR_OPS:
        raise RuntimeError(
            f"{fn}: no gradient for ReduceOp.{op.name}; the backward exists for SUM and AVG (linear ops, whose "
            f"backward is the adjoint collective). PyTorch's torch.distributed.nn.functional.{fn} returns a "
            f"gradient here that is not the derivative of {op.name}. To differentiate it, "
            "all_gather the tensors and reduce the stack locally (e.g. mg.stack(all_gather(x)).max(dim=0).values)"
        )


# -- steps 4 and 5: the Functions, forward beside backward --------------------------------------


def _array(tensor: Tensor):
    """The tensor's data as an array (a gradient of a 0-d tensor may hold a NumPy scalar)."""
    return backend.get_array_module(tensor.array).asarray(tensor.array)


def _copy(tensor: Tensor):
    """A C-contiguous copy of the tensor's data (MPI buffers must be contiguous; inputs stay untouched)."""
    return backend.get_array_module(tensor.array).array(tensor.array, copy=True, order="C")


def _empty_like(tensor: Tensor):
    """A new C-contiguous array of ``tensor``'s shape and dtype, on its device, for a collective to fill."""
    return backend.get_array_module(tensor.array).empty(tensor.shape, dtype=tensor.dtype)


def _zeros_like(tensor: Tensor):
    """As ``_empty_like``, filled with zeros."""
    return backend.get_array_module(tensor.array).zeros(tensor.shape, dtype=tensor.dtype)


def _wrap(array) -> Tensor:
    return Tensor._make(array, False, None, 0)


def _on_copy(collective, tensor: Tensor, *args) -> Tensor:
    """``collective(copy, *args)`` run in place on a C-contiguous copy of ``tensor``'s data (None: just the copy)."""
    result = _copy(tensor)
    if collective is not None:
        collective(result, *args)
    return _wrap(result)


def _is_root(group, rank: int) -> bool:
    g = collectives._group(group)
    return g.world_ranks[g.rank()] == rank


class _AllReduce(Function):
    """all_reduce into a new tensor; backward: all_reduce of the gradients (SUM or AVG)."""

    @staticmethod
    def forward(ctx, op, group, tensor):
        ctx.op, ctx.group = op, group
        return _on_copy(collectives.all_reduce, tensor, op, group)

    @staticmethod
    def backward(ctx, grad):
        _require_linear(ctx.op, "all_reduce")
        return None, None, _adjoint(_AllReduce, ctx.group, ctx.op, ctx.group, grad)


class _Broadcast(Function):
    """broadcast from ``src``; backward: reduce (SUM) of the gradients to ``src``, zero elsewhere."""

    @staticmethod
    def forward(ctx, src, group, tensor):
        ctx.src, ctx.group = src, group
        # Only src's data is sent: the other ranks receive into a new buffer, with no copy of their input.
        result = _copy(tensor) if _is_root(group, src) else _empty_like(tensor)
        collectives.broadcast(result, src, group)
        return _wrap(result)

    @staticmethod
    def backward(ctx, grad):
        return None, None, _adjoint(_Reduce, ctx.group, ctx.src, ReduceOp.SUM, ctx.group, grad)


class _Reduce(Function):
    """reduce to ``dst`` (zeros elsewhere); backward: broadcast of ``dst``'s gradient (divided for AVG)."""

    @staticmethod
    def forward(ctx, dst, op, group, tensor):
        ctx.dst, ctx.op, ctx.group = dst, op, group
        result = _copy(tensor)
        collectives.reduce(result, dst, op, group)
        if not _is_root(group, dst):
            # Only dst receives the result. Zeros elsewhere (PyTorch leaves those values to the backend)
            # keep the map linear, with broadcast from dst as its exact adjoint.
            result[...] = 0
        return _wrap(result)

    @staticmethod
    def backward(ctx, grad):
        _require_linear(ctx.op, "reduce")
        gx = _adjoint(_Broadcast, ctx.group, ctx.dst, ctx.group, grad)
        if ctx.op is ReduceOp.AVG:
            gx = gx / collectives.get_world_size(ctx.group)
        return None, None, None, gx


class _AllGather(Function):
    """all_gather into one new tensor per rank; backward: reduce_scatter (SUM) of the gradients."""

    @staticmethod
    def forward(ctx, group, tensor):
        ctx.group = group
        array = _copy(tensor)
        xp = backend.get_array_module(array)
        outputs = [xp.empty_like(array) for _ in range(collectives.get_world_size(group))]
        collectives.all_gather(outputs, array, group)
        return tuple(_wrap(out) for out in outputs)

    @staticmethod
    def backward(ctx, *grads):
        return None, _adjoint(_ReduceScatter, ctx.group, ReduceOp.SUM, ctx.group, *grads)


class _ReduceScatter(Function):
    """reduce_scatter of the inputs (one per rank); backward: all_gather (divided for AVG)."""

    @staticmethod
    def forward(ctx, op, group, *inputs):
        ctx.op, ctx.group = op, group
        result = _empty_like(inputs[0])
        collectives.reduce_scatter(result, [_array(t) for t in inputs], op, group)
        return _wrap(result)

    @staticmethod
    def backward(ctx, grad):
        _require_linear(ctx.op, "reduce_scatter")
        grads = _adjoint(_AllGather, ctx.group, ctx.group, grad)
        if ctx.op is ReduceOp.AVG:
            size = collectives.get_world_size(ctx.group)
            grads = tuple(g / size for g in grads)
        return (None, None, *grads)


class _Gather(Function):
    """gather to ``dst`` (zeros elsewhere); backward: scatter of ``dst``'s gradients."""

    @staticmethod
    def forward(ctx, dst, group, tensor):
        ctx.dst, ctx.group = dst, group
        array = _copy(tensor)
        xp = backend.get_array_module(array)
        outputs = [xp.zeros_like(array) for _ in range(collectives.get_world_size(group))]
        collectives.gather(array, outputs if _is_root(group, dst) else None, dst, group)
        return tuple(_wrap(out) for out in outputs)

    @staticmethod
    def backward(ctx, *grads):
        return None, None, _adjoint(_Scatter, ctx.group, ctx.dst, ctx.group, *grads)


class _Scatter(Function):
    """scatter of ``src``'s tensors; backward: gather of the gradients to ``src``, zeros elsewhere."""

    @staticmethod
    def forward(ctx, src, group, *tensors):
        ctx.src, ctx.group = src, group
        result = _zeros_like(tensors[0])
        collectives.scatter(result, [_array(t) for t in tensors] if _is_root(group, src) else None, src, group)
        return _wrap(result)

    @staticmethod
    def backward(ctx, grad):
        return (None, None, *_adjoint(_Gather, ctx.group, ctx.src, ctx.group, grad))


class _AllToAll(Function):
    """all_to_all into tensors of ``output_shapes``; backward: all_to_all back into the sent shapes."""

    @staticmethod
    def forward(ctx, group, output_shapes, *inputs):
        ctx.group = group
        ctx.sent_shapes = [tuple(t.shape) for t in inputs]
        xp = backend.get_array_module(*(t.array for t in inputs))
        outputs = [xp.empty(shape, dtype=inputs[0].dtype) for shape in output_shapes]
        collectives.all_to_all(outputs, [_array(t) for t in inputs], group)
        return tuple(_wrap(out) for out in outputs)

    @staticmethod
    def backward(ctx, *grads):
        return (None, None, *_adjoint(_AllToAll, ctx.group, ctx.group, ctx.sent_shapes, *grads))


class _AllToAllSingle(Function):
    """all_to_all_single; backward: all_to_all_single with the split sizes swapped."""

    @staticmethod
    def forward(ctx, group, output_shape, output_split_sizes, input_split_sizes, tensor):
        ctx.group, ctx.sent_shape = group, tuple(tensor.shape)
        ctx.output_split_sizes, ctx.input_split_sizes = output_split_sizes, input_split_sizes
        array = _copy(tensor)
        result = backend.get_array_module(array).empty(output_shape, dtype=array.dtype)
        collectives.all_to_all_single(result, array, output_split_sizes, input_split_sizes, group)
        return _wrap(result)

    @staticmethod
    def backward(ctx, grad):
        # What this rank received from rank j goes back to rank j, into the rows it sent from.
        back = _adjoint(
            _AllToAllSingle, ctx.group, ctx.group, ctx.sent_shape, ctx.input_split_sizes, ctx.output_split_sizes, grad
        )
        return None, None, None, None, back


def _fill(outputs, results) -> None:
    """Copy ``results`` into the caller's output tensors, as PyTorch does (differentiably, so either may be used)."""
    for out, result in zip(outputs, results):
        out.copy_(result)


# -- the public functions: steps 1 and 2, then the Function ------------------------------------


def _agree_on_rooted_call(fn, group, tensor, root_name, root, op=None):
    """Steps 1-2 for a call with one tensor and a root (``src`` or ``dst``): check here, then agree across ranks."""
    g = collectives._group(group)

    def check():
        t = _tensor_arg(tensor, fn, "tensor")
        extra = {}
        if op is not None:
            collectives._check_op(op, fn)
            extra["op"] = op.name
        collectives._group_rank(g, root, fn, root_name)
        return _summary(t, **{root_name: root}, **extra)

    return _agree(fn, g, *_local_check(check), [tensor])


def broadcast(tensor, src, group=None):
    """Broadcast ``tensor`` of global rank ``src`` to every rank of ``group``, differentiably.

    Args:
        tensor (Tensor): the data on ``src``; on the other ranks only its shape
            and dtype matter (every rank passes the same shape and dtype).
        src (int): global rank of the source.
        group (ProcessGroup, optional): the group (default: the world).

    Returns:
        Tensor: a new tensor holding ``src``'s data, on every rank.

    Backward: ``src`` receives the sum of every rank's output gradient
    (``reduce`` to ``src``); the other ranks' inputs get zero gradients.

    Raises:
        TypeError: ``tensor`` is not a Tensor, or ``src`` not an int.
        ValueError: ``src`` is not in the group, or the ranks' shapes, dtypes or
            ``src`` differ (on every rank).
    """
    record = _agree_on_rooted_call("broadcast", group, tensor, "src", src)
    return _apply(_Broadcast, record, src, group, tensor)


def gather(tensor, dst=0, group=None):
    """Gather every rank's ``tensor`` on global rank ``dst``, differentiably.

    Args:
        tensor (Tensor): this rank's contribution (same shape and dtype on every rank).
        dst (int): global rank that receives the tensors (default 0).
        group (ProcessGroup, optional): the group (default: the world).

    Returns:
        tuple[Tensor]: one tensor per rank of the group, in group-rank order:
        their tensors on ``dst``, zeros on the other ranks (as PyTorch).

    Backward: each rank's input gradient is its slot of ``dst``'s output
    gradients (``scatter`` from ``dst``); the other ranks' output gradients
    do not count (their outputs are constants).

    Raises:
        TypeError, ValueError: as for ``broadcast`` (with ``dst``).
    """
    record = _agree_on_rooted_call("gather", group, tensor, "dst", dst)
    return _apply(_Gather, record, dst, group, tensor)


def scatter(tensors, src=0, group=None):
    """Send ``tensors[r]`` of global rank ``src`` to group rank r, differentiably.

    Args:
        tensors (list[Tensor]): one tensor per rank of the group, all of one
            shape and dtype. Every rank passes such a list (as PyTorch's code
            requires): ``src``'s values are sent, the other ranks' only give
            the output's shape and dtype.
        src (int): global rank of the source (default 0).
        group (ProcessGroup, optional): the group (default: the world).

    Returns:
        Tensor: a new tensor holding this rank's slot of ``src``'s list.

    Backward: ``src``'s ``tensors[r]`` gets rank r's output gradient
    (``gather`` to ``src``); the other ranks' ``tensors`` get zeros.

    Raises:
        TypeError: ``tensors`` is not a list of Tensors, or ``src`` not an int.
        ValueError: the list does not hold one tensor per rank, its tensors
            differ in shape or dtype, ``src`` is not in the group, or the ranks'
            shapes, dtypes or ``src`` differ (on every rank).
    """
    g = collectives._group(group)

    def check():
        items = _tensor_list(tensors, g.size(), "scatter", "tensors")
        collectives._group_rank(g, src, "scatter", "src")
        return _summary(items[0], src=src)

    summary, problem = _local_check(check)
    record = _agree("scatter", g, summary, problem, _items(tensors))
    return _apply(_Scatter, record, src, group, *tensors)


def reduce(tensor, dst, op=ReduceOp.SUM, group=None):
    """Reduce every rank's ``tensor`` with ``op`` onto global rank ``dst``, differentiably.

    Args:
        tensor (Tensor): this rank's input (same shape and dtype on every rank).
        dst (int): global rank that receives the result.
        op (ReduceOp): the reduction (default SUM); backward needs SUM or AVG.
        group (ProcessGroup, optional): the group (default: the world).

    Returns:
        Tensor: a new tensor; the reduction on ``dst``, zeros on the other
        ranks (PyTorch leaves them to the backend).

    Backward: every rank's input gradient is ``dst``'s output gradient
    (``broadcast`` from ``dst``; divided by the group size for AVG).

    Raises:
        TypeError: ``tensor`` is not a Tensor, ``op`` not a ReduceOp, ``dst`` not an int.
        ValueError: ``dst`` is not in the group, or the ranks' shapes, dtypes,
            ``dst`` or ``op`` differ (on every rank).
        RuntimeError: in the backward, for ``op`` other than SUM and AVG.
    """
    record = _agree_on_rooted_call("reduce", group, tensor, "dst", dst, op)
    return _apply(_Reduce, record, dst, op, group, tensor)


def reduce_scatter(output, input_list, op=ReduceOp.SUM, group=None):
    """Reduce ``input_list[r]`` over the ranks with ``op``; rank r gets the result, differentiably.

    Args:
        output (Tensor): gives the result's shape and dtype; it is also filled
            with the result (as PyTorch's), by a differentiable copy.
        input_list (list[Tensor]): one tensor per rank of the group, each of
            ``output``'s shape and dtype.
        op (ReduceOp): the reduction (default SUM); backward needs SUM or AVG.
        group (ProcessGroup, optional): the group (default: the world).

    Returns:
        Tensor: a new tensor holding the reduction of slot ``rank``.

    Backward: ``input_list[r]`` gets rank r's output gradient (``all_gather``;
    divided by the group size for AVG).

    Raises:
        TypeError: ``output`` or an item of ``input_list`` is not a Tensor, or ``op`` not a ReduceOp.
        ValueError: ``input_list`` does not hold one tensor per rank of
            ``output``'s shape and dtype, or the ranks' shapes, dtypes or ``op``
            differ (on every rank).
        RuntimeError: ``output`` is a leaf that requires grad; in the
            backward, ``op`` other than SUM and AVG.
    """
    g = collectives._group(group)

    def check():
        out = _writable(_tensor_arg(output, "reduce_scatter", "output"), "reduce_scatter", "output")
        collectives._check_op(op, "reduce_scatter")
        _tensor_list(input_list, g.size(), "reduce_scatter", "input_list", like=out)
        return _summary(out, op=op.name)

    summary, problem = _local_check(check)
    record = _agree("reduce_scatter", g, summary, problem, _items(input_list))
    result = _apply(_ReduceScatter, record, op, group, *input_list)
    _fill([output], [result])
    return result


def all_gather(tensor, group=None):
    """Gather every rank's ``tensor`` on every rank, differentiably.

    Args:
        tensor (Tensor): this rank's contribution (same shape and dtype on every rank).
        group (ProcessGroup, optional): the group (default: the world).

    Returns:
        tuple[Tensor]: one new tensor per rank of the group, in group-rank order.

    Backward: each rank's input gradient is the sum over ranks of the
    gradient of its slot (``reduce_scatter`` SUM).

    Raises:
        TypeError: ``tensor`` is not a Tensor.
        ValueError: the ranks' shapes or dtypes differ (on every rank).
    """
    g = collectives._group(group)

    def check():
        return _summary(_tensor_arg(tensor, "all_gather", "tensor"))

    record = _agree("all_gather", g, *_local_check(check), [tensor])
    return _apply(_AllGather, record, group, tensor)


def all_to_all(output_tensor_list, input_tensor_list, group=None):
    """Rank i sends ``input_tensor_list[j]`` to rank j, which receives it as its output ``i``, differentiably.

    Args:
        output_tensor_list (list[Tensor]): one tensor per rank; gives each
            received tensor's shape, and is filled with the results (as
            PyTorch's), by differentiable copies.
        input_tensor_list (list[Tensor]): one tensor per rank. Shapes may
            differ per peer, but ``input_tensor_list[j]`` on rank i must have as
            many elements as ``output_tensor_list[i]`` on rank j; one dtype for all.
        group (ProcessGroup, optional): the group (default: the world).

    Returns:
        tuple[Tensor]: new tensors, one per rank, shaped like ``output_tensor_list``.

    Backward: the same exchange with the roles swapped: output gradient i
    goes back to rank i as the gradient of its ``input_tensor_list[rank]``.

    Raises:
        TypeError: the lists are not lists of Tensors.
        ValueError: the tensors' dtypes differ (on this or another rank), or the
            element counts of what ranks send and expect do not match (on every rank).
        RuntimeError: a list does not hold one tensor per rank, or an output
            is a leaf that requires grad.
    """
    g = collectives._group(group)
    n = g.size()

    def check():
        outputs = _rank_list(output_tensor_list, n, "output")
        for t in outputs:
            _writable(t, "all_to_all", "output_tensor_list")
        inputs = _rank_list(input_tensor_list, n, "input")
        dtype = collectives._one_dtype([t.array for t in outputs + inputs], "all_to_all")
        return _exchange_counts(dtype, [t.array.size for t in inputs], [t.array.size for t in outputs])

    summary, problem = _local_check(check)
    record = _agree("all_to_all", g, summary, problem, _items(input_tensor_list), _counts_fit)
    shapes = [tuple(t.shape) for t in output_tensor_list]
    results = _apply(_AllToAll, record, group, shapes, *input_tensor_list)
    _fill(output_tensor_list, results)
    return results


def _rank_list(items, size, which):
    """An all-to-all list as a list of ``size`` Tensors (shapes may differ); errors as ``collectives.all_to_all``."""
    name = f"{which}_tensor_list"
    if not isinstance(items, (list, tuple)):
        raise TypeError(f"all_to_all: {name} must be a list of {size} Tensors, got {type(items).__name__}")
    if len(items) != size:
        raise RuntimeError(f"all_to_all: {name} holds {len(items)} tensors, but the group has {size} ranks")
    return [_tensor_arg(t, "all_to_all", f"{name}[{i}]") for i, t in enumerate(items)]


def all_to_all_single(output, input, output_split_sizes=None, input_split_sizes=None, group=None):  # noqa: A002
    """Split ``input`` along dim 0 and send block j to rank j; concatenate what arrives, differentiably.

    Args:
        output (Tensor): gives the result's shape (the rows received from every
            rank, in rank order); it is also filled with the result (as
            PyTorch's), by a differentiable copy.
        input (Tensor): the rows to send, block j to rank j; at least one dimension.
        output_split_sizes, input_split_sizes (list[int], optional): rows per
            rank along dim 0 (default: equal splits).
        group (ProcessGroup, optional): the group (default: the world).

    Returns:
        Tensor: a new tensor of ``output``'s shape.

    Backward: the same exchange with the split sizes swapped: the gradient
    of the rows received from rank j goes back to rank j's sent rows.

    Raises:
        TypeError: ``output`` or ``input`` is not a Tensor.
        ValueError: a tensor has no dimension, the dtypes differ, or what the
            ranks send and expect does not match (on every rank).
        RuntimeError: split sizes do not sum to dim 0 or are not one per rank,
            dim 0 does not divide equally, or ``output`` is a leaf that requires grad.
    """
    g = collectives._group(group)
    n = g.size()

    def check():
        out = _writable(_tensor_arg(output, "all_to_all_single", "output"), "all_to_all_single", "output")
        inp = _tensor_arg(input, "all_to_all_single", "input")
        dtype = collectives._one_dtype([out.array, inp.array], "all_to_all_single")
        counts = []
        for t, splits, name in ((inp, input_split_sizes, "input"), (out, output_split_sizes, "output")):
            if t.ndim == 0:
                raise ValueError(f"all_to_all_single: {name} must have at least one dimension to split along")
            row = math.prod(t.shape[1:])
            counts.append([rows * row for rows in collectives._split_sizes(splits, t.shape[0], n, name)])
        return _exchange_counts(dtype, *counts)

    summary, problem = _local_check(check)
    record = _agree("all_to_all_single", g, summary, problem, [input], _counts_fit)
    result = _apply(
        _AllToAllSingle, record, group, tuple(output.shape), _split_list(output_split_sizes),
        _split_list(input_split_sizes), input,
    )
    _fill([output], [result])
    return result


def _split_list(splits):
    """Split sizes as a list of ints, or None for equal splits (PyTorch also takes an empty list for those)."""
    return [int(s) for s in splits] if splits else None


def all_reduce(tensor, op=ReduceOp.SUM, group=None):
    """Reduce every rank's ``tensor`` with ``op``; every rank gets the result, differentiably.

    Args:
        tensor (Tensor): this rank's input (same shape and dtype on every rank); not written.
        op (ReduceOp): the reduction (default SUM); backward needs SUM or AVG.
        group (ProcessGroup, optional): the group (default: the world).

    Returns:
        Tensor: a new tensor holding the reduction, identical on every rank.

    Backward: the all_reduce (same op, SUM or AVG) of the ranks' output gradients.

    Raises:
        TypeError: ``tensor`` is not a Tensor, or ``op`` not a ReduceOp.
        ValueError: the ranks' shapes, dtypes or ``op`` differ (on every rank).
        RuntimeError: in the backward, for ``op`` other than SUM and AVG.
    """
    g = collectives._group(group)

    def check():
        t = _tensor_arg(tensor, "all_reduce", "tensor")
        collectives._check_op(op, "all_reduce")
        return _summary(t, op=op.name)

    record = _agree("all_reduce", g, *_local_check(check), [tensor])
    return _apply(_AllReduce, record, op, group, tensor)
