"""The layer classes added for issue 35 against PyTorch 2.13: state_dict keys and order as
torch's, outputs on torch's initial weights (loaded with ``load_state_dict``), reprs, and
gradients w.r.t. inputs and parameters against finite differences. Cases are in
``_modules_more_cases.py``; torch's values in ``_pinned_modules_more.py`` (regenerate with
``python tests/nn/_pin_modules_more.py`` under a Python with torch)."""
import numpy as np
import pytest

import jitgrad as jg
import jitgrad.nn as nn
from jitgrad.autograd import gradcheck
from jitgrad.func import functional_call

from _modules_more_cases import CASES, rng_for
from _pinned_modules_more import PINNED


def T(values):
    return jg.tensor(values, dtype=jg.float64)


def _tensor(a):
    a = np.asarray(a)
    return jg.tensor(a, dtype=jg.float64 if a.dtype.kind == "f" else jg.int64)


def _flat(out):
    return [o for v in out for o in _flat(v)] if isinstance(out, (tuple, list)) else [out]


def _array(entry):
    dtype, shape, values = entry
    return np.asarray(values, dtype=dtype).reshape(shape)


def _build(name):
    make, inputs, grad, train = CASES[name]
    module = make(nn, T).train(train)
    state, outputs, text = PINNED[name]
    return module, [_tensor(a) for a in inputs(rng_for(name))], grad, state, outputs, text


@pytest.mark.parametrize("name", sorted(CASES))
def test_state_dict_forward_and_repr_as_torch(name):
    module, args, _, state, outputs, text = _build(name)
    assert list(module.state_dict()) == list(state)
    result = module.load_state_dict({k: jg.tensor(_array(v)) for k, v in state.items()})
    assert not result.missing_keys and not result.unexpected_keys
    got = _flat(module(*args))
    assert len(got) == len(outputs)
    for g, want in zip(got, outputs):
        want = _array(want)
        assert tuple(g.shape) == want.shape
        if want.dtype.kind == "f":
            np.testing.assert_allclose(g.numpy(), want, rtol=1e-10, atol=1e-12)
        else:
            np.testing.assert_array_equal(g.numpy(), want)
    if name != "TripletMarginWithDistanceLoss":  # its child's repr differs only by module path
        assert repr(module) == text
    # batch norms count their training steps (instance norms do not, as torch's)
    for key, entry in state.items():
        if key.endswith("num_batches_tracked") and name.startswith("BatchNorm"):
            assert int(module.state_dict()[key].item()) == int(_array(entry)) + int(module.training)


@pytest.mark.parametrize("name", sorted(n for n in CASES if CASES[n][2]))
def test_gradients_match_finite_differences(name):
    module, args, grad, state, _, _ = _build(name)
    module.load_state_dict({k: jg.tensor(_array(v)) for k, v in state.items()})
    if module.training and any(k.endswith("running_mean") for k in state):
        module.eval()  # the finite differences must not move the running statistics
    diff = [i for i, a in enumerate(args) if a.dtype == jg.float64] if grad == 1 else list(grad)
    names = [k for k, _ in module.named_parameters()]
    params = [p.detach().clone().requires_grad_() for _, p in module.named_parameters()]
    inputs = [a.clone().requires_grad_() if i in diff else a for i, a in enumerate(args)]
    n = len(inputs)

    def f(*xs):
        return functional_call(module, dict(zip(names, xs[n:])), tuple(xs[:n]))
    assert gradcheck(f, (*inputs, *params))


def test_train_mode_batch_norm_updates_running_stats_as_torch():
    # BatchNorm3d in training: the running statistics after one step equal torch's
    module, args, _, state, _, _ = _build("BatchNorm3d")
    module.load_state_dict({k: jg.tensor(_array(v)) for k, v in state.items()})
    module(*args)
    x = args[0].numpy()
    mean, var = x.mean(axis=(0, 2, 3, 4)), x.var(axis=(0, 2, 3, 4), ddof=1)
    np.testing.assert_allclose(module.running_mean.numpy(), 0.1 * mean, rtol=1e-12)
    np.testing.assert_allclose(module.running_var.numpy(), 0.9 + 0.1 * var, rtol=1e-12)
