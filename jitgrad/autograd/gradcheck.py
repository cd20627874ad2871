"""``gradcheck`` / ``gradgradcheck``: verify derivatives against finite differences, with
PyTorch's signatures and tolerances (``torch.autograd.gradcheck``).

Numerical Jacobians are central differences ``(f(x + eps e_k) - f(x - eps e_k)) / (2 eps)`` per
input element (each on a fresh copy of the input, so any layout works). Analytical Jacobians
come from one vector-Jacobian product per output element (reverse mode) or one Jacobian-vector
product per input element (``check_forward_ad``). They match when
``|analytical - numerical| <= atol + rtol * |numerical|`` everywhere; a mismatch is reported
with the worst element, its indices in the input's and output's shapes, and the two values.
``fast_mode`` compares one random projection ``v^T J u`` per input/output pair instead of the
full matrices (two evaluations per input instead of two per element) and recomputes the full
Jacobians only to report a failure. Inputs should be float64 or complex128 (a warning says so
otherwise).

Complex inputs and outputs are checked as real vectors, PyTorch's way: a complex element is two
real coordinates ``(re, im)``, so the numerical Jacobian perturbs the real and the imaginary
part of each input element separately. Seeding a complex output element with ``1`` (then
``1j``) makes the vjp return ``d re(out) / d re(x) + i d re(out) / d im(x)`` (then the same for
``im(out)``), the rows of that real Jacobian under jitgrad's (PyTorch's) gradient convention.
Fast mode and forward mode are real-only (forward-mode AD has no complex support yet): fast
mode falls back to the full Jacobians there, ``check_forward_ad`` raises.
"""
from __future__ import annotations

import warnings

import numpy as np

from ..graph.grad_mode import enable_grad, no_grad
from ..ops import creation
from ..ops.core import dispatch
from . import forward_ad
from .api import grad

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError", "get_numerical_jacobian",
           "get_analytical_jacobian"]


class GradcheckError(RuntimeError):
    """Raised by ``gradcheck``/``gradgradcheck`` when a check fails."""


def _Tensor():
    return dispatch.Tensor


def _tensor(a):
    return creation.tensor(a)


#: ``jitgrad.func``'s ``vmap`` and ``jacfwd``, registered by that package at import (it builds
#: on this one): the checks ``check_batched_grad`` and ``check_batched_forward_grad`` run
_batching = {}


def set_batching_transforms(vmap, jacfwd) -> None:
    _batching.update(vmap=vmap, jacfwd=jacfwd)


def _transform(name: str):
    try:
        return _batching[name]
    except KeyError:
        raise RuntimeError(f"gradcheck: the batched checks need jitgrad.func's {name}, which "
                           "registers itself when jitgrad is imported: import jitgrad "
                           "first") from None


def _as_tuple(x) -> tuple:
    if isinstance(x, (tuple, list)):
        return tuple(x)
    return (x,)


def _outputs(func, inputs) -> tuple:
    return _as_tuple(func(*inputs))


def _diff_outputs(outs) -> list:
    Tensor = _Tensor()
    return [j for j, o in enumerate(outs) if isinstance(o, Tensor) and o.dtype.is_differentiable]


def _diff_inputs(inputs) -> list:
    Tensor = _Tensor()
    return [i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad]


def _coords(a) -> np.ndarray:
    """``a`` as float64 real coordinates: complex elements become ``(re, im)`` pairs."""
    a = np.asarray(a)
    if a.dtype.kind == "c":
        return np.ascontiguousarray(a, dtype=np.complex128).reshape(-1).view(np.float64)
    return np.array(a, dtype=np.float64).reshape(-1)


def _width(t) -> int:
    """Real coordinates per element: 2 for complex tensors, else 1."""
    return 2 if t._data.dtype.kind == "c" else 1


def _unit(t, k):
    """The perturbation direction of real coordinate ``k``: 1 or 1j on element ``k // 2``."""
    return (1j if k % 2 else 1) if _width(t) == 2 else 1


def _values(outs, js) -> list:
    return [_coords(outs[j]._data) for j in js]


# --- Jacobians -----------------------------------------------------------------------------
def _perturbed(inputs, i, k, delta):
    """``inputs`` with real coordinate ``k`` of input ``i`` moved by ``delta``."""
    x = inputs[i]
    arr = np.array(x._data)  # a fresh contiguous copy
    arr.reshape(-1)[k // _width(x)] += delta * _unit(x, k)
    new = list(inputs)
    new[i] = _tensor(arr).requires_grad_(x.requires_grad)  # gradgradcheck differentiates it
    return new


def get_numerical_jacobian(func, inputs, eps=1e-6) -> dict:
    """Central-difference Jacobians ``{(i, j): array of shape (out_j.numel, in_i.numel)}`` for
    every input ``i`` that requires grad and every floating point output ``j``."""
    inputs = _as_tuple(inputs)
    with no_grad():
        outs = _outputs(func, inputs)
        js = _diff_outputs(outs)
        jac = {}
        for i in _diff_inputs(inputs):
            n = inputs[i].numel() * _width(inputs[i])
            cols = {j: np.zeros((outs[j].numel() * _width(outs[j]), n)) for j in js}
            for k in range(n):
                plus = _values(_outputs(func, _perturbed(inputs, i, k, eps)), js)
                minus = _values(_outputs(func, _perturbed(inputs, i, k, -eps)), js)
                for j, p, m in zip(js, plus, minus):
                    cols[j][:, k] = (p - m) / (2 * eps)
            for j in js:
                jac[(i, j)] = cols[j]
    return jac


def get_analytical_jacobian(func, inputs) -> dict:
    """Reverse-mode Jacobians ``{(i, j): array (out_j.numel, in_i.numel)}``: one
    vector-Jacobian product per output element."""
    inputs = _as_tuple(inputs)
    ins = _diff_inputs(inputs)
    with enable_grad():
        outs = _outputs(func, inputs)
    jac = {}
    for j in _diff_outputs(outs):
        o = outs[j]
        w = _width(o)
        rows = {i: np.zeros((o.numel() * w, inputs[i].numel() * _width(inputs[i]))) for i in ins}
        for m in range(o.numel() * w if o.requires_grad else 0):
            seed = np.zeros(o.numel(), dtype=o._data.dtype)
            seed[m // w] = _unit(o, m)
            grads = grad(o, [inputs[i] for i in ins], _tensor(seed.reshape(o.shape)),
                         retain_graph=True, allow_unused=True)
            for i, g in zip(ins, grads):
                if g is not None:
                    rows[i][m] = _coords(g._data)
        for i in ins:
            jac[(i, j)] = rows[i]
    return jac


def _forward_jacobian(func, inputs) -> dict:
    """Forward-mode Jacobians: one Jacobian-vector product per input element."""
    ins = _diff_inputs(inputs)
    with no_grad():
        outs = _outputs(func, inputs)
    js = _diff_outputs(outs)
    jac = {(i, j): np.zeros((outs[j].numel(), inputs[i].numel())) for i in ins for j in js}
    for i in ins:
        for k in range(inputs[i].numel()):
            tangent = np.zeros(inputs[i].numel(), dtype=inputs[i]._data.dtype)
            tangent[k] = 1
            with forward_ad.dual_level():
                new = list(inputs)
                new[i] = forward_ad.make_dual(inputs[i], _tensor(tangent.reshape(inputs[i].shape)))
                res = _outputs(func, new)
                for j in js:
                    t = forward_ad.unpack_dual(res[j]).tangent
                    if t is not None:
                        jac[(i, j)][:, k] = np.asarray(t._data, dtype=np.float64).reshape(-1)
    return jac


# --- reporting -----------------------------------------------------------------------------
def _mismatch(a, n, atol, rtol):
    bad = np.abs(a - n) > atol + rtol * np.abs(n)
    bad |= np.isnan(a) != np.isnan(n)
    return bad


def _report(kind, i, j, a, n, inputs, outs, atol, rtol) -> str:
    bad = _mismatch(a, n, atol, rtol)
    err = np.where(np.isnan(a) | np.isnan(n), np.inf, np.abs(a - n))
    m, k = np.unravel_index(int(np.argmax(np.where(bad, err, -1.0))), a.shape)
    out_idx = np.unravel_index(m // _width(outs[j]), outs[j].shape) if outs[j].ndim else ()
    in_idx = np.unravel_index(k // _width(inputs[i]), inputs[i].shape) if inputs[i].ndim else ()
    lines = [f"Jacobian mismatch for output {j} with respect to input {i} ({kind}),",
             f"{int(bad.sum())} of {bad.size} elements differ; worst: d output{j}"
             f"{list(map(int, out_idx))} / d input{i}{list(map(int, in_idx))}: analytical "
             f"{float(a[m, k])!r} vs numerical {float(n[m, k])!r} (|difference| "
             f"{abs(a[m, k] - n[m, k]):.3g}, "
             f"allowed {atol + rtol * abs(n[m, k]):.3g} = atol + rtol * |numerical|)"]
    if a.size <= 400:
        with np.printoptions(precision=6, suppress=True, linewidth=120):
            lines += [f"numerical (rows: output {j} elements, columns: input {i} elements):",
                      str(n), "analytical:", str(a)]
    return "\n".join(lines)


def _fail(msg, raise_exception) -> bool:
    if raise_exception:
        raise GradcheckError(msg)
    return False


def _compare(kind, num, ana, inputs, outs, atol, rtol):
    for key in sorted(num):
        a, n = ana.get(key), num[key]
        if a is not None and _mismatch(a, n, atol, rtol).any():
            return _report(kind, key[0], key[1], a, n, inputs, outs, atol, rtol)
    return None


# --- fast mode -----------------------------------------------------------------------------
def _fast_check(func, inputs, outs, eps, atol, rtol):
    """One random projection per (input, output) pair: numerical ``v^T (J u)`` by one
    directional central difference per input vs analytical ``(v^T J) u`` by one vjp per
    output. Returns the first failing pair or None."""
    rng = np.random.default_rng(0)
    ins, js = _diff_inputs(inputs), _diff_outputs(outs)
    us = {}
    for i in ins:
        u = rng.standard_normal(inputs[i].shape)
        us[i] = u / max(np.linalg.norm(u), 1e-12)
    vs = {j: rng.standard_normal(outs[j].shape) for j in js}
    num = {}
    with no_grad():
        for i in ins:
            x = inputs[i]
            new_p, new_m = list(inputs), list(inputs)
            new_p[i] = _tensor(np.array(x._data) + eps * us[i].astype(x._data.dtype)
                               ).requires_grad_()
            new_m[i] = _tensor(np.array(x._data) - eps * us[i].astype(x._data.dtype)
                               ).requires_grad_()
            plus = _values(_outputs(func, new_p), js)
            minus = _values(_outputs(func, new_m), js)
            for j, p, m in zip(js, plus, minus):
                num[(i, j)] = float(np.dot(vs[j].reshape(-1), (p - m) / (2 * eps)))
    with enable_grad():
        outs2 = _outputs(func, inputs)
    for j in js:
        o = outs2[j]
        grads = (grad(o, [inputs[i] for i in ins], _tensor(vs[j].astype(o._data.dtype)),
                      retain_graph=True, allow_unused=True) if o.requires_grad else [None] * len(ins))
        for i, g in zip(ins, grads):
            a = 0.0 if g is None else float(np.dot(np.asarray(g._data, np.float64).reshape(-1),
                                                   us[i].reshape(-1)))
            n = num[(i, j)]
            if not abs(a - n) <= atol + rtol * abs(n):
                return i, j, a, n
    return None


# --- the checks ----------------------------------------------------------------------------
def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True,
              nondet_tol=0.0, check_undefined_grad=True, check_grad_dtypes=False,
              check_batched_grad=False, check_batched_forward_grad=False, check_forward_ad=False,
              check_backward_ad=True, fast_mode=False, masked=None):
    """Check the gradients of ``func`` at ``inputs`` against finite differences.

    ``func(*inputs)`` returns a Tensor or a tuple of Tensors; every input Tensor with
    ``requires_grad=True`` (use float64) is checked against every floating point output.
    Returns True, or raises ``GradcheckError`` (returns False when ``raise_exception=False``)
    with the worst element of the first mismatching Jacobian.

    Checks: reverse mode (``check_backward_ad``), forward mode (``check_forward_ad``), that
    backward gives the same result twice (``nondet_tol``), that zero output gradients give zero
    input gradients (``check_undefined_grad``), gradient dtypes (``check_grad_dtypes``), and
    that vmap over the vjp / jvp gives the same rows (``check_batched_grad`` /
    ``check_batched_forward_grad``). ``masked`` is accepted for compatibility (no sparse
    tensors here).
    """
    inputs = _as_tuple(inputs)
    ins = _diff_inputs(inputs)
    if not ins:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but "
                         "none of the them have requires_grad=True.")
    for i in ins:
        if inputs[i].dtype.name not in ("float64", "complex128"):
            warnings.warn(f"Input #{i} requires gradient and is not a double precision floating "
                          "point. This check will likely fail if all the inputs are not of "
                          "double precision floating point.", UserWarning, stacklevel=2)
    with no_grad():
        outs = _outputs(func, inputs)
    has_complex = any(isinstance(t, _Tensor()) and t.is_complex() for t in inputs + outs)
    if has_complex and (check_forward_ad or check_batched_forward_grad):
        raise ValueError("gradcheck: check_forward_ad / check_batched_forward_grad are not "
                         "supported with complex inputs or outputs (no complex forward-mode AD)")
    if check_backward_ad:
        if fast_mode and not has_complex:  # complex: the full Jacobians (module docstring)
            bad = _fast_check(func, inputs, outs, eps, atol, rtol)
            if bad is not None:
                i, j, a, n = bad
                num = get_numerical_jacobian(func, inputs, eps)
                ana = get_analytical_jacobian(func, inputs)
                detail = _compare("slow mode", {(i, j): num[(i, j)]}, ana, inputs, outs, atol,
                                  rtol) or "(the full Jacobians agree: a tolerance issue)"
                return _fail(f"Jacobian mismatch for output {j} with respect to input {i} in fast "
                             f"mode: v^T J u numerical {n!r} vs analytical {a!r} (random unit u "
                             f"over the input, random v over the output). Recomputed without "
                             f"fast mode:\n{detail}", raise_exception)
        else:
            num = get_numerical_jacobian(func, inputs, eps)
            ana = get_analytical_jacobian(func, inputs)
            msg = _compare("reverse mode", num, ana, inputs, outs, atol, rtol)
            if msg is not None:
                return _fail(msg, raise_exception)
            again = get_analytical_jacobian(func, inputs)
            for key in ana:
                if not np.all(np.abs(ana[key] - again[key]) <= nondet_tol):
                    return _fail("Backward is not reentrant, i.e., running backward with same "
                                 "input and grad_output multiple times gives different values, "
                                 "although analytical gradient matches numerical gradient. The "
                                 f"tolerance for nondeterminism was {nondet_tol}.", raise_exception)
        msg = _other_backward_checks(func, inputs, check_undefined_grad, check_grad_dtypes,
                                     check_batched_grad, atol, rtol)
        if msg is not None:
            return _fail(msg, raise_exception)
    if check_forward_ad or check_batched_forward_grad:
        num = get_numerical_jacobian(func, inputs, eps)
        if check_forward_ad:
            msg = _compare("forward mode", num, _forward_jacobian(func, inputs), inputs, outs,
                           atol, rtol)
            if msg is not None:
                return _fail(msg, raise_exception)
        if check_batched_forward_grad:
            msg = _compare("forward mode, batched with vmap", num,
                           _batched_forward_jacobian(func, inputs), inputs, outs, atol, rtol)
            if msg is not None:
                return _fail(msg, raise_exception)
    return True


def _other_backward_checks(func, inputs, undefined, dtypes, batched, atol, rtol):
    ins = _diff_inputs(inputs)
    with enable_grad():
        outs = _outputs(func, inputs)
    js = [j for j in _diff_outputs(outs) if outs[j].requires_grad]
    for j in js:
        o = outs[j]
        if undefined:
            zero = _tensor(np.zeros(o.shape, dtype=o._data.dtype))
            grads = grad(o, [inputs[i] for i in ins], zero, retain_graph=True, allow_unused=True)
            for i, g in zip(ins, grads):
                if g is not None and np.any(np.asarray(g._data) != 0):
                    return (f"Expected backward function to handle zero (undefined) output "
                            f"gradients: output {j}'s zero gradient gave a non-zero gradient for "
                            f"input {i}")
        if dtypes:
            seed = _tensor(np.ones(o.shape, dtype=o._data.dtype))
            grads = grad(o, [inputs[i] for i in ins], seed, retain_graph=True, allow_unused=True)
            for i, g in zip(ins, grads):
                if g is not None and (g.dtype is not inputs[i].dtype
                                      or tuple(g.shape) != tuple(inputs[i].shape)):
                    return (f"Gradient has dtype mismatch or shape mismatch: input {i} is "
                            f"{inputs[i].dtype.name}{list(inputs[i].shape)}, its gradient "
                            f"{g.dtype.name}{list(g.shape)}")
        if batched:
            msg = _batched_vjp_check(o, j, [inputs[i] for i in ins], ins, atol, rtol)
            if msg is not None:
                return msg
    return None


def _batched_vjp_check(o, j, xs, ins, atol, rtol):
    """vmap over ``autograd.grad`` with a batch of cotangents == one call per cotangent."""
    vmap = _transform("vmap")
    rng = np.random.default_rng(1)
    cts = rng.standard_normal((3,) + tuple(o.shape)).astype(o._data.dtype)
    batched = vmap(lambda v: grad(o, xs, v, retain_graph=True, allow_unused=True))(_tensor(cts))
    for b in range(3):
        single = grad(o, xs, _tensor(cts[b]), retain_graph=True, allow_unused=True)
        for i, g1, gb in zip(ins, single, batched):
            if g1 is None:
                continue
            got = np.asarray(gb._data)[b] if gb is not None else 0.0
            if not np.allclose(got, np.asarray(g1._data), rtol=rtol, atol=atol):
                return (f"While computing batched gradients (vmap over the vjp), got a different "
                        f"gradient for output {j} with respect to input {i} than one call per "
                        f"cotangent (cotangent {b})")
    return None


def _batched_forward_jacobian(func, inputs) -> dict:
    jacfwd = _transform("jacfwd")
    ins = _diff_inputs(inputs)
    with no_grad():
        outs = _outputs(func, inputs)
    js = _diff_outputs(outs)

    def f(*xs):
        new = list(inputs)
        for i, x in zip(ins, xs):
            new[i] = x
        res = _outputs(func, new)
        return tuple(res[j] for j in js)

    jac = jacfwd(f, argnums=tuple(range(len(ins))))(*[inputs[i] for i in ins])
    return {(i, j): np.asarray(jac[jj][ii]._data, np.float64).reshape(outs[j].numel(), -1)
            for jj, j in enumerate(js) for ii, i in enumerate(ins)}


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                  gen_non_contig_grad_outputs=False, raise_exception=True, nondet_tol=0.0,
                  check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
                  check_fwd_over_rev=False, check_rev_over_rev=True, fast_mode=False,
                  masked=False):
    """Check second derivatives: ``gradcheck`` of ``(inputs, v) -> grad(func(inputs), inputs,
    v, create_graph=True)``, where ``v`` (``grad_outputs``, random float64 when None) is a
    checked input too. ``check_rev_over_rev`` differentiates that by reverse mode,
    ``check_fwd_over_rev`` by forward mode."""
    inputs = _as_tuple(inputs)
    Tensor = _Tensor()
    with no_grad():
        outs = _outputs(func, inputs)
    js = [j for j in _diff_outputs(outs)]
    if grad_outputs is None:
        rng = np.random.default_rng(0)
        grad_outputs = []
        for j in js:
            v = rng.standard_normal(outs[j].shape).astype(outs[j]._data.dtype)
            if outs[j].is_complex():
                v = v + 1j * rng.standard_normal(outs[j].shape)
            if gen_non_contig_grad_outputs and v.ndim:
                v = np.repeat(v[..., None], 2, axis=-1)[..., 0]
            grad_outputs.append(_tensor(v).requires_grad_())
    grad_outputs = list(_as_tuple(grad_outputs))
    if len(grad_outputs) != len(js):
        raise ValueError(f"gradgradcheck: expected {len(js)} grad_outputs, got "
                         f"{len(grad_outputs)}")
    ins = _diff_inputs(inputs)
    n = len(inputs)

    def first_grads(*args):
        xs, vs = args[:n], args[n:]
        with enable_grad():
            res = _outputs(func, xs)
            pairs = [(res[j], v) for j, v in zip(js, vs)
                     if isinstance(res[j], Tensor) and res[j].requires_grad]
            if not pairs:
                return ()
            grads = grad([p[0] for p in pairs], [xs[i] for i in ins], [p[1] for p in pairs],
                         create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None)

    return gradcheck(first_grads, inputs + tuple(grad_outputs), eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception, nondet_tol=nondet_tol,
                     check_undefined_grad=check_undefined_grad,
                     check_grad_dtypes=check_grad_dtypes, check_batched_grad=check_batched_grad,
                     check_forward_ad=check_fwd_over_rev, check_backward_ad=check_rev_over_rev,
                     fast_mode=fast_mode)
