"""A character-level recurrent neural network that learns to predict its own source code (after
HIPS autograd's examples/rnn.py).

The parameters are a dict of arrays (initial hidden state, the state update and the readout);
``grad`` returns a dict of gradients and ``adam`` flattens it internally. Each step reads one
character (one-hot), updates ``h <- tanh([x, h, 1] W_change)`` and predicts the next character's
log-probabilities ``[h, 1] W_predict - logsumexp(...)``; the loss is the mean negative
log-likelihood over the lines of this file, batched.

Run from the repository root: PYTHONPATH=. python examples/hips/rnn.py
"""
import os

import numpy as onp

import jitgrad.numpy as np
from jitgrad.numpy.functional import grad
from jitgrad.numpy.optimizers import adam
from jitgrad.scipy.special import logsumexp


def concat_and_multiply(weights, *args):
    cat_state = np.hstack(args + (np.ones((args[0].shape[0], 1)),))  # a bias column
    return np.dot(cat_state, weights)


def create_rnn_params(input_size, state_size, output_size, param_scale=0.01, rs=None):
    rs = rs if rs is not None else onp.random.RandomState(0)
    return {"init hiddens": rs.randn(1, state_size) * param_scale,
            "change": rs.randn(input_size + state_size + 1, state_size) * param_scale,
            "predict": rs.randn(state_size + 1, output_size) * param_scale}


def rnn_predict(params, inputs):
    """Log-probabilities of each next character: a list of T + 1 arrays (N, alphabet)."""
    def log_probs(hiddens):
        output = concat_and_multiply(params["predict"], hiddens)
        return output - logsumexp(output, axis=1, keepdims=True)

    hiddens = np.repeat(params["init hiddens"], inputs.shape[1], axis=0)
    output = [log_probs(hiddens)]
    for step_input in inputs:  # over time steps
        hiddens = np.tanh(concat_and_multiply(params["change"], step_input, hiddens))
        output.append(log_probs(hiddens))
    return output


def rnn_log_likelihood(params, inputs, targets):
    logprobs = rnn_predict(params, inputs)
    num_steps, num_examples, _ = inputs.shape
    loglik = 0.0
    for t in range(num_steps):
        loglik = loglik + np.sum(logprobs[t] * targets[t])
    return loglik / (num_steps * num_examples)


def string_to_one_hot(string, alphabet_size):
    codes = onp.array([min(ord(c), alphabet_size - 1) for c in string])
    return (codes[:, None] == onp.arange(alphabet_size)[None, :]).astype(float)


def one_hot_to_string(matrix):
    return "".join(chr(int(onp.argmax(row))) for row in onp.asarray(matrix))


def build_dataset(filename, sequence_length, alphabet_size, max_lines=-1):
    """One padded sequence per non-blank line: an array (T, lines, alphabet)."""
    with open(filename) as f:
        lines = [line for line in f.readlines()[:max_lines] if len(line) > 2]
    seqs = onp.zeros((sequence_length, len(lines), alphabet_size))
    for i, line in enumerate(lines):
        seqs[:, i, :] = string_to_one_hot((line + " " * sequence_length)[:sequence_length],
                                          alphabet_size)
    return seqs


def main(sequence_length=30, max_lines=60, state_size=40, num_iters=200, step_size=0.1,
         alphabet_size=128, report_every=50, show=3):
    """Train; print the loss and a few lines with their predictions; return the losses."""
    inputs = build_dataset(os.path.abspath(__file__), sequence_length, alphabet_size, max_lines)
    params = create_rnn_params(alphabet_size, state_size, alphabet_size)

    def training_loss(params, i):
        return -rnn_log_likelihood(params, inputs, inputs)

    losses = []

    def callback(weights, i, gradient):
        if i % report_every == 0 or i == num_iters - 1:
            loss = training_loss(weights, 0)
            losses.append(float(loss))
            print(f"iteration {i:5d}   train loss {loss:8.4f}")
            logprobs = onp.stack([onp.asarray(p) for p in rnn_predict(weights, inputs)])
            for t in range(min(show, inputs.shape[1])):
                text = one_hot_to_string(inputs[:, t, :]).replace("\n", " ")
                predicted = one_hot_to_string(logprobs[:, t, :]).replace("\n", " ")
                print(f"    {text} | {predicted}")

    adam(grad(training_loss), params, step_size=step_size, num_iters=num_iters,
         callback=callback)
    return losses


if __name__ == "__main__":
    main()
