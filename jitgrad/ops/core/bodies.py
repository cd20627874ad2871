"""Scalar backward bodies the rows of several families share (``passthrough``, ``negate``), in a
module of their own so that ``registry`` and ``fusion`` (which recognises ``passthrough``) both
import them without importing each other both ways."""
from __future__ import annotations


def passthrough(g):
    """d/dx of x with respect to itself: the gradient flows unchanged."""
    return g


def negate(g):
    """The gradient of ``-x``: ``-g``."""
    return -g
