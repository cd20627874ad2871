"""The graph layer: nodes, saved tensors, grad mode, custom Functions, backward/grad."""
from .api import backward, grad
from .function import Function, FunctionCtx
from .grad_mode import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from .node import AccumulateGrad, Node, SavedTensor

__all__ = ["backward", "grad", "Function", "FunctionCtx", "enable_grad", "is_grad_enabled",
           "no_grad", "set_grad_enabled", "AccumulateGrad", "Node", "SavedTensor"]
