"""The graph primitives, below ops and the engine (docs/design.md "Layers"): ``node`` (Node,
AccumulateGrad, SavedTensor, the edges), ``grad_mode`` (no_grad...), ``version`` (version
counters), ``anomaly`` (anomaly mode). They import only each other and the kernels layer, at any
level; ops and the engine import only these. The user API built on them (``backward``,
``grad``, ``Function``, ``gradcheck``, ``forward_ad``) is ``jitgrad.autograd``, above ops.
"""
