"""``Embedding``."""
from __future__ import annotations

from ...tensor import Tensor
from .. import functional
from .. import init
from ...ops.core.upper import guard_writes
from ..parameter import Parameter
from ...ops.core import dispatch
from .linear import _check_device, _empty, _place
from .module import Module


class Embedding(Module):
    """A lookup table: ``Embedding(n, d)(idx)`` gives rows of the ``(n, d)`` weight, which is
    initialised N(0, 1) with the ``padding_idx`` row zeroed (it gets no gradient)."""

    def __init__(self, num_embeddings, embedding_dim, padding_idx=None, max_norm=None,
                 norm_type=2.0, scale_grad_by_freq=False, sparse=False, _weight=None,
                 _freeze=False, device=None, dtype=None):
        super().__init__()
        device = _check_device(device)
        if padding_idx is not None:
            if not -num_embeddings <= padding_idx < num_embeddings:
                raise AssertionError("Padding_idx must be within num_embeddings")
            padding_idx %= num_embeddings
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.padding_idx, self.max_norm, self.norm_type = padding_idx, max_norm, norm_type
        self.scale_grad_by_freq, self.sparse = scale_grad_by_freq, sparse
        if _weight is None:
            self.weight = Parameter(_empty((num_embeddings, embedding_dim), dtype),
                                    requires_grad=not _freeze)
            self.reset_parameters()
        else:
            if tuple(_weight.shape) != (num_embeddings, embedding_dim):
                raise AssertionError("Shape of weight does not match num_embeddings and "
                                     "embedding_dim")
            self.weight = Parameter(_weight, requires_grad=not _freeze)
        _place(self, device)

    def reset_parameters(self):
        init.normal_(self.weight)
        if self.padding_idx is not None:
            guard_writes(self.weight)
            data = self.weight._data  # device read: its padding row is zeroed in place
            if self.weight.is_cuda:
                dispatch.cuda_backend().fill(data[self.padding_idx], 0)
            else:
                data[self.padding_idx] = 0
            self.weight._version_counter.bump()

    def forward(self, input):  # noqa: A002 - PyTorch's argument name
        return functional.embedding(input, self.weight, self.padding_idx, self.max_norm,
                                    self.norm_type, self.scale_grad_by_freq, self.sparse)

    @classmethod
    def from_pretrained(cls, embeddings, freeze=True, padding_idx=None, max_norm=None,
                        norm_type=2.0, scale_grad_by_freq=False, sparse=False):
        """An Embedding whose weight is ``embeddings`` (2-d), frozen by default."""
        if embeddings.ndim != 2:
            raise AssertionError("Embeddings parameter is expected to be 2-dimensional")
        rows, cols = embeddings.shape
        return cls(rows, cols, padding_idx, max_norm, norm_type, scale_grad_by_freq, sparse,
                   _weight=embeddings if isinstance(embeddings, Tensor) else Tensor(embeddings),
                   _freeze=freeze)

    def extra_repr(self):
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            s += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq:
            s += ", scale_grad_by_freq=True"
        if self.sparse:
            s += ", sparse=True"
        return s
