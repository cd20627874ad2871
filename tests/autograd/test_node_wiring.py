"""Note [one way to wire a node] (jitgrad/ops/core/recording.py): every kind of node a forward
call records is wired by ``record_node`` (or by an eager recorder that is ``record_node``
written out for one fresh output). Each test builds one kind and checks its fields against what
PyTorch gives for the same call (torch 2.x: ``next_functions``, ``name()``, ``output_nr``,
``needs_input_grad``; PyTorch names its C++ nodes ``torch::autograd::AccumulateGrad`` and
``torch::autograd::CopySlices``, jitgrad's ``name()`` the class alone), plus the fields only
jitgrad has: the metadata the engine validates gradients with and the sequence numbers that
order the backward.
"""
import numpy as np
import pytest

import jitgrad as jg
from jitgrad.compile import fori_loop
from jitgrad.graph.node import AccumulateGrad
from jitgrad.ops.core import recording

F64 = jg.float64
I64 = jg.int64


def leaf(*shape):
    return jg.tensor(np.random.default_rng(len(shape)).standard_normal(shape),
                     requires_grad=True)


def edges(node):
    """``next_functions`` as PyTorch prints them: ``(name, input_nr)``, None for no edge."""
    return [(None if fn is None else fn.name(), nr) for fn, nr in node.next_functions]


def sink_of(node, k):
    fn, nr = node.next_functions[k]
    assert type(fn) is AccumulateGrad and nr == 0
    return fn.variable


def check_outputs(node, outputs, expected_nrs):
    """Each output that gets ``node`` has it as ``grad_fn`` with its output number and
    requires grad; the others (None in ``expected_nrs``) have no history."""
    for out, nr in zip(outputs, expected_nrs):
        if nr is None:
            assert out.grad_fn is None and not out.requires_grad
        else:
            assert out.grad_fn is node and out._output_nr == nr and out.requires_grad


def check_common(node, n_inputs, n_outputs, before=None):
    """Fields every wired node has: one edge, one needs flag and one input metadata entry per
    input (metadata None exactly where there is no edge), one output metadata entry per
    output, and a sequence number after the nodes it was recorded after."""
    assert len(node.next_functions) == n_inputs == len(node._next_meta)
    assert len(node.needs_input_grad) == n_inputs
    for (fn, _), meta, need in zip(node.next_functions, node._next_meta, node.needs_input_grad):
        assert (fn is None) == (meta is None) == (not need)
    assert len(node._output_meta) == n_outputs
    for other in before or ():
        assert node._sequence_nr > other._sequence_nr


# --- elementwise -------------------------------------------------------------------------------
def test_elementwise_general_path():
    """``x * y`` broadcasting (the general path: ``record_elementwise``). PyTorch:
    MulBackward0, [(AccumulateGrad, 0), (AccumulateGrad, 0)], output_nr 0."""
    x, y = leaf(3), leaf(2, 3)
    a = x * 1.0
    out = a * y
    node = out.grad_fn
    assert node.name() == "MulBackward0"
    assert edges(node) == [("MulBackward0", 0), ("AccumulateGrad", 0)]
    assert node.next_functions[0][0] is a.grad_fn and sink_of(node, 1) is y
    assert node.needs_input_grad == (True, True)
    assert node._next_meta == (((3,), F64), ((2, 3), F64))
    assert node._output_meta == (((2, 3), F64),)
    check_outputs(node, [out], [0])
    check_common(node, 2, 1, before=[a.grad_fn])


@pytest.mark.parametrize("form", ["scalar", "tensors", "unary"])
def test_elementwise_unrolled_fast_path(form):
    """``x * 1.5``, ``x + y``, ``tanh(x)`` on small same-shape tensors (``record_unrolled``).
    PyTorch: MulBackward0 [(AccumulateGrad, 0), (None, 0)]; AddBackward0 with both;
    TanhBackward0 [(AccumulateGrad, 0)]."""
    x, y = leaf(100), leaf(100)
    calls = {
        "scalar": (lambda: x * 1.5, "MulBackward0", [("AccumulateGrad", 0), (None, 0)]),
        "tensors": (lambda: x + y, "AddBackward0", [("AccumulateGrad", 0), ("AccumulateGrad", 0)]),
        "unary": (lambda: jg.tanh(x), "TanhBackward0", [("AccumulateGrad", 0)]),
    }
    call, name, expected = calls[form]
    out = call()
    node = out.grad_fn
    assert node.name() == name and edges(node) == expected
    assert sink_of(node, 0) is x
    meta = ((100,), F64)
    assert node._next_meta == {"scalar": (meta, None), "tensors": (meta, meta),
                               "unary": (meta,)}[form]
    assert node._output_meta == (meta,)
    check_outputs(node, [out], [0])
    check_common(node, len(expected), 1)


def test_elementwise_attribute_path():
    """``2.0 ** x`` (a row with an attribute: ``elementwise_fast`` and ``record_elementwise``).
    PyTorch: PowBackward2 [(AccumulateGrad, 0)]."""
    x = leaf(4)
    out = 2.0 ** x
    node = out.grad_fn
    assert node.name() == "PowBackward2" and edges(node) == [("AccumulateGrad", 0)]
    assert node._next_meta == (((4,), F64),) and node._output_meta == (((4,), F64),)
    check_outputs(node, [out], [0])
    check_common(node, 1, 1)


# --- composite -------------------------------------------------------------------------------
def test_composite_one_input():
    """``y.sum(dim=0)`` (``record_one``). PyTorch: SumBackward1 [(AccumulateGrad, 0)]."""
    y = leaf(2, 3)
    out = y.sum(dim=0)
    node = out.grad_fn
    assert node.name() == "SumBackward1" and edges(node) == [("AccumulateGrad", 0)]
    assert node._next_meta == (((2, 3), F64),) and node._output_meta == (((3,), F64),)
    check_outputs(node, [out], [0])
    check_common(node, 1, 1)


def test_composite_several_outputs():
    """``y.max(dim=0)``: values get the node, integer indices none. PyTorch: MaxBackward0
    [(AccumulateGrad, 0)], indices without grad_fn."""
    y = leaf(2, 3)
    values, indices = y.max(dim=0)
    node = values.grad_fn
    assert node.name() == "MaxBackward0" and edges(node) == [("AccumulateGrad", 0)]
    assert node._output_meta == (((3,), F64), ((3,), I64))
    check_outputs(node, [values, indices], [0, None])
    check_common(node, 1, 2)


def test_composite_several_inputs():
    """``cat([x, c, x])`` with ``c`` not requiring grad. PyTorch: CatBackward0
    [(AccumulateGrad, 0), (None, 0), (AccumulateGrad, 0)]."""
    x = leaf(3)
    out = jg.cat([x, jg.ones(2, dtype=F64), x])
    node = out.grad_fn
    assert node.name() == "CatBackward0"
    assert edges(node) == [("AccumulateGrad", 0), (None, 0), ("AccumulateGrad", 0)]
    assert node.next_functions[0][0] is node.next_functions[2][0]  # one sink per leaf
    assert node.needs_input_grad == (True, False, True)
    assert node._next_meta == (((3,), F64), None, ((3,), F64))
    check_outputs(node, [out], [0])
    check_common(node, 3, 1)


def test_composite_that_saves():
    """``a @ b`` (a composite row that saves its inputs). PyTorch: MmBackward0 [(AccumulateGrad,
    0), (AccumulateGrad, 0)]; jitgrad names the row's node as its row does."""
    a, b = leaf(2, 3), leaf(3, 4)
    out = a @ b
    node = out.grad_fn
    assert edges(node) == [("AccumulateGrad", 0), ("AccumulateGrad", 0)]
    assert node._next_meta == (((2, 3), F64), ((3, 4), F64))
    assert node._output_meta == (((2, 4), F64),)
    check_outputs(node, [out], [0])
    check_common(node, 2, 1)


# --- views and in-place ops --------------------------------------------------------------------
def test_view():
    """``x[1:]``. PyTorch: SliceBackward0 [(AccumulateGrad, 0)]."""
    x = leaf(3)
    out = x[1:]
    node = out.grad_fn
    assert node.name() == "SliceBackward0" and edges(node) == [("AccumulateGrad", 0)]
    assert node._next_meta == (((3,), F64),) and node._output_meta == (((2,), F64),)
    assert out._base is x
    check_outputs(node, [out], [0])
    check_common(node, 1, 1)


def test_regenerated_view():
    """A view's grad_fn after an in-place write to its base. PyTorch: AsStridedBackward0
    [(MulBackward0, 0)] (the base's new history), made when asked for."""
    x = leaf(3)
    a = x * 1.0
    b = a[1:]
    b.retain_grad()
    a.mul_(2.0)
    node = b.grad_fn
    assert node.name() == "AsStridedBackward0" and edges(node) == [("MulBackward0", 0)]
    assert node.next_functions[0][0] is a.grad_fn
    assert node._next_meta == (((3,), F64),) and node._output_meta == (((2,), F64),)
    check_outputs(node, [b], [0])
    check_common(node, 1, 1, before=[a.grad_fn])
    b.sum().backward()  # retain_grad followed the view to its new grad_fn
    np.testing.assert_array_equal(b.grad.numpy(), np.ones(2))
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 2.0, 2.0])


def test_inplace():
    """``a.mul_(2.0)`` on a non-leaf. PyTorch: MulBackward0 [(MulBackward0, 0), (None, 0)]; the
    tensor is output 0 of its new grad_fn."""
    x = leaf(3)
    a = x * 1.0
    before = a.grad_fn
    a.retain_grad()
    a.mul_(2.0)
    node = a.grad_fn
    assert node.name() == "MulBackward0" and node is not before
    assert edges(node) == [("MulBackward0", 0), (None, 0)]
    assert node.next_functions[0][0] is before
    assert node._next_meta == (((3,), F64), None) and node._output_meta == (((3,), F64),)
    check_outputs(node, [a], [0])
    check_common(node, 2, 1, before=[before])
    a.sum().backward()  # retain_grad moved to the new grad_fn
    np.testing.assert_array_equal(a.grad.numpy(), np.ones(3))


@pytest.mark.parametrize("other", ["scalar", "tensor"])
def test_copy_slices(other):
    """``a[0:2].mul_(w)``: the base's history is CopySlices over the op. PyTorch:
    torch::autograd::CopySlices [(MulBackward0, 0), (None, 0)], with a tensor ``w``
    [(MulBackward0, 0), (AccumulateGrad, 0)]."""
    x, w = leaf(3), leaf(2)
    a = x * 1.0
    before = a.grad_fn
    a[0:2].mul_(3.0 if other == "scalar" else w)
    node = a.grad_fn
    assert node.name() == "CopySlices" and node.qualified_name == "torch::autograd::CopySlices"
    assert node.fn.name() == "MulBackward0"
    second = (None, 0) if other == "scalar" else ("AccumulateGrad", 0)
    assert edges(node) == [("MulBackward0", 0), second]
    assert node.next_functions[0][0] is before
    assert node._next_meta == (((3,), F64), None if other == "scalar" else ((2,), F64))
    assert node._output_meta == (((3,), F64),)
    check_outputs(node, [a], [0])
    check_common(node, 2, 1, before=[before, node.fn])
    a.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [3.0, 3.0, 1.0] if other == "scalar"
                                  else np.r_[w.detach().numpy(), 1.0])


# --- custom Function ----------------------------------------------------------------------------
class Three(jg.autograd.Function):
    """Three outputs: a float tensor, an integer tensor and a Python number."""

    @staticmethod
    def forward(ctx, x, k, y):
        return x * k, (y * 2.0).long(), 5

    @staticmethod
    def backward(ctx, g, g_int, g_number):
        return g * 3.0, None, None


class Two(jg.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2.0, x * 3.0

    @staticmethod
    def backward(ctx, a, b):
        return a * 2.0 + b * 3.0


def test_custom_function():
    """PyTorch: ``ThreeBackward`` [(AccumulateGrad, 0), (AccumulateGrad, 0)] (one edge per
    Tensor argument), ``needs_input_grad`` (True, False, True) (one per argument), the integer
    output without grad_fn; ``Two``'s outputs are outputs 0 and 1 of one node."""
    x, y = leaf(3), leaf(2, 3)
    a = x * 1.0
    o1, o2, o3 = Three.apply(a, 3.0, y)
    node = o1.grad_fn
    assert node.name() == "ThreeBackward"
    assert edges(node) == [("MulBackward0", 0), ("AccumulateGrad", 0)]
    assert node.needs_input_grad == (True, False, True)
    assert node._next_meta == (((3,), F64), ((2, 3), F64))
    assert node._output_meta == (((3,), F64), ((2, 3), I64), None)
    assert o3 == 5
    check_outputs(node, [o1, o2], [0, None])
    assert node._sequence_nr > a.grad_fn._sequence_nr
    p, q = Two.apply(x)
    assert p.grad_fn is q.grad_fn and (p._output_nr, q._output_nr) == (0, 1)
    assert edges(p.grad_fn) == [("AccumulateGrad", 0)]
    assert p.grad_fn._output_meta == (((3,), F64), ((3,), F64))
    (o1.sum() + p.sum() + q.sum()).backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.full(3, 3.0 + 5.0))


def test_custom_function_is_numbered_when_made():
    """The ctx keeps the sequence number it got before its forward ran (PyTorch's node is made
    before ``forward``): a node recorded inside forward with grad mode on comes after it."""
    inside = []

    class Inner(jg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            with jg.enable_grad():
                inside.append((x.detach().requires_grad_() * 2.0).grad_fn)
            return x * 2.0

        @staticmethod
        def backward(ctx, g):
            return g * 2.0

    out = Inner.apply(leaf(3))
    assert out.grad_fn._sequence_nr < inside[0]._sequence_nr


# --- compiled ----------------------------------------------------------------------------------
def test_compiled_function():
    """A compiled call's outputs join the graph through one node. PyTorch (torch.compile):
    CompiledFunctionBackward [(AccumulateGrad, 0)]."""
    x = leaf(3)
    fn = jg.compile(lambda x: (x.exp() * x).sum())
    fn(x)  # the trace
    out = fn(x)
    node = out.grad_fn
    assert node.name() == "CompiledFunctionBackward"
    assert edges(node) == [("AccumulateGrad", 0)] and sink_of(node, 0) is x
    assert node.needs_input_grad == (True,)
    assert node._next_meta == (((3,), F64),) and node._output_meta == (((), F64),)
    check_outputs(node, [out], [0])
    check_common(node, 1, 1)


def test_fori_loop():
    """The trace run of a compiled ``fori_loop`` joins its result through ``ForiLoopBackward``:
    an edge per carry and captured tensor a gradient reaches (None for the carry that starts
    as a constant), an output per carry, the carry no gradient reaches without history."""
    x, w = leaf(3), leaf(3)

    def f(x):
        return fori_loop(3, lambda c: (c[0] * w + 1.0, c[1] * 2.0), (x, jg.ones(3, dtype=F64)))

    a, b = jg.compile(f)(x)
    node = a.grad_fn
    assert node.name() == "ForiLoopBackward"
    assert [nr for _, nr in node.next_functions] == [0, 0, 0]
    assert node.next_functions[1][0] is None
    assert node.needs_input_grad == (True, False, True)
    assert node._next_meta == (((3,), F64), None, ((3,), F64))
    assert node._output_meta == (((3,), F64), ((3,), F64))
    check_outputs(node, [a, b], [0, None])
    check_common(node, 3, 2)
    a.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), w.detach().numpy() ** 3)


# --- the eager recorders are record_node ------------------------------------------------------
@pytest.mark.parametrize("call", ["x * 1.5", "x + y", "x * z", "2.0 ** x", "z.sum(dim=0)",
                                  "x[1:]", "x.sum()"])
def test_eager_recorders_give_record_nodes_fields(call):
    """``record_elementwise``, ``record_unrolled`` and ``record_one`` (and the fast paths that
    call them) give the fields ``record_node`` gives for the same call."""
    x, y, z = leaf(3), leaf(3), leaf(2, 3)
    out = eval(call)
    node = out.grad_fn
    inputs = {"x * 1.5": (x, 1.5), "x + y": (x, y), "x * z": (x, z), "2.0 ** x": (x,),
              "z.sum(dim=0)": (z,), "x[1:]": (x,), "x.sum()": (x,)}[call]
    twin_out = type(out)._make(out._data)
    twin = recording.record_node(type(node)(), inputs, node.needs_input_grad, (twin_out,))
    assert twin.next_functions == node.next_functions
    assert twin._next_meta == node._next_meta and twin._output_meta == node._output_meta
    assert twin.needs_input_grad == node.needs_input_grad
    assert twin_out.grad_fn is twin and twin_out._output_nr == out._output_nr == 0
    assert twin._sequence_nr > node._sequence_nr


def test_nodes_share_metadata():
    """Elementwise nodes over tensors of one shape and dtype share their metadata tuples (fewer
    objects for the cyclic collector); single-operand composites (sum, slices: ``record_one``)
    make fresh ones, which is cheaper per call, with equal values."""
    x = leaf(2, 3)
    first, second = (x * 2.0).grad_fn, (x * 3.0).grad_fn
    assert first._next_meta is second._next_meta
    assert first._output_meta is second._output_meta
    a, b = x.sum(dim=0).grad_fn, x.sum(dim=0).grad_fn
    assert a._next_meta == b._next_meta == (((2, 3), jg.float64),)
    assert a._output_meta == b._output_meta == (((3,), jg.float64),)
