"""RMSprop and Adagrad."""
from __future__ import annotations

import numpy as np

from ..ops.core import dispatch
from ..tensor import Tensor
from .optimizer import Optimizer, check_nonnegative


class RMSprop(Optimizer):
    """PyTorch's RMSprop. Per parameter, with ``d = g (+ weight_decay * p)``::

        s = alpha * s + (1 - alpha) * d^2
        a = alpha * a + (1 - alpha) * d;  avg = sqrt(s - a^2) + eps   (centered)
        avg = sqrt(s) + eps                                          (otherwise)
        b = momentum * b + d / avg;  p = p - lr * b                   (momentum > 0)
        p = p - lr * d / avg                                          (otherwise)

    State: ``step``, ``square_avg``, ``momentum_buffer`` (momentum > 0), ``grad_avg``
    (centered).
    """

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0,
                 centered=False, capturable=False, foreach=None, maximize=False,
                 differentiable=False):
        check_nonnegative(lr=lr, eps=eps, momentum=momentum, weight_decay=weight_decay,
                          alpha=alpha)
        if differentiable or capturable:
            raise NotImplementedError("differentiable/capturable optimizers are not supported")
        super().__init__(params, dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps,
                                      centered=centered, weight_decay=weight_decay,
                                      capturable=capturable, foreach=foreach, maximize=maximize,
                                      differentiable=differentiable))

    def step(self, closure=None):
        loss = self._closure(closure)
        for group in self.param_groups:
            momentum, centered = float(group["momentum"]), bool(group["centered"])
            for p in self._params_with_grad(group):
                state = self.state[p]
                if not state:
                    state["step"] = Tensor._make(np.zeros((), np.float32))
                    state["square_avg"] = self._zeros_state(p)
                    if momentum > 0:
                        state["momentum_buffer"] = self._zeros_state(p)
                    if centered:
                        state["grad_avg"] = self._zeros_state(p)
                self._step_count(state)
                # the state arrays are the step kernel's operands, updated in place
                empty = self._empty_flat(p)
                buf = (state["momentum_buffer"]._data.reshape(-1)  # device read: operand
                       if momentum > 0 else empty)
                gavg = state["grad_avg"]._data.reshape(-1) if centered else empty  # device read: op
                square_avg = state["square_avg"]._data.reshape(-1)  # device read: operand
                self._run("rmsprop", p, square_avg, gavg, buf,
                          float(group["lr"]), -1.0 if group["maximize"] else 1.0,
                          float(group["weight_decay"]), float(group["alpha"]),
                          float(group["eps"]), momentum, centered)
        return loss


class Adagrad(Optimizer):
    """PyTorch's Adagrad. Per parameter, at step ``t``, with ``d = g (+ weight_decay * p)``::

        clr = lr / (1 + (t - 1) * lr_decay)
        s = s + d^2
        p = p - clr * d / (sqrt(s) + eps)

    State (created with the optimizer): ``step`` and ``sum`` (starts at
    ``initial_accumulator_value``).
    """

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0,
                 eps=1e-10, foreach=None, *, maximize=False, differentiable=False, fused=None):
        check_nonnegative(lr=lr, lr_decay=lr_decay, weight_decay=weight_decay,
                          initial_accumulator_value=initial_accumulator_value, eps=eps)
        if differentiable:
            raise NotImplementedError("differentiable optimizers are not supported")
        super().__init__(params, dict(lr=lr, lr_decay=lr_decay, eps=eps,
                                      weight_decay=weight_decay,
                                      initial_accumulator_value=initial_accumulator_value,
                                      foreach=foreach, maximize=maximize,
                                      differentiable=differentiable, fused=fused))
        for group in self.param_groups:
            for p in group["params"]:
                self._init_state(p, group)

    def _init_state(self, p, group):
        state = self.state[p]
        state["step"] = Tensor._make(np.zeros((), np.float32))
        if p.is_cuda:
            state["sum"] = dispatch.full_like(p, group["initial_accumulator_value"])
        else:
            state["sum"] = Tensor._make(np.full_like(p._data,  # device read: shape, dtype
                                                     group["initial_accumulator_value"],
                                                     order="C"))

    def step(self, closure=None):
        loss = self._closure(closure)
        for group in self.param_groups:
            for p in self._params_with_grad(group):
                state = self.state[p]
                if not state:
                    self._init_state(p, group)
                t = self._step_count(state)
                clr = float(group["lr"]) / (1 + (t - 1) * float(group["lr_decay"]))
                self._run("adagrad", p, state["sum"]._data.reshape(-1), clr,  # device read: op
                          -1.0 if group["maximize"] else 1.0, float(group["weight_decay"]),
                          float(group["eps"]))
        return loss
