"""The shared format of op test cases.

Each ``OpCase`` is one program exercising a registry op. The same ``fn`` runs
on minigrad and on PyTorch (their APIs mirror each other), so every case is
checked twice: by ``gradcheck`` in float64 (test_gradcheck.py) and against
PyTorch as oracle (test_oracle.py). ``test_registry.py`` asserts every key of
``minigrad.ops.REGISTRY`` is covered by at least one case.

Case modules (``cases_core.py``, ``cases_nn.py``) append to ``CASES`` with ``case(...)``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from hypothesis import strategies as st


@dataclass(frozen=True)
class OpCase:
    """One test program.

    Attributes:
        op: key in ``minigrad.ops.REGISTRY`` this case exercises.
        fn: ``fn(lib, F, *inputs) -> Tensor`` where ``lib`` is ``minigrad`` or
            ``torch`` and ``F`` its ``nn.functional``; inputs are float tensors
            (requires_grad) in the order of ``shapes``.
        shapes: hypothesis strategy drawing a tuple of input shapes.
        low, high: range the float inputs are drawn from.
        away_from: keep inputs at least ``margin`` away from these points
            (kinks of relu/abs/clamp, where finite differences break).
        margin: see ``away_from``.
        distinct: make input values distinct (max/min ties).
        name: a label for test ids (defaults to ``op``).
        grad_atol: absolute slack for the gradients against PyTorch, where
            PyTorch's own formula is off by more than rounding (say why at
            the case); None: the oracle's default.
    """

    op: str
    fn: Callable
    shapes: st.SearchStrategy
    low: float = -2.0
    high: float = 2.0
    away_from: tuple = ()
    margin: float = 0.05
    distinct: bool = False
    name: str = ""
    extra: dict = field(default_factory=dict)
    grad_atol: float | None = None

    @property
    def label(self) -> str:
        return self.name or self.op


CASES: list[OpCase] = []


def case(op, fn, shapes, **kwargs) -> OpCase:
    """Register and return an ``OpCase``."""
    c = OpCase(op=op, fn=fn, shapes=shapes, **kwargs)
    CASES.append(c)
    return c


def load_all_cases() -> None:
    """Import every ``cases_*.py`` module beside this one (each appends its cases to ``CASES``)."""
    import importlib  # noqa: PLC0415
    import pkgutil  # noqa: PLC0415
    from pathlib import Path  # noqa: PLC0415

    for info in pkgutil.iter_modules([str(Path(__file__).parent)]):
        if info.name.startswith("cases_"):
            importlib.import_module(f"{__package__}.{info.name}")
