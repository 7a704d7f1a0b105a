"""``Distribution``: the base of every probability distribution (``torch.distributions.Distribution``).

A distribution has a ``batch_shape`` (independent, differently parameterized
distributions side by side) and an ``event_shape`` (the shape of one draw:
``()`` for scalars, ``(k,)`` for vectors). ``sample(sample_shape)`` returns a
Tensor of shape ``sample_shape + batch_shape + event_shape``; ``log_prob(value)``
scores ``value`` (its trailing dimensions must broadcast with
``batch_shape + event_shape``) and returns one number per event.

Argument validation (on by default, as in PyTorch under ``__debug__``) checks
each parameter against ``arg_constraints`` when the distribution is built and
each value given to ``log_prob``/``cdf`` against ``support``, raising
ValueError with PyTorch's messages. Turn it off per distribution with
``validate_args=False`` or everywhere with
``Distribution.set_default_validate_args(False)``.

Shapes are plain tuples (minigrad has no ``torch.Size``), so reprs and messages
show ``(2, 3)`` where PyTorch shows ``torch.Size([2, 3])``.

This module also holds what the distributions share: ``_BroadcastDistribution`` (the
constructor and ``expand`` of those given by numeric parameters that broadcast together),
``broadcast_all``, ``lazy_property`` and the probability/logit conversions.
"""

from __future__ import annotations

import numbers
import warnings

import numpy as np

from minigrad import backend
from minigrad.distributions import constraints
from minigrad.grad_mode import enable_grad, no_grad
from minigrad.promotion import get_default_dtype
from minigrad.shape_forms import broadcast_tensors
from minigrad.tensor import Tensor


def _as_shape(shape, what: str = "sample_shape") -> tuple:
    """``shape`` (a tuple, list or ``Tensor.size()``) as a tuple of ints.

    Raises:
        TypeError: ``shape`` is not iterable or holds non-integers (as ``torch.Size`` does).
        RuntimeError: a size is negative (PyTorch's class for a negative dimension).
    """
    if isinstance(shape, (numbers.Number, np.generic)) or (isinstance(shape, Tensor) and shape.ndim == 0):
        raise TypeError(f"{what}: '{type(shape).__name__}' object is not iterable (a 0-d value is not a shape)")
    result = tuple(shape)
    for size in result:
        if isinstance(size, bool) or not isinstance(size, (int, np.integer)):
            raise TypeError(f"{what}: expected a sequence of integers, but one element is {type(size).__name__}")
        if size < 0:
            raise RuntimeError(f"{what}: sizes must be non-negative, got {result}")
    return tuple(int(s) for s in result)


class Distribution:
    """Base class of probability distributions.

    Args:
        batch_shape: the shape over which parameters are batched.
        event_shape: the shape of a single sample (without batching).
        validate_args: check parameters and ``log_prob`` arguments (default: the class default,
            True unless changed by ``set_default_validate_args``).

    Subclasses define ``arg_constraints`` (parameter name -> constraint), ``support``,
    ``has_rsample`` and the methods they can compute; the others raise NotImplementedError.

    Raises:
        ValueError: a parameter violates its constraint (with validation on).
    """

    has_rsample = False
    has_enumerate_support = False
    _validate_args = __debug__

    @staticmethod
    def set_default_validate_args(value: bool) -> None:
        """Turn argument validation on or off for distributions that are not told otherwise.

        Raises:
            ValueError: ``value`` is not a bool.
        """
        if value not in (True, False):
            raise ValueError("set_default_validate_args expects a bool (True or False)")
        Distribution._validate_args = value

    def __init__(self, batch_shape=(), event_shape=(), validate_args: bool | None = None):
        self._batch_shape = _as_shape(batch_shape, "batch_shape")
        self._event_shape = _as_shape(event_shape, "event_shape")
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            self._check_parameters()

    def _check_parameters(self) -> None:
        """Check every (already computed) parameter against its constraint."""
        try:
            arg_constraints = self.arg_constraints
        except NotImplementedError:
            warnings.warn(
                f"{type(self).__name__} does not define `arg_constraints`. Please set `arg_constraints = {{}}` or "
                "initialize the distribution with `validate_args=False` to turn off validation.",
                stacklevel=3,
            )
            return
        for param, constraint in arg_constraints.items():
            if constraints.is_dependent(constraint):
                continue  # depends on other parameters: cannot be checked alone
            if param not in self.__dict__ and isinstance(getattr(type(self), param, None), lazy_property):
                continue  # not computed yet (Categorical given logits has no probs until asked)
            value = getattr(self, param)
            if not bool(constraint.check(value).all()):
                raise ValueError(
                    f"Expected parameter {param} ({type(value).__name__} of shape {tuple(value.shape)}) "
                    f"of distribution {self!r} to satisfy the constraint {constraint!r}, "
                    f"but found invalid values:\n{value}"
                )

    # -- shapes ------------------------------------------------------------------------------------

    @property
    def batch_shape(self) -> tuple:
        """The shape over which parameters are batched."""
        return self._batch_shape

    @property
    def event_shape(self) -> tuple:
        """The shape of a single sample (without batching)."""
        return self._event_shape

    def _extended_shape(self, sample_shape=()) -> tuple:
        """``sample_shape + batch_shape + event_shape``: the shape ``sample(sample_shape)`` returns."""
        return _as_shape(sample_shape) + self._batch_shape + self._event_shape

    def expand(self, batch_shape, _instance=None):
        """A new distribution with its parameters expanded (as views) to ``batch_shape``.

        Raises:
            NotImplementedError: the subclass does not support it.
        """
        raise NotImplementedError(f"{type(self).__name__} does not implement expand()")

    def _get_checked_instance(self, cls, _instance=None):
        """A bare instance of ``cls`` for ``expand`` to fill in."""
        if _instance is None and type(self).__init__ != cls.__init__:
            raise NotImplementedError(
                f"Subclass {self.__class__.__name__} of {cls.__name__} that defines a custom __init__ "
                "method must also define a custom .expand() method."
            )
        return self.__new__(type(self)) if _instance is None else _instance

    def _expand_parameters(self, new, batch_shape: tuple, names, event_shape: tuple = ()):
        """Fill in and return ``new`` for ``expand``: each Tensor parameter in ``names`` that this
        distribution holds (a lazy one not computed yet is skipped) expanded to ``batch_shape + event_shape``,
        the batch shape ``batch_shape`` and this distribution's validation setting."""
        shape = batch_shape + event_shape
        for name in names:
            if name in self.__dict__:
                setattr(new, name, getattr(self, name).expand(*shape))
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    # -- constraints -------------------------------------------------------------------------------

    @property
    def arg_constraints(self) -> dict:
        """Parameter name -> the constraint its values must satisfy."""
        raise NotImplementedError(f"{type(self).__name__} does not define arg_constraints")

    @property
    def support(self):
        """The constraint a value of this distribution satisfies."""
        raise NotImplementedError(f"{type(self).__name__} does not define support")

    # -- moments -----------------------------------------------------------------------------------

    @property
    def mean(self) -> Tensor:
        """The mean, of shape ``batch_shape + event_shape``."""
        raise NotImplementedError(f"{type(self).__name__} does not implement mean")

    @property
    def mode(self) -> Tensor:
        """The mode, of shape ``batch_shape + event_shape``."""
        raise NotImplementedError(f"{type(self).__name__} does not implement mode")

    @property
    def variance(self) -> Tensor:
        """The variance, of shape ``batch_shape + event_shape``."""
        raise NotImplementedError(f"{type(self).__name__} does not implement variance")

    @property
    def stddev(self) -> Tensor:
        """The standard deviation: ``variance.sqrt()``."""
        return self.variance.sqrt()

    # -- sampling and scoring ----------------------------------------------------------------------

    def sample(self, sample_shape=()) -> Tensor:
        """A sample (no gradient) of shape ``sample_shape + batch_shape + event_shape``."""
        with no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=()) -> Tensor:
        """A reparameterized sample: differentiable in the parameters (where ``has_rsample``).

        Raises:
            NotImplementedError: the distribution has no reparameterized sampler.
        """
        raise NotImplementedError(f"{type(self).__name__} does not implement rsample")

    def sample_n(self, n: int) -> Tensor:
        """``n`` samples (deprecated in PyTorch; use ``sample((n,))``)."""
        return self.sample((n,))

    def log_prob(self, value: Tensor) -> Tensor:
        """The log of the probability density/mass at ``value``, one number per event."""
        raise NotImplementedError(f"{type(self).__name__} does not implement log_prob")

    def cdf(self, value: Tensor) -> Tensor:
        """The cumulative distribution function at ``value``."""
        raise NotImplementedError(f"{type(self).__name__} does not implement cdf")

    def icdf(self, value: Tensor) -> Tensor:
        """The inverse cumulative distribution function at ``value``."""
        raise NotImplementedError(f"{type(self).__name__} does not implement icdf")

    def enumerate_support(self, expand: bool = True) -> Tensor:
        """Every value of a discrete distribution's support, along a new leading dimension."""
        raise NotImplementedError(f"{type(self).__name__} does not implement enumerate_support")

    def entropy(self) -> Tensor:
        """The entropy, of shape ``batch_shape``."""
        raise NotImplementedError(f"{type(self).__name__} does not implement entropy")

    def perplexity(self) -> Tensor:
        """``exp(entropy())``."""
        return self.entropy().exp()

    def _validate_sample(self, value) -> None:
        """Check that ``value`` can be scored: a Tensor whose shape broadcasts, inside ``support``.

        Raises:
            ValueError: with PyTorch's messages.
        """
        if not isinstance(value, Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        shape = tuple(value.shape)
        event_start = len(shape) - len(self._event_shape)
        if shape[event_start:] != self._event_shape:
            raise ValueError(
                f"The right-most size of value must match event_shape: {shape} vs {self._event_shape}."
            )
        expected = self._batch_shape + self._event_shape
        for i, j in zip(reversed(shape), reversed(expected)):
            if i != 1 and j != 1 and i != j:
                raise ValueError(f"Value is not broadcastable with batch_shape+event_shape: {shape} vs {expected}.")
        try:
            support = self.support
        except NotImplementedError:
            warnings.warn(
                f"{type(self).__name__} does not define `support` to enable sample validation. Please initialize "
                "the distribution with `validate_args=False` to turn off validation.",
                stacklevel=3,
            )
            return
        if not bool(support.check(value).all()):
            raise ValueError(
                f"Expected value argument ({type(value).__name__} of shape {shape}) to be within the support "
                f"({support!r}) of the distribution {self!r}, but found invalid values:\n{value}"
            )

    def __repr__(self):
        names = [name for name in self.arg_constraints if name in self.__dict__]
        parts = []
        for name in names:
            value = self.__dict__[name]
            parts.append(f"{name}: {value.item() if value.numel() == 1 else tuple(value.shape)}")
        return f"{type(self).__name__}({', '.join(parts)})"


class _BroadcastDistribution(Distribution):
    """Base of the distributions given by numeric parameters that broadcast together (``Normal``,
    ``Uniform``, ``Gamma``, ``Beta``): one constructor and one ``expand`` for all of them.

    A subclass names its parameters in its class statement, in its constructor's order, and its
    constructor hands the values on (so its signature stays PyTorch's)::

        class Normal(_BroadcastDistribution, parameters=("loc", "scale")):
            def __init__(self, loc, scale, validate_args=None):
                super().__init__(loc, scale, validate_args=validate_args)

    The constructor broadcasts the values (numbers or Tensors, see ``broadcast_all``) and stores
    each under its name; ``batch_shape`` is their broadcast shape (``()`` when all are numbers, as in
    PyTorch) and ``event_shape`` is ``()``. ``expand`` expands every parameter as a view. These
    distributions are continuous and each defines a differentiable ``rsample``, so ``has_rsample``
    is True.
    """

    has_rsample = True
    _parameter_names: tuple = ()
    _declared_by = None  # the class whose statement named the parameters

    def __init_subclass__(cls, parameters: tuple | None = None, **kwargs):
        super().__init_subclass__(**kwargs)
        # A subclass that names none (a user's ``class MyNormal(Normal)``) keeps its parent's.
        if parameters is not None:
            cls._parameter_names = parameters
            cls._declared_by = cls

    def __init__(self, *values, validate_args: bool | None = None):
        tensors, batch_shape = broadcast_parameters(*values)
        for name, tensor in zip(self._parameter_names, tensors, strict=True):
            setattr(self, name, tensor)
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """This distribution with every parameter expanded (as a view) to ``batch_shape``.

        Raises:
            NotImplementedError: a subclass with its own ``__init__`` does not define ``expand`` (as PyTorch).
        """
        new = self._get_checked_instance(self._declared_by, _instance)
        return self._expand_parameters(new, _as_shape(batch_shape, "batch_shape"), self._parameter_names)


# -- helpers the distributions share ---------------------------------------------------------------


class lazy_property:  # noqa: N801  (PyTorch's name)
    """A property computed on first access (with grad enabled) and then cached on the instance.

    Categorical given ``logits`` computes ``probs`` only when asked, and the
    other way round.
    """

    def __init__(self, wrapped):
        self.wrapped = wrapped
        self.__doc__ = wrapped.__doc__
        self.__name__ = wrapped.__name__

    def __get__(self, instance, owner=None):
        if instance is None:
            return self
        with enable_grad():
            value = self.wrapped(instance)
        instance.__dict__[self.wrapped.__name__] = value
        return value


def broadcast_all(*values) -> tuple:
    """Numbers and Tensors broadcast to one shape, as Tensors.

    Numbers become Tensors with the dtype and device of the first Tensor
    argument (the default dtype if there is none).

    Raises:
        ValueError: an argument is neither a number nor a Tensor.
        RuntimeError: the shapes do not broadcast.
    """
    like = None
    for value in values:
        if isinstance(value, Tensor):
            like = value if like is None else like
        elif not isinstance(value, (numbers.Number, np.generic)) or isinstance(value, bool):
            raise ValueError("Input arguments must all be instances of numbers.Number or minigrad.Tensor.")
    if like is None:
        dtype, device = get_default_dtype(), "cpu"
    else:
        dtype, device = like.dtype, like.device
    xp = backend.module_for_device(device)
    tensors = []
    for value in values:
        if not isinstance(value, Tensor):
            with backend.device_context(device):
                value = Tensor(xp.asarray(value, dtype=dtype))
        tensors.append(value)
    return broadcast_tensors(*tensors)


def _is_number(value) -> bool:
    return isinstance(value, (numbers.Number, np.generic)) and not isinstance(value, bool)


def broadcast_parameters(*values) -> tuple:
    """``(broadcast_all(*values), batch_shape)``: the batch shape is ``()`` when every value is a
    number (as in PyTorch), else the broadcast shape. Errors as ``broadcast_all``."""
    tensors = broadcast_all(*values)
    return tensors, () if all(map(_is_number, values)) else tuple(tensors[0].shape)


def clamp_probs(probs: Tensor) -> Tensor:
    """``probs`` clamped into [eps, 1 - eps] (eps: the dtype's machine epsilon), so logs stay finite."""
    eps = float(np.finfo(probs.dtype).eps)
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs: Tensor, is_binary: bool = False) -> Tensor:
    """Logits of probabilities: ``log(p)`` (categorical) or ``log(p) - log1p(-p)`` (binary), after ``clamp_probs``."""
    clamped = clamp_probs(probs)
    if is_binary:
        return clamped.log() - (-clamped).log1p()
    return clamped.log()


def logits_to_probs(logits: Tensor, is_binary: bool = False) -> Tensor:
    """Probabilities of logits: ``sigmoid`` (binary) or ``softmax`` over the last dimension."""
    if is_binary:
        return logits.sigmoid()
    return logits.softmax(-1)


def draw(method: str, shape: tuple, like: Tensor) -> Tensor:
    """Random numbers from the global generator of ``like``'s device, in ``like``'s floating dtype.

    ``method`` is ``"standard_normal"`` or ``"random"`` (uniform in [0, 1)).
    """
    device = like.device
    dtype = like.dtype if like.dtype.kind == "f" else get_default_dtype()
    draw_dtype = dtype if dtype in (np.float32, np.float64) else np.float32
    with backend.device_context(device):
        values = getattr(backend.generator(device), method)(shape, dtype=draw_dtype)
        return Tensor(values.astype(dtype, copy=False))
