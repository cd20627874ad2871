"""The learning-rate schedulers: lr (and cycled momentum) sequences equal PyTorch 2.13's,
pinned here, plus closed forms, state_dict round trips and errors."""
import math

import pytest

import jitgrad
from jitgrad import nn, optim
from jitgrad.optim import lr_scheduler as L

# (name, optimizer, scheduler expression over `L` and `opt`, number of steps)
CASES = [('LambdaLR', 'sgd', 'L.LambdaLR(opt, lambda e: 0.9 ** e + 0.01 * e)', 12),
 ('LambdaLR_groups', 'sgd2', 'L.LambdaLR(opt, [lambda e: 0.5 ** e, lambda e: 1.0 / (1 + e)])', 8),
 ('MultiplicativeLR', 'sgd', 'L.MultiplicativeLR(opt, lambda e: 0.95)', 10),
 ('MultiStepLR', 'sgd', 'L.MultiStepLR(opt, milestones=[2, 5, 5, 8], gamma=0.5)', 12),
 ('ConstantLR', 'sgd', 'L.ConstantLR(opt, factor=0.25, total_iters=4)', 8),
 ('LinearLR', 'sgd2', 'L.LinearLR(opt, start_factor=0.2, end_factor=0.9, total_iters=5)', 9),
 ('ExponentialLR', 'sgd', 'L.ExponentialLR(opt, gamma=0.8)', 8),
 ('PolynomialLR', 'sgd', 'L.PolynomialLR(opt, total_iters=6, power=2.0)', 9),
 ('SequentialLR',
  'sgd',
  'L.SequentialLR(opt, [L.LinearLR(opt, 0.1, 1.0, 3), L.ExponentialLR(opt, 0.9), L.StepLR(opt, 2, '
  '0.5)], milestones=[3, 7])',
  14),
 ('ChainedScheduler',
  'sgd',
  'L.ChainedScheduler([L.ConstantLR(opt, 0.5, 3), L.ExponentialLR(opt, 0.9)])',
  10),
 ('Chained_cosine',
  'sgd',
  'L.ChainedScheduler([L.CosineAnnealingLR(opt, 5, 0.001), L.MultiStepLR(opt, [3, 6], 0.5)])',
  12),
 ('WarmRestarts', 'sgd', 'L.CosineAnnealingWarmRestarts(opt, T_0=3, eta_min=0.001)', 10),
 ('WarmRestarts_mult',
  'sgd2',
  'L.CosineAnnealingWarmRestarts(opt, T_0=2, T_mult=2, eta_min=0.01)',
  16),
 ('CyclicLR', 'sgdm', 'L.CyclicLR(opt, base_lr=0.01, max_lr=0.1, step_size_up=3)', 14),
 ('CyclicLR_tri2',
  'sgdm',
  "L.CyclicLR(opt, 0.01, 0.1, step_size_up=2, step_size_down=3, mode='triangular2')",
  14),
 ('CyclicLR_exp',
  'adam',
  "L.CyclicLR(opt, 0.001, 0.01, step_size_up=2, mode='exp_range', gamma=0.9)",
  12),
 ('OneCycleLR', 'sgdm', 'L.OneCycleLR(opt, max_lr=0.1, total_steps=12)', 12),
 ('OneCycleLR_3',
  'adam',
  'L.OneCycleLR(opt, max_lr=[0.05], epochs=3, steps_per_epoch=5, pct_start=0.25, '
  "anneal_strategy='linear', three_phase=True)",
  15)]

# torch: [[get_last_lr(), momentum or beta1 per group] before each step]
TORCH_SEQUENCES = {'ChainedScheduler': [[[0.05], [0]], [[0.045000000000000005], [0]], [[0.04050000000000001], [0]],
                      [[0.07290000000000002], [0]], [[0.06561000000000002], [0]],
                      [[0.05904900000000002], [0]], [[0.05314410000000002], [0]],
                      [[0.04782969000000002], [0]], [[0.043046721000000024], [0]],
                      [[0.03874204890000002], [0]]],
 'Chained_cosine': [[[0.1], [0]], [[0.0905463412215599], [0]], [[0.06579634122155989], [0]],
                    [[0.017601829389220048], [0]], [[0.005588632788095041], [0]], [[0.001], [0]],
                    [[0.005226829389220051], [0]], [[0.016292812394845108], [0]],
                    [[0.029971119627655116], [0]], [[0.04103710263328018], [0]],
                    [[0.045263932022500224], [0]], [[0.041037102633280184], [0]]],
 'ConstantLR': [[[0.025], [0]], [[0.025], [0]], [[0.025], [0]], [[0.025], [0]], [[0.1], [0]],
                [[0.1], [0]], [[0.1], [0]], [[0.1], [0]]],
 'CyclicLR': [[[0.01], [0.9]], [[0.040000000000000015], [0.8666666666666667]],
              [[0.06999999999999999], [0.8333333333333334]], [[0.1], [0.8]],
              [[0.07000000000000003], [0.8333333333333334]],
              [[0.03999999999999998], [0.8666666666666667]], [[0.01], [0.9]],
              [[0.040000000000000056], [0.8666666666666666]],
              [[0.06999999999999995], [0.8333333333333335]], [[0.1], [0.8]],
              [[0.06999999999999995], [0.8333333333333335]],
              [[0.040000000000000056], [0.8666666666666666]], [[0.01], [0.9]],
              [[0.03999999999999998], [0.8666666666666667]]],
 'CyclicLR_exp': [[[0.001], [0.9]], [[0.005050000000000001], [0.855]],
                  [[0.008290000000000002], [0.8190000000000001]],
                  [[0.004280500000000001], [0.86355]], [[0.001], [0.9]],
                  [[0.0036572050000000006], [0.8704755000000001]],
                  [[0.005782969000000001], [0.8468559]],
                  [[0.0031523360500000006], [0.8760851550000001]], [[0.001], [0.9]],
                  [[0.0027433922005000006], [0.88062897555]],
                  [[0.0041381059609000015], [0.86513215599]],
                  [[0.0024121476824050005], [0.8843094701955]]],
 'CyclicLR_tri2': [[[0.01], [0.9]], [[0.055], [0.8500000000000001]],
                   [[0.09999999999999999], [0.8]], [[0.06999999999999999], [0.8333333333333334]],
                   [[0.039999999999999994], [0.8666666666666667]], [[0.01], [0.9]],
                   [[0.03250000000000002], [0.875]], [[0.055], [0.8500000000000001]],
                   [[0.039999999999999994], [0.8666666666666667]],
                   [[0.025000000000000015], [0.8833333333333333]], [[0.01], [0.9]],
                   [[0.021250000000000012], [0.8875000000000001]], [[0.0325], [0.875]],
                   [[0.024999999999999998], [0.8833333333333334]]],
 'ExponentialLR': [[[0.1], [0]], [[0.08000000000000002], [0]], [[0.06400000000000002], [0]],
                   [[0.051200000000000016], [0]], [[0.04096000000000002], [0]],
                   [[0.03276800000000001], [0]], [[0.026214400000000013], [0]],
                   [[0.02097152000000001], [0]]],
 'LambdaLR': [[[0.1], [0]], [[0.09100000000000001], [0]], [[0.08300000000000002], [0]],
              [[0.07590000000000002], [0]], [[0.06961], [0]], [[0.06404900000000001], [0]],
              [[0.05914410000000001], [0]], [[0.054829690000000014], [0]],
              [[0.05104672100000001], [0]], [[0.047742048900000014], [0]],
              [[0.04486784401000002], [0]], [[0.04238105960900001], [0]]],
 'LambdaLR_groups': [[[0.1, 0.3], [0, 0]], [[0.05, 0.15], [0, 0]],
                     [[0.025, 0.09999999999999999], [0, 0]], [[0.0125, 0.075], [0, 0]],
                     [[0.00625, 0.06], [0, 0]], [[0.003125, 0.049999999999999996], [0, 0]],
                     [[0.0015625, 0.04285714285714285], [0, 0]], [[0.00078125, 0.0375], [0, 0]]],
 'LinearLR': [[[0.020000000000000004, 0.06], [0, 0]], [[0.034, 0.102], [0, 0]],
              [[0.048, 0.144], [0, 0]], [[0.062000000000000006, 0.186], [0, 0]],
              [[0.07600000000000001, 0.228], [0, 0]],
              [[0.09000000000000001, 0.26999999999999996], [0, 0]],
              [[0.09000000000000001, 0.26999999999999996], [0, 0]],
              [[0.09000000000000001, 0.26999999999999996], [0, 0]],
              [[0.09000000000000001, 0.26999999999999996], [0, 0]]],
 'MultiStepLR': [[[0.1], [0]], [[0.1], [0]], [[0.05], [0]], [[0.05], [0]], [[0.05], [0]],
                 [[0.0125], [0]], [[0.0125], [0]], [[0.0125], [0]], [[0.00625], [0]],
                 [[0.00625], [0]], [[0.00625], [0]], [[0.00625], [0]]],
 'MultiplicativeLR': [[[0.1], [0]], [[0.095], [0]], [[0.09025], [0]], [[0.0857375], [0]],
                      [[0.08145062499999998], [0]], [[0.07737809374999999], [0]],
                      [[0.07350918906249998], [0]], [[0.06983372960937498], [0]],
                      [[0.06634204312890622], [0]], [[0.0630249409724609], [0]]],
 'OneCycleLR': [[[0.0040000000000000036], [0.95]], [[0.0349789654219583], [0.9177302443521267]],
                [[0.08792851591221287], [0.8625744625914449]],
                [[0.09944154354509119], [0.8505584586887436]],
                [[0.09330129698414118], [0.856698729810778]],
                [[0.0811745653949763], [0.8688255099070633]],
                [[0.06473789976951033], [0.8852622412794547]],
                [[0.046263710266697504], [0.9037365046793212]],
                [[0.028306099820869922], [0.9216941869558779]],
                [[0.01334775301888306], [0.9366525935914912]],
                [[0.0034566987425395223], [0.9465436874322102]], [[4e-07], [0.95]]],
 'OneCycleLR_3': [[[0.002], [0.95]], [[0.019454545454545454], [0.9136363636363636]],
                  [[0.03690909090909091], [0.8772727272727272]],
                  [[0.04563636363636364], [0.859090909090909]],
                  [[0.028181818181818186], [0.8954545454545454]],
                  [[0.010727272727272724], [0.9318181818181818]], [[0.001882364705882353], [0.95]],
                  [[0.0016470941176470588], [0.95]], [[0.0014118235294117648], [0.95]],
                  [[0.0011765529411764707], [0.95]], [[0.0009412823529411766], [0.95]],
                  [[0.0007060117647058825], [0.95]], [[0.00047074117647058836], [0.95]],
                  [[0.00023547058823529424], [0.95]], [[2.0000000000011328e-07], [0.95]]],
 'PolynomialLR': [[[0.1], [0]], [[0.06944444444444446], [0]], [[0.04444444444444447], [0]],
                  [[0.02500000000000001], [0]], [[0.011111111111111117], [0]],
                  [[0.0027777777777777775], [0]], [[0.0], [0]], [[0.0], [0]], [[0.0], [0]]],
 'SequentialLR': [[[0.010000000000000002], [0]], [[0.04], [0]], [[0.07], [0]], [[0.1], [0]],
                  [[0.09000000000000001], [0]], [[0.08100000000000002], [0]],
                  [[0.07290000000000002], [0]], [[0.1], [0]], [[0.1], [0]], [[0.05], [0]],
                  [[0.05], [0]], [[0.025], [0]], [[0.025], [0]], [[0.0125], [0]]],
 'WarmRestarts': [[[0.1], [0]], [[0.07525000000000001], [0]], [[0.025750000000000012], [0]],
                  [[0.1], [0]], [[0.07525000000000001], [0]], [[0.025750000000000012], [0]],
                  [[0.1], [0]], [[0.07525000000000001], [0]], [[0.025750000000000012], [0]],
                  [[0.1], [0]]],
 'WarmRestarts_mult': [[[0.1, 0.3], [0, 0]], [[0.05500000000000001, 0.155], [0, 0]],
                       [[0.1, 0.3], [0, 0]], [[0.08681980515339464, 0.25753048327204936], [0, 0]],
                       [[0.05500000000000001, 0.155], [0, 0]],
                       [[0.023180194846605363, 0.05246951672795062], [0, 0]], [[0.1, 0.3], [0, 0]],
                       [[0.0965745789630079, 0.2889625322141366], [0, 0]],
                       [[0.08681980515339464, 0.25753048327204936], [0, 0]],
                       [[0.07222075445642905, 0.21048909769293803], [0, 0]],
                       [[0.05500000000000001, 0.155], [0, 0]],
                       [[0.03777924554357097, 0.09951090230706199], [0, 0]],
                       [[0.023180194846605363, 0.05246951672795062], [0, 0]],
                       [[0.013425421036992097, 0.02103746778586342], [0, 0]], [[0.1, 0.3], [0, 0]],
                       [[0.09913533761814537, 0.2972138656584684], [0, 0]]]}


def make_optimizer(kind):
    ps = [nn.Parameter(jitgrad.ones(1)) for _ in range(2)]
    if kind == "sgd":
        return optim.SGD(ps, lr=0.1)
    if kind == "sgd2":
        return optim.SGD([{"params": ps[:1]}, {"params": ps[1:], "lr": 0.3}], lr=0.1)
    if kind == "sgdm":
        return optim.SGD(ps, lr=0.1, momentum=0.9)
    return optim.Adam(ps, lr=0.1)


def momenta(opt):
    return [g.get("momentum", g.get("betas", (None,))[0]) for g in opt.param_groups]


@pytest.mark.parametrize("name,kind,src,steps", CASES, ids=[c[0] for c in CASES])
def test_sequence_matches_torch(name, kind, src, steps):
    opt = make_optimizer(kind)
    sched = eval(src, {"L": L, "opt": opt})
    for k, (lrs, moms) in enumerate(TORCH_SEQUENCES[name]):
        assert sched.get_last_lr() == pytest.approx(lrs, rel=1e-12, abs=1e-15), f"epoch {k}"
        assert momenta(opt) == pytest.approx(moms, rel=1e-12), f"epoch {k}"
        opt.step()
        sched.step()


@pytest.mark.parametrize("src", ["L.MultiStepLR(opt, [2, 5], 0.5)", "L.ConstantLR(opt, 0.25, 4)",
                                 "L.LinearLR(opt, 0.2, 0.9, 5)", "L.ExponentialLR(opt, 0.8)",
                                 "L.PolynomialLR(opt, 6, 2.0)"])
def test_closed_form_equals_recursion(src):
    opt = make_optimizer("sgd")
    sched = eval(src, {"L": L, "opt": opt})
    for _ in range(9):
        opt.step()
        sched.step()
        assert sched._get_closed_form_lr() == pytest.approx(sched.get_last_lr(), rel=1e-12)


def test_warm_restarts_fractional_epochs():
    opt = make_optimizer("sgd")
    sched = L.CosineAnnealingWarmRestarts(opt, T_0=2, T_mult=2, eta_min=0.0)
    for epoch, t_cur, t_i in [(0.5, 0.5, 2), (3.0, 1.0, 4), (6.5, 0.5, 8)]:
        sched.step(epoch)
        assert (sched.T_cur, sched.T_i) == (t_cur, t_i)
        assert sched.get_last_lr()[0] == pytest.approx(0.05 * (1 + math.cos(math.pi * t_cur / t_i)))


def test_state_dict_round_trip_resumes_the_sequence():
    name, kind, src, steps = CASES[[c[0] for c in CASES].index("WarmRestarts_mult")]
    opt = make_optimizer(kind)
    sched = eval(src, {"L": L, "opt": opt})
    for _ in range(5):
        opt.step()
        sched.step()
    opt2 = make_optimizer(kind)
    sched2 = eval(src, {"L": L, "opt": opt2})
    sched2.load_state_dict(sched.state_dict())
    for lrs, _ in TORCH_SEQUENCES[name][5:]:
        assert sched2.get_last_lr() == pytest.approx(lrs, rel=1e-12)
        sched2.step()


def test_lambda_state_dict_keeps_callable_objects_only():
    class Decay:
        def __init__(self):
            self.rate = 0.5

        def __call__(self, epoch):
            return self.rate ** epoch
    opt = make_optimizer("sgd2")
    sched = L.LambdaLR(opt, [Decay(), lambda e: 1.0])
    state = sched.state_dict()
    assert state["lr_lambdas"] == [{"rate": 0.5}, None]
    state["lr_lambdas"][0]["rate"] = 0.25
    sched.load_state_dict(state)
    sched.step()
    assert sched.get_last_lr() == pytest.approx([0.025, 0.3])


def test_errors():
    opt = make_optimizer("sgd")
    with pytest.raises(ValueError, match="between 0 and 1"):
        L.ConstantLR(opt, factor=2.0)
    with pytest.raises(ValueError, match="positive integer T_0"):
        L.CosineAnnealingWarmRestarts(opt, T_0=0)
    with pytest.raises(ValueError, match="number of milestone"):
        L.SequentialLR(opt, [L.ExponentialLR(opt, 0.9)], milestones=[2])
    with pytest.raises(ValueError, match="momentum or beta1"):
        L.CyclicLR(optim.Adagrad([nn.Parameter(jitgrad.ones(1))]), 0.1, 1.0)
    with pytest.raises(ValueError, match="total_steps"):
        L.OneCycleLR(opt, 0.1)
    sched = L.OneCycleLR(make_optimizer("sgdm"), 0.1, total_steps=2)
    sched.step()
    sched.step()
    with pytest.raises(ValueError, match="Tried to step 3 times"):
        sched.step()
