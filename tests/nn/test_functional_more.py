"""``jitgrad.nn.functional``'s functions beyond the fused layers: forward values against
PyTorch 2.13's (pinned in ``_pinned_functional_more.py`` for the cases of
``_functional_more_cases.py``) and gradients against finite differences in float64, of second
order where the function is twice differentiable."""
import numpy as np
import pytest

import jitgrad
import jitgrad.nn.functional as F
from jitgrad.autograd import gradcheck, gradgradcheck

from _functional_more_cases import CASES, rng_for  # (tests/nn is on sys.path)
from _pinned_functional_more import PINNED


def _tensors(name, requires_grad):
    inputs, _, _, fixed = CASES[name]
    out = []
    for i, a in enumerate(inputs(rng_for(name))):
        a = np.asarray(a)
        if a.dtype.kind == "f":
            out.append(jitgrad.tensor(a, dtype=jitgrad.float64,
                                      requires_grad=requires_grad and i not in fixed))
        else:
            out.append(jitgrad.tensor(a.astype(np.int64)))
    return out


def _flat(out):
    return [o for v in out for o in _flat(v)] if isinstance(out, (tuple, list)) else [out]


def test_every_case_is_pinned():
    assert sorted(CASES) == sorted(PINNED)


@pytest.mark.parametrize("name", sorted(CASES))
def test_forward_matches_pytorch(name):
    outs = _flat(CASES[name][1](F, *_tensors(name, False)))
    expected = PINNED[name]
    assert len(outs) == len(expected)
    for got, (dtype, shape, values) in zip(outs, expected):
        assert got.shape == shape, (name, got.shape, shape)
        assert got.dtype.name == dtype, (name, got.dtype, dtype)
        np.testing.assert_allclose(got.numpy().ravel(), np.asarray(values, dtype=dtype),
                                   rtol=1e-10, atol=1e-12, err_msg=name)


@pytest.mark.parametrize("name", sorted(n for n in CASES if CASES[n][2]))
def test_gradients(name):
    call, order = CASES[name][1], CASES[name][2]
    args = _tensors(name, True)
    leaves = [a for a in args if a.requires_grad]

    def fn(*xs):
        it = iter(xs)
        full = [next(it) if a.requires_grad else a for a in args]
        return tuple(o for o in _flat(call(F, *full)) if o.dtype.is_floating_point)

    assert gradcheck(fn, tuple(leaves))
    if order == 2:
        assert gradgradcheck(fn, tuple(leaves))
