"""The core of ops (docs/design.md "Layers"): ``registry`` (the OpDef row and its derived
properties), ``dispatch`` and its parts (``operands``: coercion and promotion; ``devices``;
``allocation``; ``writes``: ``out=`` and in-place writes), ``recording`` (how a node is wired
into the graph), ``fastpath``, ``fusion`` (fused backward), ``bodies`` (the scalar backward
bodies rows share), ``smath`` (scalar math for derivative bodies) and ``upper`` (what the
layers above register). The op families beside this package import the core; the core never
imports a family.
"""
