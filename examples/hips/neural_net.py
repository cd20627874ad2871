"""A multi-layer perceptron classifier trained with Adam (after HIPS autograd's
examples/neural_net.py), on a synthetic three-class spiral instead of MNIST so it runs offline
in seconds.

The network's parameters are a list of ``(W, b)`` tuples: ``grad`` returns the gradient in the
same structure and ``adam`` flattens it internally. The log-posterior is a mean log-softmax
likelihood minus an L2 penalty on the flattened parameters.

Run from the repository root: PYTHONPATH=. python examples/hips/neural_net.py
"""
import numpy as onp

import jitgrad.numpy as np
from jitgrad.numpy.functional import flatten, grad
from jitgrad.numpy.optimizers import adam
from jitgrad.scipy.special import logsumexp


def make_spirals(points_per_class=100, classes=3, noise=0.2, seed=0):
    """Inputs (N, 2) on interleaved spiral arms and one-hot targets (N, classes)."""
    rs = onp.random.RandomState(seed)
    inputs, labels = [], []
    for k in range(classes):
        r = onp.linspace(0.05, 1.0, points_per_class)
        angle = onp.linspace(k * 4.0, (k + 1) * 4.0, points_per_class) + noise * rs.randn(
            points_per_class)
        inputs.append(onp.stack([r * onp.sin(angle), r * onp.cos(angle)], axis=1))
        labels.append(onp.full(points_per_class, k))
    inputs, labels = onp.concatenate(inputs), onp.concatenate(labels)
    return inputs, onp.eye(classes)[labels]


def init_random_params(scale, layer_sizes, rs):
    """A list of (weights, biases) tuples, one per layer."""
    return [(scale * rs.randn(m, n), scale * rs.randn(n))
            for m, n in zip(layer_sizes[:-1], layer_sizes[1:])]


def neural_net_predict(params, inputs):
    """Normalized class log-probabilities (N, classes) of a tanh network."""
    for W, b in params:
        outputs = np.dot(inputs, W) + b
        inputs = np.tanh(outputs)
    return outputs - logsumexp(outputs, axis=1, keepdims=True)


def l2_norm(params):
    flat, _ = flatten(params)
    return np.dot(flat, flat)


def log_posterior(params, inputs, targets, l2_reg):
    log_prior = -l2_reg * l2_norm(params)
    log_lik = np.sum(neural_net_predict(params, inputs) * targets) / inputs.shape[0]
    return log_prior + log_lik


def accuracy(params, inputs, targets):
    predicted = np.argmax(neural_net_predict(params, inputs), axis=1)
    return np.mean(predicted == np.argmax(targets, axis=1))


def main(layer_sizes=(2, 32, 32, 3), points_per_class=100, num_iters=300, batch_size=64,
         step_size=0.03, l2_reg=1e-4, seed=0, report_every=50):
    """Train on the spirals with minibatches; print the loss and accuracy; return
    ``(params, final_accuracy)``."""
    rs = onp.random.RandomState(seed)
    inputs, targets = make_spirals(points_per_class, layer_sizes[-1], seed=seed)
    order = rs.permutation(len(inputs))
    inputs, targets = inputs[order], targets[order]
    num_batches = int(onp.ceil(len(inputs) / batch_size))

    def batch(i):
        idx = i % num_batches
        return slice(idx * batch_size, (idx + 1) * batch_size)

    def objective(params, i):
        part = batch(i)
        return -log_posterior(params, inputs[part], targets[part], l2_reg)

    objective_grad = grad(objective)

    print("     iter |   train loss | train accuracy")

    def print_perf(params, i, gradient):
        if i % report_every == 0 or i == num_iters - 1:
            loss = -log_posterior(params, inputs, targets, l2_reg)  # a 0-d Tensor
            print(f"{i:9d} | {loss:12.4f} | {accuracy(params, inputs, targets):14.3f}")

    init = init_random_params(0.5, list(layer_sizes), rs)
    params = adam(objective_grad, init, step_size=step_size, num_iters=num_iters,
                  callback=print_perf)
    return params, float(accuracy(params, inputs, targets))


if __name__ == "__main__":
    main()
