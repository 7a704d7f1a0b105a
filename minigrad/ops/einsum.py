"""``einsum``: sums of products of tensors, described by Einstein summation subscripts.

``einsum("bij,bjk->bik", a, b)`` is a batched matrix product: every letter
names a dimension, letters shared by operands are multiplied along, letters
missing from the output (after ``->``) are summed over. As in PyTorch:

* ``...`` stands for the dimensions no letter names (broadcast across
  operands, aligned on the right); an output without ``...`` sums them;
* without ``->`` the output is ``...`` followed by the letters that appear
  exactly once, in alphabetical order (upper case first);
* a size-1 dimension broadcasts against its letter's size in other operands;
* a letter repeated within one operand takes a diagonal (``"ii->i"``).

``einsum`` rewrites the equation into letters only (``...`` becomes unused
letters) and broadcasts size-1 dimensions with ``expand`` (whose backward
sums them), so the ``Einsum`` op sees one size per letter. Its backward is
again one ``Einsum`` per input: the output gradient contracted with the
other operands, plus two kinds of constants for what a contraction cannot
express directly: a vector of ones for a letter only that operand has (the
gradient is broadcast along it) and an identity tensor for a letter it
repeats (the gradient lies on the diagonal).
"""

from __future__ import annotations

import string

from minigrad import backend, views
from minigrad.function import FunctionNode
from minigrad.ops._util import expect_tensor
from minigrad.tensor import Tensor

LETTERS = string.ascii_letters  # the 52 subscripts NumPy and PyTorch accept


class Einsum(FunctionNode):
    """``xp.einsum(inputs -> output, *operands)`` for an equation in letters only, one size per letter.

    Args:
        inputs: one subscript string per operand (letters only, one per dimension).
        output: the output's subscripts (distinct letters that appear in ``inputs``).

    Raises:
        RuntimeError: the operands' dtypes differ (as in PyTorch).
    """

    def __init__(self, inputs, output):
        self.inputs = tuple(inputs)
        self.output = output

    def forward(self, *arrays):
        dtype = arrays[0].dtype
        for k, a in enumerate(arrays[1:], 1):
            if a.dtype != dtype:
                raise RuntimeError(
                    f"einsum(): operand {k} has dtype {a.dtype} but operand 0 has {dtype}; "
                    "all operands need one dtype (convert with .to(dtype))"
                )
        self.retain_inputs(tuple(range(len(arrays))))
        equation = ",".join(self.inputs) + "->" + self.output
        out = self.xp.einsum(equation, *arrays, optimize=len(arrays) > 1)
        for a in arrays:  # a single operand's einsum may be a view of it ("ij->ji", "ii->i")
            if views.is_view_array(out, a):
                return out.copy()
        return out

    def backward(self, g):
        operands = self.saved_inputs
        return tuple(
            self._operand_grad(k, g, operands) if need else None for k, need in enumerate(self.needs_input_grad)
        )

    def _operand_grad(self, k, g, operands):
        """The gradient of operand ``k``: one ``Einsum`` of ``g``, the other operands and constants."""
        xp = self.xp
        target = self.inputs[k]
        terms = [self.output] + [s for j, s in enumerate(self.inputs) if j != k]
        tensors = [g] + [t for j, t in enumerate(operands) if j != k]
        elsewhere = set("".join(terms))
        used = set("".join(self.inputs)) | elsewhere
        fresh = (c for c in LETTERS if c not in used)
        sizes = dict(zip(target, operands[k].shape))
        out = []
        for position, letter in enumerate(target):
            if letter not in target[:position]:
                out.append(letter)
                if letter not in elsewhere:  # only this operand has it: broadcast the gradient along it
                    terms.append(letter)
                    tensors.append(_const(xp.ones(sizes[letter], dtype=g.dtype)))
                continue
            try:  # a repeat: the gradient lies on the diagonal of (letter, new letter)
                new = next(fresh)
            except StopIteration:
                raise RuntimeError(
                    "einsum(): too many subscripts to express the gradient (52 letters at most)"
                ) from None
            out.append(new)
            terms.append(letter + new)
            tensors.append(_const(xp.eye(sizes[letter], dtype=g.dtype)))
        return Einsum(terms, "".join(out))(*tensors)


def _const(array) -> Tensor:
    return Tensor._make(array, False, None, 0)


# -- parsing --------------------------------------------------------------------------------------------


def _parse_term(term: str, ndim: int, k: int):
    """(letters before ``...``, letters after, has ellipsis) of one operand's subscripts, checked."""
    head, dots, tail = term.partition("...")
    if "." in head or "." in tail:
        raise RuntimeError(f"einsum(): operand {k} has a '.' that is not part of one '...' ellipsis")
    for c in head + tail:
        if c not in LETTERS:
            raise RuntimeError(f"einsum(): invalid subscript {c!r} for operand {k}; subscripts must be in [a-zA-Z]")
    named = len(head) + len(tail)
    if (dots and named > ndim) or (not dots and named != ndim):
        raise RuntimeError(
            f"einsum(): operand {k} has {ndim} dimension(s) but its subscripts {term!r} name {named}"
            + ("" if dots else " and no ellipsis was given")
        )
    return head, tail, bool(dots)


def parse(equation: str, shapes):
    """Rewrite ``equation`` for operands of ``shapes`` into letters only.

    Returns:
        ``(inputs, output, sizes)``: a subscript string per operand, the output
        subscripts, and each letter's size (the broadcast of its sizes).

    Raises:
        TypeError: ``equation`` is not a string.
        RuntimeError: the equation does not fit the operands (PyTorch's cases).
    """
    if not isinstance(equation, str):
        raise TypeError(f"einsum(): the equation must be a str, got {type(equation).__name__}")
    equation = equation.replace(" ", "")
    lhs, arrow, rhs = equation.partition("->")
    if "->" in rhs:
        raise RuntimeError("einsum(): the equation has more than one '->'")
    terms = lhs.split(",")
    if len(terms) != len(shapes):
        raise RuntimeError(
            f"einsum(): the equation names {len(terms)} operand(s) but {len(shapes)} were given"
        )
    parsed = [_parse_term(term, len(shape), k) for k, (term, shape) in enumerate(zip(terms, shapes))]
    used = set(lhs + rhs)
    spare = [c for c in LETTERS if c not in used]
    ellipsis_dims = max((len(shape) - len(h) - len(t) for (h, t, dots), shape in zip(parsed, shapes) if dots),
                        default=0)
    if ellipsis_dims > len(spare):
        raise RuntimeError("einsum(): too many dimensions under '...' (52 subscripts at most in all)")
    ellipsis = "".join(spare[:ellipsis_dims])
    inputs = []
    for (head, tail, dots), shape in zip(parsed, shapes):
        own = len(shape) - len(head) - len(tail) if dots else 0
        inputs.append(head + ellipsis[ellipsis_dims - own :] + tail)
    sizes = _letter_sizes(inputs, shapes)
    if arrow:
        output = _explicit_output(rhs, ellipsis)
    else:
        counts = {c: "".join(inputs).count(c) for c in sizes}
        output = ellipsis + "".join(sorted(c for c in sizes if counts[c] == 1 and c not in ellipsis))
    for c in output:
        if c not in sizes:
            raise RuntimeError(f"einsum(): output subscript {c} does not appear in the equation for any operand")
    return inputs, output, sizes


def _explicit_output(rhs: str, ellipsis: str) -> str:
    head, dots, tail = rhs.partition("...")
    if "." in head or "." in tail:
        raise RuntimeError("einsum(): the output has a '.' that is not part of one '...' ellipsis")
    output = head + (ellipsis if dots else "") + tail
    for i, c in enumerate(head + tail):
        if c not in LETTERS:
            raise RuntimeError(f"einsum(): invalid output subscript {c!r}; subscripts must be in [a-zA-Z]")
        if c in (head + tail)[:i]:
            raise RuntimeError(f"einsum(): output subscript {c} appears more than once in the output")
    return output


def _letter_sizes(inputs, shapes) -> dict:
    """Each letter's size; size 1 broadcasts, a letter repeated in one operand must match exactly."""
    sizes = {}
    for k, (subs, shape) in enumerate(zip(inputs, shapes)):
        own = {}
        for c, n in zip(subs, shape):
            if c in own and own[c] != n:
                raise RuntimeError(
                    f"einsum(): subscript {c} is repeated for operand {k} but its sizes differ ({own[c]} and {n})"
                )
            own[c] = n
        for c, n in own.items():
            seen = sizes.get(c)
            if seen is None or seen == 1:
                sizes[c] = n
            elif n != 1 and n != seen:
                raise RuntimeError(
                    f"einsum(): subscript {c} has size {n} for operand {k}, which does not broadcast with "
                    f"the size {seen} seen before"
                )
    return sizes


def einsum(equation, *operands):
    """Sum of products of ``operands`` as the Einstein-summation ``equation`` says (see the module docstring).

    Operands are Tensors of one dtype, given as arguments or as one list
    (``einsum("ij,jk", [a, b])``). The sublist form of PyTorch and NumPy is
    accepted too: ``einsum(a, [0, 1], b, [1, 2], [0, 2])`` means
    ``einsum("ab,bc->ac", a, b)``; subscripts are ints in [0, 52) or ``...``,
    and the output sublist is optional. Differentiable in every operand.

    Raises:
        TypeError: ``equation`` is not a str or an operand is not a Tensor;
            a sublist is not a list of ints and ``...``.
        ValueError: no operands; a sublist subscript is outside [0, 52).
        RuntimeError: the equation does not fit the operands (sizes, dimension
            counts, unknown or repeated output subscripts), or the dtypes differ.
    """
    if not isinstance(equation, str) and operands:
        equation, operands = _from_sublists((equation, *operands))
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    if not operands:
        raise ValueError("einsum(): give the equation and at least one operand")
    for k, t in enumerate(operands):
        expect_tensor(t, "einsum", f"operands[{k}]")
    inputs, output, sizes = parse(equation, [t.shape for t in operands])
    backend.get_array_module(*(t.array for t in operands))
    operands = [_broadcast(t, subs, sizes) for t, subs in zip(operands, inputs)]
    return Einsum(inputs, output)(*operands)


def _from_sublists(arguments):
    """``(equation, operands)`` from the sublist form ``op0, sub0, op1, sub1, ..., [out]``."""
    pairs, output = arguments, None
    if len(arguments) % 2 == 1:
        pairs, output = arguments[:-1], arguments[-1]
    operands = pairs[0::2]
    inputs = [_sublist_letters(sub, f"sublist {k}") for k, sub in enumerate(pairs[1::2])]
    equation = ",".join(inputs)
    if output is not None:
        equation += "->" + _sublist_letters(output, "the output sublist")
    return equation, operands


def _sublist_letters(sublist, what) -> str:
    """The subscript letters of a sublist: 0-25 are A-Z, 26-51 are a-z, ``...`` stays."""
    if not isinstance(sublist, (list, tuple)):
        raise TypeError(f"einsum(): {what} must be a list of ints and ..., got {type(sublist).__name__}")
    letters = []
    for item in sublist:
        if item is Ellipsis:
            letters.append("...")
            continue
        if not isinstance(item, int) or isinstance(item, bool):
            raise TypeError(f"einsum(): {what} holds {item!r}; subscripts are ints in [0, 52) or ...")
        if not 0 <= item < 52:
            raise ValueError(f"einsum(): subscript {item} in {what} is outside [0, 52)")
        letters.append(chr(ord("A") + item) if item < 26 else chr(ord("a") + item - 26))
    return "".join(letters)


def _broadcast(t, subs, sizes):
    """``t`` with its size-1 dimensions expanded to their letter's size (a no-op when none is)."""
    target = tuple(sizes[c] for c in subs)
    return t if target == t.shape else t.expand(*target)


OPS = {"einsum": Einsum}
