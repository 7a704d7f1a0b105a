"""Elementwise activations beyond ``activation.py``: softplus, log-sigmoid, softsign, hard sigmoid and
hard swish, the ELU family (ELU, SELU, CELU), Mish, threshold and the shrink family, as functions and
as modules (the ``ELU`` module is in ``activation.py``).

Names, signatures, defaults, values and gradients (at the kinks too) mirror
``torch.nn.functional`` and ``torch.nn``. Each is a composition of
registered ops (``where``, ``clamp``, ``expm1``, the stable ``LogSigmoid``),
so gradients of every order come from those ops. Where PyTorch takes
``inplace=True``, the input is overwritten through ``minigrad.inplace``
(recorded for autograd; a leaf that requires grad raises PyTorch's error).
"""

from __future__ import annotations

import numpy as np

from minigrad import inplace as _inplace
from minigrad.nn.loss_utils import expect_floating_tensor, expect_number, expect_tensor, mask
from minigrad.nn.module import Module
from minigrad.ops import elementwise
from minigrad.ops.logistic import LogSigmoid as LogSigmoidOp
from minigrad.tensor import Tensor

__all__ = [
    "softplus", "logsigmoid", "softsign", "hardsigmoid", "hardswish", "elu", "selu", "selu_", "celu", "celu_", "mish",
    "threshold", "hardshrink", "softshrink", "tanhshrink", "Softplus", "LogSigmoid", "Softsign", "Hardsigmoid",
    "Hardswish", "SELU", "CELU", "Mish", "Threshold", "Hardshrink", "Softshrink", "Tanhshrink",
]

# SELU's constants (Klambauer et al., 2017): the fixed point of mean 0, variance 1.
SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946


def _expect_input(fn: str, x, floating: bool = True) -> None:
    """TypeError unless ``x`` is a Tensor; NotImplementedError (PyTorch's) for a non-float one when ``floating``."""
    if floating:
        expect_floating_tensor(fn, x)
    else:
        expect_tensor(fn, "input", x)


def _checked_parameter(fn: str, x, name: str, value) -> float:
    """``value`` as a float, after PyTorch's checks in its order: ``x`` a float Tensor, then ``value`` a number."""
    _expect_input(fn, x)
    return expect_number(fn, name, value)


def in_place(fn: str, x: Tensor, op) -> Tensor:
    """Overwrite ``x`` with ``op(x)`` (recorded for autograd when needed); returns ``x``.

    Raises:
        RuntimeError: in grad mode, ``x`` is a leaf that requires grad (or a view of one).
    """

    def update(data):
        data[...] = op(Tensor._make(data, False, None, 0)).array

    return _inplace.unary(x, fn, update, op)


def _maybe_in_place(fn: str, x: Tensor, op, inplace: bool) -> Tensor:
    """``op(x)``, or with ``inplace`` written into ``x`` as the op ``fn + "_"`` (see ``in_place``)."""
    return in_place(fn + "_", x, op) if inplace else op(x)


# -- functions ---------------------------------------------------------------------------------------


def logsigmoid(input):  # noqa: A002  (PyTorch's names)
    """log(sigmoid(x)) = min(x, 0) - log1p(exp(-|x|)): finite for every finite x (gradient sigmoid(-x)).

    Raises:
        TypeError: not a Tensor. NotImplementedError: not floating point.
    """
    _expect_input("logsigmoid", input)
    return LogSigmoidOp()(input)


def softplus(input, beta=1.0, threshold=20.0):  # noqa: A002
    """log(1 + exp(beta x)) / beta, and x itself where beta x > ``threshold`` (for stability).

    Raises:
        TypeError: not a Tensor, or ``beta``/``threshold`` not numbers.
        NotImplementedError: not floating point.
    """
    fn = "softplus"
    _expect_input(fn, input)
    beta, threshold = expect_number(fn, "beta", beta), expect_number(fn, "threshold", threshold)
    scaled = input * beta
    smooth = -LogSigmoidOp()(-scaled) / beta  # log1p(exp(beta x)) / beta, evaluated without overflow
    return elementwise.where(mask(scaled.array > threshold), input, smooth)


def softsign(input):  # noqa: A002
    """x / (1 + |x|).

    Raises:
        TypeError: not a Tensor.
    """
    _expect_input("softsign", input, floating=False)
    return input / (1 + input.abs())


def _hardsigmoid(x):
    inside = mask((x.array > -3) & (x.array < 3))
    return elementwise.where(inside, x / 6 + 0.5, elementwise.clamp(x.detach() / 6 + 0.5, 0.0, 1.0))


def hardsigmoid(input, inplace=False):  # noqa: A002
    """relu6(x + 3) / 6: 0 below -3, 1 above 3, linear between (gradient 1/6 strictly inside only).

    Raises:
        TypeError: not a Tensor. NotImplementedError: not floating point.
        RuntimeError: ``inplace`` on a leaf that requires grad.
    """
    _expect_input("hardsigmoid", input)
    return _maybe_in_place("hardsigmoid", input, _hardsigmoid, inplace)


def _hardswish(x):
    middle = x * (x + 3) / 6
    return elementwise.where(mask(x.array <= -3), 0.0, elementwise.where(mask(x.array >= 3), x, middle))


def hardswish(input, inplace=False):  # noqa: A002
    """x * relu6(x + 3) / 6 (gradient x / 3 + 1/2 strictly between -3 and 3; 0 at -3 and 1 at 3, as in PyTorch).

    Raises:
        TypeError: not a Tensor. NotImplementedError: not floating point.
        RuntimeError: ``inplace`` on a leaf that requires grad.
    """
    _expect_input("hardswish", input)
    return _maybe_in_place("hardswish", input, _hardswish, inplace)


def _elu_like(x, alpha, scale_in):
    """x where x > 0, else alpha * expm1(x * scale_in); the exp of the discarded positive side is never taken."""
    negative = (elementwise.clamp(x, max=0.0) * scale_in).expm1() * alpha
    return elementwise.where(mask(x.array > 0), x, negative)


def elu(input, alpha=1.0, inplace=False):  # noqa: A002
    """x where x > 0, else ``alpha`` * (exp(x) - 1) (computed as expm1); the gradient at 0 is ``alpha``.

    ``inplace=True`` overwrites ``input`` (recorded for autograd) and returns it.

    Raises:
        TypeError: ``input`` is not a Tensor, or ``alpha`` is not a number.
        NotImplementedError: the input is not floating point.
        RuntimeError: ``inplace`` on a leaf that requires grad (in grad mode).
    """
    alpha = _checked_parameter("elu", input, "alpha", alpha)
    return _maybe_in_place("elu", input, lambda x: _elu_like(x, alpha, 1.0), inplace)


def selu(input, inplace=False):  # noqa: A002
    """scale * (x where x > 0, else alpha * (exp(x) - 1)), with SELU's fixed alpha and scale.

    Raises:
        TypeError: not a Tensor. NotImplementedError: not floating point.
        RuntimeError: ``inplace`` on a leaf that requires grad.
    """
    _expect_input("selu", input)
    return _maybe_in_place("selu", input, lambda x: _elu_like(x, SELU_ALPHA, 1.0) * SELU_SCALE, inplace)


def celu(input, alpha=1.0, inplace=False):  # noqa: A002
    """x where x > 0, else alpha * (exp(x / alpha) - 1).

    Raises:
        TypeError: not a Tensor or ``alpha`` not a number. NotImplementedError: not floating point.
        RuntimeError: ``alpha`` is 0, or ``inplace`` on a leaf that requires grad.
    """
    fn = "celu"
    alpha = _checked_parameter(fn, input, "alpha", alpha)
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")
    return _maybe_in_place(fn, input, lambda x: _elu_like(x, alpha, 1.0 / alpha), inplace)


def selu_(input):  # noqa: A002
    """``selu`` written into ``input``; returns ``input``.

    Raises ``selu``'s errors; RuntimeError in grad mode when ``input`` is a leaf that requires grad.
    """
    return selu(input, inplace=True)


def celu_(input, alpha=1.0):  # noqa: A002
    """``celu`` written into ``input``; returns ``input``.

    Raises ``celu``'s errors; RuntimeError in grad mode when ``input`` is a leaf that requires grad.
    """
    return celu(input, alpha, inplace=True)


def mish(input, inplace=False):  # noqa: A002
    """x * tanh(softplus(x)), with softplus computed stably.

    Raises:
        TypeError: not a Tensor. NotImplementedError: not floating point.
        RuntimeError: ``inplace`` on a leaf that requires grad.
    """
    _expect_input("mish", input)
    return _maybe_in_place("mish", input, lambda x: x * (-LogSigmoidOp()(-x)).tanh(), inplace)


def threshold(input, threshold, value, inplace=False):  # noqa: A002
    """x where x > ``threshold``, else ``value`` (in the input's dtype; integer inputs allowed).

    The gradient is 1 where x > threshold and 0 elsewhere.

    Raises:
        TypeError: not a Tensor, or ``threshold``/``value`` not numbers.
        RuntimeError: ``inplace`` on a leaf that requires grad.
    """
    fn = "threshold"
    _expect_input(fn, input, floating=False)
    limit, value = expect_number(fn, "threshold", threshold), expect_number(fn, "value", value)
    return _maybe_in_place(fn, input, lambda x: elementwise.masked_fill(x, mask(x.array <= limit), value), inplace)


def hardshrink(input, lambd=0.5):  # noqa: A002
    """x where |x| > ``lambd``, else 0.

    Raises:
        TypeError: not a Tensor or ``lambd`` not a number. NotImplementedError: not floating point.
    """
    lambd = _checked_parameter("hardshrink", input, "lambd", lambd)
    return elementwise.masked_fill(input, mask((input.array >= -lambd) & (input.array <= lambd)), 0.0)


def softshrink(input, lambd=0.5):  # noqa: A002
    """x - lambd above ``lambd``, x + lambd below ``-lambd``, 0 between.

    Raises:
        TypeError: not a Tensor or ``lambd`` not a number. NotImplementedError: not floating point.
        RuntimeError: ``lambd`` is negative, NaN or above the input dtype's largest finite value.
    """
    lambd = _checked_parameter("softshrink", input, "lambd", lambd)
    largest = float(np.finfo(input.dtype).max)
    if not 0 <= lambd <= largest:  # also NaN and infinity
        raise RuntimeError(f"lambda must be in range [0, {largest:g}] for input dtype {input.dtype}, but found "
                           f"{lambd:g}")
    data = input.array
    shrunk = elementwise.where(mask(data > lambd), input - lambd, input + lambd)
    return elementwise.masked_fill(shrunk, mask((data >= -lambd) & (data <= lambd)), 0.0)


def tanhshrink(input):  # noqa: A002
    """x - tanh(x).

    Raises:
        TypeError: not a Tensor.
    """
    _expect_input("tanhshrink", input, floating=False)
    return input - input.tanh()


# -- modules ------------------------------------------------------------------------------------------


class Softplus(Module):
    """log(1 + exp(beta x)) / beta, linear above ``threshold``: see ``softplus``."""

    def __init__(self, beta: float = 1.0, threshold: float = 20.0):
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, input):  # noqa: A002
        """Apply softplus."""
        return softplus(input, self.beta, self.threshold)

    def extra_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"


class LogSigmoid(Module):
    """log(sigmoid(x)), stable: see ``logsigmoid``."""

    def forward(self, input):  # noqa: A002
        """Apply log-sigmoid."""
        return logsigmoid(input)


class Softsign(Module):
    """x / (1 + |x|): see ``softsign``."""

    def forward(self, input):  # noqa: A002
        """Apply softsign."""
        return softsign(input)


class _InplaceActivation(Module):
    """A pointwise activation with PyTorch's ``inplace`` flag (a base: ``Hardsigmoid`` is not a ``SELU``).

    A subclass lists in ``_settings`` the attributes its repr shows (as PyTorch's
    ``__constants__`` do). One without settings names its function of ``F`` as
    ``_function`` and the forward here applies it; one with settings
    (``LeakyReLU``, ``Threshold``) writes its own ``forward``.
    """

    _settings: tuple[str, ...] = ()

    def __init__(self, inplace: bool = False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):  # noqa: A002
        """Apply the activation (``_function``), writing into ``input`` when ``inplace``."""
        return self._function(input, inplace=self.inplace)

    def extra_repr(self) -> str:
        """The settings as ``name=value``, then ``inplace=True`` when set (PyTorch omits False)."""
        shown = [f"{name}={getattr(self, name)}" for name in self._settings]
        return ", ".join([*shown, "inplace=True"] if self.inplace else shown)


class _HardActivation(_InplaceActivation):
    """``Hardsigmoid`` and ``Hardswish``: PyTorch's repr of these omits ``inplace``, so theirs is empty."""

    def extra_repr(self) -> str:
        return ""


class Hardsigmoid(_HardActivation):
    """relu6(x + 3) / 6: see ``hardsigmoid``."""

    _function = staticmethod(hardsigmoid)


class Hardswish(_HardActivation):
    """x * relu6(x + 3) / 6: see ``hardswish``."""

    _function = staticmethod(hardswish)


class SELU(_InplaceActivation):
    """Scaled ELU with SELU's fixed constants: see ``selu``."""

    _function = staticmethod(selu)


class _ELUBase(_InplaceActivation):
    """What ELU and CELU share: ``alpha`` (default 1) and the ``inplace`` flag (a base: a CELU is not an ELU)."""

    _settings = ("alpha",)

    def __init__(self, alpha: float = 1.0, inplace: bool = False):
        super().__init__(inplace)
        self.alpha = alpha

    def forward(self, input):  # noqa: A002
        """Apply the activation (``_function``) with ``alpha``."""
        return self._function(input, self.alpha, self.inplace)


class CELU(_ELUBase):
    """x where x > 0, else alpha * (exp(x / alpha) - 1): see ``celu``."""

    _function = staticmethod(celu)


class Mish(_InplaceActivation):
    """x * tanh(softplus(x)): see ``mish``."""

    _function = staticmethod(mish)


class Threshold(_InplaceActivation):
    """x where x > ``threshold``, else ``value``: see ``threshold``."""

    _settings = ("threshold", "value")

    def __init__(self, threshold: float, value: float, inplace: bool = False):
        super().__init__(inplace)
        self.threshold = threshold
        self.value = value

    def forward(self, input):  # noqa: A002
        """Apply the threshold."""
        return threshold(input, self.threshold, self.value, self.inplace)


class _Shrink(Module):
    """A shrink activation with its threshold ``lambd`` (a base: ``Softshrink`` is not a ``Hardshrink``).

    Each names its function of ``F`` as ``_function``; the forward here applies it.
    """

    def __init__(self, lambd: float = 0.5):
        super().__init__()
        self.lambd = lambd

    def forward(self, input):  # noqa: A002
        """Shrink ``input`` by ``lambd`` (``_function``)."""
        return self._function(input, self.lambd)

    def extra_repr(self) -> str:
        return f"{self.lambd}"


class Hardshrink(_Shrink):
    """x where |x| > ``lambd``, else 0: see ``hardshrink``."""

    _function = staticmethod(hardshrink)


class Softshrink(_Shrink):
    """x shrunk towards 0 by ``lambd``: see ``softshrink``."""

    _function = staticmethod(softshrink)


class Tanhshrink(Module):
    """x - tanh(x): see ``tanhshrink``."""

    def forward(self, input):  # noqa: A002
        """Apply the tanh shrink."""
        return tanhshrink(input)
