"""Write ``_pinned_transforms.py``: PyTorch's values for ``test_transforms_*.py``.

Run with a Python that has torch (CI has none; the tests read the pinned file):
``python tests/distributions/_make_pinned_transforms.py``."""
import pathlib
import pprint

import torch
from torch.distributions import (LogNormal, HalfNormal, HalfCauchy, Gumbel, Weibull, Pareto,
    InverseGamma, Kumaraswamy, LogisticNormal, RelaxedBernoulli, RelaxedOneHotCategorical,
    GeneralizedPareto, transforms as T)
torch.set_default_dtype(torch.float64)
t = torch.tensor
CASES = {
    "LogNormal": (lambda: LogNormal(t([0.3, -0.5]), t([0.7, 1.3])), t([0.5, 2.0])),
    "HalfNormal": (lambda: HalfNormal(t([0.7, 1.3])), t([0.5, 2.0])),
    "HalfCauchy": (lambda: HalfCauchy(t([0.7, 1.3])), t([0.5, 2.0])),
    "Gumbel": (lambda: Gumbel(t([0.3, -0.5]), t([0.7, 1.3])), t([0.5, 2.0])),
    "Weibull": (lambda: Weibull(t([0.7, 1.3]), t([1.5, 2.5])), t([0.5, 2.0])),
    "Pareto": (lambda: Pareto(t([0.4, 1.1]), t([2.5, 3.5])), t([0.5, 2.0])),
    "InverseGamma": (lambda: InverseGamma(t([2.5, 3.5]), t([0.7, 1.3])), t([0.5, 2.0])),
    "Kumaraswamy": (lambda: Kumaraswamy(t([2.0, 0.5]), t([3.0, 2.0])), t([0.3, 0.6])),
    "GeneralizedPareto": (lambda: GeneralizedPareto(t([0.0, 1.0, 0.0]), t([1.0, 2.0, 1.5]),
                                                    t([0.25, -0.25, 0.0])), t([1.0, 2.0, 0.7])),
    "LogisticNormal": (lambda: LogisticNormal(t([0.2, -0.4, 0.1]), t([0.5, 1.0, 1.5])),
                       t([0.1, 0.2, 0.3, 0.4])),
    "RelaxedBernoulli": (lambda: RelaxedBernoulli(t(0.7), probs=t([0.3, 0.8])), t([0.2, 0.9])),
    "RelaxedOneHotCategorical": (lambda: RelaxedOneHotCategorical(t(0.5), probs=t([0.2, 0.3, 0.5])),
                                 t([0.1, 0.6, 0.3])),
}
Q = {"Kumaraswamy": t([0.2, 0.7]), "GeneralizedPareto": t([0.2, 0.7, 0.4])}
out = {}
for name, (make, x) in CASES.items():
    d = make()
    row = {"log_prob": d.log_prob(x)}
    for attr in ("mean", "variance", "mode"):
        try:
            row[attr] = getattr(d, attr)
        except NotImplementedError:
            pass
    row["entropy"] = d.entropy() if name not in ("LogisticNormal", "RelaxedBernoulli",
                                                 "RelaxedOneHotCategorical") else None
    row = {k: v for k, v in row.items() if v is not None}
    try:
        row["cdf"] = d.cdf(x)
        row["icdf"] = d.icdf(Q.get(name, t([0.2, 0.7])))
    except NotImplementedError:
        pass
    if name == "GeneralizedPareto":
        row["log_survival_function"] = d.log_survival_function(x)
        row["log_cdf"] = d.log_cdf(x)
    if name == "Kumaraswamy":
        row.pop("mode")  # PyTorch 2.13's mode is NaN for concentration0 > 1 (see kumaraswamy.py)
    out[name] = {k: v.tolist() for k, v in row.items()}
x = t([[0.3, -1.2, 0.5], [1.1, 0.4, -0.7]])
sb, cc = T.StickBreakingTransform(), T.CorrCholeskyTransform()
out["StickBreakingTransform"] = {"x": x.tolist(), "y": sb(x).tolist(),
                                 "log_abs_det_jacobian": sb.log_abs_det_jacobian(x, sb(x)).tolist()}
out["CorrCholeskyTransform"] = {"x": x.tolist(), "y": cc(x).tolist(),
                                "log_abs_det_jacobian": cc.log_abs_det_jacobian(x, cc(x)).tolist()}
HEADER = ('"""Reference values from PyTorch 2.13 (CPU, float64) for ``test_transforms_*.py``,\n'
          'written by ``_make_pinned_transforms.py``: the tests never import torch."""\n'
          "from math import inf, nan  # noqa: F401\n\nPINNED = ")
text = HEADER + pprint.pformat(out, width=99, sort_dicts=False) + "\n"
pathlib.Path(__file__).with_name("_pinned_transforms.py").write_text(text)
