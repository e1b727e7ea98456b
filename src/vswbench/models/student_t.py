"""Student's t quantiles (scipy.stats.t): the confidence intervals of the chain model's costs."""

from __future__ import annotations

from scipy import stats


def t_quantile(q: float, dof: int) -> float:
    """The q quantile of Student's t with `dof` degrees of freedom (scipy.stats.t.ppf)."""
    return float(stats.t.ppf(q, dof))
