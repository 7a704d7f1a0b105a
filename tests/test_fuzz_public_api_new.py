# ruff: noqa: A006  (the table's lambdas take PyTorch's argument names, ``input`` included: messages name them)
"""The fuzz table's third part: the math and shape forms, settings, the newer layers, losses, LBFGS, distributions.

Same rules and helpers as ``tests/test_fuzz_public_api.py`` (read its
docstring): each ``Case`` lists valid arguments and certainly-wrong values
per argument; a wrong value must raise TypeError, ValueError, RuntimeError
or IndexError (or the type PyTorch raises there, given in ``extra``:
NotImplementedError for an unsupported dtype or a pair of distributions
without a KL formula, AssertionError for a transformer's head count) with a
message naming the call, the argument or the value; odd values drawn by
hypothesis either work or raise so. Modules PyTorch validates only when
called (padding, upsampling, activations, losses) are fuzzed as "build,
then call on an input".

``NEW_CASES`` is joined to the other halves' cases by
``test_the_table_covers_the_public_api`` in the first half; the names it
must cover (``minigrad.math_forms`` and ``minigrad.shape_forms``, the
settings, LBFGS, the distributions) are listed in the second half's
``COVERED_NAMES``.
"""

from __future__ import annotations

import minigrad as mg
from minigrad import distributions as D
from minigrad import nn
from minigrad.nn import functional as F
from tests.test_fuzz_public_api import (
    BAD_DTYPES,
    NAN,
    NOT_TENSORS,
    Fresh,
    case,
    ft,
    it,
    table_tests,
)
from tests.test_fuzz_public_api_more import BAD_DIMS, NOT_IMPLEMENTED, NOT_INPUTS, bools

BAD_DEVICES = ["tpu", "cuda:99", 3.5]
BAD_REDUCTIONS = ["bogus", None, 3]
NOT_NUMBERS = ["a", None, object()]


def const(value, *shape, dtype=mg.float32):
    """A fresh tensor of ``shape`` filled with ``value``."""
    return Fresh(f"full{shape}={value}", lambda: mg.full(shape, value, dtype=dtype))


def _pos(fn):
    """``fn`` called with the case's arguments in order (the in-place forms name their first one ``self``)."""
    return lambda **kwargs: fn(*kwargs.values())


def _x(value):
    return value.make() if isinstance(value, Fresh) else value


# ------------------------------------------------------------------------------------------ mg. math forms

UNARY_FORMS = ["absolute", "deg2rad", "digamma", "frac", "lgamma", "neg", "negative", "rad2deg", "signbit", "sinc",
               "argwhere", "numel", "nonzero"]
IN_PLACE_UNARY = ["deg2rad_", "frac_", "rad2deg_", "sinc_", "nan_to_num_"]
PAIR_FORMS = ["copysign", "fmax", "fmin", "hypot", "logaddexp", "logaddexp2", "mul", "multiply", "true_divide",
              "xlogy", "add", "sub", "subtract", "div", "divide", "kron"]
REDUCTIONS = ["amax", "amin", "count_nonzero", "logsumexp", "median", "mode"]
TYPED_REDUCTIONS = ["nanmean", "nansum", "prod"]
MOMENTS = ["std", "var", "std_mean", "var_mean"]
NAMES = ("input", "other", "dim", "dtype", "broadcast", "shape", "size")
IN_PLACE = ("in-place",)  # a leaf that requires grad: the message names the in-place operation as the problem


def _with_ints(fn):
    return lambda input: fn(input, mg.tensor([1, 2]))


def _like(fn):
    return lambda input, dtype, device: fn(input, dtype=dtype, device=device)


def _math_cases():
    cases = [
        case(f"mg.{name}", getattr(mg, name), dict(input=ft(2, 3)), dict(input=NOT_INPUTS),
             extra=NOT_IMPLEMENTED if name in ("frac", "absolute") else (), names=NAMES)  # frac of ints, abs of bools
        for name in UNARY_FORMS
    ]
    cases += [
        case(f"mg.{name}", _pos(getattr(mg, name)), dict(input=ft(2, 3)), dict(input=NOT_INPUTS),
             extra=NOT_IMPLEMENTED if name == "frac_" else (), names=NAMES + IN_PLACE + (name.rstrip("_"),))
        for name in IN_PLACE_UNARY
    ]
    cases += [
        case(
            f"mg.{name}",
            getattr(mg, name),
            dict(input=ft(2, 3), other=ft(2, 3)),
            dict(input=[None, "abc", object()], other=[None, "abc", object()] + ([] if name == "kron" else [ft(4, 5)])),
            names=NAMES,
        )
        for name in PAIR_FORMS
    ]
    cases.append(
        case("mg.xlogy_", _pos(mg.xlogy_), dict(input=ft(2, 3), other=ft(2, 3)), dict(other=[None, "abc", ft(4, 5)]),
             names=NAMES + IN_PLACE)
    )
    cases += [
        case(f"mg.{name}", getattr(mg, name), dict(input=ft(2, 3), other=ft(2, 3), alpha=2),
             dict(alpha=["a", None]), names=NAMES + ("alpha",))
        for name in ("add", "sub", "subtract")
    ]
    cases += [
        case(f"mg.{name}(rounding_mode)", getattr(mg, name),
             dict(input=ft(2, 3), other=ft(2, 3), rounding_mode="floor"),
             dict(rounding_mode=["bogus", 3]), names=NAMES + ("rounding_mode",))
        for name in ("div", "divide")
    ]
    cases += [
        case(f"mg.{name}", getattr(mg, name), dict(input=ft(2, 3), dim=1, keepdim=False),
             dict(input=NOT_INPUTS, dim=[5, "a", 1.5], keepdim=["yes", 2.5]), names=NAMES + ("keepdim",))
        for name in REDUCTIONS if name != "count_nonzero"
    ]
    cases.append(case("mg.quantile", mg.quantile, dict(input=ft(2, 3), q=0.5, dim=1, keepdim=False),
                      dict(input=NOT_INPUTS, q=[1.5, -0.1, "a", None, const(0.5, 2, 2)], dim=[5, "a", 1.5],
                           keepdim=["yes", 2.5]), names=NAMES + ("q", "keepdim", "quantile")))
    cases.append(case("mg.count_nonzero", mg.count_nonzero, dict(input=ft(2, 3), dim=1),
                      dict(input=NOT_INPUTS, dim=[5, "a", 1.5]), names=NAMES))
    cases += [
        case(f"mg.{name}", getattr(mg, name), dict(input=ft(2, 3), dim=1, keepdim=False, dtype=None),
             dict(input=NOT_INPUTS, dim=[5, "a", 1.5], dtype=BAD_DTYPES), names=NAMES)
        for name in TYPED_REDUCTIONS
    ]
    cases += [
        case(f"mg.{name}", getattr(mg, name), dict(input=ft(2, 3), dim=1, keepdim=False, correction=1),
             dict(input=NOT_INPUTS, dim=[5, "a", 1.5], correction=["a", 1.5j]), names=NAMES + ("correction",))
        for name in MOMENTS
    ]
    cases += [
        case(f"mg.{name}", getattr(mg, name), dict(input=ft(2, 3), dim=1, dtype=None),
             dict(input=NOT_INPUTS, dim=[5, "a", 1.5], dtype=BAD_DTYPES), extra=NOT_IMPLEMENTED, names=NAMES)
        for name in ("softmax", "log_softmax")  # of an integer tensor: NotImplementedError, as PyTorch
    ]
    cases += [
        case(
            f"mg.{name}",
            getattr(mg, name),
            dict(input=ft(2, 3), tensor1=ft(2, 3), tensor2=ft(2, 3), value=0.5),
            dict(input=NOT_INPUTS, tensor1=[ft(4, 5), None, "abc"], tensor2=[ft(4, 5), "abc"], value=["a", None]),
            names=NAMES + ("tensor1", "tensor2", "value"),
        )
        for name in ("addcdiv", "addcmul")
    ]
    matrix = ("input", "mat", "vec", "batch", "size", "shape", "dimension", "beta", "alpha", "tensor", "match")
    cases += [
        case(
            "mg.addmm",
            mg.addmm,
            dict(input=ft(2, 2), mat1=ft(2, 3), mat2=ft(3, 2), beta=1.0, alpha=1.0),
            dict(input=[ft(4, 5), None, "abc"], mat1=[ft(2, 4), ft(3), None, "abc"], mat2=[ft(2, 2), ft(3)],
                 beta=["a", None], alpha=["a", None]),
            names=matrix,
        ),
        case(
            "mg.addmv",
            mg.addmv,
            dict(input=ft(2), mat=ft(2, 3), vec=ft(3), beta=1.0, alpha=1.0),
            dict(input=[ft(5), None], mat=[ft(2, 4), ft(3), "abc"], vec=[ft(4), ft(3, 1), None], beta=["a"],
                 alpha=["a"]),
            names=matrix,
        ),
        case(
            "mg.addmv_",
            lambda input, mat, vec: mg.addmv_(input, mat, vec),
            dict(input=ft(2), mat=ft(2, 3), vec=ft(3)),
            dict(input=[ft(5), None], mat=[ft(2, 4), "abc"], vec=[ft(4), None]),
            names=matrix + IN_PLACE,
        ),
        case(
            "mg.baddbmm",
            mg.baddbmm,
            dict(input=ft(2, 2, 2), batch1=ft(2, 2, 3), batch2=ft(2, 3, 2), beta=1.0, alpha=1.0),
            dict(input=[ft(4, 5, 6), None], batch1=[ft(2, 2, 4), ft(2, 3), "abc"], batch2=[ft(3, 3, 2)],
                 beta=["a"], alpha=["a"]),
            names=matrix,
        ),
        case("mg.bmm", mg.bmm, dict(input=ft(2, 2, 3), mat2=ft(2, 3, 2)),
             dict(input=NOT_INPUTS + [ft(2, 3)], mat2=[ft(2, 4, 2), ft(3, 2), None, "abc"]), names=matrix),
        case("mg.mm", mg.mm, dict(input=ft(2, 3), mat2=ft(3, 2)),
             dict(input=NOT_INPUTS + [ft(3)], mat2=[ft(2, 2), ft(3), None, "abc"]), names=matrix),
        case("mg.mv", mg.mv, dict(input=ft(2, 3), vec=ft(3)),
             dict(input=NOT_INPUTS + [ft(3)], vec=[ft(4), ft(3, 1), None]), names=matrix),
        case("mg.dot", mg.dot, dict(input=ft(3), tensor=ft(3)),
             dict(input=NOT_INPUTS + [ft(2, 3)], tensor=[ft(4), ft(2, 3), ft(3, dtype=mg.float64), None]),
             names=matrix + ("dot", "dtype")),
        case("mg.outer", mg.outer, dict(input=ft(2), vec2=ft(3)),
             dict(input=NOT_INPUTS, vec2=[None, "abc"]), names=matrix + ("vec2",)),
        case("mg.trace", mg.trace, dict(input=ft(2, 3)), dict(input=NOT_INPUTS + [ft(3), ft(2, 3, 4)]),
             extra=NOT_IMPLEMENTED, names=matrix + ("matrix",)),  # trace of bools: as PyTorch
        case(
            "mg.cdist",
            mg.cdist,
            dict(x1=ft(2, 3), x2=ft(4, 3), p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"),
            dict(x1=NOT_INPUTS + [ft(3)], x2=[ft(4, 5), None, "abc"], p=[-1.0, "a", None],
                 compute_mode=["bogus", 3]),
            names=("x1", "x2", "p", "compute_mode", "size", "shape", "dim"),
        ),
        case(
            "mg.tensordot",
            mg.tensordot,
            dict(a=ft(2, 3), b=ft(3, 2), dims=1),
            dict(a=NOT_INPUTS, b=[ft(4, 5), None, "abc"], dims=[-1, "a", 5, 1.5]),
            names=("a", "b", "dims", "size", "shape", "dim"),
        ),
        case(
            "mg.cross",
            mg.cross,
            dict(input=ft(2, 3), other=ft(2, 3), dim=1),
            dict(input=NOT_INPUTS, other=[ft(2, 4), None, "abc"], dim=[0, 5, "a"]),
            names=NAMES + ("cross", "3"),
        ),
        case(
            "mg.dist",
            mg.dist,
            dict(input=ft(2, 3), other=ft(2, 3), p=2),
            dict(input=NOT_INPUTS, other=[ft(4, 5), None, "abc"], p=["a", None]),
            names=NAMES + ("p",),
        ),
    ]
    for name, bound in (("clamp_max", "max"), ("clamp_min", "min"), ("clamp_max_", "max"), ("clamp_min_", "min")):
        cases.append(
            case(f"mg.{name}", _pos(getattr(mg, name)), {"input": ft(2, 3), bound: 1.0},
                 {"input": NOT_INPUTS, bound: ["a", None, object()]}, names=NAMES + (bound,) + IN_PLACE)
        )
    cases += [
        case("mg.clip", mg.clip, dict(input=ft(2, 3), min=0.5, max=2.0),
             dict(input=NOT_INPUTS, min=["a", object()], max=["a"]), names=NAMES + ("min", "max")),
        case("mg.float_power", mg.float_power, dict(input=ft(2, 3), exponent=2.0),
             dict(input=[None, "abc"], exponent=["a", None, ft(4, 5)]), names=NAMES + ("exponent",)),
        case("mg.heaviside", mg.heaviside, dict(input=ft(2, 3), values=ft(2, 3)),
             dict(input=NOT_INPUTS, values=[ft(4, 5), None, "abc"]), names=NAMES + ("values",)),
        case("mg.lerp", mg.lerp, dict(input=ft(2, 3), end=ft(2, 3), weight=0.5),
             dict(input=NOT_INPUTS, end=[ft(4, 5), None, "abc"], weight=["a", None, ft(4, 5)]),
             names=NAMES + ("end", "weight")),
        case("mg.nan_to_num", mg.nan_to_num, dict(input=ft(2, 3), nan=0.0, posinf=None, neginf=None),
             dict(input=NOT_INPUTS, nan=["a", object()], posinf=["a"], neginf=["a"]),
             names=NAMES + ("nan", "posinf", "neginf")),
        case("mg.norm", mg.norm, dict(input=ft(2, 3), p="fro", dim=None, keepdim=False),
             dict(input=NOT_INPUTS, p=["bogus", object()], dim=[5, "a"]), names=NAMES + ("p", "norm")),
        case("mg.polygamma", mg.polygamma, dict(n=1, input=ft(2, 3)),
             dict(n=[-1, 1.5, "a", None], input=NOT_INPUTS), names=NAMES + ("n",)),
    ]
    for name in ("gcd", "lcm", "gcd_", "lcm_"):
        cases.append(
            case(f"mg.{name}", _pos(getattr(mg, name)), dict(input=it([4, 6]), other=it([6, 4])),
                 dict(input=[None, "abc"], other=[it([1, 2, 3]), None, "abc"]), extra=NOT_IMPLEMENTED,
                 names=NAMES + IN_PLACE + (name.rstrip("_"),))
        )
        cases.append(
            case(f"mg.{name}(floats)", _with_ints(getattr(mg, name)), dict(input=it([4, 6])),
                 dict(input=[ft(2)]), extra=NOT_IMPLEMENTED, names=NAMES + IN_PLACE + ("gcd", "lcm"))
        )
    return cases


# ------------------------------------------------------------------------------------------ mg. shape forms


def _list(*values):
    return Fresh(f"list{values}", lambda: [_x(v) for v in values])


def _shape_cases():
    seq = ("tensors", "input", "size", "shape", "dim", "empty", "non-empty", "tensor")
    cases = [
        case(f"mg.{name}", getattr(mg, name), dict(tensors=_list(ft(2, 3), ft(2, 3))),
             dict(tensors=[_list(ft(2, 3), ft(4, 5)), "abc", None, [], _list(ft(2, 3), "abc")]), names=seq)
        for name in ("column_stack", "dstack", "hstack", "vstack")
    ]
    cases += [
        case(f"mg.{name}", getattr(mg, name), dict(tensors=_list(ft(2, 3), ft(2, 3)), dim=0),
             dict(tensors=[_list(ft(2, 3), ft(4, 5)), "abc", None, []], dim=[5, "a", 1.5]), names=seq)
        for name in ("concat", "concatenate")
    ]
    cases += [
        case("mg.broadcast_tensors", lambda a, b: mg.broadcast_tensors(a, b), dict(a=ft(2, 3), b=ft(3)),
             dict(a=[None, "abc"], b=[ft(4, 5), None, "abc"]), names=seq + ("broadcast",)),
        case("mg.broadcast_to", mg.broadcast_to, dict(input=ft(2, 1), size=(2, 3)),
             dict(input=NOT_INPUTS, size=[(4, 5), (3,), "abc", None]), names=NAMES + ("broadcast", "expand")),
        case("mg.broadcast_shapes", lambda a, b: mg.broadcast_shapes(a, b), dict(a=(2, 1), b=(3,)),
             dict(a=[(2, 5), "abc", None], b=[(5, 3), 1.5]), names=("broadcast", "shapes")),
        case("mg.diag", mg.diag, dict(input=ft(2, 3), diagonal=0),
             dict(input=NOT_INPUTS + [ft(2, 3, 4)], diagonal=["a", 1.5, None]), names=NAMES + ("diagonal",)),
        case("mg.is_tensor", mg.is_tensor, dict(obj=ft(2)), {}),
        case("mg.t", mg.t, dict(input=ft(2, 3)), dict(input=NOT_INPUTS + [ft(2, 3, 4)]), names=NAMES),
        case(
            "mg.eye",
            lambda n, m, dtype, device: mg.eye(n, m, dtype=dtype, device=device),
            dict(n=3, m=None, dtype=None, device="cpu"),
            dict(n=[-1, "a", 1.5, None], m=[-1, "a", 1.5], dtype=BAD_DTYPES, device=BAD_DEVICES),
            names=("n", "m", "dtype", "device"),
        ),
        case(
            "mg.logspace",
            lambda start, end, steps, base, dtype: mg.logspace(start, end, steps, base, dtype=dtype),
            dict(start=0.0, end=2.0, steps=3, base=10.0, dtype=None),
            dict(start=["a", None], end=["a", None], steps=[-1, "a", 1.5, None], base=["a", None],
                 dtype=BAD_DTYPES),
            names=("start", "end", "steps", "base", "dtype"),
        ),
        case("mg.masked_select", mg.masked_select, dict(input=ft(2, 3), mask=bools(2, 3)),
             dict(input=NOT_INPUTS, mask=[ft(2, 3), bools(4, 5), None, "abc"]), names=NAMES + ("mask", "bool")),
        case(
            "mg.meshgrid",
            lambda a, b, indexing: mg.meshgrid(a, b, indexing=indexing),
            dict(a=ft(2), b=ft(3), indexing="ij"),
            dict(a=[None, "abc", ft(2, 3)], b=[None, "abc"], indexing=["bogus", None, 3]),
            names=seq + ("indexing", "1d", "1-d"),
        ),
        case(
            "mg.multinomial",
            lambda input, num_samples, replacement: mg.multinomial(input, num_samples, replacement),
            dict(input=ft(3), num_samples=2, replacement=False),
            dict(input=NOT_INPUTS + [const(-1.0, 3), const(0.0, 3), ft(2, 3, 4)], num_samples=[0, -1, 5, "a", 1.5],
                 replacement=["yes", None]),
            names=NAMES + ("num_samples", "replacement", "prob", "categor"),
        ),
        case("mg.narrow", mg.narrow, dict(input=ft(2, 3), dim=1, start=0, length=2),
             dict(input=NOT_INPUTS, dim=[5, "a"], start=[9, "a", 1.5], length=[-1, 9, "a"]),
             names=NAMES + ("start", "length")),
        case(
            "mg.normal",
            lambda mean, std, size: mg.normal(mean, std, size),
            dict(mean=0.0, std=1.0, size=(2, 3)),
            dict(mean=["a", None], std=[-1.0, "a", None], size=[(-1,), ("a",), "abc"]),
            names=("mean", "std", "size"),
        ),
        case("mg.normal(tensors)", lambda mean, std: mg.normal(mean, std), dict(mean=ft(2, 3), std=ft(2, 3)),
             dict(mean=["a", None], std=[const(-1.0, 2, 3), ft(4, 5), "a"]), names=("mean", "std", "size")),
        case("mg.moveaxis", mg.moveaxis, dict(input=ft(2, 3), source=0, destination=1),
             dict(input=NOT_INPUTS, source=[5, "a", (0, 0)], destination=[5, "a"]),
             names=NAMES + ("source", "destination")),
        case("mg.movedim", mg.movedim, dict(input=ft(2, 3), source=0, destination=1),
             dict(input=NOT_INPUTS, source=[5, "a", (0, 0)], destination=[5, "a"]),
             names=NAMES + ("source", "destination")),
        case("mg.repeat_interleave", mg.repeat_interleave, dict(input=ft(2, 3), repeats=2, dim=1),
             dict(input=NOT_INPUTS, repeats=[-1, "a", it([1, 2])], dim=[5, "a"]), names=NAMES + ("repeats",)),
        case("mg.rot90", mg.rot90, dict(input=ft(2, 3), k=1, dims=(0, 1)),
             dict(input=NOT_INPUTS + [ft(3)], k=["a", 1.5, None], dims=[(0, 0), (0, 5), "a", (0,)]),
             names=NAMES + ("k", "dims")),
        case("mg.select", mg.select, dict(input=ft(2, 3), dim=1, index=0),
             dict(input=NOT_INPUTS, dim=[5, "a"], index=[9, -9, "a", 1.5]), names=NAMES + ("index",)),
        case("mg.unique", mg.unique, dict(input=ft(2, 3), sorted=True, return_inverse=False, return_counts=False,
                                          dim=None),
             dict(input=NOT_INPUTS, dim=[5, "a"]), names=NAMES),
        case("mg.bernoulli", lambda input, p: mg.bernoulli(input, p), dict(input=const(0.5, 2, 3), p=None),
             dict(input=NOT_INPUTS + [const(1.5, 2, 3), const(-0.5, 2, 3)], p=[1.5, -0.1, "a", NAN]),
             names=NAMES + ("p", "prob")),
    ]
    cases += [
        case(f"mg.{name}", getattr(mg, name), dict(input=ft(2, 3), axis0=0, axis1=1),
             dict(input=NOT_INPUTS, axis0=[5, "a"], axis1=[-5, None]), names=NAMES + ("axis0", "axis1"))
        for name in ("swapaxes", "swapdims")
    ]
    cases += [
        case(
            f"mg.{name}",
            _like(getattr(mg, name)),
            dict(input=ft(2, 3), dtype=None, device="cpu"),
            dict(input=NOT_TENSORS, dtype=BAD_DTYPES, device=BAD_DEVICES),
            names=("input", "dtype", "device"),
        )
        for name in ("empty_like", "rand_like", "randn_like")
    ]
    cases.append(
        case(
            "mg.randint_like",
            lambda input, low, high, dtype: mg.randint_like(input, low, high, dtype=dtype),
            dict(input=ft(2, 3), low=0, high=5, dtype=None),
            dict(input=NOT_TENSORS, low=[9, "a"], high=[0, -1, "a", None], dtype=BAD_DTYPES),
            names=("input", "low", "high", "dtype", "range"),
        )
    )
    return cases


# ------------------------------------------------------------------------------------------ mg. settings


def _restore_printing(**kwargs):
    try:
        mg.set_printoptions(**kwargs)
    finally:
        mg.set_printoptions(profile="default")


def _with_rng_state(state):
    saved = mg.get_rng_state()
    try:
        mg.set_rng_state(state)
    finally:
        mg.set_rng_state(saved)


def _determinism(mode, warn_only):
    saved = mg.are_deterministic_algorithms_enabled()
    try:
        mg.use_deterministic_algorithms(mode, warn_only=warn_only)
    finally:
        mg.use_deterministic_algorithms(saved)


def _threads(n):
    saved = mg.get_num_threads()
    try:
        mg.set_num_threads(n)
    finally:
        mg.set_num_threads(saved)


def _inference(mode):
    with mg.inference_mode(mode):
        return mg.is_inference_mode_enabled()


def _settings_cases():
    return [
        case("mg.set_num_threads", _threads, dict(n=1), dict(n=[0, -1, "a", 1.5, None]), names=("n", "thread")),
        case("mg.use_deterministic_algorithms", _determinism, dict(mode=False, warn_only=False),
             dict(mode=["yes", None, 2], warn_only=["yes", None]), names=("mode", "warn_only")),
        case("mg.set_printoptions", _restore_printing, dict(precision=4, profile=None),
             dict(profile=["bogus", 3], precision=["a", -1, 1.5]), names=("profile", "precision")),
        case("mg.set_rng_state", _with_rng_state, dict(state=Fresh("rng_state", mg.get_rng_state)),
             dict(state=["abc", None, ft(3), it([1, 2])]), names=("state", "new_state", "rng")),
        case("mg.compile", lambda model: mg.compile(model), dict(model=Fresh("linear", lambda: nn.Linear(2, 2))),
             dict(model=[5, "abc"]), extra=(AssertionError,), names=("model", "callable")),
        case("mg.inference_mode", _inference, dict(mode=True), {}, args_free=("mode",)),  # any mode is a flag
    ]


# ------------------------------------------------------------------------------------------ F.


def prob(*shape):
    """A fresh float tensor of ``shape`` with values in (0, 1)."""
    return const(0.25, *shape)


def _functional_cases():
    image, seq = ft(1, 2, 4, 4), ft(1, 2, 5)
    geometry = ("input", "weight", "bias", "stride", "padding", "dilation", "groups", "output_padding", "channel",
                "size", "kernel", "shape", "expected")
    loss = ("input", "target", "reduction", "size", "shape", "weight", "broadcast")
    not_float = NOT_TENSORS + [it([1, 2])]
    cases = [
        case(
            "F.conv1d",
            F.conv1d,
            dict(input=seq, weight=ft(3, 2, 2), bias=None, stride=1, padding=0, dilation=1, groups=1),
            dict(input=NOT_TENSORS + [ft(5)], weight=[ft(3, 5, 2), ft(3, 2), None, "abc"], bias=[ft(5), "abc"],
                 stride=[0, -1, "a"], padding=[-1, "a", "bogus"], dilation=[0, "a"], groups=[0, 4, "a"]),
            names=geometry,
        ),
        case(
            "F.conv_transpose1d",
            F.conv_transpose1d,
            dict(input=seq, weight=ft(2, 3, 2), bias=None, stride=1, padding=0, output_padding=0, groups=1,
                 dilation=1),
            dict(input=NOT_TENSORS + [ft(5)], weight=[ft(3, 3, 2), ft(2, 3), None, "abc"], bias=[ft(5), "abc"],
                 stride=[0, -1, "a"], padding=[-1, "a"], output_padding=[5, -1, "a"], groups=[0, 4, "a"],
                 dilation=[0, "a"]),
            names=geometry,
        ),
        case(
            "F.conv_transpose2d",
            F.conv_transpose2d,
            dict(input=image, weight=ft(2, 3, 2, 2), bias=None, stride=1, padding=0, output_padding=0, groups=1,
                 dilation=1),
            dict(input=NOT_TENSORS + [ft(2, 5)], weight=[ft(3, 3, 2, 2), ft(2, 3), None, "abc"],
                 bias=[ft(5), "abc"], stride=[0, -1, "a"], padding=[-1, "a"], output_padding=[5, -1, "a"],
                 groups=[0, 4, "a"], dilation=[0, "a"]),
            names=geometry,
        ),
        case(
            "F.group_norm",
            F.group_norm,
            dict(input=ft(2, 4, 3), num_groups=2, weight=None, bias=None, eps=1e-5),
            dict(input=NOT_TENSORS + [ft(4)], num_groups=[3, 0, -1, "a", 1.5], weight=[ft(5), "abc"],
                 bias=[ft(5), "abc"], eps=["a", None]),
            extra=NOT_IMPLEMENTED,  # an integer input, as minigrad's normalizations answer it
            names=geometry + ("num_groups", "eps", "group"),
        ),
        case(
            "F.instance_norm",
            F.instance_norm,
            dict(input=ft(2, 3, 4), running_mean=None, running_var=None, weight=None, bias=None,
                 use_input_stats=True, momentum=0.1, eps=1e-5),
            dict(input=NOT_TENSORS + [ft(3, 1)], running_mean=[ft(5), "abc"], weight=[ft(5), "abc"],
                 bias=[ft(5), "abc"], eps=["a", None]),
            extra=NOT_IMPLEMENTED,  # an integer input, as minigrad's normalizations answer it
            names=geometry + ("running_mean", "eps", "instance"),
        ),
        case(
            "F.pad",
            F.pad,
            dict(input=seq, pad=(1, 1), mode="constant", value=0.0),
            dict(input=NOT_TENSORS, pad=[(1,), (1, 1, 1), "a", None, (1.5, 1), (1, 1, 1, 1, 1, 1, 1, 1)],
                 mode=["bogus", 3], value=["a", object()]),
            extra=NOT_IMPLEMENTED,  # PyTorch's type for an unknown mode
            names=("input", "pad", "mode", "value", "padding", "length", "size", "dimension"),
        ),
        case("F.pad(reflect)", F.pad, dict(input=seq, pad=(1, 1), mode="reflect"),
             dict(pad=[(5, 5), (-9, 1)]), extra=NOT_IMPLEMENTED,
             names=("input", "pad", "padding", "size", "dimension")),
        case(
            "F.interpolate",
            F.interpolate,
            dict(input=seq, size=None, scale_factor=2.0, mode="nearest", align_corners=None),
            dict(input=NOT_TENSORS + [ft(5)], size=[(3, 3), -1, "a"], scale_factor=[-1.0, 0.0, "a", (2.0, 2.0)],
                 mode=["bogus", 3, "bicubic"], align_corners=[True, "yes"]),
            extra=NOT_IMPLEMENTED,  # PyTorch's type for a mode the input's rank does not support
            names=("input", "size", "scale_factor", "mode", "align_corners", "dimension", "expected"),
        ),
        case(
            "F.upsample",
            F.upsample,
            dict(input=seq, size=None, scale_factor=2.0, mode="nearest", align_corners=None),
            dict(input=NOT_TENSORS + [ft(5)], size=[(3, 3), -1, "a"], scale_factor=[-1.0, 0.0, "a"],
                 mode=["bogus", 3]),
            extra=NOT_IMPLEMENTED,  # PyTorch's type for a mode the input's rank does not support
            names=("input", "size", "scale_factor", "mode", "align_corners", "dimension", "expected"),
        ),
        case("F.pixel_shuffle", F.pixel_shuffle, dict(input=ft(1, 4, 2, 2), upscale_factor=2),
             dict(input=NOT_TENSORS + [ft(4, 2)], upscale_factor=[3, 0, -1, "a", 1.5]),
             names=("input", "upscale_factor", "divisible", "dimension", "channel")),
        case("F.pixel_unshuffle", F.pixel_unshuffle, dict(input=ft(1, 1, 4, 4), downscale_factor=2),
             dict(input=NOT_TENSORS + [ft(4, 2)], downscale_factor=[3, 0, -1, "a", 1.5]),
             names=("input", "downscale_factor", "divisible", "dimension", "width", "height")),
        case(
            "F.binary_cross_entropy",
            F.binary_cross_entropy,
            dict(input=prob(2, 3), target=prob(2, 3), weight=None, reduction="mean"),
            dict(input=NOT_TENSORS + [const(1.5, 2, 3), const(-0.5, 2, 3)], target=[ft(4, 5), None, "abc"],
                 weight=[ft(4, 5), "abc"], reduction=BAD_REDUCTIONS),
            extra=NOT_IMPLEMENTED,  # a bool input, as minigrad's losses answer it (PyTorch: RuntimeError)
            names=loss + ("between", "range"),
        ),
        case(
            "F.binary_cross_entropy_with_logits",
            F.binary_cross_entropy_with_logits,
            dict(input=ft(2, 3), target=prob(2, 3), weight=None, reduction="mean", pos_weight=None),
            dict(input=NOT_TENSORS, target=[ft(4, 5), None, "abc"], weight=[ft(4, 5), "abc"],
                 reduction=BAD_REDUCTIONS, pos_weight=[ft(4, 5), "abc"]),
            extra=NOT_IMPLEMENTED,  # bool logits, as minigrad's losses answer them (PyTorch: RuntimeError)
            names=loss + ("pos_weight",),
        ),
        case(
            "F.kl_div",
            F.kl_div,
            dict(input=ft(2, 3), target=prob(2, 3), reduction="mean", log_target=False),
            dict(input=NOT_TENSORS, target=[ft(4, 5), None, "abc"], reduction=BAD_REDUCTIONS),
            names=loss,
        ),
    ]
    for name in ("l1_loss", "soft_margin_loss"):
        cases.append(
            case(f"F.{name}", getattr(F, name), dict(input=ft(2, 3), target=ft(2, 3), reduction="mean"),
                 dict(input=NOT_TENSORS, target=[ft(4, 5), None, "abc"], reduction=BAD_REDUCTIONS), names=loss)
        )
    cases += [
        case("F.smooth_l1_loss", F.smooth_l1_loss, dict(input=ft(2, 3), target=ft(2, 3), reduction="mean", beta=1.0),
             dict(input=NOT_TENSORS, target=[ft(4, 5), None, "abc"], reduction=BAD_REDUCTIONS,
                  beta=[-1.0, "a", None]), names=loss + ("beta",)),
        case("F.huber_loss", F.huber_loss, dict(input=ft(2, 3), target=ft(2, 3), reduction="mean", delta=1.0),
             dict(input=NOT_TENSORS, target=[ft(4, 5), None, "abc"], reduction=BAD_REDUCTIONS,
                  delta=[-1.0, 0.0, "a", None]), names=loss + ("delta",)),
        case(
            "F.gaussian_nll_loss",
            F.gaussian_nll_loss,
            dict(input=ft(2, 3), target=ft(2, 3), var=ft(2, 3), full=False, eps=1e-6, reduction="mean"),
            dict(input=NOT_TENSORS, target=[ft(4, 5), None, "abc"], var=[const(-1.0, 2, 3), ft(4, 5), "abc"],
                 eps=["a"], reduction=BAD_REDUCTIONS),
            names=loss + ("var", "eps"),
        ),
        case(
            "F.poisson_nll_loss",
            F.poisson_nll_loss,
            dict(input=ft(2, 3), target=ft(2, 3), log_input=True, full=False, eps=1e-8, reduction="mean"),
            dict(input=NOT_TENSORS, target=[ft(4, 5), None, "abc"], eps=["a"], reduction=BAD_REDUCTIONS),
            names=loss + ("eps",),
        ),
    ]
    for name in ("margin_ranking_loss", "cosine_embedding_loss"):
        target_shape = (2,) if name == "cosine_embedding_loss" else (2, 3)
        cases.append(
            case(
                f"F.{name}",
                getattr(F, name),
                dict(input1=ft(2, 3), input2=ft(2, 3), target=const(1.0, *target_shape), margin=0.0,
                     reduction="mean"),
                dict(input1=NOT_TENSORS, input2=[ft(4, 5), None, "abc"], target=[ft(4, 5), None, "abc"],
                     margin=["a", None], reduction=BAD_REDUCTIONS),
                names=loss + ("input1", "input2", "margin"),
            )
        )
    unary = ("input", "dtype")
    cases += [
        case(f"F.{name}", getattr(F, name), dict(input=ft(2, 3)), dict(input=not_float), extra=NOT_IMPLEMENTED,
             names=unary)
        for name in ("logsigmoid", "hardsigmoid", "hardswish", "selu", "mish")
    ]
    cases += [  # PyTorch computes these on integer tensors too (softsign of bools: NotImplementedError, as PyTorch)
        case(f"F.{name}", getattr(F, name), dict(input=ft(2, 3)), dict(input=NOT_TENSORS), extra=NOT_IMPLEMENTED,
             names=unary + IN_PLACE)
        for name in ("softsign", "tanhshrink", "relu_")
    ]
    cases += [
        case("F.softplus", F.softplus, dict(input=ft(2, 3), beta=1.0, threshold=20.0),
             dict(input=not_float, beta=NOT_NUMBERS, threshold=NOT_NUMBERS), extra=NOT_IMPLEMENTED,
             names=unary + ("beta", "threshold")),
        case("F.celu", F.celu, dict(input=ft(2, 3), alpha=1.0), dict(input=not_float, alpha=NOT_NUMBERS + [0.0]),
             extra=NOT_IMPLEMENTED, names=unary + ("alpha",)),
        case("F.elu_", F.elu_, dict(input=ft(2, 3), alpha=1.0), dict(input=not_float, alpha=NOT_NUMBERS),
             extra=NOT_IMPLEMENTED, names=unary + IN_PLACE + ("alpha",)),
        case("F.leaky_relu_", F.leaky_relu_, dict(input=ft(2, 3), negative_slope=0.01),
             dict(input=not_float, negative_slope=NOT_NUMBERS), extra=NOT_IMPLEMENTED,
             names=unary + IN_PLACE + ("negative_slope",)),
        case("F.hardtanh_", F.hardtanh_, dict(input=ft(2, 3), min_val=-1.0, max_val=1.0),
             dict(input=NOT_TENSORS, min_val=["a", None, 2.0], max_val=["a", None]), extra=NOT_IMPLEMENTED,
             names=unary + IN_PLACE + ("min_val", "max_val")),
    ]
    cases += [
        case(f"F.{name}", getattr(F, name), dict(input=ft(2, 3), threshold=1.0, value=0.0),
             dict(input=NOT_TENSORS, threshold=NOT_NUMBERS, value=NOT_NUMBERS), extra=NOT_IMPLEMENTED,
             names=unary + IN_PLACE + ("threshold", "value"))
        for name in ("threshold", "threshold_")
    ]
    cases += [
        case(f"F.{name}", getattr(F, name), dict(input=ft(2, 3), lambd=0.5),
             dict(input=not_float, lambd=NOT_NUMBERS + ([-1.0] if name == "softshrink" else [])),
             extra=NOT_IMPLEMENTED, names=unary + ("lambd", "lambda"))
        for name in ("hardshrink", "softshrink")
    ]
    cases += [
        case("F.glu", F.glu, dict(input=ft(2, 4), dim=-1),
             dict(input=not_float + [ft(2, 3), ft()], dim=BAD_DIMS), extra=NOT_IMPLEMENTED,
             names=unary + ("dim", "even", "halv")),
        case("F.prelu", F.prelu, dict(input=ft(2, 3), weight=ft(1)),
             dict(input=not_float, weight=[ft(5), ft(2, 2), None, "abc"]), extra=NOT_IMPLEMENTED,
             names=unary + ("weight", "channel", "parameter")),
        case("F.one_hot", F.one_hot, dict(tensor=it([0, 2]), num_classes=3),
             dict(tensor=NOT_TENSORS + [ft(2), it([-1, 0])], num_classes=[1, -2, "a", 1.5, None]),
             names=("tensor", "num_classes", "class", "index")),
        case("F.normalize", F.normalize, dict(input=ft(2, 3), p=2.0, dim=1, eps=1e-12),
             dict(input=not_float, p=["a", None], dim=BAD_DIMS, eps=["a", None]), extra=NOT_IMPLEMENTED,
             names=unary + ("p", "dim", "eps")),
        case("F.cosine_similarity", F.cosine_similarity, dict(x1=ft(2, 3), x2=ft(2, 3), dim=1, eps=1e-8),
             dict(x1=NOT_TENSORS, x2=[ft(4, 5), None, "abc"], dim=BAD_DIMS, eps=["a", None]),
             names=("x1", "x2", "dim", "eps", "size", "broadcast", "shape")),
        case("F.pairwise_distance", F.pairwise_distance, dict(x1=ft(2, 3), x2=ft(2, 3), p=2.0, eps=1e-6,
                                                               keepdim=False),
             dict(x1=NOT_TENSORS, x2=[ft(4, 5), None, "abc"], p=["a", None], eps=["a", None],
                  keepdim=["yes", None]),
             names=("x1", "x2", "p", "eps", "keepdim", "size", "broadcast", "shape")),
    ]
    return cases


# ------------------------------------------------------------------------------------------ nn.


def _build_call(cls, x, *args, **kwargs):
    """``cls(*args, **kwargs)`` called on a fresh ``x`` (or on each of a tuple of inputs)."""
    module = cls(*args, **kwargs)
    inputs = x if isinstance(x, tuple) else (x,)
    return module(*[_x(v) for v in inputs])


def _container_cases():
    return [
        case("nn.Buffer", lambda data, persistent: nn.Buffer(data, persistent=persistent),
             dict(data=ft(2, 3), persistent=True), dict(data=["abc", object(), [1.0, "a"]]),
             names=("data", "buffer", "tensor")),
        case("nn.ModuleDict", nn.ModuleDict, dict(modules=Fresh("{'a': Linear}", lambda: {"a": nn.Linear(2, 2)})),
             dict(modules=[5, {"a": 5}, [("a", 5)], ["abc"]]), names=("modules", "module", "moduledict")),
        case("nn.ParameterDict", nn.ParameterDict,
             dict(parameters=Fresh("{'a': Parameter}", lambda: {"a": nn.Parameter(mg.ones(2))})),
             dict(parameters=[5, ["abc"]]), names=("parameters", "parameterdict")),
        case("nn.ParameterList", nn.ParameterList,
             dict(values=Fresh("[Parameter]", lambda: [nn.Parameter(mg.ones(2))])),
             dict(values=[5, object()]), names=("values", "parameterlist", "iterable")),
    ]


def _layer_cases():
    seq = ft(1, 2, 5)
    geometry = ("in_channels", "out_channels", "kernel_size", "stride", "padding", "dilation", "groups",
                "output_padding", "padding_mode", "channel", "kernel", "size", "divisible")
    cases = []
    for cls, x, size in ((nn.Conv1d, seq, 2), (nn.ConvTranspose1d, seq, 2), (nn.ConvTranspose2d, ft(1, 2, 4, 4),
                                                                            2)):
        transposed = cls is not nn.Conv1d
        bad = dict(in_channels=[-1, 0, "a", 3], out_channels=[-1, "a"], kernel_size=[0, -1, "a"] + ([] if transposed
                                                                                                   else [9]),
                   stride=[0, -1, "a"], padding=[-1, "a"], groups=[0, 4, "a"], padding_mode=["bogus", 3],
                   dilation=[0, "a"])
        valid = dict(in_channels=2, out_channels=3, kernel_size=size, stride=1, padding=0, dilation=1, groups=1,
                     padding_mode="zeros")
        if transposed:
            valid["output_padding"] = 0
            bad["output_padding"] = [5, "a"]
        cases.append(
            case(f"nn.{cls.__name__}", lambda cls=cls, x=x, **kw: _build_call(cls, x, **kw), valid, bad,
                 names=geometry)
        )
    cases.append(
        case("nn.GroupNorm", lambda num_groups, num_channels, eps, affine: _build_call(
            nn.GroupNorm, ft(2, 4, 3), num_groups, num_channels, eps=eps, affine=affine),
            dict(num_groups=2, num_channels=4, eps=1e-5, affine=True),
            dict(num_groups=[3, 0, -1, "a"], num_channels=[5, -1, "a"], eps=["a"]),
            names=("num_groups", "num_channels", "eps", "channel", "group", "divisible"))
    )
    for cls, x in ((nn.InstanceNorm1d, ft(2, 3, 4)), (nn.InstanceNorm2d, ft(2, 3, 4, 4)),
                   (nn.InstanceNorm3d, ft(2, 3, 2, 2, 2))):
        cases.append(
            case(f"nn.{cls.__name__}", lambda num_features, eps, affine, x, cls=cls: cls(
                num_features, eps=eps, affine=affine)(_x(x)),
                dict(num_features=3, eps=1e-5, affine=True, x=x),
                dict(num_features=[-1, "a", 1.5, 5], eps=["a"], x=[ft(2), None, "abc"]),
                names=("num_features", "eps", "input", "channel", "dimension", "expected", "size"))
        )
    cases.append(
        case("nn.PReLU", lambda num_parameters, init: _build_call(nn.PReLU, ft(2, 3), num_parameters, init),
             dict(num_parameters=3, init=0.25), dict(num_parameters=[5, -1, "a", 1.5], init=["a", None]),
             names=("num_parameters", "init", "channel", "parameter", "weight"))
    )
    return cases


def _padding_cases():
    cases = []
    inputs = {1: ft(1, 2, 5), 2: ft(1, 2, 5, 5), 3: ft(1, 1, 3, 3, 3)}
    names = ("padding", "pad", "input", "size", "dimension", "length", "value")
    for kind in ("Zero", "Constant", "Reflection", "Replication", "Circular"):
        for n, x in inputs.items():
            cls = getattr(nn, f"{kind}Pad{n}d")
            bad = dict(padding=["a", None, 1.5, (1,) * (2 * n + 1)], x=[None, "abc"] + ([ft(5)] if n > 1 else []))
            if kind in ("Reflection", "Circular"):
                bad["padding"].append(9)
            valid = dict(padding=1, x=x)
            if kind == "Constant":
                valid["value"] = 0.5
                bad["value"] = ["a", object()]
                call = lambda padding, value, x, cls=cls: cls(padding, value)(_x(x))  # noqa: E731
            else:
                call = lambda padding, x, cls=cls: cls(padding)(_x(x))  # noqa: E731
            # PyTorch's type where the input's rank does not allow a mode other than constant
            # padding=1000 on 3 dims would ask for 30 GiB: hypothesis leaves the 3-d modules' padding alone
            cases.append(case(f"nn.{cls.__name__}", call, valid, bad, extra=NOT_IMPLEMENTED, names=names,
                              args_free=("padding",) if n == 3 else ()))
    return cases


def _resampling_cases():
    names = ("size", "scale_factor", "mode", "align_corners", "input", "dimension", "expected")
    return [
        case("nn.Upsample", lambda size, scale_factor, mode: _build_call(nn.Upsample, ft(1, 2, 4), size,
                                                                          scale_factor, mode),
             dict(size=None, scale_factor=2.0, mode="nearest"),
             dict(size=[(3, 3), -1, "a"], scale_factor=[-1.0, "a"], mode=["bogus", 3]), extra=NOT_IMPLEMENTED,
             names=names),
        *[
            case(f"nn.{cls.__name__}", lambda size, scale_factor, cls=cls: _build_call(cls, ft(1, 1, 2, 2), size,
                                                                                     scale_factor),
                 dict(size=None, scale_factor=2.0), dict(size=[(3, 3), -1, "a"], scale_factor=[-1.0, "a"]),
                 names=names)
            for cls in (nn.UpsamplingNearest2d, nn.UpsamplingBilinear2d)
        ],
        case("nn.PixelShuffle", lambda upscale_factor: _build_call(nn.PixelShuffle, ft(1, 4, 2, 2), upscale_factor),
             dict(upscale_factor=2), dict(upscale_factor=[3, 0, -1, "a"]),
             names=("upscale_factor", "divisible", "channel")),
        case("nn.PixelUnshuffle",
             lambda downscale_factor: _build_call(nn.PixelUnshuffle, ft(1, 1, 4, 4), downscale_factor),
             dict(downscale_factor=2), dict(downscale_factor=[3, 0, -1, "a"]),
             names=("downscale_factor", "divisible", "width", "height")),
    ]


def _loss_module_cases():
    names = ("reduction", "input", "target", "size", "shape", "broadcast", "dtype")
    pair = (ft(2, 3), ft(2, 3))
    simple = [
        (nn.BCELoss, (prob(2, 3), prob(2, 3)), {}, {}),
        (nn.BCEWithLogitsLoss, pair, {}, {}),
        (nn.KLDivLoss, (ft(2, 3), prob(2, 3)), {}, {}),
        (nn.L1Loss, pair, {}, {}),
        (nn.SmoothL1Loss, pair, {"beta": 1.0}, {"beta": [-1.0, "a"]}),
        (nn.HuberLoss, pair, {"delta": 1.0}, {"delta": [-1.0, 0.0, "a"]}),
        (nn.GaussianNLLLoss, (ft(2, 3), ft(2, 3), ft(2, 3)), {"eps": 1e-6}, {"eps": ["a"]}),
        (nn.PoissonNLLLoss, pair, {"eps": 1e-8}, {"eps": ["a"]}),
        (nn.SoftMarginLoss, pair, {}, {}),
        (nn.MarginRankingLoss, (ft(2, 3), ft(2, 3), const(1.0, 2, 3)), {"margin": 0.0}, {"margin": ["a", None]}),
        (nn.CosineEmbeddingLoss, (ft(2, 3), ft(2, 3), const(1.0, 2)), {"margin": 0.0}, {"margin": ["a", None]}),
    ]
    cases = []
    for cls, inputs, extra_valid, extra_bad in simple:
        cases.append(
            case(f"nn.{cls.__name__}",
                 lambda reduction, first, cls=cls, inputs=inputs, **kw: cls(reduction=reduction, **kw)(
                     _x(first), *[_x(v) for v in inputs[1:]]),
                 dict(reduction="mean", first=inputs[0], **extra_valid),
                 dict(reduction=BAD_REDUCTIONS, first=NOT_TENSORS + [ft(4, 5)], **extra_bad),
                 extra=NOT_IMPLEMENTED if cls in (nn.BCELoss, nn.BCEWithLogitsLoss) else (),  # bool inputs
                 names=names + tuple(extra_bad) + ("first",))
        )
    return cases


ACTIVATION_X = ft(2, 3)


def _activation_module_cases():
    names = ("input", "dtype", "dim")
    cases = [
        case(f"nn.{cls.__name__}", lambda x, cls=cls: cls()(x), dict(x=ft(2, 3, 4)),
             dict(x=NOT_TENSORS + ([ft(2)] if cls is nn.Softmax2d else [])), extra=NOT_IMPLEMENTED, names=names)
        for cls in (nn.Softmax2d, nn.SELU, nn.Hardsigmoid, nn.Hardswish, nn.LogSigmoid, nn.Mish, nn.Softsign,
                    nn.Tanhshrink)
    ]
    cases += [
        case("nn.GLU", lambda dim: nn.GLU(dim)(_x(ft(2, 4))), dict(dim=-1), dict(dim=BAD_DIMS + [0 * 1 + 5]),
             names=("dim", "even", "halv")),
        case("nn.CELU", lambda alpha: nn.CELU(alpha)(_x(ACTIVATION_X)), dict(alpha=1.0),
             dict(alpha=NOT_NUMBERS + [0.0]), names=("alpha", "celu")),
        case("nn.Hardshrink", lambda lambd: nn.Hardshrink(lambd)(_x(ACTIVATION_X)), dict(lambd=0.5),
             dict(lambd=NOT_NUMBERS), names=("lambd", "lambda")),
        case("nn.Softshrink", lambda lambd: nn.Softshrink(lambd)(_x(ACTIVATION_X)), dict(lambd=0.5),
             dict(lambd=NOT_NUMBERS + [-1.0]), names=("lambd", "lambda")),
        case("nn.Softplus", lambda beta, threshold: nn.Softplus(beta, threshold)(_x(ACTIVATION_X)),
             dict(beta=1.0, threshold=20.0), dict(beta=NOT_NUMBERS, threshold=NOT_NUMBERS),
             names=("beta", "threshold")),
        case("nn.Threshold", lambda threshold, value: nn.Threshold(threshold, value)(_x(ACTIVATION_X)),
             dict(threshold=1.0, value=0.0), dict(threshold=NOT_NUMBERS, value=NOT_NUMBERS),
             names=("threshold", "value")),
        case("nn.CosineSimilarity", lambda dim, eps: nn.CosineSimilarity(dim, eps)(_x(ft(2, 3)), _x(ft(2, 3))),
             dict(dim=1, eps=1e-8), dict(dim=BAD_DIMS, eps=["a", None]), names=("dim", "eps")),
        case("nn.PairwiseDistance",
             lambda p, eps, keepdim: nn.PairwiseDistance(p, eps, keepdim)(_x(ft(2, 3)), _x(ft(2, 3))),
             dict(p=2.0, eps=1e-6, keepdim=False), dict(p=["a", None], eps=["a", None], keepdim=["yes", None]),
             names=("p", "eps", "keepdim")),
    ]
    return cases


def _decoder_layer(**kw):
    return nn.TransformerDecoderLayer(4, 2, dim_feedforward=8, dropout=0.0, **kw)


def _transformer_cases():
    names = ("d_model", "nhead", "dim_feedforward", "dropout", "activation", "num_layers", "decoder_layer",
             "embed_dim", "num_heads", "divisible", "probability", "layer_norm_eps", "tgt", "memory", "input")
    return [
        case(
            "nn.TransformerDecoderLayer",
            lambda d_model, nhead, dim_feedforward, dropout, activation: _build_call(
                nn.TransformerDecoderLayer, (ft(3, 2, 4), ft(5, 2, 4)), d_model, nhead, dim_feedforward, dropout,
                activation),
            dict(d_model=4, nhead=2, dim_feedforward=8, dropout=0.0, activation="relu"),
            dict(d_model=[-1, "a", 5], nhead=[3, 0, -1, "a"], dim_feedforward=[-1, "a"],
                 dropout=[1.5, -0.1, "a"], activation=["bogus", 3]),
            extra=(AssertionError,),
            names=names,
        ),
        case(
            "nn.TransformerDecoderLayer.forward",
            lambda tgt, memory: _decoder_layer()(tgt, memory),
            dict(tgt=ft(3, 2, 4), memory=ft(5, 2, 4)),
            dict(tgt=[ft(3, 2, 5), None, "abc"], memory=[ft(5, 3, 4), ft(5, 2, 5), None, "abc"]),
            extra=(AssertionError,),
            names=names + ("batch", "shape", "size", "query", "key", "value", "dimension"),
        ),
        case(
            "nn.TransformerDecoder",
            lambda decoder_layer, num_layers: _build_call(nn.TransformerDecoder, (ft(3, 2, 4), ft(5, 2, 4)),
                                                          decoder_layer, num_layers),
            dict(decoder_layer=Fresh("decoder_layer", _decoder_layer), num_layers=2),
            dict(decoder_layer=[None, 5, "abc"], num_layers=["a", 1.5, None]),
            names=names + ("module",),
        ),
        case(
            "nn.Transformer",
            lambda d_model, nhead, num_encoder_layers, num_decoder_layers, activation: _build_call(
                nn.Transformer, (ft(3, 2, 4), ft(5, 2, 4)), d_model, nhead, num_encoder_layers, num_decoder_layers,
                8, 0.0, activation),
            dict(d_model=4, nhead=2, num_encoder_layers=1, num_decoder_layers=1, activation="relu"),
            dict(d_model=[-1, "a", 5], nhead=[3, 0, "a"], num_encoder_layers=["a", 1.5],
                 num_decoder_layers=["a", 1.5], activation=["bogus", 3]),
            extra=(AssertionError,),
            names=names + ("num_encoder_layers", "num_decoder_layers", "transformer"),
        ),
    ]


# ------------------------------------------------------------------------------------------ optim.LBFGS


def _lbfgs_step(params, lr, max_iter, history_size, line_search_fn, tolerance_grad):
    optimizer = mg.optim.LBFGS(params, lr=lr, max_iter=max_iter, history_size=history_size,
                               line_search_fn=line_search_fn, tolerance_grad=tolerance_grad)
    weights = [p for group in optimizer.param_groups for p in group["params"]]

    def closure():
        optimizer.zero_grad()
        loss = sum(((w - 1.0) ** 2).sum() for w in weights)
        loss.backward()
        return loss

    return optimizer.step(closure)


def _lbfgs_cases():
    params = Fresh("params", lambda: [nn.Parameter(mg.zeros(3))])
    return [
        case(
            "optim.LBFGS",
            _lbfgs_step,
            dict(params=params, lr=1.0, max_iter=5, history_size=3, line_search_fn=None, tolerance_grad=1e-7),
            dict(params=[None, 5, "abc", []], lr=[-1.0, "a", None], max_iter=["a"],
                 history_size=[0, -1, "a"], line_search_fn=["bogus", 3], tolerance_grad=["a", None]),
            names=("params", "lr", "max_iter", "history_size", "line_search_fn", "tolerance_grad",
                   "learning rate", "optimiz", "lbfgs", "strong_wolfe"),
        ),
        case("optim.LBFGS(step)", lambda closure: mg.optim.LBFGS([nn.Parameter(mg.zeros(2))]).step(closure),
             dict(closure=lambda: mg.tensor(1.0)), dict(closure=[None, 5, "abc"]),
             names=("closure", "lbfgs", "callable")),
    ]


# ------------------------------------------------------------------------------------------ distributions


def _distribution_cases():
    names = ("loc", "scale", "probs", "logits", "low", "high", "concentration", "rate", "concentration1",
             "concentration0", "value", "sample_shape", "constraint", "support", "parameter", "shape", "size",
             "must", "expected", "broadcast", "dimension")
    bad_positive = [const(-1.0, 3), const(0.0, 3), "abc", None, NAN]
    return [
        case("distributions.Normal", lambda loc, scale: D.Normal(loc, scale, validate_args=True).sample(),
             dict(loc=ft(3), scale=ft(3)),
             dict(loc=["abc", None, const(NAN, 3)], scale=bad_positive + [ft(4, 5)]), names=names),
        case("distributions.Normal(log_prob)", lambda value: D.Normal(mg.zeros(3), mg.ones(3)).log_prob(value),
             dict(value=ft(3)), dict(value=[ft(4, 5), None, "abc"]), names=names),
        case("distributions.Normal(sample)", lambda sample_shape: D.Normal(mg.zeros(3), mg.ones(3)).sample(
            sample_shape), dict(sample_shape=(2,)), dict(sample_shape=[(-1,), "abc", ("a",), 1.5]), names=names),
        case("distributions.Uniform", lambda low, high: D.Uniform(low, high, validate_args=True).sample(),
             dict(low=const(0.0, 3), high=const(1.0, 3)),
             dict(low=[const(2.0, 3), "abc", None], high=[const(-1.0, 3), ft(4, 5), "abc"]), names=names),
        case("distributions.Uniform(log_prob)",
             lambda value: D.Uniform(mg.zeros(3), mg.ones(3), validate_args=True).log_prob(value),
             dict(value=const(0.5, 3)), dict(value=[const(2.0, 3), ft(4, 5), None, "abc"]), names=names),
        case("distributions.Gamma", lambda concentration, rate: D.Gamma(concentration, rate,
                                                                        validate_args=True).sample(),
             dict(concentration=ft(3), rate=ft(3)),
             dict(concentration=bad_positive, rate=bad_positive + [ft(4, 5)]), names=names),
        case("distributions.Beta", lambda concentration1, concentration0: D.Beta(concentration1, concentration0,
                                                                                 validate_args=True).sample(),
             dict(concentration1=ft(3), concentration0=ft(3)),
             dict(concentration1=bad_positive, concentration0=bad_positive + [ft(4, 5)]), names=names),
        case("distributions.Bernoulli", lambda probs, logits: D.Bernoulli(probs, logits, validate_args=True).sample(),
             dict(probs=prob(3), logits=None),
             dict(probs=[const(1.5, 3), const(-0.5, 3), "abc", 1.5], logits=[ft(3), "abc"]), names=names),
        case("distributions.Bernoulli(log_prob)",
             lambda value: D.Bernoulli(prob(3).make(), validate_args=True).log_prob(value),
             dict(value=const(1.0, 3)), dict(value=[const(0.5, 3), ft(4, 5), None, "abc"]), names=names),
        case("distributions.Categorical",
             lambda probs, logits: D.Categorical(probs, logits, validate_args=True).sample(),
             dict(probs=prob(2, 3), logits=None),
             dict(probs=[Fresh("[1, -1, 0.5]", lambda: mg.tensor([1.0, -1.0, 0.5])), const(0.0, 3), ft(), "abc", 1.5],
                  logits=[ft(3), "abc"]), names=names),
        case("distributions.Categorical(log_prob)",
             lambda value: D.Categorical(prob(3).make(), validate_args=True).log_prob(value),
             dict(value=it([0, 2])), dict(value=[it([5]), it([-1]), const(0.5, 2), None, "abc"]), names=names),
        case("distributions.kl_divergence", D.kl_divergence,
             dict(p=Fresh("Normal", lambda: D.Normal(mg.zeros(3), mg.ones(3))),
                  q=Fresh("Normal", lambda: D.Normal(mg.ones(3), mg.ones(3)))),
             dict(p=[None, 5, "abc"], q=[None, 5, Fresh("Categorical", lambda: D.Categorical(mg.ones(3)))]),
             extra=NOT_IMPLEMENTED, names=("p", "q", "kl", "distribution")),
    ]


NEW_CASES = (
    _math_cases()
    + _shape_cases()
    + _settings_cases()
    + _functional_cases()
    + _container_cases()
    + _layer_cases()
    + _padding_cases()
    + _resampling_cases()
    + _loss_module_cases()
    + _activation_module_cases()
    + _transformer_cases()
    + _lbfgs_cases()
    + _distribution_cases()
)


# ------------------------------------------------------------------------------------------ checks


# Bugs in code older than this part that need more than an argument check; a case listed here fails strictly.
KNOWN_BUGS = {}
KNOWN_FUZZ_BUGS = {}


(
    test_valid_arguments_work,
    test_wrong_argument_raises_a_documented_error,
    test_odd_values_never_leak_undocumented_errors,
) = table_tests(NEW_CASES, KNOWN_BUGS, KNOWN_FUZZ_BUGS)
