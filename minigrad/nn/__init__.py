"""Neural-network building blocks (``mg.nn``), mirroring ``torch.nn``.

``Module`` and ``Parameter`` are the base; layers, containers and losses
are built on ``minigrad.nn.functional`` (``import minigrad.nn.functional as F``);
``minigrad.nn.init`` holds the initializers.
"""

from minigrad.nn import functional, init
from minigrad.nn.attention import MultiheadAttention
from minigrad.nn.layers import (
    GELU,
    Conv2d,
    Dropout,
    Embedding,
    Flatten,
    Identity,
    LayerNorm,
    Linear,
    ModuleList,
    ReLU,
    Sequential,
    Sigmoid,
    Tanh,
)
from minigrad.nn.loss import CrossEntropyLoss, MSELoss, NLLLoss
from minigrad.nn.module import Module
from minigrad.nn.parameter import Parameter
from minigrad.nn.rnn import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNBase, RNNCell, RNNCellBase
from minigrad.nn.transformer import TransformerEncoder, TransformerEncoderLayer

__all__ = [
    "Module", "Parameter", "functional", "init", "Identity", "Linear", "Conv2d", "Embedding", "LayerNorm",
    "Dropout", "ReLU", "Tanh", "GELU", "Sigmoid", "Flatten", "Sequential", "ModuleList", "MSELoss",
    "CrossEntropyLoss", "NLLLoss",
    "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell", "RNNBase", "RNN", "LSTM", "GRU", "MultiheadAttention",
    "TransformerEncoderLayer", "TransformerEncoder",
]
