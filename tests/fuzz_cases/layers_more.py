# ruff: noqa: A006  (the lambdas take PyTorch's argument names, ``input`` included: messages name them)
"""Fuzz-table cases of bilinear/Bilinear, Fold/Unfold, channel_shuffle/ChannelShuffle, rrelu/rrelu_/RReLU,
pdist and gumbel_softmax (the rules: ``tests/test_fuzz_public_api.py``'s docstring).

Layers PyTorch validates only when called are fuzzed as "build, then call on an input".
"""

from __future__ import annotations

from minigrad.nn.bilinear import Bilinear, bilinear
from minigrad.nn.channel_shuffle import ChannelShuffle, channel_shuffle
from minigrad.nn.distance import pdist
from minigrad.nn.fold import Fold, Unfold
from minigrad.nn.gumbel import gumbel_softmax
from minigrad.nn.rrelu import RReLU, rrelu, rrelu_
from tests.test_fuzz_public_api import INF, NAN, NOT_TENSORS, Fresh, case, ft, it

NOT_IMPLEMENTED = (NotImplementedError,)  # PyTorch's type for a dtype its kernel lacks


def _made(value):
    return value.make() if isinstance(value, Fresh) else value


def _bilinear_layer(in1_features, in2_features, out_features, bias, dtype):
    layer = Bilinear(in1_features, in2_features, out_features, bias, dtype=dtype)
    dtype = layer.weight.dtype
    return layer(ft(2, in1_features, dtype=dtype).make(), ft(2, in2_features, dtype=dtype).make())


CASES = [
    case(
        "F.bilinear",
        bilinear,
        dict(input1=ft(2, 3), input2=ft(2, 4), weight=ft(5, 3, 4), bias=ft(5)),
        dict(
            input1=NOT_TENSORS + [ft(2, 2), ft(3), ft(3, 3), ft(2, 3, dtype="float64")],
            input2=NOT_TENSORS + [ft(2, 5), ft(1, 4)],
            weight=NOT_TENSORS + [ft(5, 3), ft(5), ft(5, 4, 3), ft(5, 3, 4, 1)],
            bias=["abc", 3.5, ft(4), ft(), ft(5, 1), it([1, 2, 3, 4, 5])],
        ),
        extra=NOT_IMPLEMENTED,
        names=("input1", "input2", "weight", "bias", "dtype", "dimension", "features"),
    ),
    case(
        "nn.Bilinear",
        _bilinear_layer,
        dict(in1_features=3, in2_features=4, out_features=5, bias=True, dtype=None),
        dict(in1_features=[0, -1, 2.5, "a", None], in2_features=[-2, "a"], out_features=[-1, 1.5],
             dtype=["tpu", 1.5, "int64"]),
        names=("features", "dtype"),
    ),
    case(
        "nn.Fold",
        lambda output_size, kernel_size, dilation, padding, stride: Fold(
            output_size, kernel_size, dilation, padding, stride)(ft(1, 8, 4).make()),
        dict(output_size=3, kernel_size=2, dilation=1, padding=0, stride=1),
        dict(output_size=[4, 0, "a", (3, 3, 3)], kernel_size=[3, 0, -1, "a"], dilation=[0, "a"],
             padding=[-1, "a"], stride=[0, "a"]),
        names=("output_size", "kernel_size", "dilation", "padding", "stride", "blocks", "fold"),
    ),
    case(
        "nn.Unfold",
        lambda kernel_size, dilation, padding, stride, input: Unfold(kernel_size, dilation, padding, stride)(
            _made(input)),
        dict(kernel_size=2, dilation=1, padding=0, stride=1, input=ft(1, 2, 3, 3)),
        dict(kernel_size=[4, 0, -1, "a"], dilation=[0, 3, "a"], padding=[-1, "a"], stride=[0, "a"],
             input=NOT_TENSORS + [ft(3, 3), ft(1, 1, 2, 3, 3)]),
        names=("kernel_size", "dilation", "padding", "stride", "input", "unfold"),
    ),
    case(
        "F.channel_shuffle",
        channel_shuffle,
        dict(input=ft(1, 6, 2), groups=3),
        dict(input=NOT_TENSORS + [ft(2, 6), ft(6)], groups=[0, -2, 4, 2.0, True, "a", None]),
        names=("input", "groups", "channels", "dimensions"),
    ),
    case(  # torch.channel_shuffle: the same function at the top level
        "mg.channel_shuffle",
        channel_shuffle,
        dict(input=ft(2, 4, 3), groups=2),
        dict(input=NOT_TENSORS + [ft(4, 3)], groups=[0, 3, 1.5]),
        names=("input", "groups", "channels", "dimensions"),
    ),
    case(
        "nn.ChannelShuffle",
        lambda groups, input: ChannelShuffle(groups)(_made(input)),
        dict(groups=2, input=ft(2, 4, 3)),
        dict(groups=[0, 3, -1, "a", None], input=NOT_TENSORS + [ft(4, 3)]),
        names=("groups", "input", "channels", "dimensions"),
    ),
    case(
        "F.rrelu",
        rrelu,
        dict(input=ft(2, 3), lower=0.1, upper=0.3, training=True, inplace=False),
        dict(input=NOT_TENSORS + [it([1, 2])], lower=[0.5, NAN, INF, "a", None, 1e39],
             upper=[0.05, -INF, "a", None], training=["yes", None, 1]),
        extra=NOT_IMPLEMENTED,
        names=("input", "lower", "upper", "training", "bound"),
    ),
    case(
        "F.rrelu_",
        rrelu_,
        dict(input=ft(2, 3), lower=0.1, upper=0.3, training=False),
        dict(input=NOT_TENSORS + [it([1, 2]), ft(2, 3, requires_grad=True)], lower=[0.5, NAN, "a"],
             upper=[INF, None], training=["yes", None]),
        extra=NOT_IMPLEMENTED,
        names=("input", "lower", "upper", "training", "bound", "leaf"),
    ),
    case(
        "nn.RReLU",
        lambda lower, upper, inplace, input: RReLU(lower, upper, inplace)(_made(input)),
        dict(lower=0.1, upper=0.3, inplace=False, input=ft(2, 3)),
        dict(lower=[0.5, NAN, "a", None], upper=[INF, None, "a"], input=NOT_TENSORS + [it([1, 2])]),
        extra=NOT_IMPLEMENTED,
        names=("lower", "upper", "bound", "input"),
    ),
    case(
        "F.pdist",
        pdist,
        dict(input=ft(4, 3), p=2.0),
        dict(input=NOT_TENSORS + [ft(3), ft(2, 3, 4), ft(), it([[1, 2], [3, 4]])], p=[-1, -INF, NAN, "a", None, 1j]),
        names=("input", "p", "dimension", "floating"),
    ),
    case(
        "F.gumbel_softmax",
        gumbel_softmax,
        dict(logits=ft(2, 3), tau=1.0, hard=True, eps=1e-10, dim=-1),
        dict(logits=NOT_TENSORS + [it([1, 2])], tau=["a", None, [1.0]], dim=[2, -3, 1.5, "0", None]),
        names=("logits", "tau", "dim"),
    ),
]
