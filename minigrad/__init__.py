"""minigrad: a small, readable, tape-based autograd engine on NumPy (CPU) and CuPy (GPU).

The public API mirrors PyTorch's names and behaviour::

    import minigrad as mg
    x = mg.randn(3, 4, requires_grad=True)
    y = (x @ x.T).tanh().sum()
    y.backward()
    x.grad  # dy/dx

The layers, bottom up (README.md, section "Architecture", draws them):

* ``backend``: NumPy arrays on the CPU, CuPy arrays on a GPU; the only module that knows CuPy.
* ``tensor`` and ``function``: ``Tensor`` (an array, ``grad``, ``grad_fn``) and the graph nodes
  every op records (``FunctionNode``, ``AccumulateGrad`` for leaves). The ops, forward beside
  backward, are in ``ops``; ``top_level_ops`` gives them their function names (``mg.exp``).
* ``engine``: the backward executor (dependency counts, a ready queue, hooks); ``destinations``:
  gradients computed where they are wanted; ``autograd``: ``grad``, ``backward``, user
  ``Function``, ``gradcheck``.
* ``nn`` and ``optim``: modules, layers and losses; optimizers and learning-rate schedules.

``minigrad_dist`` builds process groups, DDP, RPC and distributed autograd on these.
"""

from minigrad.tensor import Tensor  # noqa: I001  (must come first: the modules below build on it)
from minigrad import backend
from minigrad.backend import manual_seed
from minigrad.factory import (
    arange,
    as_tensor,
    bool_,
    empty,
    float16,
    float32,
    float64,
    from_numpy,
    full,
    full_like,
    int32,
    int64,
    linspace,
    long,
    ones,
    ones_like,
    rand,
    randint,
    randn,
    randperm,
    tensor,
    zeros,
    zeros_like,
)
from minigrad.grad_mode import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from minigrad.promotion import get_default_dtype, promote_types, result_type
from minigrad import top_level_ops
from minigrad.top_level_ops import *  # noqa: F403  (mg.exp, mg.cat, mg.sin, ...: see top_level_ops.__all__)
from minigrad import autograd, engine, ops
from minigrad import nn, optim
from minigrad.serialization import load, save
from minigrad.generator import Generator
from minigrad import utils
from minigrad.promotion import set_default_dtype
from minigrad.device import device, get_default_device, set_default_device
from minigrad.dtypes import (  # PyTorch's dtype names (NumPy dtypes): mg.float, mg.long, mg.cfloat, ...
    bool,
    cdouble,
    cfloat,
    complex64,
    complex128,
    double,
    dtype,
    finfo,
    float,
    half,
    iinfo,
    int,
    int8,
    int16,
    is_complex,
    is_floating_point,
    short,
    uint8,
    uint16,
    uint32,
    uint64,
)
from minigrad.legacy_tensors import (
    BoolTensor,
    ByteTensor,
    CharTensor,
    DoubleTensor,
    FloatTensor,
    HalfTensor,
    IntTensor,
    LongTensor,
    ShortTensor,
)
from minigrad import accelerator, cuda, futures
from minigrad import math_forms
from minigrad.math_forms import *  # noqa: F403  (mg.std, mg.prod, mg.mm, ...: see math_forms.__all__)
from minigrad import shape_forms
from minigrad.shape_forms import *  # noqa: F403  (mg.eye, mg.narrow, mg.hstack, ...: see shape_forms.__all__)
from minigrad import backends, settings
from minigrad import allocator
from minigrad.settings import *  # noqa: F403  (mg.set_num_threads, mg.inference_mode, ...: see settings.__all__)
from minigrad import linalg as linalg  # mg.linalg.inv, svd, norm, ... (torch.linalg)
from minigrad import distributions as distributions  # mg.distributions.Categorical, Normal, ... (torch.distributions)

__version__ = "0.1.0"

__all__ = [
    "Tensor", "backend", "manual_seed", "tensor", "as_tensor", "zeros", "ones", "empty", "full",
    "zeros_like", "ones_like", "full_like", "randn", "rand", "randint", "randperm", "arange",
    "linspace", "float16", "float32", "float64", "int32", "int64", "long", "bool_", "no_grad",
    "enable_grad", "is_grad_enabled", "set_grad_enabled", "autograd", "engine", "ops", "nn", "optim", "save",
    "load", "get_default_dtype", "promote_types", "result_type",
    "Generator", "utils", "from_numpy",
]

# The ops as functions: mg.exp, mg.cat, mg.sin, ... (minigrad/top_level_ops.py).
__all__ += top_level_ops.__all__

# Devices, dtypes and PyTorch's other everyday names (device.py, dtypes.py, legacy_tensors.py, cuda.py, ...).
__all__ += [
    "device", "get_default_device", "set_default_device", "set_default_dtype", "dtype", "float", "double",
    "half", "bool", "int", "short", "int8", "int16", "uint8", "uint16", "uint32", "uint64", "complex64",
    "complex128", "cfloat", "cdouble", "finfo", "iinfo", "is_floating_point", "is_complex", "FloatTensor",
    "DoubleTensor", "HalfTensor", "LongTensor", "IntTensor", "ShortTensor", "CharTensor", "ByteTensor",
    "BoolTensor", "accelerator", "cuda", "futures",
]

# Math in PyTorch's function spellings: mg.std, mg.norm, mg.addmm, ... (minigrad/math_forms.py).
__all__ += math_forms.__all__

# Shapes, indexing, factories in PyTorch's spellings: mg.eye, mg.narrow, t.new_zeros, ... (minigrad/shape_forms.py).
__all__ += shape_forms.__all__

# Process-wide switches (minigrad/settings.py) and torch.backends' probes (minigrad/backends.py).
__all__ += settings.__all__ + ["backends"]

# glibc keeps freed memory for the next op's result (minigrad/allocator.py says why and how to opt out).
allocator._apply_at_import()
