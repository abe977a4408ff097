"""Two small training problems in JAX, shared by the training tests and
bench/python_api.py: an MLP regression and a transformer block on a toy
next-token task, each a loss, initial parameters and batches, and an Adam
step (written out, as optax computes it) that one jit compiles whole."""

import numpy as np
import jax
import jax.numpy as jnp


def adam_step(loss_fn, lr=1e-2, b1=0.9, b2=0.999, eps=1e-8):
    def step(params, opt, batch):
        loss, grads = jax.value_and_grad(loss_fn)(params, batch)
        t = opt["t"] + 1
        m = jax.tree_util.tree_map(lambda m, g: b1 * m + (1 - b1) * g, opt["m"], grads)
        v = jax.tree_util.tree_map(lambda v, g: b2 * v + (1 - b2) * g * g, opt["v"], grads)
        scale = lr * jnp.sqrt(1 - b2 ** t) / (1 - b1 ** t)
        params = jax.tree_util.tree_map(lambda p, m, v: p - scale * m / (jnp.sqrt(v) + eps),
                                        params, m, v)
        return params, {"t": t, "m": m, "v": v}, loss
    return step


def adam_state(params):
    zeros = jax.tree_util.tree_map(jnp.zeros_like, params)
    return {"t": jnp.zeros((), jnp.float32), "m": zeros, "v": zeros}


def mlp_problem(steps, seed=0):
    """(loss_fn, params, batches) of a 16-64-64-4 GELU MLP regression."""
    rng = np.random.RandomState(seed)
    sizes = [16, 64, 64, 4]
    params = [{"w": (rng.standard_normal((a, b)) / np.sqrt(a)).astype(np.float32),
               "b": np.zeros(b, np.float32)} for a, b in zip(sizes, sizes[1:])]
    target = rng.standard_normal((16, 4)).astype(np.float32)

    def loss_fn(params, batch):
        h = batch["x"]
        for layer in params[:-1]:
            h = jax.nn.gelu(h @ layer["w"] + layer["b"])
        out = h @ params[-1]["w"] + params[-1]["b"]
        return jnp.mean((out - batch["y"]) ** 2)

    batches = []
    for _ in range(steps):
        x = rng.standard_normal((32, 16)).astype(np.float32)
        batches.append({"x": x, "y": np.tanh(x @ target)})
    return loss_fn, params, batches


def transformer_problem(steps, seed=1):
    """(loss_fn, params, batches) of one pre-norm transformer block (4
    heads, causal attention, GELU MLP) with embedding and head."""
    rng = np.random.RandomState(seed)
    d, heads, seq, vocab = 32, 4, 16, 24

    def dense(a, b):
        return (rng.standard_normal((a, b)) / np.sqrt(a)).astype(np.float32)

    params = {"embed": dense(vocab, d), "qkv": dense(d, 3 * d), "out": dense(d, d),
              "up": dense(d, 4 * d), "down": dense(4 * d, d), "head": dense(d, vocab),
              "ln1": np.ones(d, np.float32), "ln2": np.ones(d, np.float32)}

    def layer_norm(x, g):
        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        return (x - mean) * jax.lax.rsqrt(var + 1e-5) * g

    def loss_fn(p, batch):
        x = p["embed"][batch["tokens"]]  # [b, s, d]: a gather
        h = layer_norm(x, p["ln1"])
        q, k, v = jnp.split(h @ p["qkv"], 3, axis=-1)
        split = lambda t: t.reshape(t.shape[0], seq, heads, d // heads).transpose(0, 2, 1, 3)
        q, k, v = split(q), split(k), split(v)
        scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(d // heads)
        mask = np.tril(np.ones((seq, seq), bool))
        attn = jax.nn.softmax(jnp.where(mask, scores, -1e9), axis=-1) @ v
        x = x + attn.transpose(0, 2, 1, 3).reshape(x.shape) @ p["out"]
        x = x + jax.nn.gelu(layer_norm(x, p["ln2"]) @ p["up"]) @ p["down"]
        logits = x @ p["head"]
        logp = jax.nn.log_softmax(logits, axis=-1)
        return -jnp.take_along_axis(logp, batch["targets"][..., None], axis=-1).mean()

    batches = []
    for _ in range(steps):
        tokens = rng.randint(0, vocab, (4, seq)).astype(np.int32)
        batches.append({"tokens": tokens, "targets": (tokens + 1) % vocab})
    return loss_fn, params, batches
