"""``minigrad.nn.utils``, as ``torch.nn.utils``: gradient clipping and parameter/vector conversion."""

from minigrad.nn.utils.clip_grad import clip_grad_norm_, clip_grad_value_, clip_grads_with_norm_, get_total_norm
from minigrad.nn.utils.convert_parameters import parameters_to_vector, vector_to_parameters

__all__ = [
    "clip_grad_norm_", "clip_grad_value_", "clip_grads_with_norm_", "get_total_norm", "parameters_to_vector",
    "vector_to_parameters",
]
