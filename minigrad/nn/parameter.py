"""``Parameter``: a Tensor that a ``Module`` registers as one of its trainable weights."""

from __future__ import annotations

import numpy as np

from minigrad import backend
from minigrad.promotion import get_default_dtype
from minigrad.tensor import Tensor


class Parameter(Tensor):
    """A leaf Tensor that ``Module`` treats as a parameter when assigned as an attribute.

    ``module.weight = Parameter(...)`` registers the tensor in
    ``module.parameters()``; assigning a plain Tensor does not (use
    ``register_buffer`` for non-trainable state).

    Args:
        data: a Tensor (its array is shared, not copied), a NumPy/CuPy array
            (wrapped without copying), or anything ``numpy.asarray`` accepts.
            ``None`` gives an empty float32 parameter, as in PyTorch.
        requires_grad: whether the parameter is trained (default True). Unlike
            other tensors, it does not depend on grad mode: a Parameter made
            inside ``no_grad`` still requires grad.

    Raises:
        RuntimeError: ``requires_grad`` is True for a non-floating dtype.

    Results of ops on parameters are plain Tensors, as in PyTorch.
    """

    __slots__ = ()

    def __init__(self, data=None, requires_grad: bool = True):
        if data is None:
            data = np.empty((0,), dtype=get_default_dtype())
        elif isinstance(data, Tensor):
            data = data.array
        elif not backend.is_array(data):
            data = np.asarray(data)
        super().__init__(data, requires_grad=requires_grad)

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    def __deepcopy__(self, memo):
        existing = memo.get(id(self))
        if existing is not None:
            return existing
        result = type(self)(self.array.copy(), self.requires_grad)
        memo[id(self)] = result
        return result

    def __reduce_ex__(self, protocol):
        # Rebuilt from its array alone: the autograd bookkeeping (accumulate-grad
        # node, hooks) belongs to this process's graph and is not copied.
        return (_rebuild_parameter, (self.array, self.requires_grad))


def _rebuild_parameter(data, requires_grad):
    return Parameter(data, requires_grad)
