"""A PyTorch training script, run unchanged but for the import: a TensorDataset and a shuffling
DataLoader, an MLP with an orthogonal parametrization, Adam with a step schedule, gradient
clipping, and a state_dict round trip.

Run from the repository root: PYTHONPATH=. python examples/pytorch/nn_training.py
"""
import io

import jitgrad as torch
from jitgrad import nn
from jitgrad.nn.utils import parametrizations
from jitgrad.utils.data import DataLoader, TensorDataset, random_split


def make_data(n=512):
    """y = sin(2 x0) + 0.5 x1^2 + noise: a smooth regression target."""
    x = torch.rand(n, 2) * 4 - 2
    y = torch.sin(2 * x[:, 0]) + 0.5 * x[:, 1] ** 2 + 0.05 * torch.randn(n)
    return TensorDataset(x, y.unsqueeze(1))


def build_model():
    model = nn.Sequential(nn.Linear(2, 32), nn.Tanh(), nn.Linear(32, 32), nn.Tanh(), nn.Linear(32, 1))
    parametrizations.orthogonal(model[2])  # the hidden layer's weight stays orthogonal
    return model


def evaluate(model, loader):
    with torch.no_grad():
        losses = [nn.functional.mse_loss(model(x), y, reduction="sum") for x, y in loader]
    return (sum(losses) / len(loader.dataset)).item()


def main(epochs=15):
    torch.manual_seed(0)
    train, valid = random_split(make_data(), [0.8, 0.2], generator=torch.Generator().manual_seed(1))
    train_loader = DataLoader(train, batch_size=32, shuffle=True)
    valid_loader = DataLoader(valid, batch_size=128)
    model = build_model()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=5, gamma=0.5)
    first = evaluate(model, valid_loader)
    for _ in range(epochs):
        model.train()
        for x, y in train_loader:
            optimizer.zero_grad()
            loss = nn.functional.mse_loss(model(x), y)
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
            optimizer.step()
        scheduler.step()
    last = evaluate(model, valid_loader)
    weight = model[2].weight
    orthogonality = (weight.T @ weight - torch.eye(32)).abs().max().item()
    buffer = io.BytesIO()
    torch.save(model.state_dict(), buffer)
    buffer.seek(0)
    clone = build_model()
    clone.load_state_dict(torch.load(buffer))
    x = torch.randn(4, 2)
    return {"first_loss": first, "last_loss": last, "lr": scheduler.get_last_lr()[0],
            "orthogonality": orthogonality, "batches": len(train_loader),
            "reloaded_match": torch.allclose(clone(x), model(x))}


if __name__ == "__main__":
    for key, value in main().items():
        print(f"{key:16s} {value}")
