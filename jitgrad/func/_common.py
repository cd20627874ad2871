"""Helpers shared by the ``jitgrad.func`` transforms: NumPy in/out, argnums, detaching."""
from __future__ import annotations

import numpy as np

from ..autograd import forward_ad
from ..ops import creation
from ..tensor import Tensor
from . import _batching as batching
from ._pytree import tree_map


def numpy_mode(leaves) -> bool:
    """Whether a transform was called NumPy-style: arrays (or Python floats) and no Tensor
    among the inputs. Its results are then NumPy arrays too."""
    if any(isinstance(x, Tensor) for x in leaves):
        return False
    return any(isinstance(x, (np.ndarray, np.generic, float)) for x in leaves)


def to_tensor(x, fname: str):
    """``x`` as a Tensor (NumPy arrays and Python/NumPy numbers are converted, no copy of an
    array's data is kept by the caller)."""
    if isinstance(x, Tensor):
        return x
    if isinstance(x, (np.ndarray, np.generic, bool, int, float)):
        return creation.tensor(np.asarray(x))
    raise TypeError(f"{fname}: expected a Tensor or a NumPy array, got {type(x).__name__}")


def diff_input(x, fname: str, allow_complex: bool = True):
    """A tensor to differentiate with respect to: converted, and floating point or complex
    (Note [complex transforms]; ``allow_complex=False`` for the transforms that refuse them)."""
    t = to_tensor(x, fname)
    if t.dtype.is_complex and not allow_complex:
        raise RuntimeError(f"{fname}: Expected all inputs to be real but received a complex "
                           f"tensor ({t.dtype.name}): the Jacobian of a function of complex "
                           "inputs is not a complex matrix unless the function is holomorphic "
                           "(use jacrev for real outputs, jvp for directional derivatives, "
                           "jitgrad.numpy.functional.holomorphic_grad for holomorphic ones)")
    if not t.dtype.is_differentiable:
        raise TypeError(f"{fname}: can only differentiate with respect to floating point or "
                        f"complex inputs, got {t.dtype.name} (convert the argument with "
                        ".double())")
    return t


# Note [complex transforms]: complex inputs follow PyTorch's convention ("Autograd for Complex
# Numbers", Note [complex support] in ops/core/operands.py). For a real L of z = x + iy the gradient
# is dL/dx + i dL/dy (2 dL/d conj(z)): ``grad(lambda z: abs(z)**2)(z) == 2 z``. ``vjp`` of a
# complex output with cotangent v gives v * conj(f'(z)) for holomorphic f (the vector-Jacobian
# product of the real linear map, as ``autograd.grad``); ``jvp`` gives f'(z) t (real tangents
# are cast to the primal's complex dtype). ``grad`` needs a real scalar output, ``jacrev`` real
# outputs: its rows are then the gradients of the outputs. A complex output of jacrev and any
# complex input of jacfwd (hence hessian) raise as torch.func does: those "Jacobians" would hold
# only the derivative along the real axis, silently.
def check_real_outputs(outs, fname: str) -> None:
    """Refuse complex outputs (Note [complex transforms])."""
    for k, o in enumerate(outs):
        if isinstance(o, Tensor) and o.dtype.is_complex:
            raise RuntimeError(f"{fname}: Expected all outputs to be real but received a "
                               f"complex tensor ({o.dtype.name}) at flattened output {k}: its "
                               "Jacobian is not a complex matrix unless the function is "
                               "holomorphic (use vjp with cotangents v and i*v, or "
                               "jitgrad.numpy.functional.holomorphic_grad)")


def to_numpy(x):
    if isinstance(x, Tensor):
        if type(x) is batching.BatchedTensor:
            raise batching.BatchingRuleError("a NumPy-style transform returned a batched tensor")
        return np.array(x._host("jitgrad.func (a NumPy-style result)"))
    return x


def from_numpy_tree(tree):
    return tree_map(to_numpy, tree)


def argnums_tuple(argnums, n_args: int, fname: str) -> tuple:
    """``(positions, as_tuple)`` for ``argnums`` (an int or a tuple of ints, negatives wrap)."""
    as_tuple = isinstance(argnums, (tuple, list))
    nums = tuple(argnums) if as_tuple else (argnums,)
    if as_tuple and not nums:
        raise RuntimeError(f"{fname}: argnums must be non-empty")
    out = []
    for a in nums:
        if not isinstance(a, int) or isinstance(a, bool):
            raise RuntimeError(f"{fname}: argnums must be int or Tuple[int, ...], got "
                               f"{type(a).__name__}")
        if not -n_args <= a < n_args:
            raise RuntimeError(f"{fname}: Got argnums={a}, but only {n_args} positional inputs")
        out.append(a % n_args)
    if len(set(out)) != len(out):
        raise RuntimeError(f"{fname}: argnums must be unique, got {argnums}")
    return tuple(out), as_tuple


def split_aux(out, fname: str):
    if not (isinstance(out, tuple) and len(out) == 2):
        raise RuntimeError(f"{fname}: output of function f should be a tuple: (output, aux) if "
                           "has_aux is True")
    return out


def detach_keep_tangents(t):
    """``t`` without reverse-mode history but with its forward-mode tangents (and batching);
    anything that is not a Tensor as it is."""
    return forward_ad.detach_keep_tangents(t) if isinstance(t, Tensor) else t


def zeros_like_logical(x):
    """Zeros with the (example) shape and dtype of ``x``."""
    return creation.zeros(tuple(x.shape), dtype=x.dtype)
