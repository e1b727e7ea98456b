"""Student's t quantiles (scipy.stats.t): the confidence intervals of the chain model's costs."""

from __future__ import annotations


def t_quantile(q: float, dof: int) -> float:
    """The q quantile of Student's t with `dof` degrees of freedom (scipy.stats.t.ppf)."""
    from scipy import stats  # loaded when used: 0.6 s that every start-up need not pay

    return float(stats.t.ppf(q, dof))
