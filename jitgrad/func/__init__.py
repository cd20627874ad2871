"""Function transforms (PyTorch's ``torch.func``, JAX's core transforms).

``grad``, ``grad_and_value``, ``value_and_grad``, ``vjp``, ``jvp``, ``linearize``, ``hvp``,
``jacrev``, ``jacfwd``, ``hessian``, ``vmap`` and ``functional_call``, with the module helpers
``stack_module_state`` (ensembling), ``functionalize``, ``debug_unwrap`` and
``replace_all_batch_norm_modules_``. They take functions of
tensors (or pytrees of tuples, lists and dicts of tensors) and compose freely
(``vmap(grad(f))``, ``jacfwd(jacrev(f))``, ``grad(grad(f))``). Called with NumPy arrays instead of
tensors, they return NumPy arrays. See docs/func.md.
"""
from ._api import grad, grad_and_value, hvp, jvp, linearize, value_and_grad, vjp
from ._batching import BatchedTensor, BatchingRuleError
from ._functional_call import functional_call
from ._jacobian import hessian, jacfwd, jacrev
from ._losses import nll_loss_one_hot
from ._module_utils import (debug_unwrap, functionalize, replace_all_batch_norm_modules_,
                            stack_module_state)
from ._pytree import tree_flatten, tree_map, tree_unflatten
from ._vmap import vmap
from ..autograd.gradcheck import set_batching_transforms as _register_for_gradcheck

_register_for_gradcheck(vmap, jacfwd)  # the transforms check_batched_grad runs

__all__ = ["grad", "grad_and_value", "value_and_grad", "vjp", "jvp", "linearize", "hvp",
           "jacrev", "jacfwd", "hessian", "vmap", "functional_call", "stack_module_state",
           "functionalize", "debug_unwrap", "replace_all_batch_norm_modules_", "nll_loss_one_hot",
           "BatchedTensor",
           "BatchingRuleError", "tree_flatten", "tree_unflatten", "tree_map"]
