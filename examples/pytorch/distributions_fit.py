"""Log densities the way scientific PyTorch code writes them, run unchanged but for the import:
a maximum-likelihood fit of a Gamma distribution with LBFGS, and variational inference of a
Normal posterior with reparameterised samples and a closed-form KL term.

Run from the repository root: PYTHONPATH=. python examples/pytorch/distributions_fit.py
"""
import jitgrad as torch
from jitgrad import distributions as D


def fit_gamma(data):
    """Maximise sum log Gamma(x | alpha, beta) over log alpha, log beta with strong-Wolfe LBFGS."""
    log_params = torch.zeros(2, requires_grad=True)
    optimizer = torch.optim.LBFGS([log_params], lr=1.0, max_iter=100, line_search_fn="strong_wolfe")

    def closure():
        optimizer.zero_grad()
        alpha, beta = log_params.exp()
        loss = -D.Gamma(alpha, beta).log_prob(data).mean()
        loss.backward()
        return loss

    optimizer.step(closure)
    return log_params.detach().exp()


def variational_normal(data, steps=300):
    """q(mu) = Normal(m, s) for mu in x_i ~ Normal(mu, 1), mu ~ Normal(0, 10): maximise the ELBO
    E_q[log p(x | mu)] - KL(q || prior) by reparameterised samples."""
    m = torch.zeros((), requires_grad=True)
    log_s = torch.zeros((), requires_grad=True)
    prior = D.Normal(0.0, 10.0)
    optimizer = torch.optim.Adam([m, log_s], lr=0.05)
    for _ in range(steps):
        optimizer.zero_grad()
        q = D.Normal(m, log_s.exp())
        mu = q.rsample((16,))
        likelihood = D.Normal(mu.unsqueeze(1), 1.0).log_prob(data).sum(1).mean()
        loss = -(likelihood - D.kl_divergence(q, prior))
        loss.backward()
        optimizer.step()
    return m.detach(), log_s.detach().exp()


def main():
    torch.manual_seed(0)
    gamma_data = D.Gamma(torch.tensor(3.0), torch.tensor(2.0)).sample((4000,))
    alpha_beta = fit_gamma(gamma_data)
    normal_data = 1.5 + torch.randn(50)
    m, s = variational_normal(normal_data)
    # the exact posterior of mu: precision 50 + 1/100, mean sum(x) / precision
    precision = 50 + 1 / 100
    # at the maximum the score is zero: the gradient of the mean log-likelihood in (alpha, beta)
    params = alpha_beta.clone().requires_grad_(True)
    D.Gamma(params[0], params[1]).log_prob(gamma_data).mean().backward()
    return {"alpha_beta": alpha_beta.tolist(), "score": params.grad.abs().max().item(),
            "q_mean": m.item(), "q_std": s.item(),
            "exact_mean": (normal_data.sum() / precision).item(),
            "exact_std": precision ** -0.5}


if __name__ == "__main__":
    for key, value in main().items():
        print(f"{key:12s} {value}")
