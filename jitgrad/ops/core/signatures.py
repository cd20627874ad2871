"""PyTorch's signatures on the exported functions: its parameter names and ``out=``.

Note [torch signatures]: a top-level ``jitgrad`` function takes PyTorch's parameter names
(``input``, ``other``...) and, where PyTorch has it, ``out=``. Both come from ONE mechanism,
``torch_function(fn)``, applied where the namespace is built (``jitgrad/__init__.py``), not
written per function:

- the names: a public function already written with PyTorch's names is taken as it is; one
  written with the short names of a family (``x``, ``y``, ``a``, ``b``, ``t``) gets PyTorch's
  (``input``, ``other``; ``TORCH_NAMES`` for the functions whose second operand PyTorch names
  otherwise, ``mm(input, mat2)``);
- ``out=`` where PyTorch has it (every row but the views and ``NO_OUT_ROWS``; the functions
  no row backs in ``OUT_FUNCTIONS``): the result is computed as usual and then written into
  ``out`` (``into``): PyTorch's
  error when autograd would be needed, its cast rule, the resize of a mismatched ``out`` (with
  its warning when ``out`` had elements), ``out`` returned (a tuple of tensors for the ops that
  return several, in their named tuple).

The function made is generated with the exact signature (no ``*args`` forwarding): one extra
Python call per top-level call (~30 ns) and nothing for the Tensor methods or operators, which
are the row functions themselves. A function that needs neither is returned unchanged.
"""
from __future__ import annotations

import inspect

from ...graph.grad_mode import is_grad_enabled
from . import upper, writes

Tensor = None
upper.bind(globals(), "Tensor")

#: a family's short operand names -> PyTorch's, by position (first, second operand)
_FIRST = {"x": "input", "a": "input", "t": "input", "self": "input"}
_SECOND = {"y": "other", "b": "other"}
#: functions whose operands PyTorch names otherwise than ``input, other``
TORCH_NAMES = {"mm": ("input", "mat2"), "dot": ("input", "tensor"), "bmm": ("input", "mat2"),
               "tensordot": ("a", "b"), "vander": ("x",)}

#: the rows PyTorch has no ``out=`` for, besides the views (which never have one)
NO_OUT_ROWS = frozenset({"relu", "clone", "softmax", "log_softmax", "flip", "roll", "scatter",
                         "scatter_add", "scatter_reduce", "take"})
#: the functions no single row backs that PyTorch has ``out=`` for (the others have none)
OUT_FUNCTIONS = frozenset({
    "addbmm", "addmv", "addr", "all", "chain_matmul", "floor_divide", "histogramdd",
    "index_reduce", "isneginf", "isposinf", "logical_xor", "msort", "aminmax", "angle", "any", "arange", "baddbmm",
    "bernoulli", "bitwise_and", "bitwise_left_shift", "bitwise_not", "bitwise_or",
    "bitwise_right_shift", "bitwise_xor", "bmm", "bucketize", "column_stack", "complex",
    "conj_physical", "cross", "diag", "diff", "digamma", "dot", "dstack", "empty", "erfc",
    "erfinv", "eye", "float_power", "full", "gcd", "ger", "heaviside", "histc", "histogram",
    "hstack", "i0", "igamma", "igammac", "index_add", "index_copy", "index_select", "inner", "kron",
    "lcm", "lerp", "lgamma", "linspace", "logical_and", "logical_not", "logical_or", "logspace",
    "masked_select", "matmul", "median", "mm", "multinomial", "mv", "mvlgamma", "nan_to_num",
    "nanmean", "narrow_copy", "nextafter", "nonzero", "norm", "normal", "ones", "outer", "polar",
    "polygamma", "quantile", "rand", "randint", "randn", "randperm", "range", "renorm", "round",
    "row_stack", "searchsorted", "sgn", "signbit", "sort", "square", "std_mean", "take_along_dim",
    "tensordot", "topk", "tril", "triu", "var_mean", "vdot", "vstack", "zeros"})

OUT_GRAD_MSG = ("{}(): functions with out=... arguments don't support automatic "
                "differentiation, but one of the arguments requires grad.")


def _renames(fn, params) -> dict:
    positional = [p.name for p in params
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    wanted = TORCH_NAMES.get(fn.__name__)
    if wanted is not None:
        return {old: new for old, new in zip(positional, wanted) if old != new}
    out = {}
    if positional and positional[0] in _FIRST:
        out[positional[0]] = _FIRST[positional[0]]
    if len(positional) > 1 and positional[1] in _SECOND:
        out[positional[1]] = _SECOND[positional[1]]
    return out


def exported(fn, op=None):
    """The top-level function of ``fn``: the public function of the row ``op`` (``out=``
    unless the row is a view or in ``NO_OUT_ROWS``), or a function no single row backs
    (``out=`` when in ``OUT_FUNCTIONS``); ``torch_function`` makes it."""
    if not inspect.isfunction(fn):  # (a class, a builtin: as it is)
        return fn
    if op is not None:
        out = not (op.view or op.alias is not None) and fn.__name__ not in NO_OUT_ROWS
    else:
        out = fn.__name__ in OUT_FUNCTIONS
    return torch_function(fn, out=out)


def torch_function(fn, out: bool = True):
    """``fn`` with PyTorch's parameter names and (``out=True``, when ``fn`` does not take one
    itself) a keyword-only ``out=`` (Note [torch signatures]); ``fn`` itself when neither
    changes anything."""
    params = list(inspect.signature(fn).parameters.values())
    renames = _renames(fn, params)
    out = out and "out" not in {p.name for p in params}
    if not renames and not out:
        return fn
    header, call, defaults = [], [], {}
    star = False
    names = [renames.get(p.name, p.name) for p in params]
    for p, name in zip(params, names):
        if p.default is not p.empty:
            defaults[name] = p.default
        text = name if p.default is p.empty else f"{name}=_defaults[{name!r}]"
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            header.append(text)
            call.append(name)
        elif p.kind is p.VAR_POSITIONAL:
            header.append("*" + name)
            call.append("*" + name)
            star = True
        elif p.kind is p.KEYWORD_ONLY:
            if not star:
                header.append("*")
                star = True
            header.append(text)
            call.append(f"{p.name}={name}")
        else:  # **kwargs: after out
            continue
    if out:
        if not star:
            header.append("*")
        header.append("out=None")
    var_kw = [p for p in params if p.kind is p.VAR_KEYWORD]
    if var_kw:
        header.append("**" + var_kw[0].name)
        call.append("**" + var_kw[0].name)
    args = ", ".join(call)
    operands = "".join(name + ", " for name in names)
    lines = [f"def {fn.__name__}({', '.join(header)}):"]
    if out:
        lines += ["    if out is not None:",
                  f"        return _into({fn.__name__!r}, out, ({operands}), "
                  f"lambda: _fn({args}))"]
    lines.append(f"    return _fn({args})")
    namespace = {"_fn": fn, "_into": into, "_defaults": defaults}
    exec("\n".join(lines), namespace)  # noqa: S102 - a generated signature (see the docstring)
    made = namespace[fn.__name__]
    made.__doc__ = fn.__doc__
    made.__module__ = fn.__module__
    made.__qualname__ = fn.__qualname__
    made.public_function = fn  # (not ``__wrapped__``: inspect.signature would show fn's)
    return made


def _tensors(values):
    for v in values:
        if isinstance(v, Tensor):
            yield v
        elif isinstance(v, (tuple, list)):
            yield from _tensors(v)
        elif isinstance(v, dict):
            yield from _tensors(v.values())


def into(name: str, out, operands: tuple, compute):
    """``compute()`` written into ``out`` (a Tensor, or a tuple of them for the ops with
    several results), PyTorch's ``out=``: refused when grad mode is on and ``out`` or an
    operand requires grad; each result cast to its ``out``'s dtype when the same-kind rule
    allows, ``out`` resized when its shape differs (with PyTorch's deprecation warning when it
    had elements); returns ``out`` (several: in the result's named tuple)."""
    outs = tuple(out) if isinstance(out, (tuple, list)) else (out,)
    if not all(isinstance(o, Tensor) for o in outs):
        raise TypeError(f"{name}(): argument 'out' must be Tensor (or a tuple of Tensors for "
                        f"several results), not {type(out).__name__}")
    if is_grad_enabled() and any(t._requires_grad for t in (*outs, *_tensors(operands))):
        raise RuntimeError(OUT_GRAD_MSG.format(name))
    result = compute()
    results = tuple(result) if isinstance(result, (tuple, list)) else (result,)
    if len(results) != len(outs):
        raise TypeError(f"{name}(): out= takes {len(results)} tensor(s) for its "
                        f"{len(results)} result(s), got {len(outs)}")
    for o, r in zip(outs, results):
        writes.write_out(name, o, r._data)
    if isinstance(out, Tensor):
        return out
    return type(result)(*outs) if hasattr(result, "_fields") else tuple(outs)
