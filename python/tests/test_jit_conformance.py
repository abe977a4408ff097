"""seam.jit against jax.jit on every conformance case (scripts/conformance:
small JAX functions over every op category Seam compiles, with edge values
placed first in their inputs): the same function, the same inputs, the
results compared leaf by leaf.

Tolerances, elementwise, `want` being jax.jit's value (NaN matches NaN):
integers and pred bit-exact; f32 and c64 |got - want| <= 1e-5 + 1e-4 |want|
(XLA's and Seam's vectorised exp, log and tanh differ in the last bits);
f64 1e-12 + 1e-12 |want|; f16 1e-3 + 1e-3 |want|; bf16 1e-2 + 2e-2 |want|
(either side may keep a bf16 value in f32 a little longer).

rng-bit-generator draws Seam's own documented stream, not XLA's bits: its
case is checked against Seam's interpreter (backend="interp") instead, and
against jax.jit only for its shapes and dtypes.
"""

import os
import sys
import zlib

import numpy as np
import pytest

jax = pytest.importorskip("jax")
import seam  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts", "conformance"))
from registry import CASES, BF16  # noqa: E402
import cases_ops  # noqa: E402,F401  (registers cases)
import cases_shapes  # noqa: E402,F401
import cases_compute  # noqa: E402,F401

# (atol, rtol) by numpy dtype name.
TOLERANCE = {"float32": (1e-5, 1e-4), "complex64": (1e-5, 1e-4), "float64": (1e-12, 1e-12),
             "complex128": (1e-12, 1e-12), "float16": (1e-3, 1e-3), "bfloat16": (1e-2, 2e-2)}
# Cases whose values are Seam's own by design.
SEAM_STREAM = {"rng_bit_generator"}


def assert_same(got, want, where):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, f"{where}: dtype {got.dtype}, jax.jit gives {want.dtype}"
    assert got.shape == want.shape, f"{where}: shape {got.shape}, jax.jit gives {want.shape}"
    if want.dtype.name not in TOLERANCE:
        np.testing.assert_array_equal(got, want, err_msg=where)
        return
    atol, rtol = TOLERANCE[want.dtype.name]
    wide = np.complex128 if np.iscomplexobj(want) else np.float64
    with np.errstate(invalid="ignore"):  # NaN payloads widen with a warning
        got, want = got.astype(wide), want.astype(wide)
    np.testing.assert_allclose(got, want, atol=atol, rtol=rtol, equal_nan=True, err_msg=where)


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_jax_jit(name):
    make, x64 = CASES[name]
    rng = np.random.RandomState(zlib.crc32(name.encode()))
    with jax.enable_x64(x64):
        fn, args = make(rng)
        args = [np.asarray(a) for a in args]
        want = jax.tree_util.tree_leaves(jax.jit(fn)(*args))
        got = jax.tree_util.tree_leaves(seam.jit(fn)(*args))
        if name in SEAM_STREAM:
            jax_shapes = [(w.shape, w.dtype) for w in want]
            want = jax.tree_util.tree_leaves(seam.jit(fn, backend="interp")(*args))
            assert [(w.shape, w.dtype) for w in want] == jax_shapes
    assert len(got) == len(want), f"{len(got)} outputs, jax.jit gives {len(want)}"
    for i, (g, w) in enumerate(zip(got, want)):
        assert isinstance(g, jax.Array), f"output {i} is a {type(g).__name__}, not a JAX array"
        assert_same(g, w, f"{name}, output {i}")
