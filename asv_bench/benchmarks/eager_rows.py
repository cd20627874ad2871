"""The rows of issue 21's eager per-op table, for ``asv_bench/eager_ops.py`` (jitgrad vs
PyTorch, interleaved) and ``bench_eager.py`` (asv, jitgrad alone): each row defined once here.

``op_rows(lib)`` maps a row key to ``(label, spec)`` for ``lib`` (``jitgrad`` or ``torch``):
``spec()`` returns the zero-argument call to time, or ``spec`` is ``("prebuilt", make)`` where
``make()`` returns ``(build, call, per)``: ``call(build())`` is timed (one fresh graph per call),
and the time is divided by ``per`` (nodes per graph).
"""
import numpy as np

CHAIN = 1000


def op_rows(lib):
    """name -> (label, make) where make() returns the timed zero-argument callable."""
    rng = np.random.default_rng(0)
    a100 = rng.standard_normal(100)
    b100 = rng.standard_normal(100)
    a1000 = rng.standard_normal(1000)

    def leaf(a):
        return lib.tensor(a, requires_grad=True)

    def forward(fn, *arrays, grad=True):
        def make():
            ts = [leaf(a) for a in arrays]
            if grad:
                return lambda: fn(*ts)
            no_grad = lib.no_grad

            def call():
                with no_grad():
                    return fn(*ts)
            return call
        return make

    ops = {
        "mul": ("x * 1.5", lambda x: x * 1.5, (a100,)),
        "add": ("x + y", lambda x, y: x + y, (a100, b100)),
        "tanh": ("tanh(x)", lambda x: lib.tanh(x), (a100,)),
        "sum": ("x.sum()", lambda x: x.sum(), (a100,)),
        "slice": ("x[1:]", lambda x: x[1:], (a100,)),
        "roll": ("roll(x, 1)", lambda x: lib.roll(x, 1), (a100,)),
    }
    rows = {}
    for key, (label, fn, arrays) in ops.items():
        rows[key] = (f"{label} (100,)", forward(fn, *arrays))
    for key, (label, fn, arrays) in ops.items():
        rows["nograd_" + key] = (f"{label} no_grad", forward(fn, *arrays, grad=False))

    def make_chain():
        x = leaf(a100)

        def build():
            y = x
            for _ in range(CHAIN):
                y = y * 1.0001
            return y.sum()

        def call(loss):
            loss.backward()
            x.grad = None
        return build, call, CHAIN

    def make_backward():
        x = leaf(a1000)

        def call(loss):
            loss.backward()
            x.grad = None
        return (lambda: (x * 2.0).sum()), call, 1

    def make_fwd_bwd():
        x = leaf(a1000)

        def call():
            (x * 2.0).sum().backward()
            x.grad = None
        return call

    rows["chain_node"] = (f"backward per node, {CHAIN}-node chain", ("prebuilt", make_chain))
    rows["backward"] = ("backward() of (x*2.0).sum() (1000,)", ("prebuilt", make_backward))
    rows["fwd_bwd"] = ("(x*2.0).sum().backward() (1000,)", make_fwd_bwd)
    return rows
