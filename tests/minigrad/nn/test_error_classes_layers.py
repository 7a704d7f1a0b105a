# ruff: noqa: N803  (every case takes the library module as `L`: `L=torch` or `L=minigrad`)
"""Bad inputs to the layers raise the exception class PyTorch raises.

Each case runs the same bad call against ``torch`` and against ``minigrad`` (``L`` is the library module) and the
test compares the builtin class each raises, so a ported program's ``except RuntimeError:`` (or ``ValueError``,
``IndexError``, ...) catches our error too. Covered here: convolutions and their modules, RNN/LSTM/GRU and cells,
EmbeddingBag and one_hot, the Transformer layers, ``nn.init``, the Module API, containers, padding, upsampling,
activations and ``nn.utils``. (AssertionError is PyTorch's class for some constructor arguments it asserts.)
"""

import pytest

from tests.error_classes import assert_same_class_as_torch


def _x(L, *shape):
    return L.ones(*shape)


def _linear_params(L):
    return list(L.nn.Linear(2, 2).parameters())


def _with_grads(L, value):
    params = _linear_params(L)
    for p in params:
        p.grad = L.full(tuple(p.shape), value)
    return params


def _load(L, state):
    L.nn.Linear(2, 3).load_state_dict(state)


def _hardtanh_module(L):
    L.nn.Hardtanh(2.0, 1.0)(_x(L, 3))


CASES = [
    # convolutions (functional)
    ("conv1d channels", lambda L: L.nn.functional.conv1d(_x(L, 1, 3, 8), _x(L, 4, 2, 3))),
    ("conv1d groups not dividing", lambda L: L.nn.functional.conv1d(_x(L, 1, 4, 8), _x(L, 3, 2, 3), groups=2)),
    ("conv1d bias shape", lambda L: L.nn.functional.conv1d(_x(L, 1, 2, 8), _x(L, 4, 2, 3), _x(L, 3))),
    ("conv1d kernel too large", lambda L: L.nn.functional.conv1d(_x(L, 1, 2, 2), _x(L, 4, 2, 3))),
    ("conv1d same strided", lambda L: L.nn.functional.conv1d(_x(L, 1, 2, 8), _x(L, 4, 2, 3), padding="same", stride=2)),
    ("conv1d bad padding string", lambda L: L.nn.functional.conv1d(_x(L, 1, 2, 8), _x(L, 4, 2, 3), padding="full")),
    ("conv1d 4D input", lambda L: L.nn.functional.conv1d(_x(L, 1, 1, 2, 8), _x(L, 4, 2, 3))),
    ("conv_transpose1d channels", lambda L: L.nn.functional.conv_transpose1d(_x(L, 1, 3, 4), _x(L, 2, 2, 3))),
    (
        "conv_transpose2d output_padding",
        lambda L: L.nn.functional.conv_transpose2d(_x(L, 1, 2, 4, 4), _x(L, 2, 2, 3, 3), output_padding=2, stride=2),
    ),
    # convolution modules (PyTorch checks kernel, stride, dilation and padding values only when called: the
    # cases call the module, ours fails at construction with the same class)
    ("Conv1d in_channels not divisible by groups", lambda L: L.nn.Conv1d(4, 4, 3, groups=3)),
    ("Conv1d out_channels not divisible by groups", lambda L: L.nn.Conv1d(4, 6, 3, groups=4)),
    ("ConvTranspose2d zero groups", lambda L: L.nn.ConvTranspose2d(4, 4, 3, groups=0)),
    ("Conv1d negative in_channels", lambda L: L.nn.Conv1d(-1, 2, 3)),
    ("ConvTranspose2d negative in_channels", lambda L: L.nn.ConvTranspose2d(-1, 2, 3)),
    ("Conv1d float out_channels", lambda L: L.nn.Conv1d(2, 2.0, 3)),
    ("Conv1d bad padding_mode", lambda L: L.nn.Conv1d(2, 2, 3, padding_mode="mirror")),
    ("ConvTranspose2d reflect padding_mode", lambda L: L.nn.ConvTranspose2d(2, 2, 3, padding_mode="reflect")),
    ("Conv1d same strided", lambda L: L.nn.Conv1d(2, 2, 3, padding="same", stride=2)),
    ("Conv1d bad padding string", lambda L: L.nn.Conv1d(2, 2, 3, padding="full")),
    ("ConvTranspose2d padding string", lambda L: L.nn.ConvTranspose2d(1, 1, 3, padding="valid")(_x(L, 1, 1, 4, 4))),
    ("Conv1d float kernel", lambda L: L.nn.Conv1d(2, 2, 2.5)),
    ("Conv1d zero kernel", lambda L: L.nn.Conv1d(1, 1, 0)(_x(L, 1, 1, 5))),
    ("Conv1d zero stride", lambda L: L.nn.Conv1d(1, 1, 3, stride=0)(_x(L, 1, 1, 5))),
    ("Conv1d zero dilation", lambda L: L.nn.Conv1d(1, 1, 3, dilation=0)(_x(L, 1, 1, 5))),
    ("Conv1d negative padding", lambda L: L.nn.Conv1d(1, 1, 3, padding=-1)(_x(L, 1, 1, 5))),
    ("Conv1d stride of two values", lambda L: L.nn.Conv1d(1, 1, 3, stride=(1, 1))(_x(L, 1, 1, 5))),
    ("Conv1d float stride", lambda L: L.nn.Conv1d(1, 1, 3, stride=1.5)(_x(L, 1, 1, 5))),
    ("ConvTranspose2d zero stride", lambda L: L.nn.ConvTranspose2d(1, 1, 3, stride=0)(_x(L, 1, 1, 4, 4))),
    (
        "ConvTranspose2d negative output_padding",
        lambda L: L.nn.ConvTranspose2d(1, 1, 3, output_padding=-1)(_x(L, 1, 1, 4, 4)),
    ),
    ("Conv1d input channels", lambda L: L.nn.Conv1d(3, 4, 3)(_x(L, 1, 2, 5))),
    (
        "ConvTranspose1d output_size length",
        lambda L: L.nn.ConvTranspose1d(1, 1, 3, stride=2)(_x(L, 1, 1, 4), output_size=[9, 9, 9, 9]),
    ),
    (
        "ConvTranspose2d output_size out of range",
        lambda L: L.nn.ConvTranspose2d(1, 1, 3, stride=2)(_x(L, 1, 1, 4, 4), output_size=[20, 20]),
    ),
    # recurrent layers
    ("RNN bad nonlinearity", lambda L: L.nn.RNN(4, 8, nonlinearity="sigmoid")),
    ("RNN dropout above one", lambda L: L.nn.RNN(4, 8, dropout=2.0)),
    ("GRU proj_size", lambda L: L.nn.GRU(4, 8, proj_size=2)),
    ("LSTM proj_size too large", lambda L: L.nn.LSTM(4, 8, proj_size=8)),
    ("LSTM zero hidden_size", lambda L: L.nn.LSTM(4, 0)),
    ("LSTM float hidden_size", lambda L: L.nn.LSTM(4, 8.0)),
    ("GRU zero num_layers", lambda L: L.nn.GRU(4, 8, num_layers=0)),
    ("RNN input size", lambda L: L.nn.RNN(4, 8)(_x(L, 2, 3, 5))),
    ("RNN 1D input", lambda L: L.nn.RNN(4, 8)(_x(L, 4))),
    ("RNN 4D input", lambda L: L.nn.RNN(4, 8)(_x(L, 1, 2, 3, 4))),
    ("RNN input dtype", lambda L: L.nn.RNN(4, 8)(_x(L, 2, 3, 4).double())),
    ("RNN hx shape", lambda L: L.nn.RNN(4, 8)(_x(L, 2, 3, 4), _x(L, 1, 3, 7))),
    ("RNN hx rank", lambda L: L.nn.RNN(4, 8)(_x(L, 2, 3, 4), _x(L, 3, 8))),
    ("GRU batch_first hx batch", lambda L: L.nn.GRU(4, 8, batch_first=True)(_x(L, 2, 3, 4), _x(L, 1, 3, 8))),
    ("LSTM hx not a pair", lambda L: L.nn.LSTM(4, 8)(_x(L, 2, 3, 4), 5)),
    ("LSTM c0 shape", lambda L: L.nn.LSTM(4, 8)(_x(L, 2, 3, 4), (_x(L, 1, 3, 8), _x(L, 1, 3, 7)))),
    ("RNNCell input size", lambda L: L.nn.RNNCell(4, 8)(_x(L, 2, 5))),
    ("RNNCell 3D input", lambda L: L.nn.RNNCell(4, 8)(_x(L, 2, 3, 4))),
    ("RNNCell hx batch", lambda L: L.nn.RNNCell(4, 8)(_x(L, 2, 4), _x(L, 3, 8))),
    ("GRUCell hx size", lambda L: L.nn.GRUCell(4, 8)(_x(L, 2, 4), _x(L, 2, 7))),
    ("LSTMCell c size", lambda L: L.nn.LSTMCell(4, 8)(_x(L, 2, 4), (_x(L, 2, 8), _x(L, 2, 7)))),
    ("RNNCell bad nonlinearity", lambda L: L.nn.RNNCell(4, 8, nonlinearity="gelu")(_x(L, 2, 4))),
    # embedding bags and one_hot
    (
        "embedding_bag 2D input with offsets",
        lambda L: L.nn.functional.embedding_bag(L.tensor([[0, 1]]), _x(L, 4, 3), L.tensor([0])),
    ),
    ("embedding_bag 3D input", lambda L: L.nn.functional.embedding_bag(L.tensor([[[0]]]), _x(L, 4, 3))),
    ("embedding_bag 1D input without offsets", lambda L: L.nn.functional.embedding_bag(L.tensor([0, 1]), _x(L, 4, 3))),
    (
        "embedding_bag 2D offsets",
        lambda L: L.nn.functional.embedding_bag(L.tensor([0, 1]), _x(L, 4, 3), L.tensor([[0]])),
    ),
    (
        "embedding_bag bad mode",
        lambda L: L.nn.functional.embedding_bag(L.tensor([0, 1]), _x(L, 4, 3), L.tensor([0]), mode="min"),
    ),
    (
        "embedding_bag per_sample_weights with mean",
        lambda L: L.nn.functional.embedding_bag(
            L.tensor([0, 1]), _x(L, 4, 3), L.tensor([0]), mode="mean", per_sample_weights=_x(L, 2)
        ),
    ),
    (
        "embedding_bag per_sample_weights shape",
        lambda L: L.nn.functional.embedding_bag(
            L.tensor([0, 1]), _x(L, 4, 3), L.tensor([0]), mode="sum", per_sample_weights=_x(L, 3)
        ),
    ),
    (
        "embedding_bag first offset",
        lambda L: L.nn.functional.embedding_bag(L.tensor([0, 1]), _x(L, 4, 3), L.tensor([1])),
    ),
    (
        "embedding_bag last offset",
        lambda L: L.nn.functional.embedding_bag(L.tensor([0, 1]), _x(L, 4, 3), L.tensor([0, 5])),
    ),
    (
        "embedding_bag index out of range",
        lambda L: L.nn.functional.embedding_bag(L.tensor([0, 9]), _x(L, 4, 3), L.tensor([0])),
    ),
    (
        "embedding_bag float indices",
        lambda L: L.nn.functional.embedding_bag(L.tensor([0.0, 1.0]), _x(L, 4, 3), L.tensor([0])),
    ),
    ("embedding_bag 1D weight", lambda L: L.nn.functional.embedding_bag(L.tensor([0, 1]), _x(L, 4), L.tensor([0]))),
    (
        "embedding_bag empty offsets with include_last_offset",
        lambda L: L.nn.functional.embedding_bag(
            L.tensor([0, 1]), _x(L, 4, 3), L.tensor([], dtype=L.int64), include_last_offset=True
        ),
    ),
    ("EmbeddingBag bad mode", lambda L: L.nn.EmbeddingBag(4, 3, mode="min")(L.tensor([[0, 1]]))),
    ("EmbeddingBag padding_idx out of range", lambda L: L.nn.EmbeddingBag(4, 3, padding_idx=4)),
    ("EmbeddingBag _weight shape", lambda L: L.nn.EmbeddingBag(4, 3, _weight=_x(L, 3, 3))),
    ("EmbeddingBag.from_pretrained 1D", lambda L: L.nn.EmbeddingBag.from_pretrained(_x(L, 3))),
    ("EmbeddingBag negative num_embeddings", lambda L: L.nn.EmbeddingBag(-1, 3)),
    ("EmbeddingBag index out of range", lambda L: L.nn.EmbeddingBag(4, 3)(L.tensor([[0, 7]]))),
    ("one_hot float input", lambda L: L.nn.functional.one_hot(L.tensor([0.0, 1.0]), 3)),
    ("one_hot negative class", lambda L: L.nn.functional.one_hot(L.tensor([-1, 1]), 3)),
    ("one_hot class too large", lambda L: L.nn.functional.one_hot(L.tensor([0, 3]), 3)),
    ("one_hot empty without num_classes", lambda L: L.nn.functional.one_hot(L.tensor([], dtype=L.int64))),
    # transformers
    ("TransformerEncoderLayer bad activation", lambda L: L.nn.TransformerEncoderLayer(8, 2, activation="tanh")),
    ("TransformerDecoderLayer bad activation", lambda L: L.nn.TransformerDecoderLayer(8, 2, activation="tanh")),
    ("TransformerDecoderLayer negative dim_feedforward", lambda L: L.nn.TransformerDecoderLayer(8, 2, -1)),
    ("TransformerDecoderLayer float dim_feedforward", lambda L: L.nn.TransformerDecoderLayer(8, 2, 2.5)),
    ("TransformerEncoderLayer negative dim_feedforward", lambda L: L.nn.TransformerEncoderLayer(8, 2, -1)),
    (
        "TransformerEncoder float num_layers",
        lambda L: L.nn.TransformerEncoder(L.nn.TransformerEncoderLayer(8, 2), 2.0, enable_nested_tensor=False),
    ),
    ("Transformer batch mismatch", lambda L: L.nn.Transformer(8, 2, 1, 1, 16)(_x(L, 3, 2, 8), _x(L, 3, 4, 8))),
    ("Transformer feature mismatch", lambda L: L.nn.Transformer(8, 2, 1, 1, 16)(_x(L, 3, 2, 8), _x(L, 3, 2, 6))),
    ("generate_square_subsequent_mask negative", lambda L: L.nn.Transformer.generate_square_subsequent_mask(-1)),
    ("TransformerEncoderLayer mask shape", lambda L: L.nn.TransformerEncoderLayer(8, 2)(_x(L, 3, 2, 8), _x(L, 2, 2))),
    # nn.init
    ("calculate_gain unknown", lambda L: L.nn.init.calculate_gain("swish")),
    ("calculate_gain bad slope", lambda L: L.nn.init.calculate_gain("leaky_relu", "x")),
    ("kaiming_uniform_ 1D", lambda L: L.nn.init.kaiming_uniform_(_x(L, 3))),
    ("xavier_normal_ 1D", lambda L: L.nn.init.xavier_normal_(_x(L, 3))),
    ("kaiming_normal_ bad mode", lambda L: L.nn.init.kaiming_normal_(_x(L, 3, 3), mode="fan_avg")),
    ("kaiming_uniform_ bad nonlinearity", lambda L: L.nn.init.kaiming_uniform_(_x(L, 3, 3), nonlinearity="swish")),
    ("uniform_ a above b", lambda L: L.nn.init.uniform_(_x(L, 3), 2.0, 1.0)),
    ("normal_ negative std", lambda L: L.nn.init.normal_(_x(L, 3), 0.0, -1.0)),
    ("normal_ NaN std", lambda L: L.nn.init.normal_(_x(L, 3), 0.0, float("nan"))),
    ("uniform_ NaN bound", lambda L: L.nn.init.uniform_(_x(L, 3), float("nan"), 1.0)),
    ("uniform_ infinite bound", lambda L: L.nn.init.uniform_(_x(L, 3).double(), 0.0, float("inf"))),
    ("uniform_ bound beyond float32", lambda L: L.nn.init.uniform_(_x(L, 3), 0.0, 1e39)),
    ("uniform_ range beyond float32", lambda L: L.nn.init.uniform_(_x(L, 3), -3e38, 3e38)),
    ("uniform_ integer tensor reversed bounds", lambda L: L.nn.init.uniform_(L.ones(3, dtype=L.int64), 2.0, 1.0)),
    ("uniform_ integer tensor", lambda L: L.nn.init.uniform_(L.ones(3, dtype=L.int64))),
    ("normal_ integer tensor", lambda L: L.nn.init.normal_(L.ones(3, dtype=L.int64))),
    ("xavier_uniform_ integer tensor", lambda L: L.nn.init.xavier_uniform_(L.ones(3, 3, dtype=L.int64))),
    ("uniform_ string bound", lambda L: L.nn.init.uniform_(_x(L, 3), "a", 1.0)),
    ("constant_ string value", lambda L: L.nn.init.constant_(_x(L, 3), "a")),
    ("constant_ None value", lambda L: L.nn.init.constant_(_x(L, 3), None)),
    # Module API
    ("register_buffer dotted name", lambda L: L.nn.Module().register_buffer("a.b", _x(L, 2))),
    ("register_buffer empty name", lambda L: L.nn.Module().register_buffer("", _x(L, 2))),
    ("register_buffer non-string name", lambda L: L.nn.Module().register_buffer(1, _x(L, 2))),
    ("register_buffer non-tensor", lambda L: L.nn.Module().register_buffer("b", 5)),
    ("register_buffer existing attribute", lambda L: L.nn.Linear(2, 2).register_buffer("forward", _x(L, 2))),
    ("register_parameter plain tensor", lambda L: L.nn.Module().register_parameter("w", _x(L, 2))),
    ("register_parameter dotted name", lambda L: L.nn.Module().register_parameter("a.b", L.nn.Parameter(_x(L, 2)))),
    ("add_module dotted name", lambda L: L.nn.Module().add_module("a.b", L.nn.ReLU())),
    ("add_module non-module", lambda L: L.nn.Module().add_module("a", 5)),
    ("assign tensor to parameter", lambda L: setattr(L.nn.Linear(2, 2), "weight", _x(L, 2, 2))),
    ("load_state_dict missing key", lambda L: _load(L, {"weight": L.zeros(3, 2)})),
    (
        "load_state_dict unexpected key",
        lambda L: _load(L, {"weight": L.zeros(3, 2), "bias": L.zeros(3), "extra": L.zeros(1)}),
    ),
    ("load_state_dict shape mismatch", lambda L: _load(L, {"weight": L.zeros(2, 2), "bias": L.zeros(3)})),
    ("load_state_dict not a mapping", lambda L: _load(L, 5)),
    ("get_submodule bad path", lambda L: L.nn.Sequential(L.nn.ReLU()).get_submodule("0.inner")),
    ("get_parameter bad path", lambda L: L.nn.Sequential(L.nn.Linear(2, 2)).get_parameter("0.gamma")),
    ("get_parameter missing module", lambda L: L.nn.Sequential(L.nn.Linear(2, 2)).get_parameter("3.weight")),
    ("missing attribute", lambda L: L.nn.Linear(2, 2).gamma),
    ("to integer dtype", lambda L: L.nn.Linear(2, 2).to(L.int64)),
    ("to four positional arguments", lambda L: L.nn.Linear(2, 2).to("cpu", L.float32, False, 4)),
    ("to two dtypes", lambda L: L.nn.Linear(2, 2).to(L.float32, L.float64)),
    ("train non-bool", lambda L: L.nn.Linear(2, 2).train("yes")),
    ("forward not implemented", lambda L: L.nn.Module()(_x(L, 2))),
    # containers
    ("Sequential index out of range", lambda L: L.nn.Sequential(L.nn.ReLU())[3]),
    ("Sequential delete out of range", lambda L: L.nn.Sequential(L.nn.ReLU()).__delitem__(3)),
    ("Sequential non-module", lambda L: L.nn.Sequential(5)),
    ("ModuleList index out of range", lambda L: L.nn.ModuleList([L.nn.ReLU()])[2]),
    ("ModuleList append non-module", lambda L: L.nn.ModuleList().append(5)),
    ("ModuleList extend non-iterable", lambda L: L.nn.ModuleList().extend(5)),
    ("ModuleDict missing key", lambda L: L.nn.ModuleDict()["a"]),
    ("ModuleDict non-module value", lambda L: L.nn.ModuleDict({"a": 5})),
    ("ModuleDict update non-iterable", lambda L: L.nn.ModuleDict().update(5)),
    ("ModuleDict update bad pair", lambda L: L.nn.ModuleDict().update([("a", L.nn.ReLU(), 3)])),
    ("ParameterList index out of range", lambda L: L.nn.ParameterList([L.nn.Parameter(_x(L, 2))])[4]),
    ("ParameterList extend non-iterable", lambda L: L.nn.ParameterList().extend(5)),
    ("ParameterDict missing key", lambda L: L.nn.ParameterDict()["a"]),
    ("ParameterDict popitem empty", lambda L: L.nn.ParameterDict().popitem()),
    ("ParameterDict pop missing", lambda L: L.nn.ParameterDict().pop("a")),
    # padding
    ("pad odd length", lambda L: L.nn.functional.pad(_x(L, 2, 3), (1,))),
    ("pad too long", lambda L: L.nn.functional.pad(_x(L, 2, 3), (1, 1, 1, 1, 1, 1))),
    ("pad float amount", lambda L: L.nn.functional.pad(_x(L, 2, 3), (1.5, 1))),
    ("pad unknown mode", lambda L: L.nn.functional.pad(_x(L, 1, 2, 3), (1, 1), mode="mirror")),
    ("pad reflect too wide", lambda L: L.nn.functional.pad(_x(L, 1, 2, 3), (3, 0), mode="reflect")),
    ("pad reflect 1D input", lambda L: L.nn.functional.pad(_x(L, 3), (1, 1), mode="reflect")),
    ("pad circular wraps twice", lambda L: L.nn.functional.pad(_x(L, 1, 2, 3), (4, 0), mode="circular")),
    ("pad replicate with value", lambda L: L.nn.functional.pad(_x(L, 1, 2, 3), (1, 1), mode="replicate", value=1.0)),
    ("pad crops too much", lambda L: L.nn.functional.pad(_x(L, 2, 3), (-2, -2))),
    ("ReflectionPad2d too wide", lambda L: L.nn.ReflectionPad2d(3)(_x(L, 1, 1, 2, 2))),
    # upsampling
    ("interpolate neither size nor scale", lambda L: L.nn.functional.interpolate(_x(L, 1, 1, 4))),
    ("interpolate size and scale", lambda L: L.nn.functional.interpolate(_x(L, 1, 1, 4), size=8, scale_factor=2.0)),
    (
        "interpolate align_corners with nearest",
        lambda L: L.nn.functional.interpolate(_x(L, 1, 1, 4), size=8, align_corners=True),
    ),
    ("interpolate unknown mode", lambda L: L.nn.functional.interpolate(_x(L, 1, 1, 4), size=8, mode="cubic")),
    ("interpolate bilinear on 3D", lambda L: L.nn.functional.interpolate(_x(L, 1, 1, 4), size=8, mode="bilinear")),
    ("interpolate 2D input", lambda L: L.nn.functional.interpolate(_x(L, 1, 4), size=8)),
    ("interpolate size rank", lambda L: L.nn.functional.interpolate(_x(L, 1, 1, 4, 4), size=(8, 8, 8))),
    ("interpolate zero output", lambda L: L.nn.functional.interpolate(_x(L, 1, 1, 4), size=0)),
    (
        "interpolate 2D input, nearest with align_corners",
        lambda L: L.nn.functional.interpolate(_x(L, 1, 4), size=2, align_corners=True),
    ),
    ("interpolate integer input without size", lambda L: L.nn.functional.interpolate(L.ones(1, 1, 4, dtype=L.int64))),
    ("interpolate bilinear on 3D without size", lambda L: L.nn.functional.interpolate(_x(L, 1, 1, 4), mode="bilinear")),
    (
        "interpolate unknown mode with align_corners",
        lambda L: L.nn.functional.interpolate(_x(L, 1, 1, 4), size=2, mode="cubic", align_corners=True),
    ),
    (
        "interpolate antialias with nearest",
        lambda L: L.nn.functional.interpolate(_x(L, 1, 1, 4, 4), size=2, antialias=True),
    ),
    (
        "interpolate antialias bilinear on 3D",
        lambda L: L.nn.functional.interpolate(_x(L, 1, 1, 4), size=2, mode="bilinear", antialias=True),
    ),
    (
        "interpolate recompute with size",
        lambda L: L.nn.functional.interpolate(_x(L, 1, 1, 4), size=8, recompute_scale_factor=True),
    ),
    ("pixel_shuffle channels", lambda L: L.nn.functional.pixel_shuffle(_x(L, 1, 3, 2, 2), 2)),
    ("pixel_shuffle 2D input", lambda L: L.nn.functional.pixel_shuffle(_x(L, 4, 2), 2)),
    ("pixel_unshuffle size", lambda L: L.nn.functional.pixel_unshuffle(_x(L, 1, 1, 3, 4), 2)),
    ("pixel_shuffle zero factor", lambda L: L.nn.functional.pixel_shuffle(_x(L, 1, 4, 2, 2), 0)),
    ("Upsample neither", lambda L: L.nn.Upsample()(_x(L, 1, 1, 4))),
    ("Upsample string scale_factor", lambda L: L.nn.Upsample(scale_factor="twice")),
    ("Upsample list scale_factor", lambda L: L.nn.Upsample(scale_factor=[2.0, object()])),
    # activations
    ("hardtanh min above max", lambda L: L.nn.functional.hardtanh(_x(L, 3), 2.0, 1.0)),
    ("Hardtanh min above max", _hardtanh_module),
    ("Hardtanh equal bounds", lambda L: L.nn.Hardtanh(1.0, 1.0)),
    ("glu odd dim", lambda L: L.nn.functional.glu(_x(L, 3))),
    ("glu dim out of range", lambda L: L.nn.functional.glu(_x(L, 4), dim=2)),
    ("glu scalar", lambda L: L.nn.functional.glu(L.tensor(1.0))),
    ("GLU odd dim", lambda L: L.nn.GLU()(_x(L, 2, 3))),
    ("PReLU channel mismatch", lambda L: L.nn.PReLU(3)(_x(L, 2, 4))),
    ("PReLU zero parameters", lambda L: L.nn.PReLU(0)(_x(L, 2, 4))),
    ("PReLU negative parameters", lambda L: L.nn.PReLU(-1)),
    ("prelu 2D weight", lambda L: L.nn.functional.prelu(_x(L, 2, 4), _x(L, 2, 2))),
    ("Softmax2d 2D input", lambda L: L.nn.Softmax2d()(_x(L, 2, 2))),
    ("celu zero alpha", lambda L: L.nn.functional.celu(_x(L, 3), alpha=0.0)),
    ("softshrink negative lambda", lambda L: L.nn.functional.softshrink(_x(L, 3), -1.0)),
    ("softshrink infinite lambda", lambda L: L.nn.functional.softshrink(_x(L, 3), float("inf"))),
    ("Softshrink NaN lambda", lambda L: L.nn.Softshrink(float("nan"))(_x(L, 3))),
    ("Unflatten sizes", lambda L: L.nn.Unflatten(1, (2, 2))(_x(L, 3, 5))),
    ("Unflatten dim out of range", lambda L: L.nn.Unflatten(3, (1, 5))(_x(L, 3, 5))),
    ("Unflatten bad sizes type", lambda L: L.nn.Unflatten(1, 5)),
    ("softmin non-tensor", lambda L: L.nn.functional.softmin([1.0], 0)),
    # nn.utils
    (
        "clip_grad_norm_ non-finite",
        lambda L: L.nn.utils.clip_grad_norm_(_with_grads(L, float("inf")), 1.0, error_if_nonfinite=True),
    ),
    ("clip_grad_norm_ bad norm_type", lambda L: L.nn.utils.clip_grad_norm_(_with_grads(L, 1.0), 1.0, norm_type="l2")),
    ("clip_grad_norm_ None norm_type", lambda L: L.nn.utils.clip_grad_norm_(_with_grads(L, 1.0), 1.0, norm_type=None)),
    ("clip_grad_norm_ string max_norm", lambda L: L.nn.utils.clip_grad_norm_(_with_grads(L, 1.0), "a")),
    ("clip_grad_norm_ no grads string max_norm", lambda L: L.nn.utils.clip_grad_norm_(_linear_params(L), "a")),
    ("get_total_norm bad norm_type", lambda L: L.nn.utils.get_total_norm([_x(L, 2)], "l2")),
    ("clip_grad_value_ string clip_value", lambda L: L.nn.utils.clip_grad_value_(_with_grads(L, 1.0), "x")),
    ("clip_grad_value_ None clip_value", lambda L: L.nn.utils.clip_grad_value_(_with_grads(L, 1.0), None)),
    ("parameters_to_vector empty", lambda L: L.nn.utils.parameters_to_vector([])),
    (
        "vector_to_parameters short vector",
        lambda L: L.nn.utils.vector_to_parameters(_x(L, 3), [L.nn.Parameter(_x(L, 2, 2))]),
    ),
    (
        "vector_to_parameters non-tensor",
        lambda L: L.nn.utils.vector_to_parameters([1.0, 2.0], [L.nn.Parameter(_x(L, 2))]),
    ),
]


@pytest.mark.parametrize(("name", "call"), CASES, ids=[name for name, _ in CASES])
def test_same_exception_class_as_pytorch(name, call):
    assert_same_class_as_torch(name, call)
