"""Fuzz-table cases of the in-place ``F.selu_`` and ``F.celu_`` (the rules: ``tests/test_fuzz_public_api.py``'s
docstring); their out-of-place forms are in ``tests/test_fuzz_public_api_new.py``.
"""

from __future__ import annotations

import minigrad as mg
from minigrad.nn import functional as F
from tests.test_fuzz_public_api import NOT_TENSORS, case, ft, it

NOT_IMPLEMENTED = (NotImplementedError,)  # PyTorch's type for a dtype its kernel lacks
NOT_NUMBERS = ["a", None, object()]
NOT_FLOAT = NOT_TENSORS + [it([1, 2])]
NAMES = ("input", "dtype", "in-place")  # a leaf that requires grad: the message names the in-place operation

CASES = [
    case("F.selu_", F.selu_, dict(input=ft(2, 3)), dict(input=NOT_FLOAT), extra=NOT_IMPLEMENTED, names=NAMES),
    case("F.celu_", F.celu_, dict(input=ft(2, 3), alpha=1.0), dict(input=NOT_FLOAT, alpha=NOT_NUMBERS + [0.0]),
         extra=NOT_IMPLEMENTED, names=NAMES + ("alpha",)),
]

# The same functions under PyTorch's top-level names (``torch.relu_`` ...).
CASES += [
    case("mg.relu_", mg.relu_, dict(input=ft(2, 3)), dict(input=NOT_TENSORS), names=("input", "in-place")),
    case("mg.selu_", mg.selu_, dict(input=ft(2, 3)), dict(input=NOT_FLOAT), extra=NOT_IMPLEMENTED, names=NAMES),
    case("mg.celu_", mg.celu_, dict(input=ft(2, 3), alpha=1.0), dict(input=NOT_FLOAT, alpha=NOT_NUMBERS + [0.0]),
         extra=NOT_IMPLEMENTED, names=NAMES + ("alpha",)),
    case("mg.threshold_", mg.threshold_, dict(input=ft(2, 3), threshold=0.1, value=2.0),
         dict(input=NOT_TENSORS, threshold=NOT_NUMBERS, value=NOT_NUMBERS), extra=NOT_IMPLEMENTED,
         names=("input", "threshold", "value", "in-place")),
    case("mg.rrelu_", mg.rrelu_, dict(input=ft(2, 3), lower=0.1, upper=0.3, training=False),
         dict(input=NOT_FLOAT, lower=["a", None], upper=["a", None]), extra=NOT_IMPLEMENTED,
         names=("input", "lower", "upper", "bound", "in-place")),
]
