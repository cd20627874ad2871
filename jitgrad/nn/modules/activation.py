"""Activation modules (thin wrappers over ``nn.functional``, PyTorch's names, constructor
arguments and reprs)."""
from __future__ import annotations

import warnings

from .. import functional
from .. import init as _init
from ..parameter import Parameter
from .linear import check_device, empty_parameter, place
from .module import Module


class ReLU(Module):
    """``max(x, 0)``."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):  # noqa: A002 - PyTorch's argument name
        return functional.relu(input, inplace=self.inplace)

    def extra_repr(self):
        return _inplace_repr(self)


class Tanh(Module):
    """``tanh(x)``."""

    def forward(self, input):  # noqa: A002
        return functional.tanh(input)


class Sigmoid(Module):
    """``1 / (1 + exp(-x))``."""

    def forward(self, input):  # noqa: A002
        return functional.sigmoid(input)


class GELU(Module):
    """``x Phi(x)``; ``approximate='tanh'`` uses the tanh approximation."""

    def __init__(self, approximate="none"):
        super().__init__()
        self.approximate = approximate

    def forward(self, input):  # noqa: A002
        return functional.gelu(input, approximate=self.approximate)

    def extra_repr(self):
        return f"approximate={self.approximate!r}"


class SiLU(Module):
    """``x sigmoid(x)`` (swish)."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):  # noqa: A002
        return functional.silu(input, inplace=self.inplace)

    def extra_repr(self):
        return _inplace_repr(self)


class Softplus(Module):
    """``log(1 + exp(beta x)) / beta``, linear where ``beta x > threshold``."""

    def __init__(self, beta=1.0, threshold=20.0):
        super().__init__()
        self.beta, self.threshold = beta, threshold

    def forward(self, input):  # noqa: A002
        return functional.softplus(input, self.beta, self.threshold)

    def extra_repr(self):
        return f"beta={self.beta}, threshold={self.threshold}"


class LeakyReLU(Module):
    """``x`` for ``x > 0`` else ``negative_slope x``."""

    def __init__(self, negative_slope=0.01, inplace=False):
        super().__init__()
        self.negative_slope, self.inplace = negative_slope, inplace

    def forward(self, input):  # noqa: A002
        return functional.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self):
        return f"negative_slope={self.negative_slope}" + (", inplace=True" if self.inplace else "")


class Softmax(Module):
    """``softmax`` along ``dim``."""

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):  # noqa: A002
        return functional.softmax(input, self.dim)

    def extra_repr(self):
        return f"dim={self.dim}"


class LogSoftmax(Module):
    """``log_softmax`` along ``dim``."""

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):  # noqa: A002
        return functional.log_softmax(input, self.dim)

    def extra_repr(self):
        return f"dim={self.dim}"


def _inplace_repr(module, text=""):
    """``text`` followed by ``inplace=True`` when the module works in place (PyTorch's
    repr)."""
    if module.inplace:
        return f"{text}, inplace=True" if text else "inplace=True"
    return text


class ReLU6(Module):
    """``min(max(x, 0), 6)`` (``Hardtanh(0, 6)``)."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):  # noqa: A002
        return functional.relu6(input, inplace=self.inplace)

    def extra_repr(self):
        return _inplace_repr(self)


class Hardtanh(Module):
    """``clamp(x, min_val, max_val)``; gradient 1 strictly inside the interval, else 0.
    ``min_value``/``max_value`` are PyTorch's deprecated spellings."""

    def __init__(self, min_val=-1.0, max_val=1.0, inplace=False, min_value=None,
                 max_value=None):
        super().__init__()
        if min_value is not None:
            warnings.warn("keyword argument `min_value` is deprecated and rename to `min_val`",
                          FutureWarning, stacklevel=2)
            min_val = min_value
        if max_value is not None:
            warnings.warn("keyword argument `max_value` is deprecated and rename to `max_val`",
                          FutureWarning, stacklevel=2)
            max_val = max_value
        if max_val <= min_val:
            raise ValueError(f"Hardtanh: max_val ({max_val}) must be greater than min_val "
                             f"({min_val})")
        self.min_val, self.max_val, self.inplace = min_val, max_val, inplace

    def forward(self, input):  # noqa: A002
        return functional.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self):
        return _inplace_repr(self, f"min_val={self.min_val}, max_val={self.max_val}")


class _AlphaUnit(Module):
    """ELU and CELU: an ``alpha`` and an ``inplace`` flag."""

    def __init__(self, alpha=1.0, inplace=False):
        super().__init__()
        self.alpha, self.inplace = alpha, inplace

    def extra_repr(self):
        return _inplace_repr(self, f"alpha={self.alpha}")


class ELU(_AlphaUnit):
    """``x`` for ``x > 0`` else ``alpha (exp(x) - 1)``."""

    def forward(self, input):  # noqa: A002
        return functional.elu(input, self.alpha, self.inplace)


class CELU(_AlphaUnit):
    """``max(0, x) + min(0, alpha (exp(x / alpha) - 1))``."""

    def forward(self, input):  # noqa: A002
        return functional.celu(input, self.alpha, self.inplace)


class _InplaceUnit(Module):
    """An activation whose only option is ``inplace``; ``_fn`` names its functional form."""

    _fn = ""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):  # noqa: A002
        return getattr(functional, self._fn)(input, inplace=self.inplace)

    def extra_repr(self):
        return _inplace_repr(self)


class SELU(_InplaceUnit):
    """``scale (max(0, x) + min(0, alpha (exp(x) - 1)))`` with alpha = 1.6732632423543772,
    scale = 1.0507009873554805 (Klambauer et al., 2017)."""

    _fn = "selu"


class Hardsigmoid(_InplaceUnit):
    """``0`` for ``x <= -3``, ``1`` for ``x >= 3``, else ``x / 6 + 1 / 2``."""

    _fn = "hardsigmoid"

    def extra_repr(self):  # PyTorch prints no inplace flag for Hardsigmoid / Hardswish
        return ""


class Hardswish(Hardsigmoid):
    """``x hardsigmoid(x)``: ``0`` for ``x <= -3``, ``x`` for ``x >= 3``, else
    ``x (x + 3) / 6``."""

    _fn = "hardswish"


class Mish(_InplaceUnit):
    """``x tanh(softplus(x))``."""

    _fn = "mish"


class _Unary(Module):
    """A parameterless activation: ``forward`` is ``functional.<_fn>(input)``."""

    _fn = ""

    def forward(self, input):  # noqa: A002
        return getattr(functional, self._fn)(input)


class LogSigmoid(_Unary):
    """``log(1 / (1 + exp(-x))) = -softplus(-x)``."""

    _fn = "logsigmoid"


class Softsign(_Unary):
    """``x / (1 + |x|)``."""

    _fn = "softsign"


class Tanhshrink(_Unary):
    """``x - tanh(x)``."""

    _fn = "tanhshrink"


class _Shrink(Module):
    """Hardshrink and Softshrink: a threshold ``lambd``."""

    _fn = ""

    def __init__(self, lambd=0.5):
        super().__init__()
        self.lambd = lambd

    def forward(self, input):  # noqa: A002
        return getattr(functional, self._fn)(input, self.lambd)

    def extra_repr(self):
        return f"{self.lambd}"


class Hardshrink(_Shrink):
    """``x`` where ``|x| > lambd``, else 0."""

    _fn = "hardshrink"


class Softshrink(_Shrink):
    """``x - lambd`` for ``x > lambd``, ``x + lambd`` for ``x < -lambd``, else 0."""

    _fn = "softshrink"


class Threshold(Module):
    """``x`` where ``x > threshold``, else ``value``."""

    def __init__(self, threshold, value, inplace=False):
        super().__init__()
        self.threshold, self.value, self.inplace = threshold, value, inplace

    def forward(self, input):  # noqa: A002
        return functional.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self):
        return _inplace_repr(self, f"threshold={self.threshold}, value={self.value}")


class GLU(Module):
    """Gated linear unit: ``a * sigmoid(b)`` where ``input`` is split in halves ``a, b``
    along ``dim``."""

    def __init__(self, dim=-1):
        super().__init__()
        self.dim = dim

    def forward(self, input):  # noqa: A002
        return functional.glu(input, self.dim)

    def extra_repr(self):
        return f"dim={self.dim}"


class Softmin(Module):
    """``softmax(-x)`` along ``dim``."""

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):  # noqa: A002
        return functional.softmin(input, self.dim)

    def extra_repr(self):
        return f"dim={self.dim}"


class Softmax2d(Module):
    """``softmax`` over the channels of ``(N, C, H, W)`` or ``(C, H, W)`` input (dim -3)."""

    def forward(self, input):  # noqa: A002
        if input.ndim not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.ndim}D "
                             f"input of shape {tuple(input.shape)}")
        return functional.softmax(input, -3)


class PReLU(Module):
    """``max(0, x) + a min(0, x)`` with a learned slope ``a``: one shared (``num_parameters
    =1``) or one per channel (dim 1), initialised to ``init``."""

    def __init__(self, num_parameters=1, init=0.25, device=None, dtype=None):
        super().__init__()
        device = check_device(device)
        self.num_parameters, self.init = num_parameters, init
        self.weight = Parameter(empty_parameter((num_parameters,), dtype))
        self.reset_parameters()
        place(self, device)

    def reset_parameters(self):
        """Fill the slopes with ``init``."""
        _init.constant_(self.weight, self.init)

    def forward(self, input):  # noqa: A002
        return functional.prelu(input, self.weight)

    def extra_repr(self):
        return f"num_parameters={self.num_parameters}"


class RReLU(Module):
    """Randomized leaky ReLU: in training the negative slope of each element is drawn from
    ``U(lower, upper)``; in eval it is ``(lower + upper) / 2``."""

    def __init__(self, lower=1.0 / 8, upper=1.0 / 3, inplace=False):
        super().__init__()
        self.lower, self.upper, self.inplace = lower, upper, inplace

    def forward(self, input):  # noqa: A002
        return functional.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self):
        return _inplace_repr(self, f"lower={self.lower}, upper={self.upper}")
