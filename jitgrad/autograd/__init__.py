"""Autograd's user API, above ops (docs/design.md "Layers", tests/test_layers.py). The graph
primitives it re-exports (Node, AccumulateGrad, SavedTensor, grad mode, anomaly mode, and the
modules ``grad_mode``, ``anomaly``, ``node``, ``version`` as attributes, PyTorch's
``torch.autograd.grad_mode``) live in ``jitgrad.graph``, below ops and the engine.

The API: ``api`` (backward, grad), ``function`` (custom Functions), ``gradcheck``,
``forward_ad``, ``transforms``. They import ops only inside functions (ops imports this
package, so a module-level import would be a cycle) and reach the Tensor type through ops. What
ops needs from them is handed over by registration: the transform dispatcher (``transforms``)
installs its hook with ``ops.upper.set_transform_hook`` while forward AD, vmap, checkpoint,
jitgrad.compile's tracer or anomaly mode's forward record (whose switch it registers with
``anomaly.set_forward_record_installer``) needs to see ops.
"""
import sys as _sys

from .api import backward, grad
from .function import Function, FunctionCtx
from ..graph.grad_mode import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from ..graph.node import AccumulateGrad, Node, SavedTensor
from . import forward_ad, transforms  # noqa: F401  (transforms: registers itself)
from ..graph.anomaly import (
    detect_anomaly, is_anomaly_check_nan_enabled, is_anomaly_enabled, set_detect_anomaly)
from .gradcheck import GradcheckError, gradcheck, gradgradcheck
from .inference import inference_mode, is_inference_mode_enabled
from . import graph  # noqa: F401  (torch.autograd.graph: saved-tensor hooks)
from .variable import Variable
from ..graph import anomaly, grad_mode, node, version  # noqa: F401  (torch.autograd.grad_mode)

# ... and importable by their old paths (``from jitgrad.autograd.grad_mode import no_grad``, as
# ``torch.autograd.grad_mode``): the same module objects
for _module in (anomaly, grad_mode, node, version):
    _sys.modules[f"{__name__}.{_module.__name__.rsplit('.', 1)[1]}"] = _module
del _module

__all__ = ["backward", "grad", "Function", "FunctionCtx", "enable_grad", "is_grad_enabled",
           "no_grad", "set_grad_enabled", "AccumulateGrad", "Node", "SavedTensor", "forward_ad",
           "detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled",
           "is_anomaly_check_nan_enabled", "gradcheck", "gradgradcheck", "GradcheckError",
           "inference_mode", "is_inference_mode_enabled", "Variable"]
