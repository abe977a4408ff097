"""The generated-code prelude's float32 arithmetic, step by step in numpy, for
the scripts that fit its functions (fit_erf.py, fit_tanh.py): an fma rounds
once, to float32; a polynomial is Horner's rule in fmas."""
import numpy as np


def fma(a, b, c):
    return (a.astype(np.float64) * b.astype(np.float64) + c.astype(np.float64)).astype(np.float32)


def horner(coefficients, t):
    """coefficients[0] + coefficients[1] t + ..., from the highest term."""
    p = np.full_like(t, coefficients[-1])
    for c in reversed(coefficients[:-1]):
        p = fma(p, t, np.full_like(t, c))
    return p
