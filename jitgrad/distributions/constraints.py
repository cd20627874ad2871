"""Constraints: the sets a distribution's parameters and samples live in (``torch.distributions
.constraints``).

A :class:`Constraint` answers ``check(value)``: a bool tensor of ``value``'s batch shape (its shape
less the trailing ``event_dim`` dimensions) saying, per batch element, whether the event is in the
set. ``is_discrete`` says whether the set is countable. ``constraint_registry.biject_to`` /
``transform_to`` map the reals onto each of them.

The objects and factories have torch's names: ``real``, ``positive``, ``interval(0, 1)``,
``independent(real, 1)``, ``simplex``, ``lower_cholesky``... Checks never record a graph: they are
comparisons (bool results, no gradient).
"""
from __future__ import annotations

import numpy as np

from .. import linalg as _linalg
from .. import numpy as _jnp
from ..ops.core import dispatch as _dispatch
from ..tensor import Tensor

__all__ = [
    "Constraint", "boolean", "cat", "corr_cholesky", "dependent", "dependent_property",
    "greater_than", "greater_than_eq", "independent", "integer_interval", "interval",
    "half_open_interval", "is_dependent", "less_than", "lower_cholesky", "lower_triangular",
    "MixtureSameFamilyConstraint", "multinomial", "nonnegative", "nonnegative_integer", "one_hot",
    "positive", "positive_semidefinite", "positive_definite", "positive_integer", "real",
    "real_vector", "simplex", "square", "stack", "symmetric", "unit_interval",
]


def _as_tensor(value, op):
    return value if isinstance(value, Tensor) else _dispatch.tensor_operand(value, op)


def _all_last(result, n):
    """``result`` with its last ``n`` dimensions reduced by logical AND."""
    if n == 0:
        return result
    if result.ndim < n:
        raise ValueError(f"constraint check: expected a value with at least {n} dimensions, "
                         f"got shape {tuple(result.shape)}")
    return result.reshape(tuple(result.shape[:result.ndim - n]) + (-1,)).all(-1)


class Constraint:
    """A region of the space a variable lives in.

    Attributes
    ----------
    is_discrete : bool
        Whether the set is discrete (counting measure) rather than continuous.
    event_dim : int
        How many trailing dimensions of a value form one event: ``check`` reduces them.
    """

    is_discrete = False
    event_dim = 0

    def check(self, value):
        """A bool tensor of ``value``'s batch shape: whether each event lies in the set."""
        raise NotImplementedError(f"{type(self).__name__}.check is not implemented")

    def __repr__(self):
        return self.__class__.__name__[1:] + "()"


class _Dependent(Constraint):
    """A placeholder for a support that depends on other variables (e.g. ``Uniform``'s
    ``low``/``high`` bounds). It cannot be checked; call it to set ``is_discrete`` /
    ``event_dim``: ``dependent(is_discrete=False, event_dim=0)``."""

    def __init__(self, *, is_discrete=NotImplemented, event_dim=NotImplemented):
        self._is_discrete = is_discrete
        self._event_dim = event_dim
        super().__init__()

    @property
    def is_discrete(self):
        if self._is_discrete is NotImplemented:
            raise NotImplementedError(".is_discrete cannot be determined statically")
        return self._is_discrete

    @property
    def event_dim(self):
        if self._event_dim is NotImplemented:
            raise NotImplementedError(".event_dim cannot be determined statically")
        return self._event_dim

    def __call__(self, *, is_discrete=NotImplemented, event_dim=NotImplemented):
        """A dependent constraint with these static attributes (unset ones kept)."""
        if is_discrete is NotImplemented:
            is_discrete = self._is_discrete
        if event_dim is NotImplemented:
            event_dim = self._event_dim
        return _Dependent(is_discrete=is_discrete, event_dim=event_dim)

    def check(self, x):
        raise ValueError("Cannot determine validity of dependent constraint")


def is_dependent(constraint):
    """Whether ``constraint`` is a (possibly called) ``dependent`` placeholder."""
    return isinstance(constraint, _Dependent)


class dependent_property(property, _Dependent):
    """A ``property`` that is also a ``dependent`` constraint, for a distribution whose support
    depends on its parameters::

        @constraints.dependent_property(is_discrete=False, event_dim=0)
        def support(self):
            return constraints.interval(self.low, self.high)

    On the class it reads as a dependent constraint; on an instance it is the property's value.
    """

    def __init__(self, fn=None, *, is_discrete=NotImplemented, event_dim=NotImplemented):
        property.__init__(self, fn)
        self._is_discrete = is_discrete
        self._event_dim = event_dim

    def __call__(self, fn):
        """Decorate ``fn`` (the property getter), keeping the static attributes."""
        return dependent_property(fn, is_discrete=self._is_discrete, event_dim=self._event_dim)


class _IndependentConstraint(Constraint):
    """``base_constraint`` with its ``reinterpreted_batch_ndims`` rightmost batch dimensions read
    as event dimensions: an event is valid when every one of its entries is."""

    def __init__(self, base_constraint, reinterpreted_batch_ndims):
        if not isinstance(base_constraint, Constraint):
            raise TypeError(f"independent: expected a Constraint, got {type(base_constraint)}")
        if not isinstance(reinterpreted_batch_ndims, int) or reinterpreted_batch_ndims < 0:
            raise ValueError("independent: reinterpreted_batch_ndims must be an int >= 0, got "
                             f"{reinterpreted_batch_ndims!r}")
        self.base_constraint = base_constraint
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims
        super().__init__()

    @property
    def is_discrete(self):
        return self.base_constraint.is_discrete

    @property
    def event_dim(self):
        return self.base_constraint.event_dim + self.reinterpreted_batch_ndims

    def check(self, value):
        result = self.base_constraint.check(value)
        if result.ndim < self.reinterpreted_batch_ndims:
            expected = self.base_constraint.event_dim + self.reinterpreted_batch_ndims
            got = _as_tensor(value, "independent.check").ndim
            raise ValueError(f"independent.check: Expected value.dim() >= {expected} but got "
                             f"{got}")
        return _all_last(result, self.reinterpreted_batch_ndims)

    def __repr__(self):
        name = self.__class__.__name__[1:]
        return f"{name}({self.base_constraint!r}, {self.reinterpreted_batch_ndims})"


class MixtureSameFamilyConstraint(Constraint):
    """The support of a ``MixtureSameFamily``: ``base_constraint`` checked against every
    component (the component dimension, just left of the event, is reduced by AND)."""

    def __init__(self, base_constraint):
        if not isinstance(base_constraint, Constraint):
            raise TypeError("MixtureSameFamilyConstraint: expected a Constraint, got "
                            f"{type(base_constraint)}")
        self.base_constraint = base_constraint
        super().__init__()

    @property
    def is_discrete(self):
        return self.base_constraint.is_discrete

    @property
    def event_dim(self):
        return self.base_constraint.event_dim

    def check(self, value):
        value = _as_tensor(value, "MixtureSameFamilyConstraint.check")
        result = self.base_constraint.check(value.unsqueeze(-1 - self.event_dim))
        keep = value.ndim - self.event_dim
        return result.reshape(tuple(result.shape[:keep]) + (-1,)).all(-1)

    def __repr__(self):
        return f"{self.__class__.__name__}({self.base_constraint!r})"


class _Boolean(Constraint):
    """``{0, 1}``."""

    is_discrete = True

    def check(self, value):
        return (value == 0) | (value == 1)


class _OneHot(Constraint):
    """One-hot vectors: entries in ``{0, 1}`` summing to 1 along the last dimension."""

    is_discrete = True
    event_dim = 1

    def check(self, value):
        value = _as_tensor(value, "one_hot.check")
        is_boolean = (value == 0) | (value == 1)
        return is_boolean.all(-1) & (value.sum(-1) == 1)


class _IntegerInterval(Constraint):
    """Integers in ``[lower_bound, upper_bound]``."""

    is_discrete = True

    def __init__(self, lower_bound, upper_bound):
        self.lower_bound = lower_bound
        self.upper_bound = upper_bound
        super().__init__()

    def check(self, value):
        value = _as_tensor(value, "integer_interval.check")
        return (value % 1 == 0) & (value >= self.lower_bound) & (value <= self.upper_bound)

    def __repr__(self):
        return (f"{self.__class__.__name__[1:]}(lower_bound={self.lower_bound}, "
                f"upper_bound={self.upper_bound})")


class _IntegerGreaterThan(Constraint):
    """Integers ``>= lower_bound``."""

    is_discrete = True

    def __init__(self, lower_bound):
        self.lower_bound = lower_bound
        super().__init__()

    def check(self, value):
        value = _as_tensor(value, "integer_greater_than.check")
        return (value % 1 == 0) & (value >= self.lower_bound)

    def __repr__(self):
        return f"{self.__class__.__name__[1:]}(lower_bound={self.lower_bound})"


class _Real(Constraint):
    """The extended real line minus NaN: ``value == value``."""

    def check(self, value):
        return value == value


class _GreaterThan(Constraint):
    """``(lower_bound, inf]``."""

    def __init__(self, lower_bound):
        self.lower_bound = lower_bound
        super().__init__()

    def check(self, value):
        return self.lower_bound < value

    def __repr__(self):
        return f"{self.__class__.__name__[1:]}(lower_bound={self.lower_bound})"


class _GreaterThanEq(_GreaterThan):
    """``[lower_bound, inf]``."""

    def check(self, value):
        return self.lower_bound <= value


class _LessThan(Constraint):
    """``[-inf, upper_bound)``."""

    def __init__(self, upper_bound):
        self.upper_bound = upper_bound
        super().__init__()

    def check(self, value):
        return value < self.upper_bound

    def __repr__(self):
        return f"{self.__class__.__name__[1:]}(upper_bound={self.upper_bound})"


class _Interval(Constraint):
    """``[lower_bound, upper_bound]``."""

    def __init__(self, lower_bound, upper_bound):
        self.lower_bound = lower_bound
        self.upper_bound = upper_bound
        super().__init__()

    def check(self, value):
        return (self.lower_bound <= value) & (value <= self.upper_bound)

    def __repr__(self):
        return (f"{self.__class__.__name__[1:]}(lower_bound={self.lower_bound}, "
                f"upper_bound={self.upper_bound})")


class _HalfOpenInterval(_Interval):
    """``[lower_bound, upper_bound)``."""

    def check(self, value):
        return (self.lower_bound <= value) & (value < self.upper_bound)


class _Simplex(Constraint):
    """The unit simplex along the last dimension: ``x >= 0`` and ``|sum(x) - 1| < 1e-6``."""

    event_dim = 1

    def check(self, value):
        value = _as_tensor(value, "simplex.check")
        return (value >= 0).all(-1) & ((value.sum(-1) - 1).abs() < 1e-6)


class _Multinomial(Constraint):
    """Nonnegative integer count vectors whose sum is at most ``upper_bound`` (the count
    vectors of ``Multinomial(total_count=upper_bound)``; integrality is not checked)."""

    is_discrete = True
    event_dim = 1

    def __init__(self, upper_bound):
        self.upper_bound = upper_bound
        super().__init__()

    def check(self, x):
        x = _as_tensor(x, "multinomial.check")
        return (x >= 0).all(-1) & (x.sum(-1) <= self.upper_bound)


class _LowerTriangular(Constraint):
    """Lower-triangular matrices (entries above the diagonal are 0)."""

    event_dim = 2

    def check(self, value):
        value = _as_tensor(value, "lower_triangular.check")
        return _all_last(value.tril() == value, 2)


class _LowerCholesky(Constraint):
    """Lower-triangular matrices with a positive diagonal (Cholesky factors)."""

    event_dim = 2

    def check(self, value):
        value = _as_tensor(value, "lower_cholesky.check")
        positive_diagonal = (value.diagonal(dim1=-2, dim2=-1) > 0).all(-1)
        return _all_last(value.tril() == value, 2) & positive_diagonal


class _CorrCholesky(Constraint):
    """Cholesky factors of correlation matrices: lower Cholesky with unit-norm rows (within
    ``10 * n * eps``)."""

    event_dim = 2

    def check(self, value):
        value = _as_tensor(value, "corr_cholesky.check")
        tol = np.finfo(np.dtype(value.dtype.name)).eps * value.shape[-1] * 10
        row_norm = _linalg.norm(value.detach(), dim=-1)
        unit_rows = ((row_norm - 1.0).abs() <= tol).all(-1)
        return lower_cholesky.check(value) & unit_rows


def _full_bool(shape, flag):
    return _jnp.full(tuple(shape), bool(flag))


class _Square(Constraint):
    """Square matrices (the last two dimensions are equal)."""

    event_dim = 2

    def check(self, value):
        value = _as_tensor(value, "square.check")
        return _full_bool(value.shape[:-2], value.shape[-2] == value.shape[-1])


class _Symmetric(_Square):
    """Symmetric matrices: square and ``isclose(value, value.mT, atol=1e-6)``."""

    def check(self, value):
        value = _as_tensor(value, "symmetric.check")
        square_check = super().check(value)
        if not bool(square_check.all()):
            return square_check
        return _all_last(_jnp.isclose(value, value.mT, atol=1e-6), 2)


class _PositiveSemidefinite(_Symmetric):
    """Symmetric matrices with nonnegative eigenvalues."""

    def check(self, value):
        sym_check = super().check(value)
        if not bool(sym_check.all()):
            return sym_check
        return (_linalg.eigvalsh(value.detach()) >= 0).all(-1)


class _PositiveDefinite(_Symmetric):
    """Symmetric matrices with positive eigenvalues."""

    def check(self, value):
        sym_check = super().check(value)
        if not bool(sym_check.all()):
            return sym_check
        return (_linalg.eigvalsh(value.detach()) > 0).all(-1)


def _checked_dim(op, value, dim):
    """``value`` as a tensor, after checking that ``dim`` is one of its dimensions."""
    value = _as_tensor(value, op)
    if not -value.ndim <= dim < value.ndim:
        raise IndexError(f"{op}: dim {dim} out of range for a value of shape {tuple(value.shape)}")
    return value


class _Cat(Constraint):
    """Constraints ``cseq`` applied to consecutive pieces of ``dim`` of sizes ``lengths``
    (default 1 each), like ``torch.cat``."""

    def __init__(self, cseq, dim=0, lengths=None):
        self.cseq = list(cseq)
        if not all(isinstance(c, Constraint) for c in self.cseq):
            raise TypeError("cat: every element of cseq must be a Constraint")
        self.lengths = [1] * len(self.cseq) if lengths is None else list(lengths)
        if len(self.lengths) != len(self.cseq):
            raise ValueError(f"cat: {len(self.cseq)} constraints but {len(self.lengths)} lengths")
        self.dim = dim
        super().__init__()

    @property
    def is_discrete(self):
        return any(c.is_discrete for c in self.cseq)

    @property
    def event_dim(self):
        return max(c.event_dim for c in self.cseq)

    def check(self, value):
        value = _checked_dim("cat.check", value, self.dim)
        checks, start = [], 0
        for constr, length in zip(self.cseq, self.lengths):
            checks.append(constr.check(value.narrow(self.dim, start, length)))
            start += length
        return _jnp.concatenate(checks, axis=self.dim)


class _Stack(Constraint):
    """Constraints ``cseq`` applied to the slices of ``dim``, like ``torch.stack``."""

    def __init__(self, cseq, dim=0):
        self.cseq = list(cseq)
        if not all(isinstance(c, Constraint) for c in self.cseq):
            raise TypeError("stack: every element of cseq must be a Constraint")
        self.dim = dim
        super().__init__()

    @property
    def is_discrete(self):
        return any(c.is_discrete for c in self.cseq)

    @property
    def event_dim(self):
        dim = max(c.event_dim for c in self.cseq)
        return dim + 1 if self.dim + dim < 0 else dim

    def check(self, value):
        value = _checked_dim("stack.check", value, self.dim)
        if value.shape[self.dim] != len(self.cseq):
            raise ValueError(f"stack.check: value has {value.shape[self.dim]} slices along dim "
                             f"{self.dim} but there are {len(self.cseq)} constraints")
        vs = [value.select(self.dim, i) for i in range(value.shape[self.dim])]
        return _jnp.stack([c.check(v) for v, c in zip(vs, self.cseq)], axis=self.dim)


# torch's public names
dependent = _Dependent()
independent = _IndependentConstraint
boolean = _Boolean()
one_hot = _OneHot()
nonnegative_integer = _IntegerGreaterThan(0)
positive_integer = _IntegerGreaterThan(1)
integer_interval = _IntegerInterval
real = _Real()
real_vector = independent(real, 1)
positive = _GreaterThan(0.0)
nonnegative = _GreaterThanEq(0.0)
greater_than = _GreaterThan
greater_than_eq = _GreaterThanEq
less_than = _LessThan
multinomial = _Multinomial
unit_interval = _Interval(0.0, 1.0)
interval = _Interval
half_open_interval = _HalfOpenInterval
simplex = _Simplex()
lower_triangular = _LowerTriangular()
lower_cholesky = _LowerCholesky()
corr_cholesky = _CorrCholesky()
square = _Square()
symmetric = _Symmetric()
positive_semidefinite = _PositiveSemidefinite()
positive_definite = _PositiveDefinite()
cat = _Cat
stack = _Stack
