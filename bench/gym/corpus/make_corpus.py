#!/usr/bin/env python3
"""Writes the pass-ordering gym's training corpus: JAX functions of nine
model families at shapes, dtypes and variants drawn with a fixed seed,
lowered with jax.jit(fn).lower(*args) and saved as classic HLO text (before
XLA optimizes anything), so training reads them without JAX.

  bench/gym/corpus/<family>.<variant>.hlo   one module each
  bench/gym/corpus/MANIFEST.md              the split, every module, versions

The split is by family: transformer blocks and conv nets are held out for
testing (with ../shared/hlo's GPT-2, BERT and conv-net modules); nothing of
theirs is seen in training. The training families each hold pieces the test
families are built of (attention, MLPs, norms, losses), as a compiler's
users write new models out of known pieces.

Usage (needs only python3 and PyPI; runs itself in bench/.venv with the
pinned JAX of bench/workloads/make_workloads.py):
  python3 bench/gym/corpus/make_corpus.py           regenerate every module
  python3 bench/gym/corpus/make_corpus.py --list    the names, nothing written
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.abspath(os.path.join(HERE, "..", "..")))

import bench_venv  # noqa: E402

COMMAND = "python3 bench/gym/corpus/make_corpus.py"
bench_venv.enter(__file__, bench_venv.missing_pins, lambda missing: bench_venv.pip(*bench_venv.PINNED))
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import glob  # noqa: E402
import random  # noqa: E402

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import jaxlib  # noqa: E402
import numpy as np  # noqa: E402
from jax import lax  # noqa: E402
from jax_lowering import lower  # noqa: E402

SEED = 0
# Family -> (split, modules drawn). The test families are held out whole.
FAMILIES = {
    "mlp": ("train", 36),
    "attention": ("train", 36),
    "norm": ("train", 40),
    "optimizer": ("train", 36),
    "loss": ("train", 30),
    "scan": ("train", 30),
    "recsys": ("train", 30),
    "transformer": ("test", 30),
    "convnet": ("test", 30),
}
DTYPES = {"f32": jnp.float32, "bf16": jnp.bfloat16}


def spec(shape, dtype=jnp.float32):
  return jax.ShapeDtypeStruct(tuple(shape), dtype)


# --- pieces the families share ------------------------------------------------

ACTIVATIONS = {
    "relu": jax.nn.relu,
    "gelu": lambda x: jax.nn.gelu(x, approximate=True),
    "tanh": jnp.tanh,
    "silu": jax.nn.silu,
    "sigmoid": jax.nn.sigmoid,
}


def layer_norm(x, gamma, beta, eps=1e-5):
  mean = jnp.mean(x, axis=-1, keepdims=True)
  var = jnp.mean(jnp.square(x - mean), axis=-1, keepdims=True)
  return (x - mean) * lax.rsqrt(var + eps) * gamma + beta


def rms_norm(x, gamma, eps=1e-6):
  return x * lax.rsqrt(jnp.mean(jnp.square(x), axis=-1, keepdims=True) + eps) * gamma


def batch_norm(x, gamma, beta, axes, eps=1e-5):
  mean = jnp.mean(x, axis=axes, keepdims=True)
  var = jnp.var(x, axis=axes, keepdims=True)
  return (x - mean) * lax.rsqrt(var + eps) * gamma + beta


def attention(x, wq, wk, wv, wo, heads, causal):
  b, s, d = x.shape
  split = lambda t: t.reshape(b, s, heads, d // heads).transpose(0, 2, 1, 3)
  q, k, v = split(x @ wq), split(x @ wk), split(x @ wv)
  scores = jnp.einsum("bhqd,bhkd->bhqk", q, k) / np.sqrt(d // heads).astype(x.dtype)
  if causal:
    scores = jnp.where(jnp.tril(jnp.ones((s, s), bool)), scores, jnp.asarray(-1e9, x.dtype))
  out = jnp.einsum("bhqk,bhkd->bhqd", jax.nn.softmax(scores, axis=-1), v)
  return out.transpose(0, 2, 1, 3).reshape(b, s, d) @ wo


def train_step(loss, lr=1e-2):
  """A loss's gradient step (plain SGD): the forward, backward and update
  of every parameter in one module, as a training loop jits it."""
  def step(params, *batch):
    value, grads = jax.value_and_grad(loss)(params, *batch)
    return jax.tree_util.tree_map(lambda p, g: p - lr * g, params, grads), value
  return step


# --- the families: each draws a config and returns (variant, fn, args) ---------

def mlp(rng):
  depth = rng.choice([1, 2, 3, 4])
  width = rng.choice([64, 128, 256, 512, 1024])
  batch = rng.choice([8, 32, 128, 512])
  act = rng.choice(sorted(ACTIVATIONS))
  dt = rng.choice(sorted(DTYPES))
  mode = rng.choice(["fwd", "train"])
  dtype = DTYPES[dt]
  widths = [width] * depth + [rng.choice([1, 10, 64])]
  params = [(spec((a, b), dtype), spec((b,), dtype)) for a, b in zip([width] + widths[:-1], widths)]

  def forward(params, x):
    for i, (w, b) in enumerate(params):
      x = x @ w + b
      if i + 1 < len(params):
        x = ACTIVATIONS[act](x)
    return x

  def loss(params, x, y):
    return jnp.mean(jnp.square(forward(params, x) - y))

  x, y = spec((batch, width), dtype), spec((batch, widths[-1]), dtype)
  name = f"{act}_d{depth}_w{width}_b{batch}_{dt}.{mode}"
  if mode == "fwd":
    return name, forward, (params, x)
  return name, train_step(loss), (params, x, y)


def attention_family(rng):
  batch = rng.choice([1, 2, 4, 8])
  seq = rng.choice([16, 64, 128, 256])
  heads = rng.choice([1, 2, 4, 8])
  d = heads * rng.choice([16, 32, 64])
  causal = rng.random() < 0.5
  dt = rng.choice(sorted(DTYPES))
  mode = rng.choice(["fwd", "train"])
  dtype = DTYPES[dt]
  weights = [spec((d, d), dtype) for _ in range(4)]
  x = spec((batch, seq, d), dtype)

  def forward(weights, x):
    return attention(x, *weights, heads, causal)

  def loss(weights, x):
    return jnp.mean(jnp.square(forward(weights, x).astype(jnp.float32)))

  name = f"{'causal' if causal else 'full'}_b{batch}_s{seq}_h{heads}_d{d}_{dt}.{mode}"
  if mode == "fwd":
    return name, forward, (weights, x)
  return name, train_step(loss), (weights, x)


def norm(rng):
  kind = rng.choice(["layer", "rms", "batch_nhwc", "batch_nchw", "group"])
  dt = rng.choice(sorted(DTYPES))
  mode = rng.choice(["fwd", "bwd"])
  dtype = DTYPES[dt]
  if kind in ("layer", "rms"):
    rows, d = rng.choice([64, 512, 2048, 8192]), rng.choice([128, 768, 1024, 4096])
    shape, pshape = (rows, d), (d,)
  else:
    n, c, hw = rng.choice([2, 8, 32]), rng.choice([16, 64, 256]), rng.choice([7, 14, 28])
    shape = (n, hw, hw, c) if kind == "batch_nhwc" else (n, c, hw, hw)
    pshape = (c,) if kind == "batch_nhwc" else (1, c, 1, 1)
    if kind == "group":
      shape, pshape = (n, hw, hw, c), (c,)

  def forward(x, gamma, beta):
    if kind == "layer":
      return layer_norm(x, gamma, beta)
    if kind == "rms":
      return rms_norm(x, gamma) + 0 * beta
    if kind == "batch_nhwc":
      return batch_norm(x, gamma, beta, (0, 1, 2))
    if kind == "batch_nchw":
      return batch_norm(x, gamma, beta, (0, 2, 3))
    g = x.reshape(shape[:3] + (4, shape[3] // 4))
    return batch_norm(g, 1, 0, (1, 2, 4)).reshape(shape) * gamma + beta

  args = (spec(shape, dtype), spec(pshape, dtype), spec(pshape, dtype))
  name = f"{kind}_{'x'.join(map(str, shape))}_{dt}.{mode}"
  if mode == "fwd":
    return name, lambda x, g, b: jax.nn.relu(forward(x, g, b)), args

  def backward(x, gamma, beta, dy):
    _, vjp = jax.vjp(forward, x, gamma, beta)
    return vjp(dy)

  return name, backward, args + (spec(shape, dtype),)


def optimizer(rng):
  kind = rng.choice(["adam", "adamw", "lamb", "momentum", "adagrad", "rmsprop"])
  dt = rng.choice(sorted(DTYPES))
  dtype = DTYPES[dt]
  shapes = [tuple(rng.choice([[64], [256, 256], [1024, 1024], [768, 3072], [4096], [30522, 128]]))
            for _ in range(rng.choice([1, 2, 4, 6]))]
  tree = lambda: [spec(s, dtype) for s in shapes]

  def update(params, grads, m, v, step):
    b1, b2, lr, eps, wd = 0.9, 0.999, 1e-3, 1e-8, 0.01
    out = []
    for p, g, mi, vi in zip(params, grads, m, v):
      if kind == "momentum":
        mi = 0.9 * mi + g
        out.append((p - lr * mi, mi, vi))
        continue
      if kind == "adagrad":
        vi = vi + g * g
        out.append((p - lr * g / (jnp.sqrt(vi) + eps), mi, vi))
        continue
      if kind == "rmsprop":
        vi = 0.9 * vi + 0.1 * g * g
        out.append((p - lr * g * lax.rsqrt(vi + eps), mi, vi))
        continue
      mi = b1 * mi + (1 - b1) * g
      vi = b2 * vi + (1 - b2) * g * g
      mhat = mi / (1 - b1 ** step)
      vhat = vi / (1 - b2 ** step)
      u = mhat / (jnp.sqrt(vhat) + eps)
      if kind in ("adamw", "lamb"):
        u = u + wd * p
      if kind == "lamb":
        pn, un = jnp.linalg.norm(p.astype(jnp.float32)), jnp.linalg.norm(u.astype(jnp.float32))
        u = u * jnp.where((pn > 0) & (un > 0), pn / un, 1.0).astype(dtype)
      out.append((p - lr * u, mi, vi))
    return out

  name = f"{kind}_{len(shapes)}x_{'+'.join('x'.join(map(str, s)) for s in shapes)}_{dt}"
  if len(name) > 90:
    name = f"{kind}_{len(shapes)}x_{sum(int(np.prod(s)) for s in shapes)}el_{dt}"
  return name + ".update", update, (tree(), tree(), tree(), tree(), spec((), dtype))


def loss_family(rng):
  kind = rng.choice(["xent", "smoothed_xent", "log_softmax", "logsumexp", "sigmoid_xent"])
  batch = rng.choice([8, 64, 512, 2048])
  classes = rng.choice([10, 100, 1000, 8192, 32000])
  dt = rng.choice(sorted(DTYPES))
  mode = rng.choice(["fwd", "grad"])
  dtype = DTYPES[dt]

  def loss(logits, labels):
    if kind == "log_softmax":
      return jnp.sum(jax.nn.log_softmax(logits, axis=-1)[:, 0])
    if kind == "logsumexp":
      return jnp.mean(jax.nn.logsumexp(logits, axis=-1))
    if kind == "sigmoid_xent":
      y = (labels[:, None] == jnp.arange(classes)).astype(logits.dtype)
      return jnp.mean(jnp.maximum(logits, 0) - logits * y + jnp.log1p(jnp.exp(-jnp.abs(logits))))
    logp = jax.nn.log_softmax(logits.astype(jnp.float32), axis=-1)
    picked = jnp.take_along_axis(logp, labels[:, None], axis=-1)[:, 0]
    if kind == "smoothed_xent":
      return -jnp.mean(0.9 * picked + 0.1 * jnp.mean(logp, axis=-1))
    return -jnp.mean(picked)

  args = (spec((batch, classes), dtype), spec((batch,), jnp.int32))
  name = f"{kind}_b{batch}_c{classes}_{dt}.{mode}"
  return name, (loss if mode == "fwd" else jax.grad(loss)), args


def scan(rng):
  kind = rng.choice(["rnn", "gru", "ema", "cumsum_norm"])
  steps = rng.choice([4, 8, 16, 32])
  batch = rng.choice([1, 8, 32])
  d = rng.choice([32, 128, 256])
  mode = rng.choice(["fwd", "train"])
  dtype = jnp.float32

  def cell(params, h, x):
    if kind == "rnn":
      w, u = params
      return jnp.tanh(x @ w + h @ u)
    if kind == "gru":
      wz, uz, wh, uh = params
      z = jax.nn.sigmoid(x @ wz + h @ uz)
      return (1 - z) * h + z * jnp.tanh(x @ wh + (z * h) @ uh)
    if kind == "ema":
      (alpha,) = params
      return alpha * h + (1 - alpha) * x
    (gamma,) = params
    return layer_norm(h + x, gamma, 0.0)

  def forward(params, xs):
    def body(h, x):
      h = cell(params, h, x)
      return h, h
    h, hs = lax.scan(body, jnp.zeros((batch, d), dtype), xs)
    return h, hs

  def loss(params, xs):
    return jnp.mean(jnp.square(forward(params, xs)[1]))

  count = {"rnn": 2, "gru": 4, "ema": 1, "cumsum_norm": 1}[kind]
  pshape = (d,) if kind in ("ema", "cumsum_norm") else (d, d)
  params = [spec(pshape, dtype) for _ in range(count)]
  name = f"{kind}_t{steps}_b{batch}_d{d}.{mode}"
  args = (params, spec((steps, batch, d), dtype))
  return name, (forward if mode == "fwd" else train_step(loss)), args


def recsys(rng):
  tables = rng.choice([2, 4, 8, 16])
  rows = rng.choice([1000, 10000, 100000])
  dim = rng.choice([16, 32, 64])
  bag = rng.choice([1, 4, 20])
  batch = rng.choice([32, 256, 1024])
  dt = rng.choice(sorted(DTYPES))
  mode = rng.choice(["fwd", "train"])
  dtype = DTYPES[dt]
  hidden = rng.choice([64, 256])

  def forward(params, dense, ids):
    embs, (w1, b1), (w2, b2) = params
    pooled = [jnp.sum(jnp.take(e, ids[:, t], axis=0), axis=1) for t, e in enumerate(embs)]
    x = jnp.concatenate([dense] + pooled, axis=-1)
    return jax.nn.sigmoid(jax.nn.relu(x @ w1 + b1) @ w2 + b2)

  def loss(params, dense, ids, y):
    p = forward(params, dense, ids).astype(jnp.float32)
    return -jnp.mean(y * jnp.log(p + 1e-7) + (1 - y) * jnp.log(1 - p + 1e-7))

  width = 16 + tables * dim
  params = ([spec((rows, dim), dtype) for _ in range(tables)],
            (spec((width, hidden), dtype), spec((hidden,), dtype)),
            (spec((hidden, 1), dtype), spec((1,), dtype)))
  args = (params, spec((batch, 16), dtype), spec((batch, tables, bag), jnp.int32))
  name = f"t{tables}_r{rows}_d{dim}_bag{bag}_b{batch}_{dt}.{mode}"
  if mode == "fwd":
    return name, forward, args
  return name, train_step(loss), args + (spec((batch, 1), jnp.float32),)


def transformer(rng):
  layers = rng.choice([1, 2])
  batch = rng.choice([1, 2, 4])
  seq = rng.choice([32, 128, 256])
  heads = rng.choice([2, 4, 8])
  d = heads * rng.choice([32, 64])
  norm_kind = rng.choice(["layer", "rms"])
  causal = rng.random() < 0.5
  dt = rng.choice(sorted(DTYPES))
  mode = rng.choice(["fwd", "train"])
  dtype = DTYPES[dt]

  def block(p, x):
    g1, b1, wq, wk, wv, wo, g2, b2, w_in, w_out = p
    n = (lambda h, g, b: layer_norm(h, g, b)) if norm_kind == "layer" else (lambda h, g, b: rms_norm(h, g))
    x = x + attention(n(x, g1, b1), wq, wk, wv, wo, heads, causal)
    return x + jax.nn.gelu(n(x, g2, b2) @ w_in, approximate=True) @ w_out

  def forward(params, x):
    for p in params:
      x = block(p, x)
    return x

  def loss(params, x):
    return jnp.mean(jnp.square(forward(params, x).astype(jnp.float32)))

  one = [spec((d,), dtype), spec((d,), dtype)] + [spec((d, d), dtype) for _ in range(4)] + \
        [spec((d,), dtype), spec((d,), dtype), spec((d, 4 * d), dtype), spec((4 * d, d), dtype)]
  params = [list(one) for _ in range(layers)]
  name = f"{norm_kind}_{'causal' if causal else 'full'}_l{layers}_b{batch}_s{seq}_h{heads}_d{d}_{dt}.{mode}"
  x = spec((batch, seq, d), dtype)
  return name, (forward if mode == "fwd" else train_step(loss)), (params, x)


def convnet(rng):
  blocks = rng.choice([1, 2, 3])
  batch = rng.choice([1, 4, 16])
  hw = rng.choice([16, 32, 56])
  c = rng.choice([8, 16, 32, 64])
  residual = rng.random() < 0.5
  pool = rng.choice(["max", "avg"])
  dt = rng.choice(sorted(DTYPES))
  mode = rng.choice(["fwd", "train"])
  dtype = DTYPES[dt]

  def conv(x, w):
    return lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))

  def forward(params, x):
    stem, body, head = params
    x = jax.nn.relu(conv(x, stem))
    for w, g, b in body:
      y = jax.nn.relu(batch_norm(conv(x, w), g, b, (0, 1, 2)))
      x = x + y if residual else y
    if pool == "max":
      x = lax.reduce_window(x, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
    else:
      x = lax.reduce_window(x, 0.0, lax.add, (1, 2, 2, 1), (1, 2, 2, 1), "VALID") / 4
    return jnp.mean(x, axis=(1, 2)) @ head

  def loss(params, x, labels):
    logits = forward(params, x).astype(jnp.float32)
    return -jnp.mean(jnp.take_along_axis(jax.nn.log_softmax(logits), labels[:, None], axis=-1))

  params = (spec((3, 3, 3, c), dtype),
            [(spec((3, 3, c, c), dtype), spec((c,), dtype), spec((c,), dtype)) for _ in range(blocks)],
            spec((c, 10), dtype))
  x = spec((batch, hw, hw, 3), dtype)
  name = f"{'res' if residual else 'plain'}{blocks}_{pool}pool_b{batch}_hw{hw}_c{c}_{dt}.{mode}"
  if mode == "fwd":
    return name, forward, (params, x)
  return name, train_step(loss), (params, x, spec((batch,), jnp.int32))


MAKERS = {
    "mlp": mlp, "attention": attention_family, "norm": norm, "optimizer": optimizer,
    "loss": loss_family, "scan": scan, "recsys": recsys, "transformer": transformer,
    "convnet": convnet,
}


def draw():
  """(family, variant, fn, args) of every module: each family's configs
  drawn from its own seeded generator, duplicates skipped."""
  out = []
  for family, (_, count) in FAMILIES.items():
    rng = random.Random(f"{SEED}:{family}")
    seen = set()
    for _ in range(20 * count):
      if len(seen) == count:
        break
      variant, fn, args = MAKERS[family](rng)
      if variant in seen:
        continue
      seen.add(variant)
      out.append((family, variant, fn, args))
  return out


def write_manifest(rows):
  lines = [
      "# The pass-ordering gym's training corpus — MANIFEST",
      "",
      f"Generated by `{COMMAND}` (seed {SEED}) from plain JAX functions: each family's",
      "shapes, dtypes and variants are drawn from its own seeded generator, lowered with",
      "`jax.jit(fn, keep_unused=True).lower(*args)` and saved as HLO text before any XLA",
      f"optimization. jax {jax.__version__}, jaxlib {jaxlib.__version__}, numpy {np.__version__},",
      f"Python {sys.version.split()[0]}. `fwd` is a forward pass, `train` a loss's forward,",
      "backward and SGD update in one module, `bwd`/`grad` a gradient alone, `update` an",
      "optimizer step over a list of parameters.",
      "",
      "## Split (by family)",
      "",
      "Training sees the train families, the random generator (generator/random/<seed>)",
      "and ../shared/hlo's modules outside its test families; evaluation uses only the",
      "test families: here transformer blocks and conv nets, in ../shared/hlo GPT-2 /",
      "GPT-NeoX, BERT and the conv nets (ResNet, MobileNet, EfficientNet). A module's",
      "family is its file name up to the first dot.",
      "",
      "| family | split | modules | ops (min / median / max) |",
      "|---|---|---:|---:|",
  ]
  for family, (split, _) in FAMILIES.items():
    ops = sorted(n for f, _, n in rows if f == family)
    lines.append(f"| {family} | {split} | {len(ops)} | {ops[0]} / {ops[len(ops) // 2]} / {ops[-1]} |")
  lines += ["", "## Modules", "", "| file | instructions |", "|---|---:|"]
  for family, variant, n in rows:
    lines.append(f"| `{family}.{variant}.hlo` | {n} |")
  with open(os.path.join(HERE, "MANIFEST.md"), "w") as f:
    f.write("\n".join(lines) + "\n")


def main(argv):
  modules = draw()
  if "--list" in argv:
    for family, variant, _, _ in modules:
      print(f"{family}.{variant}")
    return 0
  for old in glob.glob(os.path.join(HERE, "*.hlo")):
    os.remove(old)
  rows = []
  for family, variant, fn, args in modules:
    text = lower(fn, args)
    with open(os.path.join(HERE, f"{family}.{variant}.hlo"), "w") as f:
      f.write(text)
    # Instructions: the lines of the form `name = type op(...)`.
    rows.append((family, variant, sum(1 for line in text.splitlines() if " = " in line and "(" in line)))
  write_manifest(rows)
  print(f"wrote {len(rows)} modules and MANIFEST.md to {HERE}")
  return 0


if __name__ == "__main__":
  sys.exit(main(sys.argv[1:]))
