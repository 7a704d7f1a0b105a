"""Cases of the nodes that record in-place writes (``minigrad/inplace.py``).

Each program writes into a non-leaf tensor in place and returns something
that depends on both the old history and the written value, so gradcheck
and the PyTorch oracle see every path: writes through a basic-index view
(``CopySlices``; its backward's ``ZeroRegion`` through a double backward),
``copy_`` (``CopyFrom``) and advanced-index assignment (``IndexPut``).
"""

from __future__ import annotations

from hypothesis import strategies as st

from tests.minigrad.ops.op_cases import case

# Two inputs of one shape: rows >= 3 so slices and row indices have room.
_pair = st.tuples(st.integers(3, 4), st.integers(1, 3)).map(lambda s: (s, s))


def _write_rows(lib, functional, x, y):
    t = x * 1.0
    t[1:] = y[1:] * y[1:]
    t[0, ::2].mul_(y[0, ::2])
    return t * x


def _write_through_transpose(lib, functional, x, y):
    t = x * 1.0 + 0.5
    t.transpose(0, 1)[:, 0].copy_(y[0] * 3.0)
    return t * t


def _double_backward_through_write(lib, functional, x, y):
    t = x * 1.0
    t[1:] = y[1:] * x[1:]
    (g,) = lib.autograd.grad((t * t * x).sum(), x, create_graph=True)
    return g


def _copy_into(lib, functional, x, y):
    t = x * 2.0
    t.copy_(y.sum(0))  # broadcast over the rows
    return t * x


def _index_put(lib, functional, x, y):
    t = x * 1.0
    t[lib.tensor([0, 2])] = y[1] * y[1]
    t[t > 10.0] = 0.0  # a boolean mask (no element is that large: only the recording is exercised)
    return t * x


case("copy_slices", _write_rows, _pair, name="copy_slices_rows")
case("copy_slices", _write_through_transpose, _pair, name="copy_slices_transposed_view")
case("zero_region", _double_backward_through_write, _pair)
case("copy_from", _copy_into, _pair)
case("index_put", _index_put, _pair)
