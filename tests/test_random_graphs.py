"""Property-based tests: random expression graphs built from jitgrad ops, with gradients checked
against float64 central finite differences (``gradcheck`` / ``gradgradcheck``).

A program is drawn once (leaf shapes and values, then 2-6 steps, each reading earlier values from
a pool so that intermediates get reused: diamonds), evaluated in float64 while drawing so that
value-dependent choices (``where`` thresholds, ``amax`` without ties, ``maximum`` of distinct
entries) keep a margin, then replayed on fresh leaves by ``run``.
"""
import numpy as np
from hypothesis import HealthCheck, assume, given, settings, strategies as st

import jitgrad as jg
from jitgrad.testing import assert_close, gradcheck, gradgradcheck

SHAPES = [(3,), (2, 3), (2, 1), (1, 3), ()]
MARGIN = 0.02  # distance kept from kinks/ties: much more than eps * |d value / d leaf|
BOUND = 20.0  # intermediates stay within +-BOUND so that finite differences stay accurate


def _settings(n):
    return settings(max_examples=n, deadline=None, derandomize=True, database=None,
                    suppress_health_check=list(HealthCheck))


UNARY = {
    "exp": lambda x: jg.exp(jg.tanh(x)), "log": lambda x: jg.log(1 + x * x),
    "sqrt": lambda x: jg.sqrt(1 + x * x), "abs": lambda x: jg.abs(x + 3),
    "sin": jg.sin, "cos": jg.cos, "tanh": jg.tanh, "sigmoid": jg.sigmoid,
    "pow2": lambda x: x ** 2, "pow3": lambda x: x ** 3, "neg": lambda x: -x,
}
BINARY = {
    "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
    "div": lambda a, b: a / (1.5 + b * b), "maximum": jg.maximum, "minimum": jg.minimum,
}
OTHER = ["where", "sum", "mean", "amax", "softmax", "log_softmax", "matmul", "reshape",
         "transpose", "unsqueeze", "expand", "index", "cat", "stack", "inplace"]
OPS = sorted(UNARY) + sorted(BINARY) + OTHER


def apply(step, pool):
    name, ix, p = step
    a, o = pool[ix[0]], [pool[i] for i in ix[1:]]
    if name in UNARY:
        return UNARY[name](a)
    if name in BINARY:
        return BINARY[name](a, o[0])
    if name == "where":
        return jg.where(a > p, o[0], o[1])
    if name in ("sum", "mean", "amax"):
        return getattr(jg, name)(a, dim=p[0], keepdim=p[1])
    if name in ("softmax", "log_softmax"):
        return getattr(jg, name)(a, p)
    if name == "matmul":
        return a @ (o[0].mT if p else o[0])
    if name in ("reshape", "expand"):
        return getattr(a, name)(p)
    if name == "transpose":
        return a.transpose(*p)
    if name == "unsqueeze":
        return a.unsqueeze(p)
    if name == "index":
        return a[p]
    if name in ("cat", "stack"):
        return getattr(jg, name)([a, o[0]], p)
    y = a * 1  # in-place ops on a fresh non-leaf intermediate
    if p == "mul_":
        y.mul_(2)
    elif p == "iadd":
        y += o[0]
    else:
        y *= jg.tanh(o[0])
    return y


def _bshape(*shapes):
    try:
        return np.broadcast_shapes(*shapes)
    except ValueError:
        return None


def _pick(draw, pool, ok=lambda i: True):
    """An index into the pool (biased to the newest value), among those satisfying ``ok``."""
    cand = [i for i in range(len(pool)) if ok(i)]
    if not cand:
        return None
    return cand[-1] if draw(st.booleans()) else draw(st.sampled_from(cand))


def _gap_ok(arr, axis):
    """True when the two largest entries along ``axis`` are MARGIN apart (amax has no ties)."""
    if arr.shape[axis] < 2:
        return True
    s = np.sort(arr, axis=axis)
    return bool(np.all(np.take(s, [-1], axis) - np.take(s, [-2], axis) > MARGIN))


def _make_step(draw, name, pool):
    """Draw the operands and parameters of op ``name``; None when it does not apply."""
    v = [t.numpy() for t in pool]
    i = _pick(draw, pool)
    a = v[i]
    nd = a.ndim
    if name in UNARY:
        if name == "abs":
            assume(np.all(np.abs(a + 3) > MARGIN))
        return name, (i,), None
    if name in BINARY:
        j = _pick(draw, pool, lambda j: _bshape(a.shape, v[j].shape) is not None and (
            name not in ("maximum", "minimum") or bool(np.all(np.abs(a - v[j]) > MARGIN))))
        return (name, (i, j), None) if j is not None else None
    if a.size == 0 and name in ("where", "amax"):  # empty slices are allowed elsewhere
        return None
    if name == "where":
        js = [_pick(draw, pool, lambda j: _bshape(a.shape, v[j].shape) is not None)]
        js.append(_pick(draw, pool, lambda j: _bshape(a.shape, v[js[0]].shape, v[j].shape)
                        is not None))
        u = np.unique(a)
        k = draw(st.integers(0, len(u)))  # the threshold goes in the k-th gap
        if 0 < k < len(u):
            assume(u[k] - u[k - 1] > 2 * MARGIN)
        c = u[0] - 0.5 if k == 0 else u[-1] + 0.5 if k == len(u) else (u[k] + u[k - 1]) / 2
        return name, (i, *js), float(c)
    if nd == 0 and name not in ("matmul", "reshape", "unsqueeze", "expand", "stack", "inplace"):
        return None
    dim = draw(st.integers(-nd, nd - 1)) if nd else 0
    if name in ("sum", "mean", "amax"):
        if name == "amax":
            assume(_gap_ok(a, dim))
        return name, (i,), (dim, draw(st.booleans()))
    if name in ("softmax", "log_softmax"):
        return name, (i,), dim
    if name == "matmul":
        def fits(j):
            b = v[j].T if tr else v[j]
            return (1 <= b.ndim <= 2 and b.shape[0] == a.shape[-1]) and (b.ndim == 2 or not tr)
        if nd not in (1, 2):
            return None
        tr = draw(st.booleans())
        j = _pick(draw, pool, fits)
        return ("matmul", (i, j), tr) if j is not None else ("matmul", (i, i), nd == 2)
    if name == "reshape":
        n = a.size
        return name, (i,), draw(st.sampled_from([(n,), (1, n), (n, 1)] +
                                                [(2, n // 2), (n // 2, 2, 1)] * (n % 2 == 0)))
    if name == "transpose":
        return (name, (i,), (dim, draw(st.integers(-nd, nd - 1)))) if nd >= 2 else None
    if name == "unsqueeze":
        return name, (i,), draw(st.integers(-nd - 1, nd))
    if name == "expand":
        lead = (draw(st.integers(1, 2)),) if nd < 3 and draw(st.booleans()) else ()
        return name, (i,), lead + tuple(draw(st.integers(1, 3)) if s == 1 else s
                                        for s in a.shape)
    if name == "index":
        n = a.shape[dim]
        kind = draw(st.sampled_from(["int", "slice", "list"] if n else ["slice"]))
        if kind == "int":
            idx = draw(st.integers(-n, n - 1))
        elif kind == "slice":
            idx = slice(draw(st.integers(-n, n)), draw(st.sampled_from([None, n, -1])),
                        draw(st.integers(1, 2)))
        else:
            idx = draw(st.lists(st.integers(-n, n - 1), min_size=1, max_size=4))
        return name, (i,), (slice(None),) * (dim % nd) + (idx,)
    if name == "cat":
        if nd == 0:
            return None
        d = dim % nd
        same = lambda j: v[j].shape[:d] + v[j].shape[d + 1:] == a.shape[:d] + a.shape[d + 1:]
        return name, (i, _pick(draw, pool, lambda j: v[j].ndim == nd and same(j))), dim
    if name == "stack":
        return name, (i, _pick(draw, pool, lambda j: v[j].shape == a.shape)), \
            draw(st.integers(-nd - 1, nd))
    kind = draw(st.sampled_from(["mul_", "iadd", "imul"]))
    j = _pick(draw, pool, lambda j: _bshape(a.shape, v[j].shape) == a.shape)
    return name, (i,) if kind == "mul_" else (i, j), kind


@st.composite
def programs(draw, max_ops=6):
    shapes = [draw(st.sampled_from(SHAPES)) for _ in range(draw(st.integers(1, 3)))]
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 32 - 1)))
    values = [rng.uniform(-2, 2, s) for s in shapes]
    pool, steps = [jg.tensor(x) for x in values], []
    rot = int(rng.integers(len(OPS)))  # spreads Hypothesis' bias to index 0 over all ops
    for _ in range(draw(st.integers(2, max_ops))):
        name = OPS[(draw(st.integers(0, len(OPS) - 1)) + rot) % len(OPS)]
        step = _make_step(draw, name, pool)
        if step is None:
            step = ("tanh", (len(pool) - 1,), None)
        out = apply(step, pool).numpy()
        assume(out.size <= 24 and out.ndim <= 3 and np.all(np.abs(out) < BOUND))
        pool.append(jg.tensor(out))
        steps.append(step)
    used = {i for _, ix, _ in steps for i in ix}
    outs = [i for i in range(len(pool)) if i not in used]  # the last value and any dead ends
    weights = [rng.uniform(-1, 1, pool[i].shape) if draw(st.booleans()) else None for i in outs]
    return dict(values=values, steps=steps, outs=list(zip(outs, weights)))


def run(prog, *leaves):
    pool = list(leaves)
    for step in prog["steps"]:
        pool.append(apply(step, pool))
    out = None
    for i, w in prog["outs"]:
        term = (pool[i] * jg.tensor(w, dtype=pool[i].dtype) if w is not None else pool[i]).sum()
        out = term if out is None else out + term
    return out


def leaves(prog, dtype=jg.float64):
    return [jg.tensor(x.copy(), dtype=dtype, requires_grad=True) for x in prog["values"]]


@_settings(200)
@given(programs())
def test_random_graph_gradcheck(prog):
    assert gradcheck(lambda *xs: run(prog, *xs), leaves(prog))


@_settings(40)
@given(programs(max_ops=4))
def test_random_graph_gradgradcheck(prog):
    assert gradgradcheck(lambda *xs: run(prog, *xs), leaves(prog))


@_settings(100)
@given(programs())
def test_backward_grad_and_create_graph_agree(prog):
    xs = leaves(prog)
    out = run(prog, *xs)
    g_plain = jg.autograd.grad(out, xs, retain_graph=True, allow_unused=True)
    g_cg = jg.autograd.grad(out, xs, retain_graph=True, create_graph=True, allow_unused=True)
    out.backward(retain_graph=True)
    g_bw = [None if x.grad is None else x.grad.numpy().copy() for x in xs]
    # the create_graph result is differentiable again (smoke: it runs, has the right shapes)
    s = sum((g * g).sum() for g in g_cg if g is not None and g.requires_grad)
    if isinstance(s, jg.Tensor):
        hs = jg.autograd.grad(s, xs, retain_graph=True, allow_unused=True)
        assert all(h is None or h.shape == x.shape for h, x in zip(hs, xs))
    out.backward()
    for x, a, b, c in zip(xs, g_plain, g_cg, g_bw):
        if c is None:  # a leaf that only feeds a where() condition: unused, as in PyTorch
            assert a is None and b is None and x.grad is None
            continue
        assert a.shape == b.shape == x.shape == c.shape
        assert_close(a, c, rtol=1e-12, atol=1e-12)
        assert_close(b, c, rtol=1e-12, atol=1e-12)
        assert_close(x.grad, 2 * c, rtol=1e-12, atol=1e-12)


@_settings(100)
@given(programs())
def test_float32_forward_matches_float64(prog):
    x64, x32 = leaves(prog), leaves(prog, jg.float32)
    out64, out32 = run(prog, *x64), run(prog, *x32)
    assert out32.dtype == jg.float32 and out64.dtype == jg.float64
    scale = 1 + np.abs(out64.item())
    assert_close(out32.numpy().astype(np.float64), out64, rtol=1e-4, atol=1e-4 * scale)
    out32.backward()
    out64.backward()
    for a, b in zip(x32, x64):
        if b.grad is None:
            assert a.grad is None
            continue
        assert a.grad.dtype == jg.float32
        gscale = 1 + np.abs(b.grad.numpy()).max()
        assert_close(a.grad.numpy().astype(np.float64), b.grad, rtol=1e-3, atol=1e-3 * gscale)


def test_broadcast_into_leading_ones():
    """An operand with fewer dims that pads to the output shape ((3,) into (1, 3)); once sent the
    kernel dispatcher into endless recursion (found by the graph generator above)."""
    a = jg.ones(1, 3, dtype=jg.float64, requires_grad=True)
    b = jg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    assert_close(a + b, np.array([[2.0, 3.0, 4.0]]))
    assert_close(jg.ones(1, 1, 3) * b, np.array([[[1.0, 2.0, 3.0]]]))
    (a * b).sum().backward()
    assert_close(a.grad, np.array([[1.0, 2.0, 3.0]]))
    assert_close(b.grad, np.ones(3))


@_settings(30)
@given(programs())
def test_fused_backward_matches_node_by_node(prog):
    """Fused regions (Note [fused backward]) on random graphs: every elementwise region fuses
    (threshold 1 element), and the gradients equal the node-by-node ones."""
    from jitgrad import _config

    grads = []
    old = _config.FUSION, _config.FUSION_MIN_ELEMENTS
    try:
        for fuse in (False, True):
            _config.FUSION, _config.FUSION_MIN_ELEMENTS = fuse, 1
            xs = leaves(prog)
            run(prog, *xs).backward()
            grads.append([None if x.grad is None else x.grad.numpy() for x in xs])
    finally:
        _config.FUSION, _config.FUSION_MIN_ELEMENTS = old
    for plain, fused in zip(*grads):
        assert (plain is None) == (fused is None)
        if plain is not None:
            assert_close(fused, plain, rtol=1e-12, atol=1e-12)
