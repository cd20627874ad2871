"""The cyclic schedulers (``CosineAnnealingWarmRestarts``, ``CyclicLR``, ``OneCycleLR``) and the
combinators (``SequentialLR``, ``ChainedScheduler``); re-exported by ``lr_scheduler``."""
from __future__ import annotations

import math
from bisect import bisect_right

from ._lr_base import LRScheduler, ReduceLROnPlateau, per_group
from .optimizer import Optimizer


class SequentialLR(LRScheduler):
    """Run ``schedulers[0]`` until ``milestones[0]``, then ``schedulers[1]`` (restarted at its
    epoch 0, in closed form) until ``milestones[1]``, and so on."""

    def __init__(self, optimizer, schedulers, milestones, last_epoch=-1):
        if len(schedulers) < 1:
            raise ValueError("SequentialLR expects at least one scheduler")
        for i, sched in enumerate(schedulers):
            if not hasattr(sched, "optimizer"):
                raise TypeError(f"SequentialLR: schedulers[{i}] has no optimizer")
            if isinstance(sched, ReduceLROnPlateau):
                raise ValueError("SequentialLR does not support `ReduceLROnPlateau` scheduler as "
                                 f"it requires additional kwargs to be specified when calling "
                                 f"`step`, but got one at index {i} in the given schedulers "
                                 "sequence.")
            if sched.optimizer is not optimizer:
                raise ValueError(f"SequentialLR expects all schedulers to belong to the same "
                                 f"optimizer, but got scheduler at index {i} to be different")
        if len(milestones) != len(schedulers) - 1:
            raise ValueError("Sequential Schedulers expects number of schedulers provided to be "
                             f"one more than the number of milestone points, but got number of "
                             f"schedulers {len(schedulers)} and the number of milestones to be "
                             f"equal to {len(milestones)}")
        self._schedulers, self._milestones = list(schedulers), list(milestones)
        self.last_epoch, self.optimizer = last_epoch + 1, optimizer
        for group in optimizer.param_groups:  # undo the steps the schedulers' constructors took
            group["lr"] = group["initial_lr"]
        for sched in self._schedulers:
            sched.last_epoch -= 1
        self._schedulers[0]._initial_step()
        self._last_lr = self._schedulers[0].get_last_lr()

    def step(self):
        """Step the scheduler of the current phase (restarting it at a milestone)."""
        self.last_epoch += 1
        idx = bisect_right(self._milestones, self.last_epoch)
        sched = self._schedulers[idx]
        if idx > 0 and self._milestones[idx - 1] == self.last_epoch:
            sched.last_epoch = 0
            closed = getattr(sched, "_get_closed_form_lr", None)
            sched._set_lrs(closed() if closed is not None else sched.get_lr())
        else:
            sched.step()
        self._last_lr = sched.get_last_lr()

    def state_dict(self):
        state = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "_schedulers")}
        state["_schedulers"] = [s.state_dict() for s in self._schedulers]
        return state

    def load_state_dict(self, state_dict):
        state_dict = dict(state_dict)
        saved = state_dict.pop("_schedulers")
        self.__dict__.update(state_dict)
        for sched, s in zip(self._schedulers, saved):
            sched.load_state_dict(s)


class ChainedScheduler(SequentialLR):
    """Step every scheduler of the list at each ``step`` (their multiplicative effects
    compose)."""

    def __init__(self, schedulers, optimizer=None):  # noqa: D107 (no SequentialLR set-up)
        if len(schedulers) < 1:
            raise ValueError("ChainedScheduler expects at least one scheduler to be chained")
        optimizer = optimizer if optimizer is not None else schedulers[0].optimizer
        for i, sched in enumerate(schedulers):
            if isinstance(sched, ReduceLROnPlateau):
                raise ValueError("ChainedScheduler does not support `ReduceLROnPlateau` "
                                 f"scheduler as it requires additional kwargs to be specified "
                                 f"when calling `step`, but got one at index {i} in the given "
                                 "schedulers sequence.")
            if sched.optimizer is not optimizer:
                raise ValueError(f"ChainedScheduler expects all schedulers to belong to the same "
                                 f"optimizer, but got scheduler {type(sched).__name__} at index "
                                 f"{i} to be different")
        self._schedulers, self.optimizer = list(schedulers), optimizer
        self._last_lr = [group["lr"] for group in optimizer.param_groups]

    def step(self):
        """Step each scheduler in order."""
        for sched in self._schedulers:
            sched.step()
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]


class CosineAnnealingWarmRestarts(LRScheduler):
    """SGDR (Loshchilov & Hutter, 2017): ``lr = eta_min + (initial_lr - eta_min)
    (1 + cos(pi T_cur / T_i)) / 2``, where ``T_cur`` counts epochs since the last restart and
    the period ``T_i`` starts at ``T_0`` and is multiplied by ``T_mult`` at each restart.
    ``step(epoch)`` accepts fractional epochs."""

    def __init__(self, optimizer, T_0, T_mult=1, eta_min=0.0, last_epoch=-1):  # noqa: N803
        if T_0 <= 0 or not isinstance(T_0, int):
            raise ValueError(f"Expected positive integer T_0, but got {T_0}")
        if T_mult < 1 or not isinstance(T_mult, int):
            raise ValueError(f"Expected integer T_mult >= 1, but got {T_mult}")
        self.T_0, self.T_i, self.T_mult, self.eta_min = T_0, T_0, T_mult, eta_min
        self.T_cur = last_epoch
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        c = (1 + math.cos(math.pi * self.T_cur / self.T_i)) / 2
        return [self.eta_min + (base - self.eta_min) * c for base in self.base_lrs]

    def step(self, epoch=None):
        """Advance one epoch, or go to (possibly fractional) ``epoch``."""
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:
            epoch = self.last_epoch + 1
            self.T_cur += 1
            if self.T_cur >= self.T_i:
                self.T_cur -= self.T_i
                self.T_i *= self.T_mult
        else:
            if epoch < 0:
                raise ValueError(f"Expected non-negative epoch, but got {epoch}")
            if epoch >= self.T_0:
                if self.T_mult == 1:
                    self.T_cur = epoch % self.T_0
                else:
                    n = int(math.log(epoch / self.T_0 * (self.T_mult - 1) + 1, self.T_mult))
                    self.T_cur = epoch - self.T_0 * (self.T_mult ** n - 1) / (self.T_mult - 1)
                    self.T_i = self.T_0 * self.T_mult ** n
            else:
                self.T_i, self.T_cur = self.T_0, epoch
        self.last_epoch = math.floor(epoch)
        self._step_count += 1
        self._set_lrs(self.get_lr())


def _momentum_key(optimizer, cycle_momentum, name):
    """Which group entry holds the momentum: ``"momentum"`` or ``"betas"`` (first beta)."""
    if not cycle_momentum:
        return None
    if "momentum" in optimizer.defaults:
        return "momentum"
    if "betas" in optimizer.defaults:
        return "betas"
    raise ValueError(f"optimizer must support momentum or beta1 with `cycle_momentum` option "
                     f"enabled ({name})")


def _set_momentum(group, key, value):
    if key == "betas":
        group["betas"] = (value, *group["betas"][1:])
    elif key is not None:
        group["momentum"] = value


class CyclicLR(LRScheduler):
    """Cyclical learning rates (Smith, 2017), stepped once per batch. Each cycle rises from
    ``base_lr`` to ``max_lr`` in ``step_size_up`` steps and falls back in ``step_size_down``::

        cycle = floor(1 + t / total);  x = 1 + t / total - cycle
        s = x / r  if x <= r  else  (x - 1) / (r - 1)        (r = step_size_up / total)
        lr = base_lr + (max_lr - base_lr) * s * scale(cycle or t)

    ``mode``: ``"triangular"`` (scale 1), ``"triangular2"`` (halved each cycle), ``"exp_range"``
    (``gamma ** t``), or a custom ``scale_fn``/``scale_mode``. With ``cycle_momentum`` the
    momentum (or beta1) cycles inversely between ``max_momentum`` and ``base_momentum``."""

    def __init__(self, optimizer, base_lr, max_lr, step_size_up=2000, step_size_down=None,
                 mode="triangular", gamma=1.0, scale_fn=None, scale_mode="cycle",
                 cycle_momentum=True, base_momentum=0.8, max_momentum=0.9, last_epoch=-1):
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        base_lrs = per_group(optimizer, base_lr, "base_lr")
        if last_epoch == -1:
            for lr, group in zip(base_lrs, optimizer.param_groups):
                group["lr"] = lr
        self.max_lrs = per_group(optimizer, max_lr, "max_lr")
        up = float(step_size_up)
        down = float(step_size_down) if step_size_down is not None else up
        self.total_size, self.step_ratio = up + down, up / (up + down)
        if mode not in ("triangular", "triangular2", "exp_range") and scale_fn is None:
            raise ValueError("mode is invalid and scale_fn is None")
        self.mode, self.gamma, self._scale_fn_custom = mode, gamma, scale_fn
        self.scale_mode = scale_mode if scale_fn is not None else (
            "iterations" if mode == "exp_range" else "cycle")
        self.cycle_momentum = cycle_momentum
        self._momentum = _momentum_key(optimizer, cycle_momentum, "CyclicLR")
        if self._momentum is not None:
            self.base_momentums = per_group(optimizer, base_momentum, "base_momentum")
            self.max_momentums = per_group(optimizer, max_momentum, "max_momentum")
            if last_epoch == -1:
                for m, group in zip(self.max_momentums, optimizer.param_groups):
                    _set_momentum(group, self._momentum, m)
        super().__init__(optimizer, last_epoch)
        self.base_lrs = base_lrs

    def scale_fn(self, x):
        """The amplitude scale at ``x`` (the cycle number or the iteration)."""
        if self._scale_fn_custom is not None:
            return self._scale_fn_custom(x)
        if self.mode == "triangular":
            return 1.0
        if self.mode == "triangular2":
            return 1 / (2.0 ** (x - 1))
        return self.gamma ** x

    def get_lr(self):
        t = self.last_epoch
        cycle = math.floor(1 + t / self.total_size)
        x = 1.0 + t / self.total_size - cycle
        r = self.step_ratio
        s = x / r if x <= r else (x - 1) / (r - 1)
        scale = self.scale_fn(cycle if self.scale_mode == "cycle" else t)
        lrs = [lo + (hi - lo) * s * scale for lo, hi in zip(self.base_lrs, self.max_lrs)]
        if self._momentum is not None:
            for group, lo, hi in zip(self.optimizer.param_groups, self.base_momentums,
                                     self.max_momentums):
                _set_momentum(group, self._momentum, hi - (hi - lo) * s * scale)
        return lrs

    def state_dict(self):
        state = super().state_dict()
        state.pop("_scale_fn_custom", None)
        return state


class OneCycleLR(LRScheduler):
    """The 1cycle policy (Smith & Topin, 2017), stepped once per batch for ``total_steps``
    (or ``epochs * steps_per_epoch``) steps: the rate goes from ``max_lr / div_factor`` up to
    ``max_lr`` over the first ``pct_start`` of the steps, then anneals (``"cos"``:
    ``end + (start - end)(1 + cos(pi p)) / 2``, or ``"linear"``) down to
    ``initial_lr / final_div_factor``; ``three_phase`` goes back to the initial rate first.
    The momentum (or beta1) moves inversely between ``max_momentum`` and ``base_momentum``."""

    def __init__(self, optimizer, max_lr, total_steps=None, epochs=None, steps_per_epoch=None,
                 pct_start=0.3, anneal_strategy="cos", cycle_momentum=True, base_momentum=0.85,
                 max_momentum=0.95, div_factor=25.0, final_div_factor=1e4, three_phase=False,
                 last_epoch=-1):
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        if total_steps is None:
            if epochs is None or steps_per_epoch is None:
                raise ValueError("You must define either total_steps OR (epochs AND "
                                 "steps_per_epoch)")
            if epochs <= 0 or steps_per_epoch <= 0:
                raise ValueError(f"Expected positive integer epochs and steps_per_epoch, but got "
                                 f"{epochs} and {steps_per_epoch}")
            total_steps = epochs * steps_per_epoch
        elif total_steps <= 0 or not isinstance(total_steps, int):
            raise ValueError(f"Expected positive integer total_steps, but got {total_steps}")
        if not 0 <= pct_start <= 1:
            raise ValueError(f"Expected float between 0 and 1 pct_start, but got {pct_start}")
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError("anneal_strategy must be one of 'cos' or 'linear', instead got "
                             f"{anneal_strategy}")
        self.total_steps, self.anneal_strategy = total_steps, anneal_strategy
        up = float(pct_start * total_steps) - 1
        if three_phase:
            self._phases = [(up, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                            (float(2 * pct_start * total_steps) - 2, "max_lr", "initial_lr", "base_momentum", "max_momentum"),
                            (total_steps - 1, "initial_lr", "min_lr", "max_momentum",
                             "max_momentum")]
        else:
            self._phases = [(up, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                            (total_steps - 1, "max_lr", "min_lr", "base_momentum",
                             "max_momentum")]
        max_lrs = per_group(optimizer, max_lr, "max_lr")
        if last_epoch == -1:
            for lr, group in zip(max_lrs, optimizer.param_groups):
                group["initial_lr"] = lr / div_factor
                group["max_lr"] = lr
                group["min_lr"] = group["initial_lr"] / final_div_factor
        self.cycle_momentum = cycle_momentum
        self._momentum = _momentum_key(optimizer, cycle_momentum, "OneCycleLR")
        if self._momentum is not None and last_epoch == -1:
            for group, lo, hi in zip(optimizer.param_groups,
                                     per_group(optimizer, base_momentum, "base_momentum"),
                                     per_group(optimizer, max_momentum, "max_momentum")):
                _set_momentum(group, self._momentum, hi)
                group["max_momentum"], group["base_momentum"] = hi, lo
        super().__init__(optimizer, last_epoch)

    def _anneal(self, start, end, pct):
        if self.anneal_strategy == "cos":
            return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)
        return (end - start) * pct + start

    def get_lr(self):
        t = self.last_epoch
        if t > self.total_steps:
            raise ValueError(f"Tried to step {t} times. The specified number of total steps is "
                             f"{self.total_steps}")
        lrs = []
        for group in self.optimizer.param_groups:
            start = 0.0
            for i, (end, lr0, lr1, m0, m1) in enumerate(self._phases):
                if t <= end or i == len(self._phases) - 1:
                    pct = (t - start) / (end - start)
                    lrs.append(self._anneal(group[lr0], group[lr1], pct))
                    if self._momentum is not None:
                        _set_momentum(group, self._momentum,
                                      self._anneal(group[m0], group[m1], pct))
                    break
                start = end
        return lrs
