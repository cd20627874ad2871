"""torch.func's module helpers (stack_module_state for ensembling, functionalize, debug_unwrap,
replace_all_batch_norm_modules_) and per-sample gradients of nll_loss / cross-entropy with
per-example targets under vmap (nll_loss_one_hot)."""
import copy

import numpy as np
import pytest

import jitgrad
import jitgrad.func as F
import jitgrad.nn.functional as NF
from jitgrad import nn

RNG = np.random.default_rng(11)


def make_models(k=3):
    jitgrad.manual_seed(0)
    return [nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2)) for _ in range(k)]


def test_stack_module_state_shapes_and_leaves():
    models = make_models()
    params, buffers = F.stack_module_state(models)
    assert sorted(params) == ["0.bias", "0.weight", "2.bias", "2.weight"] and buffers == {}
    for name, value in params.items():
        assert value.is_leaf and value.requires_grad
        np.testing.assert_array_equal(value.numpy(), np.stack(
            [dict(m.named_parameters())[name].detach().numpy() for m in models]))
    bn = [nn.BatchNorm1d(3) for _ in range(2)]
    _, buffers = F.stack_module_state(bn)
    assert buffers["running_var"].shape == (2, 3) and not buffers["running_var"].requires_grad


def test_ensemble_with_vmap_equals_a_loop_over_models():
    models = make_models()
    params, buffers = F.stack_module_state(models)
    base = copy.deepcopy(models[0])
    x = jitgrad.tensor(RNG.standard_normal((5, 3)))

    def ensemble(p, b, x):
        return F.functional_call(base, (p, b), (x,))
    out = F.vmap(ensemble, in_dims=(0, 0, None))(params, buffers, x)
    np.testing.assert_allclose(out.numpy(), np.stack([m(x).detach().numpy() for m in models]),
                               rtol=1e-12)
    # the gradient of a summed ensemble loss reaches each model's slice of the stacked params
    out.pow(2).sum().backward()
    for i, m in enumerate(models):
        m(x).pow(2).sum().backward()
        np.testing.assert_allclose(params["0.weight"].grad.numpy()[i],
                                   m[0].weight.grad.numpy(), rtol=1e-10)


def test_stack_module_state_errors():
    with pytest.raises(RuntimeError, match="at least one model"):
        F.stack_module_state([])
    a, b = nn.Linear(2, 2), nn.Linear(2, 2)
    b.eval()
    with pytest.raises(RuntimeError, match="training/eval"):
        F.stack_module_state([a, b])
    with pytest.raises(RuntimeError, match="same class"):
        F.stack_module_state([nn.Linear(2, 2), nn.Tanh()])


def test_functionalize_same_results_and_input_mutation():
    def f(x):
        y = x.clone()
        y.mul_(2.0).add_(1.0)
        x.add_(1.0)
        return y.sum()
    a = jitgrad.tensor([1.0, 2.0])
    b = jitgrad.tensor([1.0, 2.0])
    assert F.functionalize(f)(a).item() == f(b).item() == 8.0
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    g = F.grad(F.functionalize(lambda x: (x.clone().mul_(x)).sum()))(jitgrad.tensor([1.0, 3.0]))
    np.testing.assert_allclose(g.numpy(), [2.0, 6.0])
    with pytest.raises(RuntimeError, match="remove must be"):
        F.functionalize(f, remove="views")


def test_debug_unwrap():
    x = jitgrad.tensor(RNG.standard_normal((4, 3)))
    seen = []

    def f(t):
        seen.append((F.debug_unwrap(t).shape, F.debug_unwrap(t, recurse=False).shape))
        return t * 2
    F.vmap(F.vmap(f))(jitgrad.tensor(RNG.standard_normal((2, 4, 3))))
    # every level: the (2, 4) batches and the example; one level: the inner vmap's batch of 4
    assert seen == [((2, 4, 3), (4, 3))]
    assert F.debug_unwrap(x) is x


def test_replace_all_batch_norm_modules_():
    model = nn.Sequential(nn.Linear(3, 3), nn.BatchNorm1d(3), nn.InstanceNorm1d(3))
    assert F.replace_all_batch_norm_modules_(model) is model
    bn = model[1]
    assert bn.running_mean is None and bn.running_var is None and not bn.track_running_stats
    assert "running_mean" not in dict(model.named_buffers())
    model.eval()
    x = jitgrad.tensor(RNG.standard_normal((6, 3)))
    out = model[1](model[0](x))  # normalized with the batch's statistics, also in eval mode
    np.testing.assert_allclose(out.mean(0).detach().numpy(), 0.0, atol=1e-12)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_nll_loss_one_hot_matches_nll_loss(reduction):
    x = jitgrad.tensor(RNG.standard_normal((2, 5, 3)))
    t = jitgrad.tensor(np.array([[1, -100, 4], [0, 2, 2]]))
    w = jitgrad.tensor(RNG.random(5))
    np.testing.assert_allclose(
        F.nll_loss_one_hot(x, t, w, reduction=reduction).numpy(),
        NF.nll_loss(x, t, w, reduction=reduction).numpy(), rtol=1e-12)


def test_per_sample_grads_of_nll_loss_and_cross_entropy_equal_a_loop():
    X = jitgrad.tensor(RNG.standard_normal((4, 3, 5)))
    T = jitgrad.tensor(np.array([[1, 0, -100], [3, 2, 2], [0, 0, 1], [4, 1, 0]]))
    W = jitgrad.tensor(RNG.random(5) + 0.5)

    def loss(x, t):
        return F.nll_loss_one_hot(NF.log_softmax(x, -1), t, W)
    values = F.vmap(loss)(X, T)
    grads = F.vmap(F.grad(loss))(X, T)
    for i in range(4):
        xi = X[i].detach().requires_grad_()
        li = NF.cross_entropy(xi, T[i], W)
        li.backward()
        assert values[i].item() == pytest.approx(li.item(), rel=1e-12)
        np.testing.assert_allclose(grads[i].numpy(), xi.grad.numpy(), rtol=1e-10, atol=1e-14)


def test_per_sample_grads_through_nn_functional_cross_entropy():
    X = jitgrad.tensor(RNG.standard_normal((3, 2, 4)))
    T = jitgrad.tensor(np.array([[1, 0], [3, 2], [0, 1]]))
    grads = F.vmap(F.grad(lambda x, t: NF.cross_entropy(x, t)))(X, T)
    for i in range(3):
        xi = X[i].detach().requires_grad_()
        NF.cross_entropy(xi, T[i]).backward()
        np.testing.assert_allclose(grads[i].numpy(), xi.grad.numpy(), rtol=1e-10, atol=1e-14)
