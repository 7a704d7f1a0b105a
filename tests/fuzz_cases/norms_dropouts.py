"""Fuzz-table cases of RMS norm, local response norm, alpha dropout and 3-D channel dropout.

Modules are fuzzed as "build, then call on an input", so an argument that
PyTorch stores unchecked (``nn.LocalResponseNorm``'s, a NaN ``p``) must fail
when the module is called.
"""

from __future__ import annotations

from minigrad.nn.alpha_dropout import AlphaDropout, FeatureAlphaDropout, alpha_dropout, feature_alpha_dropout
from minigrad.nn.local_response_norm import LocalResponseNorm, local_response_norm
from minigrad.nn.normalization import Dropout3d, dropout3d
from minigrad.nn.rms_norm import RMSNorm, rms_norm
from tests.test_fuzz_public_api import NAN, NOT_IMPLEMENTED, NOT_TENSORS, Fresh, case, ft, it

BAD_PROBABILITIES = [NAN, -0.1, 1.5, "a", None, float("inf"), 1j]
DROPOUT_NAMES = ("dropout", "probability", "input", "training", "dimensions", "channel", "floating", "dtype")


def _input(x):
    return x.make() if isinstance(x, Fresh) else x


def _dropout_cases():
    cases = []
    for name, function, x in (("alpha_dropout", alpha_dropout, ft(2, 3, 4)),
                              ("feature_alpha_dropout", feature_alpha_dropout, ft(2, 3, 4)),
                              ("dropout3d", dropout3d, ft(2, 3, 2, 2, 2))):
        bad_inputs = NOT_TENSORS + [it([[1, 2], [3, 4]])]
        if name == "feature_alpha_dropout":
            bad_inputs.append(ft(3))  # a channel-wise mask needs (N, C, *)
        cases.append(case(
            f"F.{name}",
            function,
            dict(input=x, p=0.5, training=True, inplace=False),
            dict(input=bad_inputs, p=BAD_PROBABILITIES, training=[None, 1, "yes"]),
            extra=NOT_IMPLEMENTED,  # a complex input, as PyTorch's mask draw
            names=DROPOUT_NAMES,
        ))
    for cls, x in ((AlphaDropout, ft(2, 3, 4)), (FeatureAlphaDropout, ft(2, 3, 4)), (Dropout3d, ft(2, 3, 2, 2, 2))):
        cases.append(case(
            f"nn.{cls.__name__}",
            lambda p, inplace, x, cls=cls: cls(p, inplace)(_input(x)),
            dict(p=0.5, inplace=False, x=x),
            dict(p=BAD_PROBABILITIES, x=NOT_TENSORS + [it([[1, 2], [3, 4]])]),
            extra=NOT_IMPLEMENTED,
            names=DROPOUT_NAMES,
        ))
    return cases


CASES = [
    case(
        "F.rms_norm",
        rms_norm,
        dict(input=ft(2, 3, 4), normalized_shape=(3, 4), weight=None, eps=None),
        dict(
            input=NOT_TENSORS + [ft(3), ft(2, 4, 3), it([[1, 2, 3, 4]])],
            normalized_shape=[4, (), (3,), (-4,), (1, 2, 3, 4), (4.0,), "a", None, (True,)],
            weight=[ft(4), ft(3, 4, 1), "abc", [1.0] * 12],
            eps=["a", 1j, [1e-5]],
        ),
        extra=NOT_IMPLEMENTED,  # an integer input, as PyTorch
        names=("input", "normalized_shape", "weight", "eps", "dimensions"),
    ),
    case(
        "nn.RMSNorm",
        lambda normalized_shape, eps, elementwise_affine, x: RMSNorm(
            normalized_shape, eps=eps, elementwise_affine=elementwise_affine)(_input(x)),
        dict(normalized_shape=4, eps=None, elementwise_affine=True, x=ft(2, 3, 4)),
        dict(
            normalized_shape=[-1, (2, -1), "a", None, 1.5, True, 3, ()],
            eps=["a", 1j],
            x=NOT_TENSORS + [ft(4, 3), it([[1, 2, 3, 4]])],
        ),
        extra=NOT_IMPLEMENTED,
        names=("normalized_shape", "eps", "input", "dimensions", "dtype"),
    ),
    case(
        "F.local_response_norm",
        local_response_norm,
        dict(input=ft(2, 5, 3), size=3, alpha=1e-4, beta=0.75, k=1.0),
        dict(
            input=NOT_TENSORS + [ft(2, 5), Fresh("bool_tensor", lambda: ft(2, 5, 3).make() > 0)],
            size=[0, -1, 2.0, "a", None, True],
            alpha=["a", None],
            beta=["a", None],
            k=["a", None],
        ),
        extra=NOT_IMPLEMENTED,  # a dtype PyTorch's average pooling lacks (bool, complex, int32)
        names=("input", "size", "alpha", "beta", "k", "dimensions"),
    ),
    case(
        "nn.LocalResponseNorm",
        lambda size, alpha, beta, k, x: LocalResponseNorm(size, alpha, beta, k)(_input(x)),
        dict(size=3, alpha=1e-4, beta=0.75, k=1.0, x=ft(2, 5, 3, 2)),
        dict(size=[0, -2, 2.5, "a", None], alpha=["a", None], beta=["a"], k=["a", None],
             x=NOT_TENSORS + [ft(5, 3)]),
        extra=NOT_IMPLEMENTED,
        names=("size", "alpha", "beta", "k", "input", "dimensions"),
    ),
] + _dropout_cases()
