"""Constant padding: the one op of ``F.pad`` (reflect, replicate and circular padding gather with ``Index``).

``ConstantPad`` widens (or, with negative amounts, crops) each dimension,
filling new positions with a constant. Its gradient is the same op with the
amounts negated and the value 0: the padded positions are cropped away and
the cropped ones come back as zeros, so gradients of every order follow.
Arguments are validated by ``minigrad.nn.functional.pad``.
"""

from __future__ import annotations

from minigrad.function import FunctionNode


def _regions(shape, pads):
    """(source, destination) slices of the values kept: ``pads`` is one (before, after) pair per dimension."""
    source, destination = [], []
    for size, (before, after) in zip(shape, pads):
        start, stop = max(-before, 0), size - max(-after, 0)
        source.append(slice(start, stop))
        destination.append(slice(max(before, 0), max(before, 0) + stop - start))
    return tuple(source), tuple(destination)


class ConstantPad(FunctionNode):
    """x with ``pads[d] = (before, after)`` positions added (negative: removed) at the ends of dimension d,
    the new ones set to ``value``"""

    def __init__(self, pads, value=0):
        self.pads = tuple(pads)
        self.value = value

    def forward(self, x):
        shape = tuple(size + before + after for size, (before, after) in zip(x.shape, self.pads))
        out = self.xp.full(shape, self.value, dtype=x.dtype)
        source, destination = _regions(x.shape, self.pads)
        out[destination] = x[source]
        return out

    def backward(self, g):
        return ConstantPad(tuple((-before, -after) for before, after in self.pads), 0)(g)


OPS = {"constant_pad": ConstantPad}
