"""Command line: ``python -m jitgrad demo`` and ``python -m jitgrad info``.

``demo`` walks through the seed example y = (3x + 4)^2 at x = 2: the graph of backward
nodes, the chain rule, double backward, gradient accumulation and the freed-graph error; then
it trains an MLP (``jitgrad.nn`` + ``jitgrad.optim``) on generated 28x28 digit images (no
download) with a progress bar (tqdm when installed, else a plain line) and prints the test
accuracy. ``--epochs``, ``--dtype``, ``--device`` and ``--batch-size`` set the training part;
``--epochs 0`` skips it.
``info`` prints versions and the runtime configuration (threading layer, threads, cache).
"""
from __future__ import annotations

import argparse
import re
import sys
import time

import numpy as np


def _chain(node) -> list[str]:
    """Names along ``next_functions[0]`` from ``node`` until a node has no next function."""
    names = []
    while node is not None:
        names.append(node.name().rsplit("::", 1)[-1])
        nxt = node.next_functions
        node = nxt[0][0] if nxt else None
    return names


def demo(epochs: int = 3, dtype: str = "float32", device: str = "cpu",
         batch_size: int = 128) -> int:
    walkthrough()
    if epochs > 0:
        print()
        train(epochs=epochs, dtype=dtype, device=device, batch_size=batch_size)
    return 0


def walkthrough() -> None:
    """The seed example y = (3x + 4)^2: graph, chain rule, double backward, accumulation."""
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


# --- the training part of the demo -----------------------------------------------------------
def _arc(cx, cy, rx, ry, a0, a1, n=24):
    t = np.radians(np.linspace(a0, a1, n))
    return np.stack([cx + rx * np.cos(t), cy + ry * np.sin(t)], 1)


def _line(p, q, n=12):
    t = np.linspace(0.0, 1.0, n)[:, None]
    return np.asarray(p) * (1 - t) + np.asarray(q) * t


def _glyphs(points=96):
    """Each digit as ``points`` points along its pen strokes, in a unit box (y down)."""
    strokes = {
        0: [_arc(.5, .5, .3, .4, 0, 360)],
        1: [_line((.32, .28), (.52, .1)), _line((.52, .1), (.52, .9))],
        2: [_arc(.5, .32, .27, .22, 180, 390), _line((.73, .43), (.22, .9)),
            _line((.22, .9), (.8, .9))],
        3: [_arc(.5, .3, .25, .2, 200, 450), _arc(.5, .7, .28, .2, 270, 520)],
        4: [_line((.62, .1), (.18, .62)), _line((.18, .62), (.82, .62)),
            _line((.62, .1), (.62, .9))],
        5: [_line((.75, .1), (.3, .1)), _line((.3, .1), (.27, .45)),
            _arc(.5, .66, .28, .24, 220, 500)],
        6: [_line((.7, .1), (.27, .58)), _arc(.5, .67, .24, .23, 0, 360)],
        7: [_line((.2, .1), (.8, .1)), _line((.8, .1), (.4, .9))],
        8: [_arc(.5, .3, .22, .2, 0, 360), _arc(.5, .7, .27, .2, 0, 360)],
        9: [_arc(.5, .33, .25, .23, 0, 360), _line((.75, .35), (.65, .9))],
    }
    out = np.empty((10, points, 2))
    for d, parts in strokes.items():
        pts = np.concatenate(parts)
        seg = np.r_[0, np.cumsum(np.linalg.norm(np.diff(pts, axis=0), axis=1))]
        at = np.linspace(0, seg[-1], points)
        out[d] = np.stack([np.interp(at, seg, pts[:, 0]), np.interp(at, seg, pts[:, 1])], 1)
    return out


def make_digits(n: int, seed: int = 0, size: int = 28):
    """``n`` generated ``size x size`` images of handwritten-like digits and their labels.

    Each image is a digit's pen strokes under a random affine map (rotation +-15 degrees,
    scale, shear, shift), drawn with a random ink amount (stroke width), blurred, with noise.
    Returns float32 images ``(n, 1, size, size)`` in [0, 1] and int64 labels ``(n,)``.
    """
    rng = np.random.default_rng(seed)
    glyphs = _glyphs()
    labels = rng.integers(0, 10, n)
    pts = glyphs[labels] - 0.5                                    # (n, P, 2)
    ang = np.radians(rng.uniform(-15, 15, n))
    sc = rng.uniform(0.75, 1.05, (n, 2)) * size * 0.72
    sh = rng.uniform(-0.25, 0.25, n)
    c, s = np.cos(ang), np.sin(ang)
    A = np.empty((n, 2, 2))
    A[:, 0, 0], A[:, 0, 1] = c * sc[:, 0], (-s + sh * c) * sc[:, 1]
    A[:, 1, 0], A[:, 1, 1] = s * sc[:, 0], (c + sh * s) * sc[:, 1]
    pts = np.einsum("nij,npj->npi", A, pts) + size / 2 + rng.uniform(-2, 2, (n, 1, 2))
    pts += rng.normal(0, 0.35, pts.shape)                         # a shaky hand
    # bilinear splat of the pen positions, then a separable blur: a stroke of some width
    x0 = np.clip(np.floor(pts[..., 0]).astype(np.int64), 0, size - 2)
    y0 = np.clip(np.floor(pts[..., 1]).astype(np.int64), 0, size - 2)
    fx = np.clip(pts[..., 0] - x0, 0, 1)
    fy = np.clip(pts[..., 1] - y0, 0, 1)
    base = np.arange(n)[:, None] * size * size
    where = [base + (y0 + dy) * size + x0 + dx for dy in (0, 1) for dx in (0, 1)]
    weight = [wy * wx for wy in (1 - fy, fy) for wx in (1 - fx, fx)]
    img = np.bincount(np.concatenate(where, None), np.concatenate(weight, None),
                      n * size * size).reshape(n, size, size)
    pad = np.pad(img, ((0, 0), (2, 2), (2, 2)))
    k = np.array([1.0, 4.0, 6.0, 4.0, 1.0]) / 16
    rows = sum(w * pad[:, i:i + size, :] for i, w in enumerate(k))
    img = sum(w * rows[:, :, i:i + size] for i, w in enumerate(k))
    ink = rng.uniform(2.0, 5.0, (n, 1, 1))
    img = 1.0 - np.exp(-ink * img)
    img += rng.normal(0, 0.12, img.shape)
    return np.clip(img, 0, 1).astype(np.float32)[:, None], labels


class _Progress:
    """tqdm when installed; else one plain line per epoch (updated in place on a terminal)."""

    def __init__(self, total, desc):
        self.total, self.desc, self.done, self.t0 = total, desc, 0, time.perf_counter()
        self.bar = None
        try:
            from tqdm.auto import tqdm
        except ImportError:
            pass
        else:
            self.bar = tqdm(total=total, desc=desc, unit="img", unit_scale=True, leave=True,
                            dynamic_ncols=True)
        self.tty = self.bar is None and sys.stderr.isatty()

    def update(self, n, loss):
        self.done += n
        if self.bar is not None:
            self.bar.set_postfix(loss=f"{loss:.4f}", refresh=False)
            self.bar.update(n)
        elif self.tty:
            rate = self.done / max(time.perf_counter() - self.t0, 1e-9)
            sys.stderr.write(f"\r{self.desc}: {self.done}/{self.total} loss {loss:.4f} "
                             f"{rate:,.0f} img/s")
            sys.stderr.flush()

    def close(self):
        if self.bar is not None:
            self.bar.close()
        elif self.tty:
            sys.stderr.write("\r\033[K")
            sys.stderr.flush()
        return time.perf_counter() - self.t0


def train(epochs=3, dtype="float32", device="cpu", batch_size=128, n_train=10000, n_test=2000,
          hidden=(512, 512), lr=1e-3, seed=0, verbose=True) -> float:
    """Train an MLP (784-hidden-10, ReLU) with Adam and cross-entropy on ``make_digits`` data;
    returns the test accuracy. Shows a progress bar and per-epoch loss and throughput."""
    import jitgrad
    from jitgrad import nn, optim

    say = print if verbose else (lambda *a, **k: None)
    if str(device).split(":")[0] != "cpu":
        if not jitgrad.cuda.is_available():
            raise SystemExit(f"demo: device {device!r} is not available "
                             "(jitgrad.cuda.is_available() is False: no CUDA GPU or driver, or "
                             "the jitgrad[cuda] extra is missing); use --device cpu")
        device = str(jitgrad.Device(device))
    dt = jitgrad.dtypes.to_dtype(dtype)
    jitgrad.manual_seed(seed)
    x_train, y_train = make_digits(n_train, seed=seed)
    x_test, y_test = make_digits(n_test, seed=seed + 1)
    sizes = (784,) + tuple(hidden) + (10,)
    layers = [nn.Flatten()]
    for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:])):
        layers += [nn.Linear(a, b, dtype=dt)] + ([nn.ReLU()] if i < len(sizes) - 2 else [])
    model = nn.Sequential(*layers).to(device)
    opt = optim.Adam(model.parameters(), lr=lr)
    sched = optim.lr_scheduler.CosineAnnealingLR(opt, T_max=max(epochs, 1))
    loss_fn = nn.CrossEntropyLoss()
    say(f"training an MLP {'-'.join(map(str, sizes))} (ReLU, cross-entropy, Adam, {dt.name}, "
        f"{device}) on {n_train} generated 28x28 digit images (no download)")
    rng = np.random.default_rng(seed)
    xs, ys = x_train.astype(dt.np), y_train
    for epoch in range(1, epochs + 1):
        model.train()
        order = rng.permutation(n_train)
        bar = _Progress(n_train, f"epoch {epoch}/{epochs}") if verbose else None
        total = 0.0
        for start in range(0, n_train, batch_size):
            idx = order[start:start + batch_size]
            xb = jitgrad.tensor(xs[idx], device=device)
            yb = jitgrad.tensor(ys[idx], device=device)
            opt.zero_grad()
            loss = loss_fn(model(xb), yb)
            loss.backward()
            opt.step()
            value = loss.item()
            total += value * len(idx)
            if bar is not None:
                bar.update(len(idx), value)
        sched.step()
        secs = bar.close() if bar is not None else 0.0
        say(f"epoch {epoch}/{epochs}: loss {total / n_train:.4f}, "
            f"{n_train / max(secs, 1e-9):,.0f} img/s")
    acc = evaluate(model, x_test.astype(dt.np), y_test, device=device)
    say(f"test accuracy: {100 * acc:.2f}% on {n_test} held-out images")
    return acc


def evaluate(model, x, y, batch_size=1000, device="cpu") -> float:
    """Fraction of ``x`` (numpy images) whose argmax logit is the label ``y``."""
    import jitgrad

    model.eval()
    correct = 0
    with jitgrad.no_grad():
        for start in range(0, len(x), batch_size):
            logits = model(jitgrad.tensor(x[start:start + batch_size], device=device))
            correct += int((logits.cpu().numpy().argmax(1) == y[start:start + batch_size]).sum())
    return correct / max(len(x), 1)


def _version(module_name: str) -> str:
    try:
        module = __import__(module_name)
        return str(getattr(module, "__version__", "unknown"))
    except Exception as err:  # info must never fail
        return f"not available ({type(err).__name__}: {err})"


def _warm_parallel() -> None:
    """Run one tiny parallel kernel so Numba settles (and reports) its threading layer."""
    try:
        from jitgrad.kernels.cpu import elementwise as cpu
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
        ("interop threads", str(_config.NUM_INTEROP_THREADS)),
        ("fast math", "on (jitgrad vmath)" if _config.FAST_MATH else "off (libm, JITGRAD_FAST_MATH=0)"),
        ("default dtype", dtype),
        ("kernel cache dir", _config.KERNEL_CACHE_DIR),
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
    d = sub.add_parser("demo", help="walk through y = (3x + 4)^2 (graph, backward, double "
                       "backward), then train an MLP on generated digits")
    d.add_argument("--epochs", type=int, default=3, help="training epochs (0: skip; default 3)")
    d.add_argument("--dtype", default="float32", choices=("float32", "float64"),
                   help="parameter and data dtype (default float32)")
    d.add_argument("--device", default="cpu", help="where to train: 'cpu' or 'cuda[:N]' (a GPU)")
    d.add_argument("--batch-size", type=int, default=128, help="mini-batch size (default 128)")
    sub.add_parser("info", help="print versions, threading layer, threads and kernel cache dir")
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help(sys.stderr)
        return 2
    if args.command == "demo":
        return demo(args.epochs, args.dtype, args.device, args.batch_size)
    return info()


if __name__ == "__main__":
    sys.exit(main())
