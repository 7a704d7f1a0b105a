"""Op cases for the neural-network ops of ``minigrad.ops.REGISTRY`` (``minigrad.ops.nn``).

Each case is one small program ``fn(lib, F, *inputs, params=...)`` written
once against the API minigrad shares with PyTorch (``F`` is the library's
``nn.functional``); the runners check it by gradcheck and against PyTorch
(see ``op_cases.py``). Integer inputs (class targets, embedding indices) and
constant class weights are built inside the program from drawn ``params``
on the device of the float inputs.

Programs named ``*_double_backward`` return first-order gradients taken with
``create_graph=True``; checking those checks each op's backward as a
function, i.e. second-order gradients.
"""

# ruff: noqa: N803  (programs take the functional module as ``F``, as in ``import ... as F``)
from __future__ import annotations

import warnings

from hypothesis import strategies as st

from tests.minigrad.ops.op_cases import case

# -- helpers used inside programs ------------------------------------------------------------


def const(lib, like, values, float_dtype=False):
    """A constant tensor (indices, class weights) on ``like``'s device."""
    if float_dtype:
        return lib.tensor(values, dtype=like.dtype, device=like.device)
    return lib.tensor(values, device=like.device)


def grads_of(lib, loss_fn, inputs):
    """d loss / d inputs with ``create_graph=True`` (grad mode forced on: gradcheck may run under no_grad)."""
    with lib.enable_grad():
        return lib.autograd.grad(loss_fn(), inputs, create_graph=True)


# -- shape strategies ---------------------------------------------------------------------------

side = st.integers(1, 3)


@st.composite
def linear_shapes(draw, min_lead=0, max_lead=2, bias=True):
    """(x, weight[, bias]) shapes: x (*lead, in), weight (out, in), bias (out,)."""
    lead = tuple(draw(st.lists(side, min_size=min_lead, max_size=max_lead)))
    n_in, n_out = draw(st.integers(1, 4)), draw(st.integers(1, 4))
    return (lead + (n_in,), (n_out, n_in)) + (((n_out,),) if bias else ())


def same_shape(count, min_dims=1, max_dims=3):
    """``count`` copies of one shape."""
    return st.lists(side, min_size=min_dims, max_size=max_dims).map(lambda s: (tuple(s),) * count)


@st.composite
def class_scores(draw, spatial=True):
    """Shape of class scores: (N, C) or, with ``spatial``, maybe (N, C, d1) or (N, C, d1, d2)."""
    extra = tuple(draw(st.lists(st.integers(1, 2), max_size=2))) if spatial else ()
    return ((draw(st.integers(1, 3)), draw(st.integers(2, 4))) + extra,)


@st.composite
def layer_norm_shapes(draw, count):
    """``count`` shapes: x (*lead, *normalized), then normalized (for weight and bias)."""
    lead = tuple(draw(st.lists(side, max_size=2)))
    normalized = tuple(draw(st.lists(st.integers(2, 4), min_size=1, max_size=2)))
    return (lead + normalized,) + (normalized,) * (count - 1)


@st.composite
def conv_shapes(draw, bias=True, batched=True):
    """x (N, C, H, W) (or (C, H, W)), weight (O, C / groups, kh, kw)[, bias (O,)]; groups 1 or 2."""
    groups = draw(st.integers(1, 2))
    in_per_group, out_per_group = draw(st.integers(1, 2)), draw(st.integers(1, 2))
    kh, kw = draw(side), draw(side)
    h, w = draw(st.integers(kh, 5)), draw(st.integers(kw, 5))
    image = (groups * in_per_group, h, w)
    x = (draw(st.integers(1, 2)),) + image if batched else image
    weight = (groups * out_per_group, in_per_group, kh, kw)
    return (x, weight) + (((weight[0],),) if bias else ())


def image_shapes(max_side=5):
    """One image batch shape (N, C, H, W)."""
    return st.tuples(st.integers(1, 2), st.integers(1, 2), st.integers(1, max_side), st.integers(1, max_side))


# -- params strategies (functions of the drawn shapes) ---------------------------------------------


def dim_of(drawn):
    ndim = len(drawn[0])
    return st.integers(-ndim, ndim - 1)


reductions = st.sampled_from(["mean", "sum", "none"])


@st.composite
def _class_targets(draw, scores_shape, allow_ignore=True, weighted=None):
    """Targets, class weights (or None), ignore_index and reduction for ``scores_shape``.

    Some targets may equal ignore_index (-100, or a real class), but never all
    of them: the mean over no targets is NaN.
    """
    n, classes = scores_shape[:2]
    target_shape = (n,) + scores_shape[2:]
    size = 1
    for s in target_shape:
        size *= s
    ignore_index = draw(st.sampled_from([-100, *range(classes)])) if allow_ignore else -100
    choices = list(range(classes)) + ([ignore_index] if allow_ignore and ignore_index < 0 else [])
    flat = draw(st.lists(st.sampled_from(choices), min_size=size, max_size=size)
                .filter(lambda t: any(v != ignore_index for v in t)))
    weighted = draw(st.booleans()) if weighted is None else weighted
    weight = draw(st.lists(st.floats(0.25, 2.0), min_size=classes, max_size=classes)) if weighted else None
    return {
        "target": _nest(flat, target_shape),
        "weight": weight,
        "ignore_index": ignore_index,
        "reduction": draw(reductions),
        "label_smoothing": draw(st.sampled_from([0.0, 0.1, 0.5])),
    }


def _nest(flat, shape):
    """A flat list as nested lists of ``shape``."""
    if len(shape) == 1:
        return list(flat)
    step = len(flat) // shape[0]
    return [_nest(flat[i * step : (i + 1) * step], shape[1:]) for i in range(shape[0])]


def class_targets(drawn):
    return _class_targets(drawn[0])


def embedding_params(drawn):
    """Indices of shape (k,) or (j, 2) into the weight's rows (repeats likely); a padding_idx or None."""
    rows = drawn[0][0]
    index_lists = st.lists(st.integers(0, rows - 1), min_size=1, max_size=4)
    indices = st.one_of(index_lists, st.integers(1, 2).flatmap(lambda j: st.lists(
        st.lists(st.integers(0, rows - 1), min_size=2, max_size=2), min_size=j, max_size=j)))
    padding = st.one_of(st.none(), st.integers(-rows, rows - 1))
    return st.fixed_dictionaries({"indices": indices, "padding_idx": padding})


def _out_size(size, kernel, stride, padding, dilation):
    return (size + 2 * padding - dilation * (kernel - 1) - 1) // stride + 1


def _spelled(pair):
    """An int when both entries agree (PyTorch accepts both spellings), else the tuple."""
    return pair[0] if pair[0] == pair[1] else pair


@st.composite
def _geometry(draw, size, kernel, allow_same=False):
    """stride, padding, dilation for an input of spatial ``size``; the output is never empty.

    The padding is drawn from at least what the dilated kernel needs to fit.
    """
    if allow_same and draw(st.booleans()):
        dilation = (draw(side), draw(side))
        fits = all(n >= d * (k - 1) + 1 for n, k, d in zip(size, kernel, dilation))
        padding = draw(st.sampled_from(["same", "valid"])) if fits else "same"
        return {"stride": 1, "padding": padding, "dilation": _spelled(dilation)}
    stride = (draw(st.integers(1, 2)), draw(st.integers(1, 2)))
    dilation = (draw(st.integers(1, 2)), draw(st.integers(1, 2)))
    padding = tuple(
        draw(st.integers(needed, needed + 1))
        for n, k, d in zip(size, kernel, dilation)
        for needed in [max(0, -(-(d * (k - 1) + 1 - n) // 2))]
    )
    return {"stride": _spelled(stride), "padding": _spelled(padding), "dilation": _spelled(dilation)}


def conv_geometry(drawn):
    return _geometry(drawn[0][-2:], drawn[1][-2:], allow_same=True)


def unfold_geometry(drawn):
    return st.tuples(side, side).flatmap(
        lambda kernel: _geometry(drawn[0][-2:], kernel).map(lambda g: dict(g, kernel_size=_spelled(kernel)))
    )


@st.composite
def _fold_geometry(draw, cols_shape):
    """Kernel, stride, padding, dilation and an output_size giving L = cols_shape[-1] blocks."""
    blocks = cols_shape[-1]
    kernels = [(kh, kw) for kh in (1, 2) for kw in (1, 2) if cols_shape[-2] % (kh * kw) == 0]
    kernel = draw(st.sampled_from(kernels))
    rows = draw(st.sampled_from([r for r in range(1, blocks + 1) if blocks % r == 0]))
    geometry = {"output_size": [], "stride": [], "padding": [], "dilation": []}
    for count, k in zip((rows, blocks // rows), kernel):
        s, d = draw(st.integers(1, 2)), draw(st.integers(1, 2))
        span = s * (count - 1) + d * (k - 1) + 1  # the padded length ``count`` blocks need
        p = draw(st.integers(0, min(1, (span - 1) // 2)))
        # Up to s - 1 more rows fit no further block.
        geometry["output_size"].append(span - 2 * p + draw(st.integers(0, s - 1)))
        for key, value in (("stride", s), ("padding", p), ("dilation", d)):
            geometry[key].append(value)
    spelled = {key: _spelled(tuple(value)) for key, value in geometry.items()}
    return dict(spelled, output_size=tuple(geometry["output_size"]), kernel_size=_spelled(kernel))


def fold_geometry(drawn):
    return _fold_geometry(drawn[0])


# -- linear ---------------------------------------------------------------------------------------

case("linear", lambda lib, F, x, w, b: F.linear(x, w, b), linear_shapes())
case("linear", lambda lib, F, x, w: F.linear(x, w), linear_shapes(bias=False), name="linear_no_bias")
case("linear", lambda lib, F, x, w, b: grads_of(lib, lambda: (F.linear(x, w, b) ** 2).sum(), (x, w, b)),
     linear_shapes(min_lead=1), name="linear_double_backward")

# -- activations ----------------------------------------------------------------------------------

case("gelu", lambda lib, F, x: F.gelu(x), same_shape(1), low=-4.0, high=4.0)
case("gelu", lambda lib, F, x: F.gelu(x, approximate="tanh"), same_shape(1), low=-4.0, high=4.0,
     name="gelu_tanh")
case("gelu_grad", lambda lib, F, x, w: grads_of(lib, lambda: (F.gelu(x) * w).sum(), x)[0],
     same_shape(2), low=-4.0, high=4.0, name="gelu_double_backward")
case("gelu_grad", lambda lib, F, x, w: grads_of(lib, lambda: (F.gelu(x, approximate="tanh") * w).sum(), x)[0],
     same_shape(2), low=-4.0, high=4.0, name="gelu_tanh_double_backward")
case("relu", lambda lib, F, x: F.relu(x), same_shape(1), away_from=(0.0,), name="relu_functional")
case("tanh", lambda lib, F, x: F.tanh(x) + F.sigmoid(x), same_shape(1), name="tanh_sigmoid_functional")

# -- softmax --------------------------------------------------------------------------------------

case("softmax", lambda lib, F, x, params: F.softmax(x, dim=params), same_shape(1),
     low=-3.0, high=3.0, extra={"params": dim_of})
# exp(1000) overflows float64: only a stable softmax gets these right.
case("softmax", lambda lib, F, x: F.softmax(x + 1000.0, -1) + F.softmax(x - 1000.0, 0), same_shape(1),
     name="softmax_shifted")
case("softmax", lambda lib, F, x, w, params: grads_of(lib, lambda: (F.softmax(x, params) * w).sum(), x)[0],
     same_shape(2), extra={"params": dim_of}, name="softmax_double_backward")
case("log_softmax", lambda lib, F, x, params: F.log_softmax(x, params), same_shape(1),
     low=-3.0, high=3.0, extra={"params": dim_of})
case("log_softmax", lambda lib, F, x: F.log_softmax(x + 1000.0, -1) + F.log_softmax(x - 1000.0, 0),
     same_shape(1), name="log_softmax_shifted")
case("log_softmax",
     lambda lib, F, x, w, params: grads_of(lib, lambda: (F.log_softmax(x, params) * w).sum(), x)[0],
     same_shape(2), extra={"params": dim_of}, name="log_softmax_double_backward")

# -- losses -----------------------------------------------------------------------------------------


def _nll(lib, F, x, params):
    weight = None if params["weight"] is None else const(lib, x, params["weight"], float_dtype=True)
    return F.nll_loss(x, const(lib, x, params["target"]), weight, ignore_index=params["ignore_index"],
                      reduction=params["reduction"])


def _cross_entropy(lib, F, x, params):
    weight = None if params["weight"] is None else const(lib, x, params["weight"], float_dtype=True)
    return F.cross_entropy(x, const(lib, x, params["target"]), weight, ignore_index=params["ignore_index"],
                           reduction=params["reduction"], label_smoothing=params["label_smoothing"])


case("nll_loss", _nll, class_scores(), extra={"params": class_targets})
case("nll_loss", lambda lib, F, x, params: F.nll_loss(x, const(lib, x, params), reduction="none"),
     st.integers(2, 4).map(lambda c: ((c,),)), extra={"params": lambda s: st.integers(0, s[0][0] - 1)},
     name="nll_loss_unbatched")
case("nll_loss", lambda lib, F, x, params: F.nll_loss(F.log_softmax(x, 1), const(lib, x, params["target"])),
     class_scores(), extra={"params": class_targets}, name="nll_loss_of_log_softmax")
case("nll_loss", lambda lib, F, x, w, params: grads_of(lib, lambda: _nll(lib, F, F.log_softmax(x, 1) * w,
                                                                         params).sum(), x)[0],
     class_scores().map(lambda s: s * 2), extra={"params": lambda s: class_targets(s[:1])},
     name="nll_loss_double_backward")
case("nll_loss", _cross_entropy, class_scores(), low=-4.0, high=4.0, extra={"params": class_targets},
     name="cross_entropy")
case("nll_loss",
     lambda lib, F, x, params: F.cross_entropy(x, const(lib, x, params), label_smoothing=0.2),
     st.integers(2, 4).map(lambda c: ((c,),)), extra={"params": lambda s: st.integers(0, s[0][0] - 1)},
     name="cross_entropy_unbatched")
case("log_softmax",
     lambda lib, F, x, t, params: F.cross_entropy(x, F.softmax(t, 1), reduction=params[0],
                                                  label_smoothing=params[1]),
     class_scores().map(lambda s: s * 2),
     extra={"params": lambda s: st.tuples(reductions, st.sampled_from([0.0, 0.3]))},
     name="cross_entropy_probabilities")
case("log_softmax",
     lambda lib, F, x, t, params: F.cross_entropy(x, t, const(lib, x, params[1], float_dtype=True),
                                                  reduction=params[0]),
     class_scores().map(lambda s: s * 2),
     extra={"params": lambda s: st.tuples(reductions, st.lists(st.floats(0.25, 2.0), min_size=s[0][1],
                                                               max_size=s[0][1]))},
     name="cross_entropy_probabilities_weighted")
case("mse_loss", lambda lib, F, x, t, params: F.mse_loss(x, t, reduction=params), same_shape(2),
     extra={"params": lambda s: reductions})
case("mse_loss", lambda lib, F, x, t: grads_of(lib, lambda: F.mse_loss(x * x, t), (x, t)), same_shape(2),
     name="mse_loss_double_backward")

# -- normalization --------------------------------------------------------------------------------
# distinct values keep the variance away from 0, where 1 / sqrt(var + eps) is steep.

case("layer_norm", lambda lib, F, x, w, b: F.layer_norm(x, w.shape, w, b), layer_norm_shapes(3),
     distinct=True)
case("layer_norm", lambda lib, F, x: F.layer_norm(x, x.shape[-1:], eps=1e-3), layer_norm_shapes(1),
     distinct=True, name="layer_norm_plain")
case("layer_norm", lambda lib, F, x, w: F.layer_norm(x, w.shape, weight=w), layer_norm_shapes(2),
     distinct=True, name="layer_norm_weight_only")
case("layer_norm",
     lambda lib, F, x, w, b: grads_of(lib, lambda: (F.layer_norm(x, w.shape, w, b) ** 3).sum(), (x, w, b)),
     layer_norm_shapes(3), distinct=True, name="layer_norm_double_backward")

# -- embedding and dropout ---------------------------------------------------------------------------


def _embedding(lib, F, w, params):
    """The lookup with the padding positions zeroed.

    The padding row is still looked up but gets no gradient (PyTorch's
    semantics), which finite differences would see as a wrong gradient; zeroing
    those outputs removes them from both sides of the check.
    """
    indices = const(lib, w, params["indices"])
    out = F.embedding(indices, w, padding_idx=params["padding_idx"])
    if params["padding_idx"] is None:
        return out
    return out * (indices != params["padding_idx"] % w.shape[0]).unsqueeze(-1)


case("embedding", _embedding, st.tuples(st.integers(1, 4), side).map(lambda s: (s,)),
     extra={"params": embedding_params})
case("embedding", lambda lib, F, w, params: grads_of(lib, lambda: (_embedding(lib, F, w, params) ** 3).sum(),
                                                     w)[0],
     st.tuples(st.integers(1, 4), side).map(lambda s: (s,)), extra={"params": embedding_params},
     name="embedding_double_backward")


def _dropout_invariant(lib, F, x):
    """Equal to x whatever the mask: dropped entries are restored from x, kept ones unscaled.

    Its gradient (1 everywhere) is only right if dropout's backward uses the
    forward's mask and its 1 / (1 - p) scale.
    """
    y = F.dropout(x, p=0.25)
    return y * 0.75 + lib.where(y == 0, x, 0.0)


case("dropout", _dropout_invariant, same_shape(1), away_from=(0.0,))
case("dropout", lambda lib, F, x: F.dropout(x, p=1.0) + F.dropout(x, 0.5, training=False) * 2,
     same_shape(1), name="dropout_all_or_nothing")

# -- convolution ---------------------------------------------------------------------------------------


def _conv(lib, F, x, w, b, params):
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "Using padding='same'")  # PyTorch's note on its own speed
        return F.conv2d(x, w, b, groups=x.shape[-3] // w.shape[1], **params)


case("conv2d", _conv, conv_shapes(), extra={"params": conv_geometry})
case("conv2d", lambda lib, F, x, w, params: _conv(lib, F, x, w, None, params), conv_shapes(bias=False),
     extra={"params": conv_geometry}, name="conv2d_no_bias")
case("conv2d", _conv, conv_shapes(batched=False), extra={"params": conv_geometry}, name="conv2d_unbatched")
case("conv2d",
     lambda lib, F, x, w, b, params: grads_of(lib, lambda: (_conv(lib, F, x, w, b, params) ** 2).sum(),
                                              (x, w, b)),
     conv_shapes(), extra={"params": conv_geometry}, name="conv2d_double_backward")
case("unfold", lambda lib, F, x, params: F.unfold(x, **params), image_shapes().map(lambda s: (s,)),
     extra={"params": unfold_geometry})
case("fold", lambda lib, F, cols, params: F.fold(cols, **params),
     st.tuples(st.integers(1, 2), st.sampled_from([4, 8]), st.integers(1, 6)).map(lambda s: (s,)),
     extra={"params": fold_geometry})
