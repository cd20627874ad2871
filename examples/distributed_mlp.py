"""Synchronous data-parallel training of an MLP with ``jitgrad.distributed.DataParallel`` on a
Dask ``LocalCluster``: one replica per worker, every minibatch split into one shard per worker,
gradients all-reduced on the cluster, one Adam step on every replica. After each step the
replicas' parameter digests are compared (they must be bitwise identical), and the run is
checked against the same training in one process.

The task: classify points of two interleaved spirals (a generated dataset), cross-entropy
loss, a 2-64-64-2 tanh MLP.

Run from the repository root (needs ``pip install 'jitgrad[distributed]'``):

    PYTHONPATH=. python examples/distributed_mlp.py [--workers 2] [--epochs 20]
"""
import argparse
import logging
import os
import time

import numpy as onp
from distributed import Client, LocalCluster

import jitgrad
import jitgrad.distributed as jd
from jitgrad import nn, optim
from jitgrad.nn import functional


def spirals(n, seed=0):
    rng = onp.random.default_rng(seed)
    t = onp.sqrt(rng.random(n)) * 3 * onp.pi
    label = rng.integers(0, 2, n)
    sign = onp.where(label == 1, 1.0, -1.0)
    X = onp.stack([sign * t * onp.cos(t), sign * t * onp.sin(t)], axis=1) / 10.0
    X += 0.03 * rng.standard_normal(X.shape)
    return X, label.astype(onp.int64)


def make_model():
    jitgrad.manual_seed(0)  # the initial state is built once on the client and sent as a state_dict
    return nn.Sequential(nn.Linear(2, 64), nn.Tanh(), nn.Linear(64, 64), nn.Tanh(),
                         nn.Linear(64, 2))


def make_optimizer(params):
    return optim.Adam(params, lr=0.01)


def loss_fn(model, X, y):
    """Mean cross-entropy over the shard's rows."""
    return functional.cross_entropy(model(X), y)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--rows", type=int, default=4000)
    parser.add_argument("--batch", type=int, default=500)
    args = parser.parse_args()
    X, y = spirals(args.rows)
    # one kernel thread per worker process: set in this process's environment, which the
    # workers inherit when they start (they import this script, hence jitgrad, before a
    # LocalCluster's env= is applied); this process read its own setting at import
    os.environ["JITGRAD_NUM_THREADS"] = "1"
    env = {"JITGRAD_NUM_THREADS": "1"}
    if os.environ.get("JITGRAD_CACHE_DIR"):
        env["JITGRAD_CACHE_DIR"] = os.environ["JITGRAD_CACHE_DIR"]
    with LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                      dashboard_address=None, env=env, silence_logs=logging.ERROR) as cluster, \
            Client(cluster) as client:
        local = make_model()  # the same training in this process, for the check
        local_opt = make_optimizer(local.parameters())
        with jd.DataParallel(make_model, make_optimizer, loss_fn, client) as dp:
            print(f"{len(dp.workers)} replicas on {dp.workers}")
            rng = onp.random.default_rng(1)
            start = time.perf_counter()
            for epoch in range(args.epochs):
                order = rng.permutation(args.rows)
                losses = []
                for b in range(0, args.rows, args.batch):
                    idx = order[b:b + args.batch]
                    losses.append(dp.step(X[idx], y[idx]))  # raises if replicas differ
                    if epoch < 2:  # check against one process for the first epochs
                        local_opt.zero_grad()
                        ref = loss_fn(local, jitgrad.tensor(X[idx]), jitgrad.tensor(y[idx]))
                        ref.backward()
                        local_opt.step()
                        assert abs(ref.item() - losses[-1]) <= 1e-9 * abs(ref.item())
                if epoch % 5 == 0 or epoch == args.epochs - 1:
                    print(f"epoch {epoch:3d}  mean loss {onp.mean(losses):.4f}  "
                          f"replicas identical: {len(set(dp.last_digests)) == 1}")
            elapsed = time.perf_counter() - start
            model = dp.module()
        with jitgrad.no_grad():
            accuracy = float((model(jitgrad.tensor(X)).numpy().argmax(1) == y).mean())
        print(f"{dp.steps} steps in {elapsed:.1f} s ({elapsed / dp.steps * 1e3:.0f} ms per step); "
              f"training accuracy {accuracy:.3f}")


if __name__ == "__main__":
    main()
