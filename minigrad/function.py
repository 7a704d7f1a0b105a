"""Graph nodes: ``FunctionNode`` (one per op application) and ``AccumulateGrad``.

Every differentiable op is a small subclass of ``FunctionNode`` with a
``forward`` on raw arrays and a ``backward`` on Tensors right beside it.
Calling an op instance runs ``FunctionNode.__call__``, which:

1. unwraps the input Tensors to their arrays (Python scalars pass through),
   checking that they all live on one device;
2. runs ``forward`` on those arrays; ``forward`` keeps what its backward
   needs, explicitly: ``self.retain_inputs(...)`` / ``self.retain_outputs(...)``
   for values the backward differentiates through, plain attributes for
   constants (masks, shapes);
3. when grad mode is on and some input requires grad, turns the op instance
   into a graph node: one edge per input pointing at the node that will
   receive that input's gradient (its ``grad_fn``, or the accumulate-grad
   node of a leaf), and a sequence number that orders the backward pass;
4. wraps the output arrays into Tensors whose ``grad_fn`` is this node.

::

      x (leaf) ──► AccumulateGrad(x) ◄─┐
                                       │ edge
      y = x * w   ──►   Mul  ──────────┤
                                       │ edge
      w (leaf) ──► AccumulateGrad(w) ◄─┘

``backward(*grad_outputs)`` receives one gradient Tensor per output and
returns one per input (``None`` where no gradient is needed). It is written
with Tensor ops, so the same code gives first-order gradients (run under
``no_grad``) and higher-order ones (run with ``create_graph=True``, when the
backward itself is recorded).
"""

from __future__ import annotations

import itertools

import numpy as np

from minigrad import backend, views
from minigrad.anomaly import _mode as _anomaly
from minigrad.anomaly import forward_trace
from minigrad.grad_mode import _state as _grad_state
from minigrad.tensor import Tensor

_ndarray = np.ndarray
_numpy = np
_make_tensor = Tensor._make

_sequence = itertools.count()

# Accumulate-grad nodes run before any op node that is ready at the same
# time, so that hooks on leaves (the DDP Reducer) fire as early as possible.
_ACCUMULATE_PRIORITY = -(2**62)

FREED_GRAPH_MESSAGE = (
    "Trying to backward through the graph a second time (or to read saved values after "
    "they were freed). Saved intermediate values of the graph are freed when you call "
    ".backward() or autograd.grad(). Pass retain_graph=True to the first call if you need "
    "to backward through the graph a second time."
)


class Node:
    """Base of everything the backward executor can run.

    Attributes:
        next_edges: one entry per input, ``(node, output_nr)`` of the node that
            receives that input's gradient, or None when the input needs none.
        priority: heap key of the executor's ready queue (smaller runs first).
    """

    __slots__ = ("next_edges", "priority", "_pre_hooks", "__weakref__", "__dict__")

    num_outputs = 1
    # True for nodes that must run even when no gradient reached them (distributed recv nodes).
    runs_without_gradient = False
    # True when run_backward returns only gradients in memory it just made, or (views of) the gradients it
    # received: the executor then hands a new array to a leaf without a copy (see GraphTask.owned).
    fresh_gradients = False

    def name(self) -> str:
        """The node's display name, like PyTorch's (``MulBackward``)."""
        return type(self).__name__ + "Backward"

    def run_backward(self, grads, create_graph):
        """Return the gradients for ``next_edges`` given gradients of the outputs."""
        raise NotImplementedError

    @property
    def next_functions(self) -> tuple:
        """``((node, output_nr), ...)``, one pair per input, like PyTorch's ``grad_fn.next_functions``.

        A leaf that requires grad appears as its ``AccumulateGrad`` node
        (``.variable`` is the leaf), an input that needs no gradient as
        ``(None, 0)``, and so does a Python number given to an op
        (``(x * 2).grad_fn.next_functions`` has two entries, as in PyTorch).
        Where an op's inputs differ from PyTorch's version of it, the entries
        follow minigrad's inputs.
        """
        return tuple((None, 0) if edge is None else edge for edge in self.next_edges)

    def register_prehook(self, output_nr: int, fn) -> None:
        """Run ``fn(grad)`` on the gradient of output ``output_nr`` before the backward."""
        if self._pre_hooks is None:
            self._pre_hooks = []
        self._pre_hooks.append((output_nr, fn))

    def release(self) -> None:
        """Free saved values (called by the executor unless ``retain_graph``)."""

    def __repr__(self):
        return f"<{self.name()} at {id(self):#x}>"


class FunctionNode(Node):
    """Base class of the built-in ops. See the module docstring for ``__call__``."""

    # Set on recording: whether each input wants a gradient.
    needs_input_grad = ()
    _inputs = None
    _saved_inputs = None
    _saved_outputs = None
    _released = False
    _grad_destinations = None  # {input index: offer} around a backward (minigrad.destinations.run_backward)
    uses_grad_destinations = False  # True where the backward computes into offered memory (minigrad.destinations)
    fresh_gradients = True  # every built-in op's backward; a user Function's may return tensors it keeps

    def forward(self, *arrays):
        """Compute the outputs (arrays) from the input arrays."""
        raise NotImplementedError

    def backward(self, *grad_outputs):
        """Return one gradient Tensor (or None) per input, given one per output."""
        raise NotImplementedError

    def __call__(self, *inputs):
        arrays = []
        requires_grad = False
        numpy_only = True
        for x in inputs:
            if isinstance(x, Tensor):
                data = x.array
                if type(data) is not _ndarray:
                    numpy_only = False
                if x._view is not None and x._view.version != x._version_counter.value and _grad_state.enabled:
                    views.refresh_view(x)  # its base was written in place since its grad_fn was made
                if x._requires_grad:
                    requires_grad = True
                arrays.append(data)
            else:
                if type(x) is not _ndarray and type(x) is not float and type(x) is not int:
                    numpy_only = False
                    if isinstance(x, _numpy.generic):
                        x = x.item()  # a NumPy scalar operand is a Python number for type promotion
                arrays.append(x)
        self.xp = _numpy if numpy_only else backend.get_array_module(*arrays)
        record = requires_grad and _grad_state.enabled
        if record:
            self._inputs = inputs
        try:
            outputs = self.forward(*arrays)
        except (ValueError, TypeError) as error:
            # An op's forward is PyTorch's kernel, whose checks raise RuntimeError (shapes that do not broadcast
            # or multiply), so a ValueError becomes one; checks PyTorch makes in Python (ValueError) belong before
            # the op runs, in the functional or module code. NumPy's subclasses take other args.
            kind = RuntimeError if isinstance(error, ValueError) else TypeError
            raise kind(f"{type(self).__name__}: {error} ({_describe(arrays)})") from error
        if type(outputs) is not _ndarray and not backend.is_array(outputs) and type(outputs) is not tuple:
            outputs = self.xp.asarray(outputs)  # reductions hand back NumPy scalars; Tensors hold arrays
        if not record:
            if type(outputs) is tuple:
                return tuple(_make_tensor(out, False, None, 0) for out in outputs)
            return _make_tensor(outputs, False, None, 0)
        self._inputs = None
        self._record(inputs)
        saved_outputs = self._saved_outputs
        if type(outputs) is tuple:
            self.num_outputs = len(outputs)
            self.output_meta = [(out.shape, out.dtype) for out in outputs]
            results = tuple(_make_tensor(out, True, self, i) for i, out in enumerate(outputs))
            if saved_outputs is not None:
                for i in saved_outputs:
                    saved_outputs[i] = outputs[i]
                self._output_counters = {i: (views.counter_of(results[i]), 0) for i in saved_outputs}
            return results
        if saved_outputs is not None:
            saved_outputs[0] = outputs
            out = _make_tensor(outputs, True, self, 0)
            self._output_counters = {0: (views.counter_of(out), 0)}
            return out
        return _make_tensor(outputs, True, self, 0)

    def _record(self, inputs):
        edges = []
        needs = []
        for x in inputs:
            if isinstance(x, Tensor) and x._requires_grad:
                fn = x.grad_fn
                if fn is not None:
                    edges.append((fn, x._output_nr))
                else:
                    edges.append(x._gradient_edge())
                needs.append(True)
            else:
                edges.append(None)
                needs.append(False)
        self.next_edges = tuple(edges)
        self.needs_input_grad = tuple(needs)
        self.priority = -next(_sequence)
        self._pre_hooks = None
        if _anomaly.enabled:
            self._forward_trace = forward_trace()

    # -- what forward keeps for backward --------------------------------

    def retain_inputs(self, indices) -> None:
        """Keep the input Tensors at ``indices`` for ``backward`` (see ``saved_inputs``).

        ``indices`` are in increasing order. A no-op when the call is not recorded.
        """
        inputs = self._inputs
        if inputs is not None:
            saved = inputs if len(indices) == len(inputs) else tuple(map(inputs.__getitem__, indices))
            self._saved_inputs = saved
            versions = []
            for x in saved:
                if isinstance(x, Tensor):  # Parameters too
                    counter = x._version_counter
                    versions.append(0 if counter is None else counter.value)
                else:
                    versions.append(None)
            self._saved_versions = versions

    def retain_outputs(self, indices) -> None:
        """Keep the outputs at ``indices`` for ``backward`` (see ``saved_outputs``).

        Only the arrays are held; the Tensors are rebuilt with this node as
        their ``grad_fn`` when read, so no reference cycle is created.
        """
        self._saved_outputs = dict.fromkeys(indices)

    @property
    def saved_inputs(self) -> tuple:
        """The input Tensors kept by ``retain_inputs``, in the order given there."""
        if self._released:
            raise RuntimeError(FREED_GRAPH_MESSAGE)
        saved = self._saved_inputs
        for i, (x, expected) in enumerate(zip(saved, self._saved_versions)):
            if expected is not None and x._version_counter is not None and x._version_counter.value != expected:
                which = f"input {i} of {self.name()}"
                raise RuntimeError(
                    views.saved_tensor_modified_message(x, x._version_counter.value, expected, which)
                )
        return saved

    @property
    def saved_outputs(self) -> tuple:
        """The outputs kept by ``retain_outputs`` as Tensors whose ``grad_fn`` is this node."""
        if self._released:
            raise RuntimeError(FREED_GRAPH_MESSAGE)
        outputs = tuple(Tensor._make(a, True, self, i) for i, a in self._saved_outputs.items())
        for out, (i, (counter, expected)) in zip(outputs, self._output_counters.items()):
            if counter.value != expected:
                which = f"output {i} of {self.name()}"
                raise RuntimeError(views.saved_tensor_modified_message(out, counter.value, expected, which))
        return outputs

    def rebind_saved_output(self, output_nr, tensor) -> None:
        """Keep ``tensor``'s memory as saved output ``output_nr`` (an in-place op wrote the output there).

        The backward then reads the value from ``tensor`` and checks that it
        was not written again since (its current version is expected).
        """
        saved = self._saved_outputs
        if saved is not None and output_nr in saved:
            saved[output_nr] = tensor.array
            self._output_counters[output_nr] = (views.counter_of(tensor), views.version_of(tensor))

    # -- executor interface ----------------------------------------------

    def run_backward(self, grads, create_graph):
        if self._released:
            raise RuntimeError(FREED_GRAPH_MESSAGE)
        result = self.backward(*grads)
        if type(result) is not tuple:
            result = (result,)
        return result

    def release(self) -> None:
        xp, num_outputs = self.xp, self.num_outputs
        self.__dict__.clear()  # everything forward kept: saved values, masks, shapes
        self.xp, self.num_outputs = xp, num_outputs
        self._released = True


class ViewNode(FunctionNode):
    """An op whose output may be a view of its first input's memory (reshape, permute, expand, ``t[0]``).

    When the output array really is a view (NumPy decides for ``reshape``),
    the output Tensor shares the input's version counter and records how it
    was made (``views.mark_view``), so in-place writes through either are
    seen by the other and by autograd. Subclasses define ``view_array`` (the
    view on a raw array, from the op's parameters) and ``fresh`` (a new op
    with the same parameters), and keep their parameters after backward.
    """

    def __call__(self, a, *rest):
        out = FunctionNode.__call__(self, a, *rest)
        owner = out.array.base  # views.is_view_array, inlined: every reshape and t[i] comes here
        if owner is not None and (owner is a.array or owner is a.array.base):
            views.mark_view(out, a, self)
        return out

    def view_array(self, array):
        """The view of ``array`` this op makes (its parameters only; no recording)."""
        raise NotImplementedError

    def fresh(self):
        """A new, unrecorded op with the same parameters (to replay the view on another tensor)."""
        raise NotImplementedError

    def release(self) -> None:
        # View ops keep only shapes and basic indices, and views replay them later.
        self._released = True


def _describe(arrays) -> str:
    """'inputs: shape (2, 3) float32, scalar 2.0' for error messages."""
    parts = []
    for a in arrays:
        if backend.is_array(a):
            parts.append(f"shape {tuple(a.shape)} {a.dtype}")
        else:
            parts.append(f"{type(a).__name__} {a!r}"[:60])
    return "inputs: " + ", ".join(parts)


class AccumulateGrad(Node):
    """The node that receives a leaf's gradient and adds it to ``leaf.grad``.

    Order of effects when it runs: the leaf's tensor hooks transform the
    gradient, then it is accumulated (into ``.grad``, or into the caller's
    gradient map when the executor was given one), then the leaf's
    post-accumulate-grad hooks run with the leaf as argument.

    Attributes:
        destination: ``provider() -> array or None`` offering memory for the
            leaf's gradient, or None (``minigrad.destinations``).
    """

    __slots__ = ("_variable", "destination")

    def __init__(self, variable):
        # A strong reference, as in PyTorch: a leaf that only the graph still uses (made inside a
        # function that returns just the loss) lives until the backward, so its hooks run.
        self._variable = variable
        self.destination = None
        self.next_edges = ()
        self.priority = _ACCUMULATE_PRIORITY - next(_sequence)
        self._pre_hooks = None

    @property
    def variable(self):
        """The leaf Tensor this node accumulates into."""
        return self._variable

    def name(self) -> str:
        return "AccumulateGrad"

    def run_backward(self, grads, create_graph):
        raise RuntimeError("AccumulateGrad is run by the executor through accumulate()")

    def accumulate(self, grad, create_graph, grad_map=None, keep=False) -> None:
        """Run the leaf's hooks and add ``grad`` to its ``.grad`` (or to ``grad_map``).

        The first gradient is stored as it is when ``keep`` is true: the
        caller hands its memory over (the executor made it and nobody else
        holds it, or an op computed it into a destination offered for this
        leaf). Otherwise ``.grad`` gets a copy, so that it never shares memory
        with the caller's tensors or with another leaf's gradient. The leaf's
        tensor hooks may keep the gradient they see, so after any hook it is
        copied too. Later gradients are added into ``.grad`` in place, as
        PyTorch does: ``.grad`` stays the same Tensor, and its version counter
        counts the write. With ``create_graph`` the (recorded) gradient is
        stored as it is and later gradients are summed out of place (a new,
        recorded ``.grad``), as in PyTorch.
        """
        var = self._variable
        if var._hooks:
            keep = False
            for hook in var._hooks:
                new = hook(grad)
                if new is not None:
                    grad = new
        keep = keep or create_graph
        if grad_map is not None:
            old = grad_map.get(var)
            if old is None:
                grad_map[var] = grad if keep else _copy(grad)
            else:
                grad_map[var] = add_gradients(old, grad, create_graph)
            return
        old = var._grad
        if old is None:
            var._grad = grad if keep else _copy(grad)
        elif keep and grad is old:
            views.bump_version(old)  # an op added this pass's gradient into .grad itself (minigrad.destinations)
        elif create_graph or not can_add_into(old):
            var._grad = add_gradients(old, grad, create_graph)
        else:
            # PyTorch's ``variable.grad += new_grad``: the same Tensor, its memory updated, so
            # that a reference kept to ``.grad`` (``g = p.grad``) sees later passes, as in PyTorch.
            old.array += grad.array
            views.bump_version(old)
        if var._post_accumulate_hooks:
            for hook in var._post_accumulate_hooks:
                hook(var)


def can_add_into(grad) -> bool:
    """Whether a later gradient can be added into ``grad``, a leaf's ``.grad``, in place.

    False for a read-only NumPy array (a broadcast view): such a ``.grad`` is
    replaced by the sum instead.
    """
    return getattr(grad.array.flags, "writeable", True)  # CuPy's flags have no such field: its arrays are writable


def _copy(grad):
    """``grad`` in memory of its own (writable, not a view)."""
    return Tensor._make(grad.array.copy(), False, None, 0)


def add_gradients(a, b, create_graph):
    """Sum two gradients out of place (gradient arrays may be shared, never mutate them).

    With ``create_graph`` the sum is a recorded op (higher-order gradients need it).
    """
    if create_graph:
        return a + b
    return Tensor._make(a.array + b.array, False, None, 0)
