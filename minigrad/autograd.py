"""The user-facing autograd API: ``backward``, ``grad``, ``Function`` and ``gradcheck``.

All of it drives the one executor in ``minigrad.engine``.
"""

from __future__ import annotations

import numpy as np

from minigrad import backend, engine, views
from minigrad.anomaly import detect_anomaly, is_anomaly_enabled, set_detect_anomaly
from minigrad.function import FunctionNode
from minigrad.grad_mode import _state as _grad_state
from minigrad.grad_mode import no_grad
from minigrad.tensor import Tensor

__all__ = [
    "backward", "grad", "Function", "gradcheck", "GradcheckError", "set_detect_anomaly", "detect_anomaly",
    "is_anomaly_enabled",
]


def _as_tuple(x):
    if isinstance(x, Tensor):
        return (x,)
    return tuple(x)


def _root_gradients(outputs, grad_outputs, create_graph, fn):
    """Validate outputs and their seed gradients; return (edges, gradient Tensors)."""
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    else:
        grad_outputs = _as_tuple(grad_outputs) if not isinstance(grad_outputs, Tensor) else (grad_outputs,)
    if len(grad_outputs) != len(outputs):
        raise ValueError(f"{fn}: got {len(grad_outputs)} gradients for {len(outputs)} outputs")
    edges, grads = [], []
    for i, (out, g) in enumerate(zip(outputs, grad_outputs)):
        if not isinstance(out, Tensor):
            raise TypeError(f"{fn}: element {i} of the outputs is a {type(out).__name__}, expected a Tensor")
        if not out.requires_grad:
            raise RuntimeError(
                f"{fn}: element {i} of the outputs does not require grad and has no grad_fn "
                "(was it computed under no_grad, or from tensors without requires_grad=True?)"
            )
        if g is None:
            if out.array.size != 1:
                raise RuntimeError(
                    f"{fn}: grad can be implicitly created only for scalar outputs, but output {i} "
                    f"has shape {tuple(out.shape)}; pass a gradient of that shape"
                )
            g = Tensor._make(_ones_like(out.array), False, None, 0)
        else:
            if not isinstance(g, Tensor):
                numeric = isinstance(g, (int, float, np.number)) or (
                    backend.is_array(g) and g.dtype.kind in "biufc"
                )
                if not numeric:
                    raise TypeError(
                        f"{fn}: gradient {i} must be a Tensor, an array or a number, got {type(g).__name__}"
                    )
                g = Tensor(backend.as_array(g, dtype=out.dtype, device=out.device))
            if g.shape != out.shape:
                raise RuntimeError(
                    f"{fn}: gradient {i} has shape {tuple(g.shape)} but the output has shape "
                    f"{tuple(out.shape)}; they must match"
                )
            if g.device != out.device:
                raise RuntimeError(f"{fn}: gradient {i} is on {g.device} but the output is on {out.device}")
            if not create_graph:
                g = g.detach()
        edges.append(out._gradient_edge())
        grads.append(g)
    return edges, grads


def _ones_like(array):
    xp = backend.get_array_module(array)
    return xp.ones(array.shape, dtype=array.dtype)


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None) -> None:
    """Accumulate gradients of ``tensors`` into the ``.grad`` of the graph's leaves.

    Args:
        tensors: a Tensor or a sequence of Tensors to differentiate.
        grad_tensors: seed gradients, one per tensor (None for scalars).
        retain_graph: keep saved values for another backward (default: ``create_graph``).
        create_graph: record the backward for higher-order derivatives.
        inputs: when given, only these tensors' ``.grad`` are accumulated.

    Raises:
        RuntimeError: a tensor does not require grad, a non-scalar lacks a seed
            gradient, a seed has the wrong shape, or the graph was freed.
    """
    tensors = _as_tuple(tensors)
    if retain_graph is None:
        retain_graph = create_graph
    edges, grads = _root_gradients(tensors, grad_tensors, create_graph, "backward")
    if inputs is None:
        engine.run_backward(edges, grads, retain_graph=retain_graph, create_graph=create_graph)
        return
    inputs = _as_tuple(inputs)
    captured = _run_capture(edges, grads, inputs, retain_graph, create_graph)
    for t, g in zip(inputs, captured):
        if g is None:
            continue
        if t.grad_fn is None:
            t._gradient_edge()[0].accumulate(g, create_graph)
        else:
            t.grad = g if t.grad is None else t.grad + g


def _run_capture(edges, grads, inputs, retain_graph, create_graph):
    keys = []
    for i, t in enumerate(inputs):
        if not isinstance(t, Tensor) or not t.requires_grad:
            raise RuntimeError(f"input {i} to differentiate does not require grad")
        keys.append(t._gradient_edge())
    capture = dict.fromkeys(keys)
    engine.run_backward(edges, grads, retain_graph=retain_graph, create_graph=create_graph, capture=capture)
    return [capture[k] for k in keys]


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, allow_unused=False):
    """Gradients of ``outputs`` with respect to ``inputs``, returned (not accumulated).

    Args:
        outputs: Tensor or sequence of Tensors.
        inputs: Tensor or sequence of Tensors (leaves or intermediate results).
        grad_outputs: seed gradients, one per output (None for scalars).
        retain_graph: keep the graph (default: ``create_graph``).
        create_graph: make the results differentiable (higher-order gradients).
        allow_unused: return None for inputs the outputs do not depend on
            instead of raising.

    Returns:
        A tuple with one gradient Tensor (or None) per input.

    Raises:
        RuntimeError: an input was not used and ``allow_unused`` is False, or
            any error of ``backward``.
    """
    outputs = _as_tuple(outputs)
    inputs = _as_tuple(inputs)
    if retain_graph is None:
        retain_graph = create_graph
    edges, grads = _root_gradients(outputs, grad_outputs, create_graph, "grad")
    results = _run_capture(edges, grads, inputs, retain_graph, create_graph)
    for i, g in enumerate(results):
        if g is None and not allow_unused:
            raise RuntimeError(
                f"grad: input {i} (shape {tuple(inputs[i].shape)}) was not used in the graph of the "
                "outputs; pass allow_unused=True if that is expected"
            )
    return tuple(results)


# ------------------------------------------------------------------ Function


class FunctionCtx:
    """The ``ctx`` handed to a user ``Function``'s forward and backward."""

    def save_for_backward(self, *tensors) -> None:
        """Keep Tensors for ``backward`` (read them back from ``ctx.saved_tensors``)."""
        for t in tensors:
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(f"save_for_backward takes Tensors or None, got {type(t).__name__}")
        self._to_save = tensors
        self._saved_versions = tuple(None if t is None else views.version_of(t) for t in tensors)

    def mark_non_differentiable(self, *tensors) -> None:
        """Declare outputs that get no gradient (indices, masks)."""
        self._non_differentiable = {id(t) for t in tensors}


class _UserFunctionNode(FunctionNode, FunctionCtx):
    """The graph node of one application of a user ``Function``; also its ``ctx``."""

    function = None
    fresh_gradients = False  # its backward may return tensors it keeps (ctx.saved_tensors): leaves copy them

    def name(self) -> str:
        return self.function.__name__ + "Backward"

    @property
    def saved_tensors(self) -> tuple:
        """The Tensors given to ``save_for_backward``."""
        if self._released:
            from minigrad.function import FREED_GRAPH_MESSAGE  # noqa: PLC0415

            raise RuntimeError(FREED_GRAPH_MESSAGE)
        saved = getattr(self, "_to_save", ())
        for i, (t, expected) in enumerate(zip(saved, getattr(self, "_saved_versions", ()))):
            if t is not None and views.version_of(t) != expected:
                which = f"saved tensor {i} of {self.name()}"
                raise RuntimeError(views.saved_tensor_modified_message(t, views.version_of(t), expected, which))
        return saved

    def run_backward(self, grads, create_graph):
        if self._released:
            from minigrad.function import FREED_GRAPH_MESSAGE  # noqa: PLC0415

            raise RuntimeError(FREED_GRAPH_MESSAGE)
        result = self.function.backward(self, *grads)
        if not isinstance(result, tuple):
            result = (result,)
        if len(result) < len(self.next_edges):
            raise RuntimeError(
                f"{self.function.__name__}.backward returned {len(result)} gradients, "
                f"expected {len(self.next_edges)} (one per forward input)"
            )
        result = result[: len(self.next_edges)]
        checked = []
        for i, (g, shape) in enumerate(zip(result, self.input_shapes)):
            if g is not None and self.needs_input_grad[i]:
                if not isinstance(g, Tensor):
                    g = Tensor(g)
                if g.shape != shape:
                    raise RuntimeError(
                        f"{self.function.__name__}.backward returned a gradient of shape {tuple(g.shape)} "
                        f"for input {i}, expected {tuple(shape)}"
                    )
            checked.append(g if i < len(self.needs_input_grad) and self.needs_input_grad[i] else None)
        return tuple(checked)


class Function:
    """Base class for user-defined differentiable operations (PyTorch's ``autograd.Function``).

    Subclass it with two static methods and call ``MyOp.apply(*inputs)``::

        class Cube(mg.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * x * x

            @staticmethod
            def backward(ctx, grad):
                (x,) = ctx.saved_tensors
                return grad * 3 * x * x

    ``forward`` runs with grad recording off and returns a Tensor or a tuple
    of Tensors; ``backward`` gets one gradient per output and returns one per
    input of ``forward`` (None for non-Tensor inputs). Written with Tensor
    ops, ``backward`` supports ``create_graph=True``.

    Not reproduced from PyTorch: ``ctx.set_materialize_grads``, ``once_differentiable``,
    ``setup_context`` and vmap support.
    """

    @staticmethod
    def forward(ctx, *args, **kwargs):
        """Compute the outputs; override in a subclass."""
        raise NotImplementedError(
            "a Function subclass must define forward(ctx, *args) as a staticmethod"
        )

    @staticmethod
    def backward(ctx, *grad_outputs):
        """Compute the input gradients; override in a subclass."""
        raise NotImplementedError(
            "a Function subclass must define backward(ctx, *grads) as a staticmethod"
        )

    @classmethod
    def apply(cls, *args, **kwargs):
        """Run ``forward`` and record one graph node for the whole call."""
        node = _UserFunctionNode()
        node.function = cls
        with no_grad():
            outputs = cls.forward(node, *args, **kwargs)
        single = isinstance(outputs, Tensor)
        outs = (outputs,) if single else tuple(outputs)
        for o in outs:
            if not isinstance(o, Tensor):
                raise TypeError(f"{cls.__name__}.forward must return Tensors, got {type(o).__name__}")
        tensors = [a for a in args if isinstance(a, Tensor)]
        record = _grad_state.enabled and any(t.requires_grad for t in tensors)
        if not record:
            return outputs
        node.xp = backend.get_array_module(*(o.array for o in outs))
        node._record(args)
        node.input_shapes = tuple(getattr(a, "shape", ()) for a in args)
        node.num_outputs = len(outs)
        node.output_meta = [(o.shape, o.dtype) for o in outs]
        non_diff = getattr(node, "_non_differentiable", set())
        wrapped = tuple(
            Tensor._make(o.array, False, None, 0)
            if id(o) in non_diff or o.dtype.kind not in "fc"
            else Tensor._make(o.array, True, node, i)
            for i, o in enumerate(outs)
        )
        return wrapped[0] if single else wrapped


# ------------------------------------------------------------------ gradcheck


class GradcheckError(RuntimeError):
    """Raised by ``gradcheck`` when analytical and numerical gradients differ."""


def gradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True) -> bool:
    """Compare ``fn``'s autograd gradients with central finite differences.

    Args:
        fn: function of the input Tensors returning a Tensor or tuple of Tensors.
        inputs: a Tensor or tuple of Tensors; those with ``requires_grad`` are
            checked and must be float64 (finite differences need the precision).
        eps: perturbation for the finite differences.
        atol, rtol: tolerances of the comparison.
        raise_exception: raise ``GradcheckError`` on mismatch (else return False).

    Returns:
        True when every Jacobian entry matches.

    Raises:
        TypeError: an input that requires grad is not float64.
        GradcheckError: a mismatch (names the input, output and the worst entry).
    """
    if not callable(fn):
        raise TypeError(f"gradcheck: fn must be callable, got {type(fn).__name__}")
    inputs = _as_tuple(inputs)
    checked = [i for i, t in enumerate(inputs) if isinstance(t, Tensor) and t.requires_grad]
    if not checked:
        raise ValueError("gradcheck: no input has requires_grad=True")
    for i in checked:
        if inputs[i].dtype != np.float64:
            raise TypeError(
                f"gradcheck: input {i} has dtype {inputs[i].dtype}; finite differences need float64 "
                "(use .double())"
            )
    result = fn(*inputs)
    if not (isinstance(result, Tensor) or (isinstance(result, tuple) and all(isinstance(r, Tensor) for r in result))):
        raise TypeError(f"gradcheck: fn must return a Tensor or a tuple of Tensors, got {type(result).__name__}")
    outputs = _as_tuple(result)
    for o_idx, out in enumerate(outputs):
        if not out.requires_grad:
            continue
        analytical = _analytical_jacobian(fn, inputs, checked, o_idx, out)
        numerical = _numerical_jacobian(fn, inputs, checked, o_idx, eps)
        for i, a, n in zip(checked, analytical, numerical):
            if not np.allclose(a, n, atol=atol, rtol=rtol):
                worst = tuple(int(i) for i in np.unravel_index(np.argmax(np.abs(a - n)), a.shape))
                message = (
                    f"gradcheck: Jacobian mismatch for output {o_idx} w.r.t. input {i} "
                    f"(shape {tuple(inputs[i].shape)}); at (output element, input element) {worst}: "
                    f"numerical {n[worst]:.6g} vs analytical {a[worst]:.6g}"
                )
                if raise_exception:
                    raise GradcheckError(message)
                return False
    return True


def _analytical_jacobian(fn, inputs, checked, o_idx, out):
    rows = [np.zeros((out.array.size, inputs[i].array.size)) for i in checked]
    for k in range(out.array.size):
        outputs = _as_tuple(fn(*inputs))
        target = outputs[o_idx]
        seed = np.zeros(target.array.size)
        seed[k] = 1.0
        seed_t = Tensor(backend.to_device(seed.reshape(target.shape).astype(target.dtype), target.device))
        grads = grad(target, [inputs[i] for i in checked], seed_t, allow_unused=True)
        for row, g in zip(rows, grads):
            if g is not None:
                row[k] = backend.to_numpy(g.array).ravel()
    return rows


def _numerical_jacobian(fn, inputs, checked, o_idx, eps):
    jacobians = []
    # Grad mode stays on: fn may itself call autograd.grad (gradients of gradients).
    for i in checked:
        if not inputs[i].array.flags.c_contiguous:
            inputs[i].array = inputs[i].array.copy()  # perturb through a flat view below
        flat = inputs[i].array.reshape(-1)
        size_out = _as_tuple(fn(*inputs))[o_idx].array.size
        jac = np.zeros((size_out, flat.size))
        for j in range(flat.size):
            original = flat[j].item()
            flat[j] = original + eps
            plus = backend.to_numpy(_as_tuple(fn(*inputs))[o_idx].array).ravel().copy()
            flat[j] = original - eps
            minus = backend.to_numpy(_as_tuple(fn(*inputs))[o_idx].array).ravel().copy()
            flat[j] = original
            jac[:, j] = (plus - minus) / (2 * eps)
        jacobians.append(jac)
    return jacobians

