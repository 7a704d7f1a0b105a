"""PyTorch's everyday names in minigrad, each checked against PyTorch as the oracle.

* dtype names (``mg.float``, ``mg.long``, ...), ``finfo``/``iinfo``,
  ``is_floating_point``, ``element_size``;
* ``set_default_dtype`` (factories, layers, promotion) and ``set_default_device``;
* ``mg.device``: construction, str/repr/eq/hash, errors, and ``t.device``;
* ``Tensor.type()`` and the legacy types (``mg.FloatTensor`` ...);
* ``mg.cuda`` and ``mg.accelerator`` (a CPU-only PyTorch build is the
  oracle where no GPU is usable; with one, the GPU tests run instead);
* ``grad_fn.next_functions``;
* ``mg.load``'s ``map_location``;
* ``mg.futures``: ``Future``, ``collect_all``, ``wait_all``.
"""

from __future__ import annotations

import io
import json
import logging
import pickle
import threading
import time
import zipfile
from functools import partial

import numpy as np
import pytest
import torch
import torch.futures
from hypothesis import given, settings
from hypothesis import strategies as st

import minigrad as mg
from minigrad import backend
from minigrad.device import default_device as default_device_as_set

SETTINGS = settings(max_examples=20, deadline=None)
GPU = backend.cuda_is_available()
# A CPU-only PyTorch build is the oracle: where CuPy is installed minigrad answers as a CUDA build does
# (an accelerator exists, even with no device visible).
needs_no_gpu = pytest.mark.skipif(backend.cuda_is_installed(),
                                  reason="compares with a CPU-only PyTorch build: CuPy is installed here")
needs_gpu = pytest.mark.skipif(not GPU, reason=backend.cuda_unavailable_reason() or "no GPU")

# (minigrad name, PyTorch name) of every dtype alias that both have.
DTYPE_NAMES = [
    ("float", "float"), ("float32", "float32"), ("double", "double"), ("float64", "float64"),
    ("half", "half"), ("float16", "float16"), ("cfloat", "cfloat"), ("complex64", "complex64"),
    ("cdouble", "cdouble"), ("complex128", "complex128"), ("long", "long"), ("int64", "int64"),
    ("int", "int"), ("int32", "int32"), ("short", "short"), ("int16", "int16"), ("int8", "int8"),
    ("uint8", "uint8"), ("uint16", "uint16"), ("uint32", "uint32"), ("uint64", "uint64"), ("bool", "bool"),
]
ALL_DTYPES = ["float16", "float32", "float64", "complex64", "complex128", "uint8", "int8", "int16", "int32",
              "int64", "bool", "uint16", "uint32", "uint64"]


def torch_dtype_name(dtype: torch.dtype) -> str:
    """PyTorch's dtype by NumPy's name; its complex32 (of float16) is minigrad's complex64, NumPy has no complex32."""
    return "complex64" if dtype == torch.complex32 else str(dtype).removeprefix("torch.")


def same_error(mg_call, torch_call):
    """Both calls raise, with the same exception type; returns minigrad's exception."""
    with pytest.raises(Exception) as expected:
        torch_call()
    with pytest.raises(type(expected.value)) as got:
        mg_call()
    return got.value


@pytest.fixture
def default_dtype():
    """Restores both libraries' default dtype after the test."""
    yield
    mg.set_default_dtype(mg.float32)
    torch.set_default_dtype(torch.float32)


@pytest.fixture
def default_device():
    """Restores minigrad's default device after the test."""
    yield
    mg.set_default_device(None)


# ------------------------------------------------------------------------------------------ dtypes


@pytest.mark.parametrize(("mg_name", "torch_name"), DTYPE_NAMES)
def test_dtype_names_are_numpy_dtypes_matching_pytorch(mg_name, torch_name):
    ours, theirs = getattr(mg, mg_name), getattr(torch, torch_name)
    assert isinstance(ours, mg.dtype)
    assert ours.name == torch_dtype_name(theirs)
    assert ours.itemsize == theirs.itemsize
    t = mg.zeros(2, dtype=ours)
    assert t.dtype == ours and t.dtype is ours  # one NumPy instance per dtype: `is` works as with torch
    assert {ours: "found"}[t.dtype] == "found"
    assert t.element_size() == torch.zeros(2, dtype=theirs).element_size()


def test_bfloat16_and_complex32_are_left_out():
    assert not hasattr(mg, "bfloat16") and not hasattr(mg, "chalf") and not hasattr(mg, "complex32")


@pytest.mark.parametrize("name", ALL_DTYPES)
def test_is_floating_point_and_is_complex(name):
    ours, theirs = mg.zeros(2, dtype=getattr(mg, name)), torch.zeros(2, dtype=getattr(torch, name))
    assert mg.is_floating_point(ours) == torch.is_floating_point(theirs) == theirs.is_floating_point()
    assert ours.is_floating_point() == theirs.is_floating_point()
    assert mg.is_complex(ours) == torch.is_complex(theirs)


@pytest.mark.parametrize("value", [3.0, np.zeros(2), [1.0]])
def test_is_floating_point_needs_a_tensor(value):
    same_error(lambda: mg.is_floating_point(value), lambda: torch.is_floating_point(value))
    same_error(lambda: mg.is_complex(value), lambda: torch.is_complex(value))


@pytest.mark.parametrize("name", ["float16", "float32", "float64", "complex64", "complex128"])
def test_finfo(name):
    ours, theirs = mg.finfo(getattr(mg, name)), torch.finfo(getattr(torch, name))
    for attr in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution"):
        # NumPy stores the limits in the dtype itself (float16's resolution is 0.001 rounded to float16)
        assert float(getattr(ours, attr)) == pytest.approx(float(getattr(theirs, attr)), rel=theirs.eps), attr
    assert ours.dtype.name == theirs.dtype


@pytest.mark.parametrize("name", ["uint8", "int8", "int16", "int32", "int64", "uint16", "uint32", "uint64"])
def test_iinfo(name):
    ours, theirs = mg.iinfo(getattr(mg, name)), torch.iinfo(getattr(torch, name))
    assert (ours.bits, ours.min, ours.max) == (theirs.bits, theirs.min, theirs.max)
    assert ours.dtype.name == theirs.dtype


def test_finfo_defaults_to_the_default_dtype(default_dtype):
    assert mg.finfo().eps == torch.finfo().eps
    mg.set_default_dtype(mg.float64)
    torch.set_default_dtype(torch.float64)
    assert mg.finfo().eps == torch.finfo().eps


@pytest.mark.parametrize("name", ["int32", "bool", "uint8"])
def test_finfo_of_a_non_float_dtype_raises(name):
    same_error(lambda: mg.finfo(getattr(mg, name)), lambda: torch.finfo(getattr(torch, name)))


@pytest.mark.parametrize("name", ["float32", "bool", "complex64"])
def test_iinfo_of_a_non_integer_dtype_raises(name):
    same_error(lambda: mg.iinfo(getattr(mg, name)), lambda: torch.iinfo(getattr(torch, name)))


# ------------------------------------------------------------------------------------------ default dtype


@pytest.mark.filterwarnings("ignore:ComplexHalf support is experimental")
@pytest.mark.parametrize("name", ["float64", "float16", "float32"])
def test_set_default_dtype_reaches_factories_layers_and_promotion(name, default_dtype):
    mg.set_default_dtype(getattr(mg, name))
    torch.set_default_dtype(getattr(torch, name))
    assert mg.get_default_dtype().name == torch_dtype_name(torch.get_default_dtype())
    pairs = [
        (lambda m: m.tensor([1.5, 2.0]), lambda t: t.tensor([1.5, 2.0])),
        (lambda m: m.tensor(2.5), lambda t: t.tensor(2.5)),
        (lambda m: m.tensor([1 + 2j]), lambda t: t.tensor([1 + 2j])),
        (lambda m: m.zeros(2, 3), lambda t: t.zeros(2, 3)),
        (lambda m: m.ones(2), lambda t: t.ones(2)),
        (lambda m: m.empty(2), lambda t: t.empty(2)),
        (lambda m: m.full((2,), 2.5), lambda t: t.full((2,), 2.5)),
        (lambda m: m.full((2,), 1j), lambda t: t.full((2,), 1j)),
        (lambda m: m.randn(3), lambda t: t.randn(3)),
        (lambda m: m.rand(3), lambda t: t.rand(3)),
        (lambda m: m.arange(0.0, 1.0, 0.25), lambda t: t.arange(0.0, 1.0, 0.25)),
        (lambda m: m.arange(3), lambda t: t.arange(3)),
        (lambda m: m.linspace(0, 1, 5), lambda t: t.linspace(0, 1, 5)),
        (lambda m: m.tensor([1, 2]) + 2.5, lambda t: t.tensor([1, 2]) + 2.5),
        (lambda m: m.tensor([1, 2]) / m.tensor([2, 2]), lambda t: t.tensor([1, 2]) / t.tensor([2, 2])),
        (lambda m: m.tensor([1, 2]) * 1j, lambda t: t.tensor([1, 2]) * 1j),
        (lambda m: m.zeros(2, dtype=m.float32) + 2.5, lambda t: t.zeros(2, dtype=t.float32) + 2.5),
        (lambda m: m.nn.Linear(2, 3).weight, lambda t: t.nn.Linear(2, 3).weight),
        (lambda m: m.nn.Conv2d(1, 2, 3).bias, lambda t: t.nn.Conv2d(1, 2, 3).bias),
        (lambda m: m.nn.LayerNorm(4).weight, lambda t: t.nn.LayerNorm(4).weight),
        (lambda m: m.nn.Embedding(5, 2).weight, lambda t: t.nn.Embedding(5, 2).weight),
    ]
    for make_ours, make_theirs in pairs:
        assert make_ours(mg).dtype.name == torch_dtype_name(make_theirs(torch).dtype)


def test_a_float64_default_gives_float64_models(default_dtype):
    mg.set_default_dtype(mg.float64)
    model = mg.nn.Sequential(mg.nn.Linear(3, 4), mg.nn.ReLU(), mg.nn.Linear(4, 1))
    assert all(p.dtype == mg.float64 for p in model.parameters())
    loss = model(mg.randn(2, 3)).sum()
    loss.backward()
    assert loss.dtype == mg.float64 and all(p.grad.dtype == mg.float64 for p in model.parameters())


@pytest.mark.parametrize("name", ["int64", "int32", "complex64", "complex128", "bool"])
def test_set_default_dtype_takes_floating_dtypes_only(name, default_dtype):
    same_error(lambda: mg.set_default_dtype(getattr(mg, name)), lambda: torch.set_default_dtype(getattr(torch, name)))
    assert mg.get_default_dtype() == mg.float32


def test_set_default_dtype_rejects_none_and_non_dtypes(default_dtype):
    same_error(lambda: mg.set_default_dtype(None), lambda: torch.set_default_dtype(None))
    for bad in ("not a dtype", np.longdouble, np.dtype(">f8")):
        with pytest.raises(TypeError, match="set_default_dtype"):
            mg.set_default_dtype(bad)
    assert mg.get_default_dtype() == mg.float32


# ------------------------------------------------------------------------------------------ devices

DEVICE_SPECS = [("cpu",), ("cuda",), ("cuda:0",), ("cuda:1",), ("cuda:12",), ("cuda", 0), ("cuda", 3),
                ("cpu", 0), ("cpu:0",), ("cpu:1",)]
BAD_DEVICE_SPECS = [("gpu",), ("CPU",), (" cpu",), ("cuda:-1",), ("cuda:01",), ("cuda:x",), ("cuda", -1),
                    ("cuda:0", 1), (1.0,), (None,), ("cuda", "1"), ("cuda", True), ([],)]


@pytest.mark.parametrize("spec", DEVICE_SPECS)
def test_device_matches_torch_device(spec):
    ours, theirs = mg.device(*spec), torch.device(*spec)
    assert (ours.type, ours.index) == (theirs.type, theirs.index)
    assert str(ours) == str(theirs) and repr(ours) == repr(theirs)
    assert mg.device(ours) is ours and mg.device(str(ours)) is ours
    assert pickle.loads(pickle.dumps(ours)) is ours


@pytest.mark.parametrize("spec", BAD_DEVICE_SPECS)
def test_bad_device_specs_raise_like_torch(spec):
    mg.device("cuda", 1), mg.device("cuda", 0)  # cached devices must not answer for ("cuda", True) and the like
    same_error(lambda: mg.device(*spec), lambda: torch.device(*spec))


@given(st.sampled_from(DEVICE_SPECS), st.sampled_from(DEVICE_SPECS))
@SETTINGS
def test_device_equality_and_hash_follow_torch(a, b):
    assert (mg.device(*a) == mg.device(*b)) == (torch.device(*a) == torch.device(*b))
    if mg.device(*a) == mg.device(*b):
        assert hash(mg.device(*a)) == hash(mg.device(*b))


@given(st.text(alphabet="cpuda:0123-x ", max_size=8))
@SETTINGS
def test_device_strings_are_accepted_exactly_where_torch_accepts_them(text):
    try:
        theirs = torch.device(text)
    except RuntimeError:
        with pytest.raises(RuntimeError):
            mg.device(text)
        return
    if theirs.type not in ("cpu", "cuda"):  # PyTorch's other device types: minigrad has none of them
        with pytest.raises(RuntimeError, match="device type"):
            mg.device(text)
        return
    assert str(mg.device(text)) == str(theirs) and mg.device(text).index == theirs.index


def test_device_types_minigrad_lacks_raise():
    torch.device("meta")  # valid in PyTorch, but minigrad has only cpu and cuda
    with pytest.raises(RuntimeError, match="'cpu' and 'cuda'"):
        mg.device("meta")


@needs_no_gpu
def test_an_int_device_needs_an_accelerator():
    same_error(lambda: mg.device(0), lambda: torch.device(0))


def test_tensor_device_is_a_device_and_still_its_name():
    t = mg.randn(2, 3)
    assert t.device == mg.device("cpu") and t.device == torch.zeros(1).device.type
    assert t.device.type == "cpu" and t.device.index is None
    assert repr(t.device) == repr(torch.zeros(1).device)
    assert t.device == "cpu" and f"{t.device}" == "cpu" and {"cpu": 1}[t.device] == 1  # as before: a str
    assert isinstance(t.device, mg.device) and isinstance(t.device, str)
    assert t.to(mg.device("cpu")) is t and t.to(device=mg.device("cpu")) is t
    assert t.to(mg.device("cpu"), mg.float64).dtype == mg.float64
    assert mg.zeros(2, device=mg.device("cpu")).device == mg.device("cpu")
    assert mg.tensor([1.0], device=mg.device("cpu")).device.type == "cpu"
    assert mg.nn.Linear(2, 2).to(mg.device("cpu")).weight.device == "cpu"


def test_default_device(default_device):
    assert repr(mg.get_default_device()) == repr(torch.get_default_device()) == "device(type='cpu')"
    mg.set_default_device(mg.device("cpu"))
    assert mg.zeros(1).device == "cpu"
    mg.set_default_device("cuda")
    assert default_device_as_set() == mg.device("cuda")  # kept unresolved: the current CUDA device at each use
    if GPU:
        assert mg.zeros(1).device.type == "cuda" and mg.nn.Linear(2, 2).weight.device.type == "cuda"
        assert mg.get_default_device() == mg.device("cuda", mg.cuda.current_device())
    else:
        with pytest.raises(RuntimeError, match="cuda"):
            mg.zeros(1)
        with pytest.raises(RuntimeError, match="cuda"):
            mg.nn.Linear(2, 2)
        with pytest.raises(RuntimeError, match="cuda"):
            mg.get_default_device()
    assert mg.tensor(np.ones(2)).device == "cpu"  # data with a device keeps it
    seen = []
    thread = threading.Thread(target=lambda: seen.append(mg.zeros(1).device))
    thread.start()
    thread.join()
    assert seen == ["cpu"]  # per thread, as in PyTorch
    mg.set_default_device(None)
    assert mg.zeros(1).device == "cpu" and mg.get_default_device() == "cpu"
    with pytest.raises(RuntimeError):
        mg.set_default_device("gpu")


def test_a_device_as_context_manager_sets_the_default(default_device):
    with mg.device("cpu") as d:
        assert d == "cpu" and mg.zeros(1).device == "cpu"
        with mg.device("cuda"):
            if not GPU:
                with pytest.raises(RuntimeError):
                    mg.ones(1)
        assert mg.zeros(1).device == "cpu"
    assert mg.get_default_device() == "cpu"


def test_tensor_keeps_the_device_of_its_data():
    t = mg.randn(3)
    assert mg.tensor(t).device == t.device and mg.as_tensor(t) is t
    assert mg.as_tensor(t, dtype=mg.float32) is t and mg.as_tensor(t, dtype=mg.float64).dtype == mg.float64


# ------------------------------------------------------------------------------------------ Tensor.type


@pytest.mark.parametrize("name", ALL_DTYPES)
def test_type_names_are_pytorchs(name):
    assert mg.zeros(2, dtype=getattr(mg, name)).type() == torch.zeros(2, dtype=getattr(torch, name)).type()
    assert mg.zeros(2).type(dtype=None) == "torch.FloatTensor"


TYPE_TARGETS = ["torch.FloatTensor", "torch.DoubleTensor", "torch.HalfTensor", "torch.LongTensor",
                "torch.IntTensor", "torch.ShortTensor", "torch.CharTensor", "torch.ByteTensor", "torch.BoolTensor",
                "torch.ComplexFloatTensor", "torch.UInt16Tensor"]


@pytest.mark.parametrize("target", TYPE_TARGETS)
@pytest.mark.parametrize("source", ["float32", "int64", "float64"])
def test_type_converts_like_torch(source, target):
    values = [[0.0, 1.5, -2.0], [3.0, 0.25, 7.0]]
    ours = mg.tensor(values).to(getattr(mg, source)).type(target)
    theirs = torch.tensor(values).to(getattr(torch, source)).type(target)
    assert ours.type() == theirs.type() == target
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_type_takes_legacy_types_and_dtypes_and_is_a_no_op_when_nothing_changes():
    t = mg.tensor([1.5, 2.5])
    assert t.type(mg.float32) is t and t.type("torch.FloatTensor") is t and t.type(mg.FloatTensor) is t
    assert t.type(mg.LongTensor).tolist() == torch.tensor([1.5, 2.5]).type(torch.LongTensor).tolist()
    assert t.type(mg.float64).dtype == mg.float64
    assert mg.tensor([1, 2]).type(mg.Tensor).type() == torch.tensor([1, 2]).type(torch.Tensor).type()


def test_type_is_differentiable():
    ours = mg.tensor([1.0, 2.0], requires_grad=True)
    theirs = torch.tensor([1.0, 2.0], requires_grad=True)
    (ours.type(mg.float64) ** 2).sum().backward()
    (theirs.type(torch.float64) ** 2).sum().backward()
    assert ours.grad.dtype.name == torch_dtype_name(theirs.grad.dtype)
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy())


@pytest.mark.parametrize("target", ["torch.Foo", "float64", "torch.float64", 5, mg.device("cpu")])
def test_type_errors(target):
    theirs = torch.device("cpu") if isinstance(target, mg.device) else target
    same_error(lambda: mg.zeros(2).type(target), lambda: torch.zeros(2).type(theirs))


@needs_no_gpu
def test_a_cuda_type_without_cuda_raises():
    name = "torch.cuda.FloatTensor"
    same_error(lambda: mg.zeros(2).type(name), lambda: torch.zeros(2).type(name))
    same_error(lambda: mg.zeros(2).type(mg.cuda.FloatTensor), lambda: torch.zeros(2).type(torch.cuda.FloatTensor))


# ------------------------------------------------------------------------------------------ legacy types

LEGACY = ["FloatTensor", "DoubleTensor", "HalfTensor", "LongTensor", "IntTensor", "ShortTensor", "CharTensor",
          "ByteTensor", "BoolTensor"]


def legacy(name):
    return getattr(mg, name), getattr(torch, name)


@pytest.mark.parametrize("name", LEGACY)
def test_legacy_type_attributes_and_isinstance(name):
    ours, theirs = legacy(name)
    assert ours.dtype.name == torch_dtype_name(theirs.dtype) and ours.is_cuda is theirs.is_cuda is False
    assert ours.__name__ == theirs.__name__ and not issubclass(ours, mg.Tensor)
    for other in ALL_DTYPES:
        assert isinstance(mg.zeros(2, dtype=getattr(mg, other)), ours) == isinstance(
            torch.zeros(2, dtype=getattr(torch, other)), theirs
        )
        assert not isinstance(mg.zeros(2, dtype=getattr(mg, other)), getattr(mg.cuda, name))
    assert isinstance(mg.nn.Parameter(mg.zeros(2)), mg.FloatTensor)
    assert not isinstance(3, ours) and not isinstance(np.zeros(2, dtype=ours.dtype), ours)


@given(st.sampled_from(LEGACY), st.lists(st.integers(0, 4), max_size=3))
@SETTINGS
def test_legacy_constructor_from_sizes(name, sizes):
    ours, theirs = legacy(name)
    made = ours(*sizes)
    assert made.shape == tuple(theirs(*sizes).shape) and made.type() == theirs(*sizes).type()
    assert not made.array.any()  # minigrad fills with zeros (PyTorch leaves the memory uninitialized)
    assert ours(size=tuple(sizes)).shape == tuple(theirs(size=tuple(sizes)).shape)


@given(
    st.sampled_from(LEGACY),
    st.lists(st.lists(st.integers(0, 100) | st.floats(0, 100), min_size=2, max_size=2),
             min_size=1, max_size=3),
)
@SETTINGS
def test_legacy_constructor_from_data(name, data):
    ours, theirs = legacy(name)
    for args in ((data,), (tuple(data[0]),), (np.array(data),)):
        made, expected = ours(*args), theirs(*args)
        assert made.type() == expected.type()
        np.testing.assert_array_equal(made.numpy(), expected.numpy())
    np.testing.assert_array_equal(ours(data=data).numpy(), theirs(data=data).numpy())


def test_legacy_constructor_edge_cases():
    assert mg.FloatTensor().shape == tuple(torch.FloatTensor().shape) == (0,)
    assert mg.FloatTensor([]).shape == (0,) and mg.IntTensor(2, 0).shape == (2, 0)
    assert mg.FloatTensor(np.int64(3)).shape == tuple(torch.FloatTensor(np.int64(3)).shape)
    np.testing.assert_array_equal(mg.FloatTensor([True, False]).numpy(), torch.FloatTensor([True, False]).numpy())
    assert mg.FloatTensor(2, device="cpu").device == "cpu"
    assert mg.FloatTensor([1.0], device=mg.device("cpu")).shape == (1,)
    assert not mg.FloatTensor([1.0]).requires_grad


def test_legacy_constructor_of_a_tensor_is_an_alias():
    source = mg.zeros(3, requires_grad=True)
    alias = mg.FloatTensor(source)
    assert alias is not source and alias.requires_grad
    alias.sum().backward()
    np.testing.assert_array_equal(source.grad.numpy(), np.ones(3))
    plain = mg.zeros(2)
    mg.FloatTensor(plain)[0] = 5.0
    assert plain.tolist() == [5.0, 0.0]


@pytest.mark.parametrize(
    ("args", "kwargs"),
    [
        ((2.5,), {}), ((True,), {}), ((None,), {}), ((2, "a"), {}), ((2, 3.0), {}), (([1.0], [2.0]), {}),
        ((-1,), {}), ((2,), {"device": "cuda"}), ((2,), {"requires_grad": True}), (([1],), {"dtype": "float64"}),
        ((torch.tensor([1, 2]),), {}), (([[1, 2], [3]],), {}), ((2,), {"size": (2,)}), ((), {"size": 3}),
        ((), {"size": [[1, 2]]}), ((), {"size": (2,), "data": [1]}),
    ],
)
def test_legacy_constructor_errors(args, kwargs):
    ours_args = tuple(mg.tensor(a.tolist()) if isinstance(a, torch.Tensor) else a for a in args)
    ours_kwargs = {k: (mg.float64 if k == "dtype" else v) for k, v in kwargs.items()}
    theirs_kwargs = {k: (torch.float64 if k == "dtype" else v) for k, v in kwargs.items()}
    same_error(lambda: mg.FloatTensor(*ours_args, **ours_kwargs), lambda: torch.FloatTensor(*args, **theirs_kwargs))


@needs_no_gpu
def test_cuda_legacy_types_without_cuda():
    same_error(lambda: mg.cuda.FloatTensor(2), lambda: torch.cuda.FloatTensor(2))
    assert mg.cuda.LongTensor.is_cuda and mg.cuda.LongTensor.dtype == mg.long
    assert str(mg.cuda.FloatTensor) == "<class 'minigrad.cuda.FloatTensor'>"


@needs_gpu
def test_cuda_legacy_types_on_a_gpu():
    made = mg.cuda.FloatTensor([1.0, 2.0])
    assert made.is_cuda and made.type() == "torch.cuda.FloatTensor" and isinstance(made, mg.cuda.FloatTensor)
    assert not isinstance(made, mg.FloatTensor) and mg.cuda.LongTensor(2, 3).shape == (2, 3)
    assert mg.zeros(2).type("torch.cuda.DoubleTensor").type() == "torch.cuda.DoubleTensor"
    assert made.type("torch.FloatTensor").device == "cpu"
    with pytest.raises(RuntimeError, match="cpu"):
        mg.cuda.FloatTensor(2, device="cpu")


# ------------------------------------------------------------------------------------------ mg.cuda, accelerator


@needs_no_gpu
def test_cuda_namespace_without_a_gpu_is_a_cpu_only_torch():
    for name in ("is_available", "device_count", "memory_allocated", "memory_reserved", "empty_cache"):
        assert getattr(mg.cuda, name)() == getattr(torch.cuda, name)(), name
    assert mg.cuda.memory_allocated(0) == torch.cuda.memory_allocated(0) == 0
    assert mg.cuda.manual_seed(1) is torch.cuda.manual_seed(1) is None
    assert mg.cuda.manual_seed_all(1) is torch.cuda.manual_seed_all(1) is None
    for name, args in (("current_device", ()), ("synchronize", ()), ("get_device_name", ()), ("get_device_name", (0,))):
        error = same_error(partial(getattr(mg.cuda, name), *args), partial(getattr(torch.cuda, name), *args))
        assert isinstance(error, RuntimeError) and "CUDA is not available" in str(error)
    assert mg.cuda.set_device(-1) is torch.cuda.set_device(-1) is None
    same_error(lambda: mg.cuda.set_device("cpu"), lambda: torch.cuda.set_device("cpu"))
    with pytest.raises(mg.cuda.CudaNotAvailableError):
        mg.cuda.set_device(0)  # PyTorch's CPU build raises an AttributeError here, by accident
    with pytest.raises(RuntimeError), mg.cuda.device(0):
        pass


def test_cuda_seed_arguments_are_checked():
    with pytest.raises(TypeError, match="manual_seed"):
        mg.cuda.manual_seed("a")
    with pytest.raises(ValueError, match="manual_seed_all"):
        mg.cuda.manual_seed_all(2**64)


@needs_no_gpu
def test_accelerator_without_one():
    for name in ("is_available", "current_accelerator", "device_count"):
        assert getattr(mg.accelerator, name)() == getattr(torch.accelerator, name)(), name
    assert mg.accelerator.current_accelerator(check_available=True) is None
    for name, args in (("current_device_index", ()), ("set_device_index", (0,)), ("synchronize", ())):
        same_error(partial(getattr(mg.accelerator, name), *args), partial(getattr(torch.accelerator, name), *args))


@needs_gpu
def test_cuda_namespace_on_a_gpu():
    assert mg.cuda.is_available() and mg.cuda.device_count() >= 1
    assert mg.accelerator.current_accelerator() == mg.device("cuda") and mg.accelerator.current_device_index() == 0
    assert isinstance(mg.cuda.get_device_name(), str) and mg.cuda.get_device_name(0)
    mg.cuda.set_device("cuda:0")
    assert mg.cuda.current_device() == 0
    with mg.cuda.device(0):
        assert mg.zeros(1, device="cuda").device == mg.device("cuda", 0)
    before = mg.cuda.memory_allocated()
    big = mg.zeros(1 << 20, device="cuda")
    assert mg.cuda.memory_allocated() >= before + big.array.nbytes
    assert mg.cuda.memory_reserved() >= mg.cuda.memory_allocated()
    mg.cuda.synchronize()
    mg.accelerator.synchronize()
    del big
    mg.cuda.empty_cache()
    with pytest.raises(ValueError, match="invalid device index"):
        mg.cuda.set_device(mg.cuda.device_count())


@needs_gpu
def test_cuda_manual_seed_reseeds_only_the_gpu_stream():
    mg.manual_seed(0)
    mg.randn(3)  # advance the CPU stream
    mg.cuda.manual_seed(7)
    first = mg.randn(4, device="cuda").cpu().numpy()
    cpu_next = mg.randn(3).numpy()
    mg.manual_seed(0)
    mg.randn(3)
    mg.cuda.manual_seed_all(7)
    assert np.array_equal(mg.randn(4, device="cuda").cpu().numpy(), first)
    assert np.array_equal(mg.randn(3).numpy(), cpu_next)  # the CPU stream went on, unaffected


# ------------------------------------------------------------------------------------------ next_functions


def graph_signature(fn, leaves, seen=None):
    """The structure of a graph from ``fn`` down: op nodes by output number, leaves by position, None."""
    if fn is None:
        return None
    variable = getattr(fn, "variable", None)
    if variable is not None:
        return ("leaf", next(i for i, leaf in enumerate(leaves) if leaf is variable))
    return ("op", tuple((graph_signature(f, leaves), nr if f is not None else 0) for f, nr in fn.next_functions))


PROGRAMS = [
    lambda m, x, w, c: (x * w).sum(),
    lambda m, x, w, c: (x * c).sum(),
    lambda m, x, w, c: (x * 2).sum(),
    lambda m, x, w, c: (x.exp() * x + w).sum(),
    lambda m, x, w, c: (x[0] * x[1] - w[1]).sum(),
    lambda m, x, w, c: m.matmul(x, w.T).tanh().mean(),
    lambda m, x, w, c: (x - c).relu().sum(),
]


@pytest.mark.parametrize("program", PROGRAMS)
def test_next_functions_have_torchs_structure(program):
    data = np.arange(6.0).reshape(2, 3) / 7
    ours = [mg.tensor(data, requires_grad=True), mg.tensor(data + 1, requires_grad=True), mg.tensor(data)]
    theirs = [torch.tensor(data, requires_grad=True), torch.tensor(data + 1, requires_grad=True), torch.tensor(data)]
    ours_out, theirs_out = program(mg, *ours), program(torch, *theirs)
    assert graph_signature(ours_out.grad_fn, ours) == graph_signature(theirs_out.grad_fn, theirs)


def test_next_functions_reach_the_leaf_through_accumulate_grad():
    x = mg.ones(2, requires_grad=True)
    y = x * mg.ones(2)
    node, nr = y.grad_fn.next_functions[0]
    assert nr == 0 and node.name() == "AccumulateGrad" and node.variable is x
    assert y.grad_fn.next_functions[1] == (None, 0) and node.next_functions == ()


# ------------------------------------------------------------------------------------------ load's map_location


@pytest.fixture
def checkpoints(tmp_path):
    """The same model's state dict saved by minigrad and by PyTorch."""
    model = mg.nn.Linear(3, 2)
    state = model.state_dict()
    mg.save(state, tmp_path / "model.mg")
    torch.save({k: torch.tensor(v.numpy()) for k, v in state.items()}, tmp_path / "model.pt")
    return state, tmp_path / "model.mg", tmp_path / "model.pt"


def assert_same_state(ours, theirs):
    assert list(ours) == list(theirs)
    for key in ours:
        assert ours[key].device.type == theirs[key].device.type
        np.testing.assert_array_equal(ours[key].numpy(), theirs[key].numpy())


@pytest.mark.parametrize(
    "map_location",
    [None, "cpu", "device_cpu", {"cuda:0": "cpu"}, {"cpu": "cpu"}, "keep", "none", "double"],
)
def test_map_location_forms_like_torch(checkpoints, map_location):
    _, ours_path, theirs_path = checkpoints
    forms = {
        "device_cpu": (mg.device("cpu"), torch.device("cpu")),
        "keep": (lambda storage, location: storage, lambda storage, location: storage),
        "none": (lambda storage, location: None, lambda storage, location: None),
    }
    if map_location == "double":  # the callable's result is what gets loaded
        ours = mg.load(ours_path, map_location=lambda storage, location: storage * 2, weights_only=True)
        expected = torch.load(theirs_path, weights_only=True)
        assert_same_state(ours, {k: v * 2 for k, v in expected.items()})
        return
    ours_form, theirs_form = forms.get(map_location, (map_location, map_location)) if isinstance(
        map_location, str) else (map_location, map_location)
    assert_same_state(
        mg.load(ours_path, map_location=ours_form, weights_only=True),
        torch.load(theirs_path, map_location=theirs_form, weights_only=True),
    )


def test_a_map_location_callable_gets_a_cpu_tensor_and_the_saved_location(checkpoints):
    state, ours_path, theirs_path = checkpoints
    calls = []
    mg.load(ours_path, map_location=lambda storage, location: calls.append((storage, location)))
    torch_locations = []
    torch.load(theirs_path, map_location=lambda storage, location: torch_locations.append(location))
    assert [loc for _, loc in calls] == torch_locations == ["cpu"] * len(state)
    assert all(isinstance(storage, mg.Tensor) and storage.device == "cpu" for storage, _ in calls)


def test_map_location_errors(checkpoints):
    _, ours_path, theirs_path = checkpoints
    same_error(lambda: mg.load(ours_path, map_location=3.5), lambda: torch.load(theirs_path, map_location=3.5))
    with pytest.raises(TypeError, match="map_location"):
        mg.load(ours_path, map_location={"cpu": 2.5})
    with pytest.raises(TypeError, match="callable"):
        mg.load(ours_path, map_location=lambda storage, location: "cpu")
    with pytest.raises(TypeError, match="weights_only"):
        mg.load(ours_path, weights_only="yes")


def relocated(path, device: str) -> bytes:
    """The checkpoint at ``path`` with every tensor's saved device rewritten to ``device``."""
    with zipfile.ZipFile(path) as archive:
        entries = {name: archive.read(name) for name in archive.namelist()}
    manifest = json.loads(entries["manifest.json"])
    for _, node in manifest["root"]["items"]:
        node["device"] = device
    entries["manifest.json"] = json.dumps(manifest).encode()
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for name, content in entries.items():
            archive.writestr(name, content)
    return out.getvalue()


def test_tensors_saved_on_a_gpu_follow_map_location(checkpoints):
    state, ours_path, _ = checkpoints
    saved_on_gpu = relocated(ours_path, "cuda:0")
    if not GPU:  # as PyTorch on a CPU-only machine: restoring to the saved GPU fails, pointing at map_location
        with pytest.raises(RuntimeError, match="map_location"):
            mg.load(io.BytesIO(saved_on_gpu))
    else:
        assert all(t.device == "cuda:0" for t in mg.load(io.BytesIO(saved_on_gpu)).values())
    for form in ("cpu", {"cuda:0": "cpu"}, lambda storage, location: storage):
        loaded = mg.load(io.BytesIO(saved_on_gpu), map_location=form)
        assert_same_state(loaded, {k: torch.tensor(v.numpy()) for k, v in state.items()})
    locations = []
    mg.load(io.BytesIO(saved_on_gpu), map_location=lambda storage, location: locations.append(location) or storage)
    assert set(locations) == {"cuda:0"}
    with pytest.raises(mg.serialization.CheckpointError, match="'device'"):
        mg.load(io.BytesIO(relocated(ours_path, "tpu:0")))


# ------------------------------------------------------------------------------------------ futures


def run_futures(fm, script):
    """Run ``script(fm, record)`` with ``fm`` torch.futures or mg.futures; the record of what happened."""
    record = []

    def outcome(call):
        try:
            record.append(("value", call()))
        except Exception as error:
            record.append(("error", type(error).__name__))

    script(fm, record, outcome)
    return record


def script_basics(fm, record, outcome):
    f = fm.Future()
    record.append(f.done())
    outcome(f.value)
    f.set_result(3)
    record.append(f.done())
    outcome(f.wait)
    outcome(f.value)
    outcome(lambda: f.set_result(4))
    outcome(lambda: f.set_exception(ValueError("again")))
    g = fm.Future()
    g.set_exception(ValueError("boom"))
    record.append(g.done())
    outcome(g.wait)
    outcome(g.value)
    outcome(lambda: fm.Future().set_exception("not an exception"))


def script_then(fm, record, outcome):
    p = fm.Future()
    plus_one = p.then(lambda f: f.wait() + 1)
    via_value = p.then(lambda f: f.value() * 10)
    failing = p.then(lambda f: 1 / 0)
    after_failing = failing.then(lambda f: f.wait())
    record.append(plus_one.done())
    p.set_result(1)
    for fut in (plus_one, via_value, failing, after_failing):
        record.append(fut.done())
        outcome(fut.wait)
    q = fm.Future()
    q.set_exception(KeyError("k"))
    outcome(q.then(lambda f: f.wait()).wait)
    outcome(q.then(lambda f: "ignores the error").wait)
    done = fm.Future()
    done.set_result(5)
    outcome(done.then(lambda f: f.wait() * 2).wait)  # runs at once
    inner = fm.Future()
    outer = fm.Future()
    chained = outer.then(lambda f: inner)
    outer.set_result(0)
    record.append(chained.wait() is inner)  # a returned Future is the value, not awaited
    outcome(lambda: fm.Future().then(3))
    outcome(lambda: fm.Future().add_done_callback(3))


def script_callback_order(fm, record, outcome):
    p = fm.Future()
    p.add_done_callback(lambda f: record.append("a"))
    p.then(lambda f: record.append("b"))
    p.add_done_callback(lambda f: 1 / 0)  # logged and dropped
    p.add_done_callback(lambda f: record.append(("c", f.value())))
    p.set_result(7)
    record.append("after")
    p.add_done_callback(lambda f: record.append("late"))  # complete already: runs now


def script_collect_all(fm, record, outcome):
    a, b, c = fm.Future(), fm.Future(), fm.Future()
    both = fm.collect_all([a, b])
    a.set_result(1)
    record.append(both.done())
    b.set_result(2)
    record.append(both.done())
    record.append([f.wait() for f in both.wait()])  # the Futures given (PyTorch hands back new wrappers of them)
    outcome(fm.collect_all([]).wait)
    outcome(lambda: fm.wait_all([]))
    outcome(lambda: fm.collect_all([1]))
    outcome(lambda: fm.wait_all([a, 1]))
    c.set_result(3)
    outcome(lambda: fm.wait_all([a, b, c]))


@pytest.mark.parametrize("script", [script_basics, script_then, script_callback_order, script_collect_all])
def test_futures_behave_like_torch(script, caplog):
    with caplog.at_level(logging.ERROR, logger="minigrad.futures"):
        ours = run_futures(mg.futures, script)
    assert ours == run_futures(torch.futures, script)
    if script is script_callback_order:
        assert "add_done_callback" in caplog.text and "ZeroDivisionError" in caplog.text


@given(
    st.lists(st.sampled_from(["ok", "ValueError", "KeyError"]), min_size=1, max_size=5),
    st.randoms(use_true_random=False),
)
@SETTINGS
def test_collect_all_and_wait_all_outcomes_follow_torch(outcomes, rng):
    """Futures completed in a random order: the same combined outcome (first failure in list order)."""
    order = list(range(len(outcomes)))
    rng.shuffle(order)

    def script(fm, record, outcome):
        futures = [fm.Future() for _ in outcomes]
        combined = fm.collect_all(futures)
        for step, i in enumerate(order):
            if outcomes[i] == "ok":
                futures[i].set_result(i)
            else:
                futures[i].set_exception({"ValueError": ValueError, "KeyError": KeyError}[outcomes[i]](str(i)))
            record.append(combined.done() == (step == len(order) - 1))
        outcome(lambda: [f.done() for f in combined.wait()])
        outcome(lambda: fm.wait_all(futures))
        outcome(lambda: str(_first_error(futures)))

    assert run_futures(mg.futures, script) == run_futures(torch.futures, script)


def _first_error(futures):
    for fut in futures:
        try:
            fut.wait()
        except Exception as error:
            return error
    return None


def test_a_then_callback_error_names_the_cause():
    p = mg.futures.Future()
    child = p.then(lambda f: {}["missing"])
    p.set_result(0)
    with pytest.raises(RuntimeError, match="KeyError") as info:
        child.wait()
    assert isinstance(info.value.__cause__, KeyError)


def test_collect_all_gives_back_the_futures_it_was_given():
    futures = [mg.futures.Future(), mg.futures.Future()]
    combined = mg.futures.collect_all(futures)
    for i, fut in enumerate(futures):
        fut.set_result(i)
    assert all(x is y for x, y in zip(combined.wait(), futures))


def test_futures_completed_from_another_thread():
    fut = mg.futures.Future()
    chained = fut.then(lambda f: f.wait() + "!")
    threading.Timer(0.05, lambda: fut.set_result("late")).start()
    assert fut.wait() == "late" and chained.wait(timeout=5) == "late!"
    assert mg.futures.wait_all([fut, chained]) == ["late", "late!"]


def test_set_exception_takes_any_exception_instance():
    fut = mg.futures.Future()
    fut.set_exception(KeyboardInterrupt())  # PyTorch refuses non-Exception ones; minigrad_dist hands them on
    with pytest.raises(KeyboardInterrupt):
        fut.wait()


def test_wait_timeout_and_generic_alias():
    with pytest.raises(TimeoutError):
        mg.futures.Future().wait(timeout=0.01)
    assert mg.futures.Future[int] is not None and torch.futures.Future[int] is not None


def test_a_polled_source_drives_then_and_collect_all():
    """A Future completed only when polled (an MPI request's way) still completes chained and collected Futures."""
    polls = []

    def make():
        fut = None

        def poll():
            polls.append(1)
            if len(polls) >= 3 and not fut._done:
                fut.set_result(len(polls))

        def block(timeout):
            deadline = time.monotonic() + (timeout if timeout is not None else 5)
            while not fut._done and time.monotonic() < deadline:
                poll()

        fut = mg.futures.Future(poll=poll, block=block)
        return fut

    first = make()
    assert not first.done() and not first.done() and first.done()
    second = make()
    assert second.then(lambda f: f.wait() * 2).wait() == 2 * second.wait()
    third = make()
    assert [f.wait() for f in mg.futures.collect_all([third]).wait()] == [third.wait()]


def test_randint_takes_pytorchs_two_argument_form():
    mg.manual_seed(0)
    drawn = mg.randint(5, (200,))
    assert drawn.shape == torch.randint(5, (200,)).shape and drawn.dtype == np.int64
    assert int(drawn.min()) >= 0 and int(drawn.max()) <= 4
    assert mg.randint(2, 5, (3, 2)).shape == (3, 2)
    with pytest.raises(TypeError, match="give a size"):
        mg.randint(5)


def test_nn_syncbatchnorm_converts_batchnorm_layers():
    from minigrad import nn

    model = nn.Sequential(nn.Linear(2, 3), nn.BatchNorm1d(3))
    converted = nn.SyncBatchNorm.convert_sync_batchnorm(model)
    assert isinstance(converted[1], nn.SyncBatchNorm)
    with pytest.raises(AttributeError, match="no attribute 'NoSuchLayer'"):
        nn.NoSuchLayer  # noqa: B018
