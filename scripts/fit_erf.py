#!/usr/bin/env python3
"""Fits the coefficients of the generated-code prelude's seam_erf and checks them.

seam_erf(x) is x + x P(x^2) below |x| = 1 and sign(x) (1 - e^-x^2 Q(1/|x|))
from there, |x| clamped to 3.9375 (erf rounds to 1 past it); Q approximates
erfcx(x) = erfc(x) e^x^2. Each polynomial is fitted by least squares on
Chebyshev points, reweighted toward the worst error (Lawson's iteration):
absolute error for P, relative for Q. The check evaluates the float32
formula as the prelude does (fma, float rounding at each step, a correctly
rounded exp standing in for seam_exp) over every float in [2^-30, 4.5]
against erf in double and prints the worst error in ulp.

Needs numpy and scipy (bench/.venv has both):
  bench/.venv/bin/python scripts/fit_erf.py [--check]
"""
import sys

import numpy as np
from scipy.special import erf, erfcx

from float32_steps import fma, horner

SPLIT, TOP = 1.0, 3.9375
P_DEGREE, Q_DEGREE = 6, 9


def fit(f, lo, hi, degree, variable, relative, points=4000, rounds=30):
    k = np.arange(points)
    x = (lo + hi) / 2 + (hi - lo) / 2 * np.cos(np.pi * (k + 0.5) / points)
    y = f(x)
    a = np.vander(variable(x), degree + 1, increasing=True)
    scale = 1 / np.abs(y) if relative else np.ones_like(y)
    weight = np.ones_like(y)
    for _ in range(rounds):
        c, *_ = np.linalg.lstsq(a * (weight * scale)[:, None], y * weight * scale, rcond=None)
        error = np.abs(a @ c - y) * scale
        weight = weight * np.sqrt(error / error.max()) + 1e-12
    return [np.float32(v) for v in c]


def seam_erf(x, p, q):
    x = x.astype(np.float32)
    a = np.abs(x)
    small = fma(x, horner(p, (x * x).astype(np.float32)), x)
    clamped = np.minimum(np.maximum(a, np.float32(SPLIT)), np.float32(TOP))
    tail = np.exp(-(clamped * clamped).astype(np.float32).astype(np.float64)).astype(np.float32)
    u = (np.float32(1) / clamped).astype(np.float32)
    large = np.copysign((np.float32(1) - (tail * horner(q, u)).astype(np.float32)), x)
    return np.where(a >= np.float32(SPLIT), large, small)


def worst_ulp(p, q):
    worst, at = 0.0, 0.0
    lo, hi = int(np.float32(2.0**-30).view(np.uint32)), int(np.float32(4.5).view(np.uint32))
    for start in range(lo, hi, 1 << 24):
        x = np.arange(start, min(start + (1 << 24), hi), dtype=np.uint32).view(np.float32)
        want = erf(x.astype(np.float64))
        error = np.abs(seam_erf(x, p, q) - want) / np.spacing(want.astype(np.float32))
        i = int(np.argmax(error))
        if error[i] > worst:
            worst, at = float(error[i]), float(x[i])
    return worst, at


def main():
    p = fit(lambda x: erf(x) / x - 1, 1e-4, SPLIT, P_DEGREE, lambda x: x * x, relative=False)
    q = fit(erfcx, SPLIT, TOP, Q_DEGREE, lambda x: 1 / x, relative=True)
    show = lambda cs: ", ".join(np.format_float_scientific(c, unique=True, trim="-") + "f" for c in cs)
    print("P (z^0 first):", show(p))
    print("Q (u^0 first):", show(q))
    if "--check" in sys.argv:
        print("worst error %.2f ulp at x = %r" % worst_ulp(p, q))


if __name__ == "__main__":
    main()
