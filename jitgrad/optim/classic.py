"""ASGD and Rprop: PyTorch's update rules written with Tensor ops."""
from __future__ import annotations

from ..ops.binary import where
from ..ops.creation import full_like
from .adaptive import refuse_unsupported
from .optimizer import TensorRuleOptimizer, check_nonnegative


class ASGD(TensorRuleOptimizer):
    """PyTorch's averaged SGD (Polyak & Juditsky, 1992). At step ``t``, with
    ``d = g (+ weight_decay * p)`` and the current ``eta``, ``mu``::

        p = p (1 - lambd eta) - eta d
        ax = p  if mu == 1  else  ax + mu (p - ax)
        eta = lr / (1 + lambd lr t)^alpha;   mu = 1 / max(1, t - t0)

    State: ``step``, ``eta``, ``mu``, ``ax`` (the average of the iterates).
    """

    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0,
                 foreach=None, maximize=False, differentiable=False, capturable=False):
        check_nonnegative(lr=lr, weight_decay=weight_decay)
        refuse_unsupported(differentiable, capturable)
        super().__init__(params, dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0,
                                      weight_decay=weight_decay, foreach=foreach,
                                      maximize=maximize, differentiable=differentiable,
                                      capturable=capturable))

    def _update(self, p, group, state, fresh):
        lr, lambd = float(group["lr"]), float(group["lambd"])
        if fresh:
            state["eta"] = self._scalar_state(lr)
            state["mu"] = self._scalar_state(1.0)
            state["ax"] = self._zeros_state(p)
        t = self._step_count(state)
        d = self._direction(p, group)
        eta, mu = float(state["eta"].item()), float(state["mu"].item())
        p.mul_(1.0 - lambd * eta).add_(d, alpha=-eta)
        ax = state["ax"]
        if mu != 1.0:
            ax.add_(p - ax, alpha=mu)
        else:
            ax.copy_(p)
        state["eta"].fill_(lr / (1.0 + lambd * lr * t) ** float(group["alpha"]))
        state["mu"].fill_(1.0 / max(1.0, t - float(group["t0"])))


class Rprop(TensorRuleOptimizer):
    """PyTorch's Rprop (resilient backpropagation; Riedmiller & Braun, 1993). Per element,
    with ``s = sign(d * d_prev)``::

        step = clamp(step * (eta+ if s > 0, eta- if s < 0, 1 if s == 0), *step_sizes)
        d = 0 where s < 0;   p = p - sign(d) * step;   d_prev = d

    State: ``step``, ``prev`` (the previous gradient term), ``step_size`` (starts at ``lr``).
    """

    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        check_nonnegative(lr=lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        refuse_unsupported(differentiable, capturable)
        super().__init__(params, dict(lr=lr, etas=tuple(etas), step_sizes=tuple(step_sizes),
                                      foreach=foreach, maximize=maximize,
                                      differentiable=differentiable, capturable=capturable))

    def _update(self, p, group, state, fresh):
        eta_minus, eta_plus = (float(e) for e in group["etas"])
        lo, hi = (float(s) for s in group["step_sizes"])
        if fresh:
            state["prev"] = self._zeros_state(p)
            state["step_size"] = full_like(p.detach(), float(group["lr"]))
        self._step_count(state)
        d = self._direction(p, group)
        s = (d * state["prev"]).sign()
        factor = where(s > 0, eta_plus, where(s < 0, eta_minus, 1.0))
        step_size = state["step_size"]
        step_size.copy_((step_size * factor).clamp(min=lo, max=hi))
        d = where(s < 0, 0.0, d)
        p.add_(d.sign() * step_size, alpha=-1.0)
        state["prev"].copy_(d)
