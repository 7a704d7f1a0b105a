"""Every differentiable op, grouped by family, forward beside backward.

``REGISTRY`` is the one list of ops: the test suite asserts that each entry
has a finite-difference (gradcheck) case and a PyTorch-oracle case.
``minigrad.linalg`` adds its decompositions and solvers to it when it is
imported (it builds on this package), which ``import minigrad`` does.
"""

from minigrad import inplace, math_forms
from minigrad.ops import (
    ctc,
    cumulative,
    determinants,
    einsum,
    elementwise,
    gather,
    index_updates,
    indexing,
    linalg,
    logistic,
    math,
    nn,
    normalization,
    padding,
    pooling,
    pooling3d,
    reduce,
    rnn,
    scan,
    shape,
    statistics,
    structure,
    windows,
)

REGISTRY = {
    # elementwise
    "add": elementwise.Add,
    "sub": elementwise.Sub,
    "mul": elementwise.Mul,
    "div": elementwise.Div,
    "pow": elementwise.Pow,
    "neg": elementwise.Neg,
    "exp": elementwise.Exp,
    "log": elementwise.Log,
    "sqrt": elementwise.Sqrt,
    "tanh": elementwise.Tanh,
    "sigmoid": elementwise.Sigmoid,
    "relu": elementwise.ReLU,
    "abs": elementwise.Abs,
    "clamp": elementwise.Clamp,
    "where": elementwise.Where,
    "cast": elementwise.Cast,
    "clone": elementwise.Clone,
    # reductions
    "sum": reduce.Sum,
    "mean": reduce.Mean,
    "max": reduce.MaxAll,
    "max_dim": reduce.MaxDim,
    # shape
    "reshape": shape.Reshape,
    "permute": shape.Permute,
    "expand": shape.BroadcastTo,
    "cat": shape.Cat,
    "stack": shape.Stack,
    "to_device": shape.ToDevice,
    # indexing
    "index": indexing.Index,
    "index_scatter": indexing.IndexScatter,
    # linear algebra
    "matmul": linalg.MatMul,
    # in-place writes (minigrad/inplace.py)
    "copy_slices": inplace.CopySlices,
    "zero_region": inplace.ZeroRegion,
    "copy_from": inplace.CopyFrom,
    "index_put": inplace.IndexPut,
    # neural-network ops
    **nn.OPS,
    **pooling.OPS,
    **pooling3d.OPS,  # 3-D max/avg pooling (conv3d is composed of the 2-D ops)
    **ctc.OPS,  # connectionist temporal classification loss
    **index_updates.OPS,  # scatter_reduce (index_fill/copy, masked_scatter, index_put record IndexPut)
    **windows.OPS,  # Tensor.unfold's sliding windows and their adjoint
    **statistics.OPS,  # nanmedian
    **determinants.OPS,  # det, slogdet, inverse (matrix_power of a negative n)
    **normalization.OPS,
    # elementwise math, scans, gather/scatter, einsum, structure (sort and topk record gather)
    **math.OPS,
    **scan.OPS,
    **gather.OPS,
    **einsum.OPS,
    **structure.OPS,
    **rnn.OPS,
    **logistic.OPS,  # log-sigmoid, binary cross-entropy
    **padding.OPS,  # constant padding (F.pad)
    **cumulative.OPS,  # cummax/cummin, logcumsumexp and its backward (logit and erfc are in math.OPS)
    **math_forms.OPS,  # prod, norms, amax, median, nansum, hypot, copysign, xlogy, rounded div, gamma functions
}
