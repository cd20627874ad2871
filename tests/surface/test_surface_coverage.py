"""Coverage of torch 2.13's public surface per namespace (issue 35), from the pinned dump
``torch_surface.json`` (``dump_torch_surface.py`` writes it; torch is never imported here) less
the families ``exclusions.py`` leaves out with a reason.

A name counts when jitgrad has it and accepts torch's parameter names; every namespace must
keep at least ``GOAL`` of its in-scope names (issue 35)."""
import re

import pytest

from surface_table import SURFACE, measure, signature_gap
from exclusions import FAMILIES, excluded

GOAL = 0.90


@pytest.mark.parametrize("namespace", sorted(SURFACE["namespaces"]))
def test_namespace_coverage(namespace):
    in_scope, missing, gaps = measure(namespace)
    covered = (len(in_scope) - len(missing) - len(gaps)) / len(in_scope)
    assert covered >= GOAL, (
        f"{namespace}: {covered:.0%} of {len(in_scope)} in-scope names with torch's signature, "
        f"below {GOAL:.0%}; missing {sorted(missing)[:40]}, other signature "
        f"{sorted(gaps)[:40]}")


def test_exclusions_name_a_reason_and_match_something():
    for reason, namespaces, pattern in FAMILIES:
        assert len(reason) > 20
        hits = [name for ns, entries in SURFACE["namespaces"].items() for name, entry in entries.items()
                if (namespaces == "*" or ns in namespaces.split()) and excluded(ns, name, entry) == reason]
        assert hits, f"the family {reason!r} excludes nothing: drop it"
        if pattern is not None:
            re.compile(pattern)


def test_the_check_can_fail():
    """The signature check sees a missing parameter, and a missing name counts as missing."""
    def ours(x, *, out=None):
        return x
    assert signature_gap(["input", "*", "out"], ours) == ["input"]
    assert signature_gap(["input", "*", "out"], lambda input, **kw: input) == []
    assert signature_gap(["*tensors"], lambda a, b: a) == ["*tensors"]
    in_scope, missing, _ = measure("torch")
    assert "abs" in in_scope and "abs" not in missing and "quantize_per_tensor" not in in_scope
