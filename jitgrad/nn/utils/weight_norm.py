"""The hook-based ``weight_norm`` / ``remove_weight_norm`` (deprecated in PyTorch in favour
of ``parametrizations.weight_norm``): ``w = g v / ||v||`` recomputed before every forward."""
from __future__ import annotations

import warnings

from ..parameter import Parameter
from .parametrizations import norm_except_dim

__all__ = ["WeightNorm", "weight_norm", "remove_weight_norm"]


class WeightNorm:
    """The forward pre-hook that sets ``module.<name>`` from ``<name>_g`` and ``<name>_v``."""

    def __init__(self, name, dim):
        self.name = name
        self.dim = -1 if dim is None else dim

    def compute_weight(self, module):
        """``g v / ||v||`` from the module's ``<name>_g`` and ``<name>_v``."""
        g, v = getattr(module, self.name + "_g"), getattr(module, self.name + "_v")
        return v * (g / norm_except_dim(v, self.dim))

    @staticmethod
    def apply(module, name, dim):
        """Split ``module.<name>`` into ``<name>_g`` and ``<name>_v`` and install the hook."""
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, WeightNorm) and hook.name == name:
                raise RuntimeError(f"Cannot register two weight_norm hooks on the same "
                                   f"parameter {name}")
        fn = WeightNorm(name, dim)
        weight = getattr(module, name, None)
        if not isinstance(weight, Parameter):
            raise ValueError(f"weight_norm: Module '{module._get_name()}' has no parameter "
                             f"'{name}'")
        w = weight.detach()
        del module._parameters[name]
        module.register_parameter(name + "_g", Parameter(norm_except_dim(w, fn.dim).clone()))
        module.register_parameter(name + "_v", Parameter(w.clone()))
        setattr(module, name, fn.compute_weight(module))
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module):
        """Make ``<name>`` a plain Parameter again, holding the current weight."""
        weight = self.compute_weight(module).detach()
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        module.register_parameter(self.name, Parameter(weight))

    def __call__(self, module, inputs):
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module, name="weight", dim=0):
    """Deprecated: use ``parametrizations.weight_norm``. Replace ``module.<name>`` by
    ``<name>_g`` (magnitude: the 2-norm over every dim but ``dim``; ``dim=None`` one scalar)
    and ``<name>_v`` (direction), with ``w = g v / ||v||`` recomputed before every forward
    (Salimans & Kingma, 2016). Returns ``module``."""
    warnings.warn("`jitgrad.nn.utils.weight_norm` is deprecated in favor of "
                  "`jitgrad.nn.utils.parametrizations.weight_norm`.", FutureWarning, stacklevel=2)
    WeightNorm.apply(module, name, dim)
    return module


def remove_weight_norm(module, name="weight"):
    """Undo ``weight_norm``: ``module.<name>`` is a Parameter again. Returns ``module``."""
    for key, hook in list(module._forward_pre_hooks.items()):
        if isinstance(hook, WeightNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[key]
            return module
    raise ValueError(f"weight_norm of '{name}' not found in {module}")
