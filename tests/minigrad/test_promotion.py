"""Type promotion (``minigrad.promotion``) against PyTorch as the oracle.

* ``promote_types`` on every pair of dtypes, ``result_type`` on every pair
  of operand kinds (dimensioned tensors, 0-d tensors, Python and NumPy
  scalars), then hypothesis-drawn pairs through the ops ``+ - * / **`` and
  ``where``: the same result dtype (or an error where PyTorch raises one),
  and the same values;
* gradients: every input gets its gradient in its own dtype and shape,
  with PyTorch's values, through first and second order;
* the losses with mixed dtypes: the same result dtype, or an error where
  PyTorch raises one (minigrad raises TypeError for a dtype that does not
  fit, where PyTorch raises RuntimeError or NotImplementedError);
* ``ops.elementwise.masked_fill``, which converts the value to the input's
  dtype instead of promoting;
* the documented differences from PyTorch, NumPy scalars as Python numbers,
  and ``Tensor.masked_fill`` keeping the tensor's dtype.
"""

from __future__ import annotations

import itertools
import warnings
from dataclasses import dataclass

import numpy as np
import pytest
import torch
import torch.nn.functional as TF
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import minigrad as mg
import minigrad.nn.functional as F
from minigrad import backend, promotion
from minigrad.ops import elementwise

# uint16/32/64: PyTorch promotes them (in part) but has no arithmetic kernels for them.
OP_DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64",
             "complex64", "complex128"]
ALL_DTYPES = OP_DTYPES + ["uint16", "uint32", "uint64"]
PYTHON_SCALARS = [True, False, 2, 3, 1.5, 1.5 + 1j]
# np.bool_ and np.complex64 are left out: see test_numpy_scalars_that_pytorch_misreads.
NUMPY_SCALARS = [np.float64(1.5), np.float32(1.5), np.float16(1.5), np.int64(2), np.int32(2), np.int8(2),
                 np.uint8(2), np.complex128(1.5 + 1j)]
SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.fixture(scope="session", params=("cpu", "cuda"))
def device(request) -> str:
    """The device a test runs on; "cuda" skips when no GPU can be used."""
    if request.param == "cuda" and not backend.cuda_is_available():
        pytest.skip(backend.cuda_unavailable_reason())
    return request.param


def dtype_name(dtype) -> str:
    """A torch or NumPy dtype as NumPy's name; PyTorch's complex32 is minigrad's complex64."""
    if isinstance(dtype, torch.dtype):
        return "complex64" if dtype == torch.complex32 else str(dtype).removeprefix("torch.")
    return np.dtype(dtype).name


@dataclass(frozen=True)
class Operand:
    """One operand, built afresh for either library: a tensor of ``dtype`` and ``ndim``, or a number."""

    dtype: str | None = None
    ndim: int = 0
    number: object = None

    @property
    def is_tensor(self) -> bool:
        return self.dtype is not None

    def values(self) -> np.ndarray:
        # Shapes (), (2,) and (3, 2) broadcast together; values 2 keep pow and division tame.
        shape = ((), (2,), (3, 2))[self.ndim]
        return np.full(shape, 2).astype(self.dtype)

    def torch(self, requires_grad=False):
        if not self.is_tensor:
            return self.number
        return torch.tensor(self.values(), requires_grad=requires_grad)

    def minigrad(self, requires_grad=False, device="cpu"):
        if not self.is_tensor:
            return self.number
        return mg.tensor(self.values(), device=device, requires_grad=requires_grad)

    def __repr__(self):
        return f"{self.dtype}[{self.ndim}d]" if self.is_tensor else f"{type(self.number).__name__}({self.number!r})"


def tensors(dtypes):
    return st.builds(Operand, dtype=st.sampled_from(dtypes), ndim=st.integers(0, 2))


def python_scalars():
    return st.sampled_from(PYTHON_SCALARS).map(lambda n: Operand(number=n))


def numpy_scalars():
    return st.sampled_from(NUMPY_SCALARS).map(lambda n: Operand(number=n))


def outcome(fn, *args):
    """The name of ``fn(*args)`` (a dtype) or of its dtype, or "error" (the cases are compared, not the classes)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ComplexHalf is experimental; NumPy overflow and casts
        try:
            result = fn(*args)
        except (TypeError, ValueError, RuntimeError, OverflowError):
            return "error"
    return dtype_name(result if isinstance(result, (torch.dtype, np.dtype)) else result.dtype)


# -- promote_types and result_type -------------------------------------------------------------------


@pytest.mark.parametrize("first", ALL_DTYPES)
def test_promote_types_matches_torch_for_every_pair(first):
    for second in ALL_DTYPES:
        want = outcome(torch.promote_types, getattr(torch, first), getattr(torch, second))
        got = outcome(mg.promote_types, first, second)
        assert got == want, f"promote_types({first}, {second}): minigrad {got}, PyTorch {want}"


def test_result_type_matches_torch_for_every_pair_of_operand_kinds():
    kinds = [Operand(dtype, ndim) for dtype in ALL_DTYPES for ndim in (0, 1)]
    kinds += [Operand(number=n) for n in PYTHON_SCALARS + NUMPY_SCALARS]
    mismatches = []
    for a, b in itertools.product(kinds, repeat=2):
        if not (a.is_tensor or b.is_tensor):
            continue
        want = outcome(torch.result_type, a.torch(), b.torch())
        got = outcome(mg.result_type, a.minigrad(), b.minigrad())
        if got != want:
            mismatches.append(f"{a!r} with {b!r}: minigrad {got}, PyTorch {want}")
    assert not mismatches, "\n".join(mismatches)


@SETTINGS
@given(operands=st.lists(tensors(OP_DTYPES[1:]), min_size=3, max_size=3))
def test_result_type_of_three_tensors_matches_an_op_of_three(operands):
    # torch.result_type takes two operands; addcmul(a, b, c) promotes its three the same way.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            want = torch.addcmul(*(o.torch() for o in operands)).dtype
        except RuntimeError:  # no kernel (complex32)
            assume(False)
    assert dtype_name(mg.result_type(*(o.minigrad() for o in operands))) == dtype_name(want)


def test_result_type_rules_from_the_module_docstring():
    f32, i32, i8, f16 = (mg.ones(3, dtype=d) for d in (np.float32, np.int32, np.int8, np.float16))
    assert mg.result_type(f32, mg.ones(3, dtype=mg.int64)) == np.float32
    assert mg.result_type(f32, mg.tensor(1.0, dtype=mg.float64)) == np.float32
    assert mg.result_type(i32, mg.tensor(1.0, dtype=mg.float64)) == np.float64
    assert mg.result_type(i32, 2.5) == mg.get_default_dtype() == np.float32
    assert mg.result_type(i8, 1000) == np.int8
    assert mg.result_type(f16, 1j) == np.complex64
    assert mg.result_type(mg.ones(3, dtype=mg.float64), 1j) == np.complex128
    assert mg.result_type(mg.ones(3, dtype=mg.bool_), 1) == np.int64
    assert mg.result_type(np.ones(3, np.uint8), np.ones(3, np.int8)) == np.int16  # arrays count as tensors


def test_result_type_rejects_what_is_not_an_operand():
    with pytest.raises(TypeError, match="at least one operand"):
        mg.result_type()
    with pytest.raises(TypeError, match="str"):
        mg.result_type(mg.ones(2), "2")
    with pytest.raises(TypeError, match="not numeric"):
        mg.result_type(mg.ones(2), np.array(["a"]))
    with pytest.raises(TypeError, match="uint16.*int8"):
        mg.promote_types(np.uint16, np.int8)


# -- the ops -------------------------------------------------------------------------------------------


def _where(lib, a, b):
    # The condition goes where the tensor operands are (a CPU condition with CUDA operands is an error).
    device = next((x.device for x in (a, b) if isinstance(x, (mg.Tensor, torch.Tensor))), None)
    return lib.where(lib.tensor([True, False], device=device), a, b)


OPS = {
    "add": lambda lib, a, b: a + b,
    "sub": lambda lib, a, b: a - b,
    "mul": lambda lib, a, b: a * b,
    "div": lambda lib, a, b: a / b,
    "pow": lambda lib, a, b: a**b,
    "where": _where,
}


def _torch_result_type(a, b):
    try:
        return torch.result_type(a.torch(), b.torch())
    except RuntimeError:
        return None


def _builtin_class(error_type):
    """The first builtin exception class in ``error_type``'s MRO (PyTorch raises subclasses of them)."""
    return next(k for k in error_type.__mro__ if k.__module__ == "builtins")


def _check_op(name, a, b):
    """``a <name> b`` in both libraries: the same dtype, shape and values, or an error of one class in both."""
    op = OPS[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ComplexHalf is experimental; NumPy overflow and casts
        try:
            theirs = op(torch, a.torch(), b.torch())
        except (TypeError, RuntimeError) as error:  # NotImplementedError is a RuntimeError
            theirs, their_class = None, _builtin_class(type(error))
        if theirs is None and _torch_result_type(a, b) == torch.complex32:
            # complex32 (float16 with complex), for which PyTorch has few kernels: minigrad computes complex64.
            assert outcome(op, mg, a.minigrad(), b.minigrad()) == "complex64", f"{a!r} {name} {b!r}"
            return
        try:
            mine = op(mg, a.minigrad(), b.minigrad())
        except (TypeError, ValueError, RuntimeError) as error:
            assert theirs is None, f"{a!r} {name} {b!r}: minigrad raises {error!r}, PyTorch gives {theirs.dtype}"
            assert _builtin_class(type(error)) is their_class, (
                f"{a!r} {name} {b!r}: minigrad raises {error!r}, PyTorch a {their_class.__name__}"
            )
            return
    assert theirs is not None, f"{a!r} {name} {b!r}: PyTorch raises, minigrad gives {mine.dtype}"
    assert dtype_name(mine.dtype) == dtype_name(theirs.dtype), f"{a!r} {name} {b!r}"
    assert mine.shape == tuple(theirs.shape)
    if theirs.dtype == torch.complex32:  # which NumPy cannot hold
        theirs = theirs.to(torch.complex64)
    np.testing.assert_allclose(mine.array.astype(np.complex128), theirs.numpy().astype(np.complex128), rtol=1e-3)


@SETTINGS
@given(
    name=st.sampled_from(sorted(OPS)),
    a=st.one_of(tensors(OP_DTYPES), python_scalars(), numpy_scalars()),
    b=st.one_of(tensors(OP_DTYPES), python_scalars(), numpy_scalars()),
)
def test_result_type_and_binary_ops_follow_torch(name, a, b):
    assume(a.is_tensor or b.is_tensor)
    assert outcome(mg.result_type, a.minigrad(), b.minigrad()) == outcome(torch.result_type, a.torch(), b.torch())
    number = None if a.is_tensor and b.is_tensor else (b, a)[b.is_tensor].number
    if name == "where" or not isinstance(number, np.generic):
        # NumPy scalars in operators: see test_numpy_scalars_in_operators_count_as_python_numbers.
        _check_op(name, a, b)


@pytest.mark.parametrize("name", sorted(OPS))
def test_binary_ops_compute_in_torchs_dtype_for_every_pair_of_operand_kinds(name):
    # The property above draws; this walks every pair once (rare pairs such as mask ** True included).
    kinds = [Operand(dtype, ndim) for dtype in OP_DTYPES for ndim in (0, 1, 2)]
    kinds += [Operand(number=n) for n in PYTHON_SCALARS]
    for a, b in itertools.product(kinds, repeat=2):
        if a.is_tensor or b.is_tensor:
            _check_op(name, a, b)


def test_where_of_two_python_numbers():
    for a, b in itertools.product(PYTHON_SCALARS, repeat=2):
        want = outcome(_where, torch, a, b)
        assert outcome(_where, mg, a, b) == want, f"where(c, {a!r}, {b!r})"


def test_integer_scalars_wrap_around_like_torch(device):
    for dtype, number in [("int8", 1000), ("uint8", -3), ("int8", 2**40 + 5), ("int16", -70000)]:
        values = np.array([1, 2, 100], dtype=dtype)
        for op in (lambda x, n: x + n, lambda x, n: n - x, lambda x, n: x * n):
            mine = op(mg.tensor(values, device=device), number)
            theirs = op(torch.tensor(values), number)
            assert mine.dtype == np.dtype(dtype)
            np.testing.assert_array_equal(backend.to_numpy(mine.array), theirs.numpy())


@pytest.mark.parametrize(
    "expr",
    [
        lambda lib: lib.tensor([1, 2]) / lib.tensor([2, 4]),
        lambda lib: lib.tensor([True, False]) / 2,
        lambda lib: lib.tensor([1, 2], dtype=lib.int32).exp(),
        lambda lib: lib.tensor([1, 2]).sqrt(),
        lambda lib: lib.tensor([1, 2]).log(),
        lambda lib: lib.tensor([1, 2]).tanh(),
        lambda lib: lib.tensor([1, 2]).sigmoid(),
        lambda lib: lib.tensor([1, 2]).clamp(min=0.5),
        lambda lib: lib.tensor([1, 2]).clamp(max=1),
        lambda lib: lib.tensor([1.0, 2.0], dtype=lib.float16).clamp(min=0.5),
    ],
    ids=["int/int", "bool/int", "exp", "sqrt", "log", "tanh", "sigmoid", "clamp-float-bound", "clamp-int-bound",
         "clamp-float16"],
)
def test_integer_inputs_of_floating_functions(expr, device):
    mine, theirs = expr(mg), expr(torch)
    assert dtype_name(mine.dtype) == dtype_name(theirs.dtype)
    np.testing.assert_allclose(backend.to_numpy(mine.array), theirs.numpy(), rtol=1e-3)


def test_matmul_does_not_promote_like_torch():
    for other in (mg.float64, mg.int64):
        with pytest.raises(RuntimeError, match="same dtype.*float32"):
            mg.ones(2, 3) @ mg.ones(3, 2, dtype=other)
        with pytest.raises(RuntimeError):
            torch.ones(2, 3) @ torch.ones(3, 2, dtype=getattr(torch, np.dtype(other).name))


FILL_VALUES = [2, -1, 0.7, 1e6, float("nan"), float("-inf"), True, 2 + 0j, 1j, 300, np.float64(2.5)]


@pytest.mark.parametrize("dtype", ["bool", "uint8", "int8", "int64", "float16", "float32", "float64", "complex64"])
def test_masked_fill_keeps_the_input_dtype_like_torch(dtype):
    for value in FILL_VALUES + [Operand("float64", 0), Operand("int64", 0)]:
        mine_value, their_value = (value.minigrad(), value.torch()) if isinstance(value, Operand) else (value, value)
        mine = outcome(elementwise.masked_fill, mg.ones(2, dtype=dtype), mg.tensor([True, False]), mine_value)
        theirs = outcome(torch.ones(2, dtype=getattr(torch, dtype)).masked_fill, torch.tensor([True, False]),
                         their_value)
        assert mine == theirs, f"{dtype} tensor filled with {value!r}"
        if theirs != "error":
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                got = elementwise.masked_fill(mg.ones(2, dtype=dtype), mg.tensor([True, False]), mine_value)
                want = torch.ones(2, dtype=getattr(torch, dtype)).masked_fill(torch.tensor([True, False]), their_value)
            np.testing.assert_array_equal(got.array, want.numpy())


def test_masked_fill_with_a_0d_tensor_value_of_another_dtype_gives_it_a_gradient():
    x, tx = mg.tensor([1.0, 2.0], requires_grad=True), torch.tensor([1.0, 2.0], requires_grad=True)
    v, tv = mg.tensor(2.5, dtype=mg.float64, requires_grad=True), torch.tensor(2.5, dtype=torch.float64,
                                                                                requires_grad=True)
    out = elementwise.masked_fill(x, mg.tensor([True, False]), v)
    tout = tx.masked_fill(torch.tensor([True, False]), tv)
    assert out.dtype == np.float32
    (out * mg.tensor([3.0, 4.0])).sum().backward()
    (tout * torch.tensor([3.0, 4.0])).sum().backward()
    assert v.grad.dtype == np.float64 and x.grad.dtype == np.float32
    np.testing.assert_array_equal(v.grad.array, tv.grad.numpy())
    np.testing.assert_array_equal(x.grad.array, tx.grad.numpy())


def test_tensor_masked_fill_keeps_an_integer_dtype():
    assert mg.tensor([1, 2]).masked_fill(mg.tensor([True, False]), 0.7).dtype == np.int64


def test_default_dtype_is_float32_everywhere():
    assert mg.get_default_dtype() == promotion.get_default_dtype() == np.float32
    assert mg.tensor(1.5).dtype == mg.zeros(2).dtype == mg.arange(0.0, 1.0, 0.5).dtype == np.float32
    assert (mg.tensor([1, 2]) * 1.5).dtype == np.float32


def test_numpy_scalars_that_pytorch_misreads():
    # PyTorch reads np.bool_ as a float and drops np.complex64's imaginary part; minigrad
    # counts them as the Python bool and complex they hold (see minigrad.promotion).
    ints = mg.tensor([1, 2], dtype=mg.int32)
    assert mg.result_type(ints, np.bool_(True)) == np.int32
    assert mg.result_type(ints, np.complex64(1j)) == np.complex64
    assert mg.where(ints > 1, ints, np.bool_(True)).dtype == np.int32


def test_numpy_scalars_in_operators_count_as_python_numbers():
    for number in (np.float64(2.5), np.float32(2.5), np.complex128(1j)):
        mine = mg.tensor([1, 2]) * number
        theirs = torch.tensor([1, 2]) * number
        assert dtype_name(mine.dtype) == dtype_name(theirs.dtype), f"int64 tensor * {number!r}"


def test_zero_dim_tensor_holding_a_numpy_scalar_keeps_its_dtype():
    # Some Tensors hold NumPy scalars (sums of 0-d arrays); ops take them as 0-d tensors.
    t = mg.Tensor._make(np.float64(3.0), False, None, 0)
    assert (t / 3).dtype == np.float64  # not the default dtype of a Python float
    assert (mg.tensor([1, 2]) * t).dtype == np.float64  # a 0-d tensor of a higher category: its dtype
    assert (mg.tensor([1.0, 2.0]) * t).dtype == np.float32  # of the same category: the dimensioned dtype
    assert mg.result_type(mg.tensor([1, 2]), t) == np.float64


# -- gradients -------------------------------------------------------------------------------------------

FLOATS = ["float16", "float32", "float64"]
GRAD_OPS = {name: OPS[name] for name in ("add", "sub", "mul", "div", "pow", "where")}


def _grads_match(name, a, b, device, create_graph=False):
    mine_in = [a.minigrad(requires_grad=a.dtype in FLOATS, device=device), b.minigrad(b.dtype in FLOATS, device)]
    theirs_in = [a.torch(requires_grad=a.dtype in FLOATS), b.torch(requires_grad=b.dtype in FLOATS)]
    for lib, inputs in ((mg, mine_in), (torch, theirs_in)):
        out = GRAD_OPS[name](lib, *inputs)
        leaves = [x for x in inputs if x.requires_grad]
        if create_graph:
            grads = lib.autograd.grad(out.sum(), leaves, create_graph=True)
            out = sum((g * g).sum() for g in grads if g.requires_grad) + out.sum()
        out.sum().backward()
    for i, (mine, theirs) in enumerate(zip(mine_in, theirs_in)):
        if not theirs.requires_grad:
            continue
        what = f"{a!r} {name} {b!r}: gradient of input {i}"
        assert mine.grad.dtype == mine.dtype, f"{what} has dtype {mine.grad.dtype}"
        assert dtype_name(mine.grad.dtype) == dtype_name(theirs.grad.dtype), what
        assert mine.grad.shape == mine.shape == tuple(theirs.grad.shape), what
        np.testing.assert_allclose(backend.to_numpy(mine.grad.array), theirs.grad.numpy(), rtol=2e-2, err_msg=what)


@pytest.mark.parametrize("name", sorted(GRAD_OPS))
def test_each_input_gets_its_gradient_in_its_own_dtype(name, device):
    kinds = [Operand(dtype, ndim) for dtype in FLOATS + ["int64"] for ndim in (0, 1, 2)]
    for a, b in itertools.product(kinds, repeat=2):
        if a.dtype in FLOATS or b.dtype in FLOATS:
            _grads_match(name, a, b, device)


@pytest.mark.parametrize("name", ["mul", "div", "pow"])
def test_second_order_gradients_keep_each_inputs_dtype(name, device):
    for a, b in [(Operand("float32", 1), Operand("float64", 0)), (Operand("float16", 2), Operand("float32", 1)),
                 (Operand("float64", 1), Operand("int64", 1))]:
        _grads_match(name, a, b, device, create_graph=True)
        _grads_match(name, b, a, device, create_graph=True)


def test_python_number_beside_a_tensor_that_needs_grad(device):
    x = mg.tensor([1.0, 2.0], dtype=mg.float16, device=device, requires_grad=True)
    y = (x * 2.5 + 1 - x / 3.0) ** 2
    assert y.dtype == np.float16
    y.sum().backward()
    assert x.grad.dtype == np.float16


# -- losses ----------------------------------------------------------------------------------------------

_TARGETS = ["float16", "float32", "float64", "int64", "int32", "bool"]


def _tensor(lib, dtype, shape=(3, 4), requires_grad=False, low=0, high=3):
    values = np.random.default_rng(0).integers(low, high, size=shape).astype(dtype)
    if np.dtype(dtype).kind == "f":
        values = values + np.float16(0.25)
    t = lib.tensor(values)
    return t.requires_grad_() if requires_grad else t


def _loss_outcome(lib, fn):
    """(dtype name or "error", the gradients' dtype names) of ``fn(lib, functional)``."""
    functional = F if lib is mg else TF
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            out, leaves = fn(lib, functional)
        except (TypeError, ValueError, RuntimeError):  # PyTorch's NotImplementedError is a RuntimeError
            return "error", ()
    out.sum().backward()
    return dtype_name(out.dtype), tuple(dtype_name(x.grad.dtype) for x in leaves)


def _mse(input_dtype, target_dtype, target_shape=(3, 4), module=False):
    def fn(lib, functional):
        x = _tensor(lib, input_dtype, requires_grad=input_dtype in FLOATS)
        t = _tensor(lib, target_dtype, target_shape, requires_grad=target_dtype in FLOATS)
        loss = (lib.nn.MSELoss() if module else functional.mse_loss)(x, t)
        return loss, [leaf for leaf in (x, t) if leaf.requires_grad]

    return fn


def _classification(loss, target_dtype="int64", weight_dtype=None, probabilities=None, input_dtype="float32",
                    smoothing=0.0):
    def fn(lib, functional):
        x = _tensor(lib, input_dtype, requires_grad=input_dtype in FLOATS)
        leaves = [x] if x.requires_grad else []
        if probabilities is not None:
            target = _tensor(lib, probabilities, requires_grad=probabilities in FLOATS)
            leaves += [target] if target.requires_grad else []
        else:
            target = _tensor(lib, target_dtype, (3,), high=4)
        weight = None if weight_dtype is None else _tensor(lib, weight_dtype, (4,), low=1, high=3)
        if loss == "nll_loss":
            return functional.nll_loss(x, target, weight), leaves
        return functional.cross_entropy(x, target, weight, label_smoothing=smoothing), leaves

    return fn


LOSS_CASES = {
    **{f"mse({i}, {t})": _mse(i, t) for i in ["float16", "float32", "float64", "int64"] for t in _TARGETS if i != t},
    **{f"mse(float32, {t} 0-d)": _mse("float32", t, ()) for t in ["float64", "int64", "float16"]},
    **{f"MSELoss(float32, {t})": _mse("float32", t, module=True) for t in ["int64", "float64"]},
    **{f"{loss}(target {t})": _classification(loss, t) for loss in ("nll_loss", "cross_entropy")
       for t in ["int64", "uint8", "int32", "int16", "int8", "bool"]},
    **{f"{loss}(weight {w})": _classification(loss, weight_dtype=w) for loss in ("nll_loss", "cross_entropy")
       for w in ["float32", "float64", "float16", "int64"]},
    **{f"cross_entropy(smoothing, weight {w})": _classification("cross_entropy", weight_dtype=w, smoothing=0.1)
       for w in ["float32", "float64"]},
    **{f"cross_entropy(probabilities {p})": _classification("cross_entropy", probabilities=p)
       for p in ["float16", "float32", "float64", "int64"]},
    **{f"cross_entropy(probabilities float32, weight {w})":
       _classification("cross_entropy", probabilities="float32", weight_dtype=w) for w in ["float64", "int64"]},
    **{f"{loss}(input {i})": _classification(loss, input_dtype=i) for loss in ("nll_loss", "cross_entropy")
       for i in ["float16", "float64", "int64"]},
}


@pytest.mark.parametrize("case", sorted(LOSS_CASES))
def test_losses_accept_the_dtypes_torch_accepts(case):
    mine, theirs = _loss_outcome(mg, LOSS_CASES[case]), _loss_outcome(torch, LOSS_CASES[case])
    assert mine == theirs, f"{case}: minigrad (dtype, gradient dtypes) {mine}, PyTorch {theirs}"


def test_mse_loss_values_and_gradients_with_an_integer_target():
    x, tx = mg.tensor([[0.5, 1.5], [2.0, -1.0]], requires_grad=True), torch.tensor([[0.5, 1.5], [2.0, -1.0]],
                                                                                   requires_grad=True)
    target = [[1, 2], [3, 4]]
    out, tout = F.mse_loss(x, mg.tensor(target)), TF.mse_loss(tx, torch.tensor(target))
    out.backward()
    tout.backward()
    np.testing.assert_allclose(out.item(), tout.item(), rtol=1e-6)
    np.testing.assert_allclose(x.grad.array, tx.grad.numpy(), rtol=1e-6)


def test_mse_loss_error_names_both_dtypes():
    with pytest.raises(NotImplementedError, match="int64.*int32.*floating point"):  # PyTorch's class
        F.mse_loss(mg.tensor([1, 2]), mg.tensor([1, 2], dtype=mg.int32))


JOIN_DTYPES = [("float32", "int64"), ("float16", "int64"), ("uint8", "int8"), ("bool", "int8"), ("float16", "float64"),
               ("int32", "float64"), ("bool", "float16")]


@pytest.mark.parametrize("join", ["cat", "stack"])
@pytest.mark.parametrize(("first", "second"), JOIN_DTYPES)
def test_cat_and_stack_join_in_pytorchs_result_dtype(join, first, second):
    """NumPy would join float32 and int64 in float64; PyTorch keeps float32; each input's gradient keeps its dtype."""
    results = []
    for lib in (mg, torch):
        parts = [lib.ones(2, dtype=getattr(lib, d), requires_grad=np.dtype(d).kind == "f") for d in (first, second)]
        joined = getattr(lib, join)(parts)
        if joined.requires_grad:
            (joined * 3).sum().backward()
        grads = [str(p.grad.dtype).removeprefix("torch.") if p.grad is not None else None for p in parts]
        results.append((str(joined.dtype).removeprefix("torch."), grads))
    assert results[0] == results[1]
