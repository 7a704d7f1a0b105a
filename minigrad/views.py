"""Views and version counters: which tensors share memory, and how often it was written in place.

A *view* is a tensor whose array is a window on another tensor's array:
``reshape``/``view``, ``permute``/``transpose``, ``expand``, basic indexing
``t[0, 1:]``, and ``detach()``. A tensor and all its views share one
``VersionCounter``; every in-place op bumps it (``t._version`` reads it).

Why: a graph node that keeps a tensor for its backward records the version
it saw (``FunctionNode.retain_inputs``/``retain_outputs``) and checks it when
the backward reads the value. A saved value that was overwritten in place
raises PyTorch's error instead of giving a stale gradient.

For autograd a view also remembers its *root base* (the tensor whose array
owns the memory) and the chain of view ops that leads from the base to it
(``ViewInfo``). An in-place op on a view is recorded as an update of the
base (``inplace.CopySlices``), and other views of that base replay their
chain on the updated base the next time they are used (``refresh_view``),
as PyTorch regenerates a view's ``grad_fn``.

Counters are made lazily: a tensor that was never viewed nor written in
place has none and is at version 0.
"""

from __future__ import annotations


class VersionCounter:
    """How many in-place writes the memory shared by a tensor and its views has seen."""

    __slots__ = ("value",)

    def __init__(self):
        self.value = 0


class ViewInfo:
    """How a view was made from its root base.

    Attributes:
        base: the root base Tensor (not itself a view).
        ops: the view ops (``ViewNode`` instances) from the base's array to the
            view's, in order; they keep their parameters after backward.
        version: the counter's value when the view's ``grad_fn`` was last
            derived from the base's history (a mismatch means the base was
            written in place since, and the view's history must be replayed).
    """

    __slots__ = ("base", "ops", "version")

    def __init__(self, base, ops, version):
        self.base = base
        self.ops = ops
        self.version = version

    def view_array(self, array):
        """Apply the chain of view ops to ``array`` (shaped like the base)."""
        for op in self.ops:
            array = op.view_array(array)
        return array

    def replay(self, base):
        """Apply the chain to the Tensor ``base`` as recorded ops (the view's new history)."""
        for op in self.ops:
            base = op.fresh()(base)
        return base


def counter_of(tensor) -> VersionCounter:
    """The tensor's version counter, made on first use."""
    counter = tensor._version_counter
    if counter is None:
        counter = tensor._version_counter = VersionCounter()
    return counter


def version_of(tensor) -> int:
    """The tensor's version: how many in-place writes its memory has seen."""
    counter = tensor._version_counter
    return 0 if counter is None else counter.value


def bump_version(tensor) -> None:
    """Count one in-place write to ``tensor``'s memory (seen by all its views)."""
    counter_of(tensor).value += 1


def share_counter(view, source) -> None:
    """Make ``view`` share ``source``'s version counter (they share memory, as ``detach`` does)."""
    view._version_counter = counter_of(source)


def mark_view(view, source, op) -> None:
    """Record that ``view`` was made from ``source`` by the view op ``op`` and shares its memory.

    The view shares the counter, and its ``ViewInfo`` points at the root base
    with ``op`` appended to the chain that made ``source`` (when ``source`` is
    itself a view).
    """
    counter = counter_of(source)
    view._version_counter = counter
    info = source._view
    if info is None:
        view._view = ViewInfo(source, (op,), counter.value)
    else:
        view._view = ViewInfo(info.base, info.ops + (op,), counter.value)


def refresh_view(view) -> None:
    """Re-derive ``view``'s history from its base after the base was written in place.

    Called by ``FunctionNode`` when it records a view as an input whose
    ``ViewInfo.version`` is stale, so that the view's gradient flows through
    the base's current history (``CopySlices``) rather than the overwritten one.
    """
    info = view._view
    base = info.base
    if base.requires_grad:
        fresh = info.replay(base)
        view.grad_fn = fresh.grad_fn
        view._output_nr = fresh._output_nr
        view._requires_grad = fresh.requires_grad
    info.version = version_of(base)


def is_view_array(out, source) -> bool:
    """True when the array ``out`` is a view of the array ``source`` (NumPy or CuPy).

    NumPy and CuPy point a view's ``base`` at the array that owns the memory
    (or at ``source`` itself when ``source``'s own base is not an array), so
    one identity test tells a view from a copy without comparing memory bounds.
    """
    owner = out.base
    return owner is not None and (owner is source or owner is source.base)


def saved_tensor_modified_message(tensor, version, expected, which) -> str:
    """PyTorch's error text for a saved tensor that was written in place before its backward ran."""
    return (
        "one of the variables needed for gradient computation has been modified by an inplace "
        f"operation: [{tensor.dtype} {tuple(tensor.shape)}], which is {which}, is at version {version}; "
        f"expected version {expected} instead. Hint: enable anomaly detection with "
        "mg.autograd.set_detect_anomaly(True) to find the operation that failed to compute its gradient, "
        "and clone() the tensor before modifying it in place, or modify it out of place."
    )
