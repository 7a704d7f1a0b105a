"""Fuzz-table cases of ``F.ctc_loss`` and ``nn.CTCLoss`` (``minigrad.nn.ctc_loss``).

Valid arguments: log_probs (T=5, N=2, C=4), padded targets, Tensor lengths.
A log_probs of an unsupported dtype raises NotImplementedError, as in PyTorch.
"""

from __future__ import annotations

from minigrad.nn.ctc_loss import CTCLoss, ctc_loss
from tests.test_fuzz_public_api import NOT_TENSORS, case, ft, it

NOT_IMPLEMENTED = (NotImplementedError,)  # PyTorch's class for a log_probs dtype it does not support
NAMES = ("log_probs", "targets", "input_lengths", "target_lengths", "blank", "reduction", "zero_infinity",
         "lengths", "dtype")


def _module_call(blank, reduction, zero_infinity, log_probs):
    """Build ``nn.CTCLoss`` with the options, then call it on ``log_probs`` and fixed targets and lengths."""
    module = CTCLoss(blank=blank, reduction=reduction, zero_infinity=zero_infinity)
    return module(log_probs, it([[1, 2], [3, 1]]).make(), it([5, 4]).make(), it([2, 2]).make())


CASES = [
    case(
        "F.ctc_loss",
        ctc_loss,
        dict(log_probs=ft(5, 2, 4, requires_grad=True), targets=it([[1, 2], [3, 1]]), input_lengths=it([5, 4]),
             target_lengths=it([2, 2]), blank=0, reduction="mean", zero_infinity=False),
        dict(
            log_probs=NOT_TENSORS + [ft(), ft(0, 2, 4), ft(5, 2, 4, 1), ft(5), it([[1, 2]])],
            targets=["abc", None, it([[1, 2]]), it([[1, 7], [3, 1]]), it([1, 2, 3]), it([[[1]]])],
            input_lengths=[it([6, 4]), it([-1, 4]), it([5]), ft(2), 5, "a", None, (5, 4), [5.0, 4.0]],
            target_lengths=[it([3, 2]), it([-1, 2]), it([2]), ft(2), None, "a"],
            blank=[-1, 4, 1.5, True, "a", None],
            reduction=["avg", None, 5],
            zero_infinity=["yes", None, 1],
        ),
        extra=NOT_IMPLEMENTED,
        names=NAMES,
    ),
    case(
        "nn.CTCLoss",
        _module_call,
        dict(blank=0, reduction="mean", zero_infinity=False, log_probs=ft(5, 2, 4)),
        dict(
            blank=[-1, 4, 1.5, True, "a", None],
            reduction=["avg", None],
            zero_infinity=["yes", None, 1],
            log_probs=NOT_TENSORS + [ft(5, 2, 4, 1), ft(4, 4)],
        ),
        extra=NOT_IMPLEMENTED,
        names=NAMES,
    ),
]
