"""Op cases for ``F.interpolate`` and ``F.pixel_shuffle``/``F.pixel_unshuffle`` (``minigrad.nn.upsampling``).

Interpolation gathers input positions with the ``index`` op and weighs
them; the pixel shuffles are reshapes and a permutation. Sizes are drawn
as explicit sizes or integer scale factors: with a fractional scale factor
that keeps a size or doubles it, PyTorch's own backward of 1-D nearest and
bicubic interpolation disagrees with its forward (its gradcheck fails), so
those are compared in ``tests/minigrad/nn/test_upsampling.py`` by values and
by gradcheck instead.
"""

# ruff: noqa: N803  (programs take the functional module as ``F``, as in ``import ... as F``)
from __future__ import annotations

from hypothesis import strategies as st

from tests.minigrad.ops.op_cases import case

RANK = {"nearest": None, "nearest-exact": None, "linear": 3, "bilinear": 4, "bicubic": 4, "trilinear": 5}


@st.composite
def interpolate_example(draw, mode):
    rank = RANK[mode] or draw(st.integers(3, 5))
    side = {3: 4, 4: 3, 5: 2}[rank]  # gradcheck's cost grows with the product of the sides
    shape = (draw(st.integers(1, 2)), draw(st.integers(1, 2))) + tuple(
        draw(st.lists(st.integers(1, side), min_size=rank - 2, max_size=rank - 2)))
    return (shape,)


def interpolate_params(mode):
    def params(drawn):
        dims = len(drawn[0]) - 2
        largest = {1: 6, 2: 5, 3: 3}[dims]
        size = st.lists(st.integers(1, largest), min_size=dims, max_size=dims).map(lambda s: {"size": tuple(s)})
        scale = st.integers(1, 3 if dims < 3 else 2).map(lambda s: {"scale_factor": float(s)})
        corners = st.sampled_from([None, False, True]) if mode in ("linear", "bilinear", "bicubic", "trilinear") \
            else st.just(None)
        return st.tuples(st.one_of(size, scale), corners).map(lambda t: {**t[0], "align_corners": t[1]})
    return params


for _mode in RANK:
    case("index", lambda lib, F, x, params, mode=_mode: F.interpolate(x, mode=mode, **params),
         interpolate_example(_mode), extra={"params": interpolate_params(_mode)}, name=f"interpolate_{_mode}")


@st.composite
def shuffle_shapes(draw):
    """(*, C * r * r, H, W) with up to one leading dimension, r in 1..3 (passed as the params)."""
    lead = tuple(draw(st.lists(st.integers(1, 2), max_size=2)))
    return (lead + (draw(st.integers(1, 2)) * 4, draw(st.integers(1, 3)), draw(st.integers(1, 3))),)


case("permute", lambda lib, F, x, params: F.pixel_shuffle(x, 2), shuffle_shapes(),
     extra={"params": lambda drawn: st.just({})}, name="pixel_shuffle")
case("permute", lambda lib, F, x, params: F.pixel_unshuffle(F.pixel_shuffle(x, 2) * 2, 2), shuffle_shapes(),
     extra={"params": lambda drawn: st.just({})}, name="pixel_unshuffle")
