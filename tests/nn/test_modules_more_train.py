"""The random layers in training mode (their draws cannot be pinned against PyTorch's):
channel dropout, alpha dropout, RReLU and fractional max pooling, checked by their defining
properties."""
import math

import numpy as np
import pytest

import jitgrad as jg
import jitgrad.nn as nn

ALPHA = -1.0507009873554805 * 1.6732632423543772  # SELU's negative saturation


@pytest.mark.parametrize("cls, shape", [(nn.Dropout1d, (4, 6, 5)), (nn.Dropout2d, (4, 6, 3, 3)),
                                        (nn.Dropout3d, (2, 6, 2, 2, 2))])
def test_channel_dropout_zeroes_whole_channels(cls, shape):
    jg.manual_seed(0)
    x = jg.rand(*shape) + 1.0
    out = cls(p=0.4)(x).numpy()
    per_channel = out.reshape(shape[0], shape[1], -1)
    ratio = per_channel / x.numpy().reshape(per_channel.shape)
    kept = np.isclose(ratio, 1 / 0.6).all(-1)
    dropped = (per_channel == 0).all(-1)
    assert (kept | dropped).all() and kept.any() and dropped.any()
    np.testing.assert_array_equal(cls(p=0.4).eval()(x).numpy(), x.numpy())


@pytest.mark.parametrize("cls", [nn.AlphaDropout, nn.FeatureAlphaDropout])
def test_alpha_dropout_keeps_the_affine_structure(cls):
    jg.manual_seed(1)
    p = 0.3
    a = 1.0 / math.sqrt((1 - p) * (1 + p * ALPHA ** 2))
    b = -a * ALPHA * p
    x = jg.randn(8, 5, 4)
    out = cls(p)(x).numpy()
    kept = np.isclose(out, a * x.numpy() + b)
    dropped = np.isclose(out, a * ALPHA + b)
    assert (kept | dropped).all() and dropped.any() and kept.any()
    if cls is nn.FeatureAlphaDropout:  # whole channels together
        assert (kept.all(-1) | dropped.all(-1)).all()


def test_rrelu_training_slopes_and_gradient():
    jg.manual_seed(2)
    x = jg.randn(200, requires_grad=True)
    y = nn.RReLU(0.1, 0.3)(x)
    y.sum().backward()
    xs, ys, g = x.detach().numpy(), y.detach().numpy(), x.grad.numpy()
    neg = xs < 0
    np.testing.assert_array_equal(ys[~neg], xs[~neg])
    slopes = ys[neg] / xs[neg]
    assert (slopes >= 0.1).all() and (slopes <= 0.3).all() and slopes.std() > 0.01
    np.testing.assert_allclose(g[neg], slopes)
    np.testing.assert_array_equal(g[~neg], 1.0)


@pytest.mark.parametrize("cls, shape, kwargs", [
    (nn.FractionalMaxPool2d, (2, 3, 7, 7), {"output_size": (3, 4)}),
    (nn.FractionalMaxPool3d, (1, 2, 6, 6, 6), {"output_ratio": 0.5})])
def test_fractional_max_pool_takes_window_maxima(cls, shape, kwargs):
    jg.manual_seed(3)
    x = jg.randn(*shape)
    out, idx = cls(2, return_indices=True, **kwargs)(x)
    flat = x.numpy().reshape(shape[0], shape[1], -1)
    picked = np.take_along_axis(flat, idx.numpy().reshape(shape[0], shape[1], -1), -1)
    np.testing.assert_array_equal(out.numpy().reshape(picked.shape), picked)
    expected = kwargs.get("output_size") or tuple(int(s * 0.5) for s in shape[2:])
    assert out.shape[2:] == tuple(expected)
    with pytest.raises(ValueError, match="exactly one of them"):
        cls(2)
