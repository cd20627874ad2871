"""Adamax, NAdam, RAdam and Adadelta: PyTorch's update rules written with Tensor ops."""
from __future__ import annotations

import math

from .optimizer import TensorRuleOptimizer, check_nonnegative


def _check_betas(betas):
    for i in (0, 1):
        if not 0.0 <= betas[i] < 1.0:
            raise ValueError(f"Invalid beta parameter at index {i}: {betas[i]}")
    return tuple(float(b) for b in betas)


def refuse_unsupported(differentiable, capturable=False):
    if differentiable or capturable:
        raise NotImplementedError("differentiable/capturable optimizers are not supported")


def _moments(p, state, d, b1, b2, fresh):
    """Update and return Adam's first and second moments ``m += (1 - b1)(d - m)``,
    ``v = b2 v + (1 - b2) d^2``."""
    if fresh:
        state["exp_avg"] = TensorRuleOptimizer._zeros_state(p)
        state["exp_avg_sq"] = TensorRuleOptimizer._zeros_state(p)
    m, v = state["exp_avg"], state["exp_avg_sq"]
    m.add_(d - m, alpha=1.0 - b1)
    v.mul_(b2).add_(d * d, alpha=1.0 - b2)
    return m, v


def _decay(p, group, decoupled):
    """Decoupled weight decay (``p *= 1 - lr * weight_decay``) when asked; returns whether the
    coupled L2 term still goes into the gradient."""
    wd = float(group["weight_decay"])
    if decoupled and wd != 0.0:
        p.mul_(1.0 - float(group["lr"]) * wd)
    return not decoupled


class Adamax(TensorRuleOptimizer):
    """PyTorch's Adamax (Adam with the infinity norm; Kingma & Ba, 2014, section 7). At step
    ``t`` with ``d = g (+ weight_decay * p)``::

        m = b1 m + (1 - b1) d
        u = max(b2 u, |d| + eps)
        p = p - lr / (1 - b1^t) * m / u

    State: ``step``, ``exp_avg``, ``exp_inf``.
    """

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 foreach=None, *, maximize=False, differentiable=False, capturable=False):
        check_nonnegative(lr=lr, eps=eps, weight_decay=weight_decay)
        betas = _check_betas(betas)
        refuse_unsupported(differentiable, capturable)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                                      foreach=foreach, maximize=maximize,
                                      differentiable=differentiable, capturable=capturable))

    def _update(self, p, group, state, fresh):
        b1, b2 = (float(b) for b in group["betas"])
        if fresh:
            state["exp_avg"] = self._zeros_state(p)
            state["exp_inf"] = self._zeros_state(p)
        t = self._step_count(state)
        d = self._direction(p, group)
        m, u = state["exp_avg"], state["exp_inf"]
        m.add_(d - m, alpha=1.0 - b1)
        u.copy_((u * b2).maximum(d.abs() + float(group["eps"])))
        p.add_(m / u, alpha=-float(group["lr"]) / (1.0 - b1 ** t))


class NAdam(TensorRuleOptimizer):
    """PyTorch's NAdam (Adam with Nesterov momentum; Dozat, 2016). At step ``t``, with the
    momentum schedule ``mu_t = b1 (1 - 0.96^(t psi) / 2)`` (``psi = momentum_decay``) and its
    running product ``P_t = mu_1 ... mu_t``::

        m, v = Adam's moments of d
        denom = sqrt(v / (1 - b2^t)) + eps
        p = p - lr (1 - mu_t) / (1 - P_t) * d / denom
              - lr mu_{t+1} / (1 - P_t mu_{t+1}) * m / denom

    ``decoupled_weight_decay=True`` decays ``p`` by ``1 - lr * weight_decay`` instead of adding
    the L2 term (NAdamW). State: ``step``, ``mu_product``, ``exp_avg``, ``exp_avg_sq``.
    """

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 momentum_decay=4e-3, decoupled_weight_decay=False, *, foreach=None,
                 maximize=False, capturable=False, differentiable=False):
        check_nonnegative(lr=lr, eps=eps, weight_decay=weight_decay,
                          momentum_decay=momentum_decay)
        betas = _check_betas(betas)
        refuse_unsupported(differentiable, capturable)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                                      momentum_decay=momentum_decay,
                                      decoupled_weight_decay=decoupled_weight_decay,
                                      foreach=foreach, maximize=maximize, capturable=capturable,
                                      differentiable=differentiable))

    def _update(self, p, group, state, fresh):
        b1, b2 = (float(b) for b in group["betas"])
        lr, psi = float(group["lr"]), float(group["momentum_decay"])
        if fresh:
            state["mu_product"] = self._scalar_state(1.0)
        t = self._step_count(state)
        coupled = _decay(p, group, bool(group["decoupled_weight_decay"]))
        d = self._direction(p, group, coupled)
        m, v = _moments(p, state, d, b1, b2, fresh)
        mu = b1 * (1.0 - 0.5 * 0.96 ** (t * psi))
        mu_next = b1 * (1.0 - 0.5 * 0.96 ** ((t + 1) * psi))
        state["mu_product"].mul_(mu)
        prod = float(state["mu_product"].item())
        denom = (v / (1.0 - b2 ** t)).sqrt() + float(group["eps"])
        p.add_(d / denom, alpha=-lr * (1.0 - mu) / (1.0 - prod))
        p.add_(m / denom, alpha=-lr * mu_next / (1.0 - prod * mu_next))


class RAdam(TensorRuleOptimizer):
    """PyTorch's RAdam (rectified Adam; Liu et al., 2019). At step ``t``, with
    ``rho_inf = 2 / (1 - b2) - 1`` and ``rho_t = rho_inf - 2 t b2^t / (1 - b2^t)``::

        m, v = Adam's moments of d;  m_hat = m / (1 - b1^t)
        r = sqrt((rho_t - 4)(rho_t - 2) rho_inf / ((rho_inf - 4)(rho_inf - 2) rho_t))
        p = p - lr m_hat r sqrt(1 - b2^t) / (sqrt(v) + eps)     if rho_t > 5
        p = p - lr m_hat                                        otherwise

    ``decoupled_weight_decay=True`` decays ``p`` instead of adding the L2 term. State:
    ``step``, ``exp_avg``, ``exp_avg_sq``.
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False,
                 capturable=False, differentiable=False):
        check_nonnegative(lr=lr, eps=eps, weight_decay=weight_decay)
        betas = _check_betas(betas)
        refuse_unsupported(differentiable, capturable)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                                      decoupled_weight_decay=decoupled_weight_decay,
                                      foreach=foreach, maximize=maximize, capturable=capturable,
                                      differentiable=differentiable))

    def _update(self, p, group, state, fresh):
        b1, b2 = (float(b) for b in group["betas"])
        lr = float(group["lr"])
        t = self._step_count(state)
        coupled = _decay(p, group, bool(group["decoupled_weight_decay"]))
        d = self._direction(p, group, coupled)
        m, v = _moments(p, state, d, b1, b2, fresh)
        bc1, bc2 = 1.0 - b1 ** t, 1.0 - b2 ** t
        rho_inf = 2.0 / (1.0 - b2) - 1.0
        rho_t = rho_inf - 2.0 * t * b2 ** t / bc2
        if rho_t > 5.0:
            rect = math.sqrt((rho_t - 4.0) * (rho_t - 2.0) * rho_inf
                             / ((rho_inf - 4.0) * (rho_inf - 2.0) * rho_t))
            p.add_(m / (v.sqrt() + float(group["eps"])),
                   alpha=-lr * rect * math.sqrt(bc2) / bc1)
        else:
            p.add_(m, alpha=-lr / bc1)


class Adadelta(TensorRuleOptimizer):
    """PyTorch's Adadelta (Zeiler, 2012). With ``d = g (+ weight_decay * p)``::

        s = rho s + (1 - rho) d^2
        delta = sqrt(a + eps) / sqrt(s + eps) * d
        a = rho a + (1 - rho) delta^2
        p = p - lr delta

    State: ``step``, ``square_avg``, ``acc_delta``.
    """

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *,
                 capturable=False, maximize=False, differentiable=False):
        check_nonnegative(lr=lr, eps=eps, weight_decay=weight_decay)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        refuse_unsupported(differentiable, capturable)
        super().__init__(params, dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay,
                                      foreach=foreach, capturable=capturable, maximize=maximize,
                                      differentiable=differentiable))

    def _update(self, p, group, state, fresh):
        rho, eps = float(group["rho"]), float(group["eps"])
        if fresh:
            state["square_avg"] = self._zeros_state(p)
            state["acc_delta"] = self._zeros_state(p)
        self._step_count(state)
        d = self._direction(p, group)
        s, a = state["square_avg"], state["acc_delta"]
        s.mul_(rho).add_(d * d, alpha=1.0 - rho)
        delta = (a + eps).sqrt() / (s + eps).sqrt() * d
        a.mul_(rho).add_(delta * delta, alpha=1.0 - rho)
        p.add_(delta, alpha=-float(group["lr"]))
