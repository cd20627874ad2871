"""jitgrad's coverage of torch's public surface, per namespace (issue 35).

``python tests/surface/surface_table.py [namespace] [--missing]`` prints the table, and with
``--missing`` what is missing or has another signature. The test reads ``measure()``.
"""
import importlib
import inspect
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from exclusions import excluded  # noqa: E402

SURFACE = json.loads(Path(__file__).with_name("torch_surface.json").read_text())
# the jitgrad object standing for each torch namespace
OWNERS = {"torch": "jitgrad", "torch.Tensor": "jitgrad:Tensor"}


def owner_of(namespace):
    path = OWNERS.get(namespace, "jitgrad" + namespace[len("torch"):])
    module, _, attr = path.partition(":")
    try:
        obj = importlib.import_module(module)
    except ImportError:
        return None
    return getattr(obj, attr) if attr else obj


# parameters torch keeps only for backward compatibility or for layouts jitgrad leaves out
# (exclusions.py), and underscore-private ones: not counted against a signature
IGNORED_PARAMS = {"size_average", "reduce", "grad_variables", "only_inputs", "layout",
                  "memory_format", "pin_memory", "non_blocking", "sparse_grad", "foreach",
                  "differentiable", "fused", "capturable",
                  "int", "float", "bool"}  # (a docstring naming a type where a name would be)


def signature_gap(torch_params, ours):
    """torch's parameter names ``ours`` does not accept ([] when it accepts them all, or when
    either side gives no signature)."""
    if torch_params is None:
        return []
    target = ours.__init__ if inspect.isclass(ours) else ours
    try:
        params = inspect.signature(target).parameters.values()
    except (TypeError, ValueError):
        return []
    kinds = {p.kind for p in params}
    names = {p.name for p in params if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)}
    gap = []
    for name in torch_params:
        if (name in ("*", "/", "*args") or name.startswith("**") or name.lstrip("*").startswith("_")
                or name in IGNORED_PARAMS or not name.lstrip("*").isidentifier()):
            continue
        if name.startswith("*"):
            if inspect.Parameter.VAR_POSITIONAL not in kinds and name[1:] not in names:
                gap.append(name)
        elif name not in names and inspect.Parameter.VAR_KEYWORD not in kinds:
            gap.append(name)
    return gap


def measure(namespace):
    """(in-scope names, missing names, {name: signature gap})."""
    owner = owner_of(namespace)
    in_scope, missing, gaps = [], [], {}
    for name, entry in SURFACE["namespaces"][namespace].items():
        if excluded(namespace, name, entry):
            continue
        in_scope.append(name)
        ours = None if owner is None else inspect.getattr_static(owner, name, None) \
            if namespace == "torch.Tensor" else getattr(owner, name, None)
        if ours is None:
            missing.append(name)
            continue
        if isinstance(ours, (staticmethod, classmethod)):
            ours = ours.__func__
        if entry["kind"] in ("function", "class") and callable(ours):
            gap = signature_gap(entry["params"], ours)
            function = SURFACE["namespaces"]["torch"].get(name)
            if gap and namespace == "torch.Tensor" and function and function["params"]:
                # a method documented with other names than its function's (``mul(value)``,
                # ``fmod(divisor)``): torch accepts the function's, less ``input``
                gap = gap and signature_gap(
                    [p for p in function["params"] if p not in ("input", "out")], ours)
            if gap:
                gaps[name] = gap
    return in_scope, missing, gaps


if __name__ == "__main__":
    wanted = [a for a in sys.argv[1:] if not a.startswith("--")] or list(SURFACE["namespaces"])
    for namespace in wanted:
        in_scope, missing, gaps = measure(namespace)
        ok = len(in_scope) - len(missing) - len(gaps)
        print(f"{namespace:28s} in scope {len(in_scope):4d}  present {len(in_scope)-len(missing):4d}"
              f"  with torch's signature {ok:4d}  ({100*ok/max(1, len(in_scope)):.0f}%)")
        if "--missing" in sys.argv:
            print("  missing:", " ".join(sorted(missing)))
            print("  signature:", "; ".join(f"{n}({', '.join(g)})" for n, g in sorted(gaps.items())))
