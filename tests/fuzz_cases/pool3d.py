"""Fuzz-table cases of 3-D convolution and pooling, power-average pooling and max unpooling.

Callables come from their own modules (``minigrad.nn.conv``, ``pooling3d``,
``lp_pooling``, ``unpooling``); modules are fuzzed as "build, then call on an
input". A few arguments are left out of the odd-value fuzzing (``args_free``)
because a legal odd value allocates billions of elements in PyTorch as here:
a padding of 1000 on all three sides of a volume (conv3d), a kernel of
1000 ** 3 (Conv3d's weight), an adaptive output of 1000 ** 3. Their wrong
values are still listed.
"""

from __future__ import annotations

import minigrad as mg
from minigrad.nn import conv, lp_pooling, pooling3d, unpooling
from tests.test_fuzz_public_api import NOT_IMPLEMENTED, NOT_TENSORS, Fresh, case, ft, it


def _x(value):
    return value.make() if isinstance(value, Fresh) else value


def _build_call(cls, x, *args, **kwargs):
    """``cls(*args, **kwargs)`` called on a fresh ``x`` (or on each of a tuple of inputs)."""
    module = cls(*args, **kwargs)
    inputs = x if isinstance(x, tuple) else (x,)
    return module(*[_x(v) for v in inputs])


def bools(*shape):
    return Fresh(f"bool_tensor{shape}", lambda: mg.ones(*shape) > 0)


def pooled(fn, x, kernel_size):
    """A fresh (values, indices) pair from ``fn`` (a max pooling with ``return_indices``) on ``x``."""
    return Fresh(f"{fn.__name__}({x}, {kernel_size})", lambda: fn(_x(x), kernel_size, return_indices=True))


GEOMETRY = ("input", "weight", "bias", "stride", "padding", "dilation", "groups", "output_padding", "channel",
            "kernel", "size", "expected", "shape")
POOL = ("input", "kernel_size", "stride", "padding", "dilation", "ceil_mode", "output", "kernel", "return_indices",
        "count_include_pad", "divisor_override", "output_size", "dimension", "size")

# Volumes one deep and one high: a stride or dilation of 1000 along them keeps the output small.
VOLUME, THIN = ft(1, 2, 3, 3, 3), ft(1, 2, 1, 1, 2)


def _conv_cases():
    return [
        case(
            "F.conv3d",
            conv.conv3d,
            dict(input=VOLUME, weight=ft(4, 1, 2, 2, 2), bias=ft(4), stride=1, padding=0, dilation=1, groups=2),
            dict(input=NOT_TENSORS + [ft(2, 3, 3), ft(1, 3, 3, 3, 3), it([[[[[1]]]]])],
                 weight=[ft(4, 2, 2, 2), ft(3, 1, 2, 2, 2), ft(4, 1, 0, 2, 2), None, "abc"],
                 bias=[ft(5), "abc"], stride=[0, -1, "a", (1, 2)], padding=[-1, "a", "bogus", (1, 1)],
                 dilation=[0, "a", 5], groups=[0, 3, "a"]),
            names=GEOMETRY, args_free=("padding",),
        ),
        case(
            "F.conv_transpose3d",
            conv.conv_transpose3d,
            dict(input=THIN, weight=ft(2, 3, 1, 1, 2), bias=None, stride=1, padding=0, output_padding=0, groups=1,
                 dilation=1),
            dict(input=NOT_TENSORS + [ft(2, 5)], weight=[ft(3, 3, 1, 1, 2), ft(2, 3), None, "abc"],
                 bias=[ft(5), "abc"], stride=[0, -1, "a"], padding=[-1, "a", "same", 5],
                 output_padding=[5, -1, "a"], groups=[0, 4, "a"], dilation=[0, "a"]),
            names=GEOMETRY,
        ),
        case(
            "nn.Conv3d",
            lambda **kw: _build_call(conv.Conv3d, VOLUME, **kw),
            dict(in_channels=2, out_channels=4, kernel_size=2, stride=1, padding=0, dilation=1, groups=2,
                 padding_mode="zeros"),
            dict(in_channels=[-1, 0, "a", 3], out_channels=[-1, "a", 3], kernel_size=[0, -1, "a", 9],
                 stride=[0, -1, "a"], padding=[-1, "a", "bogus"], groups=[0, 3, "a"], padding_mode=["bogus", 3],
                 dilation=[0, "a"]),
            names=GEOMETRY + ("in_channels", "out_channels", "kernel_size", "padding_mode", "divisible"),
            args_free=("kernel_size", "padding"),
        ),
        case(
            "nn.ConvTranspose3d",
            lambda **kw: _build_call(conv.ConvTranspose3d, THIN, **kw),
            dict(in_channels=2, out_channels=3, kernel_size=(1, 1, 2), stride=1, padding=0, output_padding=0,
                 groups=1, dilation=1, padding_mode="zeros"),
            dict(in_channels=[-1, 0, "a", 3], out_channels=[-1, "a"], kernel_size=[0, -1, "a"],
                 stride=[0, -1, "a"], padding=[-1, "a"], output_padding=[5, "a"], groups=[0, 4, "a"],
                 padding_mode=["bogus", "reflect", 3], dilation=[0, "a"]),
            names=GEOMETRY + ("in_channels", "out_channels", "kernel_size", "padding_mode", "divisible"),
            args_free=("kernel_size",),
        ),
    ]


def _pool3d_cases():
    bad_input = [ft(3, 3, 3), ft(1, 2, 0, 3, 3), bools(1, 2, 3, 3, 3), None, "abc"]
    cases = [
        case(
            "F.max_pool3d",
            pooling3d.max_pool3d,
            dict(input=VOLUME, kernel_size=2, stride=None, padding=0, dilation=1, ceil_mode=False,
                 return_indices=False),
            dict(input=bad_input + [ft(1, 2, 1, 1, 1)], kernel_size=[0, -1, (1, 2), "a", 1.5, None, 9],
                 stride=[0, -1, "a", (1, 2), 1.5], padding=[-1, 2, "a", (1, 2)], dilation=[0, "a", (1, 2)],
                 ceil_mode=["yes", 2.5], return_indices=["yes", 2.5]),
            extra=NOT_IMPLEMENTED, names=POOL,
        ),
        case(
            "F.avg_pool3d",
            pooling3d.avg_pool3d,
            dict(input=VOLUME, kernel_size=2, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
                 divisor_override=None),
            dict(input=bad_input + [ft(1, 2, 3, 3, 3, dtype=mg.float16)], kernel_size=[0, -1, (1, 2), "a", 9],
                 stride=[0, "a", (1, 2)], padding=[-1, 2, "a"], ceil_mode=["yes"], count_include_pad=["yes"],
                 divisor_override=[0, 1.5, "a"]),
            extra=NOT_IMPLEMENTED, names=POOL,
        ),
    ]
    for fn in (pooling3d.adaptive_avg_pool3d, pooling3d.adaptive_max_pool3d):
        cases.append(
            case(
                f"F.{fn.__name__}",
                fn,
                dict(input=VOLUME, output_size=(2, None, 1)),
                dict(input=bad_input + [it([[[[1]]]])], output_size=[-1, (1, 2), "a", 1.5, (None, "a", 1), (2, -1, 1)]),
                extra=NOT_IMPLEMENTED, names=POOL, args_free=("output_size",),
            )
        )
    cases += [
        case(
            "nn.MaxPool3d",
            lambda **kw: _build_call(pooling3d.MaxPool3d, VOLUME, **kw),
            dict(kernel_size=2, stride=None, padding=0, dilation=1, return_indices=False, ceil_mode=False),
            dict(kernel_size=[0, -1, "a", 1.5, 9], stride=[0, "a"], padding=[-1, 2], dilation=[0, "a"],
                 ceil_mode=["yes"], return_indices=["yes"]),
            names=POOL,
        ),
        case(
            "nn.AvgPool3d",
            lambda **kw: _build_call(pooling3d.AvgPool3d, VOLUME, **kw),
            dict(kernel_size=2, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
                 divisor_override=None),
            dict(kernel_size=[0, -1, "a", 9], stride=[0, "a"], padding=[-1, 2], count_include_pad=["yes"],
                 divisor_override=[0, "a"]),
            names=POOL,
        ),
    ]
    for cls in (pooling3d.AdaptiveAvgPool3d, pooling3d.AdaptiveMaxPool3d):
        cases.append(
            case(
                f"nn.{cls.__name__}",
                lambda output_size, cls=cls: _build_call(cls, VOLUME, output_size),
                dict(output_size=2),
                dict(output_size=[-1, (1, 2), "a", 1.5]),
                names=POOL, args_free=("output_size",),
            )
        )
    return cases


def _lp_cases():
    lp = ("input", "norm_type", "kernel_size", "stride", "ceil_mode", "output", "kernel", "dimension", "size")
    sequence, image = ft(2, 3, 6), ft(1, 2, 5, 5)
    return [
        case(
            "F.lp_pool1d",
            lp_pooling.lp_pool1d,
            dict(input=sequence, norm_type=2, kernel_size=2, stride=None, ceil_mode=False),
            dict(input=NOT_TENSORS + [ft(5), ft(2, 3, 1)], norm_type=["a", None, 1j], kernel_size=[0, -1, "a", 9],
                 stride=[0, "a"], ceil_mode=["yes"]),
            extra=(ZeroDivisionError,), names=lp,
        ),
        case(
            "F.lp_pool2d",
            lp_pooling.lp_pool2d,
            dict(input=image, norm_type=2.5, kernel_size=(2, 3), stride=None, ceil_mode=False),
            dict(input=NOT_TENSORS + [ft(5, 5), ft(1, 2, 1, 1)], norm_type=["a", None],
                 kernel_size=[0, -1, "a", 9, (1, 2, 3)], stride=[0, "a"], ceil_mode=["yes"]),
            extra=(ZeroDivisionError,), names=lp,
        ),
        case(
            "nn.LPPool1d",
            lambda **kw: _build_call(lp_pooling.LPPool1d, sequence, **kw),
            dict(norm_type=2, kernel_size=2, stride=None, ceil_mode=False),
            dict(norm_type=["a"], kernel_size=[0, "a", 9], stride=[0, "a"], ceil_mode=["yes"]),
            extra=(ZeroDivisionError,), names=lp,
        ),
        case(
            "nn.LPPool2d",
            lambda **kw: _build_call(lp_pooling.LPPool2d, image, **kw),
            dict(norm_type=1, kernel_size=2, stride=1, ceil_mode=True),
            dict(norm_type=["a"], kernel_size=[0, "a", 9], stride=[0, "a"], ceil_mode=["yes"]),
            extra=(ZeroDivisionError,), names=lp,
        ),
    ]


def _unpool_cases():
    unpool = ("input", "indices", "kernel_size", "stride", "padding", "output_size", "output", "kernel", "index",
              "dimension", "shape", "dtype", "size")
    sequence, image = ft(2, 3, 6), ft(1, 2, 4, 4)
    seq_pool = pooled(mg.nn.functional.max_pool1d, sequence, 2)
    img_pool = pooled(mg.nn.functional.max_pool2d, image, 2)

    def call_1d(input, indices, **kw):  # noqa: A002
        values, picks = _x(seq_pool)
        return unpooling.max_unpool1d(values if input is None else input, picks if indices is None else indices,
                                      **kw)

    def call_2d(input, indices, **kw):  # noqa: A002
        values, picks = _x(img_pool)
        return unpooling.max_unpool2d(values if input is None else input, picks if indices is None else indices,
                                      **kw)

    return [
        case(
            "F.max_unpool1d",
            call_1d,
            # input/indices None stand for the pooling's own (drawn afresh for every call)
            dict(input=None, indices=None, kernel_size=2, stride=None, padding=0, output_size=None),
            dict(input=["abc", 3.5, ft(5), it([[[1, 2, 3]]])], indices=["abc", it([[[1]]]), ft(2, 3, 3)],
                 kernel_size=[-1, "a", (1, 2, 3)], stride=["a", -5], padding=["a", 5],
                 output_size=[(9,), (1, 2, 3, 4), "a", (1.5,)]),
            extra=NOT_IMPLEMENTED, names=unpool, args_free=("input", "indices"),
        ),
        case(
            "F.max_unpool2d",
            call_2d,
            dict(input=None, indices=None, kernel_size=2, stride=None, padding=0, output_size=(4, 5)),
            dict(input=["abc", ft(2, 2), it([[[[1, 2]]]])], indices=["abc", it([[[[1]]]]), ft(1, 2, 2, 2)],
                 kernel_size=[-1, "a", (1, 2, 3)], stride=["a", -5], padding=["a", 5],
                 output_size=[(9, 9), (1, 2, 3), "a"]),
            extra=NOT_IMPLEMENTED, names=unpool, args_free=("input", "indices"),
        ),
        case(
            "nn.MaxUnpool1d",
            lambda **kw: unpooling.MaxUnpool1d(**kw)(*_x(seq_pool)),
            dict(kernel_size=2, stride=None, padding=0),
            dict(kernel_size=[-1, "a", (1, 2, 3)], stride=["a", -5], padding=["a", 5]),
            names=unpool,
        ),
        case(
            "nn.MaxUnpool2d",
            lambda **kw: unpooling.MaxUnpool2d(**kw)(*_x(img_pool)),
            dict(kernel_size=2, stride=None, padding=0),
            dict(kernel_size=[-1, "a", (1, 2, 3)], stride=["a", -5], padding=["a", 5]),
            names=unpool,
        ),
    ]


CASES = _conv_cases() + _pool3d_cases() + _lp_cases() + _unpool_cases()
