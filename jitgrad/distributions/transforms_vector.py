"""Transforms that couple the entries of an event: softmax, stick breaking, Cholesky factors
and correlation Cholesky factors, and the piecewise ``CatTransform`` / ``StackTransform``."""
from __future__ import annotations

import math

import numpy as np

from .. import linalg as _linalg
from .. import numpy as _jnp
from ..nn import functional as _F
from . import constraints
from .transforms_base import Transform, finfo
from .utils import sum_rightmost

__all__ = ["CatTransform", "CorrCholeskyTransform", "LowerCholeskyTransform",
           "PositiveDefiniteTransform", "SoftmaxTransform", "StackTransform",
           "StickBreakingTransform", "clipped_sigmoid", "vec_to_tril_matrix", "tril_matrix_to_vec"]


def clipped_sigmoid(x):
    r""":math:`\sigma(x)` clamped to ``[tiny, 1 - eps]`` of ``x``'s dtype (keeps ``log y`` and
    ``log(1 - y)`` finite)."""
    fi = finfo(x)
    return x.sigmoid().clamp(min=float(fi.tiny), max=1.0 - float(fi.eps))


def _pad_last(x, before, after, value):
    """``x`` padded along its last dimension with ``value`` (differentiable)."""
    widths = [(0, 0)] * (x.ndim - 1) + [(before, after)]
    return _jnp.pad(x, widths, constant_values=value)


def _diag_embed(v):
    """The batch of diagonal matrices whose diagonals are the last dimension of ``v``."""
    return v.unsqueeze(-1) * _jnp.eye(v.shape[-1], dtype=v.dtype)


def _index(positions):
    """An int64 index tensor of ``positions``."""
    return _jnp.asarray(np.asarray(positions, dtype=np.int64))


def vec_to_tril_matrix(vec, diag=0):
    """The ``n x n`` matrices whose entries on and below diagonal ``diag`` are ``vec``'s last
    dimension, in row-major order, and zero elsewhere (differentiable: a gather)."""
    m = vec.shape[-1]
    a = 1 + 2 * diag
    n = int(round((-a + math.sqrt(a * a + 8 * m)) / 2))
    rows, cols = np.tril_indices(n, k=diag)
    if len(rows) != m:
        raise ValueError(f"vec_to_tril_matrix: a last dimension of {m} is not the number of "
                         f"entries of a triangle (diag={diag})")
    positions = np.zeros((n, n), dtype=np.int64)
    positions[rows, cols] = np.arange(1, m + 1)
    padded = _pad_last(vec, 1, 0, 0.0)
    return padded[..., _index(positions)]


def tril_matrix_to_vec(mat, diag=0):
    """The entries of ``mat`` on and below diagonal ``diag``, in row-major order, as a vector
    (the inverse of ``vec_to_tril_matrix``)."""
    n = mat.shape[-1]
    rows, cols = np.tril_indices(n, k=diag)
    flat = mat.reshape(tuple(mat.shape[:-2]) + (n * n,))
    return flat[..., _index(rows * n + cols)]


def _check_dim(op, x, dim, size):
    if not -x.ndim <= dim < x.ndim:
        raise IndexError(f"{op}: dim {dim} out of range for an input of shape {tuple(x.shape)}")
    if x.shape[dim] != size:
        raise ValueError(f"{op}: expected size {size} along dim {dim}, got shape "
                         f"{tuple(x.shape)}")


class SoftmaxTransform(Transform):
    r""":math:`y = \exp(x) / \sum \exp(x)` over the last dimension, from the reals onto the
    simplex. Not bijective (adding a constant to ``x`` gives the same ``y``): the inverse is
    ``log y`` and there is no log-Jacobian; use ``StickBreakingTransform`` for a density."""

    domain = constraints.real_vector
    codomain = constraints.simplex

    def __eq__(self, other):
        return isinstance(other, SoftmaxTransform)

    __hash__ = Transform.__hash__

    def _call(self, x):
        return _F.softmax(x, dim=-1)

    def _inverse(self, y):
        return y.log()

    def forward_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("SoftmaxTransform: too few dimensions on input")
        return shape

    inverse_shape = forward_shape


def _stick_offset(x, k):
    r""":math:`\log(K - i)` for :math:`i = 0..K-1` in ``x``'s dtype, so that ``x = 0`` maps to the
    simplex's centre."""
    return _jnp.log(_jnp.arange(k, 0, -1, dtype=x.dtype))


class StickBreakingTransform(Transform):
    r"""The stick-breaking map from :math:`\mathbb{R}^{K-1}` onto the :math:`K`-simplex:
    :math:`z_i = \sigma(x_i - \log(K-1-i))`, :math:`y_i = z_i \prod_{j<i}(1 - z_j)`,
    :math:`y_{K-1} = \prod_j (1 - z_j)`. Bijective (triangular Jacobian), with
    :math:`\log|\det J| = \sum_{i<K-1} [\log(1 - z_i) + \log y_i]`."""

    domain = constraints.real_vector
    codomain = constraints.simplex
    bijective = True

    def __eq__(self, other):
        return isinstance(other, StickBreakingTransform)

    __hash__ = Transform.__hash__

    def _call(self, x):
        z = clipped_sigmoid(x - _stick_offset(x, x.shape[-1]))
        z_cumprod = (1 - z).cumprod(-1)
        return _pad_last(z, 0, 1, 1.0) * _pad_last(z_cumprod, 1, 0, 1.0)

    def _inverse(self, y):
        y_crop = y[..., :-1]
        sf = (1 - y_crop.cumsum(-1)).clamp(min=float(finfo(y).tiny))
        return y_crop.log() - sf.log() + _stick_offset(y, y_crop.shape[-1])

    def log_abs_det_jacobian(self, x, y):
        u = x - _stick_offset(x, x.shape[-1])
        return (-u - _F.softplus(-u) + y[..., :-1].log()).sum(-1)

    def forward_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("StickBreakingTransform: too few dimensions on input")
        return tuple(shape[:-1]) + (shape[-1] + 1,)

    def inverse_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("StickBreakingTransform: too few dimensions on input")
        return tuple(shape[:-1]) + (shape[-1] - 1,)


class LowerCholeskyTransform(Transform):
    r"""From unconstrained square matrices onto lower-triangular matrices with a positive
    diagonal: keep the strictly lower triangle, exponentiate the diagonal. Not bijective
    (the upper triangle is dropped), so no log-Jacobian."""

    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.lower_cholesky

    def __eq__(self, other):
        return isinstance(other, LowerCholeskyTransform)

    __hash__ = Transform.__hash__

    def _call(self, x):
        return x.tril(-1) + _diag_embed(x.diagonal(dim1=-2, dim2=-1).exp())

    def _inverse(self, y):
        return y.tril(-1) + _diag_embed(y.diagonal(dim1=-2, dim2=-1).log())


class PositiveDefiniteTransform(Transform):
    r"""From unconstrained square matrices onto positive definite ones:
    :math:`y = L L^\top` with :math:`L` from ``LowerCholeskyTransform``; the inverse takes the
    Cholesky factor. Not bijective, so no log-Jacobian."""

    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.positive_definite

    def __eq__(self, other):
        return isinstance(other, PositiveDefiniteTransform)

    __hash__ = Transform.__hash__

    def _call(self, x):
        lower = LowerCholeskyTransform()(x)
        return lower @ lower.mT

    def _inverse(self, y):
        return LowerCholeskyTransform().inv(_linalg.cholesky(y))


class CorrCholeskyTransform(Transform):
    r"""From :math:`\mathbb{R}^{D(D-1)/2}` onto Cholesky factors of :math:`D \times D`
    correlation matrices (lower triangular, positive diagonal, unit-norm rows).

    The vector fills the strictly lower triangle row by row as
    :math:`r = \tanh(x)` (partial correlations); row :math:`i` is then
    :math:`y_{ij} = r_{ij}\sqrt{1 - \sum_{k<j} y_{ik}^2}` for :math:`j < i` and
    :math:`y_{ii} = \sqrt{1 - \sum_{k<i} y_{ik}^2}` (stick breaking on the squared row norm).
    :math:`\log|\det J| = \sum \log(1 - \tanh^2 x) + \tfrac12 \sum_{j<i}
    \log(1 - \sum_{k<j} y_{ik}^2)`.
    """

    domain = constraints.real_vector
    codomain = constraints.corr_cholesky
    bijective = True

    def __eq__(self, other):
        return isinstance(other, CorrCholeskyTransform)

    __hash__ = Transform.__hash__

    def _call(self, x):
        eps = float(finfo(x).eps)
        r = vec_to_tril_matrix(x.tanh().clamp(min=-1 + eps, max=1 - eps), diag=-1)
        z1m_cumprod_sqrt = (1 - r * r).sqrt().cumprod(-1)
        r = r + _jnp.eye(r.shape[-1], dtype=r.dtype)
        return r * _pad_last(z1m_cumprod_sqrt[..., :-1], 1, 0, 1.0)

    def _inverse(self, y):
        y_cumsum = 1 - (y * y).cumsum(-1)
        y_cumsum_shifted = _pad_last(y_cumsum[..., :-1], 1, 0, 1.0)
        y_vec = tril_matrix_to_vec(y, diag=-1)
        y_cumsum_vec = tril_matrix_to_vec(y_cumsum_shifted, diag=-1)
        t = y_vec / y_cumsum_vec.sqrt()
        return (t.log1p() - (-t).log1p()) / 2

    def log_abs_det_jacobian(self, x, y, intermediates=None):
        y1m_cumsum = 1 - (y * y).cumsum(-1)
        stick_breaking_logdet = 0.5 * tril_matrix_to_vec(y1m_cumsum, diag=-2).log().sum(-1)
        tanh_logdet = -2 * (x + _F.softplus(-2 * x) - math.log(2.0)).sum(-1)
        return stick_breaking_logdet + tanh_logdet

    def forward_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("CorrCholeskyTransform: too few dimensions on input")
        n = shape[-1]
        d = int(round((0.25 + 2 * n) ** 0.5 + 0.5))
        if d * (d - 1) // 2 != n:
            raise ValueError(f"CorrCholeskyTransform: input size {n} is not D*(D-1)/2 for an "
                             "integer D")
        return tuple(shape[:-1]) + (d, d)

    def inverse_shape(self, shape):
        if len(shape) < 2:
            raise ValueError("CorrCholeskyTransform: too few dimensions on input")
        if shape[-2] != shape[-1]:
            raise ValueError(f"CorrCholeskyTransform: expected square matrices, got {tuple(shape)}")
        d = shape[-1]
        return tuple(shape[:-2]) + (d * (d - 1) // 2,)


def _transforms(op, tseq):
    tseq = list(tseq)
    if not tseq or not all(isinstance(t, Transform) for t in tseq):
        raise TypeError(f"{op}: tseq must be a non-empty sequence of Transforms")
    return tseq


class CatTransform(Transform):
    """Apply ``tseq[i]`` to the ``i``-th piece of ``dim`` (pieces of sizes ``lengths``, default
    1 each) and concatenate the results, like ``torch.cat``. The log-det is the pieces'
    log-dets, concatenated along ``dim`` when it is a batch dimension of the log-det, else
    summed."""

    def __init__(self, tseq, dim=0, lengths=None, cache_size=0):
        tseq = _transforms("CatTransform", tseq)
        if cache_size:
            tseq = [t.with_cache(cache_size) for t in tseq]
        super().__init__(cache_size=cache_size)
        self.transforms = tseq
        self.lengths = [1] * len(tseq) if lengths is None else list(lengths)
        if len(self.lengths) != len(self.transforms):
            raise ValueError(f"CatTransform: {len(tseq)} transforms but {len(self.lengths)} "
                             "lengths")
        self.dim = dim

    @property
    def event_dim(self):
        return max(t.event_dim for t in self.transforms)

    @property
    def length(self):
        return sum(self.lengths)

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return CatTransform(self.transforms, self.dim, self.lengths, cache_size)

    def _map(self, x, inverse):
        _check_dim("CatTransform", x, self.dim, self.length)
        pieces, start = [], 0
        for trans, length in zip(self.transforms, self.lengths):
            piece = x.narrow(self.dim, start, length)
            pieces.append(trans.inv(piece) if inverse else trans(piece))
            start += length
        return _jnp.concatenate(pieces, axis=self.dim)

    def _call(self, x):
        return self._map(x, inverse=False)

    def _inverse(self, y):
        return self._map(y, inverse=True)

    def log_abs_det_jacobian(self, x, y):
        _check_dim("CatTransform", x, self.dim, self.length)
        _check_dim("CatTransform", y, self.dim, self.length)
        terms, start = [], 0
        for trans, length in zip(self.transforms, self.lengths):
            term = trans.log_abs_det_jacobian(x.narrow(self.dim, start, length),
                                              y.narrow(self.dim, start, length))
            terms.append(sum_rightmost(term, self.event_dim - trans.event_dim))
            start += length
        dim = self.dim if self.dim < 0 else self.dim - x.ndim
        dim += self.event_dim
        if dim < 0:
            return _jnp.concatenate(terms, axis=dim)
        return sum(terms[1:], terms[0])

    @property
    def bijective(self):
        return all(t.bijective for t in self.transforms)

    @constraints.dependent_property
    def domain(self):
        return constraints.cat([t.domain for t in self.transforms], self.dim, self.lengths)

    @constraints.dependent_property
    def codomain(self):
        return constraints.cat([t.codomain for t in self.transforms], self.dim, self.lengths)


class StackTransform(Transform):
    """Apply ``tseq[i]`` to the ``i``-th slice of ``dim`` and stack the results, like
    ``torch.stack``; the log-det is the slices' log-dets stacked along ``dim``."""

    def __init__(self, tseq, dim=0, cache_size=0):
        tseq = _transforms("StackTransform", tseq)
        if cache_size:
            tseq = [t.with_cache(cache_size) for t in tseq]
        super().__init__(cache_size=cache_size)
        self.transforms = tseq
        self.dim = dim

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return StackTransform(self.transforms, self.dim, cache_size)

    def _slices(self, z):
        _check_dim("StackTransform", z, self.dim, len(self.transforms))
        return [z.select(self.dim, i) for i in range(z.shape[self.dim])]

    def _call(self, x):
        return _jnp.stack([t(xi) for t, xi in zip(self.transforms, self._slices(x))],
                          axis=self.dim)

    def _inverse(self, y):
        return _jnp.stack([t.inv(yi) for t, yi in zip(self.transforms, self._slices(y))],
                          axis=self.dim)

    def log_abs_det_jacobian(self, x, y):
        terms = [t.log_abs_det_jacobian(xi, yi)
                 for t, xi, yi in zip(self.transforms, self._slices(x), self._slices(y))]
        return _jnp.stack(terms, axis=self.dim)

    @property
    def bijective(self):
        return all(t.bijective for t in self.transforms)

    @constraints.dependent_property
    def domain(self):
        return constraints.stack([t.domain for t in self.transforms], self.dim)

    @constraints.dependent_property
    def codomain(self):
        return constraints.stack([t.codomain for t in self.transforms], self.dim)
