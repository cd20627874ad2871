"""jitgrad.distributed on a LocalCluster of two worker processes started here (one cluster for
the module: worker start-up with Numba imports is the slow part). Gradients against the
single-process gradient of the whole sum, replicas of data-parallel training against one
process, a worker killed mid-call, and the errors bad input gets before any work is sent.

The workers are processes, not threads: the tests check each worker's own environment, give
each DataParallel replica a worker-local registry of its own, and kill workers. No test waits
seconds for a process: every wait for a worker (the cluster's start, a nanny restarting a
killed one) is allowed minutes, since on a loaded machine (CI's two cores shared with the rest
of the suite, or with a second suite) starting Python, Dask and Numba in a fresh process takes
far longer than on an idle one. Tests that need no cluster do not ask for it (``client``)."""
import logging
import os
import sys
import time

import numpy as onp
import pytest

distributed = pytest.importorskip("distributed")
dask_array = pytest.importorskip("dask.array")
cloudpickle = pytest.importorskip("cloudpickle")

import dask  # noqa: E402

import jitgrad  # noqa: E402
import jitgrad.distributed as jd  # noqa: E402
import jitgrad.numpy as jnp  # noqa: E402
from jitgrad import nn, optim  # noqa: E402

# the workers cannot import this test module: send its functions by value
cloudpickle.register_pickle_by_value(sys.modules[__name__])

RTOL = 1e-12


# seconds any wait for worker processes may take (a loaded machine: see the module docstring)
WORKER_START_TIMEOUT = 300
CLUSTER_START_ATTEMPTS = 2


def _start_cluster(env):
    """A LocalCluster of two worker processes and its client, once both workers are running.
    The workers start in the background (``scale``) so the wait for them is bounded, and a
    start that fails or runs out of time is torn down and tried once more."""
    for attempt in range(1, CLUSTER_START_ATTEMPTS + 1):
        cluster = c = None
        try:
            cluster = distributed.LocalCluster(n_workers=0, threads_per_worker=1,
                                               processes=True, dashboard_address=None, env=env,
                                               silence_logs=logging.CRITICAL,
                                               # its HTTP server on a free port: no clash with a
                                               # cluster of a test run beside this one
                                               scheduler_kwargs={"dashboard_address":
                                                                 "127.0.0.1:0"})
            cluster.scale(2)
            c = distributed.Client(cluster, timeout=WORKER_START_TIMEOUT)
            c.wait_for_workers(2, timeout=WORKER_START_TIMEOUT)
            return cluster, c
        except Exception:
            for closing in (c, cluster):
                try:
                    if closing is not None:
                        closing.close()
                except Exception:  # noqa: BLE001 - the start's own error is the one to see
                    pass
            if attempt == CLUSTER_START_ATTEMPTS:
                raise


@pytest.fixture(scope="module")
def cluster_client():
    env = {"JITGRAD_NUM_THREADS": "1"}
    if os.environ.get("JITGRAD_CACHE_DIR"):
        env["JITGRAD_CACHE_DIR"] = os.environ["JITGRAD_CACHE_DIR"]
    # one rerun for a task whose worker died (the kill tests), then KilledWorker; and no worker
    # dropped for missed heartbeats while jd.warmup compiles on its event loop (minutes on a
    # loaded machine with an empty kernel cache)
    with dask.config.set({"distributed.scheduler.allowed-failures": 1,
                          "distributed.scheduler.worker-ttl": "30 minutes"}):
        cluster, c = _start_cluster(env)
    try:
        jd.warmup(c, logistic_nll, onp.zeros(3), (onp.zeros((2, 3)), onp.zeros(2)))
        yield c
    finally:
        try:  # workers killed by the last test are restarting: closing them once up is quicker
            _two_answering_workers(c)
        except Exception:  # noqa: BLE001 - closed all the same
            pass
        c.close()
        cluster.close()


def _two_answering_workers(c):
    """Wait (minutes at most) until two workers answer: a killed worker is restarted by its
    nanny (minutes on a loaded machine), and for a moment the scheduler may still list the
    dead one (a broadcast then reaches one live worker only, and a kill test that kills that
    one loses the parameters)."""
    deadline = time.monotonic() + WORKER_START_TIMEOUT
    while True:
        c.wait_for_workers(2, timeout=max(1.0, deadline - time.monotonic()))
        answers = c.run(os.getpid, on_error="return")
        if sum(isinstance(pid, int) for pid in answers.values()) >= 2:
            return
        if time.monotonic() > deadline:
            raise TimeoutError(f"two answering workers expected, got {answers}")
        time.sleep(0.2)


@pytest.fixture
def client(cluster_client):
    """The module's client, once two workers answer (``_two_answering_workers``)."""
    _two_answering_workers(cluster_client)
    return cluster_client


def logistic_nll(w, X, y):
    """Σ_i log(1 + exp(x_i·w)) - y_i x_i·w"""
    eta = X @ w
    return jnp.sum(jnp.logaddexp(0.0, eta) - y * eta)


def data(n=230, d=3, seed=0):
    rng = onp.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = (rng.random(n) < 1.0 / (1.0 + onp.exp(-X @ onp.arange(1.0, d + 1)))).astype(float)
    return X, y


def local_value_and_grad(fn, w, *arrays):
    wt = jitgrad.tensor(w, requires_grad=True)
    value = fn(wt, *[jitgrad.tensor(a) for a in arrays])
    value.backward()
    return value.item(), wt.grad.numpy().copy()


def test_dask_array_gradient_equals_single_process(client):
    X, y = data()
    w = onp.array([0.3, -0.2, 0.5])
    ref_v, ref_g = local_value_and_grad(logistic_nll, w, X, y)
    # y chunked unlike X: rechunked to X's row blocks (60, 60, 60, 50)
    parts = (dask_array.from_array(X, chunks=(60, 3)), dask_array.from_array(y, chunks=100))
    v, g, stats = jd.value_and_grad(logistic_nll, w, parts, client, return_stats=True)
    onp.testing.assert_allclose(v, ref_v, rtol=RTOL)
    onp.testing.assert_allclose(g, ref_g, rtol=RTOL)
    assert isinstance(g, onp.ndarray) and stats.partitions == 4 and stats.rows == 230
    assert set(client.run(jitgrad.get_num_threads).values()) == {1}  # the fixture's env=
    assert stats.params_bytes == 24 and stats.result_bytes == 24 + 48
    v, g = jd.value_and_grad(logistic_nll, w, parts, client, reduce="mean", split_every=2)
    onp.testing.assert_allclose(v, ref_v / 230, rtol=RTOL)
    onp.testing.assert_allclose(g, ref_g / 230, rtol=RTOL)


def test_dict_params_of_tensors_and_hvp(client):
    X, y = data(120, 2)

    def loss(p, X, y):
        eta = X @ p["w"] + p["b"]
        return jnp.sum(jnp.logaddexp(0.0, eta) - y * eta)

    params = {"w": jitgrad.tensor([0.2, -0.1]), "b": jitgrad.tensor(0.3)}
    parts = (dask_array.from_array(X, chunks=(50, 2)), dask_array.from_array(y, chunks=50))
    v, g = jd.value_and_grad(loss, params, parts, client)
    leaves = {k: jitgrad.tensor(t.numpy(), requires_grad=True) for k, t in params.items()}
    ref = loss(leaves, jitgrad.tensor(X), jitgrad.tensor(y))
    ref.backward()
    onp.testing.assert_allclose(v, ref.item(), rtol=RTOL)
    for k in params:
        assert isinstance(g[k], jitgrad.Tensor)
        onp.testing.assert_allclose(g[k].numpy(), leaves[k].grad.numpy(), rtol=RTOL)
    # Hessian-vector product against the exact Hessian of the whole sum
    w = onp.array([0.2, -0.1])
    vec = onp.array([1.0, -2.0])
    hv = jd.hvp(logistic_nll, w, vec, parts, client)
    p = 1.0 / (1.0 + onp.exp(-X @ w))
    onp.testing.assert_allclose(hv, (X.T * (p * (1 - p))) @ X @ vec, rtol=1e-10)


def test_dataframe_futures_and_delayed_partitions(client):
    pandas = pytest.importorskip("pandas")
    dask_frame = pytest.importorskip("dask.dataframe")
    X, y = data(90)
    w = onp.array([0.1, 0.4, -0.3])
    ref_v, ref_g = local_value_and_grad(logistic_nll, w, X, y)
    frame = pandas.DataFrame(X, columns=["a", "b", "c"])
    frame["y"] = y
    ddf = dask_frame.from_pandas(frame, npartitions=3)
    v, g = jd.value_and_grad(logistic_nll, w, (ddf[["a", "b", "c"]], ddf["y"]), client)
    onp.testing.assert_allclose([v, *g], [ref_v, *ref_g], rtol=RTOL)
    splits = [(0, 40), (40, 41), (41, 90)]  # unequal, one of a single row
    futures = [client.scatter((X[a:b], y[a:b])) for a, b in splits]
    v, g = jd.value_and_grad(logistic_nll, w, futures, client)
    onp.testing.assert_allclose([v, *g], [ref_v, *ref_g], rtol=RTOL)
    delayed = [(dask.delayed(X[a:b].copy)(), dask.delayed(y[a:b].copy)()) for a, b in splits]
    v, g = jd.value_and_grad(logistic_nll, w, delayed, client, reduce="mean")
    onp.testing.assert_allclose([v, *g], [ref_v / 90, *(ref_g / 90)], rtol=RTOL)


def test_minimize_persists_once_and_matches_local_fit(client):
    from jitgrad.scipy.optimize import minimize

    X, y = data(200)
    parts = (dask_array.from_array(X, chunks=(70, 3)), dask_array.from_array(y, chunks=70))
    ref = minimize(logistic_nll, onp.zeros(3), args=(jitgrad.tensor(X), jitgrad.tensor(y)),
                   method="L-BFGS-B", options={"gtol": 1e-10})
    res = jd.minimize(logistic_nll, onp.zeros(3), parts, client, method="L-BFGS-B",
                      options={"gtol": 1e-10})
    assert res.success and res.ncalls == res.nfev
    onp.testing.assert_allclose(res.x, ref.x, rtol=1e-7)
    # trust-constr with exact distributed Hessian-vector products takes the local path
    local_tc = minimize(logistic_nll, onp.zeros(3), args=(jitgrad.tensor(X), jitgrad.tensor(y)),
                        method="trust-constr", options={"maxiter": 3})
    res = jd.minimize(logistic_nll, onp.zeros(3), parts, client, method="trust-constr",
                      options={"maxiter": 3})
    assert res.nit == local_tc.nit == 3
    onp.testing.assert_allclose(res.x, local_tc.x, rtol=1e-9)
    # once persisted, a call sends no partition data
    held = jd.persist(parts, client)
    assert len(held) == 3 and held.nrows == 200 and held.nbytes() == 200 * 4 * 8
    v, g = jd.value_and_grad(logistic_nll, ref.x, held, client)
    onp.testing.assert_allclose(v, ref.fun, rtol=1e-9)


def mlp():
    jitgrad.manual_seed(0)
    return nn.Sequential(nn.Linear(3, 5), nn.Tanh(), nn.Linear(5, 1))


def mse(model, X, y):
    return ((model(X).reshape(-1) - y) ** 2).mean()


def sgd(params):
    return optim.SGD(params, lr=0.1, momentum=0.9)


def test_data_parallel_replicas_identical_and_equal_one_process(client):
    X, y = data(11)  # shards of 6 and 5 rows: weighting by rows keeps the batch mean exact
    local = mlp()
    opt = sgd(local.parameters())
    with jd.DataParallel(mlp, sgd, mse, client) as dp:
        assert len(dp.workers) == 2
        for step in range(3):
            batch = (X[step:], y[step:]) if step else (X, y)
            opt.zero_grad()
            ref_loss = mse(local, *[jitgrad.tensor(a) for a in batch])
            ref_loss.backward()
            opt.step()
            loss = dp.step(*batch)
            assert len(dp.last_digests) == 2 and len(set(dp.last_digests)) == 1
            onp.testing.assert_allclose(loss, ref_loss.item(), rtol=RTOL)
        state = dp.state_dict()
        for name, value in local.state_dict().items():
            onp.testing.assert_allclose(state[name].numpy(), value.numpy(), rtol=1e-11)
        momentum = dp.optimizer_state_dict()["state"]
        assert len(momentum) == 4
        assert dp.resync().last_digests[0] == dp.last_digests[1]
        onp.testing.assert_allclose(dp.module()[0].weight.numpy(),
                                    local[0].weight.numpy(), rtol=1e-11)
        with pytest.raises(ValueError, match="share their first axis"):
            dp.step(X, y[:3])


def test_data_parallel_lost_worker_then_resync(client, monkeypatch):
    X, y = data(8)
    # the client's cached scheduler_info() may list no workers (its periodic refresh races the
    # read): DataParallel asks the scheduler instead, or the checks below fail spuriously
    monkeypatch.setattr(client, "scheduler_info", lambda *args, **kwargs: {"workers": {}})
    with jd.DataParallel(mlp, sgd, mse, client) as dp:
        dp.step(X, y)
        before = dp.state_dict()
        lost = dp.workers[1]
        kill = client.submit(os._exit, 1, workers=[lost], allow_other_workers=False,
                             pure=False)
        with pytest.raises(RuntimeError, match=r"the replicas on workers \['tcp://.*'\] are "
                                               r"gone .* call resync\(\)"):
            dp.step(X, y)
        del kill
        client.wait_for_workers(2, timeout=WORKER_START_TIMEOUT)
        dp.resync()  # from the surviving replica, onto the current workers
        assert lost not in dp.workers and len(dp.workers) == 2
        after = dp.state_dict()
        for name in before:
            assert onp.array_equal(after[name].numpy(), before[name].numpy())
        dp.step(X, y)
        assert len(set(dp.last_digests)) == 1


def test_bad_inputs_fail_before_any_work(client):
    X, y = data(40)
    w = onp.zeros(3)

    def boom():
        raise AssertionError("partition data was computed")

    # arrays whose data must never be computed: every check below runs on metadata only
    lazy_X = dask_array.from_delayed(dask.delayed(boom)(), (40, 3), float).rechunk((20, 3))
    lazy_y = dask_array.from_delayed(dask.delayed(boom)(), (39,), float)
    with pytest.raises(ValueError, match="mismatched shapes: array 0 has 40 rows but array 1 "
                                         "has 39"):
        jd.value_and_grad(logistic_nll, w, (lazy_X, lazy_y), client)
    lazy_y = dask_array.from_delayed(dask.delayed(boom)(), (40,), float)
    with pytest.raises(ValueError, match=r"must return a scalar, got shape \(2,\)"):
        jd.value_and_grad(lambda w, X, y: X @ w, w, (lazy_X, lazy_y), client)
    with pytest.raises(TypeError, match="must return a jitgrad Tensor, got float"):
        jd.value_and_grad(lambda w, X, y: 1.0, w, (lazy_X, lazy_y), client)
    with pytest.raises(ValueError, match=r"workers \['tcp://.*'\] have no CUDA device"):
        jd.value_and_grad(logistic_nll, w, (lazy_X, lazy_y), client, device="cuda")
    with pytest.raises(ValueError, match="reduce must be 'sum' or 'mean'"):
        jd.value_and_grad(logistic_nll, w, (lazy_X, lazy_y), client, reduce="avg")
    with pytest.raises(TypeError, match="partitions must be a dask array"):
        jd.value_and_grad(logistic_nll, w, (X, y), client)
    # futures: shapes come from a metadata task, checked before the gradient tasks
    futures = [client.scatter((X[:20], y[:20])), client.scatter((X[20:, :2], y[20:]))]
    with pytest.raises(ValueError, match=r"array 0 of partition 1 is \(20, 2\) float64 but in "
                                         r"partition 0 it is \(20, 3\) float64"):
        jd.value_and_grad(logistic_nll, w, futures, client)
    # a sum that would be short of rows is refused, never returned
    held = jd.persist((dask_array.from_array(X, chunks=(20, 3)),
                       dask_array.from_array(y, chunks=20)), client)
    held.rows = [20, 21]
    with pytest.raises(RuntimeError, match="refusing a partial result"):
        jd.value_and_grad(logistic_nll, w, held, client)


def test_loss_error_names_partition_and_progress(client, capsys):
    X, y = data(30)
    parts = (dask_array.from_array(X, chunks=(10, 3)), dask_array.from_array(y, chunks=10))

    def picky(w, X, y):
        if float(y.sum().item()) == float(y_second_sum):
            raise FloatingPointError("bad partition")
        return logistic_nll(w, X, y)

    y_second_sum = y[10:20].sum() if y[10:20].sum() not in (y[:10].sum(), y[20:].sum()) else -1
    if y_second_sum == -1:
        pytest.skip("partition sums collide")
    with pytest.raises(jd.PartitionError, match=r"partition 1 \(of 3\) failed: "
                                                "FloatingPointError: bad partition") as info:
        jd.value_and_grad(picky, onp.zeros(3), parts, client)
    assert info.value.partitions == [1]
    capsys.readouterr()
    v, _ = jd.value_and_grad(logistic_nll, onp.zeros(3), parts, client, progress=True)
    assert "100% Completed" in capsys.readouterr().out
    onp.testing.assert_allclose(v, 30 * onp.log(2.0), rtol=RTOL)


def _dies_once(marker, rows):
    def loss(w, X, y):
        if X.shape[0] == rows and not os.path.exists(marker):
            open(marker, "w").close()
            os._exit(1)  # the worker process dies in the middle of the call
        return logistic_nll(w, X, y)
    return loss


def test_worker_killed_mid_call_gives_exact_result(client, tmp_path):
    X, y = data(57)
    w = onp.array([0.5, 0.1, -0.4])
    ref_v, ref_g = local_value_and_grad(logistic_nll, w, X, y)
    parts = (dask_array.from_array(X, chunks=((20, 20, 17), 3)),
             dask_array.from_array(y, chunks=((20, 20, 17),)))
    v, g = jd.value_and_grad(_dies_once(str(tmp_path / "died"), 17), w, parts, client)
    assert (tmp_path / "died").exists()
    onp.testing.assert_allclose([v, *g], [ref_v, *ref_g], rtol=RTOL)


def test_worker_deaths_beyond_retries_name_the_partition(client):
    X, y = data(57)

    def always_dies(w, X, y):
        if X.shape[0] == 17:
            os._exit(1)
        return logistic_nll(w, X, y)

    parts = (dask_array.from_array(X, chunks=((20, 17, 20), 3)),
             dask_array.from_array(y, chunks=((20, 17, 20),)))
    # a partition queued on a dying worker may run out of retries too, and the parameters may
    # be lost with the two workers that held them: those partitions are named as well. Which
    # reason Dask reports first depends on timing (on a loaded machine the data is often lost
    # before the retries run out): either is the partition's failure, named.
    with pytest.raises(jd.PartitionError, match=r"partition ([02], )?1(, [02])* \(of 3\) failed: "
                       r"(KilledWorker|its task was cancelled because data it needs .* was "
                       r"lost with every worker that held it)") as info:
        jd.value_and_grad(always_dies, onp.zeros(3), parts, client)
    assert 1 in info.value.partitions


class _Future:
    """A stand-in for a Dask future: its status, and its result or error."""

    def __init__(self, status, value=None, error=None):
        self.status, self._value, self._error = status, value, error

    def result(self):
        if self._error is not None:
            raise self._error
        return self._value

    def exception(self):
        return self._error


def _fake_runs(monkeypatch, outcomes):
    """``_grad._submit`` answering with ``outcomes`` in turn (partition statuses, root)."""
    from jitgrad.distributed import _grad

    calls = []

    def submit(*args):
        statuses, root = outcomes[len(calls)]
        calls.append(args)
        return [_Future(s) for s in statuses], root, []
    monkeypatch.setattr(_grad, "_submit", submit)

    class Data:
        futures, nrows = [(None,)] * 2, 5
    return _grad, Data(), calls


def test_lost_parameters_run_the_call_once_more(monkeypatch):
    """Tasks cancelled only because their data was lost (no task raised): one more run, from
    a fresh scatter, gives the result; a second loss raises PartitionError naming them."""
    done = (1.5, [onp.ones(3)], 5, 2, 0.1, 0.1, 0.1)
    lost = distributed.client.FutureCancelledError("k", "lost")
    _grad, data, calls = _fake_runs(monkeypatch, [(("cancelled", "finished"), _Future(
        "cancelled", error=lost)), (("finished", "finished"), _Future("finished", done))])
    loss, grads, stats = _grad._run(None, None, data, [onp.zeros(3)], None, split_every=8,
                                    retries=0, progress=False, what="jd.value_and_grad")
    assert len(calls) == 2 and loss == 1.5 and stats.partitions == 2
    _grad, data, calls = _fake_runs(monkeypatch, [(("cancelled", "finished"), _Future(
        "cancelled", error=lost))] * 2)
    with pytest.raises(jd.PartitionError, match=r"partition 0 \(of 2\) failed: its task was "
                                                r"cancelled") as info:
        _grad._run(None, None, data, [onp.zeros(3)], None, split_every=8, retries=0,
                   progress=False, what="jd.value_and_grad")
    assert len(calls) == 2 and info.value.partitions == [0]


def test_a_task_that_raised_is_not_run_again(monkeypatch):
    error = FloatingPointError("bad partition")
    _grad, data, calls = _fake_runs(monkeypatch, [(("error", "cancelled"), _Future(
        "error", error=error))] * 2)
    with pytest.raises(jd.PartitionError, match="FloatingPointError: bad partition"):
        _grad._run(None, None, data, [onp.zeros(3)], None, split_every=8, retries=0,
                   progress=False, what="jd.value_and_grad")
    assert len(calls) == 1
