"""``jitgrad.nn.utils``: gradient clipping, flat parameter vectors, parametrizations,
weight/spectral normalisation, conv/linear + batch-norm fusion, ``skip_init`` and the
deprecated ``stateless.functional_call``
(PyTorch's ``torch.nn.utils``)."""
from . import parametrizations, parametrize, stateless
from .clip_grad import (clip_grad_norm, clip_grad_norm_, clip_grad_value_,
                        clip_grads_with_norm_, get_total_norm)
from .convert_parameters import parameters_to_vector, vector_to_parameters
from .fusion import (fuse_conv_bn_eval, fuse_conv_bn_weights, fuse_linear_bn_eval,
                     fuse_linear_bn_weights)
from .init import skip_init
from .spectral_norm import remove_spectral_norm, spectral_norm
from .weight_norm import remove_weight_norm, weight_norm

__all__ = ["clip_grad_norm_", "clip_grad_norm", "clip_grad_value_", "clip_grads_with_norm_",
           "get_total_norm", "parameters_to_vector", "vector_to_parameters",
           "fuse_conv_bn_eval", "fuse_conv_bn_weights", "fuse_linear_bn_eval",
           "fuse_linear_bn_weights", "skip_init", "weight_norm", "remove_weight_norm",
           "spectral_norm", "remove_spectral_norm", "parametrize", "parametrizations",
           "stateless"]
