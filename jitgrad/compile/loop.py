"""``fori_loop``: a loop that compiled functions capture."""
from __future__ import annotations


def fori_loop(n, body, carry):
    """``carry = body(carry)`` ``n`` times and return ``carry`` (``body(i, carry)`` when it
    takes two arguments is not supported: it takes the carry only).

    Eager, this is a Python loop."""
    for _ in range(int(n)):
        carry = body(carry)
    return carry
