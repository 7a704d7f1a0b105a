"""Array backends: NumPy on the CPU, CuPy on CUDA devices.

This is the only module that knows CuPy exists. Everything else asks it for
the array module of some data (``get_array_module``), for a device name
(``device_of``), or for one of the few helpers whose NumPy and CuPy spellings
differ (``scatter_add``, random numbers, conversion between devices).

Devices are named like PyTorch's: ``"cpu"`` and ``"cuda:N"``.
"""

from __future__ import annotations

import re
import threading

import numpy as np

from minigrad.device import CPU as _CPU
from minigrad.device import default_device as _default_device
from minigrad.device import device as _device

try:  # CuPy is optional: the "gpu" extra installs it.
    import cupy as _cupy
    import cupyx as _cupyx

    try:
        _CUDA_DEVICES = _cupy.cuda.runtime.getDeviceCount()
    except Exception:  # CuPy installed but no usable driver or device.
        _CUDA_DEVICES = 0
except ImportError:
    _cupy = None
    _cupyx = None
    _CUDA_DEVICES = 0

_DEVICE_PATTERN = re.compile(r"^(cpu|cuda)(?::(\d+))?$")
# One device object per CUDA device, handed out by device_of and normalize_device.
_CUDA_NAMES = tuple(_device("cuda", i) for i in range(_CUDA_DEVICES))


def cuda_is_available() -> bool:
    """True when CuPy is importable and at least one CUDA device is visible."""
    return _CUDA_DEVICES > 0


def cuda_is_installed() -> bool:
    """True when CuPy is importable (whether or not it sees a device)."""
    return _cupy is not None


def cuda_device_count() -> int:
    """Number of CUDA devices CuPy can see (0 without CuPy)."""
    return _CUDA_DEVICES


def cuda_unavailable_reason() -> str:
    """A sentence saying why CUDA tensors cannot be made here ('' when they can)."""
    if _cupy is None:
        return "CuPy is not installed (pip install 'minigrad[gpu]')"
    if _CUDA_DEVICES == 0:
        return "CuPy is installed but no CUDA device is visible"
    return ""


def use_cuda_device(index: int) -> None:
    """Make CUDA device ``index`` current for this process (multi-GPU nodes: one per rank)."""
    if not cuda_is_available():
        raise RuntimeError(f"cannot select CUDA device {index}: {cuda_unavailable_reason()}")
    _cupy.cuda.Device(index).use()


def current_cuda_device() -> int:
    """The index of this thread's current CUDA device (CuPy's), for ``mg.cuda.current_device``.

    Raises:
        RuntimeError: no CUDA device is available.
    """
    if not cuda_is_available():
        raise RuntimeError(f"no current CUDA device: {cuda_unavailable_reason()}")
    return _cupy.cuda.runtime.getDevice()


def synchronize_cuda_device(index: int) -> None:
    """Wait until all work queued on CUDA device ``index`` (every stream) has finished."""
    _cupy.cuda.Device(index).synchronize()


def cuda_device_name(index: int) -> str:
    """The product name of CUDA device ``index`` (``"NVIDIA H100 80GB HBM3"``)."""
    name = _cupy.cuda.runtime.getDeviceProperties(index)["name"]
    return name.decode() if isinstance(name, bytes) else str(name)


def cuda_memory_allocated(index: int) -> int:
    """Bytes of CuPy's default memory pool in use by arrays on CUDA device ``index``."""
    with _cupy.cuda.Device(index):
        return int(_cupy.get_default_memory_pool().used_bytes())


def cuda_memory_reserved(index: int) -> int:
    """Bytes CuPy's default memory pool holds on CUDA device ``index`` (in use plus cached)."""
    with _cupy.cuda.Device(index):
        return int(_cupy.get_default_memory_pool().total_bytes())


def cuda_empty_cache() -> None:
    """Give the cached, unused blocks of CuPy's memory pools back to the driver."""
    _cupy.get_default_memory_pool().free_all_blocks()
    _cupy.get_default_pinned_memory_pool().free_all_blocks()


def normalize_device(device) -> str:
    """Return the canonical device (an ``mg.device``, a str subclass) for ``device``.

    Accepts ``"cpu"``, ``"cpu:N"`` (the CPU, as in PyTorch: a tensor made
    there reports ``"cpu"``), ``"cuda"`` (meaning the current CUDA device),
    ``"cuda:N"``, an ``mg.device`` of those, an int N (meaning ``"cuda:N"``),
    or None (meaning the default device, ``mg.set_default_device``).

    Raises:
        RuntimeError: the name is not a device name (as PyTorch), or a CUDA device was asked for but
            none is available.
    """
    if device is None:
        device = _default_device()
        if device is _CPU:
            return _CPU
        try:
            return normalize_device(device)
        except RuntimeError as error:
            raise RuntimeError(f"{error} (the default device; mg.set_default_device(None) restores the CPU)") from None
    if isinstance(device, int) and not isinstance(device, bool):
        device = f"cuda:{device}"
    if not isinstance(device, str):
        raise TypeError(f"device must be a str such as 'cpu' or 'cuda:0', got {type(device).__name__}")
    match = _DEVICE_PATTERN.match(device)
    if match is None:
        raise RuntimeError(f"unknown device {device!r}: expected 'cpu', 'cuda' or 'cuda:N'")
    kind, index = match.groups()
    if kind == "cpu":
        return _CPU
    if not cuda_is_available():
        raise RuntimeError(f"cannot use device '{device}': {cuda_unavailable_reason()}")
    index = int(index) if index is not None else _cupy.cuda.runtime.getDevice()
    if index >= _CUDA_DEVICES:
        raise RuntimeError(f"device '{device}' does not exist: {_CUDA_DEVICES} CUDA device(s) visible")
    return _CUDA_NAMES[index]


def get_array_module(*arrays):
    """Return ``numpy`` or ``cupy``, whichever module the given arrays belong to.

    Non-array arguments (Python scalars, None) are ignored.

    Raises:
        RuntimeError: the arrays live on different devices (names both).
    """
    xp = np
    first = None
    for a in arrays:
        if a is None or isinstance(a, (int, float, bool, np.generic)):
            continue  # scalars combine with arrays of any device
        if type(a) is np.ndarray:
            if xp is not np:
                raise RuntimeError(
                    f"expected all arrays on the same device, found {device_of(first)} and cpu"
                )
            if first is None and type(a) is np.ndarray:
                first = a
            continue
        if _cupy is not None and isinstance(a, _cupy.ndarray):
            if first is not None and device_of(first) != device_of(a):
                raise RuntimeError(
                    f"expected all arrays on the same device, found {device_of(first)} and {device_of(a)}"
                )
            xp = _cupy
            first = a
    return xp


def is_array(obj) -> bool:
    """True for a NumPy or CuPy ndarray."""
    return isinstance(obj, np.ndarray) or (_cupy is not None and isinstance(obj, _cupy.ndarray))


def is_writeable(array) -> bool:
    """False for an array whose elements may share memory (a broadcast view): writing to it is refused.

    NumPy marks its broadcast views read-only (``flags.writeable``); CuPy has
    no such flag and hands out writable broadcast views, so a CuPy array
    counts as not writeable when a dimension longer than 1 has stride 0.
    """
    if type(array) is np.ndarray or _cupy is None or not isinstance(array, _cupy.ndarray):
        return array.flags.writeable
    return all(stride != 0 or size <= 1 for stride, size in zip(array.strides, array.shape))


def device_of(array) -> str:
    """The device (``mg.device("cpu")`` or ``mg.device("cuda:N")``, str subclasses) of a NumPy or CuPy array."""
    if type(array) is np.ndarray or _cupy is None or not isinstance(array, _cupy.ndarray):
        return _CPU
    index = array.device.id
    return _CUDA_NAMES[index] if index < len(_CUDA_NAMES) else _device("cuda", index)


def module_for_device(device: str):
    """The array module that holds data on ``device`` (a canonical name)."""
    return np if device == "cpu" else _cupy


def as_array(data, dtype=None, device: str = "cpu"):
    """Make an array on ``device`` from ``data`` (array, list, scalar), copying only when needed."""
    if device == "cpu":
        if _cupy is not None and isinstance(data, _cupy.ndarray):
            data = _cupy.asnumpy(data)
        return np.asarray(data, dtype=dtype)
    with _cupy.cuda.Device(_device_index(device)):
        return _cupy.asarray(data, dtype=dtype)


def to_device(array, device: str):
    """Return ``array`` on ``device``; the same object when it is already there."""
    if device_of(array) == device:
        return array
    if device == "cpu":
        return _cupy.asnumpy(array)
    with _cupy.cuda.Device(_device_index(device)):
        return _cupy.asarray(array)


def to_numpy(array) -> np.ndarray:
    """A NumPy array with the contents of ``array`` (copied from the GPU when needed)."""
    if type(array) is np.ndarray:
        return array
    if _cupy is not None and isinstance(array, _cupy.ndarray):
        return _cupy.asnumpy(array)
    return np.asarray(array)


def synchronize(array) -> None:
    """Wait until the GPU work producing ``array`` has finished (no-op on the CPU).

    MPI never synchronizes CUDA streams, so communication code calls this
    before handing a device buffer to MPI.
    """
    if _cupy is not None and isinstance(array, _cupy.ndarray):
        _cupy.cuda.get_current_stream().synchronize()


def _device_index(device: str) -> int:
    return int(device.split(":")[1])


def device_context(device: str):
    """A context manager making ``device`` current for new CuPy arrays (a no-op for "cpu")."""
    if device == "cpu":
        return _NullContext()
    return _cupy.cuda.Device(_device_index(device))


class _NullContext:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def scatter_add(target, indices, values) -> None:
    """``target[indices] += values`` with repeated indices summed (in place).

    NumPy spells this ``np.add.at``, CuPy ``cupy.add.at`` (``cupyx.scatter_add`` where that is missing). ``np.add.at``
    costs some 10 ns a value unless it indexes a 1-D target with one array;
    a float target of more dimensions, with at least a quarter as many
    values as elements, instead gets every sum from one ``np.bincount``
    over flat positions: the sums are formed in float64 and rounded once,
    so they differ from ``np.add.at``'s by float rounding only.

    Raises:
        IndexError: an index is out of bounds (as ``target[indices]`` would).
        ValueError: ``values`` does not broadcast to ``target[indices]``.
    """
    if type(target) is not np.ndarray:
        add_at = getattr(_cupy.add, "at", None)  # CuPy 14 deprecates cupyx.scatter_add for cupy.add.at
        if add_at is not None:
            add_at(target, indices, values)
        else:
            _cupyx.scatter_add(target, indices, values)
        return
    values = np.asarray(values)
    if (target.ndim < 2 or target.dtype.kind != "f" or target.itemsize > 8 or values.dtype.kind not in "biuf"
            or values.size * 4 < target.size):
        np.add.at(target, indices, values)
        return
    positions = np.arange(target.size).reshape(target.shape)[indices]
    # Negated in and out: a position no value reaches then adds -0.0, which leaves every number as it
    # was, -0.0 included (adding bincount's +0.0 would turn -0.0 into +0.0).
    negated = np.negative(np.broadcast_to(values, positions.shape), dtype=np.float64)
    sums = np.bincount(positions.ravel(), weights=negated.ravel(), minlength=target.size)
    np.subtract(target, sums.reshape(target.shape), out=target, casting="same_kind")


# ---------------------------------------------------------------- random numbers


class _RandomState(threading.local):
    """One generator per device and thread, all reseeded by ``manual_seed``."""

    def __init__(self):
        self.epoch = -1
        self.generators = {}
        self.seeded = {}  # CUDA device -> the _cuda_seeds entry its generator was made from


_random = _RandomState()
# [seed, epoch]: the epoch counts manual_seed calls so every thread notices a reseed.
_seeding = [None, 0]
# CUDA device -> [seed] set by manual_seed_cuda since the last manual_seed; a new list object
# per call, so each thread's generator for that device notices the reseed (by identity).
_cuda_seeds: dict = {}


def check_seed(seed, fn: str) -> int:
    """``seed`` as PyTorch takes it: an int in [-2**63, 2**64 - 1], negative ones as ``2**64 + seed``.

    Raises:
        TypeError: ``seed`` is not an int. ValueError: it is out of that range (both name ``fn``).
    """
    if not isinstance(seed, (int, np.integer)) or isinstance(seed, bool):
        raise TypeError(f"{fn} expects an int, got {type(seed).__name__}")
    seed = int(seed)
    if not -(2**63) <= seed < 2**64:
        raise ValueError(f"{fn}: seed must be in [-2**63, 2**64 - 1], got {seed}")
    return seed if seed >= 0 else 2**64 + seed


def manual_seed(seed: int) -> None:
    """Seed the random generators of every device (like ``torch.manual_seed``).

    As in PyTorch, ``seed`` may lie in [-2**63, 2**64 - 1]; a negative seed
    is remapped to ``2**64 + seed`` (its two's-complement value).

    Raises:
        TypeError: ``seed`` is not an int.
        ValueError: ``seed`` is out of that range.
    """
    _seeding[0] = check_seed(seed, "manual_seed")
    _cuda_seeds.clear()
    _seeding[1] += 1


def manual_seed_cuda(seed: int, index: int) -> None:
    """Seed the generator of CUDA device ``index`` only (``torch.cuda.manual_seed``); other streams go on.

    Raises:
        TypeError, ValueError: as ``manual_seed``.
    """
    _cuda_seeds[_CUDA_NAMES[index]] = [check_seed(seed, "cuda.manual_seed")]


def generator(device: str = "cpu"):
    """The random generator used for ``device`` (created on first use)."""
    if _random.epoch != _seeding[1]:
        _random.generators = {}
        _random.seeded = {}
        _random.epoch = _seeding[1]
    gen = _random.generators.get(device)
    if _cuda_seeds:  # some CUDA device was seeded on its own: is this generator older than that seed?
        own = _cuda_seeds.get(device)
        if own is not None and _random.seeded.get(device) is not own:
            gen = None
    if gen is None:
        if device == "cpu":
            gen = np.random.default_rng(_seeding[0])
        else:
            own = _cuda_seeds.get(device)
            _random.seeded[device] = own
            with device_context(device):
                gen = _cupy.random.default_rng(_seeding[0] if own is None else own[0])
        _random.generators[device] = gen
    return gen


def get_rng_state() -> dict:
    """The CPU generator's state as plain data (for checkpoints)."""
    return {"seed": _seeding[0], "cpu": generator("cpu").bit_generator.state}


def set_rng_state(state: dict) -> None:
    """Restore a state returned by ``get_rng_state``.

    Raises:
        ValueError: ``state`` lacks the "cpu" generator state.
    """
    if "cpu" not in state:
        raise ValueError("set_rng_state expects a dict returned by get_rng_state (missing 'cpu')")
    if state.get("seed") is not None:
        manual_seed(state["seed"])
    generator("cpu").bit_generator.state = state["cpu"]


# ---------------------------------------------------------------- special functions

# W. J. Cody, "Rational Chebyshev approximations for the error function",
# Math. Comp. 23 (1969), as in his SPECFUN routine CALERF: erf on |x| <= 0.46875,
# erfc = exp(-x^2) * R(x) above (two ranges), with a relative error below 1e-16.
_ERF_A = (3.16112374387056560e00, 1.13864154151050156e02, 3.77485237685302021e02,
          3.20937758913846947e03, 1.85777706184603153e-1)
_ERF_B = (2.36012909523441209e01, 2.44024637934444173e02, 1.28261652607737228e03,
          2.84423683343917062e03)
_ERF_C = (5.64188496988670089e-1, 8.88314979438837594e00, 6.61191906371416295e01,
          2.98635138197400131e02, 8.81952221241769090e02, 1.71204761263407058e03,
          2.05107837782607147e03, 1.23033935479799725e03, 2.15311535474403846e-8)
_ERF_D = (1.57449261107098347e01, 1.17693950891312499e02, 5.37181101862009858e02,
          1.62138957456669019e03, 3.29079923573345963e03, 4.36261909014324716e03,
          3.43936767414372164e03, 1.23033935480374942e03)
_ERF_P = (3.05326634961232344e-1, 3.60344899949804439e-1, 1.25781726111229246e-1,
          1.60837851487422766e-2, 6.58749161529837803e-4, 1.63153871373020978e-2)
_ERF_Q = (2.56852019228982242e00, 1.87295284992346725e00, 5.27905102951428412e-1,
          6.05183413124413191e-2, 2.33520497626869185e-3)
_INV_SQRT_PI = 5.6418958354775628695e-1


def erf(x):
    """The error function, elementwise, in ``x``'s dtype (a NumPy or CuPy float array).

    CuPy uses ``cupyx.scipy.special.erf``. NumPy has no erf, so it is computed
    here: float32 input with one rational function in float32
    (``_erf_float32``: relative error below 4e-7, about 6 ulp; GELU layers
    are full of erf, and this is five times faster than Cody's three-range
    scheme in float32), anything else in float64 with Cody's approximations
    (below 1e-15) and cast back to ``x``'s dtype. NaN stays NaN,
    erf(+-inf) = +-1.
    """
    if _cupy is not None and isinstance(x, _cupy.ndarray):
        import cupyx.scipy.special  # noqa: PLC0415  (CuPy is optional)

        return cupyx.scipy.special.erf(x)
    x = np.asarray(x)
    if x.dtype == np.float32:
        return _erf_float32(x)
    y = np.abs(x.astype(np.float64))
    # Both rational functions over the whole array, each on its clipped range,
    # then a select: cheaper than gathering and scattering the two regions.
    out = np.where(y <= 0.46875, _erf_small(np.minimum(y, 0.46875)), 1.0 - _erfc_middle(np.clip(y, 0.46875, 4.0)))
    large = y > 4.0
    if large.any():
        out[large] = 1.0 - _erfc_large(np.minimum(y[large], 30.0))  # erfc(30) underflows anyway
    return np.copysign(out, x).astype(x.dtype, copy=False)


# erf(x) ~ x * P(x^2) / Q(x^2) for |x| <= 3.925, where float32 erf reaches 1.
# Fitted for this file (``tests/minigrad/nn/test_erf_float32.py`` repeats the
# fit): least squares on the relative error, linearised in Q (Loeb) and
# reweighted toward the minimax (Lawson); 5.3e-8 relative error in float64.
_ERF32_P = (1.1283791081400070e00, 2.0034364414680969e-01, 5.0628374489506599e-02, 3.7183206960127915e-03,
            1.4215525128069808e-04, -1.9566386941850873e-06, 1.9871966975214417e-08)
_ERF32_Q = (1.0, 5.1088156436062027e-01, 1.1517111225605800e-01, 1.4388223361336695e-02,
            9.5977454412188193e-04)
_ERF32_CLIP = 3.925


def _erf_float32(x):
    """erf of a float32 array as ``x * P(x^2) / Q(x^2)`` on ``x`` clipped to +-3.925 (see ``_ERF32_P``)."""
    a = np.clip(x, -_ERF32_CLIP, _ERF32_CLIP)  # NaN stays NaN, +-inf becomes +-1
    t = a * a
    num = _horner(t, _ERF32_P)
    num *= a
    num /= _horner(t, _ERF32_Q)
    return num


def _horner(t, coefficients):
    """``sum(c_k * t**k)`` by Horner's rule, in ``t``'s dtype (coefficients lowest degree first)."""
    out = t * coefficients[-1]
    for c in reversed(coefficients[1:-1]):
        out += c
        out *= t
    out += coefficients[0]
    return out


def _cody_terms(t, p, q):
    """The numerator and denominator of Cody's rational function of ``t`` (coefficients ``p`` and ``q``).

    ``len(p) == len(q) + 1`` (the denominator's leading coefficient is 1);
    both polynomials by Horner's rule, in Cody's order (the last ``p`` first).
    The caller divides, so each approximation keeps Cody's operation order.
    """
    n = len(q) - 1
    num, den = p[-1] * t, t.copy()
    for a, b in zip(p[:n], q[:n]):
        num += a
        num *= t
        den += b
        den *= t
    return num + p[n], den + q[n]


def _erf_small(y):
    num, den = _cody_terms(y * y, _ERF_A, _ERF_B)
    return y * num / den


# erf = 1 - erfc is only ever taken where erfc < 0.51, so erfc's relative
# error reaches erf at most halved: a plain exp(-y*y) is accurate enough
# (Cody splits y*y for erfc's own relative accuracy far in the tail).


def _erfc_middle(y):
    num, den = _cody_terms(y, _ERF_C, _ERF_D)
    return np.exp(-y * y) * num / den


def _erfc_large(y):
    ysq = 1.0 / (y * y)
    num, den = _cody_terms(ysq, _ERF_P, _ERF_Q)
    tail = ysq * num / den
    return np.exp(-y * y) * (_INV_SQRT_PI - tail) / y
