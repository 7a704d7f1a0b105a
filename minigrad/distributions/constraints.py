"""Constraints: what values a distribution's parameters and samples may take (``torch.distributions.constraints``).

A constraint's ``check(value)`` returns a boolean Tensor, one entry per event
(``event_dim`` trailing dimensions are reduced away), True where ``value``
satisfies it. ``Distribution`` checks its parameters against
``arg_constraints`` and the values given to ``log_prob``/``cdf`` against
``support`` when argument validation is on; the ``repr`` of a constraint is
what the error message shows, spelled as PyTorch's (``GreaterThan(lower_bound=0.0)``).
"""

from __future__ import annotations

from minigrad.tensor import Tensor

__all__ = [
    "Constraint", "boolean", "dependent", "dependent_property", "greater_than", "half_open_interval",
    "independent", "integer_interval", "interval", "is_dependent", "less_than", "nonnegative", "nonnegative_integer",
    "positive", "real", "simplex", "unit_interval",
]


class Constraint:
    """Base class of constraints.

    Attributes:
        is_discrete: whether the constrained space is discrete.
        event_dim: how many trailing dimensions make one event (they are reduced by ``check``).
    """

    is_discrete = False
    event_dim = 0

    def check(self, value: Tensor) -> Tensor:
        """A boolean Tensor of ``value.shape[:value.ndim - event_dim]``: True where ``value`` is valid."""
        raise NotImplementedError(f"{type(self).__name__} does not implement check()")

    def __repr__(self):
        return f"{type(self).__name__.lstrip('_')}()"


class _Dependent(Constraint):
    """Placeholder for a constraint that depends on other parameters (Uniform's ``low``/``high``).

    It cannot be checked on its own: ``check`` raises ValueError, and argument validation skips it.
    """

    def __init__(self, *, is_discrete: bool = False, event_dim: int = 0):
        self.is_discrete = is_discrete
        self.event_dim = event_dim

    def __call__(self, *, is_discrete: bool = False, event_dim: int = 0) -> _Dependent:
        """A dependent constraint with these attributes (``constraints.dependent(event_dim=1)``)."""
        return _Dependent(is_discrete=is_discrete, event_dim=event_dim)

    def check(self, value):
        raise ValueError("Cannot determine validity of dependent constraint")


def is_dependent(constraint) -> bool:
    """Whether ``constraint`` is a dependent (uncheckable) constraint."""
    return isinstance(constraint, _Dependent)


class dependent_property(property):  # noqa: N801  (PyTorch's name)
    """A property whose value is a constraint built from the instance (Uniform's ``support``).

    On the class it is a dependent constraint (argument validation skips it); on an instance it
    returns what the getter builds.
    """

    def __init__(self, fget=None, *, is_discrete: bool = False, event_dim: int = 0):
        super().__init__(fget)
        self.is_discrete = is_discrete
        self.event_dim = event_dim

    def __call__(self, fget) -> dependent_property:
        """Used as ``@dependent_property(is_discrete=..., event_dim=...)``: wrap ``fget``."""
        return dependent_property(fget, is_discrete=self.is_discrete, event_dim=self.event_dim)

    def __get__(self, instance, owner=None):
        if instance is None:
            return _Dependent(is_discrete=self.is_discrete, event_dim=self.event_dim)
        return super().__get__(instance, owner)


class _Real(Constraint):
    """Any real number, infinities included (NaN is not)."""

    def check(self, value):
        return value == value  # False only for NaN


class _Boolean(Constraint):
    """0 or 1."""

    is_discrete = True

    def check(self, value):
        return (value == 0) | (value == 1)


class _Bounded(Constraint):
    """A constraint set by ``lower_bound`` and/or ``upper_bound``; its repr names the bounds it has, as PyTorch's."""

    def __repr__(self):
        named = [name for name in ("lower_bound", "upper_bound") if name in vars(self)]
        bounds = [f"{name}={_fmt(getattr(self, name))}" for name in named]
        return f"{type(self).__name__.lstrip('_')}({', '.join(bounds)})"


class _LowerBounded(_Bounded):
    """Numbers bounded below by ``lower_bound`` (the subclass says how)."""

    def __init__(self, lower_bound):
        self.lower_bound = lower_bound


class _TwoBounded(_Bounded):
    """Numbers between ``lower_bound`` and ``upper_bound`` (the subclass says how)."""

    def __init__(self, lower_bound, upper_bound):
        self.lower_bound = lower_bound
        self.upper_bound = upper_bound


class _GreaterThan(_LowerBounded):
    """Real numbers above ``lower_bound``."""

    def check(self, value):
        return self.lower_bound < value


class _GreaterThanEq(_LowerBounded):
    """Real numbers at or above ``lower_bound``."""

    def check(self, value):
        return self.lower_bound <= value


class _LessThan(_Bounded):
    """Real numbers below ``upper_bound``."""

    def __init__(self, upper_bound):
        self.upper_bound = upper_bound

    def check(self, value):
        return value < self.upper_bound


class _Interval(_TwoBounded):
    """Real numbers in the closed interval [lower_bound, upper_bound]."""

    def check(self, value):
        return (self.lower_bound <= value) & (value <= self.upper_bound)


class _HalfOpenInterval(_TwoBounded):
    """Real numbers in [lower_bound, upper_bound)."""

    def check(self, value):
        return (self.lower_bound <= value) & (value < self.upper_bound)


class _IntegerInterval(_TwoBounded):
    """Integers in [lower_bound, upper_bound]."""

    is_discrete = True

    def check(self, value):
        return (value % 1 == 0) & (self.lower_bound <= value) & (value <= self.upper_bound)


class _IntegerGreaterThan(_LowerBounded):
    """Integers at or above ``lower_bound``."""

    is_discrete = True

    def check(self, value):
        return (value % 1 == 0) & (value >= self.lower_bound)


class _Simplex(Constraint):
    """Vectors of non-negative entries summing to 1 (within 1e-6) along the last dimension."""

    event_dim = 1

    def check(self, value):
        return _all_last(value >= 0) & ((value.sum(-1) - 1).abs() < 1e-6)


class _Independent(Constraint):
    """``base`` with ``reinterpreted_batch_ndims`` more trailing dimensions treated as one event."""

    def __init__(self, base: Constraint, reinterpreted_batch_ndims: int):
        self.base_constraint = base
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims
        self.is_discrete = base.is_discrete
        self.event_dim = base.event_dim + reinterpreted_batch_ndims

    def check(self, value):
        result = self.base_constraint.check(value)
        for _ in range(self.reinterpreted_batch_ndims):
            result = _all_last(result)
        return result

    def __repr__(self):
        return f"IndependentConstraint({self.base_constraint!r}, {self.reinterpreted_batch_ndims})"


def _fmt(bound) -> str:
    """A bound as the error messages show it: a 0-d Tensor as its number, as PyTorch formats it."""
    if isinstance(bound, Tensor) and bound.ndim == 0:
        return str(bound.item())
    return str(bound)


def _all_last(mask: Tensor) -> Tensor:
    """True where every entry of the boolean ``mask`` along its last dimension is True."""
    return mask.logical_not().sum(-1) == 0


dependent = _Dependent()
real = _Real()
boolean = _Boolean()
positive = _GreaterThan(0.0)
nonnegative = _GreaterThanEq(0.0)
unit_interval = _Interval(0.0, 1.0)
simplex = _Simplex()
nonnegative_integer = _IntegerGreaterThan(0)
greater_than = _GreaterThan
less_than = _LessThan
interval = _Interval
half_open_interval = _HalfOpenInterval
integer_interval = _IntegerInterval
independent = _Independent
