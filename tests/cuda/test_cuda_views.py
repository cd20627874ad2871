"""Views, in-place ops and indexing on CUDA behave as on the CPU: views share the device buffer,
the version counter and ``_base``; in-place writes through views record CopySlices; index
errors carry the CPU path's messages. Values and gradients are compared with the CPU run of
the same code (ported from tests/ops/test_views_inplace.py)."""
import numpy as np
import pytest

import jitgrad as jg
from jitgrad.ops.core import dispatch
from jitgrad.testing import assert_close

DEV = "cuda:0"
MASK = np.array([[True, False, True, False], [False, False, True, True],
                 [True, True, False, False]])


def _inputs(seed=0):
    rng = np.random.default_rng(seed)
    x = rng.uniform(0.2, 1.0, (3, 4)) * rng.choice([-1.0, 1.0], (3, 4))
    v = rng.uniform(0.5, 1.5, 12)
    return x, v


# --- cases: the same code on CPU and CUDA tensors -------------------------------------------
def c_slice_mul(x, v):
    y = x * 1.0
    s = y[1:3]
    s.mul_(v[:4])
    return y, s


def c_column_iadd_and_setitem(x, v):
    y = x * 1.0
    y[:, 0] += v[:3]
    y[1] = v[:4]
    y[0, 1:3] = 5.0
    y[..., 3] = v[:3]
    return (y,)


def c_setitem_repeated_and_mask(x, v):
    y = x * 1.0
    y[[0, 2, 0], 1] = v[:3]
    y[[1, 1, 2], [0, 0, 3]] += v[3:6]
    y[MASK] *= 0.5
    y[:, MASK[0]] = v[6]
    return (y,)


def c_view_of_view_chain(x, v):
    y = x * 1.0
    s = y.view(4, 3)[1:].T[::2]
    s.mul_(v[:3])
    return y, s


def c_base_modified_then_view_used(x, v):  # the view's grad_fn is regenerated (AsStrided)
    y = x * 1.0
    s = y[:, 1:3]
    y.mul_(v[0])
    y[0].add_(1.0)
    return s * s, y


def c_diagonal_narrow_select_negative(x, v):
    y = x * 1.0
    y.narrow(1, 1, 2).mul_(v[:2])
    y.select(0, 2).add_(v[2])
    z = y.view(12)[:9] * 1.0
    z.view(3, 3).diagonal(1).add_(v[:2])
    y[::-1, ::-2].mul_(v[:2])
    return y, z


def c_self_overlap_fill_copy(x, v):
    y = x * 1.0
    y[1:] = y[:-1]
    y[:, ::-1] += y
    y[0].zero_()
    y[:, 2].fill_(7.0)
    y.t()[1].copy_(v[:3])
    return (y,)


def c_index_ops_on_views(x, v):
    y = x * 1.0
    y[:, 1:].masked_fill_(jg.tensor(MASK[:, 1:]), 0.5)
    y[1:].index_add_(1, jg.tensor([3, 0, 3]), v[:6].view(2, 3))
    y.index_put_((jg.tensor([0, 2, 0]), jg.tensor([1, 1, 1])), v[6:9])
    y[0].index_put_((jg.tensor([3, 3]),), v[9:11], True)
    y.t().scatter_add_(0, jg.tensor([[1, 1, 0]]), v[:3].view(1, 3))
    return (y,)


def c_unary_chain_on_view(x, v):
    y = x * x + 1.0
    y[1:, 1:].log_()
    y[0].sin_()
    y[:, 2].div_(v[:3])
    y.t()[1:3].exp_()
    return (y,)


CASES = [c_slice_mul, c_column_iadd_and_setitem, c_setitem_repeated_and_mask,
         c_view_of_view_chain, c_base_modified_then_view_used, c_diagonal_narrow_select_negative,
         c_self_overlap_fill_copy, c_index_ops_on_views, c_unary_chain_on_view]


def _on(device, x, v, requires_grad=True):
    return (jg.tensor(x, device=device, requires_grad=requires_grad),
            jg.tensor(v, device=device, requires_grad=requires_grad))


@pytest.mark.parametrize("case", CASES, ids=[c.__name__[2:] for c in CASES])
def test_case_matches_cpu(case):
    x, v = _inputs()
    cpu_in, dev_in = _on("cpu", x, v), _on(DEV, x, v)
    cpu_out, dev_out = case(*cpu_in), case(*dev_in)
    for c, d in zip(cpu_out, dev_out):
        assert d.device == DEV and d.shape == c.shape
        assert_close(d.cpu(), c, rtol=1e-13, atol=1e-14)
    seeds = [np.random.default_rng(5).standard_normal(c.shape) for c in cpu_out]
    cpu_g = jg.autograd.grad(list(cpu_out), list(cpu_in), [jg.tensor(s) for s in seeds])
    dev_g = jg.autograd.grad(list(dev_out), list(dev_in), [jg.tensor(s, device=DEV) for s in seeds])
    for c, d in zip(cpu_g, dev_g):
        assert d.device == DEV
        assert_close(d.cpu(), c, rtol=1e-12, atol=1e-13)
    plain = case(*_on(DEV, x, v, requires_grad=False))  # no autograd: the same values
    for c, d in zip(cpu_out, plain):
        assert_close(d.cpu(), c, rtol=1e-13, atol=1e-14)


# --- view semantics ---------------------------------------------------------------------------
def test_views_share_the_buffer_version_counter_and_base():
    m = jg.zeros(3, 4, device=DEV)
    for view in (m.view(12), m.reshape(2, 6), m.t(), m.permute(1, 0), m.unsqueeze(0),
                 m[None].squeeze(0), m.flatten(), m.expand(2, 3, 4), m[1], m[:, 2], m[..., None],
                 m.diagonal(), m.narrow(0, 1, 2), m.select(1, 3), m.transpose(0, 1), m[::-1]):
        assert view._base is m and view._version_counter is m._version_counter
        assert dispatch.shares_memory(view._data, m._data)
    assert m.t().reshape(12)._base is None  # no view possible: a copy, as on the CPU
    assert m[[0, 1]]._base is None and m[m > 0]._base is None
    v = m[1:, 1::2]
    assert v.stride() == (4, 2) and v.storage_offset() == 5 and not v.is_contiguous()


def test_writes_through_every_kind_of_view_reach_the_base():
    a = np.arange(12.0).reshape(3, 4)
    t = jg.tensor(a.copy(), device=DEV)
    for np_view, jg_view in ((a.reshape(12)[3:5], t.view(12)[3:5]), (a.T[1], t.t()[1]),
                             (np.einsum("ii->i", a[:, :3]), t[:, :3].diagonal()),
                             (a[:, 1:3], t.narrow(1, 1, 2)), (a[None][0, 2], t.unsqueeze(0)[0, 2]),
                             (a[::-1, ::2], t[::-1, ::2])):
        np_view *= 2.0
        jg_view *= 2.0
        assert_close(t.cpu(), a, rtol=0, atol=0)
    assert t._version == 6


def test_copyslices_structure_and_versions():
    x = jg.tensor([1.0, 2.0, 3.0, 4.0], device=DEV, requires_grad=True)
    y = x * 2
    mul_node = y.grad_fn
    v = y[1:3]
    v.mul_(3)
    assert type(y.grad_fn).__name__ == "CopySlices"
    assert y.grad_fn.next_functions[0] == (mul_node, 0)
    assert v.grad_fn.name() == "AsStridedBackward0" and v._version == y._version == 1
    y.sum().backward()
    assert x.grad.device == DEV and x.grad.tolist() == [2.0, 6.0, 6.0, 2.0]


def test_saved_value_overwritten_in_place_raises():
    x = jg.tensor([1.0, 2.0], device=DEV, requires_grad=True)
    y = x.exp()
    y[0] = 0.0
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_repeated_index_gradient_goes_to_the_winning_write_only():
    x = jg.zeros(3, device=DEV)
    v = jg.tensor([1.0, 2.0, 3.0], device=DEV, requires_grad=True)
    x[[0, 0, 2]] = v
    assert x.tolist() == [2.0, 0.0, 3.0]
    (x * jg.tensor([10.0, 20.0, 30.0], device=DEV)).sum().backward()
    assert v.grad.tolist() == [0.0, 10.0, 30.0]


def test_expanded_views_refuse_writes():
    e = jg.zeros(3, device=DEV).expand(2, 3)
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
        e.add_(1.0)


# --- indices: CUDA index tensors, masks, errors as on the CPU ----------------------------------
def test_cuda_index_tensors_and_masks():
    a = np.arange(12.0).reshape(3, 4)
    t = jg.tensor(a, device=DEV)
    idx = jg.tensor([2, 0, 2], device=DEV)
    assert_close(t[idx].cpu(), a[[2, 0, 2]], rtol=0, atol=0)
    assert_close(t[t > 4].cpu(), a[a > 4], rtol=0, atol=0)  # a sync for the count
    assert_close(t.index_select(1, idx).cpu(), a[:, [2, 0, 2]], rtol=0, atol=0)
    assert_close(t.gather(1, jg.tensor([[1], [0], [3]], device=DEV)).cpu(),
                 np.take_along_axis(a, np.array([[1], [0], [3]]), 1), rtol=0, atol=0)
    assert_close(t.masked_fill(t > 4, -1.0).cpu(), np.where(a > 4, -1.0, a), rtol=0, atol=0)
    t[t > 9] = 0.0
    assert t.cpu().tolist()[2] == [8.0, 9.0, 0.0, 0.0]


@pytest.mark.parametrize("fn", [
    lambda t: t[5], lambda t: t[0, 0, 0], lambda t: t[[0, 3]], lambda t: t.take(jg.tensor([12])),
    lambda t: t.index_select(0, jg.tensor([3])), lambda t: t.gather(0, jg.tensor([[3]])),
    lambda t: t[np.array([True, False])], lambda t: t.narrow(0, 2, 2)])
def test_index_errors_match_the_cpu(fn):
    cpu = jg.tensor(np.arange(12.0).reshape(3, 4))
    with pytest.raises(Exception) as expected:
        fn(cpu)
    with pytest.raises(type(expected.value)) as got:
        fn(cpu.to(DEV))
    assert str(got.value) == str(expected.value)


def test_out_arguments_on_cuda():
    from jitgrad.ops import binary, indexing, scatter, shape, unary

    with jg.no_grad():
        out = jg.zeros(3, device=DEV)
        r = dispatch.elementwise(unary.EXP, jg.ones(3, device=DEV), out=out)
    assert r is out and out._version == 1
    assert_close(out.cpu(), np.exp(np.ones(3)))
    small = jg.zeros(2, device=DEV)
    with pytest.warns(UserWarning, match="An output with one or more elements was resized"):
        dispatch.elementwise(unary.EXP, jg.ones(3, device=DEV), out=small)
    assert small.shape == (3,) and small.device == DEV
    col = jg.zeros(3, 2, device=DEV)
    dispatch.elementwise(unary.EXP, jg.zeros(3, device=DEV), out=col[:, 1])  # a strided out
    assert col.tolist() == [[0.0, 1.0]] * 3
    a = jg.arange(5.0).to(DEV)
    dispatch.elementwise(binary.ADD, a, a[::-1], out=a)  # overlapping operands read old values
    assert a.tolist() == [4.0] * 5
    c = jg.empty(0, device=DEV)
    assert shape.cat([jg.ones(2, device=DEV), jg.zeros(1, device=DEV)], out=c) is c
    assert c.tolist() == [1.0, 1.0, 0.0]
    g = jg.zeros(2, device=DEV)
    scatter.gather(jg.tensor([5.0, 6.0], device=DEV), 0, jg.tensor([1, 1]), out=g)
    assert g.tolist() == [6.0, 6.0]
    indexing.take(jg.tensor([5.0, 6.0], device=DEV), jg.tensor([-1, 0]), out=g)
    assert g.tolist() == [6.0, 5.0]
    with pytest.raises(RuntimeError, match="Expected out tensor to have device cuda:0"):
        dispatch.elementwise(binary.ADD, a, a, out=jg.zeros(5))
    with pytest.raises(RuntimeError, match="Expected out tensor to have device cuda:0"):
        shape.cat([a, a], out=jg.zeros(10))
