"""nn.functional beyond the op database: node names, errors, side effects (running stats,
dropout masks, padding_idx, in-place variants) and the kernel variants (direct vs im2col)."""
import math

import numpy as np
import pytest

import jitgrad
import jitgrad.nn.functional as F
from jitgrad.kernels.cpu import nn as cpu_nn
from jitgrad.testing import assert_close, gradcheck
from jitgrad.testing.db_nn import ref_conv2d


def _t(a, rg=False):
    return jitgrad.tensor(np.asarray(a, dtype=np.float64), requires_grad=rg)


def _names(t):
    node = t.grad_fn
    return node.name(), [None if n is None else n.name().rsplit("::", 1)[-1]
                         for n, _ in node.next_functions]


def test_node_names_match_pytorch():
    rng = np.random.default_rng(0)
    x = _t(rng.standard_normal((4, 3)), True)
    w = _t(rng.standard_normal((5, 3)), True)
    b = _t(rng.standard_normal(5), True)
    assert _names(F.linear(x, w, b)) == ("AddmmBackward0",
                                         ["AccumulateGrad", "AccumulateGrad", "TBackward0"])
    assert _names(F.linear(x, w)) == ("MmBackward0", ["AccumulateGrad", "TBackward0"])
    img = _t(rng.standard_normal((2, 3, 6, 6)), True)
    cw = _t(rng.standard_normal((4, 3, 3, 3)), True)
    assert _names(F.conv2d(img, cw)) == ("ConvolutionBackward0",
                                         ["AccumulateGrad", "AccumulateGrad", None])
    assert F.max_pool2d(img, 2).grad_fn.name() == "MaxPool2DWithIndicesBackward0"
    assert F.avg_pool2d(img, 2).grad_fn.name() == "AvgPool2DBackward0"
    t = jitgrad.tensor([0, 2, 1, 0])
    assert _names(F.cross_entropy(x, t)) == ("NllLossBackward0", ["LogSoftmaxBackward0"])
    assert _names(F.layer_norm(x, (3,))) == ("NativeLayerNormBackward0",
                                             ["AccumulateGrad", None, None])
    assert F.batch_norm(x, None, None, training=True).grad_fn.name() == "NativeBatchNormBackward0"
    assert _names(F.dropout(x, 0.5)) == ("MulBackward0", ["AccumulateGrad", None])
    assert F.l1_loss(x, x.detach() + 1).grad_fn.name() == "MeanBackward0"
    for fn, name in ((F.gelu, "GeluBackward0"), (F.silu, "SiluBackward0"),
                     (F.softplus, "SoftplusBackward0"), (F.leaky_relu, "LeakyReluBackward0")):
        assert fn(x).grad_fn.name() == name


@pytest.mark.parametrize("shape", [(1, 4, 7, 7), (3, 2, 5, 9)])
def test_conv_direct_and_im2col_agree(shape, monkeypatch):
    rng = np.random.default_rng(1)
    x = rng.standard_normal(shape)
    w = rng.standard_normal((3, shape[1], 3, 3))
    g = rng.standard_normal((shape[0], 3) + tuple(d for d in shape[2:]))
    outs = []
    for limit in (0, 10 ** 6):  # everything im2col, then everything direct
        monkeypatch.setattr(cpu_nn, "DIRECT_MAX_TAPS", limit)
        xt, wt = _t(x, True), _t(w, True)
        y = F.conv2d(xt, wt, padding=1)
        y.backward(_t(g))
        outs.append((y.numpy().copy(), xt.grad.numpy(), wt.grad.numpy()))
    for a, b in zip(*outs):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(outs[0][0], ref_conv2d(x, w, padding=1), rtol=1e-12)


def test_conv_unbatched_same_padding_and_errors():
    rng = np.random.default_rng(2)
    x, w = rng.standard_normal((2, 5, 5)), rng.standard_normal((3, 2, 3, 3))
    y = F.conv2d(_t(x), _t(w), padding="same")
    assert y.shape == (3, 5, 5)
    assert_close(y, ref_conv2d(x[None], w, padding=1)[0], rtol=1e-12)
    assert F.conv2d(_t(x[None]), _t(w), padding="valid").shape == (1, 3, 3, 3)
    with pytest.raises(RuntimeError, match="expected input.* to have 2 channels"):
        F.conv2d(_t(rng.standard_normal((1, 4, 5, 5))), _t(w))
    with pytest.raises(ValueError, match="strided"):
        F.conv2d(_t(x[None]), _t(w), stride=2, padding="same")
    with pytest.raises(RuntimeError, match="same dtype"):
        F.conv2d(jitgrad.tensor(x[None].astype(np.float32)), _t(w))
    with pytest.raises(RuntimeError, match="smaller than the kernel"):
        F.conv2d(_t(rng.standard_normal((1, 2, 2, 2))), _t(w))
    with pytest.raises(RuntimeError, match="float32 or float64"):
        F.max_pool2d(jitgrad.ones(1, 1, 2, 2, dtype=jitgrad.float16), 2)


def test_conv_double_backward_gradcheck():
    """gradgrad through ConvolutionBackwardBackward0 (checked by finite differences)."""
    rng = np.random.default_rng(3)
    x = _t(rng.standard_normal((1, 2, 4, 4)), True)
    w = _t(rng.standard_normal((2, 2, 2, 2)), True)

    def grad_norm(x, w):
        with jitgrad.enable_grad():  # the numerical Jacobian calls this under no_grad
            y = F.conv2d(x, w, padding=1, stride=2)
            gx, gw = jitgrad.autograd.grad((y * y).sum(), (x, w), create_graph=True)
            return (gx * gx).sum() + (gw * gw).sum()

    assert gradcheck(grad_norm, (x, w))


def test_max_pool_indices_and_nan():
    x = _t(np.arange(16.0).reshape(1, 1, 4, 4))
    out, idx = F.max_pool2d(x, 2, return_indices=True)
    assert out.tolist() == [[[[5.0, 7.0], [13.0, 15.0]]]]
    assert idx.dtype == jitgrad.int64 and idx.tolist() == [[[[5, 7], [13, 15]]]]
    y = np.arange(16.0).reshape(1, 1, 4, 4)
    y[0, 0, 0, 0] = np.nan
    assert math.isnan(F.max_pool2d(_t(y), 2)[0, 0, 0, 0].item())
    with pytest.raises(RuntimeError, match="pad should be at most half"):
        F.max_pool2d(x, 2, padding=2)


def test_overlapping_max_pool_accumulates_gradient():
    x = _t([[[[1.0, 9.0, 2.0], [0.0, 0.0, 0.0], [3.0, 0.0, 4.0]]]], True)
    F.max_pool2d(x, 2, stride=1).sum().backward()  # 9 is the max of both top windows
    assert x.grad.numpy()[0, 0].tolist() == [[0, 2, 0], [0, 0, 0], [1, 0, 1]]


def test_batch_norm_running_stats_and_errors():
    rng = np.random.default_rng(4)
    x = rng.standard_normal((6, 3, 2))
    rm, rv = jitgrad.zeros(3, dtype=jitgrad.float64), jitgrad.ones(3, dtype=jitgrad.float64)
    v0 = rm._version
    F.batch_norm(_t(x), rm, rv, training=True, momentum=0.25)
    n = 12
    assert_close(rm, 0.25 * x.mean((0, 2)), rtol=1e-12)
    assert_close(rv, 0.75 + 0.25 * x.var((0, 2)) * n / (n - 1), rtol=1e-12)
    assert rm._version > v0
    with pytest.raises(ValueError, match="more than 1 value per channel"):
        F.batch_norm(_t(np.ones((1, 3))), None, None, training=True)
    with pytest.raises(RuntimeError, match="running_mean"):
        F.batch_norm(_t(x), None, None, training=False)


def test_layer_norm_shape_error():
    with pytest.raises(RuntimeError, match=r"Given normalized_shape=\[4\]"):
        F.layer_norm(_t(np.ones((2, 3))), 4)


def test_embedding_padding_idx_and_bounds():
    w = _t(np.arange(8.0).reshape(4, 2), True)
    idx = jitgrad.tensor([[0, 2], [2, 3]])
    out = F.embedding(idx, w, padding_idx=2)
    assert out.tolist() == [[[0, 1], [4, 5]], [[4, 5], [6, 7]]]
    out.sum().backward()
    assert w.grad.tolist() == [[1, 1], [0, 0], [0, 0], [1, 1]]  # no gradient into row 2
    with pytest.raises(IndexError, match="index out of range"):
        F.embedding(jitgrad.tensor([4]), w)
    w2 = _t(np.array([[3.0, 4.0], [0.3, 0.4]]))
    F.embedding(jitgrad.tensor([0, 1]), w2, max_norm=1.0)
    np.testing.assert_allclose(np.linalg.norm(w2.numpy(), axis=1), [1.0, 0.5], rtol=1e-6)


def test_dropout_mask_scaling_and_gradient():
    jitgrad.manual_seed(0)
    x = _t(np.ones((200, 50)), True)
    y = F.dropout(x, 0.3)
    kept = y.numpy() != 0
    assert abs(kept.mean() - 0.7) < 0.02
    np.testing.assert_allclose(y.numpy()[kept], 1 / 0.7)
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), y.numpy())
    assert F.dropout(x, 0.3, training=False) is x
    assert (F.dropout(x, 1.0).numpy() == 0).all()
    with pytest.raises(ValueError, match="between 0 and 1"):
        F.dropout(x, 1.5)


def test_inplace_activations():
    x = _t([-1.0, 2.0])
    assert F.relu(x, inplace=True) is x and x.tolist() == [0.0, 2.0]
    y = _t([-2.0, 3.0])
    F.leaky_relu(y, 0.5, inplace=True)
    assert y.tolist() == [-1.0, 3.0]


def test_losses_errors_and_warnings():
    x = _t(np.zeros((3, 2)))
    with pytest.raises(ValueError, match="not a valid value for reduction"):
        F.mse_loss(x, x, reduction="avg")
    with pytest.warns(UserWarning, match="different to the input size"):
        F.mse_loss(x, _t(np.zeros(2)))
    with pytest.raises(IndexError, match="Target 5 is out of bounds"):
        F.cross_entropy(x, jitgrad.tensor([0, 5, 1]))
    with pytest.raises(ValueError, match="batch_size"):
        F.cross_entropy(x, jitgrad.tensor([0, 1]))
    with pytest.raises(RuntimeError, match="between 0 and 1"):
        F.binary_cross_entropy(_t([1.5]), _t([1.0]))
    with pytest.raises(ValueError, match="must be the same as input size"):
        F.binary_cross_entropy_with_logits(x, _t(np.zeros(2)))


def test_cross_entropy_all_ignored_is_nan_and_stable_for_large_logits():
    x = _t([[1000.0, 0.0], [0.0, 1000.0]])
    assert F.cross_entropy(x, jitgrad.tensor([0, 1])).item() == 0.0
    assert math.isnan(F.cross_entropy(x, jitgrad.tensor([-100, -100])).item())
    assert F.binary_cross_entropy_with_logits(_t([800.0]), _t([1.0])).item() == 0.0


def test_one_hot():
    out = F.one_hot(jitgrad.tensor([2, 0]), 3)
    assert out.dtype == jitgrad.int64 and out.tolist() == [[0, 0, 1], [1, 0, 0]]
