#!/usr/bin/env python3
"""Fits the coefficients of the generated-code prelude's seam_tanh and checks them.

seam_tanh(x) is x P(x^2) / Q(x^2) with x clamped to [-9, 9] (tanh rounds
to +-1 past it) and the result to [-1, 1]; P and Q are of degree 4 with
P(0) = Q(0) = 1. No exp and no branch: a quarter of the arithmetic of
1 - 2 / (e^2x + 1), the form it replaces. The pair is fitted for relative
error by linearized least squares on Chebyshev points of [0, 9] (x P - y Q
weighted by 1 / (y Q) of the last round: Loeb's iteration), reweighted
toward the worst error (Lawson's), in the variable x^2 / 81, which keeps
the system well conditioned. The check evaluates the float32 formula as
the prelude does (fma, float rounding at each step) over every float in
[2^-30, 9.5] against tanh in double and prints the worst error in ulp.

Needs numpy (bench/.venv has it):
  bench/.venv/bin/python scripts/fit_tanh.py [--check]
"""
import sys

import numpy as np

from float32_steps import fma, horner

TOP = 9.0
DEGREE = 4


def fit(points=8000, rounds=80):
    k = np.arange(points)
    x = np.maximum(TOP / 2 + TOP / 2 * np.cos(np.pi * (k + 0.5) / points), 1e-4)
    y = np.tanh(x)
    s = (x / TOP) ** 2
    powers = np.vander(s, DEGREE + 1, increasing=True)[:, 1:]
    # x (1 + sum a_i s^i) - y (1 + sum b_j s^j) = 0, solved for a and b.
    a = np.hstack([x[:, None] * powers, -y[:, None] * powers])
    rhs = y - x
    weight, q_last = np.ones_like(x), np.ones_like(x)
    best = None
    for _ in range(rounds):
        scale = weight / (y * q_last)
        c, *_ = np.linalg.lstsq(a * scale[:, None], rhs * scale, rcond=None)
        p_s = np.concatenate([[1.0], c[:DEGREE]])
        q_s = np.concatenate([[1.0], c[DEGREE:]])
        q = np.polyval(q_s[::-1], s)
        error = np.abs(x * np.polyval(p_s[::-1], s) / q - y) / y
        if best is None or error.max() < best[2]:
            best = (p_s, q_s, error.max())
        q_last = np.abs(q)
        weight = weight * np.sqrt(error / error.max()) + 1e-12
    p_s, q_s, _ = best
    # Back to the variable x^2.
    return ([np.float32(v / TOP ** (2 * i)) for i, v in enumerate(p_s)],
            [np.float32(v / TOP ** (2 * i)) for i, v in enumerate(q_s)])


def seam_tanh(x, p, q):
    top = np.float32(TOP)
    xc = np.where(top < x, top, x)
    xc = np.where(-top > xc, -top, xc)
    t = xc * xc
    r = (xc * horner(p, t)) / horner(q, t)
    r = np.where(np.float32(1) < r, np.float32(1), r)
    return np.where(np.float32(-1) > r, np.float32(-1), r)


def worst_ulp(p, q):
    lo = int(np.float32(2.0 ** -30).view(np.int32))
    hi = int(np.float32(9.5).view(np.int32))
    worst, at = 0, 0.0
    for start in range(lo, hi, 1 << 22):
        x = np.arange(start, min(hi, start + (1 << 22)), dtype=np.int32).view(np.float32)
        want = np.tanh(x.astype(np.float64)).astype(np.float32)
        ulp = np.abs(seam_tanh(x, p, q).view(np.int32).astype(np.int64) -
                     want.view(np.int32).astype(np.int64))
        if ulp.max() > worst:
            worst, at = int(ulp.max()), float(x[ulp.argmax()])
    return worst, at


def main():
    p, q = fit()
    # The shortest text that reads back as the same float.
    text = lambda v: np.format_float_scientific(v, unique=True, trim="-") + "f"
    print("P:", ", ".join(text(v) for v in p))
    print("Q:", ", ".join(text(v) for v in q))
    if "--check" in sys.argv:
        worst, at = worst_ulp(p, q)
        print(f"worst error over every float in [2^-30, 9.5]: {worst} ulp (at {at})")


if __name__ == "__main__":
    main()
