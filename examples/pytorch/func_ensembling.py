"""torch.func's per-sample gradients and model ensembling, run unchanged but for the import.

Run from the repository root: PYTHONPATH=. python examples/pytorch/func_ensembling.py
"""
import jitgrad as torch
import jitgrad.nn as nn
import jitgrad.nn.functional as F
from jitgrad.func import functional_call, grad, stack_module_state, vmap


class SimpleMLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.fc2 = nn.Linear(16, 3)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


def per_sample_grads(model, data, targets):
    """The gradient of each sample's loss in one vmap call, and the same by a Python loop."""
    params = {k: v.detach() for k, v in model.named_parameters()}
    buffers = {k: v.detach() for k, v in model.named_buffers()}

    def loss_of(params, buffers, sample, target):
        prediction = functional_call(model, (params, buffers), (sample.unsqueeze(0),))
        return F.cross_entropy(prediction, target.unsqueeze(0))

    batched = vmap(grad(loss_of), in_dims=(None, None, 0, 0))(params, buffers, data, targets)
    looped = []
    for i in range(data.shape[0]):
        model.zero_grad()
        F.cross_entropy(model(data[i:i + 1]), targets[i:i + 1]).backward()
        looped.append({k: p.grad.detach().clone() for k, p in model.named_parameters()})
    return batched, looped


def ensemble(models, minibatch):
    """Several models' predictions in one vmap call over their stacked parameters."""
    params, buffers = stack_module_state(models)
    base = models[0]

    def call(params, buffers, x):
        return functional_call(base, (params, buffers), (x,))

    return vmap(call, in_dims=(0, 0, None))(params, buffers, minibatch)


def main():
    torch.manual_seed(0)
    model = SimpleMLP()
    data, targets = torch.randn(6, 8), torch.randint(0, 3, (6,))
    batched, looped = per_sample_grads(model, data, targets)
    grads_match = all(torch.allclose(batched[k][i], looped[i][k], atol=1e-10)
                      for i in range(6) for k in batched)
    models = [SimpleMLP() for _ in range(4)]
    minibatch = torch.randn(5, 8)
    stacked = ensemble(models, minibatch)
    loop = torch.stack([m(minibatch) for m in models])
    return {"per_sample_shape": tuple(batched["fc1.weight"].shape), "grads_match": grads_match,
            "ensemble_shape": tuple(stacked.shape),
            "ensemble_match": torch.allclose(stacked, loop, atol=1e-10)}


if __name__ == "__main__":
    for key, value in main().items():
        print(f"{key:18s} {value}")
