"""Student's t quantiles (no SciPy): the confidence intervals of the chain model's costs."""

from __future__ import annotations

import math


def t_quantile(q: float, dof: int) -> float:
    """Student's t quantile by bisection on its CDF (regularized incomplete beta)."""
    def betacf(a: float, b: float, x: float) -> float:      # Numerical Recipes, modified Lentz
        tiny = 1e-300
        c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
        d = 1.0 / (d if abs(d) > tiny else tiny)
        h = d
        for m in range(1, 300):
            for num in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                        -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
                d = 1.0 + num * d
                d = 1.0 / (d if abs(d) > tiny else tiny)
                c = 1.0 + num / c
                c = c if abs(c) > tiny else tiny
                h *= d * c
            if abs(d * c - 1.0) < 1e-15:
                break
        return h

    def cdf(t: float) -> float:
        x = dof / (dof + t * t)
        a, b = dof / 2.0, 0.5
        front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
                         + a * math.log(x) + b * math.log1p(-x))
        tail = front * betacf(a, b, x) / a if x < (a + 1) / (a + b + 2) else \
            1.0 - front * betacf(b, a, 1 - x) / b
        return 1.0 - tail / 2 if t > 0 else tail / 2
    lo, hi = 0.0, 1e4
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if cdf(mid) < q else (lo, mid)
    return (lo + hi) / 2
