"""Layers (``Linear``, ``Conv2d``, ...) and containers (``Sequential``, ``ModuleList``).

Each layer mirrors its PyTorch namesake: same constructor arguments and
defaults, same parameter names and shapes, same default initialization
distributions (``reset_parameters``), and a ``forward`` that calls
``minigrad.nn.functional``. ``device``/``dtype`` arguments place the
parameters (default: CPU, float32).
"""

from __future__ import annotations

import math
import operator
from collections import OrderedDict

import numpy as np

from minigrad import backend, factory
from minigrad.nn import functional as F
from minigrad.nn import init
from minigrad.nn.module import Module
from minigrad.nn.parameter import Parameter
from minigrad.nn.pointwise_activations import _InplaceActivation
from minigrad.promotion import get_default_dtype

__all__ = [
    "Identity", "Linear", "Conv2d", "Embedding", "LayerNorm", "Dropout", "ReLU", "Tanh", "GELU",
    "Sigmoid", "Flatten", "Sequential", "ModuleList",
]


def _parameter_dtype(dtype) -> np.dtype:
    """``dtype`` as a floating NumPy dtype for a layer's parameters.

    Raises:
        TypeError: ``dtype`` is not a dtype.
        RuntimeError (PyTorch's type: its initializers have no integer version): not a floating point dtype.
    """
    try:
        resolved = np.dtype(dtype)
    except (TypeError, ValueError):  # NumPy's, for something that is not a dtype
        raise TypeError(f"layer: dtype must be a floating point dtype such as mg.float32, got {dtype!r:.40}") from None
    if resolved.kind not in "fc":
        raise RuntimeError(f"layer: dtype must be a floating point dtype such as mg.float32, got {resolved}")
    return resolved


def _empty_parameter(shape, device, dtype, requires_grad=True, owner="Parameter") -> Parameter:
    """An uninitialized Parameter of ``shape`` on ``device`` (default CPU) of ``dtype`` (default float32).

    Raises:
        RuntimeError: the shape is too large to allocate (the message names ``owner``).
    """
    device = backend.normalize_device(device)
    dtype = get_default_dtype() if dtype is None else _parameter_dtype(dtype)
    xp = backend.module_for_device(device)
    with backend.device_context(device):
        data = factory.allocate(owner, shape, dtype, lambda: xp.empty(shape, dtype=dtype))
    return Parameter(data, requires_grad=requires_grad)


def _is_int(value) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def _check_size(value, name, layer):
    """``value`` as an int: TypeError if it is not one, RuntimeError if negative (PyTorch's types)."""
    if not _is_int(value):
        raise TypeError(f"{layer}: {name} must be a non-negative int, got {value!r}")
    if value < 0:
        raise RuntimeError(f"{layer}: {name} must be a non-negative int, got {value!r}")
    return int(value)


def _pair(value, name, layer) -> tuple:
    """``value`` (an int or a pair of ints) as a pair of ints.

    Raises:
        TypeError: not an int nor a sequence of ints.
        RuntimeError: a sequence of ints of another length than 2 (PyTorch's type, from its forward).
    """
    if _is_int(value):
        return (int(value), int(value))
    if isinstance(value, (tuple, list)) and all(_is_int(v) for v in value):
        if len(value) == 2:
            return tuple(int(v) for v in value)
        raise RuntimeError(f"{layer}: {name} must be an int or a pair of ints, got {value!r}")
    raise TypeError(f"{layer}: {name} must be an int or a pair of ints, got {value!r}")


class Identity(Module):
    """Returns its input unchanged; accepts and ignores any constructor arguments."""

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):  # noqa: A002  (PyTorch's name)
        """Return ``input``."""
        return input


class Linear(Module):
    """``y = x @ weight.T + bias``.

    Args:
        in_features, out_features: sizes of the last dimension of input and output.
        bias: learn an additive bias (default True).

    Shapes: input ``(*, in_features)``, output ``(*, out_features)``;
    ``weight`` is ``(out_features, in_features)``, ``bias`` ``(out_features,)``.
    Both are initialized from U(-1/sqrt(in_features), 1/sqrt(in_features)), as in PyTorch.
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = True, device=None, dtype=None):
        super().__init__()
        self.in_features = _check_size(in_features, "in_features", "Linear")
        self.out_features = _check_size(out_features, "out_features", "Linear")
        self.weight = _empty_parameter((self.out_features, self.in_features), device, dtype)
        if bias:
            self.bias = _empty_parameter((self.out_features,), device, dtype)
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Re-draw the weights from PyTorch's default distributions."""
        _reset_weight_and_bias(self.weight, self.bias)

    def forward(self, input):  # noqa: A002
        """Apply the affine map to the last dimension of ``input``."""
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        has_bias = self.bias is not None
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={has_bias}"


def _reset_weight_and_bias(weight, bias) -> None:
    """PyTorch's default for Linear and Conv: kaiming_uniform_(a=sqrt(5)), bias U(-1/sqrt(fan_in), ...)."""
    init.kaiming_uniform_(weight, a=math.sqrt(5))
    if bias is not None:
        fan_in, _ = init.calculate_fan_in_and_fan_out(weight)
        bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
        init.uniform_(bias, -bound, bound)


def _positive_pair(value, name) -> tuple:
    """Conv2d's ``kernel_size``/``stride``/``dilation`` as a pair of ints, each at least 1 (checked here, at
    construction: PyTorch accepts them and only its forward fails, with the RuntimeError raised here)."""
    pair = _pair(value, name, "Conv2d")
    if min(pair) < 1:
        raise RuntimeError(f"Conv2d: {name} must be positive (at least 1), got {value!r}")
    return pair


class Conv2d(Module):
    """2-D convolution (cross-correlation) over an input of shape ``(N, C_in, H, W)``.

    Args:
        in_channels, out_channels: channels of input and output.
        kernel_size, stride, dilation: an int or a pair (height, width).
        padding: an int, a pair, ``"valid"`` (no padding) or ``"same"``
            (output as large as the input; stride must be 1).
        groups: split the channels into this many independent convolutions;
            both channel counts must be divisible by it.
        bias: learn a per-output-channel bias (default True).
        padding_mode: only ``"zeros"`` is supported (PyTorch also has
            reflect/replicate/circular).

    ``weight`` has shape ``(out_channels, in_channels // groups, kH, kW)``;
    weight and bias are initialized like PyTorch's (U(-1/sqrt(fan_in), ...)).

    Raises:
        TypeError: a channel count, kernel_size, stride, dilation or padding that is not an int (or pair).
        ValueError: groups that are not positive or do not divide the channels (a fractional
            channel count included, as in PyTorch), an unknown padding string, ``"same"`` padding
            with a stride, or an unsupported padding mode.
        RuntimeError: a negative channel count, or sizes PyTorch's forward rejects (a
            kernel_size, stride or dilation below 1, negative padding, a tuple not of length 2),
            checked here at construction.
    """

    def __init__(
        self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0, dilation=1,
        groups: int = 1, bias: bool = True, padding_mode: str = "zeros", device=None, dtype=None,
    ):
        super().__init__()
        if not _is_int(groups) or groups <= 0:
            raise ValueError(f"Conv2d: groups must be a positive integer, got {groups!r}")
        # PyTorch checks divisibility before the channel counts' types (a float count fails here).
        channels = (in_channels, out_channels)
        if all(isinstance(c, (int, float, np.integer, np.floating)) for c in channels) and (
            in_channels % groups or out_channels % groups
        ):
            raise ValueError(
                f"Conv2d: in_channels ({in_channels}) and out_channels ({out_channels}) must both be "
                f"divisible by groups ({groups})"
            )
        self.in_channels = _check_size(in_channels, "in_channels", "Conv2d")
        self.out_channels = _check_size(out_channels, "out_channels", "Conv2d")
        if padding_mode != "zeros":
            raise ValueError(f"Conv2d: padding_mode {padding_mode!r} is not supported, only 'zeros'")
        self.kernel_size = _positive_pair(kernel_size, "kernel_size")
        self.stride = _positive_pair(stride, "stride")
        self.dilation = _positive_pair(dilation, "dilation")
        self.padding = self._check_padding(padding)
        self.groups = groups = int(groups)
        self.padding_mode = padding_mode
        shape = (self.out_channels, self.in_channels // groups, *self.kernel_size)
        self.weight = _empty_parameter(shape, device, dtype, owner="Conv2d")
        if bias:
            self.bias = _empty_parameter((self.out_channels,), device, dtype)
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def _check_padding(self, padding):
        if isinstance(padding, str):
            if padding not in ("valid", "same"):
                raise ValueError(
                    f"Conv2d: invalid padding string {padding!r}, should be one of 'valid', 'same'"
                )
            if padding == "same" and self.stride != (1, 1):
                raise ValueError("Conv2d: padding='same' is not supported for strided convolutions")
            return padding
        pads = _pair(padding, "padding", "Conv2d")
        if min(pads) < 0:
            raise RuntimeError(f"Conv2d: padding must be non-negative, got {padding!r}; use 0 for no padding")
        return pads

    def reset_parameters(self) -> None:
        """Re-draw the weights from PyTorch's default distributions."""
        _reset_weight_and_bias(self.weight, self.bias)

    def forward(self, input):  # noqa: A002
        """Convolve ``input`` (N, C_in, H, W) into (N, C_out, H_out, W_out)."""
        return F.conv2d(input, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups)

    def extra_repr(self) -> str:
        s = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}"
        if self.padding != (0, 0):
            s += f", padding={self.padding}"
        if self.dilation != (1, 1):
            s += f", dilation={self.dilation}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        return s


class Embedding(Module):
    """A lookup table: row ``i`` of ``weight`` for every index ``i`` of the input.

    Args:
        num_embeddings: number of rows (the largest index + 1).
        embedding_dim: size of each row.
        padding_idx: a row (negative counts from the end) that is initialized
            to zeros and receives no gradient.
        max_norm, norm_type, scale_grad_by_freq, sparse: accepted for PyTorch's
            signature, but only their defaults (None, 2.0, False, False) are
            supported: ``minigrad.nn.functional.embedding`` has no renormalization,
            frequency scaling or sparse gradients.
        _weight: an initial weight of shape (num_embeddings, embedding_dim).
        _freeze: make the weight not require grad.

    Shapes: input ``(*)`` of integers, output ``(*, embedding_dim)``. The
    weight is initialized from N(0, 1), as in PyTorch.

    Raises:
        TypeError: a size or ``padding_idx`` that is not an int.
        RuntimeError: a negative size (PyTorch's type).
        AssertionError: ``padding_idx`` out of range, or ``_weight`` of the wrong shape (PyTorch's type).
        ValueError: an unsupported option (``max_norm``, ``scale_grad_by_freq``, ``sparse``).
    """

    def __init__(
        self, num_embeddings: int, embedding_dim: int, padding_idx=None, max_norm=None,
        norm_type: float = 2.0, scale_grad_by_freq: bool = False, sparse: bool = False,
        _weight=None, _freeze: bool = False, device=None, dtype=None,
    ):
        super().__init__()
        self.num_embeddings = _check_size(num_embeddings, "num_embeddings", "Embedding")
        self.embedding_dim = _check_size(embedding_dim, "embedding_dim", "Embedding")
        if padding_idx is not None:
            if not isinstance(padding_idx, (int, np.integer)) or isinstance(padding_idx, bool):
                raise TypeError(
                    f"Embedding: padding_idx must be an int or None, got {type(padding_idx).__name__}"
                )
            if not -num_embeddings <= padding_idx < num_embeddings:
                raise AssertionError(
                    f"Embedding: padding_idx must be within num_embeddings ({num_embeddings}), "
                    f"got {padding_idx}"
                )
            padding_idx = padding_idx % num_embeddings
        _check_unsupported_embedding_options(max_norm, scale_grad_by_freq, sparse)
        self.padding_idx = padding_idx
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        self.sparse = sparse
        if _weight is None:
            self.weight = _empty_parameter((num_embeddings, embedding_dim), device, dtype, not _freeze)
            self.reset_parameters()
        else:
            if tuple(_weight.shape) != (num_embeddings, embedding_dim):
                raise AssertionError(
                    f"Embedding: _weight has shape {tuple(_weight.shape)}, expected "
                    f"{(num_embeddings, embedding_dim)}"
                )
            self.weight = Parameter(_weight, requires_grad=not _freeze)

    @classmethod
    def from_pretrained(cls, embeddings, freeze=True, padding_idx=None, max_norm=None, norm_type=2.0,
                        scale_grad_by_freq=False, sparse=False) -> Embedding:
        """An Embedding whose weight is ``embeddings`` (2-D, shared, not copied).

        Raises:
            AssertionError: ``embeddings`` is not 2-dimensional (PyTorch's type).
        """
        if embeddings.ndim != 2:
            raise AssertionError(
                f"Embedding.from_pretrained: expected a 2-D tensor, got shape {tuple(embeddings.shape)}"
            )
        rows, cols = embeddings.shape
        return cls(rows, cols, padding_idx=padding_idx, max_norm=max_norm, norm_type=norm_type,
                   scale_grad_by_freq=scale_grad_by_freq, sparse=sparse, _weight=embeddings, _freeze=freeze)

    def reset_parameters(self) -> None:
        """Re-draw the weight from N(0, 1), zeroing the padding row."""
        init.normal_(self.weight)
        if self.padding_idx is not None:
            self.weight.array[self.padding_idx] = 0

    def forward(self, input):  # noqa: A002
        """Look up the rows of ``weight`` at the indices ``input``."""
        return F.embedding(input, self.weight, self.padding_idx)

    def extra_repr(self) -> str:
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        return s


def _check_unsupported_embedding_options(max_norm, scale_grad_by_freq, sparse) -> None:
    options = (("max_norm", max_norm, None), ("scale_grad_by_freq", scale_grad_by_freq, False),
               ("sparse", sparse, False))
    for name, value, default in options:
        if value != default:
            raise ValueError(f"Embedding: {name}={value!r} is not supported (only {name}={default!r})")


class LayerNorm(Module):
    """Normalize over the trailing ``normalized_shape`` dimensions, then scale and shift.

    ``y = (x - mean) / sqrt(var + eps) * weight + bias`` with the biased variance.

    Args:
        normalized_shape: an int or a tuple: the trailing shape to normalize over.
        eps: added to the variance (default 1e-5).
        elementwise_affine: learn ``weight`` (ones) and ``bias`` (zeros) of shape ``normalized_shape``.
        bias: with ``elementwise_affine``, also learn the bias (default True).

    Raises:
        TypeError: ``normalized_shape`` is neither an int nor a tuple, or an entry is not an int.
        RuntimeError: an entry of ``normalized_shape`` is negative (PyTorch's type).
    """

    def __init__(self, normalized_shape, eps: float = 1e-5, elementwise_affine: bool = True,
                 bias: bool = True, device=None, dtype=None):
        super().__init__()
        if isinstance(normalized_shape, (int, np.integer)):
            normalized_shape = (normalized_shape,)
        if not isinstance(normalized_shape, (tuple, list)):
            raise TypeError(
                f"LayerNorm: normalized_shape must be an int or a tuple of ints, got {normalized_shape!r}"
            )
        self.normalized_shape = tuple(
            _check_size(n, "normalized_shape", "LayerNorm") for n in normalized_shape
        )
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = _empty_parameter(self.normalized_shape, device, dtype)
            if bias:
                self.bias = _empty_parameter(self.normalized_shape, device, dtype)
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Set the weight to ones and the bias to zeros."""
        if self.weight is not None:
            init.ones_(self.weight)
        if self.bias is not None:
            init.zeros_(self.bias)

    def forward(self, input):  # noqa: A002
        """Normalize ``input`` (shape ``(*, *normalized_shape)``)."""
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}, "
                f"bias={self.bias is not None}")


class Dropout(Module):
    """In training mode, zero each element with probability ``p`` and scale the rest by 1/(1-p).

    The identity in evaluation mode (``model.eval()``).

    Raises:
        TypeError: ``p`` is not a number.
        ValueError: ``p`` is not in [0, 1].
    """

    def __init__(self, p: float = 0.5, inplace: bool = False):
        super().__init__()
        if not isinstance(p, (int, float, np.integer, np.floating)) or isinstance(p, bool):
            raise TypeError(f"Dropout: dropout probability must be a number, got {type(p).__name__}")
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"Dropout: dropout probability has to be between 0 and 1, but got {p!r}")
        self.p = p
        self.inplace = inplace

    def forward(self, input):  # noqa: A002
        """Apply dropout (training) or return ``input`` (eval)."""
        return F.dropout(input, self.p, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class ReLU(_InplaceActivation):
    """Elementwise ``max(x, 0)``: see ``F.relu`` (``inplace=True`` overwrites the input and returns it)."""

    _function = staticmethod(F.relu)


class Tanh(Module):
    """Elementwise hyperbolic tangent."""

    def forward(self, input):  # noqa: A002
        """Apply tanh."""
        return input.tanh()


class Sigmoid(Module):
    """Elementwise logistic function ``1 / (1 + exp(-x))``."""

    def forward(self, input):  # noqa: A002
        """Apply the sigmoid."""
        return input.sigmoid()


class GELU(Module):
    """Gaussian error linear unit ``x * Phi(x)``; ``approximate="tanh"`` uses the tanh formula.

    Raises:
        RuntimeError: ``approximate`` is neither "none" nor "tanh" (checked at construction;
            PyTorch's forward raises this type).
    """

    def __init__(self, approximate: str = "none"):
        super().__init__()
        if approximate not in ("none", "tanh"):
            raise RuntimeError(f"GELU: approximate must be 'none' or 'tanh', got {approximate!r}")
        self.approximate = approximate

    def forward(self, input):  # noqa: A002
        """Apply GELU."""
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class Flatten(Module):
    """Merge dimensions ``start_dim..end_dim`` (default: all but the batch dimension)."""

    def __init__(self, start_dim: int = 1, end_dim: int = -1):
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, input):  # noqa: A002
        """Flatten ``input``."""
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


# -- containers ---------------------------------------------------------------


def _normalize_index(idx, length, container) -> int:
    try:
        idx = operator.index(idx)
    except TypeError:
        raise TypeError(f"{container} indices must be integers or slices, not {type(idx).__name__}") from None
    if not -length <= idx < length:
        raise IndexError(f"{container}: index {idx} is out of range for length {length}")
    return idx % length


class _ModuleSequence(Module):
    """What Sequential and ModuleList share: children named "0", "1", ... in order, ``len``,
    iteration over the children, and ``append``."""

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def append(self, module: Module):
        """Add ``module`` at the end (named by its position); returns self."""
        self.add_module(str(len(self)), module)
        return self


class Sequential(_ModuleSequence):
    """Modules applied one after the other: ``Sequential(a, b)(x) == b(a(x))``.

    Built from modules (named "0", "1", ...) or from one ``OrderedDict``
    of named modules. Supports ``len``, iteration, indexing (a slice gives a
    new Sequential sharing the modules), ``append``, ``insert``, ``extend``
    and ``del``.
    """

    def __init__(self, *args):
        super().__init__()
        if len(args) == 1 and isinstance(args[0], (OrderedDict, dict)):
            for name, module in args[0].items():
                self.add_module(name, module)
        else:
            for i, module in enumerate(args):
                self.add_module(str(i), module)

    def forward(self, input):  # noqa: A002
        """Feed ``input`` through every module in order."""
        for module in self._modules.values():
            input = module(input)  # noqa: A001
        return input

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return type(self)(OrderedDict(list(self._modules.items())[idx]))
        return list(self._modules.values())[_normalize_index(idx, len(self), "Sequential")]

    def __setitem__(self, idx, module) -> None:
        key = list(self._modules)[_normalize_index(idx, len(self), "Sequential")]
        setattr(self, key, module)

    def __delitem__(self, idx) -> None:
        keys = list(self._modules)
        if isinstance(idx, slice):
            for key in keys[idx]:
                del self._modules[key]
        else:
            del self._modules[keys[_normalize_index(idx, len(self), "Sequential")]]
        self._renumber()

    def insert(self, index: int, module: Module) -> Sequential:
        """Insert ``module`` before position ``index``; returns self.

        Raises:
            AssertionError: ``module`` is not a Module (PyTorch's type).
            IndexError: ``index`` is out of range.
        """
        if not isinstance(module, Module):
            raise AssertionError(f"Sequential.insert: expected a Module, got {type(module).__name__}")
        n = len(self)
        if not -n <= index <= n:
            raise IndexError(f"Sequential.insert: index {index} is out of range for length {n}")
        if index < 0:
            index += n
        modules = list(self._modules.values())
        modules.insert(index, module)
        self._modules.clear()
        self._modules.update((str(i), m) for i, m in enumerate(modules))
        return self

    def _renumber(self) -> None:
        """Rename the children "0", "1", ... in order (as PyTorch does after a deletion)."""
        modules = list(self._modules.values())
        self._modules.clear()
        self._modules.update((str(i), m) for i, m in enumerate(modules))

    def extend(self, modules) -> Sequential:
        """Append every module of the iterable ``modules``; returns self."""
        for module in modules:
            self.append(module)
        return self


class ModuleList(_ModuleSequence):
    """A list of modules, registered as children "0", "1", ... (so their parameters are found).

    Supports ``len``, iteration, indexing (a slice gives a new ModuleList),
    assignment, ``del``, ``append``, ``extend``, ``insert`` and ``+=``. It has
    no ``forward``: iterate over it in the owner's ``forward``.
    """

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return type(self)(list(self._modules.values())[idx])
        return self._modules[str(_normalize_index(idx, len(self), "ModuleList"))]

    def __setitem__(self, idx, module) -> None:
        setattr(self, str(_normalize_index(idx, len(self), "ModuleList")), module)

    def __delitem__(self, idx) -> None:
        modules = list(self._modules.values())
        if isinstance(idx, slice):
            del modules[idx]
        else:
            del modules[_normalize_index(idx, len(self), "ModuleList")]
        self._renumber(modules)

    def __iadd__(self, modules) -> ModuleList:
        return self.extend(modules)

    def __add__(self, other) -> ModuleList:
        return type(self)([*self, *other])

    def _renumber(self, modules) -> None:
        self._modules.clear()
        for i, module in enumerate(modules):
            self.add_module(str(i), module)

    def extend(self, modules) -> ModuleList:
        """Append every module of the iterable ``modules``; returns self.

        Raises:
            TypeError: ``modules`` is not iterable.
        """
        if not hasattr(modules, "__iter__"):
            raise TypeError(
                f"ModuleList.extend should be called with an iterable, got {type(modules).__name__}"
            )
        for module in modules:
            self.append(module)
        return self

    def insert(self, index: int, module: Module) -> None:
        """Insert ``module`` before position ``index``."""
        modules = list(self._modules.values())
        modules.insert(index, module)
        self._renumber(modules)
