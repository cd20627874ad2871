"""``jitgrad.nn.functional`` beyond values: the random functions (dropouts, rrelu, gumbel
softmax), in-place variants, running statistics, ``return_indices`` dispatch, warnings and the
errors for bad input. Values of the deterministic functions: ``test_functional_more.py``."""
import math
import warnings

import numpy as np
import pytest

import jitgrad
import jitgrad.nn.functional as F


def _t(a, rg=False, dtype=jitgrad.float64):
    return jitgrad.tensor(np.asarray(a, dtype=np.float64), dtype=dtype, requires_grad=rg)


def _rand(*shape, seed=0, rg=False):
    return _t(np.random.default_rng(seed).standard_normal(shape), rg)


# --- random functions ------------------------------------------------------------------------
@pytest.mark.parametrize("fn, shape", [(F.dropout1d, (4, 6, 5)), (F.dropout2d, (4, 6, 3, 2)),
                                       (F.dropout3d, (4, 6, 2, 2, 2)), (F.dropout1d, (6, 5))])
def test_channel_dropout_zeroes_whole_channels(fn, shape):
    jitgrad.manual_seed(0)
    x = _t(np.ones(shape), True)
    y = fn(x, p=0.4)
    a = y.detach().numpy().reshape(shape[:-1 if len(shape) == 2 else 2] + (-1,))
    per_channel = np.unique(a, axis=-1)
    assert per_channel.shape[-1] == 1  # one value per channel
    assert set(np.unique(per_channel)) <= {0.0, 1 / 0.6}
    assert 0 < (per_channel == 0).sum() < per_channel.size
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), y.detach().numpy())  # d(x m)/dx = m
    assert fn(x, 0.4, training=False) is x


def test_dropout2d_on_3d_input_warns_and_drops_channels():
    jitgrad.manual_seed(1)
    with pytest.warns(UserWarning, match="channel-wise 1D dropout"):
        y = F.dropout2d(_t(np.ones((3, 8, 4))), 0.5)
    assert np.unique(y.numpy(), axis=-1).shape[-1] == 1


def test_dropout_probability_checked():
    with pytest.raises(ValueError, match="between 0 and 1"):
        F.dropout3d(_t(np.ones((1, 2, 2, 2, 2))), p=1.5)
    with pytest.raises(RuntimeError, match="dropout1d: expected a 2D or 3D input"):
        F.dropout1d(_t(np.ones((1, 2, 2, 2))))


def test_alpha_dropout_keeps_selu_statistics():
    jitgrad.manual_seed(2)
    x = _rand(200_000, seed=3)
    y = F.alpha_dropout(x, 0.3, training=True).numpy()
    assert abs(y.mean()) < 0.01 and abs(y.std() - 1) < 0.01
    alpha_p = -1.6732632423543772 * 1.0507009873554805
    a = (0.7 * (1 + 0.3 * alpha_p ** 2)) ** -0.5
    b = -a * alpha_p * 0.3
    dropped = np.isclose(y, a * alpha_p + b)
    assert abs(dropped.mean() - 0.3) < 0.01
    np.testing.assert_allclose(y[~dropped], a * x.numpy()[~dropped] + b)
    assert F.alpha_dropout(x, 0.3) is x  # training defaults to False


def test_feature_alpha_dropout_drops_channels():
    jitgrad.manual_seed(4)
    x = _t(np.zeros((2, 50, 3)), True)
    y = F.feature_alpha_dropout(x, 0.5, training=True)
    assert np.unique(y.detach().numpy(), axis=-1).shape[-1] == 1
    assert len(np.unique(y.detach().numpy())) == 2


def test_rrelu_training_draws_slopes():
    jitgrad.manual_seed(5)
    x = _t(np.linspace(-3, 3, 41), True)
    y = F.rrelu(x, 0.1, 0.3, training=True)
    xs, ys = x.detach().numpy(), y.detach().numpy()
    np.testing.assert_array_equal(ys[xs >= 0], xs[xs >= 0])
    slopes = ys[xs < 0] / xs[xs < 0]
    assert np.all((slopes >= 0.1) & (slopes <= 0.3)) and len(np.unique(slopes)) > 5
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy()[xs < 0], slopes)


def test_gumbel_softmax_soft_and_hard():
    jitgrad.manual_seed(6)
    logits = _rand(4, 5, seed=7, rg=True)
    soft = F.gumbel_softmax(logits, tau=0.5)
    np.testing.assert_allclose(soft.detach().numpy().sum(-1), 1.0)
    jitgrad.manual_seed(6)
    hard = F.gumbel_softmax(logits, tau=0.5, hard=True)
    h = hard.detach().numpy()
    assert set(np.unique(h)) == {0.0, 1.0} and np.all(h.sum(-1) == 1)
    np.testing.assert_array_equal(h.argmax(-1), soft.detach().numpy().argmax(-1))
    w = _rand(4, 5, seed=8)
    g_soft = jitgrad.autograd.grad((soft * w).sum(), logits)[0]
    g_hard = jitgrad.autograd.grad((hard * w).sum(), logits)[0]
    np.testing.assert_allclose(g_hard.numpy(), g_soft.numpy())  # straight-through


def test_sdpa_dropout_one_drops_everything():
    q = _rand(2, 3, 4)
    out = F.scaled_dot_product_attention(q, q, q, dropout_p=1.0)
    np.testing.assert_array_equal(out.numpy(), 0.0)


# --- in-place variants -----------------------------------------------------------------------
@pytest.mark.parametrize("inplace_fn, fn", [
    (lambda x: F.elu_(x, 0.5), lambda x: F.elu(x, 0.5)),
    (lambda x: F.celu_(x, 0.5), lambda x: F.celu(x, 0.5)),
    (F.selu_, F.selu),
    (lambda x: F.hardtanh_(x, -0.5, 0.5), lambda x: F.hardtanh(x, -0.5, 0.5)),
    (lambda x: F.threshold_(x, 0.1, 9.0), lambda x: F.threshold(x, 0.1, 9.0)),
    (lambda x: F.leaky_relu_(x, 0.3), lambda x: F.leaky_relu(x, 0.3)),
    (lambda x: F.rrelu_(x), lambda x: F.rrelu(x)),
    (lambda x: F.hardswish(x, inplace=True), F.hardswish),
    (lambda x: F.mish(x, inplace=True), F.mish),
    (lambda x: F.relu6(x, inplace=True), F.relu6),
])
def test_inplace_variants(inplace_fn, fn):
    leaf = _rand(3, 4, seed=9, rg=True)
    expected = fn(leaf)
    x = leaf * 2.0 / 2.0  # a non-leaf: in-place is allowed and differentiable
    version = x._version
    out = inplace_fn(x)
    assert out is x and x._version > version
    np.testing.assert_allclose(x.detach().numpy(), expected.detach().numpy())
    g_in = jitgrad.autograd.grad(x.sum(), leaf)[0]
    g_ref = jitgrad.autograd.grad(expected.sum(), leaf)[0]
    np.testing.assert_allclose(g_in.numpy(), g_ref.numpy())
    with pytest.raises(RuntimeError, match="leaf Variable"):
        inplace_fn(_rand(2, seed=1, rg=True))


# --- statistics, dispatch, warnings ----------------------------------------------------------
def test_instance_norm_running_stats_match_pytorch():
    x = _t(np.arange(24.0).reshape(2, 3, 4) ** 1.5 / 10)
    rm, rv = _t([0.5, -0.2, 1.0]), _t([1.0, 2.0, 0.5])
    F.instance_norm(x, rm, rv, momentum=0.3)
    # PyTorch 2.13: F.instance_norm(x, rm, rv, momentum=0.3) updates them in place to
    np.testing.assert_allclose(rm.numpy(), [1.1297896966928156, 1.1562885454471385,
                                            2.638386800274756], rtol=1e-12)
    np.testing.assert_allclose(rv.numpy(), [0.7837066635969441, 1.5292108681695238,
                                            0.5242714971940363], rtol=1e-12)
    y = F.instance_norm(x, rm, rv, use_input_stats=False)
    np.testing.assert_allclose(y.numpy().ravel()[:5], [
        -1.2761980283272425, -1.1632391270323377, -0.9567020079232061, -0.6892463596974433,
        -0.28811558570426476], rtol=1e-12)


def test_return_indices_dispatch():
    x = _t(np.arange(16.0).reshape(1, 1, 4, 4))
    assert isinstance(F.max_pool2d(x, 2), jitgrad.Tensor)
    out, idx = F.max_pool2d(x, 2, None, 0, 1, False, True)  # positional return_indices
    np.testing.assert_array_equal(idx.numpy(), [[[[5, 7], [13, 15]]]])
    assert idx.dtype == jitgrad.int64
    out1, idx1 = F.max_pool1d(x[0], 2, return_indices=True)
    np.testing.assert_array_equal(idx1.numpy()[0, 0], [1, 3])
    out3, idx3 = F.adaptive_max_pool2d(x, 1, True)
    assert out3.item() == 15.0 and idx3.item() == 15
    np.testing.assert_array_equal(F.max_unpool2d(out, idx, 2).numpy()[0, 0],
                                  np.where(np.isin(np.arange(16), [5, 7, 13, 15]),
                                           np.arange(16.0), 0).reshape(4, 4))


def test_implicit_softmax_dim_warns():
    x = _rand(2, 3)
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmin"):
        y = F.softmin(x)
    np.testing.assert_allclose(y.numpy().sum(1), 1.0)  # dim 1 for 2-d input
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmax"):
        F.softmax(x)


def test_kl_div_mean_warns():
    with pytest.warns(UserWarning, match="batchmean"):
        F.kl_div(_rand(2, 3), _t(np.full((2, 3), 1 / 3)))


def test_float32_kept():
    x = jitgrad.tensor(np.random.default_rng(0).standard_normal((1, 2, 4, 4)),
                       dtype=jitgrad.float32)
    for y in (F.elu(x), F.interpolate(x, scale_factor=2, mode="bilinear"), F.pad(x, (1, 1),
              mode="reflect"), F.avg_pool3d(x, 2), F.group_norm(x, 1), F.unfold(x, 2),
              F.adaptive_avg_pool2d(x, 3), F.normalize(x), F.logsigmoid(x)):
        assert y.dtype == jitgrad.float32


def test_zero_vector_norm_gradients_are_finite():
    x = _t(np.zeros((2, 3)), True)
    F.normalize(x).sum().backward()
    assert np.all(np.isfinite(x.grad.numpy()))
    p = _t([[1.0, 2.0], [1.0, 2.0], [0.0, 1.0]], True)
    F.pdist(p).sum().backward()
    assert np.all(np.isfinite(p.grad.numpy()))


# --- errors ------------------------------------------------------------------------------------
@pytest.mark.parametrize("call, error, match", [
    (lambda: F.glu(_rand(2, 3)), RuntimeError, "Halving dimension must be even"),
    (lambda: F.pad(_rand(1, 2, 3), (3, 0), mode="reflect"), RuntimeError, "at most 2"),
    (lambda: F.pad(_rand(1, 2, 3), (1, 1), mode="wrap"), NotImplementedError, "padding mode"),
    (lambda: F.interpolate(_rand(1, 1, 4), size=3, mode="bilinear"), NotImplementedError,
     "bilinear mode needs 4D input"),
    (lambda: F.interpolate(_rand(1, 1, 4, 4), size=2, mode="bilinear", antialias=True),
     NotImplementedError, "antialias"),
    (lambda: F.interpolate(_rand(1, 1, 4), size=2, scale_factor=2.0), ValueError,
     "only one of size or scale_factor"),
    (lambda: F.conv_transpose2d(_rand(1, 2, 3, 3), _rand(2, 2, 3, 3), stride=2,
                                output_padding=2), RuntimeError, "output padding must be"),
    (lambda: F.conv3d(_rand(1, 3, 4, 4, 4), _rand(2, 2, 2, 2, 2)), RuntimeError,
     "to have 2 channels, but got 3"),
    (lambda: F.unfold(_rand(1, 1, 2, 3, 3), 2), RuntimeError, "Only 3D or 4D"),
    (lambda: F.fold(_rand(1, 4, 5), (3, 3), 2), RuntimeError, "sliding blocks"),
    (lambda: F.multi_margin_loss(_rand(2, 3), jitgrad.tensor([0, 1]), p=3), ValueError,
     "only p == 1 and p == 2"),
    (lambda: F.pixel_shuffle(_rand(1, 3, 2, 2), 2), RuntimeError, "divisible by the square"),
    (lambda: F.channel_shuffle(_rand(1, 5, 2), 2), RuntimeError, "divisible by groups"),
    (lambda: F.max_unpool1d(_rand(1, 1, 2), jitgrad.tensor([[[0, 9]]]), 2), RuntimeError,
     "invalid max index"),
    (lambda: F.grid_sample(_rand(1, 1, 2, 2, 2), _rand(1, 1, 1, 1, 3)), RuntimeError,
     "5D volumes are not supported"),
    (lambda: F.group_norm(_rand(2, 3, 4), 2), RuntimeError, "divisible by num_groups"),
    (lambda: F.prelu(_rand(2, 3), _rand(2)), RuntimeError, "channel size = 3"),
    (lambda: F.gaussian_nll_loss(_rand(2, 3), _rand(2, 3), _t(np.full((2, 3), -1.0))),
     ValueError, "negative"),
    (lambda: F.mse_loss(_rand(2, 3), _rand(2, 3), weight=_t([1.0, 2.0, 3.0])), ValueError,
     "Weights and input must have the same size"),
    (lambda: F.scaled_dot_product_attention(_rand(2, 3), _rand(2, 3), _rand(2, 3),
                                            attn_mask=_rand(2, 2), is_causal=True),
     RuntimeError, "attn_mask should not be set"),
    (lambda: F.affine_grid(_rand(2, 2, 3), (2, 1, 3, 3, 3)), ValueError, "Nx3x4"),
    (lambda: F.adaptive_avg_pool2d(_rand(1, 2, 3), (2, 2, 2)), ValueError, "tuple of 2 ints"),
    (lambda: F.max_pool3d(_rand(1, 1, 4, 4, 4), 2, padding=2), RuntimeError, "at most half"),
])
def test_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_no_warning_for_matching_sizes():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        F.smooth_l1_loss(_rand(2, 3), _rand(2, 3))
        F.interpolate(_rand(1, 1, 4), scale_factor=1.5, mode="linear")
    assert math.isfinite(F.soft_margin_loss(_rand(3), _t([1.0, -1.0, 1.0])).item())
