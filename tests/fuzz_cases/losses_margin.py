# ruff: noqa: A006  (the table's lambdas take PyTorch's argument names, ``input`` included: messages name them)
"""Fuzz-table cases of the triplet, hinge embedding and multi-class / multi-label margin losses.

Functions are called with their valid arguments, one replaced by a wrong or
odd value; modules are fuzzed as "build with the options, then call on the
inputs", since PyTorch checks most options only when the loss is computed.
"""

from __future__ import annotations

import minigrad as mg
from minigrad.nn.embedding_losses import (
    HingeEmbeddingLoss,
    TripletMarginLoss,
    TripletMarginWithDistanceLoss,
    hinge_embedding_loss,
    triplet_margin_loss,
    triplet_margin_with_distance_loss,
)
from minigrad.nn.multiclass_losses import (
    MultiLabelMarginLoss,
    MultiLabelSoftMarginLoss,
    MultiMarginLoss,
    multi_margin_loss,
    multilabel_margin_loss,
    multilabel_soft_margin_loss,
)
from tests.test_fuzz_public_api import NAN, NOT_TENSORS, Fresh, case, ft, it

BAD_REDUCTIONS = ["bogus", None, 3]
NOT_NUMBERS = ["a", None, object(), 1j]
NOT_IMPLEMENTED = (NotImplementedError,)  # PyTorch's type for an input dtype its kernel is not built for
LOSS_WORDS = ("input", "target", "reduction", "shape", "size", "broadcast", "dtype", "dimension")


def _x(value):
    return value.make() if isinstance(value, Fresh) else value


def _labels(rows):
    """A fresh int64 (rows, 3) tensor of -1-ended class lists."""
    return Fresh(f"labels({rows}, 3)", lambda: mg.tensor([[0, 2, -1]] * rows, dtype=mg.int64))


TRIPLET = dict(anchor=ft(2, 3), positive=ft(2, 3), negative=ft(2, 3))
TRIPLET_BAD = dict(anchor=NOT_TENSORS + [ft(3)], positive=NOT_TENSORS + [ft(2, 4)],
                   negative=NOT_TENSORS + [ft(2, 3, 1)])
TRIPLET_WORDS = ("anchor", "positive", "negative", "margin", "dimensions", "broadcast", "x1", "x2")

CASES = [
    case("F.triplet_margin_loss", triplet_margin_loss,
         dict(**TRIPLET, margin=1.0, p=2, eps=1e-6, swap=False, reduction="mean"),
         dict(**TRIPLET_BAD, margin=[0.0, -1.0, *NOT_NUMBERS], p=NOT_NUMBERS + [NAN], eps=NOT_NUMBERS,
              swap=[1, "a", None], reduction=BAD_REDUCTIONS),
         names=TRIPLET_WORDS),
    case("F.triplet_margin_with_distance_loss", triplet_margin_with_distance_loss,
         dict(**TRIPLET, distance_function=None, margin=1.0, swap=False, reduction="mean"),
         dict(**TRIPLET_BAD, distance_function=["a", 3, print, lambda x, y: 1.5], margin=[0.0, -2, *NOT_NUMBERS],
              reduction=BAD_REDUCTIONS),
         names=TRIPLET_WORDS + ("distance_function",)),
    case("F.hinge_embedding_loss", hinge_embedding_loss,
         dict(input=ft(2, 3), target=Fresh("signs(2, 3)", lambda: mg.tensor([[1.0, -1.0, 1.0]] * 2)), margin=1.0,
              reduction="mean"),
         dict(input=NOT_TENSORS + [ft(2, 4), it([1, 2])], target=NOT_TENSORS + [ft(4, 3)], margin=NOT_NUMBERS,
              reduction=BAD_REDUCTIONS),
         names=LOSS_WORDS + ("margin",)),
    case("F.multi_margin_loss", multi_margin_loss,
         dict(input=ft(2, 3), target=it([0, 2]), p=1, margin=1.0, weight=ft(3), reduction="mean"),
         dict(input=NOT_TENSORS + [ft(2, 3, 1), ft(2, 0), it([[1, 2, 3], [4, 5, 6]])],
              target=NOT_TENSORS + [it([0, 3]), it([-1, 0]), it([0]), ft(2)],
              p=[3, 0, "a", None, NAN], margin=NOT_NUMBERS, weight=["a", ft(2, 3), ft(4), ft(3, dtype=mg.float64),
                                                                   ft(3, requires_grad=True)],
              reduction=BAD_REDUCTIONS),
         extra=NOT_IMPLEMENTED, names=LOSS_WORDS + ("weight", "margin", "class")),
    case("F.multilabel_margin_loss", multilabel_margin_loss,
         dict(input=ft(2, 3), target=_labels(2), reduction="mean"),
         dict(input=NOT_TENSORS + [ft(2, 3, 1), ft(2, 0), it([[1, 2, 3], [4, 5, 6]]), ft(3, 3)],
              target=NOT_TENSORS + [it([[0, 3, -1], [0, 1, 2]]), it([[-2, 0, 0], [0, 1, 2]]), it([0, 1, 2]),
                                    ft(2, 3)],
              reduction=BAD_REDUCTIONS),
         extra=NOT_IMPLEMENTED, names=LOSS_WORDS + ("class",)),
    case("F.multilabel_soft_margin_loss", multilabel_soft_margin_loss,
         dict(input=ft(2, 3), target=ft(2, 3), weight=ft(3), reduction="mean"),
         dict(input=NOT_TENSORS + [ft(), ft(2, 4), it([1, 2])], target=["abc", None, object(), ft(4, 3)],
              weight=["abc", object(), ft(2)], reduction=BAD_REDUCTIONS),
         extra=NOT_IMPLEMENTED, names=LOSS_WORDS + ("weight",)),
    # -- modules: built with the options, then called
    case("nn.TripletMarginLoss",
         lambda margin, p, eps, swap, reduction, anchor: TripletMarginLoss(margin, p, eps, swap, reduction=reduction)(
             _x(anchor), _x(ft(2, 3)), _x(ft(2, 3))),
         dict(margin=1.0, p=2.0, eps=1e-6, swap=False, reduction="mean", anchor=ft(2, 3)),
         dict(margin=[0.0, -1.0, *NOT_NUMBERS], p=NOT_NUMBERS, eps=NOT_NUMBERS, swap=[1, "a", None],
              reduction=BAD_REDUCTIONS, anchor=NOT_TENSORS + [ft(3)]),
         names=TRIPLET_WORDS + ("triplet_margin_loss", "reduction", "p", "eps", "swap")),
    case("nn.TripletMarginWithDistanceLoss",
         lambda distance_function, margin, swap, reduction, anchor: TripletMarginWithDistanceLoss(
             distance_function=distance_function, margin=margin, swap=swap, reduction=reduction)(
             _x(anchor), _x(ft(2, 3)), _x(ft(2, 3))),
         dict(distance_function=None, margin=1.0, swap=False, reduction="mean", anchor=ft(2, 3)),
         dict(distance_function=["a", 3, print], margin=[0.0, -1.0, *NOT_NUMBERS], reduction=BAD_REDUCTIONS,
              anchor=NOT_TENSORS + [ft(3)]),
         names=TRIPLET_WORDS + ("triplet_margin_with_distance_loss", "distance_function", "reduction")),
    case("nn.HingeEmbeddingLoss",
         lambda margin, reduction, input: HingeEmbeddingLoss(margin, reduction=reduction)(
             _x(input), mg.tensor([1.0, -1.0, 1.0])),
         dict(margin=1.0, reduction="mean", input=ft(2, 3)),
         dict(margin=NOT_NUMBERS, reduction=BAD_REDUCTIONS, input=NOT_TENSORS + [ft(2, 4)]),
         names=LOSS_WORDS + ("margin", "hinge_embedding_loss")),
    case("nn.MultiMarginLoss",
         lambda p, margin, weight, reduction, input: MultiMarginLoss(p, margin, _x(weight), reduction=reduction)(
             _x(input), mg.tensor([0, 2])),
         dict(p=1, margin=1.0, weight=None, reduction="mean", input=ft(2, 3)),
         dict(p=[3, "a", None], margin=NOT_NUMBERS, weight=["a", [1.0, 2.0, 3.0], ft(3, 1), ft(4)],
              reduction=BAD_REDUCTIONS, input=NOT_TENSORS + [ft(2, 4, 1), it([[1, 2, 3], [4, 5, 6]])]),
         extra=NOT_IMPLEMENTED, names=LOSS_WORDS + ("weight", "margin", "p", "multi_margin_loss")),
    case("nn.MultiLabelMarginLoss",
         lambda reduction, input: MultiLabelMarginLoss(reduction=reduction)(_x(input), _x(_labels(2))),
         dict(reduction="mean", input=ft(2, 3)),
         dict(reduction=BAD_REDUCTIONS, input=NOT_TENSORS + [ft(2, 4), ft(2, 3, 1)]),
         extra=NOT_IMPLEMENTED, names=LOSS_WORDS + ("multilabel_margin_loss",)),
    case("nn.MultiLabelSoftMarginLoss",
         lambda weight, reduction, input: MultiLabelSoftMarginLoss(_x(weight), reduction=reduction)(
             _x(input), _x(ft(2, 3))),
         dict(weight=ft(3), reduction="mean", input=ft(2, 3)),
         dict(weight=["a", [1.0, 2.0, 3.0], ft(2)], reduction=BAD_REDUCTIONS, input=NOT_TENSORS + [ft(2, 4), ft()]),
         extra=NOT_IMPLEMENTED, names=LOSS_WORDS + ("weight", "multilabel_soft_margin_loss")),
]
