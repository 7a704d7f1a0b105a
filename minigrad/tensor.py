"""``Tensor``: an array (NumPy or CuPy) plus what autograd needs to know about it.

A Tensor is either a *leaf* (made by the user, ``grad_fn is None``) or the
output of a recorded op (``grad_fn`` is the op's graph node and
``_output_nr`` says which of its outputs this is). Gradients flow back along
``grad_fn``; for a leaf that requires grad they end in its accumulate-grad
node, which the leaf creates on demand and holds only weakly (the graph
owns it).

The class body holds what a tensor is (its array, autograd state, conversions)
and the methods that do more than apply one op. The methods that are one op or
one function (``t + u``, ``t.exp()``, ``t.sin_()``, ``t.sum()``, ``t.gather(...)``)
are set from tables at the end of this file, after the op modules they use.
"""

from __future__ import annotations

import weakref

import numpy as np

from minigrad import backend

_FLOAT_KINDS = ("f", "c")


class Tensor:
    """A multi-dimensional array that can record the operations applied to it.

    Args:
        data: a NumPy or CuPy array (wrapped without copying), or anything
            ``numpy.asarray`` accepts.
        requires_grad: record ops on this tensor so its gradient can be computed.

    Use ``mg.tensor(...)`` to build tensors from Python data with PyTorch's
    dtype rules (Python floats become float32).

    Attributes:
        array: the NumPy or CuPy ndarray holding the values. The library's
            own code reads and writes it directly; user code reaches it through
            ``.numpy()``, ``.data`` (a Tensor, as in PyTorch) or ``np.asarray``.
    """

    __slots__ = (
        "array",
        "_requires_grad",
        "_grad",
        "grad_fn",
        "_output_nr",
        "_accumulator",
        "_hooks",
        "_post_accumulate_hooks",
        "_retains_grad",
        "name",
        "_version_counter",
        "_view",
        "__weakref__",
    )

    # NumPy defers to our reflected operators (np.float32(2) * t -> t.__rmul__).
    __array_ufunc__ = None

    def __init__(self, data, requires_grad: bool = False):
        if isinstance(data, Tensor):
            data = data.array
        elif not backend.is_array(data):
            data = np.asarray(data)
        self._set_slots(data, False, None, 0)
        if requires_grad is not False:
            self.requires_grad_(requires_grad)

    @staticmethod
    def _make(data, requires_grad, grad_fn, output_nr):
        """Internal fast constructor: wraps ``data`` as is."""
        t = _new_object(Tensor)
        t._set_slots(data, requires_grad, grad_fn, output_nr)
        return t

    def _set_slots(self, data, requires_grad, grad_fn, output_nr):
        """Every slot of a new tensor: the array, its place in the graph, and no grad, hooks, name or view."""
        self.array = data
        self._requires_grad = requires_grad
        self._grad = None
        self.grad_fn = grad_fn
        self._output_nr = output_nr
        self._accumulator = None
        self._hooks = None
        self._post_accumulate_hooks = None
        self._retains_grad = False
        self.name = None
        self._version_counter = None
        self._view = None

    # -- properties ----------------------------------------------------------

    @property
    def shape(self) -> tuple:
        """The shape as a tuple of ints."""
        return self.array.shape

    @property
    def dtype(self):
        """The NumPy dtype of the data."""
        return self.array.dtype

    @property
    def ndim(self) -> int:
        """Number of dimensions."""
        return self.array.ndim

    @property
    def device(self) -> str:
        """Where the data lives: "cpu" or "cuda:N"."""
        return backend.device_of(self.array)

    @property
    def data(self) -> Tensor:
        """This tensor's values as a new tensor that autograd does not track (PyTorch's ``.data``).

        The result shares memory with this tensor, so writes through it change
        this tensor, but it shares neither history nor version counter: autograd
        does not see those writes. That is why ``p.data.add_(g, alpha=-lr)``
        may update a parameter that requires grad, and also why a value saved
        for a backward and then changed through ``.data`` goes unnoticed;
        ``detach()`` shares the version counter and so is checked.

        Assigning a Tensor makes this tensor hold that tensor's values (memory
        shared, shape, dtype and device may change), leaving its history and
        ``requires_grad`` as they are.

        Raises (on assignment):
            TypeError: the value is not a Tensor (a raw array goes to ``.array``).
            RuntimeError: this tensor requires grad and the value's dtype is not floating point.
        """
        return Tensor._make(self.array, False, None, 0)

    @data.setter
    def data(self, value):
        if not isinstance(value, Tensor):
            raise TypeError(
                f"Tensor.data must be set to a Tensor, got {type(value).__name__} "
                "(wrap it with mg.as_tensor, or assign a NumPy/CuPy array to .array)"
            )
        if self.requires_grad and value.array.dtype.kind not in _FLOAT_KINDS:
            raise RuntimeError(
                f"data set to a tensor that requires gradients must be floating point or complex, got {value.dtype}"
            )
        self.array = value.array

    @property
    def grad(self):
        """The gradient accumulated into this tensor by backward passes (None until the first).

        Assigning checks what PyTorch checks: a Tensor (or None) of this
        tensor's shape, dtype and device.

        Raises:
            TypeError: the assigned value is not a Tensor or None.
            RuntimeError: its shape, dtype or device differs from this tensor's.
        """
        return self._grad

    @grad.setter
    def grad(self, value):
        if value is not None:
            _check_assigned_grad(self, value)
        self._grad = value

    @property
    def _version(self) -> int:
        """How many in-place writes this tensor's memory has seen (shared with its views)."""
        return _views.version_of(self)

    @property
    def _base(self):
        """The tensor this one is a view of (None when it owns its memory), as in PyTorch."""
        return None if self._view is None else self._view.base

    @property
    def is_leaf(self) -> bool:
        """True for tensors not produced by a recorded op (user-made, or requires_grad=False)."""
        return self.grad_fn is None

    @property
    def is_cuda(self) -> bool:
        """True when the data lives on a CUDA device."""
        return self.device != "cpu"

    def size(self, dim=None):
        """The shape, or its length along ``dim``.

        Raises:
            TypeError: ``dim`` is not an int. IndexError: ``dim`` is out of range.
        """
        if dim is None:
            return self.array.shape
        if not isinstance(dim, (int, np.integer)) or isinstance(dim, bool):
            raise TypeError(f"size(): dim must be an int, got {type(dim).__name__}")
        if not -self.array.ndim <= dim < self.array.ndim:
            raise IndexError(
                f"size(): dim {dim} is out of range for a tensor with {self.array.ndim} dimension(s)"
            )
        return self.array.shape[dim]

    def dim(self) -> int:
        """Number of dimensions."""
        return self.array.ndim

    def numel(self) -> int:
        """Number of elements."""
        return int(self.array.size)

    def element_size(self) -> int:
        """Bytes per element."""
        return self.array.itemsize

    @property
    def itemsize(self) -> int:
        """Bytes per element (as ``element_size()``)."""
        return self.array.itemsize

    @property
    def nbytes(self) -> int:
        """Bytes the elements take: ``numel() * element_size()`` (of this view, not its base)."""
        return self.array.nbytes

    def __len__(self):
        if self.array.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self.array.shape[0]

    def __iter__(self):
        if self.array.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self.array.shape[0]))

    def __repr__(self):
        extra = ""
        if self.grad_fn is not None:
            extra = f", grad_fn=<{self.grad_fn.name()}>"
        elif self.requires_grad:
            extra = ", requires_grad=True"
        device = self.device
        dev = "" if device == "cpu" else f", device='{device}'"
        body = format_values(backend.to_numpy(self.array))
        return f"tensor({body}{_dtype_note(self.dtype)}{dev}{extra})"

    def __bool__(self):
        if self.array.size != 1:
            raise RuntimeError(
                f"the truth value of a tensor with {self.array.size} elements is ambiguous; "
                "use .any() or .all()"
            )
        return bool(self.array)

    def __hash__(self):
        return id(self)

    def __float__(self):
        if self.array.size != 1:  # Python's conversions raise ValueError, as PyTorch's do
            raise ValueError(f"only one-element tensors can be converted to Python scalars, got shape {self.shape}")
        return float(self.item())

    def __int__(self):
        if self.array.size != 1:
            raise ValueError(f"only one-element tensors can be converted to Python scalars, got shape {self.shape}")
        return int(self.item())

    def __index__(self):
        if self.dtype.kind not in "iub" or self.array.size != 1:
            raise TypeError("only integer tensors of a single element can be used as an index")
        return int(self.item())

    # -- autograd ------------------------------------------------------------

    @property
    def requires_grad(self) -> bool:
        """True when ops on this tensor are recorded, so that its gradient can be computed.

        Settable as in PyTorch: on leaves only, to a bool, and to True only for
        floating point tensors (an integer tensor would get truncated gradients).

        Raises:
            RuntimeError: set on a non-leaf, set to something other than a bool, or
                set to True on a tensor that is not floating point.
        """
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value) -> None:
        if self.grad_fn is not None:
            raise RuntimeError(self._non_leaf_message("the requires_grad flag"))
        if not isinstance(value, bool):
            raise RuntimeError(f"requires_grad must be a bool, got {type(value).__name__}")
        self._set_requires_grad(value)

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        """Set ``requires_grad`` in place and return self.

        On a non-leaf (a tensor an op produced) only ``True`` is allowed, and
        changes nothing: it records already.

        Raises:
            TypeError: ``requires_grad`` is not a bool.
            RuntimeError: ``False`` on a non-leaf, or ``True`` on a tensor that is not floating point.
        """
        if not isinstance(requires_grad, bool):
            raise TypeError(f"requires_grad_(): requires_grad must be a bool, got {type(requires_grad).__name__}")
        if self.grad_fn is not None:
            if requires_grad:
                return self
            raise RuntimeError(self._non_leaf_message("requires_grad_(False)"))
        self._set_requires_grad(requires_grad)
        return self

    def _set_requires_grad(self, value: bool) -> None:
        if value and self.array.dtype.kind not in _FLOAT_KINDS:
            raise RuntimeError(
                f"only floating point tensors can require gradients, got dtype {self.dtype} "
                "(convert it first, e.g. .float())"
            )
        self._requires_grad = value

    def _non_leaf_message(self, what: str) -> str:
        return (
            f"you can only change requires_grad flags of leaf tensors: {what} on a tensor produced by "
            f"{self.grad_fn.name()}; use .detach() for a leaf that does not require grad"
        )

    def _gradient_edge(self):
        """``(node, output_nr)`` that receives this tensor's gradient.

        A leaf's accumulate-grad node is made on first use. The graph owns it
        and it owns the leaf; the leaf holds it only weakly (no reference
        cycle), and makes a new one once the graphs that used it are gone.
        """
        view = self._view
        if view is not None and view.version != self._version_counter.value:
            _views.refresh_view(self)
        if self.grad_fn is not None:
            return (self.grad_fn, self._output_nr)
        ref = self._accumulator
        node = None if ref is None else ref()
        if node is None:
            node = AccumulateGrad(self)
            self._accumulator = weakref.ref(node)
        return (node, 0)

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None) -> None:
        """Compute the gradient of this tensor w.r.t. the graph leaves, into their ``.grad``.

        Args:
            gradient: gradient of some scalar w.r.t. this tensor, same shape.
                Optional for a scalar (one element) tensor.
            retain_graph: keep the graph for another backward (defaults to ``create_graph``).
            create_graph: record the backward, for higher-order gradients.
            inputs: when given, accumulate only into these leaves' ``.grad``.

        Raises:
            RuntimeError: the tensor does not require grad, ``gradient`` is missing
                for a non-scalar, or the graph was already freed.
        """
        from minigrad import autograd  # noqa: PLC0415  (autograd imports this module)

        autograd.backward(self, gradient, retain_graph, create_graph, inputs=inputs)

    def detach(self) -> Tensor:
        """A new leaf sharing this tensor's data (and version counter), cut off from the graph."""
        out = Tensor._make(self.array, False, None, 0)
        _views.share_counter(out, self)
        return out

    def detach_(self) -> Tensor:
        """Cut this tensor off from the graph in place and return it."""
        self.grad_fn = None
        self._requires_grad = False
        return self

    def retain_grad(self) -> None:
        """Keep ``.grad`` for this non-leaf tensor after backward (leaves always keep it)."""
        if self.grad_fn is None:
            if not self.requires_grad:
                raise RuntimeError("can't retain_grad on a tensor that has requires_grad=False")
            return
        if self._retains_grad:
            return
        self._retains_grad = True
        ref = weakref.ref(self)

        def store_grad(grad):
            tensor = ref()
            if tensor is not None:
                tensor.grad = grad.detach() if tensor.grad is None else add_gradients(tensor.grad, grad, False)

        self.grad_fn.register_prehook(self._output_nr, store_grad)

    def register_hook(self, hook):
        """Run ``hook(grad) -> Tensor or None`` on this tensor's gradient when it is computed.

        A returned Tensor replaces the gradient that flows on. Returns a handle
        whose ``remove()`` unregisters the hook.

        Raises:
            TypeError: ``hook`` is not callable.
            RuntimeError: the tensor does not require grad.
        """
        _check_hook(hook, "register_hook")
        if not self.requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self.grad_fn is not None:
            self.grad_fn.register_prehook(self._output_nr, hook)
            return _RemovableHandle(self.grad_fn._pre_hooks, (self._output_nr, hook))
        if self._hooks is None:
            self._hooks = []
        self._hooks.append(hook)
        return _RemovableHandle(self._hooks, hook)

    def register_post_accumulate_grad_hook(self, hook):
        """Run ``hook(tensor)`` after this leaf's ``.grad`` was accumulated in a backward.

        Returns a handle whose ``remove()`` unregisters the hook.

        Raises:
            TypeError: ``hook`` is not callable.
            RuntimeError: the tensor is not a leaf that requires grad.
        """
        _check_hook(hook, "register_post_accumulate_grad_hook")
        if self.grad_fn is not None:
            raise RuntimeError("post accumulate grad hooks can only be registered on leaf tensors")
        if not self.requires_grad:
            raise RuntimeError(
                "cannot register a post accumulate grad hook on a tensor that doesn't require gradient"
            )
        if self._post_accumulate_hooks is None:
            self._post_accumulate_hooks = []
        self._post_accumulate_hooks.append(hook)
        return _RemovableHandle(self._post_accumulate_hooks, hook)

    # -- conversion ----------------------------------------------------------

    def numpy(self) -> np.ndarray:
        """The data as a NumPy array (shared on the CPU).

        Raises:
            RuntimeError: the tensor requires grad (call ``.detach().numpy()``) or is on a GPU.
        """
        if self.requires_grad:
            raise RuntimeError("can't call numpy() on a tensor that requires grad; use .detach().numpy()")
        if self.device != "cpu":
            raise TypeError(f"can't convert a {self.device} tensor to NumPy; use .cpu() first")
        return self.array

    def __array__(self, dtype=None, copy=None):
        array = backend.to_numpy(self.array)
        return array if dtype is None else array.astype(dtype, copy=False)

    def tolist(self):
        """The data as (nested) Python lists."""
        return backend.to_numpy(self.array).tolist()

    def item(self):
        """The value of a one-element tensor as a Python number.

        Raises:
            RuntimeError: the tensor does not have exactly one element, as PyTorch.
        """
        if self.array.size != 1:
            raise RuntimeError(f"item() needs a tensor with one element, this one has shape {self.shape}")
        return self.array.item()

    def to(self, *args, dtype=None, device=None) -> Tensor:
        """Return a tensor on ``device`` and/or of ``dtype`` (self when nothing changes).

        Accepts ``t.to("cuda:0")``, ``t.to(mg.float64)``, ``t.to("cpu", mg.float32)``.
        The copy is differentiable.

        Raises:
            TypeError: the dtype is not a numeric dtype.
            RuntimeError: the device is unknown or unavailable (ValueError: ``"cpu:N"``).
        """
        for arg in args:
            if isinstance(arg, (str, int)) and not isinstance(arg, bool):
                device = arg
            else:
                dtype = arg
        result = self
        if device is not None:
            device = backend.normalize_device(device)
            if device != self.device:
                result = _ops_shape.ToDevice(device)(result)
        if dtype is not None:
            dtype = _numeric_dtype(dtype, "to")
            if dtype != result.dtype:
                result = _ops_ew.Cast(dtype)(result)
        return result

    def cpu(self) -> Tensor:
        """This tensor on the CPU."""
        return self.to("cpu")

    def cuda(self, device=None) -> Tensor:
        """This tensor on a CUDA device (default: the current one)."""
        return self.to(device="cuda" if device is None else device)  # to() checks and normalizes the device

    def float(self) -> Tensor:
        """Cast to float32."""
        return self.to(np.float32)

    def double(self) -> Tensor:
        """Cast to float64."""
        return self.to(np.float64)

    def long(self) -> Tensor:
        """Cast to int64 (not differentiable)."""
        return Tensor._make(self.array.astype(np.int64), False, None, 0)

    def contiguous(self) -> Tensor:
        """A C-contiguous copy (self if already contiguous)."""
        return self if self.array.flags.c_contiguous else self.clone()

    # -- in-place ops (minigrad/inplace.py: views, version counters, recording) ----

    def add_(self, other, alpha=1) -> Tensor:
        """``self += alpha * other`` in place (``other``: Tensor, array or number, broadcast to ``self``)."""
        return _inplace.binary(self, other if alpha == 1 else other * alpha, "add_", np.add, _ops_ew.Add)

    def sub_(self, other, alpha=1) -> Tensor:
        """``self -= alpha * other`` in place."""
        return _inplace.binary(self, other if alpha == 1 else other * alpha, "sub_", np.subtract, _ops_ew.Sub)

    def pow_(self, exponent) -> Tensor:
        """``self **= exponent`` in place."""
        return _inplace.binary(self, exponent, "pow_", np.power, _ops_ew.Pow)

    __iadd__ = add_
    __isub__ = sub_
    __ipow__ = pow_

    def clamp_(self, min=None, max=None) -> Tensor:  # noqa: A002  (PyTorch's names)
        """Clip into [min, max] in place (either bound may be None)."""
        return _inplace.unary(
            self, "clamp_", _result_update(lambda t: t.clamp(min, max), "clamp_"), lambda old: old.clamp(min, max)
        )

    clip_ = clamp_

    def zero_(self) -> Tensor:
        """Fill with zeros in place."""
        return _inplace.fill(self, 0, "zero_")

    def fill_(self, value) -> Tensor:
        """Fill with ``value`` (a number or a 0-d Tensor, which may require grad) in place.

        Raises:
            TypeError: ``value`` is not a number. RuntimeError: a Tensor ``value`` is not 0-d, or the
            dtype cannot hold the number (as PyTorch: 300 in uint8; -1 wraps around to 255).
        """
        return _inplace.fill(self, value, "fill_")

    def copy_(self, src) -> Tensor:
        """Copy ``src`` (Tensor, array or number, broadcast to this shape, cast, moved) into this memory.

        Differentiable in ``src``; the old value gets a zero gradient.

        Raises:
            TypeError: ``src`` holds no numbers. RuntimeError: it does not broadcast to this shape.
        """
        return _inplace.copy_from(self, src)

    def masked_fill_(self, mask, value) -> Tensor:
        """Set the elements where the boolean ``mask`` (broadcast to this shape) is true to ``value``.

        Raises:
            RuntimeError: ``mask`` is not boolean, or its shape does not broadcast to this one (PyTorch's class).
        """
        mask_data = mask.array if isinstance(mask, Tensor) else mask
        value_data = value.array if isinstance(value, Tensor) else value
        if backend.is_array(mask_data) and mask_data.dtype != np.bool_:
            raise RuntimeError(f"masked_fill_: the mask must be a boolean tensor, got dtype {mask_data.dtype}")

        def update(data):
            try:
                backend.get_array_module(data).copyto(data, value_data, where=mask_data)
            except ValueError:  # NumPy's: the mask does not broadcast to the tensor
                mask_shape = list(getattr(mask_data, "shape", ()))
                raise RuntimeError(
                    f"masked_fill_: a mask of shape {mask_shape} does not broadcast to the tensor's {list(data.shape)}"
                ) from None

        return _inplace.apply_inplace(
            self, "masked_fill_", update, lambda old: _ops_ew.masked_fill(old, mask, value), (value,)
        )

    def index_add_(self, dim, index, source, alpha=1) -> Tensor:
        """Add ``alpha * source`` into the rows ``index`` along ``dim`` (repeated indices add up).

        Raises:
            IndexError: ``dim`` is out of range, or ``index`` is not 1-D.
            RuntimeError: ``index`` is not an int64/int32 tensor, an entry is out of range, or ``source``
                does not have the tensor's shape with ``len(index)`` along ``dim`` (PyTorch's classes).
        """
        axis = _ops_gather.check_index_add(self, dim, index, source, "index_add_")
        index_data = index.array
        where = (slice(None),) * axis + (index_data,)
        source = source if alpha == 1 else source * alpha
        source_data = source.array if isinstance(source, Tensor) else source

        def update(data):
            backend.scatter_add(data, where, source_data)

        return _inplace.apply_inplace(
            self, "index_add_", update, lambda old: old + _ops_index.IndexScatter(where, self.shape)(source), (source,)
        )

    def uniform_(self, a=0.0, b=1.0) -> Tensor:
        """Fill with samples from U(a, b) in place (PyTorch's ``from``/``to``).

        Raises:
            NotImplementedError: the tensor is not floating point (PyTorch's class; the samples would be truncated).
        """
        _inplace.expect_floating(self, "uniform_")
        return _inplace.random_fill(self, "uniform_", lambda gen, shape: gen.uniform(a, b, shape))

    def normal_(self, mean=0.0, std=1.0) -> Tensor:
        """Fill with samples from N(mean, std**2) in place.

        Raises:
            NotImplementedError: the tensor is not floating point (PyTorch's class; the samples would be truncated).
        """
        _inplace.expect_floating(self, "normal_")
        return _inplace.random_fill(self, "normal_", lambda gen, shape: gen.normal(mean, std, shape))

    def random_(self, low=None, high=None) -> Tensor:
        """Fill with integers drawn uniformly from [low, high) in place (``random_(high)`` means [0, high)).

        Raises:
            ValueError: no bound is given (PyTorch's full-range ``random_()`` is not supported).
            RuntimeError: ``low >= high``, as PyTorch.
        """
        if high is None:
            if low is None:
                raise ValueError("random_: give an upper bound, random_(to) or random_(from, to)")
            low, high = 0, low
        elif low is None:
            low = 0
        if low >= high:
            raise RuntimeError(f"random_: expects low < high, got low={low} and high={high}")
        return _inplace.random_fill(self, "random_", lambda gen, shape: gen.integers(low, high, shape))

    def __setitem__(self, index, value):
        _inplace.set_item(self, index, value)

    # -- operators and math ---------------------------------------------------
    #
    # The methods that are one op or one function (``t + u``, ``t.exp()``, ``t.sum()``,
    # ``t.sin_()``, ``t.gather(...)``) are set from tables at the end of this file. The ones
    # here do more than that.

    def __pos__(self):
        return self

    def __getitem__(self, index):
        return _ops_index.index(self, index)

    # -- reductions ----------------------------------------------------------

    def any(self, dim=None, keepdim=False):
        """True where any element is nonzero: over all elements, or along ``dim`` (an int or a tuple).

        A bool tensor (uint8 for a uint8 input, as PyTorch). Raises IndexError for a dim out of range.
        """
        return _truth_reduction(self, "any", dim, keepdim)

    def all(self, dim=None, keepdim=False):
        """True where every element is nonzero: over all elements, or along ``dim`` (an int or a tuple).

        A bool tensor (uint8 for a uint8 input, as PyTorch). Raises IndexError for a dim out of range.
        """
        return _truth_reduction(self, "all", dim, keepdim)

    # -- shape ---------------------------------------------------------------

    def reshape(self, *shape):
        """Same data in a new shape (one dimension may be -1)."""
        return _ops_shape.reshape(self, shape)

    def view(self, *shape):
        """This tensor's data with a new shape (one entry may be -1), sharing its memory.

        Raises:
            RuntimeError: the data's layout cannot take that shape without a copy (a transposed
                tensor flattened, ...), as in PyTorch; ``reshape`` copies then. A copy here would
                silently stop writes through the result from reaching this tensor.
        """
        out = _ops_shape.reshape(self, shape)
        if out.array.size and not backend.get_array_module(out.array).may_share_memory(out.array, self.array):
            raise RuntimeError(
                f"view size is not compatible with input tensor's size and stride: a tensor of shape {self.shape} "
                f"and strides {self.array.strides} cannot be viewed as {out.shape} without a copy; use .reshape(...) "
                "instead (or .contiguous() first)"
            )
        return out

    def permute(self, *dims):
        """Reorder the dimensions."""
        return _ops_shape.permute(self, dims)

    @property
    def T(self):  # noqa: N802  (PyTorch's name)
        """All dimensions reversed."""
        return _ops_shape.Permute(tuple(reversed(range(self.ndim))))(self)

    @property
    def mT(self):  # noqa: N802
        """The last two dimensions swapped (batched matrix transpose).

        Raises:
            RuntimeError: the tensor has fewer than 2 dimensions (PyTorch's class).
        """
        if self.ndim < 2:
            raise RuntimeError(f"mT needs a matrix or a batch of matrices, got a {self.ndim}-D tensor")
        return _ops_shape.transpose(self, -2, -1)

    def expand(self, *shape):
        """Broadcast to ``shape`` (-1 keeps a dimension)."""
        return _ops_shape.expand(self, shape)

    def expand_as(self, other):
        """Broadcast to ``other``'s shape."""
        return _ops_shape.expand(self, other.shape)

    # -- elementwise math in place (ops/math.py) -------------------------------------------

    def round_(self, decimals=None) -> Tensor:
        """``self = round(self, decimals)`` in place."""

        def rounded(t):
            return t.round(decimals)

        return _inplace.unary(self, "round_", _result_update(rounded, "round_"), rounded)

    # -- comparisons, logical and bitwise ops (ops/math.py; they record nothing) ----------------

    def __invert__(self):
        if self.dtype.kind not in "biu":
            raise TypeError("~ (operator.invert) is only defined for integer and bool tensors, got "
                            f"{self.dtype}")
        return _ops_math.bitwise_not(self)

    # -- gather and scatter (ops/gather.py) -----------------------------------------------------

    def scatter_(self, dim, index, src=None, *, value=None, reduce=None) -> Tensor:
        """``scatter`` in place (recorded for autograd like every in-place op)."""
        return _ops_gather.scatter_inplace(self, dim, index, src, value=value, reduce=reduce)

    # -- structure (ops/structure.py) ---------------------------------------------------------------

    def repeat(self, *sizes):
        """Tiled ``sizes[d]`` times along each dimension (at least one size per dimension); see ``mg.repeat``."""
        return _ops_structure.repeat(self, *sizes)

    def tile(self, *args, dims=None):
        """Tiled ``dims[d]`` times along each dimension (missing leading dims count as 1); see ``mg.tile``.

        ``t.tile(2, 3)``, ``t.tile((2, 3))`` and ``t.tile(dims=(2, 3))`` are the same.
        """
        return _ops_structure.tile(self, _varargs(args, dims, "tile"))

    def tril_(self, diagonal=0) -> Tensor:
        """``self = tril(self, diagonal)`` in place."""

        def lower(t):
            return t.tril(diagonal)

        return _inplace.unary(self, "tril_", _result_update(lower, "tril_"), lower)

    def triu_(self, diagonal=0) -> Tensor:
        """``self = triu(self, diagonal)`` in place."""

        def upper(t):
            return t.triu(diagonal)

        return _inplace.unary(self, "triu_", _result_update(upper, "triu_"), upper)

    def split(self, split_size, dim=0):
        """Views of ``split_size`` along ``dim``, or of the listed sizes; see ``mg.split``."""
        return _ops_structure.split(self, split_size, dim)

    def flip(self, *args, dims=None):
        """A copy reversed along ``dims`` (``t.flip(0, 1)``, ``t.flip((0, 1))`` or ``t.flip(dims=(0, 1))``)."""
        return _ops_structure.flip(self, _varargs(args, dims, "flip"))

    def hsplit(self, *indices_or_sections):
        """``tensor_split`` along dim 1 (dim 0 for 1-D); ``t.hsplit(1, 4)`` is ``t.hsplit([1, 4])``."""
        return _ops_splitting.hsplit(self, _ops_splitting.method_arguments(indices_or_sections))

    def vsplit(self, *indices_or_sections):
        """``tensor_split`` along dim 0 (at least 2-D); see ``mg.vsplit``."""
        return _ops_splitting.vsplit(self, _ops_splitting.method_arguments(indices_or_sections))

    def dsplit(self, *indices_or_sections):
        """``tensor_split`` along dim 2 (at least 3-D); see ``mg.dsplit``."""
        return _ops_splitting.dsplit(self, _ops_splitting.method_arguments(indices_or_sections))

    # -- statistics, products and determinants (ops/statistics.py, products.py, determinants.py) -------------

    def histc(self, bins=100, min=0, max=0):  # noqa: A002  (PyTorch's names)
        """Counts in ``bins`` equal bins over [min, max] (both 0: the data's range); see ``mg.histc``."""
        return _ops_statistics.histc(self, bins, min, max)

    def inner(self, other):
        """The sum of products over the last dimensions; see ``mg.inner``."""
        return _ops_products.inner(self, other)

    def vdot(self, other):
        """The dot product of two 1-D tensors; see ``mg.vdot``."""
        return _ops_products.vdot(self, other)

    def matrix_power(self, n):
        """The matrix to the integer power ``n`` (negative: of its inverse); see ``mg.matrix_power``."""
        return _ops_determinants.matrix_power(self, n)

    def is_floating_point(self) -> bool:
        """True for float16/float32/float64 tensors (complex ones are not floating point, as in PyTorch)."""
        return self.array.dtype.kind == "f"

    # PyTorch's method name: below this line in the class body (not in method bodies), ``type`` is this method.
    def type(self, dtype=None, non_blocking=False):
        """PyTorch's type name of this tensor (``"torch.FloatTensor"``), or this tensor converted to a type.

        ``t.type()`` gives PyTorch's exact string (``"torch.cuda.LongTensor"``
        for an int64 tensor on a GPU); ``t.type("torch.DoubleTensor")``,
        ``t.type(mg.DoubleTensor)`` or ``t.type(mg.float64)`` convert (a
        type name or legacy type also sets the device kind; a dtype keeps
        the device). See ``minigrad.legacy_tensors``.

        Raises:
            ValueError: an unknown type name. TypeError: not a name, legacy type or dtype.
            RuntimeError: a CUDA type where CUDA is not available.
        """
        return _legacy.tensor_type(self, dtype, non_blocking)


_new_object = object.__new__
_NUMBERS = (int, float, complex, np.number, np.bool_)


def _numeric_dtype(dtype, fn: str):
    """``dtype`` as a NumPy dtype, or TypeError naming ``fn`` when it is not a numeric dtype."""
    return resolve_numeric_dtype(dtype, f"{fn}(): {{given!r}} is neither a device nor a dtype",
                                 f"{fn}(): dtype must be numeric, got {{resolved}}")


def resolve_numeric_dtype(dtype, unknown: str, not_numeric: str) -> np.dtype:
    """``dtype`` (anything ``np.dtype`` takes) as a numeric NumPy dtype: bool, integer, floating or complex.

    Raises:
        TypeError: ``np.dtype`` refuses ``dtype`` (message ``unknown``), or the
            dtype is not numeric (message ``not_numeric``); each message is a
            ``str.format`` template of ``given`` (the argument) and, for the
            second, ``resolved`` (the NumPy dtype).
    """
    try:
        resolved = np.dtype(dtype)
    except TypeError:
        raise TypeError(unknown.format(given=dtype)) from None
    if resolved.kind not in "biufc":
        raise TypeError(not_numeric.format(given=dtype, resolved=resolved))
    return resolved


def _ufunc_update(ufunc):
    """An in-place update applying ``ufunc`` to the array (``out=`` itself).

    NumPy's TypeError (a float result for an integer tensor, ``-`` of a bool one) becomes PyTorch's RuntimeError.
    """

    def update(data):
        try:
            ufunc(data, out=data)
        except TypeError as error:
            raise RuntimeError(f"{ufunc.__name__} in place: {error}") from None

    return update


def _truth_reduction(t: Tensor, name: str, dim, keepdim: bool) -> Tensor:
    """``t.any``/``t.all`` (``name``) over ``dim`` (None: every element), without gradient."""
    axes = _normalize_axis(dim, t.ndim, name)
    if t.ndim == 0 and axes is not None:
        axes = ()  # PyTorch takes dim 0 or -1 of a 0-d tensor: nothing to reduce
    result = getattr(t.array, name)(axis=axes, keepdims=_expect_flag(keepdim, name, "keepdim"))
    if t.dtype == np.uint8:  # PyTorch keeps uint8 for these two
        result = result.astype(np.uint8)
    return Tensor._make(result, False, None, 0)


def _result_update(op, fn: str):
    """An in-place update writing ``op``'s out-of-place result back into the array.

    Raises PyTorch's RuntimeError (``inplace.check_castable``) when the
    result's dtype cannot be stored in the array (``sin_`` of an integer tensor).
    """

    def update(data):
        out = op(Tensor._make(data, False, None, 0)).array
        _inplace.check_castable(out.dtype, data.dtype, fn)
        data[...] = out

    return update


def _varargs(args, keyword, fn: str):
    """A method's ints given as ``*args`` (``t.flip(0, 1)``, ``t.flip((0, 1))``) or as the keyword (``dims=``).

    Raises:
        TypeError: both or neither were given.
    """
    if (keyword is None) == (not args):
        raise TypeError(f"{fn}(): give the dims either as arguments or as dims=, not both or neither")
    if keyword is not None:
        return keyword
    return args[0] if len(args) == 1 else args


# How tensors print; ``mg.set_printoptions`` changes these (PyTorch's defaults).
PRINT_OPTIONS = {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80, "sci_mode": None}


def format_values(values: np.ndarray) -> str:
    """The values of a tensor as ``repr`` shows them, in PyTorch's style (``PRINT_OPTIONS``).

    Floats get ``precision`` decimals (``1.5000``), or none when every value
    is a whole number of moderate size (``1.``); scientific notation when the
    magnitudes span more than 1000x, exceed 1e8 or go below 1e-4, unless
    ``sci_mode`` says otherwise.
    """
    options = PRINT_OPTIONS
    style = {"separator": ", ", "prefix": "tensor(", "threshold": options["threshold"],
             "edgeitems": options["edgeitems"], "max_line_width": options["linewidth"],
             "precision": options["precision"]}
    if values.dtype.kind == "f":
        magnitudes = np.abs(values[np.isfinite(values) & (values != 0)]).astype(np.float64)
        spread = magnitudes.size > 0 and (magnitudes.max() / magnitudes.min() > 1000 or magnitudes.max() > 1e8)
        whole = not spread and bool(np.all(magnitudes == np.round(magnitudes)))
        style["floatmode"] = "unique" if whole else "fixed"
        if options["sci_mode"] is False:
            style["suppress_small"] = True
        elif options["sci_mode"]:
            style["formatter"] = {"float_kind": lambda x: f"{x:.{options['precision']}e}"}
    return np.array2string(values, **style)


def _dtype_note(dtype) -> str:
    """``", dtype=..."`` unless ``dtype`` is one PyTorch leaves out (the default float, int64, bool)."""
    from minigrad.promotion import get_default_dtype  # noqa: PLC0415  (promotion imports this module)

    if dtype == get_default_dtype() or dtype == np.int64 or dtype == np.bool_:
        return ""
    return f", dtype={dtype}"


# What a ``.grad`` assignment must share with its tensor: (attribute, how PyTorch's error names it, its fix).
_GRAD_MUST_MATCH = (
    ("shape", "of size", "are the same size"),
    ("dtype", "with dtype", "have the same dtype"),
    ("device", "on device", "are on the same device"),
)


def _check_assigned_grad(tensor, grad) -> None:
    """Raise PyTorch's errors for a ``.grad`` assignment that does not fit ``tensor``."""
    if not isinstance(grad, Tensor):
        raise TypeError(f"assigned grad expected to be a Tensor or None but got grad of type {type(grad).__name__}")
    if grad.shape == tensor.shape and grad.dtype == tensor.dtype and grad.device == tensor.device:
        return  # the common case, decided without walking the table
    for attribute, phrase, fix in _GRAD_MUST_MATCH:
        given, wanted = getattr(grad, attribute), getattr(tensor, attribute)
        if given != wanted:
            if attribute == "shape":
                given, wanted = list(given), list(wanted)
            raise RuntimeError(
                f"attempting to assign a gradient {phrase} '{given}' to a tensor {phrase} '{wanted}'. "
                f"Please ensure that the gradient and the tensor {fix}"
            )


def _check_hook(hook, fn: str) -> None:
    if not callable(hook):
        raise TypeError(f"{fn}: hook must be callable, got {type(hook).__name__}")


def _compare(ufunc, a, b):
    a_data = a.array if isinstance(a, Tensor) else a
    b_data = b.array if isinstance(b, Tensor) else b
    for value in (a_data, b_data):
        numeric = (backend.is_array(value) and value.dtype.kind in "biufc") or (
            isinstance(value, (int, float, bool, complex, np.number, np.bool_))
        )
        if not numeric:
            if ufunc is np.equal or ufunc is np.not_equal:
                return NotImplemented  # Python then compares identities, as for any foreign object
            raise TypeError(f"comparison: cannot compare a Tensor with {type(value).__name__} {value!r:.40}")
    backend.get_array_module(a_data, b_data)
    try:
        result = ufunc(a_data, b_data)
    except ValueError:  # NumPy's, for shapes that do not broadcast; PyTorch's class is RuntimeError
        shapes = f"{tuple(getattr(a_data, 'shape', ()))} and {tuple(getattr(b_data, 'shape', ()))}"
        raise RuntimeError(f"comparison: the shapes of the operand and the other, {shapes}, do not broadcast") from None
    return Tensor._make(_as_array(result), False, None, 0)


def _as_array(value):
    """``value`` as an array (NumPy comparisons of 0-d arrays give NumPy scalars)."""
    return value if backend.is_array(value) else np.asarray(value)


class _RemovableHandle:
    """Returned by hook registration; ``remove()`` unregisters the hook."""

    def __init__(self, hooks, entry):
        self._hooks = hooks
        self._entry = entry

    def remove(self) -> None:
        """Unregister the hook (no error if already removed)."""
        if self._hooks is not None and self._entry in self._hooks:
            self._hooks.remove(self._entry)


# Imported last: these modules build on the Tensor class defined above.
from minigrad import inplace as _inplace  # noqa: E402
from minigrad import legacy_tensors as _legacy  # noqa: E402
from minigrad import views as _views  # noqa: E402
from minigrad.function import AccumulateGrad, add_gradients  # noqa: E402
from minigrad.linalg import decompositions as _linalg_decompositions  # noqa: E402
from minigrad.linalg import solvers as _linalg_solvers  # noqa: E402
from minigrad.ops import cumulative as _ops_cumulative  # noqa: E402
from minigrad.ops import determinants as _ops_determinants  # noqa: E402
from minigrad.ops import diagonal_forms as _ops_diagonal_forms  # noqa: E402
from minigrad.ops import differences as _ops_differences  # noqa: E402
from minigrad.ops import elementwise as _ops_ew  # noqa: E402
from minigrad.ops import gather as _ops_gather  # noqa: E402
from minigrad.ops import index_updates as _ops_index_updates  # noqa: E402
from minigrad.ops import indexing as _ops_index  # noqa: E402
from minigrad.ops import linalg as _ops_linalg  # noqa: E402
from minigrad.ops import math as _ops_math  # noqa: E402
from minigrad.ops import products as _ops_products  # noqa: E402
from minigrad.ops import reduce as _ops_reduce  # noqa: E402
from minigrad.ops import scan as _ops_scan  # noqa: E402
from minigrad.ops import shape as _ops_shape  # noqa: E402
from minigrad.ops import sorting as _ops_sorting  # noqa: E402
from minigrad.ops import splitting as _ops_splitting  # noqa: E402
from minigrad.ops import statistics as _ops_statistics  # noqa: E402
from minigrad.ops import structure as _ops_structure  # noqa: E402
from minigrad.ops import take_along as _ops_take_along  # noqa: E402
from minigrad.ops import windows as _ops_windows  # noqa: E402
from minigrad.ops._util import expect_flag as _expect_flag  # noqa: E402
from minigrad.ops._util import normalize_axis as _normalize_axis  # noqa: E402

# =====================================================================================================
# The methods that are one op or one function. They are set on the class here, below the imports,
# because the op modules build on the Tensor class:
#   - ``t.sin()`` is ``Sin()(t)``; ``t + u`` is ``Add()(t, u)`` and ``2 + t`` is ``Add()(2, t)``;
#   - ``t.sin_()`` writes ``t.sin()`` into ``t``'s memory (``minigrad/inplace.py`` records it for autograd);
#   - ``t.gather(1, i)`` is ``gather(t, 1, i)``: the method is the function itself, with its
#     signature and docstring.
# =====================================================================================================


def _as_method(function, name: str, doc: str | None):
    """``function`` named as the Tensor method ``name`` (for help(), tracebacks and the reference)."""
    function.__name__ = name
    function.__qualname__ = f"Tensor.{name}"
    function.__doc__ = doc
    return function


def _unary_method(op: type, name: str):
    """The method ``name`` that applies the op class ``op`` to the tensor: ``t.sin()`` is ``Sin()(t)``.

    Its docstring points to the function ``mg.name``, which applies the same op (as PyTorch's do).
    """

    def method(self):
        return op()(self)

    return _as_method(method, name, None if name.startswith("__") else _see_function(name))


def _see_function(name: str) -> str:
    return f"``mg.{name}(self)``: see ``minigrad.{name}``."


def _operator_methods(op: type, name: str):
    """The operator ``__name__`` and its reflected form ``__rname__``: ``t - u`` is ``op()(t, u)``, and
    ``2 - t`` (Python calls ``t.__rsub__(2)``) is ``op()(2, t)``."""

    def forward(self, other):
        return op()(self, other)

    def reflected(self, other):
        return op()(other, self)

    return _as_method(forward, f"__{name}__", None), _as_method(reflected, f"__r{name}__", None)


def _two_input_method(op: type, name: str):
    """The method ``name`` with the tensor as ``op``'s first input: ``t.pow(2)`` is ``Pow()(t, 2)``."""

    def method(self, other):
        return op()(self, other)

    return _as_method(method, name, _see_function(name))


def _comparison_method(ufunc, name: str):
    """The comparison operator ``name`` (``t < u``): a bool tensor from ``ufunc``, recording nothing."""

    def method(self, other):
        return _compare(ufunc, self, other)

    return _as_method(method, name, None)


def _in_place_binary_method(ufunc, op: type, name: str):
    """The in-place method ``name`` (``t.mul_(u)``): ``ufunc(t, u, out=t)``, recorded for autograd as ``op``.

    Like every in-place method, it raises PyTorch's RuntimeError when the result's dtype cannot be
    stored in the tensor (``minigrad.inplace.binary``: a float into an integer tensor, ``bool &= int``,
    integer division by zero).
    """
    doc = f"``self.{name[:-1]}(other)`` written into this tensor's memory (recorded for autograd)."

    def method(self, other):
        return _inplace.binary(self, other, name, ufunc, op)

    return _as_method(method, name, doc)


def _in_place_method(op, name: str, update=None):
    """The in-place method ``name`` (``t.sin_()``): ``op``'s result written into the tensor's memory.

    ``update(array)`` does the write (default: ``op``'s out-of-place result, cast back with PyTorch's
    check, ``_result_update``); ``op`` is what autograd records (``minigrad.inplace.unary``).
    """
    doc = f"``self.{name[:-1]}()`` written into this tensor's memory (recorded for autograd)."
    update = update or _result_update(op, name)

    def method(self):
        return _inplace.unary(self, name, update, op)

    return _as_method(method, name, doc)

# -- operators (ops/elementwise.py, linalg.py, math.py) --------------------------------------------

Tensor.__add__, Tensor.__radd__ = _operator_methods(_ops_ew.Add, "add")
Tensor.__sub__, Tensor.__rsub__ = _operator_methods(_ops_ew.Sub, "sub")
Tensor.__mul__, Tensor.__rmul__ = _operator_methods(_ops_ew.Mul, "mul")
Tensor.__truediv__, Tensor.__rtruediv__ = _operator_methods(_ops_ew.Div, "truediv")
Tensor.__pow__, Tensor.__rpow__ = _operator_methods(_ops_ew.Pow, "pow")
Tensor.__matmul__, Tensor.__rmatmul__ = _operator_methods(_ops_linalg.MatMul, "matmul")
Tensor.__mod__, Tensor.__rmod__ = _operator_methods(_ops_math.Remainder, "mod")
Tensor.__floordiv__, Tensor.__rfloordiv__ = _operator_methods(_ops_math.FloorDivide, "floordiv")
Tensor.__and__, Tensor.__rand__ = _operator_methods(_ops_math.BitwiseAnd, "and")
Tensor.__or__, Tensor.__ror__ = _operator_methods(_ops_math.BitwiseOr, "or")
Tensor.__xor__, Tensor.__rxor__ = _operator_methods(_ops_math.BitwiseXor, "xor")
Tensor.__neg__ = _unary_method(_ops_ew.Neg, "__neg__")
Tensor.__abs__ = _unary_method(_ops_ew.Abs, "__abs__")

# Comparisons give boolean tensors and record nothing.
Tensor.__eq__ = _comparison_method(np.equal, "__eq__")
Tensor.__ne__ = _comparison_method(np.not_equal, "__ne__")
Tensor.__lt__ = _comparison_method(np.less, "__lt__")
Tensor.__le__ = _comparison_method(np.less_equal, "__le__")
Tensor.__gt__ = _comparison_method(np.greater, "__gt__")
Tensor.__ge__ = _comparison_method(np.greater_equal, "__ge__")

# -- elementwise functions of one tensor (ops/elementwise.py, math.py) -----------------------------

Tensor.clone = _unary_method(_ops_ew.Clone, "clone")
Tensor.exp = _unary_method(_ops_ew.Exp, "exp")
Tensor.log = _unary_method(_ops_ew.Log, "log")
Tensor.sqrt = _unary_method(_ops_ew.Sqrt, "sqrt")
Tensor.tanh = _unary_method(_ops_ew.Tanh, "tanh")
Tensor.sigmoid = _unary_method(_ops_ew.Sigmoid, "sigmoid")
Tensor.relu = _unary_method(_ops_ew.ReLU, "relu")
Tensor.abs = _unary_method(_ops_ew.Abs, "abs")
Tensor.sin = _unary_method(_ops_math.Sin, "sin")
Tensor.cos = _unary_method(_ops_math.Cos, "cos")
Tensor.tan = _unary_method(_ops_math.Tan, "tan")
Tensor.asin = _unary_method(_ops_math.Asin, "asin")
Tensor.acos = _unary_method(_ops_math.Acos, "acos")
Tensor.atan = _unary_method(_ops_math.Atan, "atan")
Tensor.sinh = _unary_method(_ops_math.Sinh, "sinh")
Tensor.cosh = _unary_method(_ops_math.Cosh, "cosh")
Tensor.asinh = _unary_method(_ops_math.Asinh, "asinh")
Tensor.acosh = _unary_method(_ops_math.Acosh, "acosh")
Tensor.atanh = _unary_method(_ops_math.Atanh, "atanh")
Tensor.exp2 = _unary_method(_ops_math.Exp2, "exp2")
Tensor.expm1 = _unary_method(_ops_math.Expm1, "expm1")
Tensor.log2 = _unary_method(_ops_math.Log2, "log2")
Tensor.log10 = _unary_method(_ops_math.Log10, "log10")
Tensor.log1p = _unary_method(_ops_math.Log1p, "log1p")
Tensor.rsqrt = _unary_method(_ops_math.Rsqrt, "rsqrt")
Tensor.reciprocal = _unary_method(_ops_math.Reciprocal, "reciprocal")
Tensor.square = _unary_method(_ops_math.Square, "square")
Tensor.erf = _unary_method(_ops_math.Erf, "erf")
Tensor.erfinv = _unary_method(_ops_math.Erfinv, "erfinv")
Tensor.sign = _unary_method(_ops_math.Sign, "sign")
Tensor.floor = _unary_method(_ops_math.Floor, "floor")
Tensor.ceil = _unary_method(_ops_math.Ceil, "ceil")
Tensor.trunc = _unary_method(_ops_math.Trunc, "trunc")
Tensor.pow = _two_input_method(_ops_ew.Pow, "pow")

# -- their in-place forms --------------------------------------------------------------------------
# Each raises PyTorch's RuntimeError when the result's dtype cannot be stored in the tensor (``sin_`` of an
# integer tensor).

Tensor.neg_ = _in_place_method(Tensor.__neg__, "neg_", _ufunc_update(np.negative))
Tensor.abs_ = _in_place_method(Tensor.abs, "abs_", _ufunc_update(np.absolute))
Tensor.exp_ = _in_place_method(Tensor.exp, "exp_", _ufunc_update(np.exp))
Tensor.log_ = _in_place_method(Tensor.log, "log_", _ufunc_update(np.log))
Tensor.sqrt_ = _in_place_method(Tensor.sqrt, "sqrt_", _ufunc_update(np.sqrt))
Tensor.tanh_ = _in_place_method(Tensor.tanh, "tanh_", _ufunc_update(np.tanh))
Tensor.sigmoid_ = _in_place_method(Tensor.sigmoid, "sigmoid_")
Tensor.relu_ = _in_place_method(Tensor.relu, "relu_")
Tensor.sin_ = _in_place_method(Tensor.sin, "sin_")
Tensor.cos_ = _in_place_method(Tensor.cos, "cos_")
Tensor.tan_ = _in_place_method(Tensor.tan, "tan_")
Tensor.asin_ = _in_place_method(Tensor.asin, "asin_")
Tensor.acos_ = _in_place_method(Tensor.acos, "acos_")
Tensor.atan_ = _in_place_method(Tensor.atan, "atan_")
Tensor.sinh_ = _in_place_method(Tensor.sinh, "sinh_")
Tensor.cosh_ = _in_place_method(Tensor.cosh, "cosh_")
Tensor.exp2_ = _in_place_method(Tensor.exp2, "exp2_")
Tensor.expm1_ = _in_place_method(Tensor.expm1, "expm1_")
Tensor.log2_ = _in_place_method(Tensor.log2, "log2_")
Tensor.log10_ = _in_place_method(Tensor.log10, "log10_")
Tensor.log1p_ = _in_place_method(Tensor.log1p, "log1p_")
Tensor.rsqrt_ = _in_place_method(Tensor.rsqrt, "rsqrt_")
Tensor.reciprocal_ = _in_place_method(Tensor.reciprocal, "reciprocal_")
Tensor.square_ = _in_place_method(Tensor.square, "square_")
Tensor.erf_ = _in_place_method(Tensor.erf, "erf_")
Tensor.erfinv_ = _in_place_method(Tensor.erfinv, "erfinv_")
Tensor.sign_ = _in_place_method(Tensor.sign, "sign_")
Tensor.floor_ = _in_place_method(Tensor.floor, "floor_")
Tensor.ceil_ = _in_place_method(Tensor.ceil, "ceil_")
Tensor.trunc_ = _in_place_method(Tensor.trunc, "trunc_")

Tensor.mul_ = _in_place_binary_method(np.multiply, _ops_ew.Mul, "mul_")
Tensor.div_ = _in_place_binary_method(np.true_divide, _ops_ew.Div, "div_")
Tensor.remainder_ = _in_place_binary_method(_ops_math.remainder_ufunc, _ops_math.Remainder, "remainder_")
Tensor.fmod_ = _in_place_binary_method(_ops_math.fmod_ufunc, _ops_math.Fmod, "fmod_")
Tensor.floor_divide_ = _in_place_binary_method(_ops_math.floor_divide_ufunc, _ops_math.FloorDivide, "floor_divide_")
Tensor.bitwise_and_ = _in_place_binary_method(_ops_math.bitwise_and_ufunc, _ops_math.BitwiseAnd, "bitwise_and_")
Tensor.bitwise_or_ = _in_place_binary_method(_ops_math.bitwise_or_ufunc, _ops_math.BitwiseOr, "bitwise_or_")
Tensor.bitwise_xor_ = _in_place_binary_method(_ops_math.bitwise_xor_ufunc, _ops_math.BitwiseXor, "bitwise_xor_")

# -- functions as methods --------------------------------------------------------------------------

Tensor.clamp = _ops_ew.clamp
Tensor.sum = _ops_reduce.sum
Tensor.mean = _ops_reduce.mean
Tensor.max = _ops_reduce.max
Tensor.min = _ops_reduce.min
Tensor.argmax = _ops_reduce.argmax
Tensor.argmin = _ops_reduce.argmin
Tensor.flatten = _ops_shape.flatten
Tensor.transpose = _ops_shape.transpose
Tensor.unsqueeze = _ops_shape.unsqueeze
Tensor.squeeze = _ops_shape.squeeze
Tensor.broadcast_to = _ops_shape.expand
Tensor.masked_fill = _ops_ew.masked_fill
Tensor.round = _ops_math.round
Tensor.maximum = _ops_math.maximum
Tensor.minimum = _ops_math.minimum
Tensor.atan2 = _ops_math.atan2
Tensor.remainder = _ops_math.remainder
Tensor.fmod = _ops_math.fmod
Tensor.floor_divide = _ops_math.floor_divide
Tensor.eq = _ops_math.eq
Tensor.ne = _ops_math.ne
Tensor.lt = _ops_math.lt
Tensor.le = _ops_math.le
Tensor.gt = _ops_math.gt
Tensor.ge = _ops_math.ge
Tensor.equal = _ops_math.equal
Tensor.isclose = _ops_math.isclose
Tensor.allclose = _ops_math.allclose
Tensor.isnan = _ops_math.isnan
Tensor.isinf = _ops_math.isinf
Tensor.isfinite = _ops_math.isfinite
Tensor.logical_and = _ops_math.logical_and
Tensor.logical_or = _ops_math.logical_or
Tensor.logical_xor = _ops_math.logical_xor
Tensor.logical_not = _ops_math.logical_not
Tensor.bitwise_and = _ops_math.bitwise_and
Tensor.bitwise_or = _ops_math.bitwise_or
Tensor.bitwise_xor = _ops_math.bitwise_xor
Tensor.bitwise_not = _ops_math.bitwise_not
Tensor.sort = _ops_sorting.sort
Tensor.argsort = _ops_sorting.argsort
Tensor.topk = _ops_sorting.topk
Tensor.kthvalue = _ops_sorting.kthvalue
Tensor.cumsum = _ops_scan.cumsum
Tensor.cumprod = _ops_scan.cumprod
Tensor.cummax = _ops_cumulative.cummax
Tensor.cummin = _ops_cumulative.cummin
Tensor.logcumsumexp = _ops_cumulative.logcumsumexp
Tensor.diff = _ops_differences.diff
Tensor.logit = _ops_math.logit
Tensor.erfc = _ops_math.erfc
Tensor.gather = _ops_gather.gather
Tensor.scatter = _ops_gather.scatter
Tensor.scatter_add = _ops_gather.scatter_add
Tensor.scatter_add_ = _ops_gather.scatter_add_inplace
Tensor.index_select = _ops_gather.index_select
Tensor.view_as = _ops_structure.view_as
Tensor.unflatten = _ops_structure.unflatten
Tensor.tril = _ops_structure.tril
Tensor.triu = _ops_structure.triu
Tensor.chunk = _ops_structure.chunk
Tensor.unbind = _ops_structure.unbind
Tensor.roll = _ops_structure.roll
Tensor.diagonal = _ops_structure.diagonal
Tensor.tensor_split = _ops_splitting.tensor_split
Tensor.take_along_dim = _ops_take_along.take_along_dim
Tensor.diag_embed = _ops_diagonal_forms.diag_embed
Tensor.diagflat = _ops_diagonal_forms.diagflat
Tensor.index_fill = _ops_index_updates.index_fill
Tensor.index_fill_ = _ops_index_updates.index_fill_
Tensor.index_copy = _ops_index_updates.index_copy
Tensor.index_copy_ = _ops_index_updates.index_copy_
Tensor.masked_scatter = _ops_index_updates.masked_scatter
Tensor.masked_scatter_ = _ops_index_updates.masked_scatter_
Tensor.scatter_reduce = _ops_index_updates.scatter_reduce
Tensor.scatter_reduce_ = _ops_index_updates.scatter_reduce_
Tensor.index_put = _ops_index_updates.index_put
Tensor.index_put_ = _ops_index_updates.index_put_
Tensor.unfold = _ops_windows.unfold
Tensor.reshape_as = _ops_windows.reshape_as
Tensor.aminmax = _ops_statistics.aminmax
Tensor.nanmedian = _ops_statistics.nanmedian
Tensor.cov = _ops_statistics.cov
Tensor.corrcoef = _ops_statistics.corrcoef
Tensor.det = _ops_determinants.det
Tensor.logdet = _ops_determinants.logdet
Tensor.slogdet = _ops_determinants.slogdet
Tensor.inverse = _linalg_solvers.inverse
Tensor.cholesky = _linalg_solvers.legacy_cholesky
Tensor.pinverse = _linalg_decompositions.pinverse

# -- Python's augmented assignments, and PyTorch's and NumPy's other names ---------------------------

Tensor.__imul__ = Tensor.mul_
Tensor.__itruediv__ = Tensor.div_
Tensor.__imod__ = Tensor.remainder_
Tensor.__ifloordiv__ = Tensor.floor_divide_
Tensor.__iand__ = Tensor.bitwise_and_
Tensor.__ior__ = Tensor.bitwise_or_
Tensor.__ixor__ = Tensor.bitwise_xor_
Tensor.clip = Tensor.clamp
Tensor.arcsin = Tensor.asin
Tensor.arccos = Tensor.acos
Tensor.arctan = Tensor.atan
Tensor.arcsinh = Tensor.asinh
Tensor.arccosh = Tensor.acosh
Tensor.arctanh = Tensor.atanh
Tensor.fix = Tensor.trunc
Tensor.arctan2 = Tensor.atan2
Tensor.not_equal = Tensor.ne
Tensor.less = Tensor.lt
Tensor.less_equal = Tensor.le
Tensor.greater = Tensor.gt
Tensor.greater_equal = Tensor.ge
