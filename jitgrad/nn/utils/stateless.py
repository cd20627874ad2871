"""``functional_call`` under its old home (PyTorch's deprecated
``torch.nn.utils.stateless``)."""
from __future__ import annotations

import warnings

from ... import func

__all__ = ["functional_call"]


def functional_call(module, parameters_and_buffers, args=None, kwargs=None, *,
                    tie_weights=True, strict=False):
    """Deprecated: ``jitgrad.func.functional_call`` (this spelling warns, as PyTorch). Call
    ``module`` with ``parameters_and_buffers`` (a ``{dotted name: tensor}`` dict) standing in
    for its own parameters and buffers."""
    warnings.warn("`jitgrad.nn.utils.stateless.functional_call` is deprecated (as in "
                  "PyTorch 2.0); use `jitgrad.func.functional_call` instead, which is a "
                  "drop-in replacement.", FutureWarning, stacklevel=2)
    return func.functional_call(module, parameters_and_buffers, args, kwargs,
                                tie_weights=tie_weights, strict=strict)
