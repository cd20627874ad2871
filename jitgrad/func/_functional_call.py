"""``functional_call``: call a module with some of its parameters and buffers replaced."""
from __future__ import annotations

_MISSING = object()


def _named_tensors(module) -> dict:
    """``name -> tensor`` for the module's parameters and buffers (duplicates kept), when the
    module offers PyTorch's ``named_parameters`` / ``named_buffers``."""
    out = {}
    for method in ("named_parameters", "named_buffers"):
        fn = getattr(module, method, None)
        if fn is None:
            continue
        try:
            items = fn(remove_duplicate=False)
        except TypeError:
            items = fn()
        out.update(dict(items))
    return out


def _owner(module, name: str):
    *path, attr = name.split(".")
    owner = module
    for part in path:
        if not hasattr(owner, part):
            raise AttributeError(f"functional_call: {type(module).__name__} has no submodule "
                                 f"'{'.'.join(path)}' (for '{name}')")
        owner = getattr(owner, part)
    return owner, attr


def _swap(owner, attr, value):
    """Set ``owner.attr = value`` bypassing a module's parameter checks; returns the old
    value (or ``_MISSING``)."""
    for table in ("_parameters", "_buffers"):
        d = owner.__dict__.get(table)
        if isinstance(d, dict) and attr in d:
            old = d[attr]
            d[attr] = value
            return old
    old = owner.__dict__.get(attr, _MISSING)
    object.__setattr__(owner, attr, value)
    return old


def _restore(owner, attr, old):
    for table in ("_parameters", "_buffers"):
        d = owner.__dict__.get(table)
        if isinstance(d, dict) and attr in d:
            d[attr] = old
            return
    if old is _MISSING:
        object.__delattr__(owner, attr)
    else:
        object.__setattr__(owner, attr, old)


def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *,
                    tie_weights=True, strict=False):
    """Call ``module(*args, **kwargs)`` with the parameters and buffers named in
    ``parameter_and_buffer_dicts`` (a dict, or a sequence of dicts with distinct keys, of
    dotted names like ``"layer.weight"``) replaced for this call only; the module is restored
    afterwards, also when the call raises (PyTorch's ``torch.func.functional_call``).

    This makes a module a function of its parameters, so the transforms apply:
    ``grad(lambda p: loss(functional_call(model, p, (x,))))(params)``.

    ``tie_weights``: a tensor registered under several names (tied weights) is replaced under
    all of them when one is given. ``strict``: the dicts must name every parameter and buffer
    and nothing else.
    """
    if isinstance(parameter_and_buffer_dicts, dict):
        values = dict(parameter_and_buffer_dicts)
    else:
        values = {}
        for d in parameter_and_buffer_dicts:
            dup = set(values) & set(d)
            if dup:
                raise ValueError(f"functional_call: {sorted(dup)} appeared in multiple "
                                 "dictionaries; behavior of functional call is ambiguous")
            values.update(d)
    named = _named_tensors(module)
    if strict:
        missing = sorted(set(named) - set(values))
        unexpected = sorted(set(values) - set(named))
        if missing or unexpected:
            raise RuntimeError(f"functional_call got missing keys {missing} and unexpected "
                               f"keys {unexpected} (strict=True)")
    if tie_weights and named:
        by_id: dict = {}
        for name, t in named.items():
            by_id.setdefault(id(t), []).append(name)
        for names in by_id.values():
            given = [n for n in names if n in values]
            if given:
                if len({id(values[n]) for n in given}) > 1:
                    raise ValueError(f"functional_call: tied tensors {names} were given "
                                     "different values")
                for n in names:
                    values.setdefault(n, values[given[0]])
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    swapped = []
    try:
        for name, value in values.items():
            owner, attr = _owner(module, name)
            swapped.append((owner, attr, _swap(owner, attr, value)))
        return module(*args, **(kwargs or {}))
    finally:
        for owner, attr, old in reversed(swapped):
            _restore(owner, attr, old)
