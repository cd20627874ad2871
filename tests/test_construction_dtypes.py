"""Every constructor from user data rejects NumPy dtypes jitgrad has no dtype for, at
construction, with a TypeError naming the dtype (a tensor of such a dtype used to be made and
fail later in ``.dtype``, its repr or its ops)."""
import numpy
import pytest

import jitgrad
import jitgrad.numpy as jnp

BAD = {
    "object": numpy.array([1.0, 2.0], dtype=object),
    "str": numpy.array(["a", "b"]),
    "bytes": numpy.array([b"a", b"b"]),
    "datetime64": numpy.array(["2020-01-01", "2021-01-01"], dtype="datetime64[D]"),
    "timedelta64": numpy.array([1, 2], dtype="timedelta64[s]"),
    "structured": numpy.zeros(2, dtype=[("a", "f8"), ("b", "i4")]),
    "void": numpy.zeros(2, dtype="V4"),
    "uint32": numpy.array([1, 2], dtype=numpy.uint32),
    "uint64": numpy.array([1, 2], dtype=numpy.uint64),
    "longdouble": numpy.array([1.0, 2.0], dtype=numpy.longdouble),
}
if numpy.dtype(numpy.longdouble) == numpy.dtype(numpy.float64):  # (platforms without it)
    del BAD["longdouble"]

CONSTRUCTORS = {
    "tensor": jitgrad.tensor,
    "as_tensor": jitgrad.as_tensor,
    "from_numpy": jitgrad.from_numpy,
    "Tensor": jitgrad.Tensor,
    "tensor_of_scalar": lambda a: jitgrad.tensor(a[0]),
    "tensor_of_list_of_arrays": lambda a: jitgrad.tensor([a, a]),
    "np.array": jnp.array,
    "np.asarray": jnp.asarray,
    "np.array_of_scalar": lambda a: jnp.array(a[0]),
    # a function's array argument becomes a Tensor beside a Tensor argument (plain arguments
    # alone get NumPy's own result: jitgrad/numpy/_plain.py)
    "np.stack": lambda a: jnp.stack([a, jnp.zeros(2)]),
    "np.function_argument": lambda a: jnp.maximum(a, jnp.zeros(2)),
}


@pytest.mark.parametrize("kind", sorted(BAD))
@pytest.mark.parametrize("constructor", sorted(CONSTRUCTORS))
def test_unsupported_dtype_raises_at_construction(constructor, kind):
    data = BAD[kind]
    if constructor.endswith("_of_scalar") and not isinstance(data[0], numpy.generic):
        pytest.skip("the element is a Python object (covered by the Python-data cases)")
    if constructor == "tensor_of_list_of_arrays" and kind in ("uint32", "uint64", "longdouble"):
        pytest.skip("a sequence's numbers are re-typed by its inference (int64, default float)")
    with pytest.raises(TypeError, match="supported dtypes") as info:
        CONSTRUCTORS[constructor](data)
    assert str(data.dtype) in str(info.value)


@pytest.mark.parametrize("data", [["a", "b"], [b"x"], [{"a": 1}], [None, 1.0]],
                         ids=["str", "bytes", "dict", "none"])
@pytest.mark.parametrize("constructor", ["tensor", "as_tensor", "np.array"])
def test_python_data_without_a_numeric_dtype_raises(constructor, data):
    with pytest.raises(TypeError, match="supported dtypes"):
        CONSTRUCTORS[constructor](data)


def test_requested_dtype_converts_where_numpy_does():
    """jitgrad.numpy follows NumPy (``numpy.array(objects, dtype=float)`` converts); the
    torch-style constructors judge the data's own dtype, as torch does."""
    plain = numpy.array([1.0, 2.0], dtype=object)
    assert jnp.array(plain, dtype=float).numpy().tolist() == [1.0, 2.0]
    assert jnp.asarray(plain, dtype=numpy.float32).dtype.np == numpy.float32
    for make in (lambda: jitgrad.tensor(plain, dtype=jitgrad.float64),
                 lambda: jitgrad.as_tensor(plain, dtype=jitgrad.float32),
                 lambda: jitgrad.Tensor(plain)):
        with pytest.raises(TypeError, match="NumPy dtype object"):
            make()
    assert jitgrad.tensor([1, 2.5], dtype=jitgrad.float32).dtype == jitgrad.float32


def test_object_array_of_tensors_still_differentiates():
    x = jitgrad.tensor(1.5, dtype=jitgrad.float64, requires_grad=True)
    holder = numpy.empty(2, dtype=object)
    holder[:] = [x, 2.0]
    jnp.sum(jnp.array(holder) * x).backward()
    assert float(x.grad) == pytest.approx(2 * 1.5 + 2.0)


def test_supported_dtypes_still_construct():
    for name in ("float16", "float32", "float64", "complex64", "complex128", "bool", "uint8",
                 "int8", "int16", "int32", "int64"):
        arr = numpy.zeros(2, dtype=name)
        for constructor in ("tensor", "as_tensor", "from_numpy", "np.array", "np.asarray"):
            assert CONSTRUCTORS[constructor](arr).dtype.np == arr.dtype
