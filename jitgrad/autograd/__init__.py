"""The graph layer: nodes, saved tensors, grad mode, custom Functions, backward/grad."""
from .api import backward, grad
from .function import Function, FunctionCtx
from .grad_mode import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from .node import AccumulateGrad, Node, SavedTensor
from . import forward_ad
from .anomaly import (detect_anomaly, is_anomaly_check_nan_enabled, is_anomaly_enabled,
                      set_detect_anomaly)
from .gradcheck import GradcheckError, gradcheck, gradgradcheck

__all__ = ["backward", "grad", "Function", "FunctionCtx", "enable_grad", "is_grad_enabled",
           "no_grad", "set_grad_enabled", "AccumulateGrad", "Node", "SavedTensor", "forward_ad",
           "detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled",
           "is_anomaly_check_nan_enabled", "gradcheck", "gradgradcheck", "GradcheckError"]
