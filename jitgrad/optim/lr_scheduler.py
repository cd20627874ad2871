"""Learning-rate schedulers with PyTorch's names, recursive update rules (so that they chain)
and closed forms. The cyclic ones (``CyclicLR``, ``OneCycleLR``,
``CosineAnnealingWarmRestarts``) and the combinators live in ``_cyclic.py``.

Call ``scheduler.step()`` once per epoch after ``optimizer.step()``; the new rates are written
into ``optimizer.param_groups[i]["lr"]``. ``state_dict`` holds everything but the optimizer.
"""
from __future__ import annotations

import math
import types
from bisect import bisect_right
from collections import Counter

from ._cyclic import (ChainedScheduler, CosineAnnealingWarmRestarts, CyclicLR, OneCycleLR,
                      SequentialLR)
from ._lr_base import LRScheduler, ReduceLROnPlateau, per_group

__all__ = ["LRScheduler", "LambdaLR", "MultiplicativeLR", "StepLR", "MultiStepLR", "ConstantLR",
           "LinearLR", "ExponentialLR", "PolynomialLR", "CosineAnnealingLR",
           "ReduceLROnPlateau", "SequentialLR", "ChainedScheduler", "CosineAnnealingWarmRestarts",
           "CyclicLR", "OneCycleLR"]


class LambdaLR(LRScheduler):
    """``lr = initial_lr * lr_lambda(epoch)`` (one function, or one per group). ``state_dict``
    keeps the state of callable objects, not of functions or lambdas (as PyTorch)."""

    def __init__(self, optimizer, lr_lambda, last_epoch=-1):
        self.lr_lambdas = per_group(optimizer, lr_lambda, "lr_lambda")
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        return [base * fn(self.last_epoch) for base, fn in zip(self.base_lrs, self.lr_lambdas)]

    def state_dict(self):
        state = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "lr_lambdas")}
        state["lr_lambdas"] = [None if isinstance(fn, types.FunctionType)
                               or not hasattr(fn, "__dict__") else dict(fn.__dict__)
                               for fn in self.lr_lambdas]
        return state

    def load_state_dict(self, state_dict):
        state_dict = dict(state_dict)
        saved = state_dict.pop("lr_lambdas")
        self.__dict__.update(state_dict)
        for fn, fn_state in zip(self.lr_lambdas, saved):
            if fn_state is not None:
                fn.__dict__.update(fn_state)


class MultiplicativeLR(LambdaLR):
    """``lr = lr * lr_lambda(epoch)`` at each step after the first."""

    def get_lr(self):
        if self.last_epoch > 0:
            return [group["lr"] * fn(self.last_epoch)
                    for group, fn in zip(self.optimizer.param_groups, self.lr_lambdas)]
        return self._group_lrs()


class StepLR(LRScheduler):
    """Multiply each rate by ``gamma`` every ``step_size`` epochs:
    ``lr = initial_lr * gamma ** (epoch // step_size)``."""

    def __init__(self, optimizer, step_size, gamma=0.1, last_epoch=-1):
        self.step_size, self.gamma = step_size, gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return [group["lr"] for group in self.optimizer.param_groups]
        return [group["lr"] * self.gamma for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        return [base * self.gamma ** (self.last_epoch // self.step_size)
                for base in self.base_lrs]


class MultiStepLR(LRScheduler):
    """Multiply the rates by ``gamma`` at each milestone epoch:
    ``lr = initial_lr * gamma ** (number of milestones <= epoch)``."""

    def __init__(self, optimizer, milestones, gamma=0.1, last_epoch=-1):
        self.milestones, self.gamma = Counter(milestones), gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        hits = self.milestones.get(self.last_epoch, 0)
        return [group["lr"] * self.gamma ** hits for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        passed = bisect_right(sorted(self.milestones.elements()), self.last_epoch)
        return [base * self.gamma ** passed for base in self.base_lrs]


class ConstantLR(LRScheduler):
    """Scale the rates by ``factor`` until epoch ``total_iters``:
    ``lr = initial_lr * (factor if epoch < total_iters else 1)``."""

    def __init__(self, optimizer, factor=1.0 / 3, total_iters=5, last_epoch=-1):
        if not 0 <= factor <= 1:
            raise ValueError("Constant multiplicative factor expected to be between 0 and 1.")
        self.factor, self.total_iters = factor, total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        t, lrs = self.last_epoch, self._group_lrs()
        if t == 0:
            return [lr * self.factor for lr in lrs]
        if t != self.total_iters:
            return lrs
        return [lr / self.factor for lr in lrs]

    def _get_closed_form_lr(self):
        done = self.last_epoch >= self.total_iters
        return [base * (self.factor + done * (1 - self.factor)) for base in self.base_lrs]


class LinearLR(LRScheduler):
    """Scale the rates linearly from ``start_factor`` to ``end_factor`` over ``total_iters``
    epochs: ``lr = initial_lr * (s + (e - s) * min(epoch, total_iters) / total_iters)``."""

    def __init__(self, optimizer, start_factor=1.0 / 3, end_factor=1.0, total_iters=5,
                 last_epoch=-1):
        if not 0 < start_factor <= 1:
            raise ValueError("Starting multiplicative factor expected to be greater than 0 and "
                             "less or equal to 1.")
        if not 0 <= end_factor <= 1:
            raise ValueError("Ending multiplicative factor expected to be between 0 and 1.")
        self.start_factor, self.end_factor = start_factor, end_factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        t, s, e, n = self.last_epoch, self.start_factor, self.end_factor, self.total_iters
        if t == 0:
            return [lr * s for lr in self._group_lrs()]
        if t > n:
            return self._group_lrs()
        return [lr * (1.0 + (e - s) / (n * s + (t - 1) * (e - s))) for lr in self._group_lrs()]

    def _get_closed_form_lr(self):
        s, e, n = self.start_factor, self.end_factor, self.total_iters
        return [base * (s + (e - s) * min(n, self.last_epoch) / n) for base in self.base_lrs]


class ExponentialLR(LRScheduler):
    """Multiply the rates by ``gamma`` every epoch: ``lr = initial_lr * gamma ** epoch``."""

    def __init__(self, optimizer, gamma, last_epoch=-1):
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        if self.last_epoch == 0:
            return self._group_lrs()
        return [lr * self.gamma for lr in self._group_lrs()]

    def _get_closed_form_lr(self):
        return [base * self.gamma ** self.last_epoch for base in self.base_lrs]


class PolynomialLR(LRScheduler):
    """Polynomial decay to 0 over ``total_iters`` epochs:
    ``lr = initial_lr * (1 - min(epoch, total_iters) / total_iters) ** power``."""

    def __init__(self, optimizer, total_iters=5, power=1.0, last_epoch=-1):
        self.total_iters, self.power = total_iters, power
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        t, n = self.last_epoch, self.total_iters
        if t == 0 or t > n:
            return self._group_lrs()
        decay = ((1.0 - t / n) / (1.0 - (t - 1) / n)) ** self.power
        return [lr * decay for lr in self._group_lrs()]

    def _get_closed_form_lr(self):
        n = self.total_iters
        return [base * (1.0 - min(n, self.last_epoch) / n) ** self.power
                for base in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    """Cosine annealing from the initial rate to ``eta_min`` over ``T_max`` epochs (then back
    up, periodically): ``lr_t = eta_min + (lr_0 - eta_min) (1 + cos(pi t / T_max)) / 2``
    (SGDR without restarts), computed recursively from the current rate as PyTorch does, so
    it composes with other changes of the rate."""

    def __init__(self, optimizer, T_max, eta_min=0.0, last_epoch=-1):  # noqa: N803
        self.T_max, self.eta_min = T_max, eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        t, T, lo = self.last_epoch, self.T_max, self.eta_min
        groups = self.optimizer.param_groups
        if t == 0:
            return [group["lr"] for group in groups]
        if self._step_count == 1 and t > 0:
            return [lo + (base - lo) * (1 + math.cos(t * math.pi / T)) / 2
                    for base in self.base_lrs]
        if (t - 1 - T) % (2 * T) == 0:
            return [group["lr"] + (base - lo) * (1 - math.cos(math.pi / T)) / 2
                    for base, group in zip(self.base_lrs, groups)]
        return [(1 + math.cos(math.pi * t / T)) / (1 + math.cos(math.pi * (t - 1) / T))
                * (group["lr"] - lo) + lo for group in groups]

    def _get_closed_form_lr(self):
        return [self.eta_min + (base - self.eta_min)
                * (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2
                for base in self.base_lrs]
