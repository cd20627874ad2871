"""Adam and AdamW."""
from __future__ import annotations

import math

import numpy as np

from ..tensor import Tensor
from .optimizer import Optimizer, check_nonnegative, tracing


class Adam(Optimizer):
    """PyTorch's Adam (Kingma & Ba, 2014). Per parameter, at step ``t``, with ``d = g``
    (``-g`` when ``maximize``), plus ``weight_decay * p`` (L2, coupled) unless decoupled::

        p = p * (1 - lr * weight_decay)          (decoupled weight decay: AdamW)
        m = m + (1 - beta1) * (d - m)
        v = beta2 * v + (1 - beta2) * d^2
        vmax = max(vmax, v); v_hat = vmax if amsgrad else v
        p = p - lr / (1 - beta1^t) * m / (sqrt(v_hat) / sqrt(1 - beta2^t) + eps)

    One fused kernel per parameter. State: ``step`` (float32 0-d), ``exp_avg``,
    ``exp_avg_sq`` and ``max_exp_avg_sq`` (amsgrad).
    """

    _decoupled_default = False

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 amsgrad=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False, fused=None, decoupled_weight_decay=None):
        check_nonnegative(lr=lr, eps=eps)
        for i in (0, 1):
            if not 0.0 <= betas[i] < 1.0:
                raise ValueError(f"Invalid beta parameter at index {i}: {betas[i]}")
        check_nonnegative(weight_decay=weight_decay)
        if differentiable or capturable:
            raise NotImplementedError("differentiable/capturable optimizers are not supported")
        if decoupled_weight_decay is None:
            decoupled_weight_decay = self._decoupled_default
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps,
                                      weight_decay=weight_decay, amsgrad=amsgrad,
                                      maximize=maximize, foreach=foreach, capturable=capturable,
                                      differentiable=differentiable, fused=fused,
                                      decoupled_weight_decay=decoupled_weight_decay))

    def step(self, closure=None):
        """One update of every parameter that has a gradient; returns ``closure()``'s loss."""
        hooks = tracing()
        if hooks is not None:  # Note [optimizers under compile]
            return self._traced_step(hooks, closure)
        loss = self._closure(closure)
        for group in self.param_groups:
            b1, b2 = (float(b) for b in group["betas"])
            amsgrad = bool(group["amsgrad"])
            for p in self._params_with_grad(group):
                state = self.state[p]
                if not state:
                    self._init_state(p, group, state)
                t = self._step_count(state)
                # the state arrays are the step kernel's operands, updated in place
                vmax = (state["max_exp_avg_sq"]._data.reshape(-1)  # device read: operand
                        if amsgrad else self._empty_flat(p))
                lr, wd = float(group["lr"]), float(group["weight_decay"])
                decoupled = bool(group["decoupled_weight_decay"])
                self._run("adam", p, state["exp_avg"]._data.reshape(-1),  # device read: operand
                          state["exp_avg_sq"]._data.reshape(-1), vmax,  # device read: operand
                          -1.0 if group["maximize"] else 1.0,
                          1.0 - lr * wd if decoupled else 1.0, 0.0 if decoupled else wd,
                          b1, b2, lr / (1.0 - b1 ** t), 1.0 / math.sqrt(1.0 - b2 ** t),
                          float(group["eps"]), amsgrad)
        return loss

    def _init_state(self, p, group, state):
        state["step"] = Tensor._make(np.zeros((), np.float32))
        state["exp_avg"] = self._zeros_state(p)
        state["exp_avg_sq"] = self._zeros_state(p)
        if group["amsgrad"]:
            state["max_exp_avg_sq"] = self._zeros_state(p)

    def _traced_update(self, p, group, state):
        """The fused kernel's update (``kernels/optim_updates.py``'s ``adam_at``) with Tensor
        ops, in its order of operations, for a trace (Note [optimizers under compile]); the
        bias corrections come from the ``step`` tensor, in float64 as eager's Python floats."""
        b1, b2 = (float(b) for b in group["betas"])
        lr, wd, eps = float(group["lr"]), float(group["weight_decay"]), float(group["eps"])
        decoupled = bool(group["decoupled_weight_decay"])
        step, m, v = state["step"], state["exp_avg"], state["exp_avg_sq"]
        step.add_(1)
        t = step.double()
        step_size = (lr / (1.0 - b1 ** t)).to(p.dtype)
        inv_bc2s = (1.0 / (1.0 - b2 ** t).sqrt()).to(p.dtype)
        if decoupled and lr * wd != 0.0:
            p.mul_(1.0 - lr * wd)
        d = -p.grad if group["maximize"] else p.grad
        if not decoupled and wd != 0.0:
            d = d + wd * p
        m.add_((d - m) * (1.0 - b1))
        v.mul_(b2).add_(d * (1.0 - b2) * d)
        if group["amsgrad"]:
            vmax = state["max_exp_avg_sq"]
            vmax.copy_(vmax.maximum(v))
            v = vmax
        p.sub_(m * step_size / (v.sqrt() * inv_bc2s + eps))


class AdamW(Adam):
    """Adam with decoupled weight decay (Loshchilov & Hutter, 2019): the parameter is first
    scaled by ``1 - lr * weight_decay``; ``weight_decay`` defaults to 0.01."""

    _decoupled_default = True

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2,
                 amsgrad=False, *, maximize=False, foreach=None, capturable=False,
                 differentiable=False, fused=None):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach,
                         maximize=maximize, capturable=capturable, differentiable=differentiable,
                         fused=fused, decoupled_weight_decay=True)
