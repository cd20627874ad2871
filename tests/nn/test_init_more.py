"""``nn.init`` additions: ``dirac_`` (PyTorch 2.13's values), ``eye_``, ``orthogonal_``'s
gain, ``generator=`` reproducibility and the deprecated spellings without the underscore."""
import warnings

import numpy as np
import pytest

import jitgrad as jg
import jitgrad.nn as nn
from jitgrad.nn import init


def test_dirac_with_groups_as_torch():
    w = init.dirac_(jg.empty(4, 2, 3, 3), groups=2)
    centre = np.zeros((4, 2))
    centre[[0, 1, 2, 3], [0, 1, 0, 1]] = 1.0  # torch.nn.init.dirac_(w, groups=2)[:, :, 1, 1]
    np.testing.assert_array_equal(w.numpy()[:, :, 1, 1], centre)
    assert w.numpy().sum() == 4.0
    x = jg.randn(1, 3, 5)
    conv_w = init.dirac_(jg.empty(3, 3, 3))  # the identity convolution
    np.testing.assert_allclose(nn.functional.conv1d(x, conv_w, padding=1).numpy(), x.numpy())
    with pytest.raises(ValueError, match="3, 4, or 5 dimensions"):
        init.dirac_(jg.empty(2, 2))
    with pytest.raises(ValueError, match="divisible by groups"):
        init.dirac_(jg.empty(3, 2, 3), groups=2)


def test_eye_rectangular():
    np.testing.assert_array_equal(init.eye_(jg.empty(2, 3)).numpy(), np.eye(2, 3))


@pytest.mark.parametrize("shape", [(3, 5), (5, 3), (4, 2, 2)])
def test_orthogonal_gain_and_generator(shape):
    g = jg.Generator().manual_seed(7)
    w = init.orthogonal_(jg.empty(*shape), gain=2.0, generator=g).numpy().reshape(shape[0], -1)
    small = w @ w.T if w.shape[0] <= w.shape[1] else w.T @ w
    np.testing.assert_allclose(small, 4.0 * np.eye(min(w.shape)), atol=1e-12)
    w2 = init.orthogonal_(jg.empty(*shape), gain=2.0, generator=jg.Generator().manual_seed(7))
    np.testing.assert_array_equal(w2.numpy().reshape(w.shape), w)


@pytest.mark.parametrize("old, new, args", [
    ("uniform", "uniform_", (-1.0, 1.0)), ("normal", "normal_", (0.0, 2.0)),
    ("constant", "constant_", (0.5,)), ("eye", "eye_", ()),
    ("xavier_uniform", "xavier_uniform_", ()),
    ("xavier_normal", "xavier_normal_", ()), ("kaiming_uniform", "kaiming_uniform_", ()),
    ("kaiming_normal", "kaiming_normal_", ()), ("orthogonal", "orthogonal_", ())])
def test_deprecated_spellings_warn_and_match(old, new, args):
    jg.manual_seed(3)
    with pytest.warns(FutureWarning, match=f"`nn.init.{old}` is now deprecated in favor of "
                                           f"`nn.init.{new}`"):
        a = getattr(init, old)(jg.empty(3, 4), *args)
    jg.manual_seed(3)
    b = getattr(init, new)(jg.empty(3, 4), *args)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert getattr(init, old).__name__ == old


def test_deprecated_dirac():
    with pytest.warns(FutureWarning, match="dirac_"):
        w = init.dirac(jg.empty(2, 2, 3))
    assert w.numpy()[:, :, 1].tolist() == [[1.0, 0.0], [0.0, 1.0]]


def test_skipped_writes_nothing_and_draws_nothing():
    t = jg.full((2, 2), 5.0)
    jg.manual_seed(0)
    with init.skipped():
        init.normal_(t)
        init.zeros_(t)
    assert t.numpy().tolist() == [[5.0, 5.0], [5.0, 5.0]]
    drawn = jg.rand(2).numpy()
    jg.manual_seed(0)
    np.testing.assert_array_equal(jg.rand(2).numpy(), drawn)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        init.uniform_(t)  # back to normal: writes
    assert (t.numpy() < 1).all()
