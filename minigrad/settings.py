"""Process-wide switches in PyTorch's names: threads, determinism, printing, inference mode, compile, RNG state.

Programs written for PyTorch set these at the top (``torch.set_num_threads(1)``,
``torch.use_deterministic_algorithms(True)``, ``torch.set_printoptions(precision=3)``)
or wrap evaluation in ``torch.inference_mode()``. Here each does what it
means for minigrad:

* threads: NumPy's BLAS pool, through ``threadpoolctl`` when it is installed;
* determinism: minigrad's CPU ops are deterministic already, so the flag is
  only recorded (``are_deterministic_algorithms_enabled`` reads it back);
* print options: how tensors print (``minigrad.tensor.PRINT_OPTIONS``), PyTorch's defaults;
* ``inference_mode``: grad mode off for the block, as ``no_grad`` (PyTorch's
  extra restriction on inference tensors is not enforced);
* ``compile``: minigrad has no compiler, so the module or function comes back
  unchanged and computes exactly what it did;
* RNG state: a uint8 tensor, as PyTorch's, that ``set_rng_state`` takes back.
"""

from __future__ import annotations

import functools
import json
import os

import numpy as np

from minigrad import backend
from minigrad.grad_mode import _GradModeContext, is_grad_enabled
from minigrad.tensor import PRINT_OPTIONS, Tensor

__all__ = [
    "set_num_threads", "get_num_threads", "use_deterministic_algorithms", "are_deterministic_algorithms_enabled",
    "set_printoptions", "inference_mode", "is_inference_mode_enabled", "compile", "get_rng_state", "set_rng_state",
    "seed", "initial_seed",
]

_deterministic = {"enabled": False, "warn_only": False}


def set_num_threads(n: int) -> None:
    """Use ``n`` threads in NumPy's BLAS (matrix products), as ``torch.set_num_threads``.

    Raises:
        RuntimeError: ``n`` is not a positive int (PyTorch's class), or ``threadpoolctl`` is not
            installed (then set ``OPENBLAS_NUM_THREADS`` before starting).
    """
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        raise RuntimeError(f"set_num_threads expects a positive integer, got {n!r}")
    try:
        from threadpoolctl import threadpool_limits  # noqa: PLC0415  (optional)
    except ImportError:
        raise RuntimeError(
            "set_num_threads needs threadpoolctl (pip install threadpoolctl), or set OPENBLAS_NUM_THREADS / "
            "OMP_NUM_THREADS before the program starts"
        ) from None
    threadpool_limits(limits=n, user_api="blas")


def get_num_threads() -> int:
    """The number of threads NumPy's BLAS uses (from ``threadpoolctl`` when installed, else the environment)."""
    try:
        from threadpoolctl import threadpool_info  # noqa: PLC0415  (optional)
    except ImportError:
        for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
            if os.environ.get(name, "").isdigit():
                return int(os.environ[name])
        return os.cpu_count() or 1
    pools = [pool["num_threads"] for pool in threadpool_info() if pool.get("user_api") == "blas"]
    return max(pools) if pools else 1


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """Ask for deterministic algorithms; minigrad's CPU ops are deterministic, so this records the request.

    Raises:
        TypeError: ``mode`` or ``warn_only`` is not a bool.
    """
    if not isinstance(mode, bool):
        raise TypeError(f"use_deterministic_algorithms expects a bool, but got {type(mode).__name__}")
    if not isinstance(warn_only, bool):
        kind = type(warn_only).__name__
        raise TypeError(f"use_deterministic_algorithms(): argument 'warn_only' must be bool, not {kind}")
    _deterministic["enabled"], _deterministic["warn_only"] = mode, bool(warn_only)


def are_deterministic_algorithms_enabled() -> bool:
    """What ``use_deterministic_algorithms`` last set (False at start)."""
    return _deterministic["enabled"]


_PROFILES = {"default": (4, 1000, 3, 80), "short": (2, 1000, 2, 80), "full": (4, np.inf, 3, 80)}


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None, sci_mode=None):
    """Set how tensors print: decimals, the size above which they are summarized, edge items, line width.

    ``profile`` ("default", "short", "full") sets all four first; ``sci_mode``
    True or False forces or forbids scientific notation (None: decide from
    the values). NumPy's own print options are left alone.

    Raises:
        ValueError: ``profile`` is not "default", "short" or "full"; a count is negative.
        TypeError: a count (``precision``, ``threshold``, ``edgeitems``, ``linewidth``) is not an int.
    """
    for name, value in (("precision", precision), ("threshold", threshold), ("edgeitems", edgeitems),
                        ("linewidth", linewidth)):
        if value is None:
            continue
        kinds = (int, float, np.integer, np.floating) if name == "threshold" else (int, np.integer)  # threshold=inf
        if not isinstance(value, kinds) or isinstance(value, bool):
            raise TypeError(f"set_printoptions(): argument '{name}' must be int, not {type(value).__name__}")
        if not value >= 0:
            raise ValueError(f"set_printoptions(): argument '{name}' must be non-negative, got {value}")
    options = PRINT_OPTIONS
    if profile is not None:
        if not isinstance(profile, str) or profile not in _PROFILES:
            raise ValueError(f"set_printoptions: profile must be 'default', 'short' or 'full', got {profile!r}")
        options["precision"], options["threshold"], options["edgeitems"], options["linewidth"] = _PROFILES[profile]
    for name, value in (("precision", precision), ("threshold", threshold), ("edgeitems", edgeitems),
                        ("linewidth", linewidth)):
        if value is not None:
            options[name] = value
    options["sci_mode"] = sci_mode


class inference_mode(_GradModeContext):
    """``with mg.inference_mode():`` runs the block with grad mode off, as ``no_grad`` does; also a decorator.

    Args:
        mode: False leaves grad mode as it is (PyTorch's ``inference_mode(False)``).
    """

    def __new__(cls, mode=True):
        if callable(mode):  # used bare, as @mg.inference_mode
            return cls()(mode)
        return super().__new__(cls)

    def __init__(self, mode: bool = True):
        self._on = bool(mode)

    def __enter__(self):
        self.mode = False if self._on else is_grad_enabled()
        return super().__enter__()

    def __call__(self, fn):
        on = self._on

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with inference_mode(on):
                return fn(*args, **kwargs)

        return wrapper


def is_inference_mode_enabled() -> bool:
    """True inside ``inference_mode()`` (equivalently here: grad mode is off)."""
    return not is_grad_enabled()


def compile(model=None, **options):  # noqa: A001  (PyTorch's name)
    """Return ``model`` (a Module or function) unchanged: minigrad has no compiler, so it runs eagerly as before.

    Accepts PyTorch's keyword options (``mode``, ``fullgraph``, ``dynamic``, ``backend``) and ignores them.
    Used as ``@mg.compile`` or ``@mg.compile(mode=...)`` it returns the function itself.

    Raises:
        AssertionError: ``model`` is not callable (PyTorch's type here).
    """
    if model is None:
        return lambda fn: fn
    if not callable(model):
        raise AssertionError(f"compile(): a callable model or function is expected, got {type(model).__name__}")
    return model


def get_rng_state() -> Tensor:
    """The CPU generator's state as a uint8 tensor (pass it to ``set_rng_state`` to resume the stream)."""
    encoded = json.dumps(backend.get_rng_state()).encode()
    return Tensor(np.frombuffer(encoded, dtype=np.uint8).copy())


def set_rng_state(new_state) -> None:
    """Restore the CPU generator from a tensor made by ``get_rng_state``.

    Raises:
        TypeError: ``new_state`` is not a uint8 tensor.
        RuntimeError: it does not hold a state made by ``get_rng_state`` (PyTorch's class for a state
            of the wrong size).
    """
    if not isinstance(new_state, Tensor) or new_state.dtype != np.uint8:
        raise TypeError(f"set_rng_state expects a uint8 Tensor from get_rng_state, got {type(new_state).__name__}")
    try:
        state = json.loads(backend.to_numpy(new_state.array).tobytes().decode())
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise RuntimeError("set_rng_state: this tensor was not made by get_rng_state") from None
    backend.set_rng_state(state)


def seed() -> int:
    """Seed every generator with a fresh nondeterministic seed and return it."""
    fresh = int(np.random.SeedSequence().entropy % 2**63)
    backend.manual_seed(fresh)
    return fresh


def initial_seed() -> int:
    """The seed of the default generator (the last ``manual_seed`` or ``seed``; an arbitrary one before)."""
    current = backend.get_rng_state()["seed"]
    return seed() if current is None else int(current)
