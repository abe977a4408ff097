"""Training under seam.jit follows jax.jit: an MLP and a small transformer
block, 100 steps each of jax.value_and_grad and an Adam update (written
out, as optax computes it), the whole step one seam.jit function. The loss
curves agree to 1e-3 relative at every step (f32 rounding differs, as
between any two compilers, and a step feeds the next)."""

import numpy as np
import pytest

jax = pytest.importorskip("jax")

import seam  # noqa: E402
import train_problems  # noqa: E402

STEPS = 100
RTOL = 1e-3


def train(step, params, batches):
    opt = train_problems.adam_state(params)
    losses = []
    for batch in batches:
        params, opt, loss = step(params, opt, batch)
        losses.append(float(loss))
    return np.array(losses)


def compare(loss_fn, params, batches):
    step = train_problems.adam_step(loss_fn)
    with_seam = train(seam.jit(step), params, batches)
    with_xla = train(jax.jit(step), params, batches)
    assert with_xla[-1] < 0.5 * with_xla[0], "the reference did not learn"
    np.testing.assert_allclose(with_seam, with_xla, rtol=RTOL)


def test_mlp():
    compare(*train_problems.mlp_problem(STEPS))


def test_transformer_block():
    compare(*train_problems.transformer_problem(STEPS))
