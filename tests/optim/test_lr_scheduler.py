"""Learning-rate schedulers against their closed forms."""
import math

import pytest

import jitgrad
from jitgrad import nn, optim
from jitgrad.optim import lr_scheduler


def _opt(lr=0.1, groups=1):
    ps = [nn.Parameter(jitgrad.ones(1)) for _ in range(groups)]
    return optim.SGD([{"params": [p], "lr": lr * (i + 1)} for i, p in enumerate(ps)], lr=lr)


def test_step_lr():
    opt = _opt()
    sched = lr_scheduler.StepLR(opt, step_size=3, gamma=0.5)
    lrs = []
    for _ in range(10):
        lrs.append(sched.get_last_lr()[0])
        opt.step()
        sched.step()
    assert lrs == pytest.approx([0.1 * 0.5 ** (e // 3) for e in range(10)])


def test_cosine_annealing_matches_closed_form_both_groups():
    opt = _opt(groups=2)
    T, lo = 7, 0.01
    sched = lr_scheduler.CosineAnnealingLR(opt, T_max=T, eta_min=lo)
    for epoch in range(3 * T):
        for base, lr in zip((0.1, 0.2), sched.get_last_lr()):
            assert lr == pytest.approx(lo + (base - lo) * (1 + math.cos(math.pi * epoch / T)) / 2,
                                       abs=1e-12)
        opt.step()
        sched.step()
    assert opt.param_groups[0]["initial_lr"] == 0.1


def test_scheduler_state_dict_resume():
    opt = _opt()
    sched = lr_scheduler.CosineAnnealingLR(opt, T_max=10)
    for _ in range(4):
        sched.step()
    state = sched.state_dict()
    assert "optimizer" not in state and state["last_epoch"] == 4
    opt2 = _opt()
    opt2.param_groups[0]["lr"] = opt.param_groups[0]["lr"]
    sched2 = lr_scheduler.CosineAnnealingLR(opt2, T_max=10)
    sched2.load_state_dict(state)
    sched.step()
    sched2.step()
    assert sched2.get_last_lr() == pytest.approx(sched.get_last_lr())


def test_reduce_lr_on_plateau():
    opt = _opt(lr=1.0)
    sched = lr_scheduler.ReduceLROnPlateau(opt, factor=0.5, patience=2, cooldown=1, min_lr=0.2)
    lrs = []
    for metric in [5, 4, 4, 4, 4, 4, 4, 4, 3, 3, 3, 3, 3, 3, 3]:
        sched.step(metric)
        lrs.append(opt.param_groups[0]["lr"])
    # improvement at 5, 4, 3; after 3 bad epochs (> patience) halve, then 1 cooldown epoch
    assert lrs == [1, 1, 1, 1, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.25, 0.25, 0.25, 0.25]
    for metric in [3] * 6:  # never below min_lr
        sched.step(metric)
    assert opt.param_groups[0]["lr"] == 0.2
    assert sched.get_last_lr() == [opt.param_groups[0]["lr"]]
    mx = lr_scheduler.ReduceLROnPlateau(_opt(lr=1.0), mode="max", patience=0, factor=0.1)
    mx.step(1.0)
    mx.step(0.5)
    assert mx.get_last_lr() == pytest.approx([0.1])
    with pytest.raises(ValueError, match="Factor should be < 1.0"):
        lr_scheduler.ReduceLROnPlateau(opt, factor=1.0)
