"""Ops given by a few named parameters, for the view ops and their adjoints.

``Diagonal``/``DiagonalScatter`` (``ops/structure.py``) and
``UnfoldWindows``/``FoldWindows`` (``ops/windows.py``) are such pairs: a view
and the op its backward applies, built from the same parameters::

    View(*params)             a -> a view of a                             backward: Adjoint(*params, a.shape)
    Adjoint(*params, shape)   g -> zeros(shape), g put where View reads    backward: View(*params)

``ParamsNode`` is the constructor they share (it stores each argument under
its name); ``ParamsView`` adds what every such view does: ``fresh`` rebuilds it
from its parameters, and ``forward`` keeps the input's shape for the backward.
"""

from __future__ import annotations

from minigrad.function import FunctionNode, ViewNode


class ParamsNode(FunctionNode):
    """An op whose constructor takes the parameters named in its class statement, in that order.

    ``class DiagonalScatter(ParamsNode, params=("offset", "axis1", "axis2", "shape"))``
    makes ``DiagonalScatter(0, 0, 1, (3, 3))`` set ``self.offset = 0``, ...,
    ``self.shape = (3, 3)``. A subclass that names none keeps its parent's.

    Raises:
        TypeError: the constructor is given more or fewer values than there are names (as Python's
            own check of a constructor's arguments).
    """

    params: tuple = ()

    def __init_subclass__(cls, params: tuple | None = None, **kwargs):
        super().__init_subclass__(**kwargs)
        if params is not None:
            cls.params = params

    def __init__(self, *values):
        if len(values) != len(self.params):
            raise TypeError(f"{type(self).__name__}() takes the parameters {self.params}, got {len(values)} values")
        for name, value in zip(self.params, values):
            setattr(self, name, value)

    def param_values(self) -> tuple:
        """The parameters, in the constructor's order."""
        return tuple(getattr(self, name) for name in self.params)


class ParamsView(ParamsNode, ViewNode):
    """A view op given by named parameters (see ``ParamsNode``): ``forward`` is ``view_array`` and keeps
    the input's shape as ``in_shape`` (the shape of the adjoint's output), ``fresh`` rebuilds the op.

    A subclass defines ``view_array`` and ``backward``.
    """

    def fresh(self):
        """A new, unrecorded op with the same parameters."""
        return type(self)(*self.param_values())

    def forward(self, a):
        """``view_array(a)``, keeping ``a.shape`` for the backward."""
        self.in_shape = a.shape
        return self.view_array(a)
