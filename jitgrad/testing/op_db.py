"""The one op database: every family's ``ENTRIES``, collected in one place (nothing registers
itself on construction, so tests never have to take entries out of a global list)."""
from __future__ import annotations

from . import (db_elementwise, db_linalg_more, db_misc, db_nn, db_nn_more, db_numpy, db_numpy_more,
               db_reduce, db_shape, db_torch_more)

FAMILIES = (db_elementwise, db_reduce, db_shape, db_nn, db_numpy, db_numpy_more, db_misc,
            db_torch_more, db_nn_more, db_linalg_more)


def all_entries() -> list:
    """Every entry of every family, in a stable order (their names are unique)."""
    return [entry for family in FAMILIES for entry in family.ENTRIES]


def numpy_entries() -> list:
    """The entries in the NumPy call form (``jitgrad.numpy``; ``OpInfo.numpy_name``)."""
    return [entry for entry in all_entries() if entry.numpy_name is not None]


def tensor_entries() -> list:
    """The entries calling jitgrad's own functions (tensor ops and ``jitgrad.nn``)."""
    return [entry for entry in all_entries() if entry.numpy_name is None]
