"""Stochastic gradient descent with momentum, Nesterov momentum and weight decay."""
from __future__ import annotations

from .optimizer import Optimizer, check_nonnegative, tracing


class SGD(Optimizer):
    """PyTorch's SGD. For each parameter, with ``d = g + weight_decay * p`` (``-g`` first when
    ``maximize``)::

        b = d                                         (first step)
        b = momentum * b + (1 - dampening) * d        (later steps)
        d = d + momentum * b  if nesterov else  b     (when momentum != 0)
        p = p - lr * d

    One fused kernel per parameter; the buffer is ``state[p]["momentum_buffer"]``.
    """

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False,
                 *, maximize=False, foreach=None, differentiable=False, fused=None):
        check_nonnegative(lr=lr, momentum=momentum, weight_decay=weight_decay)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        if differentiable:
            raise NotImplementedError("differentiable optimizers are not supported")
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening,
                                      weight_decay=weight_decay, nesterov=nesterov,
                                      maximize=maximize, foreach=foreach,
                                      differentiable=differentiable, fused=fused))

    def step(self, closure=None):
        """One update of every parameter that has a gradient; returns ``closure()``'s loss."""
        hooks = tracing()
        if hooks is not None:  # Note [optimizers under compile]
            return self._traced_step(hooks, closure)
        loss = self._closure(closure)
        for group in self.param_groups:
            momentum = float(group["momentum"])
            for p in self._params_with_grad(group):
                state = self.state[p]
                buf = state.get("momentum_buffer")
                first = buf is None
                if momentum != 0 and first:
                    buf = state["momentum_buffer"] = self._zeros_state(p)
                # the momentum buffer is the step kernel's operand, updated in place
                flat = buf._data.reshape(-1) if buf is not None else None  # device read: operand
                damp, nesterov = float(group["dampening"]), bool(group["nesterov"])
                self._run("sgd", p, flat if flat is not None else self._empty_flat(p),
                          float(group["lr"]), -1.0 if group["maximize"] else 1.0,
                          float(group["weight_decay"]), 0.0 if first else momentum,
                          1.0 if first else 1.0 - damp, nesterov, momentum, momentum != 0)
        return loss

    _state_is_data = False  # the first step differs in Python (the buffer starts as d)

    def _init_state(self, p, group, state):
        pass  # the momentum buffer is made by the first traced update

    def _traced_update(self, p, group, state):
        """The fused kernel's update (``kernels/optim_updates.py``'s ``sgd_at``) with Tensor
        ops, in its order of operations (Note [optimizers under compile])."""
        momentum, lr = float(group["momentum"]), float(group["lr"])
        wd, damp = float(group["weight_decay"]), float(group["dampening"])
        d = -p.grad if group["maximize"] else p.grad
        if wd != 0.0:
            d = d + wd * p
        if momentum != 0.0:
            buf = state.get("momentum_buffer")
            if buf is None:  # b = d
                buf = state["momentum_buffer"] = d.clone()
            else:
                buf.mul_(momentum).add_(d * (1.0 - damp))
            d = d + momentum * buf if group["nesterov"] else buf
        p.sub_(d * lr)
