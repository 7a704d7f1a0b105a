"""Neural-network building blocks (``mg.nn``), mirroring ``torch.nn``.

``Module`` and ``Parameter`` are the base; layers, containers and losses
are built on ``minigrad.nn.functional`` (``import minigrad.nn.functional as F``);
``minigrad.nn.init`` holds the initializers.
"""

from minigrad.nn import functional, init, utils
from minigrad.nn.activation import ELU, Hardtanh, LeakyReLU, LogSoftmax, ReLU6, SiLU, Softmax, Softmin, Unflatten
from minigrad.nn.alpha_dropout import AlphaDropout, FeatureAlphaDropout
from minigrad.nn.attention import MultiheadAttention
from minigrad.nn.bilinear import Bilinear
from minigrad.nn.buffer import Buffer
from minigrad.nn.channel_activations import GLU, PReLU, Softmax2d
from minigrad.nn.channel_shuffle import ChannelShuffle
from minigrad.nn.containers import ModuleDict, ParameterDict, ParameterList
from minigrad.nn.conv import Conv1d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from minigrad.nn.ctc_loss import CTCLoss
from minigrad.nn.distance import CosineSimilarity, PairwiseDistance
from minigrad.nn.embedding_bag import EmbeddingBag
from minigrad.nn.embedding_losses import HingeEmbeddingLoss, TripletMarginLoss, TripletMarginWithDistanceLoss
from minigrad.nn.fold import Fold, Unfold
from minigrad.nn.group_norm import GroupNorm, InstanceNorm1d, InstanceNorm2d, InstanceNorm3d
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
from minigrad.nn.local_response_norm import LocalResponseNorm
from minigrad.nn.loss import CrossEntropyLoss, MSELoss, NLLLoss
from minigrad.nn.lp_pooling import LPPool1d, LPPool2d
from minigrad.nn.margin_losses import CosineEmbeddingLoss, MarginRankingLoss, SoftMarginLoss
from minigrad.nn.module import Module
from minigrad.nn.multiclass_losses import MultiLabelMarginLoss, MultiLabelSoftMarginLoss, MultiMarginLoss
from minigrad.nn.normalization import BatchNorm1d, BatchNorm2d, BatchNorm3d, Dropout1d, Dropout2d, Dropout3d
from minigrad.nn.padding import (
    CircularPad1d,
    CircularPad2d,
    CircularPad3d,
    ConstantPad1d,
    ConstantPad2d,
    ConstantPad3d,
    ReflectionPad1d,
    ReflectionPad2d,
    ReflectionPad3d,
    ReplicationPad1d,
    ReplicationPad2d,
    ReplicationPad3d,
    ZeroPad1d,
    ZeroPad2d,
    ZeroPad3d,
)
from minigrad.nn.parameter import Parameter
from minigrad.nn.pointwise_activations import (
    CELU,
    SELU,
    Hardshrink,
    Hardsigmoid,
    Hardswish,
    LogSigmoid,
    Mish,
    Softplus,
    Softshrink,
    Softsign,
    Tanhshrink,
    Threshold,
)
from minigrad.nn.pooling import (
    AdaptiveAvgPool1d,
    AdaptiveAvgPool2d,
    AdaptiveMaxPool1d,
    AdaptiveMaxPool2d,
    AvgPool1d,
    AvgPool2d,
    MaxPool1d,
    MaxPool2d,
)
from minigrad.nn.pooling3d import AdaptiveAvgPool3d, AdaptiveMaxPool3d, AvgPool3d, MaxPool3d
from minigrad.nn.probability_losses import BCELoss, BCEWithLogitsLoss, KLDivLoss
from minigrad.nn.regression_losses import GaussianNLLLoss, HuberLoss, L1Loss, PoissonNLLLoss, SmoothL1Loss
from minigrad.nn.rms_norm import RMSNorm
from minigrad.nn.rnn import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNBase, RNNCell, RNNCellBase
from minigrad.nn.rrelu import RReLU
from minigrad.nn.transformer import TransformerEncoder, TransformerEncoderLayer
from minigrad.nn.transformer_decoder import Transformer, TransformerDecoder, TransformerDecoderLayer
from minigrad.nn.unpooling import MaxUnpool1d, MaxUnpool2d
from minigrad.nn.upsampling import (
    PixelShuffle,
    PixelUnshuffle,
    Upsample,
    UpsamplingBilinear2d,
    UpsamplingNearest2d,
)

__all__ = [
    "Module", "Parameter", "functional", "init", "Identity", "Linear", "Conv2d", "Embedding", "LayerNorm",
    "Dropout", "ReLU", "Tanh", "GELU", "Sigmoid", "Flatten", "Sequential", "ModuleList", "MSELoss",
    "CrossEntropyLoss", "NLLLoss",
    "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell", "RNNBase", "RNN", "LSTM", "GRU", "MultiheadAttention",
    "TransformerEncoderLayer", "TransformerEncoder",
    "MaxPool1d", "MaxPool2d", "AvgPool1d", "AvgPool2d", "AdaptiveAvgPool1d", "AdaptiveAvgPool2d",
    "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "Dropout1d",
    "Dropout2d", "Softmax", "LogSoftmax", "Softmin", "LeakyReLU", "ELU", "SiLU", "Hardtanh", "ReLU6",
    "Unflatten", "EmbeddingBag", "utils",
]
__all__ += ["Buffer", "ModuleDict", "ParameterDict", "ParameterList"]
__all__ += ["Conv1d", "ConvTranspose1d", "ConvTranspose2d", "GroupNorm", "InstanceNorm1d", "InstanceNorm2d",
            "InstanceNorm3d", "ZeroPad1d", "ZeroPad2d", "ZeroPad3d", "ConstantPad1d", "ConstantPad2d", "ConstantPad3d",
            "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d",
            "ReplicationPad3d", "CircularPad1d", "CircularPad2d", "CircularPad3d", "Upsample", "UpsamplingNearest2d",
            "UpsamplingBilinear2d", "PixelShuffle", "PixelUnshuffle"]
__all__ += ["BCELoss", "BCEWithLogitsLoss", "KLDivLoss", "L1Loss", "SmoothL1Loss", "HuberLoss", "GaussianNLLLoss",
            "PoissonNLLLoss", "SoftMarginLoss", "MarginRankingLoss", "CosineEmbeddingLoss"]
__all__ += ["GLU", "PReLU", "Softmax2d", "CELU", "SELU", "Hardshrink", "Hardsigmoid", "Hardswish", "LogSigmoid",
            "Mish", "Softplus", "Softshrink", "Softsign", "Tanhshrink", "Threshold"]
__all__ += ["CosineSimilarity", "PairwiseDistance"]
__all__ += ["TransformerDecoderLayer", "TransformerDecoder", "Transformer"]
__all__ += ["Conv3d", "ConvTranspose3d", "MaxPool3d", "AvgPool3d", "AdaptiveAvgPool3d", "AdaptiveMaxPool3d", "LPPool1d",
            "LPPool2d", "MaxUnpool1d", "MaxUnpool2d"]
__all__ += ["RMSNorm", "LocalResponseNorm", "AlphaDropout", "FeatureAlphaDropout", "Dropout3d"]
__all__ += ["TripletMarginLoss", "TripletMarginWithDistanceLoss", "HingeEmbeddingLoss", "MultiMarginLoss",
            "MultiLabelMarginLoss", "MultiLabelSoftMarginLoss"]
__all__ += ["Bilinear", "Fold", "Unfold", "ChannelShuffle", "RReLU"]
__all__ += ["CTCLoss"]


def __getattr__(name):
    """``nn.SyncBatchNorm`` lives in minigrad_dist (it needs MPI); it is imported on first use, as PyTorch
    scripts write ``nn.SyncBatchNorm.convert_sync_batchnorm(model)``."""
    if name == "SyncBatchNorm":
        from minigrad_dist.sync_batchnorm import SyncBatchNorm  # noqa: PLC0415  (only MPI programs need it)

        return SyncBatchNorm
    raise AttributeError(f"module 'minigrad.nn' has no attribute {name!r}")
