"""Write ``_pinned_core.py``: PyTorch's values for the cases of ``_cases_core.py``.

Run with a Python that has torch (CI has none; the tests read the pinned file):
``python tests/distributions/_make_pinned_core.py``."""
import pathlib
import sys

import torch
import torch.distributions as D

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from _cases_core import CASES, ICDF_AT, KL_CASES, METHODS  # noqa: E402

torch.set_default_dtype(torch.float64)


def build(cls, params):
    kwargs = {k: v[1] if isinstance(v, tuple) else torch.tensor(v) for k, v in params.items()}
    return getattr(D, cls)(**kwargs, validate_args=False)


def statistic(dist, method, value):
    try:
        if method == "log_prob":
            out = dist.log_prob(torch.tensor(value))
        elif method == "cdf":
            out = dist.cdf(torch.tensor(value))
        elif method == "icdf":
            out = dist.icdf(torch.tensor(ICDF_AT))
        elif method == "entropy":
            out = dist.entropy()
        else:
            out = getattr(dist, method)
    except (NotImplementedError, AttributeError):
        return None
    return out.detach().tolist()


def main():
    by_id = {case[0]: case for case in CASES}
    pinned = {}
    for case_id, cls, params, value in CASES:
        dist = build(cls, params)
        pinned[case_id] = {m: statistic(dist, m, value) for m in METHODS}
    kl = {}
    for kl_id, p_spec, q_spec in KL_CASES:
        p = build(*by_id[p_spec][1:3]) if isinstance(p_spec, str) else build(*p_spec)
        kl[kl_id] = D.kl_divergence(p, build(*q_spec)).tolist()
    path = pathlib.Path(__file__).with_name("_pinned_core.py")
    path.write_text('"""PyTorch ' + torch.__version__.split("+")[0] + "'s values for "
                    "_cases_core.py (written by _make_pinned_core.py; do not edit).\"\"\"\n"
                    "inf = float('inf')\nnan = float('nan')\n\n"
                    f"PINNED = {pinned!r}\n\nKL = {kl!r}\n")


if __name__ == "__main__":
    main()
