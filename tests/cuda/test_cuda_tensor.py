"""CUDA tensors: placement, transfers, PyTorch's device rules and autograd across devices."""
import pickle

import numpy as np
import pytest

import jitgrad
from jitgrad.testing import assert_close

DEV = "cuda:0"


def test_cuda_is_available_and_named():
    assert jitgrad.cuda.is_available()
    assert jitgrad.cuda.device_count() >= 1
    assert jitgrad.cuda.current_device() == 0
    assert isinstance(jitgrad.cuda.get_device_name(0), str)
    jitgrad.cuda.synchronize()


@pytest.mark.parametrize("make", [
    lambda d: jitgrad.zeros(2, 3, device=d),
    lambda d: jitgrad.ones(2, 3, device=d, dtype=jitgrad.float32),
    lambda d: jitgrad.full((2, 3), 1.5, device=d),
    lambda d: jitgrad.empty(2, 3, device=d),
    lambda d: jitgrad.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], device=d),
    lambda d: jitgrad.arange(6, device=d),
    lambda d: jitgrad.eye(3, device=d),
    lambda d: jitgrad.linspace(0, 1, 5, device=d),
])
def test_constructors_place_data_on_the_device(make):
    t = make(DEV)
    ref = make(None)
    assert t.device == DEV and t.is_cuda and t.device.type == "cuda" and t.device.index == 0
    assert t.shape == ref.shape and t.dtype == ref.dtype
    if "empty" not in str(make.__code__.co_consts):
        np.testing.assert_array_equal(t.cpu().numpy(), ref.numpy())


def test_like_constructors_keep_the_device():
    x = jitgrad.ones(2, 2, device="cuda")
    for t in (jitgrad.zeros_like(x), jitgrad.ones_like(x), jitgrad.full_like(x, 3.0),
              jitgrad.empty_like(x)):
        assert t.device == DEV and t.shape == (2, 2)
    assert jitgrad.full_like(x, 3.0).cpu().tolist() == [[3.0, 3.0], [3.0, 3.0]]
    assert jitgrad.zeros_like(x, device="cpu").device == "cpu"


def test_random_tensors_follow_the_cuda_seed():
    jitgrad.cuda.manual_seed(5)
    a = jitgrad.randn(4, device="cuda").cpu().numpy()
    jitgrad.cuda.manual_seed(5)
    b = jitgrad.randn(4, device="cuda").cpu().numpy()
    np.testing.assert_array_equal(a, b)
    jitgrad.manual_seed(6)  # seeds every device, like torch.manual_seed
    c = jitgrad.rand(3, device="cuda").cpu().numpy()
    jitgrad.manual_seed(6)
    np.testing.assert_array_equal(c, jitgrad.rand(3, device="cuda").cpu().numpy())
    assert jitgrad.randint(0, 5, (10,), device="cuda").dtype == jitgrad.int64


def test_to_and_back_records_tocopy_and_moves_the_gradient():
    x = jitgrad.tensor([1.0, -2.0, 3.0], requires_grad=True)
    xc = x.to("cuda")
    assert xc.grad_fn.name() == "ToCopyBackward0" and xc.device == DEV
    y = (xc.sin() * xc).cpu()
    assert y.device == "cpu" and y.grad_fn.name() == "ToCopyBackward0"
    y.backward(jitgrad.ones(3))
    v = np.array([1.0, -2.0, 3.0])
    assert_close(x.grad, np.cos(v) * v + np.sin(v), rtol=1e-13)
    assert x.grad.device == "cpu"


def test_to_variants():
    x = jitgrad.ones(2)
    assert x.to("cpu") is x and x.cpu() is x
    c = x.cuda()
    assert c.device == DEV and c.cuda() is c and c.to(DEV) is c
    assert x.to(0).device == DEV
    both = x.to("cuda", jitgrad.float32)
    assert both.device == DEV and both.dtype == jitgrad.float32
    like = x.to(both)
    assert like.device == DEV and like.dtype == jitgrad.float32
    kw = x.to(device="cuda", dtype=jitgrad.float32)
    assert kw.device == DEV and kw.dtype == jitgrad.float32
    assert c.to(DEV, copy=True) is not c


def test_leaf_on_cuda_accumulates_grad_on_cuda():
    x = jitgrad.tensor([0.5, 1.5], device="cuda", requires_grad=True)
    assert x.is_leaf and x.grad_fn is None
    for _ in range(2):
        (x * x).backward(jitgrad.ones(2, device="cuda"))
    assert x.grad.device == DEV
    assert_close(x.grad.cpu(), [2.0, 6.0], rtol=1e-15)  # 2 * (2x)


def test_second_backward_raises_and_retain_graph_works():
    x = jitgrad.tensor([1.0, 2.0], device="cuda", requires_grad=True)
    y = x.exp() * 2.0
    seed = jitgrad.ones(2, device="cuda")
    y.backward(seed, retain_graph=True)
    y.backward(seed)
    with pytest.raises(RuntimeError, match="a second time"):
        y.backward(seed)
    assert_close(x.grad.cpu(), 4.0 * np.exp([1.0, 2.0]), rtol=1e-13)


def test_create_graph_double_backward_on_cuda():
    x = jitgrad.tensor([0.3, -0.7], device="cuda", requires_grad=True)
    (g,) = jitgrad.autograd.grad(x.tanh(), x, jitgrad.ones(2, device="cuda"), create_graph=True)
    (gg,) = jitgrad.autograd.grad(g, x, jitgrad.ones(2, device="cuda"))
    t = np.tanh([0.3, -0.7])
    assert_close(g.cpu(), 1 - t * t, rtol=1e-13)
    assert_close(gg.cpu(), -2 * t * (1 - t * t), rtol=1e-12)
    assert gg.device == DEV


def test_hooks_and_no_grad_and_detach():
    x = jitgrad.tensor([1.0, 2.0], device="cuda", requires_grad=True)
    seen = []
    x.register_hook(lambda g: seen.append(g.device) or g * 3.0)
    (x * 2.0).backward(jitgrad.ones(2, device="cuda"))
    assert seen == [DEV]
    assert_close(x.grad.cpu(), [6.0, 6.0])
    with jitgrad.no_grad():
        y = x * 2.0
    assert not y.requires_grad and y.device == DEV
    d = x.detach()
    assert d.device == DEV and not d.requires_grad and d._version_counter is x._version_counter


def test_mixing_devices_raises_pytorchs_error_and_changes_nothing():
    a = jitgrad.ones(3, device="cuda", requires_grad=True)
    b = jitgrad.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device, "
                                           "but found at least two devices, cuda:0 and cpu"):
        a + b
    with pytest.raises(RuntimeError, match="same device"):
        b * a
    assert a.grad_fn is None and b.grad_fn is None and a._version == 0


def test_cpu_zero_dim_tensor_without_grad_acts_as_a_scalar():
    a = jitgrad.tensor([1.0, 2.0], device="cuda")
    s = jitgrad.tensor(3.0)
    out = a * s
    assert out.device == DEV and out.cpu().tolist() == [3.0, 6.0]
    with pytest.raises(RuntimeError, match="same device"):
        a * jitgrad.tensor(3.0, requires_grad=True)


def test_numpy_conversion_needs_cpu_first():
    t = jitgrad.ones(2, device="cuda")
    with pytest.raises(TypeError, match=r"can't convert cuda:0 device type tensor to numpy\. "
                                        r"Use Tensor\.cpu\(\)"):
        t.numpy()
    with pytest.raises(TypeError, match="Tensor.cpu"):
        np.asarray(t)
    assert t.cpu().numpy().tolist() == [1.0, 1.0]


def test_host_reads_item_tolist_bool_repr():
    t = jitgrad.tensor([[1.0, 2.0]], device="cuda", requires_grad=True)
    assert t.tolist() == [[1.0, 2.0]]
    assert t[0, 1].item() == 2.0
    assert bool(jitgrad.tensor([1.0], device="cuda"))
    assert float(jitgrad.tensor(2.5, device="cuda")) == 2.5
    assert repr(t) == "tensor([[1., 2.]], device='cuda:0', requires_grad=True)"
    y = t * 2.0
    assert repr(y) == "tensor([[2., 4.]], device='cuda:0', grad_fn=<MulBackward0>)"
    assert repr(jitgrad.ones(2, device="cuda", dtype=jitgrad.float32)) == \
        "tensor([1., 1.], device='cuda:0', dtype=jitgrad.float32)"


def test_cuda_array_interface_zero_copy():
    t = jitgrad.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], device="cuda")
    iface = t._data.__cuda_array_interface__
    assert iface["shape"] == (2, 3) and iface["typestr"] == "<f8" and iface["version"] == 3
    assert iface["strides"] is None
    view = t._data.T
    assert view.__cuda_array_interface__["strides"] == (8, 24)
    assert view.__cuda_array_interface__["data"][0] == iface["data"][0]
    assert t.__cuda_array_interface__ == iface
    with pytest.raises(AttributeError, match="non-CUDA tensor"):
        jitgrad.ones(2).__cuda_array_interface__
    with pytest.raises(RuntimeError, match="requires grad"):
        jitgrad.ones(2, device="cuda", requires_grad=True).__cuda_array_interface__



@pytest.mark.skipif(__import__("os").environ.get("NUMBA_ENABLE_CUDASIM") == "1",
                    reason="the simulator has no device memory to share")
def test_cuda_array_interface_shares_memory_with_numba_kernels():
    from numba import cuda  # zero copy: a Numba kernel writes into the tensor's memory

    @cuda.jit
    def double(a):
        i = cuda.grid(1)
        if i < a.shape[0]:
            a[i] *= 2.0

    flat = jitgrad.tensor([1.0, 2.0, 3.0], device="cuda")
    double[1, 4](cuda.as_cuda_array(flat))
    assert flat.cpu().tolist() == [2.0, 4.0, 6.0]


def test_pickle_round_trip_keeps_device():
    t = jitgrad.tensor([1.0, 2.0], device="cuda", requires_grad=True)
    u = pickle.loads(pickle.dumps(t))
    assert u.device == DEV and u.requires_grad and u.cpu().tolist() == [1.0, 2.0]


def test_bad_devices_raise_clearly():
    with pytest.raises(RuntimeError, match="invalid device ordinal"):
        jitgrad.zeros(2, device="cuda:7")
    with pytest.raises(RuntimeError, match="Expected one of cpu, cuda"):
        jitgrad.zeros(2, device="tpu")


def test_float32_math_stays_float32_on_cuda():
    x = jitgrad.tensor([0.1, 0.2], device="cuda", dtype=jitgrad.float32)
    y = x * 0.1 + 1.0
    assert y.dtype == jitgrad.float32
    assert_close(y.cpu(), (np.float32([0.1, 0.2]) * np.float32(0.1) + np.float32(1.0)), rtol=0)


def test_wide_graph_backward_with_engine_workers():
    """Several independent branches: the threaded engine may run CUDA nodes on workers."""
    x = jitgrad.tensor(np.linspace(-1, 1, 16), device="cuda", requires_grad=True)
    xs = jitgrad.tensor(np.linspace(-1, 1, 16), requires_grad=True)
    for t in (x, xs):
        branches = [((t * (k + 1)).sin() * t).exp() for k in range(8)]
        out = branches[0]
        for b in branches[1:]:
            out = out + b
        out.backward(jitgrad.ones(16, device=t.device))
    assert_close(x.grad.cpu(), xs.grad, rtol=1e-12)


def test_caching_allocator_reuses_freed_buffers():
    jitgrad.cuda.empty_cache()
    x = jitgrad.ones(1000, device="cuda")
    before = jitgrad.cuda.memory_stats()
    for _ in range(5):
        y = x * 2.0  # each result frees the previous one: its block is reused
    after = jitgrad.cuda.memory_stats()
    # the result is made before the old one is dropped: two blocks take turns
    assert after["reuses"] - before["reuses"] >= 3
    assert after["allocations"] - before["allocations"] <= 2
    assert y.cpu().numpy().sum() == 2000.0
    view = y._data.reshape(10, 100)  # a view keeps the block alive
    del y
    z = x * 3.0  # would take y's block if the view had not kept it
    assert view.get().sum() == 2000.0 and z.cpu().numpy().sum() == 3000.0
    jitgrad.cuda.empty_cache()
    assert jitgrad.cuda.memory_stats()["cached_bytes"] == 0
