"""Statistics shared by evaluation, training and the benchmarks."""

from __future__ import annotations

import math

Z95 = 1.959963984540054


def wilson(successes: float, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval for a binomial proportion ((0, 1) when n == 0)."""
    if n <= 0:
        return (0.0, 1.0)
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    lo = 0.0 if successes <= 0 else max(0.0, centre - half)
    hi = 1.0 if successes >= n else min(1.0, centre + half)
    return (lo, hi)


def mean_ci(values, z: float = Z95) -> tuple[float, list[float]]:
    """The mean of ``values`` and its normal-approximation 95% interval, [mean - z·se, mean + z·se]
    with the sample standard deviation (a zero-width interval for fewer than two values)."""
    xs = [float(v) for v in values]
    n = len(xs)
    if n == 0:
        return 0.0, [0.0, 0.0]
    m = sum(xs) / n
    if n < 2:
        return m, [m, m]
    half = z * math.sqrt(sum((x - m) ** 2 for x in xs) / (n - 1) / n)
    return m, [m - half, m + half]
