"""The cases of ``tests/ops/test_torch_more.py`` pinned against PyTorch: each an expression in
``M`` (``torch``, or jitgrad with the torch_* families' functions) and the helpers ``t``
(a float64 tensor), ``ti`` (int64), ``tf`` (float32). ``python tests/ops/_torch_more_cases.py``
with a Python that has torch rewrites ``_pinned_torch_more.py`` (CI has no torch)."""
nan, inf = float("nan"), float("inf")

CASES = {
    # counting functions, integer results
    "histc": "M.histc(t([1., 2, 1, 4, 2.5]), bins=4, min=0, max=3)",
    "histc_auto": "M.histc(t([1., 2, 1]), bins=4)",
    "histc_float32": "M.histc(tf([0.5, 0.7, 2.0]), bins=2, min=0, max=2)",
    "histogram": "M.histogram(t([1., 2, 1, 4]), bins=4)",
    "histogram_edges": "M.histogram(t([1., 2, 1, 4]), t([0., 1.5, 3, 5]), "
                       "weight=t([1., 2, 3, 4]))",
    "bincount": "M.bincount(ti([0, 1, 1, 3]))",
    "bincount_weights": "M.bincount(ti([0, 1, 1, 3]), weights=t([0.5, 1, 2, 4]), minlength=6)",
    "searchsorted": "M.searchsorted(t([1., 3, 5, 7]), t([3., 6, 0, 9]))",
    "searchsorted_right": "M.searchsorted(t([1., 3, 5, 7]), t([3., 6, 0, 7]), right=True)",
    "searchsorted_side": "M.searchsorted(t([1., 3, 5, 7]), t([3., 7]), side='right', "
                         "out_int32=True)",
    "searchsorted_2d": "M.searchsorted(t([[1., 3, 5], [2, 4, 6]]), t([[3., 0], [6, 5]]))",
    "bucketize": "M.bucketize(t([3., 6, 0, 1]), t([1., 3, 5]))",
    "bucketize_right": "M.bucketize(t([3., 6, 0, 1]), t([1., 3, 5]), right=True)",
    "isin": "M.isin(ti([1, 2, 3, 4]), ti([2, 4, 7]))",
    "isin_invert": "M.isin(t([1., 2, 3]), t([2.]), invert=True)",
    "count_nonzero_dim": "M.count_nonzero(t([[0., 1], [2, 0], [3, 3]]), dim=0)",
    "count_nonzero_all": "M.count_nonzero(t([[0., 1], [2, 0], [3, 3]]))",
    "count_nonzero_dims": "M.count_nonzero(t([[[0., 1], [2, 0]], [[3, 3], [0, 0]]]), dim=(0, 2))",
    "gcd": "M.gcd(ti([12, 18, -4, 0]), ti([8, 27, 6, 0]))",
    "lcm": "M.lcm(ti([4, 6, -3, 0]), ti([6, 8, 5, 2]))",
    "bitwise_and": "M.bitwise_and(ti([12, 10, -1]), ti([10, 6, 5]))",
    "bitwise_or": "M.bitwise_or(ti([12, 10, -1]), ti([10, 6, 5]))",
    "bitwise_xor": "M.bitwise_xor(ti([12, 10, -1]), ti([10, 6, 5]))",
    "bitwise_not": "M.bitwise_not(ti([0, 5, -3]))",
    "bitwise_not_bool": "M.bitwise_not(t([1., 0]) > 0)",
    "bitwise_left_shift": "M.bitwise_left_shift(ti([1, 3, -2]), ti([2, 1, 3]))",
    "bitwise_right_shift": "M.bitwise_right_shift(ti([16, 7, -8]), ti([2, 1, 1]))",
    "signbit": "M.signbit(t([-0.0, 0.0, -2, 3, -inf]))",
    "heaviside": "M.heaviside(t([-1., 0, 2, 0]), t([0.5, 0.5, 0.5, 2]))",
    "nextafter": "M.nextafter(t([1., 0, 5]), t([2., -1, 5]))",
    "argwhere": "M.argwhere(t([[0., 1, 0], [2, 0, 3]]))",
    "tril_indices": "M.tril_indices(3, 4, 1)",
    "triu_indices": "M.triu_indices(4, 3, -1)",
    # pointwise
    "addcmul": "M.addcmul(t([1., 2]), t([[1., 2], [3, 4]]), t([2., -1]), value=0.5)",
    "addcdiv": "M.addcdiv(t([1., 2]), t([[1., 2], [3, 4]]), t([2., -4]), value=3)",
    "xlogy_zeros": "M.xlogy(t([0., 0, 2, 0]), t([0., nan, 3, 5]))",
    "xlogy_scalar": "M.xlogy(2.0, t([1., 4]))",
    "fmax_nan": "M.fmax(t([1., nan, 3, nan]), t([2., 2, nan, nan]))",
    "fmin_nan": "M.fmin(t([1., nan, 3, nan]), t([2., 2, nan, nan]))",
    "frexp": "M.frexp(t([8., -0.3, 0, 5, 1e-300]))",
    "ldexp_int": "M.ldexp(t([1., 2, -3]), ti([3, -1, 0]))",
    "float_power": "M.float_power(tf([2., 4]), 0.5)",
    "float_power_int": "M.float_power(ti([2, 3]), ti([3, 2]))",
    "frac": "M.frac(t([-1.5, 2.25, 3, -0.0]))",
    "deg2rad": "M.deg2rad(t([180., -90, 45]))",
    "rad2deg": "M.rad2deg(t([3.141592653589793, -1, 0.5]))",
    "sgn": "M.sgn(t([-2., 0, 3]))",
    "rsub": "M.rsub(t([1., 2]), t([10., 20]), alpha=2)",
    "lgamma": "M.lgamma(t([0.5, 3, -2.5, 10]))",
    "digamma": "M.digamma(t([0.5, 3, -2.5, 10]))",
    "polygamma": "M.polygamma(2, t([0.5, 3, 10]))",
    "mvlgamma": "M.mvlgamma(t([2.5, 3, 10]), p=3)",
    "erfc": "M.erfc(t([-1., 0, 0.5, 5]))",
    "erfinv": "M.erfinv(t([-0.9, 0, 0.5, 0.99]))",
    "i0": "M.i0(t([-1., 0, 0.5, 5]))",
    "igamma": "M.igamma(t([0.5, 2, 3]), t([1., 0.5, 4]))",
    "igammac": "M.igammac(t([0.5, 2, 3]), t([1., 0.5, 4]))",
    "logdet": "M.logdet(t([[[2., 1], [1, 3]], [[0., 1], [1, 0]], [[1., 2], [2, 4]]]))",
    "renorm": "M.renorm(t([[1., 2, 3], [0.1, 0.2, 0.1], [4, 0, 0]]), 1, 0, 2.0)",
    "addmv": "M.addmv(t([1., 2]), t([[1., 2, 3], [4, 5, 6]]), t([1., 0, -1]), beta=2, alpha=0.5)",
    "addmv_beta0": "M.addmv(t([nan, 2]), t([[1., 2, 3], [4, 5, 6]]), t([1., 0, -1]), beta=0)",
    "addr": "M.addr(t([[1., 2], [3, 4]]), t([1., 2]), t([3., -1]), alpha=2)",
    "addbmm": "M.addbmm(t([[1., 0], [0, 1]]), t([[[1., 2]], [[3, 4]]]).transpose(1, 2), "
              "t([[[1., 1]], [[2, 0]]]), beta=0.5)",
    "baddbmm": "M.baddbmm(t([[[1.]], [[2.]]]), t([[[1., 2]], [[3, 4]]]), "
               "t([[[1.], [1]], [[2], [0]]]), alpha=3)",
    "trapezoid": "M.trapezoid(t([[1., 2, 4], [0, 1, 0]]))",
    "trapezoid_dx": "M.trapezoid(t([1., 2, 4]), dx=0.5)",
    "trapezoid_x": "M.trapezoid(t([1., 2, 4]), t([0., 1, 3]))",
    "trapz": "M.trapz(t([1., 2, 4]), t([0., 1, 3]))",
    "cumulative_trapezoid": "M.cumulative_trapezoid(t([[1., 2, 4], [0, 1, 0]]), dim=1)",
    "complex": "M.complex(t([1., 2]), t([3., -4]))",
    "polar": "M.polar(t([1., 2]), t([0.5, -1]))",
    "angle": "M.angle(t([-1., 2]))",
    # reductions, scans
    "cummax_nan": "M.cummax(t([1., 3, 3, 2, 5, nan, 1]), 0)",
    "cummin": "M.cummin(t([[3., 1, 1, 2, 0], [1, 1, 2, -1, 4]]), 1)",
    "logcumsumexp": "M.logcumsumexp(t([-inf, 1000., 1000, -5, 2]), 0)",
    "logcumsumexp_2d": "M.logcumsumexp(t([[1., 2], [3, 4]]), dim=0)",
    "mode": "M.mode(t([[2., 1, 2, 1, 3], [5, 5, 4, 4, 4]]), 1)",
    "mode_keepdim": "M.mode(t([[2., 1], [2, 1], [3, 1]]), 0, keepdim=True)",
    "kthvalue": "M.kthvalue(t([[3., 9, 1, 2], [8, 7, 6, 5]]), 3, dim=1, keepdim=True)",
    "nanmedian_dim": "M.nanmedian(t([[3., nan, 1, 2], [1, 2, 3, 4]]), 1)",
    "nanmedian_all": "M.nanmedian(t([3., nan, 1, 2, 1]))",
    "nansum": "M.nansum(t([[1., nan], [3, 4]]), dim=0)",
    "nanmean": "M.nanmean(t([[1., nan], [3, 4]]), dim=1, keepdim=True)",
    "aminmax": "M.aminmax(t([[1., 2], [3, 0]]))",
    "aminmax_dim": "M.aminmax(t([[1., 2], [3, 0]]), dim=1, keepdim=True)",
    "std_mean": "M.std_mean(t([[1., 2], [3, 5]]), dim=0)",
    "var_mean": "M.var_mean(t([[1., 2], [3, 5]]), dim=1, correction=0)",
    "cov": "M.cov(t([[1., 2, 4, 7], [0, 1, 0, 3]]))",
    "cov_weights": "M.cov(t([[1., 2, 4, 7], [0, 1, 0, 3]]), fweights=ti([1, 2, 1, 1]), "
                   "aweights=t([0.5, 1, 1, 2]))",
    "cov_1d": "M.cov(t([1., 2, 4]), correction=0)",
    "corrcoef": "M.corrcoef(t([[1., 2, 4, 7], [0, 1, 0, 3], [3, 1, 2, 2]]))",
    # shape and index
    "atleast_1d": "M.atleast_1d(t(2.))",
    "atleast_2d": "M.atleast_2d(t([1., 2]), t(3.))",
    "atleast_3d": "M.atleast_3d(t([[1., 2]]), t([1., 2]))",
    "hstack": "M.hstack([t([[1.], [2]]), t([[3., 4], [5, 6]])])",
    "vstack": "M.vstack((t([1., 2]), t([[3., 4]])))",
    "row_stack": "M.row_stack([t([1., 2]), t([3., 4])])",
    "dstack": "M.dstack([t([1., 2]), t([3., 4])])",
    "column_stack": "M.column_stack([t([1., 2]), t([[3., 4], [5, 6]])])",
    "tensor_split": "M.tensor_split(t([1., 2, 3, 4, 5]), 3)",
    "tensor_split_indices": "M.tensor_split(t([[1., 2, 3, 4]]), [1, 6], dim=1)",
    "tensor_split_tensor": "M.tensor_split(t([1., 2, 3, 4]), ti([1, 3]))",
    "hsplit": "M.hsplit(t([[1., 2, 3, 4]]), 2)",
    "vsplit": "M.vsplit(t([[1., 2], [3, 4], [5, 6]]), [1])",
    "dsplit": "M.dsplit(t([[[1., 2, 3, 4]]]), [3])",
    "meshgrid_ij": "M.meshgrid(t([1., 2]), t([3., 4, 5]), indexing='ij')",
    "meshgrid_xy": "M.meshgrid(t([1., 2]), t([3., 4, 5]), indexing='xy')",
    "cartesian_prod": "M.cartesian_prod(t([1., 2]), t([3., 4, 5]))",
    "combinations": "M.combinations(t([1., 2, 3, 4]))",
    "combinations_r3": "M.combinations(t([1., 2, 3]), r=2, with_replacement=True)",
    "block_diag": "M.block_diag(t([[1., 2]]), t(3.), t([[4.], [5]]))",
    "broadcast_tensors": "M.broadcast_tensors(t([1., 2]), t([[3.], [4]]))",
    "diagonal_scatter": "M.diagonal_scatter(t([[0., 0, 0], [0, 0, 0]]), t([1., 2]), 1)",
    "select_scatter": "M.select_scatter(t([[0., 0], [0, 0]]), t([1., 2]), 1, 0)",
    "slice_scatter": "M.slice_scatter(t([[0., 0, 0, 0]]), t([[1., 2]]), 1, 0, None, 2)",
    "index_copy": "M.index_copy(t([[0., 0], [0, 0], [0, 0]]), 0, ti([2, 0]), t([[1., 2], [3, 4]]))",
    "index_fill": "M.index_fill(t([[1., 2, 3], [4, 5, 6]]), 1, ti([0, 2]), -1.0)",
    "index_add": "M.index_add(t([[1., 2], [3, 4]]), 0, ti([1, 1]), t([[1., 1], [2, 2]]), alpha=2)",
    "masked_select": "M.masked_select(t([[1., 2, 3], [4, 5, 6]]), t([1., 0, 1]) > 0)",
    "masked_scatter": "M.masked_scatter(t([[1., 2, 3], [4, 5, 6]]), t([0., 1, 1]) > 0, "
                      "t([10., 20, 30, 40, 50]))",
    "diag_embed": "M.diag_embed(t([[1., 2], [3, 4]]), offset=-1, dim1=0, dim2=2)",
    "diagflat": "M.diagflat(t([[1., 2], [3, 4]]), 1)",
    "take_along_dim": "M.take_along_dim(t([[10., 30, 20], [60, 40, 50]]), ti([[0], [2]]), 1)",
    "take_along_dim_flat": "M.take_along_dim(t([[10., 30], [60, 40]]), ti([3, 0]))",
    "take_along_dim_bcast": "M.take_along_dim(t([[10., 30, 20]]), ti([[0], [2]]), dim=1)",
    "rot90": "M.rot90(t([[1., 2], [3, 4], [5, 6]]))",
    "rot90_2": "M.rot90(t([[1., 2], [3, 4], [5, 6]]), 2)",
    "rot90_m1": "M.rot90(t([[1., 2], [3, 4], [5, 6]]), -1, [1, 0])",
    "fliplr": "M.fliplr(t([[1., 2], [3, 4]]))",
    "flipud": "M.flipud(t([[1., 2], [3, 4]]))",
    "inner": "M.inner(t([[1., 2], [3, 4]]), t([[1., 0], [1, 1], [2, -1]]))",
    "vdot": "M.vdot(t([1., 2, 3]), t([4., 5, 6]))",
    "mv": "M.mv(t([[1., 2], [3, 4]]), t([1., -1]))",
    "cdist": "M.cdist(t([[0., 0], [1, 1]]), t([[1., 0], [0, 0], [3, 4]]))",
    "cdist_p1": "M.cdist(t([[0., 0], [1, 1]]), t([[1., 0], [3, 4]]), p=1)",
    "cdist_pinf": "M.cdist(t([[0., 0], [1, 1]]), t([[1., 0], [3, 4]]), p=float('inf'))",
    "cdist_p0": "M.cdist(t([[0., 0], [1, 1]]), t([[1., 0], [3, 4]]), p=0)",
    "select": "M.select(t([[1., 2], [3, 4]]), 1, -1)",
    "narrow_copy": "M.narrow_copy(t([[1., 2, 3], [4, 5, 6]]), 1, 1, 2)",
    "permute_copy": "M.permute_copy(t([[[1., 2]], [[3, 4]]]), (2, 0, 1))",
    "t_copy": "M.t_copy(t([[1., 2, 3]]))",
    "diagonal_copy": "M.diagonal_copy(t([[1., 2], [3, 4]]))",
    "unbind_copy": "M.unbind_copy(t([[1., 2], [3, 4]]), 1)",
    "split_copy": "M.split_copy(t([1., 2, 3, 4, 5]), 2)",
    "split_with_sizes_copy": "M.split_with_sizes_copy(t([1., 2, 3, 4, 5]), [1, 4])",
    "slice_copy": "M.slice_copy(t([1., 2, 3, 4, 5]), 0, 1, None, 2)",
    "expand_copy": "M.expand_copy(t([[1.], [2]]), (2, 3))",
    "as_strided_copy": "M.as_strided_copy(t([[0., 1, 2], [3, 4, 5]]), (2, 2), (1, 2), 1)",
    "as_strided_scatter": "M.as_strided_scatter(t([0., 0, 0, 0, 0, 0]), t([[1., 2], [3, 4]]), "
                          "(2, 2), (1, 2), 1)",
    "unfold_copy": "M.unfold_copy(t([0., 1, 2, 3, 4]), 0, 2, 2)",
    # torch_extra
    "clamp_min": "M.clamp_min(t([1., -2, 3]), 0.5)",
    "clamp_max": "M.clamp_max(t([1., -2, 3]), 0.5)",
    "floor_divide": "M.floor_divide(t([7., -7, 5.5]), t([2., 2, -2]))",
    "floor_divide_int": "M.floor_divide(ti([7, -7]), ti([2, 2]))",
    "logical_xor": "M.logical_xor(t([1., 0, 2, 0]), t([1., 1, 0, 0]))",
    "isneginf": "M.isneginf(t([-inf, inf, nan, 1]))",
    "isposinf": "M.isposinf(t([-inf, inf, nan, 1]))",
    "isreal": "M.isreal(M.complex(t([1., 2]), t([0., 1])))",
    "msort": "M.msort(t([[3., 1], [1, 2], [2, 0]]))",
    "ravel": "M.ravel(t([[1., 2], [3, 4]]).t())",
    "vander": "M.vander(t([1., 2, 0]), 4)",
    "vander_increasing": "M.vander(t([1., 2, 3]), increasing=True)",
    "vander_int": "M.vander(ti([1, 2, 3]))",
    "gradient": "M.gradient(t([1., 4, 9, 16, 25]))",
    "gradient_spacing": "M.gradient(t([1., 4, 9, 16, 25]), spacing=2.0, edge_order=2)",
    "gradient_2d": "M.gradient(t([[1., 2, 4], [2, 5, 3]]), dim=1)",
    "gradient_all": "M.gradient(t([[1., 2, 4], [2, 5, 3]]), spacing=[1.0, 0.5])",
    "chain_matmul": "M.chain_matmul(t([[1., 2]]), t([[1., 0], [2, 1]]), t([[3.], [4]]))",
    "pdist": "M.pdist(t([[0., 0], [3, 4], [1, 1]]))",
    "pdist_p1": "M.pdist(t([[0., 0], [3, 4], [1, 1]]), p=1)",
    "index_reduce_prod": "M.index_reduce(t([[1., 2], [3, 4], [5, 6]]), 0, ti([0, 2, 0]), "
                         "t([[2., 2], [3, 3], [4, 4]]), 'prod')",
    "index_reduce_amax": "M.index_reduce(t([[1., 2], [3, 4], [5, 6]]), 0, ti([0, 2, 0]), "
                         "t([[2., 2], [3, 3], [4, 4]]), 'amax', include_self=False)",
    "index_reduce_mean": "M.index_reduce(t([[1., 2, 3]]), 1, ti([0, 0]), t([[2., 4]]), 'mean')",
    "unique_consecutive": "M.unique_consecutive(ti([1, 1, 2, 2, 3, 1, 1, 2]), "
                          "return_inverse=True, return_counts=True)",
    "unique_consecutive_dim": "M.unique_consecutive(t([[1., 1], [1, 1], [2, 0]]), dim=0)",
    "unravel_index": "M.unravel_index(ti([4, 1, 5]), (3, 2))",
    "histogramdd": "M.histogramdd(t([[0., 0], [1, 1], [2, 0.5]]), bins=[2, 2])",
    "view_as_real_copy": "M.view_as_real_copy(M.complex(t([1., 2]), t([3., 4])))",
    "view_as_complex_copy": "M.view_as_complex_copy(t([[1., 2], [3, 4]]))",
    "asarray": "M.asarray([1, 2.5])",
    "frombuffer": "M.frombuffer(bytearray(b'\\x01\\x02\\x03\\x04'), dtype=M.int16)",
    "unsafe_split": "M.unsafe_split(t([1., 2, 3]), 2)",
    "unsafe_chunk": "M.unsafe_chunk(t([1., 2, 3]), 2)",
    "split_with_sizes": "t([1., 2, 3, 4]).split_with_sizes([3, 1])",
    # in-place methods
    "addcmul_": "t([1., 2]).addcmul_(t([1., 2]), t([3., 4]), value=2)",
    "lgamma_": "t([0.5, 3]).lgamma_()",
    "xlogy_": "t([0., 2]).xlogy_(t([3., 4]))",
    "polygamma_": "t([0.5, 3]).polygamma_(1)",
    "clamp_min_": "t([0.5, 3]).clamp_min_(1)",
    "bitwise_and_": "ti([12, 10]).bitwise_and_(ti([10, 6]))",
    "float_power_": "t([2., 3]).float_power_(2)",
    "renorm_": "t([[3., 4], [0.3, 0.4]]).renorm_(2, 0, 1.0)",
    "index_reduce_": "t([[1., 2], [3, 4]]).index_reduce_(1, ti([1]), t([[5.], [6]]), 'amin')",
    # windows and constructors
    "hann_window": "M.hann_window(5)",
    "hann_window_symmetric": "M.hann_window(5, periodic=False)",
    "hann_window_1": "M.hann_window(1)",
    "hamming_window": "M.hamming_window(6)",
    "hamming_window_ab": "M.hamming_window(5, True, 0.5, 0.4)",
    "blackman_window": "M.blackman_window(5)",
    "bartlett_window": "M.bartlett_window(5)",
    "bartlett_window_sym": "M.bartlett_window(6, periodic=False)",
    "kaiser_window": "M.kaiser_window(6, True, 3.0)",
    "kaiser_window_sym": "M.kaiser_window(5, False)",
    "window_float32": "M.hann_window(4, dtype=M.float32)",
    "logspace": "M.logspace(0, 2, 3, base=2)",
    "logspace_10": "M.logspace(-1, 1, 5)",
    "range": "M.range(0, 1, 0.25)",
    "scalar_tensor": "M.scalar_tensor(3)",
}

if __name__ == "__main__":
    import math
    from pathlib import Path

    import torch

    torch.set_default_dtype(torch.float64)  # (jitgrad's default)

    def t(v):
        return torch.tensor(v, dtype=torch.float64)

    def ti(v):
        return torch.tensor(v, dtype=torch.int64)

    def tf(v):
        return torch.tensor(v, dtype=torch.float32)

    def plain(r):
        if isinstance(r, (tuple, list)):
            return [plain(v) for v in r]
        return (str(r.dtype).replace("torch.", ""), list(r.shape), r.tolist())

    lines = ['"""PyTorch ' + torch.__version__ + "'s values of the cases in _torch_more_cases.py "
             '(written by it; do not edit)."""',
             'nan, inf = float("nan"), float("inf")', "", "VALUES = {"]
    for name, expr in CASES.items():
        value = plain(eval(expr, {"M": torch, "t": t, "ti": ti, "tf": tf, "math": math,
                                  "nan": nan, "inf": inf}))
        lines.append(f"    {name!r}: {value!r},")
    lines.append("}")
    Path(__file__).with_name("_pinned_torch_more.py").write_text("\n".join(lines) + "\n")
