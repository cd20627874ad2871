"""PyTorch's autograd tutorial, run unchanged but for the import: gradients, higher-order
derivatives, hooks, a custom Function with ``once_differentiable``, saved-tensor hooks and
forward-mode AD.

Run from the repository root: PYTHONPATH=. python examples/pytorch/autograd_tour.py
(with ``import torch`` instead of the line below it runs under PyTorch, in float32).
"""
import math

import jitgrad as torch
from jitgrad.autograd.function import once_differentiable
import jitgrad.autograd.forward_ad as fwAD


class Exp(torch.autograd.Function):
    """exp(x), saving its result: d exp(x)/dx = exp(x)."""

    @staticmethod
    def forward(ctx, x):
        y = x.exp()
        ctx.save_for_backward(y)
        return y

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_output):
        (y,) = ctx.saved_tensors
        return grad_output * y


def main():
    results = {}
    # 1. gradients of a scalar loss: y = sum(x**2 * w), dy/dx = 2 x w
    x = torch.linspace(-1.0, 1.0, 5, requires_grad=True)
    w = torch.tensor([1.0, 2.0, 3.0, 4.0, 5.0])
    y = (x ** 2 * w).sum()
    y.backward()
    results["grad"] = x.grad.tolist()
    results["grad_fn"] = type(y.grad_fn).__name__

    # 2. a second derivative with create_graph: d2/dx2 sin(x) = -sin(x)
    x2 = torch.tensor(0.7, requires_grad=True)
    (g,) = torch.autograd.grad(torch.sin(x2), x2, create_graph=True)
    (h,) = torch.autograd.grad(g, x2)
    results["second"] = h.item()

    # 3. a tensor hook that doubles the gradient flowing through it
    x3 = torch.ones(3, requires_grad=True)
    z = x3 * 3
    z.register_hook(lambda grad: grad * 2)
    z.sum().backward()
    results["hooked"] = x3.grad.tolist()

    # 4. the custom Function: its backward runs without a graph (once_differentiable)
    x4 = torch.tensor([0.0, 1.0, 2.0], requires_grad=True)
    Exp.apply(x4).sum().backward()
    results["custom"] = x4.grad.tolist()

    # 5. saved-tensor hooks see every tensor the graph saves (here: count and pass through)
    packed = []

    def pack(t):
        packed.append(tuple(t.shape))
        return t

    x5 = torch.randn(4, requires_grad=True)
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        loss = (x5.sin() * x5.cos()).sum()
    loss.backward()
    results["saved"] = len(packed) > 0
    results["saved_grad_ok"] = torch.allclose(x5.grad, torch.cos(2 * x5))

    # 6. forward-mode AD: the directional derivative of f(x) = x * sin(x) along v
    primal = torch.tensor([0.5, 1.0, 1.5])
    tangent = torch.tensor([1.0, 0.0, 2.0])
    with fwAD.dual_level():
        out = fwAD.make_dual(primal, tangent)
        out = out * torch.sin(out)
        jvp = fwAD.unpack_dual(out).tangent
    expect = [(math.sin(p) + p * math.cos(p)) * t for p, t in zip(primal.tolist(), tangent.tolist())]
    results["jvp"] = jvp.tolist()
    results["jvp_expect"] = expect
    return results


if __name__ == "__main__":
    for key, value in main().items():
        print(f"{key:14s} {value}")
