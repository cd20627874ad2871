"""L-BFGS with an optional strong-Wolfe line search (PyTorch's ``torch.optim.LBFGS``).

All parameters of the single group are treated as one flat vector ``x``; ``step(closure)``
runs up to ``max_iter`` quasi-Newton iterations, re-evaluating ``closure()`` (which must zero
the gradients, compute the loss and call ``backward``) as the iterations need it.
"""
from __future__ import annotations

import math

from ..graph.grad_mode import enable_grad, no_grad
from ..ops.core.upper import guard_writes
from ..ops.creation import zeros_like
from ..ops.shape import cat
from .optimizer import Optimizer

_SEARCHES = (None, "strong_wolfe")


def _dot(a, b) -> float:
    return float((a * b).sum().item())


def _cubic_minimizer(x1, f1, g1, x2, f2, g2, bounds=None):
    """The minimizer of the cubic through ``(x1, f1)``, ``(x2, f2)`` with slopes ``g1``,
    ``g2`` (Nocedal & Wright, eq. 3.59), clipped to ``bounds`` (default: between the points);
    the midpoint of the bounds when the cubic has no minimizer."""
    lo, hi = bounds if bounds is not None else (min(x1, x2), max(x1, x2))
    d1 = g1 + g2 - 3.0 * (f1 - f2) / (x1 - x2)
    disc = d1 * d1 - g1 * g2
    if disc < 0.0:
        return (lo + hi) / 2.0
    d2 = math.sqrt(disc)
    if x1 <= x2:
        x = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2.0 * d2))
    else:
        x = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2.0 * d2))
    return min(max(x, lo), hi)


class _Point:
    """A trial step ``t`` of the line search with its loss, gradient and slope along d."""
    __slots__ = ("t", "f", "g", "gtd")

    def __init__(self, t, f, g, gtd):
        self.t, self.f, self.g, self.gtd = t, f, g, gtd


def strong_wolfe(evaluate, t, d, f, g, gtd, c1=1e-4, c2=0.9, tolerance_change=1e-9,
                 max_ls=25):
    """Line search for a step ``t`` along ``d`` meeting the strong Wolfe conditions
    ``f(t) <= f(0) + c1 t f'(0)`` and ``|f'(t)| <= c2 |f'(0)|`` (Nocedal & Wright,
    Algorithms 3.5 and 3.6: bracketing by cubic extrapolation, then zoom by safeguarded cubic
    interpolation). ``evaluate(t)`` returns ``(loss, flat_grad)`` at ``x + t d``.

    Returns ``(loss, flat_grad, t, number_of_evaluations)``."""
    d_norm = float(d.abs().max().item())
    start = _Point(0.0, f, g.clone(), gtd)

    def trial(step):
        f_new, g_new = evaluate(step)
        return _Point(step, f_new, g_new, _dot(g_new, d))

    def sufficient_decrease(p):
        return p.f <= f + c1 * p.t * gtd

    def curvature(p):
        return abs(p.gtd) <= -c2 * gtd

    prev, cur = start, trial(t)
    evals, it, done, bracket = 1, 0, False, None
    while it < max_ls:  # bracketing phase
        if not sufficient_decrease(cur) or (it > 1 and cur.f >= prev.f):
            bracket = [prev, cur]
            break
        if curvature(cur):
            bracket, done = [cur], True
            break
        if cur.gtd >= 0:
            bracket = [prev, cur]
            break
        bounds = (cur.t + 0.01 * (cur.t - prev.t), cur.t * 10.0)
        step = _cubic_minimizer(prev.t, prev.f, prev.gtd, cur.t, cur.f, cur.gtd, bounds)
        prev, cur = cur, trial(step)
        evals += 1
        it += 1
    if it == max_ls:
        bracket = [start, cur]

    stuck = False  # zoom phase: bracket[lo] holds the lowest loss so far
    lo, hi = (0, 1) if bracket[0].f <= bracket[-1].f else (1, 0)
    while not done and it < max_ls:
        a, b = bracket[0].t, bracket[1].t
        if abs(b - a) * d_norm < tolerance_change:
            break
        step = _cubic_minimizer(a, bracket[0].f, bracket[0].gtd, b, bracket[1].f,
                                bracket[1].gtd)
        top, bottom = max(a, b), min(a, b)
        margin = 0.1 * (top - bottom)
        if min(top - step, step - bottom) < margin:  # too close to an end of the bracket
            if stuck or step >= top or step <= bottom:
                step = top - margin if abs(step - top) < abs(step - bottom) else bottom + margin
                stuck = False
            else:
                stuck = True
        else:
            stuck = False
        cur = trial(step)
        evals += 1
        it += 1
        if not sufficient_decrease(cur) or cur.f >= bracket[lo].f:
            bracket[hi] = cur
            lo, hi = (0, 1) if bracket[0].f <= bracket[1].f else (1, 0)
        else:
            if curvature(cur):
                done = True
            elif cur.gtd * (bracket[hi].t - bracket[lo].t) >= 0:
                bracket[hi] = bracket[lo]
            bracket[lo] = cur
    best = bracket[lo] if len(bracket) > 1 else bracket[0]
    return best.f, best.g, best.t, evals


class LBFGS(Optimizer):
    """PyTorch's L-BFGS (Nocedal & Wright, Algorithm 7.4/7.5): at each iteration the direction
    ``d = -H g`` comes from the two-loop recursion over the last ``history_size`` pairs
    ``s = x_{k+1} - x_k``, ``y = g_{k+1} - g_k`` (a pair is kept only when ``y.s > 1e-10``),
    with the initial Hessian scale ``H0 = y.s / y.y``. The step is ``lr`` (the first one
    ``min(1, 1/|g|_1) lr``) or found by the strong-Wolfe line search
    (``line_search_fn="strong_wolfe"``).

    ``step(closure)`` stops after ``max_iter`` iterations, ``max_eval`` (default
    ``max_iter * 5 // 4``) evaluations, when ``max|g| <= tolerance_grad``, or when the step or
    the change in loss falls below ``tolerance_change``; it returns the loss of the first
    evaluation. One parameter group only; the state (history, direction, step) persists across
    ``step`` calls and in ``state_dict``.
    """

    def __init__(self, params, lr=1, max_iter=20, max_eval=None, tolerance_grad=1e-7,
                 tolerance_change=1e-9, history_size=100, line_search_fn=None):
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        if line_search_fn not in _SEARCHES:
            raise RuntimeError(f"LBFGS: only 'strong_wolfe' is supported as line_search_fn, "
                               f"got {line_search_fn!r}")
        super().__init__(params, dict(lr=lr, max_iter=max_iter, max_eval=max_eval,
                                      tolerance_grad=tolerance_grad,
                                      tolerance_change=tolerance_change,
                                      history_size=history_size,
                                      line_search_fn=line_search_fn))
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]["params"]

    # --- the flat vector view of the parameters --------------------------------------------
    def _flat_grad(self):
        parts = [p.grad.reshape(-1) if p.grad is not None
                 else zeros_like(p.detach()).reshape(-1) for p in self._params]
        return cat(parts, 0).detach()

    def _add(self, t, d):
        """``x += t d`` (in place, parameter by parameter)."""
        offset = 0
        for p in self._params:
            n = p.numel()
            p.add_(d[offset:offset + n].reshape(p.shape), alpha=t)
            offset += n

    def _restore(self, saved):
        for p, s in zip(self._params, saved):
            p.copy_(s)

    def _evaluate(self, closure):
        with enable_grad():
            loss = closure()
        return float(loss), self._flat_grad()

    def step(self, closure):
        """Run the iterations; ``closure`` re-evaluates the model and returns the loss."""
        if closure is None:
            raise RuntimeError("LBFGS.step requires a closure that re-evaluates the loss")
        for p in self._params:
            guard_writes(p)
        group = self.param_groups[0]
        with no_grad():
            return self._iterate(closure, group)

    def _iterate(self, closure, group):
        lr, max_iter, max_eval = float(group["lr"]), group["max_iter"], group["max_eval"]
        tol_grad, tol_change = group["tolerance_grad"], group["tolerance_change"]
        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)
        with enable_grad():
            orig_loss = closure()
        loss = float(orig_loss)
        evals = 1
        state["func_evals"] += 1
        g = self._flat_grad()
        if float(g.abs().max().item()) <= tol_grad:
            return orig_loss
        d, t = state.get("d"), state.get("t")
        dirs, steps, ro = state.get("old_dirs"), state.get("old_stps"), state.get("ro")
        h_diag, prev_g, prev_loss = state.get("H_diag"), state.get("prev_flat_grad"), None
        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1
            if state["n_iter"] == 1:
                d, dirs, steps, ro, h_diag = -g, [], [], [], 1.0
            else:
                h_diag = self._update_history(g - prev_g, d * t, dirs, steps, ro, h_diag,
                                              group["history_size"])
                d = self._two_loop(g, dirs, steps, ro, h_diag)
            prev_g, prev_loss = g.clone(), loss
            t = min(1.0, 1.0 / float(g.abs().sum().item())) * lr if state["n_iter"] == 1 else lr
            gtd = _dot(g, d)
            if gtd > -tol_change:  # not a descent direction
                break
            if group["line_search_fn"] == "strong_wolfe":
                x0 = [p.detach().clone() for p in self._params]

                def evaluate(step, x0=x0, d=d):
                    self._add(step, d)
                    out = self._evaluate(closure)
                    self._restore(x0)
                    return out
                loss, g, t, ls_evals = strong_wolfe(evaluate, t, d, loss, g, gtd,
                                                    tolerance_change=tol_change)
                self._add(t, d)
                opt_cond = float(g.abs().max().item()) <= tol_grad
            else:
                self._add(t, d)
                ls_evals, opt_cond = 0, False
                if n_iter != max_iter:
                    loss, g = self._evaluate(closure)
                    opt_cond = float(g.abs().max().item()) <= tol_grad
                    ls_evals = 1
            evals += ls_evals
            state["func_evals"] += ls_evals
            if n_iter == max_iter or evals >= max_eval or opt_cond:
                break
            if float(d.abs().max().item()) * abs(t) <= tol_change:
                break
            if abs(loss - prev_loss) < tol_change:
                break
        state.update(d=d, t=t, old_dirs=dirs, old_stps=steps, ro=ro, H_diag=h_diag,
                     prev_flat_grad=prev_g, prev_loss=prev_loss)
        return orig_loss

    @staticmethod
    def _update_history(y, s, dirs, steps, ro, h_diag, history_size):
        """Append the pair ``(y, s)`` when the curvature ``y.s`` is positive enough (dropping
        the oldest beyond ``history_size``); returns the new ``H0 = y.s / y.y``."""
        ys = _dot(y, s)
        if ys <= 1e-10:
            return h_diag
        if len(dirs) == history_size:
            dirs.pop(0)
            steps.pop(0)
            ro.pop(0)
        dirs.append(y)
        steps.append(s)
        ro.append(1.0 / ys)
        return ys / _dot(y, y)

    @staticmethod
    def _two_loop(g, dirs, steps, ro, h_diag):
        """``-H g`` by the two-loop recursion (Nocedal & Wright, Algorithm 7.4)."""
        q = -g
        alphas = [0.0] * len(dirs)
        for i in range(len(dirs) - 1, -1, -1):
            alphas[i] = _dot(steps[i], q) * ro[i]
            q = q - alphas[i] * dirs[i]
        r = q * h_diag
        for i in range(len(dirs)):
            beta = _dot(dirs[i], r) * ro[i]
            r = r + (alphas[i] - beta) * steps[i]
        return r
