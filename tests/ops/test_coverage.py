"""Every registry row (``jitgrad.ops.core.registry.OPS``) has an op-database entry, and every row an
entry names exists. The rows an entry names are rows its calls run: tests/ops/test_ops.py checks
``rows`` in the forward test and ``gradient_rows`` in the gradgradcheck with a recorder
(``opinfo.recording_rows``). A row covered otherwise is in ``COVERED_ELSEWHERE``, with where."""
import re

import jitgrad  # noqa: F401  (registers the core rows)
import jitgrad.nn  # noqa: F401
import jitgrad.numpy  # noqa: F401  (numpy.linalg, fft, einsum rows)
import jitgrad.scipy.special  # noqa: F401
import jitgrad.scipy.linalg  # noqa: F401
import jitgrad.scipy.signal  # noqa: F401
import jitgrad.scipy.stats  # noqa: F401
import jitgrad.scipy._mvn_cdf  # noqa: F401  (its rows are made when stats first needs them)
from jitgrad.ops.core.registry import OPS
from jitgrad.testing.op_db import all_entries

#: rows made on first use, one per operand count (``einsum2``, ``einsum3``...): they exist only
#: once called, so a name of this form counts as a row
GENERATED = re.compile(r"einsum\d+")

#: rows no entry names, each with the test that exercises it (keep this short)
COVERED_ELSEWHERE = {
    # writes and views made by in-place ops (ops/inplace.py dispatches them without the
    # recorder's entry points): the inplace_* and setitem_* entries, tests/ops/test_views_inplace.py
    "copy_": "tests/ops/test_views_inplace.py",
    "fill_": "tests/ops/test_views_inplace.py",
    "fill_tensor_": "tests/ops/test_views_inplace.py",
    "zero_": "tests/ops/test_views_inplace.py",
    "as_strided_view": "tests/ops/test_views_inplace.py (views of views written through)",
    # dtype and device moves: a float32 round trip is too coarse for finite differences
    "cast": "tests/test_tensor.py (to/float/double); ToCopyBackward0: tests/test_complex.py",
    "to_device": "tests/cuda (every entry's CPU == CUDA check moves its inputs)",
    # random draws: no gradient and no deterministic value to check against finite differences
    "dropout_mask": "tests/compile/test_random_capture.py, tests/nn (dropout)",
    "random_like": "tests/compile/test_random_capture.py, tests/ops/test_torch_more.py",
    # bool reductions and value checks (no gradient; Note [value checks] in ops/checks.py)
    "bool_reduce": "tests/compile/test_value_checks.py",
    "check": "tests/compile/test_value_checks.py",
    # complex-valued rows: the database's runners are real (float64 finite differences)
    "abs_complex": "tests/test_complex.py",
    "conj": "tests/test_complex.py",
    "real": "tests/test_complex.py",
    "imag": "tests/test_complex.py",
    "angle": "tests/test_complex.py",
    "fft_c2c": "tests/numpy/test_fft.py",
    "fft_r2c": "tests/numpy/test_fft.py",
    "fft_c2r": "tests/numpy/test_fft.py",
    "fft_resize": "tests/numpy/test_fft.py",
    # the multivariate normal CDF: a randomised quadrature (its value carries Genz's error
    # estimate, too coarse for finite differences) and its gradient row
    "mvn_cdf": "tests/scipy/test_stats_cdfs.py",
    "mvn_cdf_grad": "tests/scipy/test_stats_cdfs.py",
    # jitgrad.scipy rows whose forward is SciPy's own (shape parameters as attributes):
    # tests/scipy/test_special_extra.py checks forward, gradients and second derivatives
    **{f"scipy_{name}": "tests/scipy/test_special_extra.py" for name in (
        "erfc", "erfinv", "erfcinv", "log_ndtr", "ndtri", "i0", "i1", "i0e", "i1e", "gammainc",
        "gammaincc", "betainc", "jv", "yv", "iv", "ive", "gammaincinv", "betaincinv",
        "stdtrit")},
    # torch.special's rows with SciPy / NumPy forwards (ops/special_torch.py; no CUDA forward,
    # which every database entry runs): forward against torch and SciPy, gradients and second
    # derivatives in tests/test_special_namespace.py
    **{f"special_{name}": "tests/test_special_namespace.py" for name in (
        "k0", "k1", "k0e", "k1e", "airy_ai", "airy_aip", "erfcx", "entr", "spherical_jn",
        "zeta", "orthogonal_polynomial")},
    "scipy_convolve": "tests/scipy/test_signal.py",
    "scipy_solve_sylvester": "tests/scipy/test_linalg_extra.py",
    "scipy_sqrtm": "tests/scipy/test_linalg_extra.py",
    "scipy_embed": "tests/scipy/test_signal.py (the backward of convolve's same/valid modes)",
    # the backward-only guard of scatter_reduce("prod")'s double backward (two zeros at one
    # target: PyTorch's DelayedError)
    "scatter_reduce_delayed_error": "tests/ops/test_scatter_reduce.py",
}


def _named_rows():
    return {row for entry in all_entries() for row in entry.rows + entry.gradient_rows}


def test_gradient_rows_are_checked():
    """``gradient_rows`` are verified by the gradgradcheck (tests/ops/test_ops.py): an entry
    naming them must run it."""
    unchecked = [e.name for e in all_entries() if e.gradient_rows and not (e.differentiable
                                                                           and e.gradgrad)]
    assert not unchecked, unchecked


def test_every_registry_row_has_an_entry():
    missing = sorted(row for row in OPS if row not in _named_rows()
                     and row not in COVERED_ELSEWHERE and not GENERATED.fullmatch(row))
    assert not missing, f"registry rows without an op-database entry: {missing}"


def test_every_named_row_exists():
    unknown = sorted(row for row in _named_rows()
                     if row not in OPS and not GENERATED.fullmatch(row))
    assert not unknown, f"op-database entries name rows the registry does not have: {unknown}"


def test_allow_list_is_needed_and_real():
    """No allow-listed row also has an entry (move it out), and each is a real row."""
    assert not sorted(set(COVERED_ELSEWHERE) & _named_rows())
    assert not sorted(set(COVERED_ELSEWHERE) - set(OPS))


def test_entry_names_are_unique():
    names = [entry.name for entry in all_entries()]
    assert len(names) == len(set(names)), sorted({n for n in names if names.count(n) > 1})
