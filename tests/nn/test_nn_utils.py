"""``jitgrad.nn.utils``: gradient clipping (against PyTorch 2.13's values, pinned below),
flat parameter vectors, parametrizations (orthogonal, weight_norm, spectral_norm), the
hook-based weight/spectral norms, batch-norm fusion and ``skip_init``."""
import math
import warnings

import numpy as np
import pytest

import jitgrad as jg
import jitgrad.nn as nn
from jitgrad.autograd import gradcheck
from jitgrad.func import functional_call
from jitgrad.nn.utils import parametrizations as P
from jitgrad.nn.utils import parametrize

GRAD_A = [[0.5, -1.5, 2.0], [0.25, -0.75, 1.0]]
GRAD_B = [3.0, -0.5, 0.0, 1.25]
# torch.nn.utils.clip_grad_norm_(params, 1.5, norm_type) on GRAD_A, GRAD_B (and a parameter
# without a gradient): the total norm and the first clipped gradient, flattened
TORCH_CLIP = {
    2.0: (4.351723796382303, [0.1723454572824765, -0.5170363718474295, 0.689381829129906,
                              0.08617272864123825, -0.2585181859237147, 0.344690914564953]),
    1.0: (10.75, [0.06976743537047114, -0.20930230611141343, 0.27906974148188457,
                  0.03488371768523557, -0.10465115305570671, 0.13953487074094229]),
    math.inf: (3.0, [0.24999991666669444, -0.7499997500000833, 0.9999996666667778,
                     0.12499995833334722, -0.37499987500004167, 0.4999998333333889]),
    0.5: (85.91959243355019, [0.008729091584680816, -0.026187274754042447, 0.03491636633872326,
                              0.004364545792340408, -0.013093637377021223,
                              0.01745818316936163]),
    3: (3.4764576463347456, [0.21573678167888755, -0.6472103450366626, 0.8629471267155502,
                             0.10786839083944377, -0.3236051725183313, 0.4314735633577751]),
}


def _params():
    a = nn.Parameter(jg.zeros(2, 3, dtype=jg.float64))
    b = nn.Parameter(jg.zeros(4, dtype=jg.float64))
    c = nn.Parameter(jg.zeros(2, dtype=jg.float64))
    a.grad = jg.tensor(GRAD_A, dtype=jg.float64)
    b.grad = jg.tensor(GRAD_B, dtype=jg.float64)
    return [a, b, c]


@pytest.mark.parametrize("norm_type", sorted(TORCH_CLIP))
def test_clip_grad_norm_as_torch(norm_type):
    params = _params()
    total = nn.utils.clip_grad_norm_(iter(params), 1.5, norm_type=norm_type, foreach=None)
    want_total, want_a = TORCH_CLIP[norm_type]
    assert total.ndim == 0
    np.testing.assert_allclose(total.item(), want_total, rtol=1e-12)
    np.testing.assert_allclose(params[0].grad.numpy().ravel(), want_a, rtol=1e-12)
    assert params[2].grad is None


def test_clip_grad_norm_below_max_leaves_grads_and_deprecated_alias_warns():
    params = _params()
    total = nn.utils.clip_grad_norm_(params, 100.0)
    np.testing.assert_allclose(total.item(), 4.351723796382303, rtol=1e-12)
    np.testing.assert_array_equal(params[0].grad.numpy(), GRAD_A)
    with pytest.warns(FutureWarning, match="clip_grad_norm_"):
        nn.utils.clip_grad_norm(_params(), 1.0)


def test_get_total_norm_and_clip_grads_with_norm():
    total = nn.utils.get_total_norm([jg.tensor([3., 4.]), jg.tensor([12.])])
    assert total.item() == 13.0
    assert nn.utils.get_total_norm([]).item() == 0.0
    params = _params()
    norm = nn.utils.get_total_norm([p.grad for p in params if p.grad is not None])
    nn.utils.clip_grads_with_norm_(params, 1.5, norm)
    np.testing.assert_allclose(params[0].grad.numpy().ravel(), TORCH_CLIP[2.0][1], rtol=1e-12)


def test_clip_grad_norm_nonfinite():
    params = _params()
    params[0].grad = jg.tensor([[math.nan, 0., 0.], [0., 0., 0.]], dtype=jg.float64)
    with pytest.raises(RuntimeError, match="is non-finite, so it cannot be clipped"):
        nn.utils.clip_grad_norm_(params, 1.0, error_if_nonfinite=True)
    assert math.isnan(nn.utils.clip_grad_norm_(params, 1.0).item())


def test_clip_grad_value_as_torch():
    params = _params()
    nn.utils.clip_grad_value_(params, 0.8)
    np.testing.assert_array_equal(params[0].grad.numpy().ravel(),
                                  [0.5, -0.8, 0.8, 0.25, -0.75, 0.8])
    np.testing.assert_array_equal(params[1].grad.numpy(), [0.8, -0.5, 0.0, 0.8])
    with pytest.raises(TypeError, match="foreach"):
        nn.utils.clip_grad_value_(params, 0.8, foreach="yes")


def test_parameters_to_vector_round_trip_and_gradient():
    lin = nn.Linear(3, 2)
    vec = nn.utils.parameters_to_vector(lin.parameters())
    want = np.concatenate([lin.weight.detach().numpy().ravel(), lin.bias.detach().numpy()])
    np.testing.assert_array_equal(vec.detach().numpy(), want)
    (vec * jg.arange(8.0)).sum().backward()  # differentiable w.r.t. the parameters
    np.testing.assert_array_equal(lin.weight.grad.numpy().ravel(), np.arange(6.0))
    weight = lin.weight
    nn.utils.vector_to_parameters(jg.arange(8.0), lin.parameters())
    assert lin.weight is weight
    np.testing.assert_array_equal(lin.bias.detach().numpy(), [6.0, 7.0])
    with pytest.raises(TypeError, match="expected jitgrad.Tensor"):
        nn.utils.vector_to_parameters([1.0], lin.parameters())


@pytest.mark.parametrize("shape, orthogonal_map", [
    ((3, 3), None), ((2, 4), None), ((4, 2), "cayley"), ((3, 3), "householder"),
    ((4, 2), "matrix_exp")])
def test_orthogonal_is_orthogonal_and_trains(shape, orthogonal_map):
    jg.manual_seed(0)
    lin = nn.Linear(shape[1], shape[0], bias=False)
    P.orthogonal(lin, orthogonal_map=orthogonal_map)
    assert type(lin).__name__ == "ParametrizedLinear"
    assert list(lin.state_dict()) == ["parametrizations.weight.original",
                                      "parametrizations.weight.0.base"]

    def gram(w):
        return (w.T @ w if shape[0] >= shape[1] else w @ w.T).detach().numpy()
    np.testing.assert_allclose(gram(lin.weight), np.eye(min(shape)), atol=1e-12)
    x, target = jg.randn(6, shape[1]), jg.randn(6, shape[0])
    opt = jg.optim.SGD(lin.parameters(), lr=0.1)
    losses = []
    for _ in range(5):
        opt.zero_grad()
        loss = ((lin(x) - target) ** 2).mean()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < losses[0]
    np.testing.assert_allclose(gram(lin.weight), np.eye(min(shape)), atol=1e-12)


def test_orthogonal_assignment_and_errors():
    lin = nn.Linear(3, 3)
    P.orthogonal(lin)
    q = np.linalg.qr(np.random.default_rng(0).standard_normal((3, 3)))[0]
    lin.weight = jg.tensor(q)
    np.testing.assert_allclose(lin.weight.detach().numpy(), q, atol=1e-12)
    with pytest.raises(ValueError, match="Expected a matrix"):
        P.orthogonal(nn.Linear(3, 3), "bias")
    with pytest.raises(ValueError, match="orthogonal_map has to be one of"):
        P.orthogonal(nn.Linear(3, 3), orthogonal_map="qr")


def test_weight_norm_parametrization_g_v_and_gradients():
    lin = nn.Linear(3, 2)
    w0 = lin.weight.detach().numpy().copy()
    P.weight_norm(lin)
    assert list(lin.state_dict()) == ["bias", "parametrizations.weight.original0",
                                      "parametrizations.weight.original1"]
    g = lin.parametrizations.weight.original0
    np.testing.assert_allclose(g.detach().numpy(), np.linalg.norm(w0, axis=1, keepdims=True))
    np.testing.assert_allclose(lin.weight.detach().numpy(), w0, rtol=1e-12)
    names = [k for k, _ in lin.named_parameters()]
    params = [p.detach().clone().requires_grad_() for p in lin.parameters()]
    x = jg.randn(4, 3, dtype=jg.float64)
    assert gradcheck(lambda *ps: functional_call(lin, dict(zip(names, ps)), (x,)), params)
    parametrize.remove_parametrizations(lin, "weight")
    assert type(lin) is nn.Linear and list(lin.state_dict()) == ["bias", "weight"]
    np.testing.assert_allclose(lin.weight.detach().numpy(), w0, rtol=1e-12)
    lin2 = P.weight_norm(nn.Linear(3, 2), dim=None)
    assert lin2.parametrizations.weight.original0.shape == ()


def test_spectral_norm_parametrization_normalises_the_top_singular_value():
    jg.manual_seed(1)
    lin = P.spectral_norm(nn.Linear(5, 4))
    assert list(lin.state_dict()) == ["bias", "parametrizations.weight.original",
                                      "parametrizations.weight.0._u",
                                      "parametrizations.weight.0._v"]
    for _ in range(20):
        lin(jg.randn(1, 5))
    w = lin.weight.detach().numpy()
    original = lin.parametrizations.weight.original.detach().numpy()
    np.testing.assert_allclose(np.linalg.norm(w, 2), 1.0, rtol=1e-8)
    np.testing.assert_allclose(w * np.linalg.norm(original, 2), original, rtol=1e-8)
    lin.eval()
    u = lin.parametrizations.weight[0]._u.numpy().copy()
    lin(jg.randn(1, 5))
    np.testing.assert_array_equal(lin.parametrizations.weight[0]._u.numpy(), u)  # eval: no update


def test_parametrize_chain_cached_and_errors():
    class Double(nn.Module):
        def forward(self, x):
            return 2 * x

        def right_inverse(self, x):
            return x / 2

    lin = nn.Linear(2, 2)
    w0 = lin.weight.detach().numpy().copy()
    parametrize.register_parametrization(lin, "weight", Double())
    np.testing.assert_allclose(lin.weight.detach().numpy(), w0)  # right_inverse at register
    parametrize.register_parametrization(lin, "weight", Double())  # appended: not inverted
    np.testing.assert_allclose(lin.weight.detach().numpy(), 2 * w0)  # (as torch)
    assert parametrize.is_parametrized(lin) and parametrize.is_parametrized(lin, "weight")
    assert not parametrize.is_parametrized(lin, "bias")
    assert parametrize.type_before_parametrizations(lin) is nn.Linear
    with parametrize.cached():
        assert lin.weight is lin.weight
    assert lin.weight is not lin.weight
    lin.weight = jg.ones(2, 2, dtype=jg.float64)
    np.testing.assert_allclose(lin.parametrizations.weight.original.numpy(), 0.25)
    with pytest.raises(ValueError, match="may not change the shape"):
        parametrize.register_parametrization(nn.Linear(2, 2), "weight", nn.Flatten(0))
    with pytest.raises(ValueError, match="does not have a parameter"):
        parametrize.register_parametrization(nn.Linear(2, 2), "nope", Double())
    parametrize.remove_parametrizations(lin, "weight", leave_parametrized=False)
    np.testing.assert_allclose(lin.weight.detach().numpy(), 0.25)
    with pytest.raises(ValueError, match="does not have a parametrization"):
        parametrize.remove_parametrizations(lin, "weight")


def test_hook_weight_norm_keys_forward_and_removal():
    lin = nn.Linear(3, 2)
    w0 = lin.weight.detach().numpy().copy()
    with pytest.warns(FutureWarning, match="parametrizations.weight_norm"):
        nn.utils.weight_norm(lin)
    assert list(lin.state_dict()) == ["bias", "weight_g", "weight_v"]
    x = jg.randn(4, 3)
    with jg.no_grad():
        lin.weight_g.mul_(2.0)
    np.testing.assert_allclose(lin(x).detach().numpy(),
                               x.numpy() @ (2 * w0).T + lin.bias.detach().numpy(), rtol=1e-12)
    nn.utils.remove_weight_norm(lin)
    assert list(lin.state_dict()) == ["bias", "weight"]
    np.testing.assert_allclose(lin.weight.detach().numpy(), 2 * w0, rtol=1e-12)
    with pytest.raises(ValueError, match="weight_norm of 'weight' not found"):
        nn.utils.remove_weight_norm(lin)


def test_hook_spectral_norm_keys_and_removal():
    jg.manual_seed(2)
    conv = nn.utils.spectral_norm(nn.ConvTranspose1d(3, 4, 2))
    assert list(conv.state_dict()) == ["bias", "weight_orig", "weight_u", "weight_v"]
    assert conv.weight_u.shape == (4,)  # dim=1 for transposed convolutions
    for _ in range(20):
        conv(jg.randn(1, 3, 5))
    mat = np.moveaxis(conv.weight.detach().numpy(), 1, 0).reshape(4, -1)
    np.testing.assert_allclose(np.linalg.norm(mat, 2), 1.0, rtol=1e-8)
    nn.utils.remove_spectral_norm(conv)
    assert list(conv.state_dict()) == ["bias", "weight"]


def test_fuse_conv_and_linear_with_batch_norm():
    jg.manual_seed(3)
    for conv, bn, transpose in [(nn.Conv2d(2, 3, 3), nn.BatchNorm2d(3), False),
                                (nn.ConvTranspose2d(2, 3, 3), nn.BatchNorm2d(3), True)]:
        conv.eval()
        bn.eval()
        bn.running_mean.copy_(jg.randn(3))
        bn.running_var.copy_(jg.rand(3) + 0.5)
        with jg.no_grad():
            bn.weight.copy_(jg.randn(3))
            bn.bias.copy_(jg.randn(3))
        fused = nn.utils.fuse_conv_bn_eval(conv, bn, transpose=transpose)
        x = jg.randn(2, 2, 5, 5)
        np.testing.assert_allclose(fused(x).detach().numpy(), bn(conv(x)).detach().numpy(),
                                   atol=1e-12)
        assert fused is not conv
    lin, bn = nn.Linear(3, 4).eval(), nn.BatchNorm1d(4).eval()
    bn.running_var.copy_(jg.rand(4) + 0.5)
    fused = nn.utils.fuse_linear_bn_eval(lin, bn)
    x = jg.randn(5, 3)
    np.testing.assert_allclose(fused(x).detach().numpy(), bn(lin(x)).detach().numpy(),
                               atol=1e-12)
    with pytest.raises(AssertionError, match="Fusion only for eval"):
        nn.utils.fuse_linear_bn_eval(nn.Linear(3, 4), bn)


def test_skip_init_leaves_the_generator_alone():
    jg.manual_seed(4)
    m = nn.utils.skip_init(nn.Linear, 3, 4, bias=False)
    after_skip = jg.rand(3).numpy()
    jg.manual_seed(4)
    assert m.weight.shape == (4, 3)
    np.testing.assert_array_equal(jg.rand(3).numpy(), after_skip)
    with pytest.raises(RuntimeError, match="must support a 'device' arg"):
        nn.utils.skip_init(nn.ReLU)


def test_parameter_list_as_torch():
    pl = nn.ParameterList([jg.zeros(2, 3), nn.Parameter(jg.ones(3)), 5])
    assert isinstance(pl[0], nn.Parameter) and pl[2] == 5 and len(pl) == 3
    assert list(pl.state_dict()) == ["0", "1"]
    pl.append(jg.ones(1))
    pl += [jg.ones(2)]
    assert list(pl.state_dict()) == ["0", "1", "3", "4"]
    assert [p.shape for p in pl[1:3] if isinstance(p, nn.Parameter)] == [(3,)]
    pl[0] = jg.ones(2)
    assert isinstance(pl[0], nn.Parameter) and pl[-1].shape == (2,)
    assert repr(nn.ParameterList([jg.zeros(2, 3, dtype=jg.float32)])) == \
        "ParameterList(  (0): Parameter containing: [jitgrad.float32 of size 2x3])"
    with pytest.raises(IndexError):
        pl[7]


def test_unflatten_and_conv_transpose_output_size():
    x = jg.randn(2, 6)
    assert nn.Unflatten(1, (2, -1))(x).shape == (2, 2, 3)
    conv = nn.ConvTranspose2d(2, 3, 3, stride=2)
    assert conv(jg.randn(1, 2, 4, 4), output_size=[10, 10]).shape == (1, 3, 10, 10)
    with pytest.raises(ValueError, match="valid sizes range from 9 to 10"):
        conv(jg.randn(1, 2, 4, 4), output_size=[11, 11])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert nn.Hardtanh(min_val=0.0).min_val == 0.0
    with pytest.warns(FutureWarning):
        assert nn.Hardtanh(min_value=0.5).min_val == 0.5


def test_stateless_functional_call_warns_and_delegates():
    m = nn.Linear(2, 1)
    with pytest.warns(FutureWarning, match="jitgrad.func.functional_call"):
        out = nn.utils.stateless.functional_call(
            m, {"weight": jg.ones(1, 2), "bias": jg.zeros(1)}, (jg.ones(1, 2),))
    assert out.item() == 2.0


def test_parametrized_module_deepcopies_and_refuses_pickle():
    import copy
    import pickle

    m = P.orthogonal(nn.Linear(3, 3))
    c = copy.deepcopy(m)
    assert type(c).__name__ == "ParametrizedLinear"
    assert c.parametrizations.weight.original is not m.parametrizations.weight.original
    np.testing.assert_array_equal(c.weight.detach().numpy(), m.weight.detach().numpy())
    with pytest.raises(RuntimeError, match="only supported through state_dict"):
        pickle.dumps(m)
    fresh = P.orthogonal(nn.Linear(3, 3))
    fresh.load_state_dict(m.state_dict())
    np.testing.assert_allclose(fresh.weight.detach().numpy(), m.weight.detach().numpy(),
                               atol=1e-14)
