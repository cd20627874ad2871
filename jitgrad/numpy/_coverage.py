"""How much of NumPy ``jitgrad.numpy`` covers: every public NumPy function that ``jax.numpy``
also offers, classified as differentiable, pass-through or missing.

* **differentiable**: ``jitgrad.numpy.<name>`` records the graph (registry rows or a
  composition of them; piecewise-constant functions such as ``floor`` have their zero gradient);
* **pass-through**: a documented non-differentiable utility that runs NumPy on the data
  (printing options, index helpers, set operations, ``load``/``save``, constant creators): its
  ``passthrough`` attribute is True (``_passthrough.mark``), and where its result could carry a
  gradient it raises when an input requires grad;
* **missing**: looking the name up raises ``AttributeError``.

The names are pinned here (generated with jax 0.10.2 and NumPy 2.4: the callables of ``numpy``,
``numpy.linalg`` and ``numpy.fft`` that are not classes, minus those ``jax.numpy`` lacks), so
neither jax nor a NumPy upgrade changes the counts. ``python -m jitgrad.numpy._coverage``
prints the counts; ``--write docs/numpy.md`` regenerates the table there (between the
``coverage-table`` markers); ``tests/numpy/test_coverage.py`` checks that it is current.
"""
from __future__ import annotations

import sys

#: public functions of NumPy's main namespace that jax.numpy also offers
MAIN = """
    abs absolute acos acosh add all allclose amax amin angle any append apply_along_axis
    apply_over_axes arange arccos arccosh arcsin arcsinh arctan arctan2 arctanh argmax argmin
    argpartition argsort argwhere around array array_equal array_equiv array_repr array_split
    array_str asarray asin asinh astype atan atan2 atanh atleast_1d atleast_2d atleast_3d
    average bartlett bincount bitwise_and bitwise_count bitwise_invert bitwise_left_shift
    bitwise_not bitwise_or bitwise_right_shift bitwise_xor blackman block broadcast_arrays
    broadcast_shapes broadcast_to can_cast cbrt ceil choose clip column_stack compress concat
    concatenate conj conjugate convolve copy copysign corrcoef correlate cos cosh
    count_nonzero cov cross cumprod cumsum cumulative_prod cumulative_sum deg2rad degrees
    delete diag diag_indices diag_indices_from diagflat diagonal diff digitize divide divmod
    dot dsplit dstack ediff1d einsum einsum_path empty empty_like equal exp exp2 expand_dims
    expm1 extract eye fabs fill_diagonal flatnonzero flip fliplr flipud float_power floor
    floor_divide fmax fmin fmod frexp from_dlpack frombuffer fromfile fromfunction fromiter
    frompyfunc fromstring full full_like gcd geomspace get_printoptions gradient greater
    greater_equal hamming hanning heaviside histogram histogram2d histogram_bin_edges
    histogramdd hsplit hstack hypot i0 identity imag indices inner insert interp intersect1d
    invert isclose iscomplex iscomplexobj isdtype isfinite isin isinf isnan isneginf isposinf
    isreal isrealobj isscalar issubdtype iterable ix_ kaiser kron lcm ldexp left_shift less
    less_equal lexsort linspace load log log10 log1p log2 logaddexp logaddexp2 logical_and
    logical_not logical_or logical_xor logspace mask_indices matmul matrix_transpose matvec
    max maximum mean median meshgrid min minimum mod modf moveaxis multiply nan_to_num
    nanargmax nanargmin nancumprod nancumsum nanmax nanmean nanmedian nanmin nanpercentile
    nanprod nanquantile nanstd nansum nanvar ndim negative nextafter nonzero not_equal ones
    ones_like outer packbits pad partition percentile permute_dims piecewise place poly
    polyadd polyder polydiv polyfit polyint polymul polysub polyval positive pow power
    printoptions prod promote_types ptp put put_along_axis quantile rad2deg radians ravel
    ravel_multi_index real reciprocal remainder repeat reshape resize result_type right_shift
    rint roll rollaxis roots rot90 round save savez searchsorted select set_printoptions
    setdiff1d setxor1d shape sign signbit sin sinc sinh size sort sort_complex spacing split
    sqrt square squeeze stack std subtract sum swapaxes take take_along_axis tan tanh
    tensordot tile trace transpose trapezoid tri tril tril_indices tril_indices_from
    trim_zeros triu triu_indices triu_indices_from true_divide trunc union1d unique unique_all
    unique_counts unique_inverse unique_values unpackbits unravel_index unstack unwrap vander
    var vdot vecdot vecmat vsplit vstack where zeros zeros_like
""".split()

#: the other public functions of NumPy's main namespace (jax.numpy lacks them): reported, not
#: required (``asmatrix``/``bmat`` make ``numpy.matrix``, ``nested_iters`` iterators, ``test``
#: runs NumPy's tests)
NUMPY_ONLY = """
    array2string asanyarray asarray_chkfinite ascontiguousarray asfortranarray asmatrix
    base_repr binary_repr bmat busday_count busday_offset common_type copyto datetime_as_string
    datetime_data fix format_float_positional format_float_scientific fromregex genfromtxt
    get_include getbufsize geterr geterrcall info is_busday isfortran isnat loadtxt
    may_share_memory min_scalar_type mintypecode nested_iters putmask real_if_close require
    row_stack savetxt savez_compressed setbufsize seterr seterrcall shares_memory show_config
    show_runtime test typename
""".split()

#: numpy.linalg functions jax.numpy.linalg offers
LINALG = """
    cholesky cond cross det diagonal eig eigh eigvals eigvalsh inv lstsq matmul matrix_norm
    matrix_power matrix_rank matrix_transpose multi_dot norm outer pinv qr slogdet solve svd
    svdvals tensordot tensorinv tensorsolve trace vecdot vector_norm
""".split()

#: numpy.fft functions jax.numpy.fft offers
FFT = """
    fft fft2 fftfreq fftn fftshift hfft ifft ifft2 ifftn ifftshift ihfft irfft irfft2 irfftn
    rfft rfft2 rfftfreq rfftn
""".split()

#: the counts measured before issue 19's work (the same classification, the pass-throughs
#: that existed then marked): 240 of the 343 main-namespace names were present
BEFORE = {"main": {"differentiable": 159, "pass-through": 81, "missing": 103},
          "linalg": {"differentiable": 25, "pass-through": 1, "missing": 5},
          "fft": {"differentiable": 16, "pass-through": 2, "missing": 0},
          "numpy-only": {"differentiable": 3, "pass-through": 1, "missing": 43}}

BEGIN, END = "<!-- coverage-table:begin -->", "<!-- coverage-table:end -->"
KINDS = ("differentiable", "pass-through", "missing")


def classify_one(module, name: str) -> str:
    """``differentiable``, ``pass-through`` or ``missing`` for ``module.<name>``."""
    try:
        fn = getattr(module, name)
    except AttributeError:
        return "missing"
    return "pass-through" if getattr(fn, "passthrough", False) else "differentiable"


def classify() -> dict:
    """``{"main"|"linalg"|"fft": {name: kind}}`` for the pinned names."""
    # the package this module belongs to, read (not imported: it is always loaded before its
    # submodules); its namespace is what is classified, missing names included (__getattr__)
    jnp = sys.modules[__package__]

    return {"main": {n: classify_one(jnp, n) for n in MAIN},
            "linalg": {n: classify_one(jnp.linalg, n) for n in LINALG},
            "fft": {n: classify_one(jnp.fft, n) for n in FFT},
            "numpy-only": {n: classify_one(jnp, n) for n in NUMPY_ONLY}}


def counts(table: dict | None = None) -> dict:
    """``{namespace: {kind: count}}``."""
    table = classify() if table is None else table
    return {ns: {k: sum(1 for v in kinds.values() if v == k) for k in KINDS}
            for ns, kinds in table.items()}


def markdown(table: dict | None = None) -> str:
    """The docs table: per namespace, the counts and the names of each kind."""
    table = classify() if table is None else table
    cnt = counts(table)
    lines = [BEGIN, "",
             "| namespace | differentiable | pass-through | missing |",
             "|---|---|---|---|"]
    for ns in table:
        c = cnt[ns]
        lines.append(f"| `{ns}` | {c['differentiable']} | {c['pass-through']} | {c['missing']} |")
    for ns, kinds in table.items():
        prefix = "" if ns in ("main", "numpy-only") else ns + "."
        label = {"main": "main namespace",
                 "numpy-only": "NumPy-only (not in jax.numpy)"}.get(ns, f"numpy.{ns}")
        for kind in KINDS:
            names = [n for n, k in kinds.items() if k == kind]
            if names:
                lines += ["", f"**{label}, {kind}** ({len(names)}): "
                          + " ".join(f"`{prefix}{n}`" for n in names)]
    lines += ["", "(generated by `python -m jitgrad.numpy._coverage --write docs/numpy.md`)",
              "", END]
    return "\n".join(lines)


def write(path: str) -> None:
    """Replace the table between the markers in ``path``."""
    with open(path) as fh:
        text = fh.read()
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    with open(path, "w") as fh:
        fh.write(head + markdown() + tail)


def main(argv=None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--write"]:
        write(argv[1])
    for ns, c in counts().items():
        print(ns, c)


if __name__ == "__main__":
    main()
