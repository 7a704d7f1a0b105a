"""``F.embedding_bag`` and ``nn.EmbeddingBag``: sums, means or maxima of bags of embeddings.

Names, signatures, defaults and semantics mirror PyTorch's; the function is
re-exported by ``minigrad.nn.functional``. A bag is a run of indices: the
rows of a 2-D input (B, L), or the pieces of a 1-D input cut at ``offsets``.
Each bag becomes one row of the output (B, dim) without materializing the
(B, L, dim) lookups of ``embedding`` followed by a reduction (mode 'max'
does lay them out, padded to the longest bag, to find each maximum).

The result is built from registered ops, so gradients of every order come
from them: 'sum' and 'mean' look up every index (``Embedding``), weigh the
rows (per-sample weights, 1 / bag size, or 0 for ``padding_idx``) and add
them into their bags (``IndexScatter``); 'max' picks, per bag and column,
the row holding the first maximum and gathers those elements (``Index``).
"""

from __future__ import annotations

import numpy as np

from minigrad import backend, views
from minigrad.grad_mode import no_grad
from minigrad.nn import init
from minigrad.nn.module import Module
from minigrad.nn.parameter import Parameter
from minigrad.ops import elementwise
from minigrad.ops import nn as nn_ops
from minigrad.ops.indexing import IndexScatter
from minigrad.promotion import get_default_dtype
from minigrad.tensor import Tensor

__all__ = ["embedding_bag", "EmbeddingBag"]

_MODES = ("sum", "mean", "max")
_INDEX_DTYPES = (np.dtype(np.int32), np.dtype(np.int64))


def _index_array(name, value, device):
    """The integer (int32/int64) array of the Tensor ``value``, checked to be on ``device``."""
    if not isinstance(value, Tensor):
        raise TypeError(f"embedding_bag(): argument '{name}' must be a Tensor, got {type(value).__name__}")
    if value.dtype not in _INDEX_DTYPES:
        raise RuntimeError(f"embedding_bag(): {name} must be an int32 or int64 tensor, got dtype {value.dtype}")
    if value.device != device:
        raise RuntimeError(f"embedding_bag(): {name} is on {value.device} but weight is on {device}")
    return value.array


def _bag_starts(xp, input_data, offsets, include_last_offset):
    """Flat indices and the (B + 1) bag boundaries (starts, then the end) of a 1-D or 2-D input."""
    if input_data.ndim == 2:
        if offsets is not None:
            raise ValueError(
                "embedding_bag(): if input is 2D, then offsets has to be None, as input is treated as a "
                f"mini-batch of fixed length sequences. However, found offsets of type {type(offsets).__name__}"
            )
        bags, length = input_data.shape
        return input_data.reshape(-1), xp.arange(bags + 1, dtype=np.int64) * length
    if input_data.ndim != 1:
        raise ValueError(f"embedding_bag(): input has to be 1D or 2D Tensor, but got Tensor of dimension "
                         f"{input_data.ndim}")
    if offsets is None:
        raise ValueError("embedding_bag(): offsets has to be a 1D Tensor but got None")
    offsets_data = _index_array("offsets", offsets, backend.device_of(input_data))
    if offsets_data.ndim != 1:
        raise ValueError(f"embedding_bag(): offsets has to be a 1D Tensor, got shape {offsets.shape}")
    count = input_data.shape[0]
    offsets_data = offsets_data.astype(np.int64, copy=False)
    if include_last_offset and offsets_data.shape[0] == 0:
        raise RuntimeError("embedding_bag(): with include_last_offset=True, offsets needs at least one element")
    if offsets_data.shape[0]:
        first, last = int(offsets_data[0]), int(offsets_data[-1])
        if first != 0:
            raise RuntimeError(
                "embedding_bag(): offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to "
                f"start from position 0. However, got {first}"
            )
        if last > count:
            raise RuntimeError(
                f"embedding_bag(): offsets[-1] can not be greater than input's length {count} but got "
                f"offsets[-1] of {last}"
            )
        if bool((offsets_data[1:] < offsets_data[:-1]).any()):
            raise RuntimeError(f"embedding_bag(): offsets must be non-decreasing, got {offsets_data.tolist()}")
    if include_last_offset:
        bounds = offsets_data.copy()
        bounds[-1] = count  # PyTorch ignores indices past the last offset's bag
        return input_data[:count], bounds
    return input_data, xp.concatenate([offsets_data, xp.asarray([count], dtype=np.int64)])


def _renorm_(weight, indices, max_norm, norm_type) -> None:
    """Scale the rows of ``weight`` at ``indices`` whose ``norm_type``-norm exceeds ``max_norm`` to it, in place."""
    xp = backend.get_array_module(weight.array)
    rows = xp.unique(indices)
    data = weight.array
    picked = data[rows]
    if norm_type == float("inf"):
        norms = xp.abs(picked).max(axis=1)
    else:
        norms = (xp.abs(picked) ** norm_type).sum(axis=1) ** (1.0 / norm_type)
    scale = xp.where(norms > max_norm, max_norm / (norms + 1e-7), 1.0).astype(data.dtype)
    data[rows] = picked * scale[:, None]
    views.bump_version(weight)


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2, scale_grad_by_freq=False,  # noqa: A002
                  mode="mean", sparse=False, per_sample_weights=None, include_last_offset=False, padding_idx=None):
    """Sum, mean or max of each bag of embeddings: one output row per bag.

    Args:
        input: int32/int64 Tensor of indices into ``weight``'s rows: (B, L)
            (B bags of L indices; ``offsets`` must be None) or (n,) cut into
            bags at ``offsets``.
        weight: float Tensor (num_embeddings, dim).
        offsets: int Tensor (B,) of bag starts (the first must be 0,
            non-decreasing); equal neighbours make empty bags. With
            ``include_last_offset`` it has B + 1 entries, the last the end.
        max_norm: renormalize, in place and before the lookup, every looked-up
            row of ``weight`` whose ``norm_type``-norm exceeds it.
        mode: 'sum', 'mean' or 'max'. Empty bags (or bags of padding only) give zeros.
        per_sample_weights: float Tensor of the input's shape (weight's
            dtype) multiplying each row before the sum (mode 'sum' only);
            differentiable.
        padding_idx: a row (negative counts from the end) left out of every
            bag (and of the mean's count); it gets no gradient.
        scale_grad_by_freq, sparse: only False is supported.

    Returns:
        Tensor (B, dim).

    Raises:
        TypeError: an argument is not a Tensor.
        ValueError: bad dimensions, mode, per_sample_weights shape, offsets
            given with a 2-D input or missing with a 1-D one, or an unsupported option.
        NotImplementedError: per_sample_weights with mode 'mean' or 'max'.
        RuntimeError: index, offset or padding_idx out of range, offsets not
            starting at 0 or decreasing, empty offsets with ``include_last_offset``,
            dtypes or devices that differ.
    """
    fn = "embedding_bag"
    if not isinstance(weight, Tensor):
        raise TypeError(f"{fn}(): argument 'weight' must be a Tensor, got {type(weight).__name__}")
    if weight.ndim != 2:
        raise ValueError(f"{fn}(): weight has to be a 2D Tensor, but got Tensor of dimension {weight.ndim}")
    if weight.dtype.kind != "f":
        raise RuntimeError(f"{fn}(): weight must be floating point, got dtype {weight.dtype}")
    if mode not in _MODES:
        raise ValueError(f"{fn}(): mode has to be one of sum, mean or max, got {mode!r}")
    if scale_grad_by_freq:
        raise ValueError(f"{fn}(): scale_grad_by_freq=True is not supported (only False)")
    if sparse:
        raise ValueError(f"{fn}(): sparse=True is not supported (only dense gradients)")
    device = weight.device
    input_data = _index_array("input", input, device)
    if per_sample_weights is not None:
        if mode != "sum":
            raise NotImplementedError(
                f"embedding_bag: per_sample_weights was not None. per_sample_weights is only supported for "
                f"mode='sum' (got mode='{mode}')."
            )
        if not isinstance(per_sample_weights, Tensor):
            raise TypeError(f"{fn}(): per_sample_weights must be a Tensor, got {type(per_sample_weights).__name__}")
        if per_sample_weights.shape != input.shape:
            raise ValueError(
                f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) is not None, then it must have "
                f"the same shape as the input ({input.shape})"
            )
        if per_sample_weights.dtype != weight.dtype:
            raise RuntimeError(
                f"{fn}(): per_sample_weights has dtype {per_sample_weights.dtype} but weight has dtype "
                f"{weight.dtype}; they must match"
            )
        if per_sample_weights.device != device:
            raise RuntimeError(f"{fn}(): per_sample_weights is on {per_sample_weights.device} but weight is on "
                               f"{device}")
    xp = backend.get_array_module(weight.array)
    indices, bounds = _bag_starts(xp, input_data, offsets, include_last_offset)
    rows = weight.shape[0]
    if padding_idx is not None:
        if not isinstance(padding_idx, (int, np.integer)) or isinstance(padding_idx, bool):
            raise TypeError(f"{fn}(): padding_idx must be an int or None, got {type(padding_idx).__name__}")
        if not -rows <= padding_idx < rows:
            raise RuntimeError(
                f"{fn}(): padding_idx must be within the number of embeddings, {-rows} through {rows - 1}, "
                f"but got {padding_idx}"
            )
        padding_idx = int(padding_idx) % rows
    if indices.size:
        bad = (indices < 0) | (indices >= rows)
        if bool(bad.any()):
            position = int(xp.argmax(bad))
            raise RuntimeError(
                f"{fn}(): index {position} of input takes value {int(indices[position])} which is not in the "
                f"valid range [0, {rows})"
            )
    if max_norm is not None and indices.size:
        with no_grad():
            _renorm_(weight, indices, float(max_norm), float(norm_type))
    starts = bounds[:-1]
    bag_of = xp.searchsorted(starts, xp.arange(indices.shape[0]), side="right") - 1
    kept = xp.ones(indices.shape, dtype=bool) if padding_idx is None else indices != padding_idx
    if mode == "max":
        return _bag_max(xp, weight, indices, starts, bounds, bag_of, kept)
    coef = kept.astype(weight.dtype)
    if mode == "mean":
        sizes = xp.bincount(bag_of[kept], minlength=starts.shape[0])
        coef /= xp.maximum(sizes, 1)[bag_of].astype(weight.dtype)
    looked_up = nn_ops.Embedding(indices, padding_idx)(weight)
    if per_sample_weights is None:
        weighted = looked_up * Tensor._make(coef[:, None], False, None, 0)
    else:
        weighted = looked_up * (per_sample_weights.reshape(-1) * Tensor._make(coef, False, None, 0)).unsqueeze(1)
    return IndexScatter((bag_of,), (starts.shape[0], weight.shape[1]))(weighted)


def _bag_max(xp, weight, indices, starts, bounds, bag_of, kept):
    """Per bag and column, the first maximum over the bag's kept rows (PyTorch's CPU rule: a NaN wins only first)."""
    bags, dim = starts.shape[0], weight.shape[1]
    lengths = bounds[1:] - bounds[:-1]
    longest = int(lengths.max()) if bags else 0
    position = xp.arange(indices.shape[0]) - starts[bag_of]
    values = xp.full((bags, longest, dim), -xp.inf, dtype=weight.dtype)
    looked_up = weight.array[indices]
    # A later NaN never beats the running maximum; a NaN first in its bag is never beaten.
    nan = xp.isnan(looked_up)
    looked_up = xp.where(nan, xp.where((position == 0)[:, None], xp.inf, -xp.inf), looked_up)
    values[bag_of[kept], position[kept]] = looked_up[kept]
    # Slots past a bag's end and padding entries hold -inf and no row (-1).
    slot_rows = xp.full((bags, longest), -1, dtype=np.int64)
    slot_rows[bag_of[kept], position[kept]] = indices[kept]
    if not bool(kept.any()):  # only empty bags: zeros, still a function of weight (of zero gradient)
        return IndexScatter((bag_of[:0],), (bags, dim))(nn_ops.Embedding(indices[:0])(weight))
    picked = xp.take_along_axis(slot_rows, xp.argmax(values, axis=1), axis=1)  # (B, dim) rows, -1: no row
    # A maximum of -inf (every kept row -inf there) is PyTorch's first kept row; an empty bag gives 0.
    first_kept = xp.take_along_axis(slot_rows, xp.argmax(slot_rows >= 0, axis=1)[:, None], axis=1)
    picked = xp.where(picked < 0, first_kept, picked)
    nonempty = picked >= 0
    gathered = weight[xp.where(nonempty, picked, 0), xp.arange(dim)[None, :]]
    return elementwise.where(nonempty, gathered, 0.0)


class EmbeddingBag(Module):
    """A lookup table reduced per bag: ``embedding_bag`` with a learned ``weight`` (num_embeddings, dim).

    Args:
        num_embeddings, embedding_dim: the weight's shape; initialized from N(0, 1).
        max_norm, norm_type, mode, include_last_offset, padding_idx: as in
            ``embedding_bag`` (default mode 'mean'); the padding row starts at zeros.
        scale_grad_by_freq, sparse: only False is supported.
        _weight: an initial weight (num_embeddings, embedding_dim).

    ``forward(input, offsets=None, per_sample_weights=None)`` returns (B, embedding_dim).

    Raises:
        TypeError: a size or ``padding_idx`` is not an int.
        RuntimeError: a size is negative.
        AssertionError: ``padding_idx`` is out of range or ``_weight`` has the
            wrong shape (PyTorch's class: it asserts these).
        ValueError: an unknown mode or an unsupported option.
    """

    def __init__(self, num_embeddings: int, embedding_dim: int, max_norm=None, norm_type: float = 2.0,
                 scale_grad_by_freq: bool = False, mode: str = "mean", sparse: bool = False, _weight=None,
                 include_last_offset: bool = False, padding_idx=None, device=None, dtype=None):
        super().__init__()
        # PyTorch's types: TypeError for a size that is not an int, RuntimeError for a negative one.
        for name, value in (("num_embeddings", num_embeddings), ("embedding_dim", embedding_dim)):
            if not isinstance(value, (int, np.integer)) or isinstance(value, bool):
                raise TypeError(f"EmbeddingBag: {name} must be an int, got {type(value).__name__}")
            if value < 0:
                raise RuntimeError(f"EmbeddingBag: {name} must be non-negative, got {value}")
        if mode not in _MODES:
            raise ValueError(f"EmbeddingBag: mode has to be one of sum, mean or max, got {mode!r}")
        if scale_grad_by_freq or sparse:
            raise ValueError("EmbeddingBag: only scale_grad_by_freq=False and sparse=False are supported")
        if padding_idx is not None:
            if not isinstance(padding_idx, (int, np.integer)) or isinstance(padding_idx, bool):
                raise TypeError(f"EmbeddingBag: padding_idx must be an int or None, got {type(padding_idx).__name__}")
            if not -num_embeddings <= padding_idx < num_embeddings:
                raise AssertionError(
                    f"EmbeddingBag: padding_idx must be within num_embeddings ({num_embeddings}), got {padding_idx}"
                )
            padding_idx = int(padding_idx) % num_embeddings
        self.num_embeddings, self.embedding_dim = int(num_embeddings), int(embedding_dim)
        self.max_norm, self.norm_type = max_norm, norm_type
        self.scale_grad_by_freq, self.mode, self.sparse = scale_grad_by_freq, mode, sparse
        self.include_last_offset, self.padding_idx = include_last_offset, padding_idx
        shape = (self.num_embeddings, self.embedding_dim)
        if _weight is None:
            device = backend.normalize_device(device)
            dtype = get_default_dtype() if dtype is None else np.dtype(dtype)
            with backend.device_context(device):
                data = backend.module_for_device(device).empty(shape, dtype=dtype)
            self.weight = Parameter(data)
            self.reset_parameters()
        else:
            if tuple(_weight.shape) != shape:
                raise AssertionError(f"EmbeddingBag: _weight has shape {tuple(_weight.shape)}, expected {shape}")
            self.weight = Parameter(_weight)

    def reset_parameters(self) -> None:
        """Re-draw the weight from N(0, 1), zeroing the padding row."""
        init.normal_(self.weight)
        if self.padding_idx is not None:
            with no_grad():
                self.weight[self.padding_idx].fill_(0)

    def forward(self, input, offsets=None, per_sample_weights=None):  # noqa: A002
        """Reduce each bag of ``input`` (see ``embedding_bag``) to one row."""
        return embedding_bag(input, self.weight, offsets, self.max_norm, self.norm_type, self.scale_grad_by_freq,
                             self.mode, self.sparse, per_sample_weights, self.include_last_offset, self.padding_idx)

    @classmethod
    def from_pretrained(cls, embeddings, freeze=True, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
                        mode="mean", sparse=False, include_last_offset=False, padding_idx=None) -> EmbeddingBag:
        """An EmbeddingBag whose weight is ``embeddings`` (2-D, shared, not copied); frozen unless ``freeze=False``.

        Raises:
            AssertionError: ``embeddings`` is not 2-dimensional (PyTorch's class).
        """
        if embeddings.ndim != 2:
            raise AssertionError(f"EmbeddingBag.from_pretrained: embeddings must be 2-D, got shape {embeddings.shape}")
        rows, cols = embeddings.shape
        bag = cls(rows, cols, max_norm, norm_type, scale_grad_by_freq, mode, sparse, embeddings,
                  include_last_offset, padding_idx)
        bag.weight.requires_grad_(not freeze)
        return bag

    def extra_repr(self) -> str:
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            s += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq:
            s += f", scale_grad_by_freq={self.scale_grad_by_freq}"
        s += f", mode={self.mode!r}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        return s
