"""Complex tensors: dtypes and promotion, repr, the supported ops (forward vs NumPy, gradients
vs finite differences in PyTorch's convention ``grad = dL/dRe + i dL/dIm``), and the clear
errors of everything else."""
import warnings

import numpy as np
import pytest

import jitgrad
import jitgrad.numpy as jnp
from jitgrad import dtypes
from jitgrad.autograd import Function, GradcheckError, gradcheck, gradgradcheck

RNG = np.random.default_rng(7)


def crand(*shape, dtype=np.complex128):
    return (RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)).astype(dtype)


def ct(*shape, requires_grad=True):
    return jitgrad.tensor(crand(*shape), requires_grad=requires_grad)


def rt(*shape, requires_grad=True):
    return jitgrad.tensor(RNG.standard_normal(shape), requires_grad=requires_grad)


def fd_grad(loss, z, eps=1e-6):
    """Central differences of the real scalar ``loss(array)`` at ``z``: ``dL/dRe + i dL/dIm``
    for complex ``z`` (PyTorch's convention), ``dL/dx`` for real ``z``."""
    z = np.array(z)
    out = np.zeros(z.shape, dtype=z.dtype)
    flat, res = z.reshape(-1), out.reshape(-1)
    dirs = (1, 1j) if z.dtype.kind == "c" else (1,)
    for k in range(flat.size):
        for d in dirs:
            p, m = flat.copy(), flat.copy()
            p[k] += eps * d
            m[k] -= eps * d
            slope = (loss(p.reshape(z.shape)) - loss(m.reshape(z.shape))) / (2 * eps)
            res[k] += slope * d
    return out


# --- dtypes --------------------------------------------------------------------------------------
def test_dtype_objects_and_predicates():
    assert jitgrad.complex64.np == np.complex64 and jitgrad.complex128 == np.complex128
    assert jitgrad.cdouble is jitgrad.complex128 and jnp.complex64 is np.complex64
    assert dtypes.to_dtype(complex) is jitgrad.complex128
    assert dtypes.to_real(jitgrad.complex64) is jitgrad.float32
    assert dtypes.to_real(jitgrad.complex128) is jitgrad.float64
    assert dtypes.to_complex(jitgrad.float32) is jitgrad.complex64
    assert jitgrad.complex128.is_complex and not jitgrad.complex128.is_floating_point
    z = jitgrad.tensor([1 + 2j, 3 - 1j])
    assert z.is_complex() and not z.is_floating_point() and jitgrad.is_complex(z)
    assert not jitgrad.tensor([1.0]).is_complex()


@pytest.mark.parametrize("a_dtype, scalar, expected", [
    (np.float32, 1j, np.complex64), (np.float64, 1j, np.complex128),
    (np.int64, 1j, np.complex128), (np.bool_, 2j, np.complex128),
    (np.complex64, 2.5, np.complex64), (np.complex64, 1j, np.complex64),
    (np.float32, np.complex128(1j), np.complex128),
])
def test_promotion_with_scalars_follows_numpy(a_dtype, scalar, expected):
    a = np.ones(3, a_dtype)
    got = (jitgrad.tensor(a) * scalar).dtype
    assert got.np == expected == np.result_type(a, scalar)


def test_promotion_between_tensors_follows_numpy():
    for a, b in ((np.complex64, np.float64), (np.complex64, np.complex128),
                 (np.complex64, np.int32), (np.float32, np.complex64)):
        x, y = np.ones(2, a), np.ones(2, b)
        assert (jitgrad.tensor(x) + jitgrad.tensor(y)).dtype.np == np.result_type(x, y)


def test_construction_and_requires_grad():
    assert jitgrad.tensor([1 + 1j, 2]).dtype is jitgrad.complex128
    assert jitgrad.tensor(3j).dtype is jitgrad.complex128
    assert jitgrad.tensor([1, 2], dtype=jitgrad.complex64).dtype is jitgrad.complex64
    z = jitgrad.zeros(2, dtype=jitgrad.complex128).requires_grad_()
    assert z.requires_grad
    w = jitgrad.tensor([1j], requires_grad=True)
    assert w.requires_grad


def test_repr_matches_pytorch_format():
    assert repr(jitgrad.tensor([1 + 2j, 3 - 1j])) == "tensor([1.+2.j, 3.-1.j])"
    z = jitgrad.tensor(np.array([0.5 + 1j, -3 - 1.25j, 10 + 0j], np.complex64))
    assert repr(z) == ("tensor([ 0.5000+1.0000j, -3.0000-1.2500j, 10.0000+0.0000j],\n"
                       "       dtype=jitgrad.complex64)")
    w = jitgrad.tensor([1 + 2j], requires_grad=True)
    assert repr(w) == "tensor([1.+2.j], requires_grad=True)"
    assert repr(w * 2).endswith("grad_fn=<MulBackward0>)")
    assert repr(abs(w)) == "tensor([2.2361], grad_fn=<AbsBackward0>)"
    assert repr(jitgrad.tensor(1j)) == "tensor(0.+1.j)"


# --- elementwise ops -----------------------------------------------------------------------------
BINARY = {
    "add": (lambda a, b: a + b, np.add), "sub": (lambda a, b: a - b, np.subtract),
    "mul": (lambda a, b: a * b, np.multiply), "div": (lambda a, b: a / b, np.divide),
}


@pytest.mark.parametrize("name", sorted(BINARY))
@pytest.mark.parametrize("kinds", ["cc", "cr", "rc"])
def test_binary_forward_and_gradients(name, kinds):
    op, ref = BINARY[name]
    a = ct(3, 4) if kinds[0] == "c" else rt(3, 4)
    b = ct(4) if kinds[1] == "c" else rt(4)  # broadcast: the gradient is summed back to (4,)
    np.testing.assert_allclose(op(a, b).detach().numpy(), ref(a.detach().numpy(),
                                                              b.detach().numpy()))
    assert gradcheck(op, (a, b))
    assert gradgradcheck(op, (a, b))


@pytest.mark.parametrize("name, fn, ref", [
    ("neg", lambda z: -z, np.negative), ("square", lambda z: z ** 2, np.square),
    ("self_mul", lambda z: z * z, np.square), ("exp", jitgrad.exp, np.exp),
    ("rsub", lambda z: 2 - z, lambda z: 2 - z), ("rdiv", lambda z: (1 + 1j) / z,
                                                  lambda z: (1 + 1j) / z),
    ("scalar_mul", lambda z: z * (2 - 3j), lambda z: z * (2 - 3j)),
    ("scalar_add", lambda z: 0.5j + z, lambda z: 0.5j + z),
])
def test_unary_forward_and_gradients(name, fn, ref):
    z = ct(2, 3)
    np.testing.assert_allclose(fn(z).detach().numpy(), ref(z.detach().numpy()), rtol=1e-12)
    assert gradcheck(fn, (z,))
    assert gradgradcheck(fn, (z,))


def test_exp_large_array_uses_complex_kernel():
    z = jitgrad.tensor(crand(70000))  # above the NumPy-ufunc / parallel thresholds
    np.testing.assert_allclose(jitgrad.exp(z).numpy(), np.exp(z.numpy()), rtol=1e-13)


def test_holomorphic_gradient_is_conjugate_derivative():
    """grad_in = grad_out * conj(f'(z)) for holomorphic f (here f = z**2 + 3z, g = 1)."""
    z = ct(5)
    out = z * z + 3 * z
    g = jitgrad.tensor(crand(5))
    out.backward(g)
    np.testing.assert_allclose(z.grad.numpy(),
                               g.numpy() * np.conj(2 * z.detach().numpy() + 3), rtol=1e-12)


def test_real_loss_gradient_matches_finite_differences():
    zn = crand(4)
    z = jitgrad.tensor(zn, requires_grad=True)
    loss = (abs(z * z - 2j * z) ** 2).sum() + (jitgrad.exp(z).real * 3).sum()
    loss.backward()

    def f(a):
        return float(np.sum(np.abs(a * a - 2j * a) ** 2) + np.sum(np.exp(a).real * 3))
    np.testing.assert_allclose(z.grad.numpy(), fd_grad(f, zn), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("fn, ref", [
    (lambda z: abs(z), np.abs), (lambda z: z.real, np.real), (lambda z: z.imag, np.imag),
    (lambda z: z.conj(), np.conj), (lambda z: z.angle(), np.angle),
    (lambda z: jnp.angle(z, deg=True), lambda a: np.angle(a, deg=True)),
])
def test_nonholomorphic_ops(fn, ref):
    z = ct(3, 2)
    out = fn(z)
    expected = ref(z.detach().numpy())
    np.testing.assert_allclose(out.detach().numpy(), expected, rtol=1e-13)
    assert out.dtype.np == expected.dtype
    assert gradcheck(fn, (z,))
    assert gradgradcheck(fn, (z,))


def test_abs_and_angle_gradients_at_zero_are_zero():
    z = jitgrad.tensor([0j, 3 + 4j], requires_grad=True)
    abs(z).sum().backward()
    np.testing.assert_allclose(z.grad.numpy(), [0, 0.6 + 0.8j])
    z.grad = None
    z.angle().sum().backward()
    np.testing.assert_allclose(z.grad.numpy(), [0, 1j * (3 + 4j) / 25])


def test_abs_of_single_precision_is_float32():
    z = jitgrad.tensor(crand(3, dtype=np.complex64), requires_grad=True)
    r = abs(z)
    assert r.dtype is jitgrad.float32 and z.real.dtype is jitgrad.float32
    r.sum().backward()
    assert z.grad.dtype is jitgrad.complex64


def test_real_input_gets_real_part_of_complex_gradient_without_warning():
    xn = RNG.standard_normal(4)
    x = jitgrad.tensor(xn, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        loss = (abs(x * (1 + 2j) + 1j) ** 2).sum()
        loss.backward()
    assert x.grad.dtype is jitgrad.float64

    def f(a):
        return float(np.sum(np.abs(a * (1 + 2j) + 1j) ** 2))
    np.testing.assert_allclose(x.grad.numpy(), fd_grad(f, xn), rtol=1e-6)


def test_reductions_and_shape_ops():
    z = ct(2, 3, 4)
    for fn in (lambda a: a.sum(), lambda a: a.sum(1), lambda a: a.mean((0, 2)),
               lambda a: a.mean(), lambda a: a.reshape(6, 4), lambda a: a.transpose(0, 2),
               lambda a: a.permute(2, 0, 1), lambda a: a[1, ::2], lambda a: a[[0, 1, 1]],
               lambda a: jitgrad.cat([a, a * 2], 1), lambda a: jitgrad.stack([a, a.conj()]),
               lambda a: a.unsqueeze(0).expand(3, 2, 3, 4), lambda a: jnp.flip(a, 1),
               lambda a: jnp.roll(a, 2, 2), lambda a: a.view(-1), lambda a: a.clone()):
        assert gradcheck(fn, (z,))
    np.testing.assert_allclose(z.sum(1).detach().numpy(), z.detach().numpy().sum(1))
    np.testing.assert_allclose(z.mean().detach().numpy(), z.detach().numpy().mean())
    assert jnp.sum(z).dtype is jitgrad.complex128


def test_cast_between_real_and_complex():
    x = rt(3)
    z = x.to(jitgrad.complex128)
    assert z.dtype is jitgrad.complex128 and z.grad_fn.name() == "ToCopyBackward0"
    (z * 1j).imag.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.ones(3))
    w = jitgrad.tensor([1 + 5j]).to(jitgrad.float64)  # complex -> real keeps the real part
    np.testing.assert_allclose(w.numpy(), [1.0])


def test_namespace_and_protocol_paths_agree():
    zn = crand(4)
    for name in ("real", "imag", "conj", "conjugate", "angle", "abs", "absolute"):
        a = jitgrad.tensor(zn, requires_grad=True)
        b = jitgrad.tensor(zn, requires_grad=True)
        ra, rb = getattr(jnp, name)(a), getattr(np, name)(b)
        assert isinstance(rb, jitgrad.Tensor) and ra.grad_fn.name() == rb.grad_fn.name()
        (abs(ra) ** 2).sum().backward()
        (abs(rb) ** 2).sum().backward()
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy())
    z = jitgrad.tensor(zn)
    assert np.iscomplexobj(z) and jnp.iscomplexobj(z)
    np.testing.assert_array_equal(jnp.iscomplex(jitgrad.tensor([1 + 0j, 1j])).numpy(),
                                  [False, True])
    assert jnp.real_if_close(jitgrad.tensor([1 + 1e-20j])).dtype is jitgrad.float64
    assert jnp.real_if_close(jitgrad.tensor([1 + 1j])).dtype is jitgrad.complex128
    # real input: real/conj are the input, imag and angle constants
    x = rt(3)
    assert jnp.real(x) is x and jnp.conj(x) is x
    assert not jnp.imag(x).requires_grad and not jnp.angle(x).requires_grad


# --- gradcheck -------------------------------------------------------------------------------------
class _UnconjugatedSquare(Function):
    """z**2 with the holomorphic derivative NOT conjugated: wrong under PyTorch's convention."""

    @staticmethod
    def forward(ctx, z):
        ctx.save_for_backward(z)
        return z * z

    @staticmethod
    def backward(ctx, g):
        z, = ctx.saved_tensors
        return g * (2 * z)


def test_gradcheck_checks_complex_convention():
    z = ct(3)
    assert gradcheck(lambda a: a * a, (z,))
    with pytest.raises(GradcheckError, match="Jacobian mismatch"):
        gradcheck(_UnconjugatedSquare.apply, (z,))
    with pytest.raises(ValueError, match="complex"):
        gradcheck(lambda a: a * a, (z,), check_forward_ad=True)
    assert gradcheck(lambda a: a * a, (z,), fast_mode=True)  # falls back to the full Jacobians


# --- what is refused ---------------------------------------------------------------------------------
@pytest.mark.parametrize("name, fn", [
    ("tan", jitgrad.tan), ("log1p", jitgrad.log1p), ("pow_cube", lambda z: z ** 3),
    ("maximum", lambda z: jitgrad.maximum(z, z)), ("lt", lambda z: z < z),
    ("prod", lambda z: z.prod()),
    ("sqrt", jitgrad.sqrt), ("arcsin", jnp.arcsin),
])
def test_unsupported_ops_raise_naming_op_and_dtype(name, fn):
    z = ct(4)
    with pytest.raises(TypeError, match=rf"{name}\w*: complex tensors are not supported yet "
                                        r"\(dtype complex128\)"):
        fn(z)


def test_inplace_and_out_writes_into_complex_tensors_raise():
    z = jitgrad.tensor(crand(3))
    with pytest.raises(TypeError, match="complex tensors are not supported yet"):
        z += 1
    with pytest.raises(TypeError, match="complex tensors are not supported yet"):
        z[0] = 1j


def test_complex_tensors_stay_on_cpu():
    with pytest.raises(NotImplementedError, match="complex tensors are not supported on CUDA"):
        jitgrad.tensor(crand(2)).to("cuda")


def test_implicit_grad_of_complex_output_raises():
    with pytest.raises(RuntimeError, match="real scalar outputs"):
        ct(3).sum().backward()
