"""The hook-based ``spectral_norm`` / ``remove_spectral_norm`` (PyTorch's older API; see
``parametrizations.spectral_norm``): ``W / sigma(W)`` recomputed before every forward, with
``<name>_orig`` the trained weight and buffers ``<name>_u``, ``<name>_v`` the power-iteration
vectors."""
from __future__ import annotations

from ...graph.grad_mode import no_grad
from ..parameter import Parameter
from .parametrizations import (initial_singular_vectors, power_iteration_, spectral_sigma,
                              weight_to_matrix)

__all__ = ["SpectralNorm", "spectral_norm", "remove_spectral_norm"]


class SpectralNorm:
    """The forward pre-hook that sets ``module.<name>`` to ``<name>_orig / sigma``."""

    def __init__(self, name="weight", n_power_iterations=1, dim=0, eps=1e-12):
        self.name, self.dim, self.eps = name, dim, eps
        self.n_power_iterations = n_power_iterations

    def compute_weight(self, module, do_power_iteration):
        """``W / (u^T W v)`` after ``n_power_iterations`` updates of ``u``, ``v`` (when
        ``do_power_iteration``, i.e. in training mode)."""
        weight = getattr(module, self.name + "_orig")
        u, v = getattr(module, self.name + "_u"), getattr(module, self.name + "_v")
        mat = weight_to_matrix(weight, self.dim)
        if do_power_iteration:
            power_iteration_(mat, u, v, self.n_power_iterations, self.eps)
        return weight / spectral_sigma(mat, u, v)

    @staticmethod
    def apply(module, name, n_power_iterations, dim, eps):
        """Move ``module.<name>`` to ``<name>_orig``, add the ``u``/``v`` buffers (15 power
        iterations from random vectors) and install the hook."""
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, SpectralNorm) and hook.name == name:
                raise RuntimeError(f"Cannot register two spectral_norm hooks on the same "
                                   f"parameter {name}")
        weight = module._parameters.get(name)
        if weight is None:
            raise ValueError(f"spectral_norm: Module '{module._get_name()}' has no parameter "
                             f"'{name}'")
        if weight.ndim < 2:
            raise ValueError(f"spectral_norm: '{name}' must have at least 2 dims (got shape "
                             f"{tuple(weight.shape)})")
        fn = SpectralNorm(name, n_power_iterations, dim, eps)
        u, v = initial_singular_vectors(weight_to_matrix(weight.detach(), dim), eps)
        del module._parameters[name]
        module.register_parameter(name + "_orig", weight)
        with no_grad():
            setattr(module, name, weight * 1.0)
        module.register_buffer(name + "_u", u)
        module.register_buffer(name + "_v", v)
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module):
        """Make ``<name>`` a plain Parameter again, holding the normalised weight."""
        with no_grad():
            weight = self.compute_weight(module, do_power_iteration=False)
        delattr(module, self.name)
        del module._buffers[self.name + "_u"]
        del module._buffers[self.name + "_v"]
        del module._parameters[self.name + "_orig"]
        module.register_parameter(self.name, Parameter(weight.detach()))

    def __call__(self, module, inputs):
        setattr(module, self.name,
                self.compute_weight(module, do_power_iteration=module.training))


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """Spectral normalisation (Miyato et al., 2018) of ``module.<name>``: ``W / sigma(W)``,
    ``sigma`` estimated by power iteration on ``W`` reshaped to ``(W.shape[dim], -1)``
    (``dim``: 1 for transposed convolutions, else 0), updated in training mode. Returns
    ``module``."""
    if dim is None:
        dim = 1 if type(module).__name__.startswith("ConvTranspose") else 0
    SpectralNorm.apply(module, name, n_power_iterations, dim, eps)
    return module


def remove_spectral_norm(module, name="weight"):
    """Undo ``spectral_norm``. Returns ``module``."""
    for key, hook in list(module._forward_pre_hooks.items()):
        if isinstance(hook, SpectralNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[key]
            return module
    raise ValueError(f"spectral_norm of '{name}' not found in {module}")
