"""Command line: ``python -m jitgrad demo`` and ``python -m jitgrad info``.

``demo`` walks through the seed example y = (3x + 4)^2 at x = 2: the graph of backward
nodes, the chain rule, double backward, gradient accumulation and the freed-graph error.
``info`` prints versions and the runtime configuration (threading layer, threads, cache).
"""
from __future__ import annotations

import argparse
import re
import sys


def _chain(node) -> list[str]:
    """Names along ``next_functions[0]`` from ``node`` until a node has no next function."""
    names = []
    while node is not None:
        names.append(node.name().rsplit("::", 1)[-1])
        nxt = node.next_functions
        node = nxt[0][0] if nxt else None
    return names


def demo() -> int:
    import jitgrad

    print("y = (3x + 4)^2 at x = 2")
    x = jitgrad.tensor(2.0, requires_grad=True)
    a = x * 3
    b = a + 4
    y = b ** 2
    print(f"y = {y!r}")
    print("graph (y.grad_fn, then next_functions[0][0] repeatedly):")
    print("  " + " -> ".join(_chain(y.grad_fn)))
    print(f"y.grad_fn.next_functions = {y.grad_fn.next_functions}")
    leaf = y.grad_fn
    while leaf.next_functions:
        leaf = leaf.next_functions[0][0]
    print(f"AccumulateGrad.variable is x: {leaf.variable is x}")

    y.backward()
    print(f"y.backward(); x.grad = {x.grad.item():g}")
    dy_db = 2 * b.item()   # PowBackward0: d(b^2)/db = 2b
    db_da = 1.0            # AddBackward0: d(a + 4)/da = 1
    da_dx = 3.0            # MulBackward0: d(3x)/dx = 3
    print(f"chain rule: dy/db = 2b = {dy_db:g}, db/da = {db_da:g}, da/dx = {da_dx:g}"
          f" -> dy/dx = {dy_db * db_da * da_dx:g}")

    x = jitgrad.tensor(2.0, requires_grad=True)
    y = (x * 3 + 4) ** 2
    (g1,) = jitgrad.autograd.grad(y, x, create_graph=True)
    (g2,) = jitgrad.autograd.grad(g1, x)
    print("double backward (autograd.grad with create_graph=True):")
    print(f"  g1 = dy/dx     = 6(3x + 4)       = {g1.item():g}")
    print(f"  g2 = d2y/dx2   = d/dx 6(3x + 4)  = {g2.item():g}")

    x = jitgrad.tensor(2.0, requires_grad=True)
    y = (x * 3 + 4) ** 2
    y.backward(retain_graph=True)
    y.backward()
    print(f"backward twice (retain_graph=True first): x.grad = {x.grad.item():g}  (accumulated)")

    x = jitgrad.tensor(2.0, requires_grad=True)
    y = (x * 3 + 4) ** 2
    y.backward()
    try:
        y.backward()
    except RuntimeError as err:
        first = re.split(r"\s\(|\.\s|\n", str(err), maxsplit=1)[0]
        print(f"backward twice without retain_graph: RuntimeError: {first}")
    else:
        print("backward twice without retain_graph: no error (unexpected)")

    with jitgrad.no_grad():
        z = x * 2
    print(f"under no_grad(): (x * 2).grad_fn = {z.grad_fn}")
    return 0


def _version(module_name: str) -> str:
    try:
        module = __import__(module_name)
        return str(getattr(module, "__version__", "unknown"))
    except Exception as err:  # info must never fail
        return f"not available ({type(err).__name__}: {err})"


def _warm_parallel() -> None:
    """Run one tiny parallel kernel so Numba settles (and reports) its threading layer."""
    try:
        from jitgrad.device import cpu
    except Exception:
        cpu = None
    warm = getattr(cpu, "warm_parallel", None)
    if warm is not None:
        warm()
        return
    # Fallback while the device layer has no warm_parallel(): a throwaway prange kernel.
    import numba
    import numpy as np

    @numba.njit(parallel=True, nogil=True)
    def _touch(a):
        for i in numba.prange(a.shape[0]):
            a[i] += 1.0

    _touch(np.zeros(4))


def _cuda_status() -> str:
    try:
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            from numba import cuda

            if cuda.is_available():
                try:
                    name = cuda.get_current_device().name
                    if isinstance(name, bytes):
                        name = name.decode()
                    return f"available ({name})"
                except Exception:
                    return "available"
            return "not available (no CUDA driver or device found)"
    except Exception as err:
        return f"not available ({type(err).__name__}: {err})"


def info() -> int:
    import platform

    from jitgrad import _config

    try:
        import jitgrad

        version = getattr(jitgrad, "__version__", _config.__version__)
    except Exception:  # the core failed to import: still report what can be reported
        jitgrad = None
        version = _config.__version__

    try:
        _warm_parallel()
        layer = _config.threading_layer()
    except Exception as err:
        layer = f"unknown ({type(err).__name__}: {err})"
    get_dtype = getattr(jitgrad, "get_default_dtype", None)
    try:
        dtype = str(get_dtype()) if get_dtype is not None else _config.DEFAULT_DTYPE
    except Exception:
        dtype = _config.DEFAULT_DTYPE

    rows = [
        ("jitgrad", version),
        ("Python", f"{platform.python_version()} ({sys.executable})"),
        ("NumPy", _version("numpy")),
        ("Numba", _version("numba")),
        ("llvmlite", _version("llvmlite")),
        ("threading layer", layer),
        ("kernel threads", str(_config.NUM_THREADS)),
        ("default dtype", dtype),
        ("kernel cache dir", _config.CACHE_DIR),
        ("CUDA", _cuda_status()),
    ]
    width = max(len(k) for k, _ in rows)
    for key, value in rows:
        print(f"{key:<{width}}  {value}")
    if _config.THREADING_LAYER_WARNING:
        print(f"warning: {_config.THREADING_LAYER_WARNING}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m jitgrad",
                                     description="jitgrad command line tools")
    sub = parser.add_subparsers(dest="command", metavar="{demo,info}")
    sub.add_parser("demo", help="walk through y = (3x + 4)^2: graph, backward, double backward")
    sub.add_parser("info", help="print versions, threading layer, threads and kernel cache dir")
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help(sys.stderr)
        return 2
    return demo() if args.command == "demo" else info()


if __name__ == "__main__":
    sys.exit(main())
