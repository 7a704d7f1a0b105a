"""The bilinear map of two inputs: ``bilinear`` (``torch.nn.functional.bilinear``) and the layer ``Bilinear``.

``y[..., o] = sum_ij x1[..., i] * weight[o, i, j] * x2[..., j] + bias[o]``,
one ``einsum`` (so its gradients in all four tensors, of every order, come
from that registered op). Names, signatures, defaults, checks (in PyTorch's
order) and the parameters' initialization mirror PyTorch's.
"""

from __future__ import annotations

import math

from minigrad.nn import init
from minigrad.nn.layers import _check_size, _empty_parameter
from minigrad.nn.module import Module
from minigrad.ops._util import expect_tensor
from minigrad.ops.einsum import einsum
from minigrad.tensor import Tensor

__all__ = ["bilinear", "Bilinear"]


def _size(t: Tensor, dim: int, name: str) -> int:
    """``t.shape[dim]``, or PyTorch's IndexError naming ``name`` when ``t`` has no such dimension."""
    if not -t.ndim <= dim < t.ndim:
        raise IndexError(
            f"bilinear(): {name} of shape {t.shape} has no dimension {dim} "
            f"(expected {name} of shape {_EXPECTED[name]})"
        )
    return t.shape[dim]


_EXPECTED = {
    "input1": "(*, in1_features)", "input2": "(*, in2_features)",
    "weight": "(out_features, in1_features, in2_features)", "bias": "(out_features,)",
}


def bilinear(input1, input2, weight, bias=None):
    """``input1^T weight[o] input2 + bias[o]`` for every output feature ``o``.

    Args:
        input1: Tensor (*, in1_features).
        input2: Tensor (*, in2_features), the same leading shape as ``input1`` (no broadcasting).
        weight: Tensor (out_features, in1_features, in2_features).
        bias: optional Tensor (out_features,).

    Returns:
        Tensor (*, out_features) of the common dtype (integer dtypes allowed, as in PyTorch).

    Raises:
        TypeError: an argument is not a Tensor.
        IndexError (PyTorch's type): an input is 0-d, ``weight`` has fewer than 3
            dimensions, or ``bias`` is 0-d.
        RuntimeError (PyTorch's type): the dtypes differ, the inputs' numbers of dimensions or
            leading sizes differ, a feature size does not match ``weight`` (names both),
            ``bias`` does not have out_features entries, ``weight`` has more than 3
            dimensions, or in1_features or in2_features is 0.
        NotImplementedError (PyTorch's type): bool tensors.
    """
    for name, value in (("input1", input1), ("input2", input2), ("weight", weight)):
        expect_tensor(value, "bilinear", name)
    named = [("input1", input1), ("input2", input2), ("weight", weight)]
    if bias is not None:
        expect_tensor(bias, "bilinear", "bias")
        named.append(("bias", bias))
    if len({t.dtype for _, t in named}) > 1:
        got = ", ".join(f"{name}: {t.dtype}" for name, t in named)
        raise RuntimeError(f"bilinear(): all tensors must have the same dtype, got {got} (convert with .to(dtype))")
    if input1.ndim != input2.ndim:
        raise RuntimeError(
            f"bilinear(): input1 of shape {input1.shape} and input2 of shape {input2.shape} must have the same "
            "number of dimensions"
        )
    for dim in range(input1.ndim - 1):
        if input1.shape[dim] != input2.shape[dim]:
            raise RuntimeError(
                f"bilinear(): input1 of shape {input1.shape} and input2 of shape {input2.shape} differ in "
                f"batch dimension {dim}; all but the last dimension must match (no broadcasting)"
            )
    in1, in2 = _size(input1, -1, "input1"), _size(input2, -1, "input2")
    for name, size, dim in (("input1", in1, 1), ("input2", in2, 2)):
        if size != _size(weight, dim, "weight"):
            raise RuntimeError(
                f"bilinear(): {name} of shape {(input1 if dim == 1 else input2).shape} ends in {size} features "
                f"but weight of shape {weight.shape} expects {weight.shape[dim]}"
            )
    if bias is not None and _size(bias, 0, "bias") != weight.shape[0]:
        raise RuntimeError(
            f"bilinear(): bias of shape {bias.shape} must have out_features = {weight.shape[0]} entries "
            f"(weight of shape {weight.shape})"
        )
    if weight.ndim != 3:
        raise RuntimeError(f"bilinear(): weight must be 3-D {_EXPECTED['weight']}, got shape {weight.shape}")
    if bias is not None and bias.ndim != 1:
        raise RuntimeError(f"bilinear(): bias must be 1-D {_EXPECTED['bias']}, got shape {bias.shape}")
    if in1 == 0 or in2 == 0:
        raise RuntimeError(
            f"bilinear(): in1_features and in2_features must be positive, got input1 of shape {input1.shape} "
            f"and input2 of shape {input2.shape}"
        )
    if input1.dtype.kind == "b":
        raise NotImplementedError("bilinear(): not implemented for bool tensors (convert them with .float())")
    lead = input1.shape[:-1]
    out = einsum("bi,oij,bj->bo", input1.reshape(-1, in1), weight, input2.reshape(-1, in2))
    if bias is not None:
        out = out + bias
    return out.reshape(*lead, weight.shape[0])


class Bilinear(Module):
    """``y = x1^T A x2 + b``: a learned bilinear map of two inputs (see ``bilinear``).

    Args:
        in1_features, in2_features: sizes of the last dimension of the two inputs.
        out_features: size of the last dimension of the output.
        bias: learn an additive bias (default True).
        device, dtype: where and in which floating dtype the parameters live (default CPU, float32).

    ``weight`` is (out_features, in1_features, in2_features), ``bias``
    (out_features,); both are drawn from U(-1/sqrt(in1_features),
    1/sqrt(in1_features)) by minigrad's generator, as PyTorch initializes them.

    Raises:
        TypeError: a size that is not an int, or a bad ``dtype``.
        RuntimeError (PyTorch's type): a negative size, or a dtype that is not floating point.
        ValueError (PyTorch's type): ``in1_features`` is 0.
    """

    def __init__(self, in1_features: int, in2_features: int, out_features: int, bias: bool = True,
                 device=None, dtype=None):
        super().__init__()
        self.in1_features = _check_size(in1_features, "in1_features", "Bilinear")
        self.in2_features = _check_size(in2_features, "in2_features", "Bilinear")
        self.out_features = _check_size(out_features, "out_features", "Bilinear")
        shape = (self.out_features, self.in1_features, self.in2_features)
        self.weight = _empty_parameter(shape, device, dtype, owner="Bilinear")
        if bias:
            self.bias = _empty_parameter((self.out_features,), device, dtype, owner="Bilinear")
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Re-draw weight and bias from U(-1/sqrt(in1_features), 1/sqrt(in1_features)).

        Raises:
            ValueError: ``in1_features`` is 0 (the bound would be infinite), as in PyTorch.
        """
        if self.in1_features <= 0:
            raise ValueError(f"Bilinear: in1_features must be > 0, but got (in1_features={self.in1_features})")
        bound = 1 / math.sqrt(self.in1_features)
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1, input2):
        """The bilinear map of ``input1`` (*, in1_features) and ``input2`` (*, in2_features)."""
        return bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")
