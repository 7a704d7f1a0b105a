"""Shape, indexing, factory and conversion names of PyTorch that are spellings of existing ops.

PyTorch offers most ops twice, ``torch.narrow(t, 0, 1, 2)`` and
``t.narrow(0, 1, 2)``. Each name here is written once, as a function whose
first parameter is the input, and installed at the bottom of the module as a
Tensor method (where PyTorch has that method) and exported by ``minigrad``
(where PyTorch has that function). Everything differentiable is composed of
recorded ops (indexing, ``transpose``, ``permute``, ``expand``, ``cat``), so
gradients need nothing new; ``nonzero``, ``unique`` and the random draws
return tensors that do not require grad, as in PyTorch.
"""

from __future__ import annotations

import numpy as np

from minigrad import backend
from minigrad.dtypes import get_default_dtype
from minigrad.factory import _resolve_dtype, empty, full, ones, tensor, zeros
from minigrad.ops._util import expect_tensor, normalize_axis
from minigrad.ops.shape import cat
from minigrad.tensor import Tensor

# -- views and rearrangements -------------------------------------------------------------------------------


def t(input):  # noqa: A002  (PyTorch's names)
    """The transpose of a matrix; a tensor of 0 or 1 dimensions is returned as it is (a view).

    Raises:
        RuntimeError: ``input`` has more than 2 dimensions.
    """
    expect_tensor(input, "t")
    if input.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {input.ndim}D")
    return input.transpose(0, 1) if input.ndim == 2 else input[...]


def _dim(input, dim, fn: str) -> int:  # noqa: A002
    if not isinstance(dim, (int, np.integer)) or isinstance(dim, bool):
        raise TypeError(f"{fn}(): argument 'dim' must be int, not {type(dim).__name__}")
    return normalize_axis(int(dim), input.ndim, fn)[0]


def _int(value, fn: str, name: str) -> int:
    """``value`` (an int or a 0-d integer tensor) as an int, or TypeError naming ``fn`` and the argument."""
    if isinstance(value, Tensor) and value.ndim == 0 and value.dtype.kind in "iu":
        return int(value.item())
    if not isinstance(value, (int, np.integer)):
        raise TypeError(f"{fn}(): argument '{name}' must be int, not {type(value).__name__}")
    return int(value)


def _real(value, fn: str, name: str) -> float:
    """``value`` (a real number or a one-element tensor) as a float, or TypeError naming ``fn`` and the argument."""
    if isinstance(value, Tensor) and value.numel() == 1 and value.dtype.kind in "biuf":
        return float(value.item())
    if not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{fn}(): argument '{name}' must be a real number, not {type(value).__name__}")
    return float(value)


def narrow(input, dim, start, length):  # noqa: A002
    """The view of ``length`` elements of ``input`` along ``dim`` from ``start`` (negative counts from the end).

    Raises:
        TypeError: ``dim``, ``start`` or ``length`` is not an int.
        IndexError: ``dim`` or ``start`` is out of range.
        RuntimeError: ``start + length`` runs past the end, or ``length`` is negative.
    """
    expect_tensor(input, "narrow")
    if input.ndim == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    axis = _dim(input, dim, "narrow")
    size = input.shape[axis]
    start, length = _int(start, "narrow", "start"), _int(length, "narrow", "length")
    if not -size <= start <= size:
        raise IndexError(f"narrow(): start ({start}) is out of range for dimension {dim} of size {size}")
    start = start + size if start < 0 else start
    if length < 0 or start + length > size:
        raise RuntimeError(f"narrow(): start ({start}) + length ({length}) exceeds dimension size ({size}).")
    return input[(slice(None),) * axis + (slice(start, start + length),)]


def select(input, dim, index):  # noqa: A002
    """The view ``input[..., index, ...]`` with ``index`` taken along ``dim`` (that dimension removed).

    Raises:
        TypeError: ``dim`` or ``index`` is not an int.
        IndexError: ``dim`` or ``index`` is out of range.
    """
    expect_tensor(input, "select")
    if input.ndim == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    axis = _dim(input, dim, "select")
    index = _int(index, "select", "index")
    size = input.shape[axis]
    if not -size <= index < size:
        raise IndexError(f"select(): index {index} out of range for tensor of size {tuple(input.shape)} "
                         f"at dimension {dim}")
    return input[(slice(None),) * axis + (int(index),)]


def _dims_list(dims, name: str) -> list:
    if isinstance(dims, (int, np.integer)):
        return [dims]
    if not isinstance(dims, (tuple, list)):
        raise TypeError(f"movedim(): argument '{name}' must be an int or a tuple of ints, not {type(dims).__name__}")
    return list(dims)


def movedim(input, source, destination):  # noqa: A002
    """The view of ``input`` with dimensions ``source`` moved to positions ``destination`` (ints or sequences).

    Raises:
        RuntimeError: ``source`` and ``destination`` differ in length or repeat a dimension.
        IndexError: a dimension is out of range.
    """
    expect_tensor(input, "movedim")
    source, destination = _dims_list(source, "source"), _dims_list(destination, "destination")
    if len(source) != len(destination):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({source} dims) should "
                           f"contain the same number of dims as destination ({destination} dims)")
    ndim = input.ndim
    source = list(normalize_axis(source, ndim, "movedim"))
    destination = list(normalize_axis(destination, ndim, "movedim"))
    if len(set(source)) != len(source) or len(set(destination)) != len(destination):
        raise RuntimeError("movedim: repeated dim in `source` or `destination`")
    if input.ndim == 0:
        return input[...]
    order = [d for d in range(input.ndim) if d not in source]
    for dest, src in sorted(zip(destination, source)):
        order.insert(dest, src)
    return input.permute(*order)


def swapaxes(input, axis0, axis1):  # noqa: A002
    """``input.transpose(axis0, axis1)`` under NumPy's name (also ``swapdims``)."""
    expect_tensor(input, "swapaxes")
    return input.transpose(axis0, axis1)


def broadcast_tensors(*tensors):
    """The tensors expanded (as views) to their common broadcast shape.

    Raises:
        RuntimeError: the shapes do not broadcast.
    """
    for k, item in enumerate(tensors):
        expect_tensor(item, "broadcast_tensors", f"tensors[{k}]")
    try:
        shape = np.broadcast_shapes(*(tuple(item.shape) for item in tensors))
    except ValueError:
        shapes = ", ".join(str(list(item.shape)) for item in tensors)
        raise RuntimeError(f"broadcast_tensors: shapes {shapes} cannot be broadcast together") from None
    return tuple(item.expand(*shape) if tuple(item.shape) != shape else item[...] for item in tensors)


def broadcast_to(input, size):  # noqa: A002
    """A view of ``input`` expanded to ``size`` (``-1`` keeps a dimension), as ``input.expand(size)``.

    Raises:
        TypeError: ``input`` is not a Tensor.
        RuntimeError: ``input`` does not broadcast to ``size``.
    """
    expect_tensor(input, "broadcast_to")
    return input.broadcast_to(size)


def broadcast_shapes(*shapes) -> tuple:
    """The shape that tensors of ``shapes`` (ints or sequences of ints) broadcast to, as a tuple.

    PyTorch returns a ``torch.Size``; minigrad's shapes are tuples.

    Raises:
        TypeError: a shape is neither an int nor a sequence of ints.
        RuntimeError: the shapes do not broadcast together.
    """
    as_tuples = [(shape,) if isinstance(shape, (int, np.integer)) else shape for shape in shapes]
    for k, shape in enumerate(as_tuples):
        if isinstance(shape, (str, bytes)) or not isinstance(shape, (tuple, list)) or not all(
            isinstance(d, (int, np.integer)) and not isinstance(d, bool) for d in shape
        ):
            raise TypeError(f"broadcast_shapes(): shapes[{k}] must be an int or a sequence of ints, got {shape!r}")
    as_tuples = [tuple(int(d) for d in shape) for shape in as_tuples]
    try:
        return tuple(int(d) for d in np.broadcast_shapes(*as_tuples))
    except ValueError:
        raise RuntimeError(
            f"broadcast_shapes: shapes {', '.join(str(list(s)) for s in as_tuples)} cannot be broadcast together"
        ) from None


def meshgrid(*tensors, indexing="ij"):
    """Coordinate grids from 1-D tensors: output ``k`` varies along dimension ``k`` (``"ij"``) or as NumPy's ``"xy"``.

    Raises:
        RuntimeError: an input is not 0-D or 1-D, or the inputs differ in dtype or device.
        RuntimeError: ``indexing`` is neither ``"ij"`` nor ``"xy"``, as PyTorch.
    """
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f"torch.meshgrid: indexing must be one of 'xy' or 'ij', but received: {indexing}")
    for k, item in enumerate(tensors):
        expect_tensor(item, "meshgrid", f"tensors[{k}]")
        if item.ndim > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: {item.ndim}D")
    if len({item.dtype for item in tensors}) > 1 or len({item.device for item in tensors}) > 1:
        raise RuntimeError("torch.meshgrid: Expected all tensors in the tensor list to have the same dtype "
                           "and device")
    flat = [item.reshape(-1) for item in tensors]
    swap = indexing == "xy" and len(flat) >= 2
    if swap:
        flat[0], flat[1] = flat[1], flat[0]
    shape = tuple(item.shape[0] for item in flat)
    grids = []
    for k, item in enumerate(flat):
        view = [1] * len(flat)
        view[k] = shape[k]
        grids.append(item.reshape(*view).expand(*shape))
    if swap:  # "xy" is "ij" of the inputs with the first two swapped, outputs swapped back
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)


# -- joining ---------------------------------------------------------------------------------------------------


def _at_least(tensors, ndim: int, fn: str) -> list:
    if not isinstance(tensors, (list, tuple)):
        raise TypeError(f"{fn}(): argument 'tensors' must be tuple of Tensors, not {type(tensors).__name__}")
    if not tensors:
        raise RuntimeError(f"{fn} expects a non-empty TensorList")
    out = []
    for k, item in enumerate(tensors):
        expect_tensor(item, fn, f"tensors[{k}]")
        if ndim == 2 and item.ndim < 2:
            item = item.reshape(1, -1)
        elif ndim == 3 and item.ndim < 3:
            item = item.reshape(1, -1, 1) if item.ndim < 2 else item.unsqueeze(-1)
        out.append(item)
    return out


def hstack(tensors):
    """Join along the columns: dimension 1, or 0 when the inputs are 1-D."""
    items = [item.reshape(1) if item.ndim == 0 else item for item in _at_least(tensors, 1, "hstack")]
    return cat(items, 0 if items[0].ndim == 1 else 1)


def vstack(tensors):
    """Join along the rows (dimension 0), 1-D inputs taken as rows of shape ``(1, n)``."""
    return cat(_at_least(tensors, 2, "vstack"), 0)


def dstack(tensors):
    """Join along the depth (dimension 2), inputs raised to 3-D as NumPy's ``atleast_3d``."""
    return cat(_at_least(tensors, 3, "dstack"), 2)


def column_stack(tensors):
    """Join 0-D and 1-D inputs as columns and others along dimension 1.

    Raises:
        TypeError: ``tensors`` is not a list or tuple of Tensors. RuntimeError: it is empty (PyTorch's classes).
    """
    if not isinstance(tensors, (list, tuple)):
        raise TypeError(f"column_stack(): argument 'tensors' must be tuple of Tensors, not {type(tensors).__name__}")
    if not tensors:
        raise RuntimeError("column_stack expects a non-empty TensorList")
    columns = []
    for k, item in enumerate(tensors):
        expect_tensor(item, "column_stack", f"tensors[{k}]")
        columns.append(item.reshape(-1, 1) if item.ndim <= 1 else item)
    return cat(columns, 1)


def concat(tensors, dim=0):
    """``cat`` under its other name (also ``concatenate``)."""
    return cat(tensors, dim)


# -- repetition, diagonals ---------------------------------------------------------------------------------------


def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):  # noqa: A002
    """Each element (or slice along ``dim``) repeated ``repeats`` times in place; flattened when ``dim`` is None.

    ``repeats`` is an int or a 1-D int tensor with one count per element of
    that dimension. Called with only an int tensor, returns
    ``arange(len(t)).repeat_interleave(t)``, as PyTorch does.

    Raises:
        TypeError: an int ``repeats`` that is not an int.
        RuntimeError: ``repeats`` has the wrong length, is negative or not integral; ``repeats=None`` with an
            input that is not a 1-D integer tensor.
    """
    expect_tensor(input, "repeat_interleave")
    if repeats is None:
        if input.ndim != 1 or input.dtype.kind not in "iu":
            raise RuntimeError(f"repeat_interleave(): with repeats=None the input must be a 1-D integer tensor of "
                               f"counts, got {input.ndim}-D {input.dtype}")
        counts = backend.to_numpy(input.array)
        return tensor(np.repeat(np.arange(counts.shape[0]), counts), device=input.device)
    source = input.reshape(-1) if dim is None else input
    axis = 0 if dim is None else _dim(input, dim, "repeat_interleave")
    length = source.shape[axis] if source.ndim else 1
    if isinstance(repeats, Tensor):
        if repeats.dtype.kind not in "iu":
            raise RuntimeError("repeat_interleave: repeats has to be Long tensor")
        counts = backend.to_numpy(repeats.array).reshape(-1)
        if counts.size == 1:
            counts = np.full(length, counts[0])
    else:
        counts = np.full(length, _int(repeats, "repeat_interleave", "repeats"))
    if counts.shape[0] != length:
        raise RuntimeError(f"repeats must have the same size as input along dim, but got repeats.size(0) = "
                           f"{counts.shape[0]} and input.size({axis}) = {length}")
    if (counts < 0).any():
        raise RuntimeError("repeats can not be negative")
    index = np.repeat(np.arange(length), counts)
    if output_size is not None and index.shape[0] != output_size:
        raise RuntimeError(f"repeat_interleave: output_size {output_size} does not match the {index.shape[0]} "
                           "repeated elements")
    if source.ndim == 0:
        source = source.reshape(1)
    return source.index_select(axis, tensor(index, device=input.device))


def diag(input, diagonal=0):  # noqa: A002
    """A square matrix with the 1-D ``input`` on its ``diagonal``-th diagonal, or the diagonal of a matrix.

    Raises:
        RuntimeError: ``input`` is not 1-D or 2-D.
    """
    expect_tensor(input, "diag")
    if input.ndim == 2:
        return input.diagonal(diagonal)
    if input.ndim != 1:
        raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {input.ndim}D")
    n = input.shape[0]
    size = n + abs(diagonal)
    out = zeros(size, size, dtype=input.dtype, device=input.device)
    rows = np.arange(n) + max(-diagonal, 0)
    cols = np.arange(n) + max(diagonal, 0)
    out[tensor(rows, device=input.device), tensor(cols, device=input.device)] = input
    return out


def rot90(input, k=1, dims=(0, 1)):  # noqa: A002
    """``input`` rotated by ``k`` quarter turns in the plane of ``dims`` (from the first towards the second).

    Raises:
        TypeError: ``k`` is not an int, ``dims`` not a tuple.
        RuntimeError: ``dims`` is not two distinct dimensions, or ``input`` has fewer than 2.
    """
    expect_tensor(input, "rot90")
    k = _int(k, "rot90", "k")
    if not isinstance(dims, (tuple, list)):
        raise TypeError(f"rot90(): argument 'dims' must be a tuple of two ints, not {type(dims).__name__}")
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if input.ndim < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {input.ndim}")
    a, b = normalize_axis(tuple(dims), input.ndim, "rot90")
    if a == b:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {a} and dim1 = {b}")
    k %= 4
    if k == 1:
        return input.flip([b]).transpose(a, b)
    if k == 2:
        return input.flip([a, b])
    if k == 3:
        return input.flip([a]).transpose(a, b)
    return input[...]


# -- selection by value (results do not require grad, except masked_select) --------------------------------------


def nonzero(input, *, as_tuple=False):  # noqa: A002
    """Indices of the nonzero elements: an int64 tensor ``(count, ndim)``, or one 1-D tensor per dimension."""
    expect_tensor(input, "nonzero")
    xp = backend.get_array_module(input.array)
    where = xp.nonzero(input.array.reshape(1) if input.ndim == 0 else input.array)
    if as_tuple:
        return tuple(Tensor(w.astype(np.int64)) for w in where)
    return Tensor(xp.stack(where, axis=1).astype(np.int64) if where else xp.zeros((0, 0), np.int64))


def argwhere(input):  # noqa: A002
    """``nonzero(input)``: the ``(count, ndim)`` int64 indices of the nonzero elements."""
    expect_tensor(input, "argwhere")
    if input.ndim == 0:
        return Tensor(backend.get_array_module(input.array).zeros((int(bool(input.array)), 0), np.int64))
    return nonzero(input)


def masked_select(input, mask):  # noqa: A002
    """The elements of ``input`` where the bool ``mask`` is True, as a 1-D tensor (both broadcast first).

    Differentiable in ``input``.

    Raises:
        RuntimeError: ``mask`` is not bool, or the shapes do not broadcast.
    """
    expect_tensor(input, "masked_select")
    expect_tensor(mask, "masked_select", "mask")
    if mask.dtype != np.bool_:
        raise RuntimeError(f"masked_select: expected BoolTensor for mask, got {mask.dtype}")
    values, mask = broadcast_tensors(input, mask)
    return values[mask]


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):  # noqa: A002
    """The distinct values of ``input`` in ascending order (flattened), optionally with inverse indices and counts.

    With ``dim``, the distinct slices along ``dim`` (in lexicographic order); the inverse indices then have
    one entry per slice.

    Raises:
        TypeError: ``input`` is not a Tensor, ``dim`` not an int. IndexError: ``dim`` is out of range.
    """
    expect_tensor(input, "unique")
    xp = backend.get_array_module(input.array)
    if dim is not None:
        axis = _dim(input, dim, "unique")
        values, inverse, counts = xp.unique(input.array, return_inverse=True, return_counts=True, axis=axis)
        out = [Tensor(values)]
        if return_inverse:
            out.append(Tensor(inverse.reshape(-1).astype(np.int64)))
        if return_counts:
            out.append(Tensor(counts.astype(np.int64)))
        return out[0] if len(out) == 1 else tuple(out)
    values, inverse, counts = xp.unique(input.array, return_inverse=True, return_counts=True)
    out = [Tensor(values)]
    if return_inverse:
        out.append(Tensor(inverse.reshape(input.shape).astype(np.int64)))
    if return_counts:
        out.append(Tensor(counts.astype(np.int64)))
    return out[0] if len(out) == 1 else tuple(out)


# -- factories -----------------------------------------------------------------------------------------------------


def eye(n, m=None, *, dtype=None, device=None, requires_grad=False):
    """The ``n x m`` identity matrix (``m`` defaults to ``n``).

    Raises:
        TypeError: ``n`` or ``m`` is not an int.
        RuntimeError: ``n`` or ``m`` is negative.
    """
    n = _int(n, "eye", "n")
    m = n if m is None else _int(m, "eye", "m")
    if n < 0 or m < 0:
        raise RuntimeError(f"eye: n and m must be non-negative, got {n} and {m}")
    out = zeros(n, m, dtype=dtype, device=device)
    out.array[np.arange(min(n, m)), np.arange(min(n, m))] = 1
    return out.requires_grad_(requires_grad) if requires_grad else out


def logspace(start, end, steps, base=10.0, *, dtype=None, device=None, requires_grad=False):
    """``steps`` values ``base ** x`` for ``x`` evenly spaced from ``start`` to ``end``.

    Raises:
        TypeError: ``steps`` is not an int; ``start``, ``end`` or ``base`` is not a real number.
        RuntimeError: ``steps`` is negative.
    """
    if _int(steps, "logspace", "steps") < 0:
        raise RuntimeError("logspace(): number of steps must be non-negative")
    dtype = _resolve_dtype(dtype) or get_default_dtype()
    start, end, base = (_real(v, "logspace", name) for v, name in ((start, "start"), (end, "end"), (base, "base")))
    values = np.power(base, np.linspace(start, end, int(steps)))
    return tensor(values, dtype=dtype, device=device, requires_grad=requires_grad)


def _like(input, dtype, device, fn: str):  # noqa: A002
    expect_tensor(input, fn)
    return {"dtype": input.dtype if dtype is None else _resolve_dtype(dtype),
            "device": input.device if device is None else device}


def empty_like(input, *, dtype=None, device=None, requires_grad=False):  # noqa: A002
    """An uninitialized tensor with ``input``'s shape, dtype and device (minigrad fills it with zeros)."""
    like = _like(input, dtype, device, "empty_like")
    return empty(input.shape, **like, requires_grad=requires_grad)


def rand_like(input, *, dtype=None, device=None, requires_grad=False):  # noqa: A002
    """Uniform [0, 1) samples with ``input``'s shape, dtype and device."""
    from minigrad.factory import rand  # noqa: PLC0415  (rand reads the generator at call time)

    like = _like(input, dtype, device, "rand_like")
    return rand(input.shape, **like, requires_grad=requires_grad)


def randn_like(input, *, dtype=None, device=None, requires_grad=False):  # noqa: A002
    """Standard normal samples with ``input``'s shape, dtype and device."""
    from minigrad.factory import randn  # noqa: PLC0415

    like = _like(input, dtype, device, "randn_like")
    return randn(input.shape, **like, requires_grad=requires_grad)


def randint_like(input, low=0, high=None, *, dtype=None, device=None):  # noqa: A002
    """Integers uniform in [low, high) with ``input``'s shape (``randint_like(t, high)`` draws from [0, high))."""
    from minigrad.factory import randint  # noqa: PLC0415

    if high is None:
        low, high = 0, low
    like = _like(input, dtype, device, "randint_like")
    draws = randint(low, high, tuple(input.shape), device=like["device"])
    return draws if draws.dtype == like["dtype"] else _converted(draws, like["dtype"])


def bernoulli(input, p=None, *, generator=None):  # noqa: A002
    """0/1 samples, 1 with probability ``input`` (or ``p``) elementwise, in ``input``'s dtype.

    Raises:
        RuntimeError: a probability is outside [0, 1].
    """
    expect_tensor(input, "bernoulli")
    probs = np.full(input.shape, float(p)) if p is not None else backend.to_numpy(input.array)
    if not ((probs >= 0) & (probs <= 1)).all():
        raise RuntimeError("bernoulli: all probabilities must be in [0, 1]")
    draws = _uniform(input.device, input.shape, generator) < probs
    return tensor(draws.astype(input.dtype if input.dtype.kind == "f" else np.float32), device=input.device)


def _numpy_generator(generator):
    """The NumPy generator behind an ``mg.Generator``, or the default CPU one."""
    return backend.generator("cpu") if generator is None else generator._rng


def _uniform(device, shape, generator):
    return _numpy_generator(generator).random(tuple(shape))


def multinomial(input, num_samples, replacement=False, *, generator=None):  # noqa: A002
    """``num_samples`` category indices drawn per row with probabilities proportional to ``input`` (int64).

    Raises:
        TypeError: ``num_samples`` is not an int, ``replacement`` not a bool.
        RuntimeError: ``num_samples`` is not positive; ``input`` is not 1-D or 2-D, has negative, infinite or
            all-zero weights, or (without replacement) fewer nonzero categories than ``num_samples``.
    """
    expect_tensor(input, "multinomial")
    if _int(num_samples, "multinomial", "num_samples") <= 0:
        raise RuntimeError(f"multinomial(): cannot sample num_samples <= 0 samples (got {num_samples})")
    if not isinstance(replacement, (bool, np.bool_)):
        raise TypeError(f"multinomial(): argument 'replacement' must be bool, not {type(replacement).__name__}")
    if input.ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    weights = backend.to_numpy(input.array).astype(np.float64).reshape(-1, input.shape[-1])
    if not np.isfinite(weights).all() or (weights < 0).any():
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    if (weights.sum(axis=1) <= 0).any():
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    if not replacement and num_samples > weights.shape[1]:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    gen = _numpy_generator(generator)
    if replacement:
        out = np.stack([gen.choice(weights.shape[1], size=num_samples, p=row / row.sum()) for row in weights])
    else:  # an exponential race: category i finishes at -log(u)/w_i; the first num_samples to finish are drawn
        with np.errstate(divide="ignore"):
            finish = -np.log(gen.random(weights.shape)) / weights
        out = np.argsort(finish, axis=1, kind="stable")[:, :num_samples]
    out = out.astype(np.int64)
    return tensor(out if input.ndim == 2 else out[0], device=input.device)


def normal(mean, std=1.0, size=None, *, generator=None, dtype=None, device=None, requires_grad=False):
    """Normal samples: ``normal(mean, std, size)`` with numbers, or elementwise with tensor ``mean``/``std``.

    Raises:
        TypeError: ``mean`` or ``std`` is neither a Tensor nor a real number; ``size`` is not a tuple of ints.
        RuntimeError: ``std`` is negative, ``size`` has a negative entry, or tensor ``mean`` and ``std``
            do not broadcast.
    """
    mean_t, std_t = isinstance(mean, Tensor), isinstance(std, Tensor)
    if not mean_t and not std_t:
        if size is None:
            raise TypeError("normal() with float mean and std needs a size")
        if _real(std, "normal", "std") < 0:
            raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
        if not isinstance(size, (tuple, list)) or not all(isinstance(n, (int, np.integer)) for n in size):
            raise TypeError(f"normal(): argument 'size' must be a tuple of ints, got {size!r}")
        if any(n < 0 for n in size):
            raise RuntimeError(f"normal(): size {tuple(size)} has a negative dimension")
        shape = tuple(int(n) for n in size)
        dtype = _resolve_dtype(dtype) or get_default_dtype()
        like = None
    else:
        like = mean if mean_t else std
        try:
            shape = np.broadcast_shapes(tuple(mean.shape) if mean_t else (), tuple(std.shape) if std_t else ())
        except ValueError:
            raise RuntimeError(
                f"normal(): the shapes of mean {list(mean.shape) if mean_t else []} and std "
                f"{list(std.shape) if std_t else []} do not broadcast"
            ) from None
        dtype = like.dtype
        device = like.device
    m = backend.to_numpy(mean.array) if mean_t else _real(mean, "normal", "mean")
    s = backend.to_numpy(std.array) if std_t else _real(std, "normal", "std")
    if (np.asarray(s) < 0).any():
        raise RuntimeError("normal expects all elements of std >= 0.0")
    gen = _numpy_generator(generator)
    draws = m + s * gen.standard_normal(shape)
    return tensor(np.asarray(draws), dtype=dtype, device=device, requires_grad=requires_grad)


# -- Tensor-only spellings: new_* factories, conversions, layout queries ------------------------------------------


def new_zeros(self, *size, dtype=None, device=None, requires_grad=False):
    """Zeros of shape ``size`` with this tensor's dtype and device unless given."""
    return zeros(*size, **_like(self, dtype, device, "new_zeros"), requires_grad=requires_grad)


def new_ones(self, *size, dtype=None, device=None, requires_grad=False):
    """Ones of shape ``size`` with this tensor's dtype and device unless given."""
    return ones(*size, **_like(self, dtype, device, "new_ones"), requires_grad=requires_grad)


def new_empty(self, *size, dtype=None, device=None, requires_grad=False):
    """An uninitialized tensor of shape ``size`` with this tensor's dtype and device unless given."""
    return empty(*size, **_like(self, dtype, device, "new_empty"), requires_grad=requires_grad)


def new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False):
    """``fill_value`` everywhere, shape ``size``, with this tensor's dtype and device unless given."""
    return full(size, fill_value, **_like(self, dtype, device, "new_full"), requires_grad=requires_grad)


def new_tensor(self, data, *, dtype=None, device=None, requires_grad=False):
    """A new leaf holding a copy of ``data``, with this tensor's dtype and device unless given."""
    if isinstance(data, Tensor):
        data = backend.to_numpy(data.array).copy()
    return tensor(data, **_like(self, dtype, device, "new_tensor"), requires_grad=requires_grad)


def _converted(self, dtype):
    """``self`` cast to ``dtype``; a cast to an integer or bool dtype is not differentiable (as in PyTorch)."""
    if np.dtype(dtype).kind in "fc":
        return self.to(dtype)
    if self.dtype == dtype:
        return self
    return Tensor(self.array.astype(dtype))


def type_as(self, other):
    """This tensor cast to ``other``'s dtype (itself when the dtype is already the same)."""
    expect_tensor(other, "type_as", "other")
    return _converted(self, other.dtype)


def _cast(dtype):
    def convert(self):
        return _converted(self, dtype)

    convert.__doc__ = f"Cast to {np.dtype(dtype).name} (``self.to({np.dtype(dtype).name})``)."
    return convert


def is_contiguous(self, memory_format=None) -> bool:
    """True when the elements lie in row-major order without gaps."""
    return bool(self.array.flags.c_contiguous)


def stride(self, dim=None):
    """The step in elements between neighbours along each dimension (or along ``dim``)."""
    steps = tuple(s // self.array.itemsize for s in self.array.strides)
    return steps if dim is None else steps[normalize_axis(dim, self.ndim, "stride")[0]]


def get_device(self) -> int:
    """The CUDA device index, or -1 on the CPU."""
    return -1 if self.device == "cpu" else self.device.index


def ndimension(self) -> int:
    """The number of dimensions (``dim()``)."""
    return self.ndim


def nelement(self) -> int:
    """The number of elements (``numel()``)."""
    return int(self.array.size)


def is_tensor(obj) -> bool:
    """True when ``obj`` is a minigrad Tensor (a Parameter included)."""
    return isinstance(obj, Tensor)


def numel(input) -> int:  # noqa: A002
    """The number of elements of ``input``."""
    expect_tensor(input, "numel")
    return int(input.array.size)


# -- installation ----------------------------------------------------------------------------------------------

_BOTH = {
    "t": t, "narrow": narrow, "select": select, "movedim": movedim, "moveaxis": movedim, "swapaxes": swapaxes,
    "swapdims": swapaxes, "repeat_interleave": repeat_interleave, "diag": diag, "rot90": rot90,
    "nonzero": nonzero, "argwhere": argwhere, "masked_select": masked_select, "unique": unique,
    "bernoulli": bernoulli, "multinomial": multinomial,
}
_FUNCTIONS_ONLY = {
    "broadcast_tensors": broadcast_tensors, "broadcast_to": broadcast_to, "broadcast_shapes": broadcast_shapes,
    "meshgrid": meshgrid, "hstack": hstack, "vstack": vstack,
    "dstack": dstack, "column_stack": column_stack, "concat": concat, "concatenate": concat, "eye": eye,
    "logspace": logspace, "empty_like": empty_like, "rand_like": rand_like, "randn_like": randn_like,
    "randint_like": randint_like, "normal": normal, "is_tensor": is_tensor, "numel": numel,
}
_METHODS_ONLY = {
    "new_zeros": new_zeros, "new_ones": new_ones, "new_empty": new_empty, "new_full": new_full,
    "new_tensor": new_tensor, "type_as": type_as, "int": _cast(np.int32), "short": _cast(np.int16),
    "byte": _cast(np.uint8), "char": _cast(np.int8), "half": _cast(np.float16), "is_contiguous": is_contiguous,
    "stride": stride, "get_device": get_device, "ndimension": ndimension, "nelement": nelement,
}

for _name, _fn in {**_BOTH, **_METHODS_ONLY}.items():
    if hasattr(Tensor, _name):
        raise ImportError(f"minigrad.shape_forms would shadow Tensor.{_name}")
    setattr(Tensor, _name, _fn)

del _name, _fn

moveaxis, swapdims, concatenate = movedim, swapaxes, concat
__all__ = sorted({**_BOTH, **_FUNCTIONS_ONLY})
