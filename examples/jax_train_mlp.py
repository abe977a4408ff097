#!/usr/bin/env python3
"""Trains a small MLP with seam.jit: the whole training step (loss,
jax.value_and_grad, an Adam update) is one JAX function that Seam compiles.
Prints the loss as it goes, then the same training under jax.jit, and the
time per step of both.

  PYTHONPATH=build/python build/pyenv/bin/python examples/jax_train_mlp.py
  (or, after `pip install '.[jax]'`: python examples/jax_train_mlp.py)
"""

import time

import jax
import jax.numpy as jnp
import numpy as np

import seam


def init(rng, sizes):
    return [{"w": jnp.asarray(rng.standard_normal((a, b)) / np.sqrt(a), jnp.float32),
             "b": jnp.zeros(b, jnp.float32)} for a, b in zip(sizes, sizes[1:])]


def loss_fn(params, x, y):
    for layer in params[:-1]:
        x = jax.nn.gelu(x @ layer["w"] + layer["b"])
    out = x @ params[-1]["w"] + params[-1]["b"]
    return jnp.mean((out - y) ** 2)


def train_step(params, m, v, t, x, y, lr=3e-3, b1=0.9, b2=0.999, eps=1e-8):
    loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
    t = t + 1
    m = jax.tree_util.tree_map(lambda m, g: b1 * m + (1 - b1) * g, m, grads)
    v = jax.tree_util.tree_map(lambda v, g: b2 * v + (1 - b2) * g * g, v, grads)
    scale = lr * jnp.sqrt(1 - b2 ** t) / (1 - b1 ** t)
    params = jax.tree_util.tree_map(lambda p, m, v: p - scale * m / (jnp.sqrt(v) + eps),
                                    params, m, v)
    return params, m, v, t, loss


def train(step, steps=300, log=None):
    rng = np.random.RandomState(0)
    params = init(rng, [256, 1024, 1024, 16])
    m = jax.tree_util.tree_map(jnp.zeros_like, params)
    v = jax.tree_util.tree_map(jnp.zeros_like, params)
    t = jnp.zeros((), jnp.float32)
    teacher = rng.standard_normal((256, 16)).astype(np.float32)
    # The batches are made first: numpy's BLAS threads, spinning after a
    # product, would slow whichever compiler's step came next.
    xs = [rng.standard_normal((512, 256)).astype(np.float32) for _ in range(steps)]
    ys = [np.tanh(x @ teacher) for x in xs]
    seconds = []
    for i, (x, y) in enumerate(zip(xs, ys)):
        start = time.perf_counter()
        params, m, v, t, loss = step(params, m, v, t, x, y)
        loss = float(loss)  # waits for the step
        seconds.append(time.perf_counter() - start)
        if log and (i % 50 == 0 or i == steps - 1):
            log(f"  step {i:3d}  loss {loss:.5f}")
    return loss, float(np.median(seconds[1:]))  # the first step compiles


def main():
    print("seam.jit:")
    seam_loss, seam_step = train(seam.jit(train_step), log=print)
    print("jax.jit:")
    jax_loss, jax_step = train(jax.jit(train_step), log=print)
    print(f"final loss: seam.jit {seam_loss:.5f}, jax.jit {jax_loss:.5f}")
    print(f"median time per step: seam.jit {seam_step * 1e3:.3f} ms, jax.jit "
          f"{jax_step * 1e3:.3f} ms ({jax_step / seam_step:.2f}x)")


if __name__ == "__main__":
    main()
