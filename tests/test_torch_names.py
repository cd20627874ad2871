"""PyTorch's names and signatures on the top level and on Tensor (issue 35): parameter names,
``out=``, in-place forms derived from the rows, aliases, Tensor methods, top-level classes and
values. Reference values pinned from PyTorch 2.13 (CI has no torch)."""
import inspect
import math
import warnings

import numpy as np
import pytest

import jitgrad as jg
from jitgrad.autograd import gradcheck, gradgradcheck


def t64(values, requires_grad=False):
    return jg.tensor(values, dtype=jg.float64, requires_grad=requires_grad)


# --- parameter names -------------------------------------------------------------------------
def test_torch_parameter_names():
    assert list(inspect.signature(jg.add).parameters) == ["input", "other", "alpha", "out"]
    assert list(inspect.signature(jg.sin).parameters) == ["input", "out"]
    assert list(inspect.signature(jg.acos).parameters)[0] == "input"
    assert list(inspect.signature(jg.mm).parameters)[:2] == ["input", "mat2"]
    assert "exponent" in inspect.signature(jg.pow).parameters
    a, b = t64([1.0, 2.0]), t64([3.0, 5.0])
    assert jg.add(input=a, other=b, alpha=2).tolist() == [7.0, 12.0]
    assert jg.atan2(input=a, other=b).tolist() == pytest.approx(np.arctan2([1, 2], [3, 5]))
    assert jg.sum(input=a).item() == 3.0
    assert jg.sub(a, b, alpha=2).tolist() == [-5.0, -8.0]


# --- out= --------------------------------------------------------------------------------------
def test_out_only_where_torch_has_it():
    for name in ("sin", "add", "cat", "concat", "matmul", "cumsum", "zeros", "sort", "tril"):
        assert "out" in inspect.signature(getattr(jg, name)).parameters, name
    for name in ("transpose", "permute", "relu", "clone", "softmax", "isnan", "split"):
        assert "out" not in inspect.signature(getattr(jg, name)).parameters, name
    assert jg.add.public_function is jg.Tensor.add  # the method is the row's function


def test_out_writes_and_returns_out():
    a = t64([0.5, 1.5, -2.0])
    out = jg.empty(3)
    version = out._version
    assert jg.sin(a, out=out) is out
    np.testing.assert_allclose(out.numpy(), np.sin([0.5, 1.5, -2.0]))
    assert out._version > version
    jg.add(a, a, out=out)
    assert out.tolist() == [1.0, 3.0, -4.0]
    empty = jg.empty(0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an empty out is resized silently
        jg.zeros(2, 3, out=empty)
    assert empty.shape == (2, 3)
    ints = jg.zeros(2, dtype=jg.int64)
    jg.add(jg.tensor([1, 2]), jg.tensor([1, 2]), out=ints)
    assert ints.tolist() == [2, 4] and ints.dtype == jg.int64


def test_out_resizes_with_warning_and_casts_like_torch():
    out = jg.empty(5)
    with pytest.warns(UserWarning, match="was resized since it had shape \\[5\\]"):
        jg.cos(t64([0.0, 1.0, 2.0]), out=out)
    assert out.shape == (3,)
    with pytest.raises(RuntimeError, match="result type Double can't be cast to the desired "
                                           "output type Long"):
        jg.sin(t64([1.0]), out=jg.empty(1, dtype=jg.int64))


def test_out_refuses_autograd():
    a = t64([1.0, 2.0], requires_grad=True)
    msg = ("sin\\(\\): functions with out=... arguments don't support automatic "
           "differentiation, but one of the arguments requires grad.")
    with pytest.raises(RuntimeError, match=msg):
        jg.sin(a, out=jg.empty(2))
    with pytest.raises(RuntimeError, match="add\\(\\): functions with out"):
        jg.add(t64([1.0]), 1, out=jg.empty(1, requires_grad=True))
    with jg.no_grad():
        out = jg.sin(a, out=jg.empty(2))
    np.testing.assert_allclose(out.numpy(), np.sin([1.0, 2.0]))
    with pytest.raises(TypeError, match="argument 'out' must be Tensor .*, not list"):
        jg.sin(t64([1.0]), out=[1.0])


def test_out_tuple_results():
    x = t64([[1.0, 5.0, 3.0], [7.0, 2.0, 0.0]])
    values, indices = jg.empty(0), jg.empty(0, dtype=jg.int64)
    res = jg.max(x, 1, out=(values, indices))
    assert res.values is values and res.indices is indices
    assert values.tolist() == [5.0, 7.0] and indices.tolist() == [1, 0]


# --- in-place forms derived from the rows ---------------------------------------------------------
def test_derived_inplace_values_match_torch():
    x = t64([0.5, -0.3])
    y = x.clone()
    assert y.acos_() is y and y._version == 1
    assert y.tolist() == pytest.approx([1.0471975511965976, 1.8754889808102941])
    assert x.clone().atan2_(t64([1.0, 2.0])).tolist() == pytest.approx(
        [0.4636476090008061, -0.14888994760949725])
    assert t64([0.2, 0.7]).logit_(eps=0.25).tolist() == pytest.approx(
        [-1.0986122886681098, 0.8472978603872034])
    assert t64([1.7, -1.2]).floor_().tolist() == [1.0, -2.0]
    z = t64([0.5, 2.0])
    z.lt_(1.0)
    assert z.tolist() == [1.0, 0.0] and z.dtype == jg.float64
    w = t64([1.0, 2.0])
    w.greater_equal_(t64([2.0, 2.0]))
    assert w.tolist() == [0.0, 1.0]


@pytest.mark.parametrize("method,args", [("acos_", ()), ("log2_", ()), ("atan2_", (0.7,)),
                                         ("logit_", (0.1,)), ("hypot_", (1.5,))])
def test_derived_inplace_gradients(method, args):
    x = t64([0.2, 0.45], requires_grad=True)

    def f(x):
        return getattr(x.clone() * 1.0, method)(*args)

    assert gradcheck(f, (x,))
    assert gradgradcheck(f, (x,))


def test_derived_inplace_refuses_leaf():
    x = t64([0.5], requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        x.ceil_()


# --- aliases -------------------------------------------------------------------------------------
def test_aliases():
    a, b = t64([1.0, 3.0]), t64([2.0, 2.0])
    assert jg.greater(a, b).tolist() == [False, True] and a.less_equal(b).tolist() == [True, False]
    assert jg.not_equal(a, b).tolist() == [True, True] and a.eq(b).tolist() == [False, False]
    assert jg.multiply(a, b).tolist() == [2.0, 6.0] and jg.subtract(a, b).tolist() == [-1.0, 1.0]
    assert jg.true_divide(a, b).tolist() == [0.5, 1.5] and jg.divide(a, b).tolist() == [0.5, 1.5]
    assert jg.absolute(-a).tolist() == [1.0, 3.0] and jg.negative(a).tolist() == [-1.0, -3.0]
    assert jg.concat([a, b]).tolist() == [1.0, 3.0, 2.0, 2.0]
    assert jg.concatenate([a, b], 0).shape == (4,)
    m = jg.zeros(2, 3, 4)
    assert jg.swapdims(m, 0, 2).shape == (4, 3, 2) and m.swapaxes(0, 1).shape == (3, 2, 4)
    assert jg.movedim(m, 0, -1).shape == (3, 4, 2) and m.moveaxis((0, 1), (2, 0)).shape == (3, 4, 2)
    assert jg.ger(a, b).tolist() == [[2.0, 2.0], [6.0, 6.0]]
    assert jg.positive(a) is a
    with pytest.raises(RuntimeError, match="on a bool tensor is not supported"):
        jg.positive(jg.tensor([True]))


def test_div_rounding_modes_match_torch():
    a = t64([7.0, -7.0, 5.5])
    assert jg.div(a, 2, rounding_mode="trunc").tolist() == [3.0, -3.0, 2.0]
    assert jg.div(a, 2, rounding_mode="floor").tolist() == [3.0, -4.0, 2.0]
    q = jg.div(jg.tensor([7, -7]), 2, rounding_mode="floor")
    assert q.tolist() == [3, -4] and q.dtype == jg.int64
    with pytest.raises(RuntimeError, match="rounding_mode to be one of None, 'trunc', or 'floor'"):
        jg.div(a, 2, rounding_mode="x")
    x = t64([1.5, -2.5], requires_grad=True)
    jg.div(x, 0.7, rounding_mode="floor").sum().backward()
    assert x.grad.tolist() == [0.0, 0.0]


# --- Tensor methods -------------------------------------------------------------------------------
def test_new_constructors_follow_self():
    x = jg.ones(2, 3, dtype=jg.float32)
    assert x.new_zeros(2).dtype == jg.float32 and x.new_ones((2, 2)).tolist() == [[1, 1], [1, 1]]
    assert x.new_full((2,), 7).tolist() == [7.0, 7.0] and x.new_full((1,), 7).dtype == jg.float32
    assert x.new_tensor([1, 2]).dtype == jg.float32
    assert x.new_empty(3, dtype=jg.int64).dtype == jg.int64
    assert x.new(2, 3).shape == (2, 3) and x.new().shape == (0,)
    assert x.new([1, 2]).tolist() == [1.0, 2.0]
    assert jg.tensor([1, 2]).type_as(x).dtype == jg.float32


def test_metadata_methods():
    x = jg.zeros(2, 3, dtype=jg.float32)
    assert x.nelement() == 6 and x.ndimension() == 2 and x.element_size() == 4
    assert x.is_cpu and x.is_signed() and not jg.tensor([1], dtype=jg.uint8).is_signed()
    assert not jg.tensor([True]).is_signed()
    assert not x.is_conj() and not x.is_neg() and x.resolve_conj() is x and x.resolve_neg() is x
    assert x.name is None
    y = t64([1.0], requires_grad=True) * 2
    assert y.output_nr == 0
    m = t64([[1.0, 2.0], [3.0, 4.0]])
    assert m.H.tolist() == [[1.0, 3.0], [2.0, 4.0]] and m.mH.tolist() == m.adjoint().tolist()
    with pytest.raises(RuntimeError, match="only supported on matrices"):
        jg.zeros(2).H


def test_unfold_matches_torch_and_gradients():
    u = jg.arange(12.0).reshape(3, 4).unfold(1, 2, 2)
    assert u.tolist() == [[[0, 1], [2, 3]], [[4, 5], [6, 7]], [[8, 9], [10, 11]]]
    assert jg.arange(10.0).unfold(0, 3, 2).tolist() == [[0, 1, 2], [2, 3, 4], [4, 5, 6],
                                                        [6, 7, 8]]
    assert jg.zeros(2, 3, 4).unfold(1, 2, 1).shape == (2, 2, 4, 2)
    x = t64(np.linspace(-1, 1, 7), requires_grad=True)
    assert gradcheck(lambda x: x.unfold(0, 3, 2), (x,))
    with pytest.raises(RuntimeError, match="maximum size for tensor at dimension 0 is 7"):
        x.unfold(0, 8, 1)


def test_shape_methods():
    assert jg.ones(2, 3).sum_to_size(1, 3).tolist() == [[2.0, 2.0, 2.0]]
    with pytest.raises(RuntimeError, match="is not expandable to size"):
        jg.ones(2, 3).sum_to_size(4, 3)
    assert jg.zeros(2, 6).unflatten(1, (2, -1)).shape == (2, 2, 3)
    x = t64([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
    assert gradcheck(lambda x: x.sum_to_size(1, 3), (x,))


def test_inplace_writers():
    t = jg.arange(6.0).reshape(2, 3)
    assert t.put(jg.tensor([0, 5]), t64([9.0, 8.0])).tolist() == [[9, 1, 2], [3, 4, 8]]
    v = t._version
    assert t.put_(jg.tensor([1]), t64([7.0])) is t and t.tolist()[0][1] == 7.0
    assert t._version > v
    z = jg.zeros(5, 2)
    assert z.fill_diagonal_(1, wrap=True).tolist() == [[1, 0], [0, 1], [0, 0], [1, 0], [0, 1]]
    assert jg.zeros(3, 3).fill_diagonal_(5).tolist() == [[5, 0, 0], [0, 5, 0], [0, 0, 5]]
    a = jg.ones(3, 3)
    assert a.tril_() is a and a.tolist() == [[1, 0, 0], [1, 1, 0], [1, 1, 1]]
    x = t64([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    assert gradcheck(lambda x: (x * 1.0).triu_(), (x,))
    assert gradcheck(lambda x: (x * 1.0).fill_diagonal_(0.5), (x,))


def test_view_inplace_methods():
    m = jg.zeros(2, 3)
    assert m.t_() is m and m.shape == (3, 2)
    m.unsqueeze_(0)
    assert m.shape == (1, 3, 2)
    m.squeeze_(0)
    m.transpose_(0, 1)
    assert m.shape == (2, 3)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        t64([[1.0, 2.0]], requires_grad=True).t_()
    x = t64([[1.0, 2.0, 3.0]], requires_grad=True)
    y = x * 2
    y.t_()
    assert y.shape == (3, 1) and type(y.grad_fn).__name__ == "TBackward0"
    (y * t64([[1.0], [2.0], [3.0]])).sum().backward()
    assert x.grad.tolist() == [[2.0, 4.0, 6.0]]


def test_random_fillers_use_the_generator():
    g = jg.Generator().manual_seed(5)
    a = jg.zeros(4).uniform_(2.0, 3.0, generator=g)
    g.manual_seed(5)
    b = jg.zeros(4).uniform_(2.0, 3.0, generator=g)
    assert a.tolist() == b.tolist() and all(2.0 <= v < 3.0 for v in a.tolist())
    assert set(jg.zeros(50).bernoulli_(0.5, generator=g).tolist()) <= {0.0, 1.0}
    assert all(v > 0 for v in jg.zeros(20).exponential_(generator=g).tolist())
    assert all(v >= 1 for v in jg.zeros(20).geometric_(0.3, generator=g).tolist())
    assert all(v > 0 for v in jg.zeros(20).log_normal_(generator=g).tolist())
    r = jg.zeros(100, dtype=jg.int64).random_(3, 6, generator=g)
    assert set(r.tolist()) <= {3, 4, 5}
    n = jg.zeros(20000).normal_(1.0, 2.0, generator=g)
    assert abs(n.mean().item() - 1.0) < 0.1 and abs(n.std().item() - 2.0) < 0.1
    assert jg.zeros(3).cauchy_(generator=g).shape == (3,)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        t64([1.0], requires_grad=True).normal_()


def test_apply_and_map():
    x = t64([1.0, 2.0])
    assert x.apply_(lambda v: v * 10) is x and x.tolist() == [10.0, 20.0]
    assert x.map_(t64([1.0, 2.0]), lambda a, b: a + b).tolist() == [11.0, 22.0]
    with pytest.raises(RuntimeError, match="apply_ can't be used on a tensor that requires"):
        t64([1.0], requires_grad=True).apply_(abs)


# --- classes and values ---------------------------------------------------------------------------
def test_size():
    s = jg.zeros(2, 3).shape
    assert isinstance(s, jg.Size) and isinstance(s, tuple) and s == (2, 3)
    assert s.numel() == 6 and jg.Size([]).numel() == 1 and s[1:] == (3,)
    assert jg.zeros(4).size() == jg.Size([4])


def test_generator_and_rng_state():
    g = jg.Generator()
    g.manual_seed(42)
    assert g.initial_seed() == 42
    a = jg.rand(3, generator=g)
    state = g.get_state()
    b = jg.randn(2, generator=g)
    g.set_state(state)
    assert jg.randn(2, generator=g).tolist() == b.tolist()
    assert jg.rand(3, generator=g.manual_seed(42)).tolist() == a.tolist()
    assert jg.randint(0, 10, (5,), generator=g).dtype == jg.int64
    s = jg.get_rng_state()
    c = jg.rand(2)
    jg.set_rng_state(s)
    assert jg.rand(2).tolist() == c.tolist()
    assert jg.manual_seed(3) is jg.default_generator and jg.initial_seed() == 3
    assert isinstance(jg.seed(), int)


def test_finfo_iinfo_match_torch():
    f = jg.finfo(jg.float64)
    assert (f.eps, f.tiny, f.resolution, f.bits) == (2.220446049250313e-16,
                                                     2.2250738585072014e-308, 1e-15, 64)
    assert jg.finfo(jg.float32).max == 3.4028234663852886e+38 and jg.finfo().bits == 64
    i = jg.iinfo(jg.int16)
    assert (i.min, i.max) == (-32768, 32767) and jg.iinfo(jg.uint8).max == 255
    with pytest.raises(TypeError, match="requires a floating point input type"):
        jg.finfo(jg.int32)
    assert (jg.pi, jg.e, jg.inf) == (math.pi, math.e, math.inf) and math.isnan(jg.nan)
    assert jg.short == jg.int16 and jg.int == jg.int32 and jg.uint16.name == "uint16"


def test_dtype_queries_match_torch():
    assert jg.promote_types(jg.uint8, jg.int8) == jg.int16
    assert jg.promote_types(jg.int64, jg.float32) == jg.float32
    assert not jg.can_cast(jg.int64, jg.bool) and jg.can_cast(jg.bool, jg.int8)
    assert not jg.can_cast(jg.float64, jg.int32) and jg.can_cast(jg.int32, jg.float32)
    assert jg.result_type(jg.tensor([1]), 1.0) == jg.get_default_dtype()
    assert jg.is_floating_point(jg.zeros(1)) and not jg.is_floating_point(jg.tensor([1]))
    assert jg.is_nonzero(jg.tensor([2.0])) and not jg.is_nonzero(jg.tensor([0]))
    with pytest.raises(RuntimeError, match="more than one value is ambiguous"):
        jg.is_nonzero(jg.zeros(2))
    assert jg.typename(jg.ones(2)) == "jitgrad.DoubleTensor" and jg.typename(3) == "int"
    assert jg.is_complex(jg.zeros(1, dtype=jg.complex128))


def test_settings():
    jg.set_float32_matmul_precision("high")
    assert jg.get_float32_matmul_precision() == "high"
    jg.set_float32_matmul_precision("highest")
    with pytest.raises(RuntimeError, match="Invalid precision"):
        jg.set_float32_matmul_precision("low")
    jg.set_warn_always(True)
    assert jg.is_warn_always_enabled()
    jg.set_warn_always(False)
    jg.set_deterministic_debug_mode("warn")
    assert jg.get_deterministic_debug_mode() == 1
    assert jg.is_deterministic_algorithms_warn_only_enabled()
    jg.set_deterministic_debug_mode(0)
    assert not jg.are_deterministic_algorithms_enabled()
    assert jg.set_flush_denormal(True) is False
    assert jg.get_default_device() == "cpu"
    jg.set_default_device("cpu")
    assert jg.zeros(1).device == "cpu"
    jg.set_default_device(None)


def test_inference_mode():
    x = t64([1.0], requires_grad=True)
    with jg.inference_mode():
        y = x * 2
        assert jg.is_inference_mode_enabled() and not jg.is_grad_enabled()
    assert y.is_inference() and not y.requires_grad and not x.is_inference()
    assert not (x * 2).is_inference() and jg.is_grad_enabled()

    @jg.inference_mode()
    def f(t):
        return t + 1

    assert f(x).is_inference()
    with jg.inference_mode(False):
        assert jg.is_grad_enabled() and not (x * 1).is_inference()


def test_more_methods_match_torch():
    t = t64([[1.0, 2.0], [3.0, 4.0]])
    assert t.clone().cumsum_(0).tolist() == [[1.0, 2.0], [4.0, 6.0]]
    assert t.clone().cumprod_(1).tolist() == [[1.0, 2.0], [3.0, 12.0]]
    assert t.clone().lerp_(jg.zeros(2, 2), 0.25).tolist() == [[0.75, 1.5], [2.25, 3.0]]
    assert t.clone().square_().tolist() == [[1.0, 4.0], [9.0, 16.0]]
    assert t.mm(t).tolist() == [[7.0, 10.0], [15.0, 22.0]]
    assert t.mv(t64([1.0, 1.0])).tolist() == [3.0, 7.0]
    assert t.where(t > 2, 0.0).tolist() == [[0.0, 0.0], [3.0, 4.0]]
    assert t.byte().dtype == jg.uint8 and t.char().dtype == jg.int8
    assert t.short().dtype == jg.int16 and t.cdouble().dtype == jg.complex128
    assert t.is_same_size(t64([[0.0, 0.0], [0.0, 0.0]])) and not t.is_same_size(t64([1.0]))
    assert jg.zeros(2, 3, 4).dim_order() == (0, 1, 2)
    assert jg.zeros(2, 3, 4).transpose(0, 2).dim_order() == (2, 1, 0)
    x = jg.arange(6.0)
    v = x._version
    x.resize_(2, 3)
    assert x.tolist() == [[0, 1, 2], [3, 4, 5]] and x._version > v
    x.resize_(4)
    assert x.tolist() == [0, 1, 2, 3]
    with pytest.raises(RuntimeError, match="cannot resize variables that require grad"):
        t64([1.0], requires_grad=True).resize_(2)
    d = jg.detach(t64([1.0], requires_grad=True) * 2)
    assert not d.requires_grad and d.grad_fn is None
    assert jg.is_signed(t) and not jg.is_conj(t) and jg.resolve_neg(t) is t
    y = t64([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    assert gradcheck(lambda y: (y * 1.0).cumsum_(1), (y,))
    assert gradgradcheck(lambda y: (y * 1.0).square_(), (y,))


def test_set_default_tensor_type():
    try:
        with pytest.warns(UserWarning, match="set_default_tensor_type\\(\\) is deprecated"):
            jg.set_default_tensor_type("torch.FloatTensor")
        assert jg.get_default_dtype() == jg.float32 and jg.zeros(1).dtype == jg.float32
        with pytest.raises(TypeError, match="only floating-point types"):
            with pytest.warns(UserWarning):
                jg.set_default_tensor_type("torch.LongTensor")
    finally:
        jg.set_default_dtype(jg.float64)
    assert jg.zeros(1).dtype == jg.float64
