"""Parametrizations of a module's weight (PyTorch's ``torch.nn.utils.parametrizations``):
``orthogonal``, ``weight_norm`` and ``spectral_norm``, built on ``parametrize``."""
from __future__ import annotations

from ... import linalg
from ...graph.grad_mode import no_grad
from ...ops import creation, shape
from ...tensor import Tensor
from .. import functional
from ..modules.module import Module
from . import parametrize

__all__ = ["orthogonal", "weight_norm", "spectral_norm"]

_MAPS = ("matrix_exp", "cayley", "householder")


def _is_orthogonal(Q, eps=None):
    n, k = Q.shape[-2], Q.shape[-1]
    Id = creation.eye(k, dtype=Q.dtype)
    eps = 10.0 * n * (1e-7 if Q.dtype.itemsize <= 4 else 1e-15) if eps is None else eps
    return bool((Q.mH @ Q - Id).abs().max().item() <= eps)


def _make_orthogonal(A):
    """The Q of ``A = QR`` with ``diag(R) >= 0`` (unique for full-rank ``A``)."""
    Q, R = linalg.qr(A)
    signs = R.diagonal(dim1=-2, dim2=-1).sgn()
    return Q * signs.unsqueeze(-2)


class _Orthogonal(Module):
    """``X -> Q`` with orthonormal columns (or rows, for wide matrices): ``Q = base
    phi(skew(X))`` where ``phi`` is ``matrix_exp`` (``exp(A)``), ``cayley``
    (``(I - A/2)^-1 (I + A/2)``) or ``householder`` (a product of reflectors of the columns
    of ``tril(X, -1)``); ``base`` is the orthogonal matrix last assigned (the
    trivialization of Lezcano-Casado & Martinez-Rubio, 2019)."""

    def __init__(self, weight, orthogonal_map, *, use_trivialization=True):
        super().__init__()
        if weight.is_complex() and orthogonal_map == "householder":
            raise ValueError("The householder parametrization does not support complex tensors.")
        self.shape = tuple(weight.shape)
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, X):
        n, k = X.shape[-2], X.shape[-1]
        transposed = n < k
        if transposed:
            X = X.mT
            n, k = k, n
        if self.orthogonal_map in ("matrix_exp", "cayley"):
            X = X.tril()
            if n != k:  # make it square: the skew-symmetric matrix of an n x n generator
                pad = creation.zeros(X.shape[:-2] + (n, n - k), dtype=X.dtype)
                X = shape.cat([X, pad], dim=-1)
            A = X - X.mH
            if self.orthogonal_map == "matrix_exp":
                Q = linalg.matrix_exp(A)
            else:
                Id = creation.eye(n, dtype=A.dtype)
                Q = linalg.solve(Id - A * 0.5, Id + A * 0.5)
            if n != k:
                Q = Q[..., :k]
        else:
            A = X.tril(diagonal=-1)
            tau = 2.0 / (1.0 + (A * A).sum(dim=-2))
            Q = linalg.householder_product(A, tau)
            Q = Q * _diag_signs(X).unsqueeze(-2)
        if hasattr(self, "base") and self.base is not None:
            Q = self.base @ Q
        return Q.mT if transposed else Q

    def right_inverse(self, Q):
        """Make ``Q`` (orthogonalised by QR when it is not orthogonal) the weight: it becomes
        ``base`` and the stored generator the one ``phi`` maps to the identity."""
        if tuple(Q.shape) != self.shape:
            raise ValueError(f"Expected a matrix or batch of matrices of shape {self.shape}. "
                             f"Got a tensor of shape {tuple(Q.shape)}.")
        Q_init = Q
        n, k = Q.shape[-2], Q.shape[-1]
        transposed = n < k
        if transposed:
            Q = Q.mT
            n, k = k, n
        if not hasattr(self, "base"):  # (at registration the weight is then kept as is)
            raise NotImplementedError("Assigning to an orthogonal parametrization with "
                                      "use_trivialization=False is not supported; register it "
                                      "with use_trivialization=True to assign weights.")
        if n == k:
            Q = Q.clone() if _is_orthogonal(Q) else _make_orthogonal(Q)
        else:  # complete the k orthonormal columns to an n x n orthogonal matrix
            extra = creation.randn(*(Q.shape[:-2] + (n, n - k)), dtype=Q.dtype)
            Q = _make_orthogonal(shape.cat([Q, extra], dim=-1))
        self.base = Q
        # -I: its skew part is 0 (phi = I) and its householder reflectors are trivial
        neg_id = creation.zeros(Q_init.shape, dtype=Q_init.dtype)
        neg_id.diagonal(dim1=-2, dim2=-1).fill_(-1.0)
        return neg_id


def _diag_signs(X):
    """``-1`` where ``diag(X) < 0`` else ``1`` (the householder map's column signs; the
    diagonal is -1 after an assignment and is not differentiated through)."""
    d = X.diagonal(dim1=-2, dim2=-1).detach()
    return (d >= 0).to(X.dtype) * 2.0 - 1.0


def orthogonal(module, name="weight", orthogonal_map=None, *, use_trivialization=True):
    """Parametrize ``module.<name>`` (a matrix or batch of matrices) to be orthogonal:
    ``Q^T Q = I`` (tall) or ``Q Q^T = I`` (wide), trained through an unconstrained generator.
    ``orthogonal_map``: 'matrix_exp' (default for square or complex), 'cayley' or
    'householder' (default otherwise). The current weight is orthogonalised at registration.
    Returns ``module``."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.ndim < 2:
        raise ValueError(f"Expected a matrix or batch of matrices. Got a tensor of "
                         f"{weight.ndim} dimensions.")
    if orthogonal_map is None:
        orthogonal_map = ("matrix_exp" if weight.shape[-2] == weight.shape[-1]
                          or weight.is_complex() else "householder")
    if orthogonal_map not in _MAPS:
        raise ValueError(f'orthogonal_map has to be one of "matrix_exp", "cayley", '
                         f'"householder". Got: {orthogonal_map}')
    orth = _Orthogonal(weight, orthogonal_map, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module


def norm_except_dim(v, dim):
    """The 2-norm of ``v`` over every dim but ``dim`` (kept as size-1 dims); over all of
    ``v`` when ``dim`` is None or -1."""
    if dim is None or dim == -1:
        return (v * v).sum().sqrt()
    dims = tuple(d for d in range(v.ndim) if d != dim % v.ndim)
    return (v * v).sum(dim=dims, keepdim=True).sqrt()


class _WeightNorm(Module):
    """``(g, v) -> g v / ||v||`` with the norm over every dim but ``dim``."""

    def __init__(self, dim=0):
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g, weight_v):
        return weight_v * (weight_g / norm_except_dim(weight_v, self.dim))

    def right_inverse(self, weight):
        return norm_except_dim(weight, self.dim), weight


def weight_norm(module, name="weight", dim=0):
    """Reparametrize ``module.<name>`` as ``w = g v / ||v||`` (Salimans & Kingma, 2016):
    magnitude ``original0 = g`` (``||w||`` over every dim but ``dim``; ``dim=None``: one
    scalar) and direction ``original1 = v``, both trained. Returns ``module``."""
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)
    return module


def weight_to_matrix(weight, dim):
    """``weight`` with ``dim`` moved first and the other dims flattened: ``(size(dim), -1)``."""
    if dim != 0:
        weight = weight.movedim(dim, 0)
    return weight.reshape(weight.shape[0], -1)


def power_iteration_(weight_mat, u, v, n_power_iterations, eps):
    """``u <- normalize(W v)``, ``v <- normalize(W^H u)``, ``n_power_iterations`` times, in
    place and not recorded: ``u``, ``v`` tend to the top singular vectors of ``W``."""
    with no_grad():
        for _ in range(n_power_iterations):
            u.copy_(functional.normalize(weight_mat @ v, dim=0, eps=eps))
            v.copy_(functional.normalize(weight_mat.mH @ u, dim=0, eps=eps))


def initial_singular_vectors(weight_mat, eps):
    """``(u, v)``: random unit vectors after 15 power iterations on ``weight_mat``."""
    h, w = weight_mat.shape
    u = functional.normalize(creation.randn(h, dtype=weight_mat.dtype), dim=0, eps=eps)
    v = functional.normalize(creation.randn(w, dtype=weight_mat.dtype), dim=0, eps=eps)
    power_iteration_(weight_mat.detach(), u, v, 15, eps)
    return u, v


def spectral_sigma(weight_mat, u, v):
    """The spectral-norm estimate ``u^H W v`` (``u``, ``v`` taken as constants)."""
    return (u.clone().conj() * (weight_mat @ v.clone())).sum()


class _SpectralNorm(Module):
    """``W -> W / sigma(W)`` with the largest singular value ``sigma`` estimated by power
    iteration on ``W`` reshaped to ``(W.shape[dim], -1)``: buffers ``_u``, ``_v`` are updated
    ``n_power_iterations`` times per forward in training mode (Miyato et al., 2018);
    ``sigma = u^T W v``. A 1-d ``W`` is divided by its 2-norm."""

    def __init__(self, weight, n_power_iterations=1, dim=0, eps=1e-12):
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of "
                             f"[-{ndim}, {ndim - 1}] but got {dim})")
        if n_power_iterations <= 0:
            raise ValueError(f"Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps, self.n_power_iterations = eps, n_power_iterations
        if ndim > 1:
            u, v = initial_singular_vectors(weight_to_matrix(weight, self.dim), eps)
            self.register_buffer("_u", u)
            self.register_buffer("_v", v)

    def forward(self, weight):
        if weight.ndim == 1:
            return functional.normalize(weight, dim=0, eps=self.eps)
        weight_mat = weight_to_matrix(weight, self.dim)
        if self.training:
            power_iteration_(weight_mat, self._u, self._v, self.n_power_iterations, self.eps)
        return weight / spectral_sigma(weight_mat, self._u, self._v)

    def right_inverse(self, value):
        return value


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """Reparametrize ``module.<name>`` as ``W / sigma(W)`` (spectral normalisation; see
    ``_SpectralNorm``). ``dim`` defaults to 1 for transposed convolutions, else 0. Returns
    ``module``."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        dim = 1 if type(module).__name__.startswith("ConvTranspose") else 0
    parametrize.register_parametrization(
        module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module
