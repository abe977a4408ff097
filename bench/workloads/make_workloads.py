#!/usr/bin/env python3
"""Writes the synthetic benchmark workloads: plain JAX functions over fixed
shapes, lowered with jax.jit(fn).lower(*args) and saved as classic HLO text
(before XLA optimizes anything), so the benchmark reads them without JAX.

  bench/workloads/<name>.hlo   one module per workload
  bench/workloads/MANIFEST.md  what each models, shapes, bytes moved, versions

Usage (from anywhere; needs only python3 and PyPI):
  python3 bench/workloads/make_workloads.py            regenerate every workload
  python3 bench/workloads/make_workloads.py NAME...    just those
  python3 bench/workloads/make_workloads.py --list     the names

The script runs itself inside bench/.venv (git-ignored): it creates that venv
with `python3 -m venv` and pip-installs the pinned JAX there when missing, then
re-executes under it. The workloads are memory-intensive only (no dot, no
conv), modeled on the AStitch (ASPLOS'22) and FusionStitching evaluations, and
contain no RNG, sort or custom-call. Each is written to stay finite on Seam's
random inputs (uniform in [-1, 1)), see the notes in MANIFEST.md.
"""

import os
import subprocess
import sys

JAX_VERSION = "0.10.2"
PINNED = [f"jax[cpu]=={JAX_VERSION}", f"jaxlib=={JAX_VERSION}", "ml_dtypes==0.6.0",
          "numpy==2.4.6"]

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
VENV = os.path.join(ROOT, "bench", ".venv")
VENV_PYTHON = os.path.join(VENV, "bin", "python")
COMMAND = "python3 bench/workloads/make_workloads.py"


def in_venv():
  return os.path.realpath(sys.prefix) == os.path.realpath(VENV)


def has_pinned_jax():
  try:
    import jax
    import jaxlib
  except ImportError:
    return False
  return jax.__version__ == jaxlib.__version__ == JAX_VERSION


def bootstrap():
  """Re-executes this script in bench/.venv, creating it and installing the
  pinned JAX first where needed. SEAM_BENCH_PYTHON=current keeps the running
  interpreter and its packages (a machine with JAX preinstalled and no
  network, such as a lent GPU machine)."""
  if os.environ.get("SEAM_BENCH_PYTHON") == "current":
    return
  if in_venv():
    if not has_pinned_jax():
      subprocess.check_call([sys.executable, "-m", "pip", "install", "--quiet", *PINNED])
      os.execv(sys.executable, [sys.executable, os.path.abspath(__file__), *sys.argv[1:]])
    return
  if os.environ.get("SEAM_WORKLOADS_BOOTSTRAPPED"):
    sys.exit(f"make_workloads.py: could not run inside {VENV}")
  if not os.path.exists(VENV_PYTHON):
    print(f"creating {VENV} and installing {' '.join(PINNED)}", file=sys.stderr)
    subprocess.check_call(["python3", "-m", "venv", VENV])
  os.environ["SEAM_WORKLOADS_BOOTSTRAPPED"] = "1"
  os.execv(VENV_PYTHON, [VENV_PYTHON, os.path.abspath(__file__), *sys.argv[1:]])


bootstrap()
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import math  # noqa: E402

import numpy as np  # noqa: E402
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import jaxlib  # noqa: E402

sys.path.insert(0, os.path.dirname(HERE))
from jax_lowering import lower  # noqa: E402

F32 = jnp.float32
BF16 = jnp.bfloat16
PRED = jnp.bool_

WORKLOADS = []  # (name, fn, arg specs (pytree of ShapeDtypeStruct), class, description)


def workload(name, klass, description, *args):
  def register(fn):
    WORKLOADS.append((name, fn, args, klass, description))
    return fn
  return register


def spec(shape, dtype=F32):
  return jax.ShapeDtypeStruct(shape, dtype)


def softmax_last(x):
  m = jnp.max(x, axis=-1, keepdims=True)
  e = jnp.exp(x - m)
  return e / jnp.sum(e, axis=-1, keepdims=True)


def layer_norm(x, gamma, beta, eps=1e-12):
  mean = jnp.mean(x, axis=-1, keepdims=True)
  xc = x - mean
  var = jnp.mean(xc * xc, axis=-1, keepdims=True)
  return xc * jax.lax.rsqrt(var + eps) * gamma + beta


# --- transformer pieces ------------------------------------------------------

@workload("attention_softmax", "transformer (BERT/GPT attention)",
          "scores * 1/sqrt(64) + additive mask broadcast from [B,1,1,S], softmax over "
          "the last dim",
          spec((8, 12, 512, 512)), spec((8, 1, 1, 512)))
def attention_softmax(scores, mask):
  return softmax_last(scores * (1.0 / math.sqrt(64.0)) + mask)


@workload("bias_gelu", "transformer (BERT FFN)",
          "bias add then tanh-approximate GELU as in BERT: "
          "0.5*y*(1+tanh(sqrt(2/pi)*(y+0.044715*y^3)))",
          spec((8192, 3072)), spec((3072,)))
def bias_gelu(x, bias):
  y = x + bias
  return 0.5 * y * (1.0 + jnp.tanh(math.sqrt(2.0 / math.pi) * (y + 0.044715 * y * y * y)))


@workload("dropout_residual_layernorm", "transformer (BERT post-attention block)",
          "dropout with a precomputed pred keep-mask (x*mask/0.9, no RNG inside), add the "
          "residual, layer norm over the last dim with gamma/beta (eps 1e-12); outputs the "
          "normalized value",
          spec((8192, 768)), spec((8192, 768), PRED), spec((8192, 768)), spec((768,)),
          spec((768,)))
def dropout_residual_layernorm(x, keep_mask, residual, gamma, beta):
  keep = 0.9
  h = jnp.where(keep_mask, x * (1.0 / keep), 0.0) + residual
  return layer_norm(h, gamma, beta)


@workload("layernorm_backward", "transformer (BERT training, backward)",
          "gradients (dx, dgamma, dbeta) of y = layer_norm(x)*gamma + beta (eps 1e-12, "
          "normalized over the last dim) given x, dy, gamma; computed with jax.vjp",
          spec((8192, 768)), spec((8192, 768)), spec((768,)))
def layernorm_backward(x, dy, gamma):
  beta = jnp.zeros_like(gamma)
  _, vjp = jax.vjp(layer_norm, x, gamma, beta)
  dx, dgamma, dbeta = vjp(dy)
  return dx, dgamma, dbeta


@workload("rms_norm", "transformer (LLaMA-style RMSNorm, bf16)",
          "bf16 input converted to f32, x * rsqrt(mean(x^2) + 1e-6) * weight, output bf16",
          spec((8192, 4096), BF16), spec((4096,), BF16))
def rms_norm(x, weight):
  xf = x.astype(F32)
  ms = jnp.mean(xf * xf, axis=-1, keepdims=True)
  return (xf * jax.lax.rsqrt(ms + 1e-6) * weight.astype(F32)).astype(BF16)


@workload("vocab_log_softmax", "transformer (LM head, Gemma-3-size vocabulary)",
          "log-softmax over a 262144-word vocabulary for 64 tokens (the cross-entropy's "
          "log-probabilities): x - max - log(sum(exp(x - max))); a row is 1 MB",
          spec((64, 262144)))
def vocab_log_softmax(logits):
  m = jnp.max(logits, axis=-1, keepdims=True)
  shifted = logits - m
  return shifted - jnp.log(jnp.sum(jnp.exp(shifted), axis=-1, keepdims=True))


# --- recommendation: many short rows -----------------------------------------

@workload("dien_rows", "recommendation (DIEN-style many short irregular rows)",
          "per-row softmax over 32 columns (attention over a short behaviour history) "
          "times an elementwise sigmoid gate: many short rows",
          spec((500000, 32)), spec((500000, 32)))
def dien_rows(scores, gate):
  return softmax_last(scores) * jax.nn.sigmoid(gate)


# --- speech / OCR: reductions over non-last dims -----------------------------

@workload("batchnorm_relu_nchw", "speech/OCR/CNN (training-mode BatchNorm, NCHW)",
          "batch mean/var over N,H,W (reductions over non-last dims), normalize with "
          "gamma/beta (eps 1e-5), ReLU; also the running-stat update "
          "(momentum 0.1) as outputs",
          spec((32, 64, 112, 112)), spec((64,)), spec((64,)), spec((64,)), spec((64,)))
def batchnorm_relu_nchw(x, gamma, beta, running_mean, running_var):
  axes = (0, 2, 3)
  mean = jnp.mean(x, axis=axes)
  xc = x - mean[None, :, None, None]
  var = jnp.mean(xc * xc, axis=axes)
  inv = jax.lax.rsqrt(var + 1e-5)
  y = jnp.maximum(xc * (inv * gamma)[None, :, None, None] + beta[None, :, None, None], 0.0)
  momentum = 0.1
  n = x.shape[0] * x.shape[2] * x.shape[3]
  new_mean = (1 - momentum) * running_mean + momentum * mean
  new_var = (1 - momentum) * running_var + momentum * var * (n / (n - 1))
  return y, new_mean, new_var


@workload("column_reduce", "speech/OCR (column reductions, CRNN/ASR-style)",
          "reduce over dim 0: column mean, and column-normalize x / (sum over rows of |x| "
          "+ 1e-6) broadcast back along dim 0",
          spec((128, 30000)))
def column_reduce(x):
  col_mean = jnp.mean(x, axis=0)
  denom = jnp.sum(jnp.abs(x), axis=0) + 1e-6
  return x / denom[None, :], col_mean


# --- optimizer updates ---------------------------------------------------------

OPT_SHAPES = [(1024, 4096), (4096, 1024), (2048, 1024), (4096,)]


def opt_specs():
  tensors = [spec(s) for s in OPT_SHAPES]
  return tensors, list(tensors), list(tensors), list(tensors)


@workload("adam", "optimizer (Adam, BERT/transformer training)",
          "PyTorch-form Adam over 4 tensors (b1 0.9, b2 0.999, eps 1e-8): m, v moments, "
          "p -= step_size * m / (sqrt(v)/bc2_sqrt + eps); scalar inputs lr/bc1 "
          "(step_size) and sqrt(1-b2^t) (bc2_sqrt)",
          *opt_specs(), spec(()), spec(()))
def adam(params, grads, ms, vs, step_size, bc2_sqrt):
  b1, b2, eps = 0.9, 0.999, 1e-8
  new_p, new_m, new_v = [], [], []
  for p, g, m, v in zip(params, grads, ms, vs):
    v = jnp.abs(v)  # v >= 0 in training; keeps random test inputs NaN-free
    m = b1 * m + (1 - b1) * g
    v = b2 * v + (1 - b2) * g * g
    p = p - step_size * m / (jnp.sqrt(v) / bc2_sqrt + eps)
    new_p.append(p)
    new_m.append(m)
    new_v.append(v)
  return new_p, new_m, new_v


def l2_norm(x):
  """Blocked like apex's multi_tensor_l2norm: per-row partial sums, then their
  sum. One flat f32 sum over 4M elements accumulated in order (as Seam's
  reference interpreter does) is off by ~1e-3 relative, past --verify's
  tolerance once lr * ratio * u dominates the new parameter."""
  sq = x * x
  partial = jnp.sum(sq, axis=-1) if x.ndim > 1 else sq
  return jnp.sqrt(jnp.sum(partial))


@workload("lamb", "optimizer (LAMB, BERT large-batch training)",
          "LAMB over 4 tensors (b1 0.9, b2 0.999, eps 1e-6, weight decay 0.01): Adam-style "
          "update u = (m/bc1)/(sqrt(v)/bc2_sqrt + eps) + wd*p, per-tensor trust ratio "
          "||p||/||u|| (1 where either is 0; each norm blocked: row sums, then their sum), "
          "p -= lr*ratio*u; scalar inputs lr, bc1, bc2_sqrt",
          *opt_specs(), spec(()), spec(()), spec(()))
def lamb(params, grads, ms, vs, lr, bc1, bc2_sqrt):
  b1, b2, eps, wd = 0.9, 0.999, 1e-6, 0.01
  new_p, new_m, new_v = [], [], []
  for p, g, m, v in zip(params, grads, ms, vs):
    v = jnp.abs(v)  # v >= 0 in training; keeps random test inputs NaN-free
    m = b1 * m + (1 - b1) * g
    v = b2 * v + (1 - b2) * g * g
    u = (m / bc1) / (jnp.sqrt(v) / bc2_sqrt + eps) + wd * p
    p_norm = l2_norm(p)
    u_norm = l2_norm(u)
    ratio = jnp.where((p_norm > 0) & (u_norm > 0), p_norm / u_norm, 1.0)
    new_p.append(p - lr * ratio * u)
    new_m.append(m)
    new_v.append(v)
  return new_p, new_m, new_v


# --- writing -------------------------------------------------------------------

def leaves_bytes(tree):
  return sum(math.prod(leaf.shape) * np.dtype(leaf.dtype).itemsize
             for leaf in jax.tree_util.tree_leaves(tree))


def describe_specs(tree):
  """Shapes as HLO writes them, in order; a list of arrays becomes [..], and
  runs of identical entries collapse to `Nx entry`."""
  def one(leaf):
    dtype = {"float32": "f32", "bfloat16": "bf16", "bool": "pred"}[np.dtype(leaf.dtype).name]
    return f"{dtype}[{','.join(map(str, leaf.shape))}]"

  def collapse(items):
    out = []
    for item in items:
      if out and out[-1][0] == item:
        out[-1][1] += 1
      else:
        out.append([item, 1])
    return ", ".join(n if c == 1 else f"{c}x {n}" for n, c in out)

  items = tree if isinstance(tree, (tuple, list)) else [tree]
  return collapse([f"[{collapse([one(l) for l in item])}]" if isinstance(item, (tuple, list))
                   else one(item) for item in items])


def write_manifest(rows):
  mb = lambda b: f"{b / 1e6:.1f}"
  lines = [
      "# Synthetic benchmark workloads — MANIFEST",
      "",
      "Memory-intensive workloads (no dot, no conv, no RNG, sort or custom-call) written as",
      "plain JAX functions in `make_workloads.py` and committed as the classic HLO text",
      "`jax.jit(fn, keep_unused=True).lower(*args).as_text(dialect=\"hlo\")` gives (before",
      "any XLA optimization), so the benchmark needs no JAX. Workload classes follow the",
      "evaluations of AStitch (Zheng et al., ASPLOS'22) and FusionStitching (Zheng et al.,",
      "2020): transformer pieces, recommendation models with many small irregular rows,",
      "speech/OCR models with reductions over non-last dimensions, optimizer updates.",
      "",
      f"Regenerated with `{COMMAND}` from the repository root (it creates",
      "`bench/.venv` and installs the pinned versions there):",
      f"jax {jax.__version__}, jaxlib {jaxlib.__version__}, numpy {np.__version__},",
      f"Python {sys.version.split()[0]}.",
      "",
      "Bytes = every input read once + every output written once (the minimum traffic;",
      "MB = 10^6 bytes). Shapes are listed in parameter order; outputs after the arrow.",
      "",
      "| workload | models | inputs -> outputs | read MB | written MB | total MB |",
      "|---|---|---|---|---|---|",
  ]
  for name, klass, _, ins, outs, rb, wb in rows:
    lines.append(f"| `{name}` | {klass} | {ins} -> {outs} | {mb(rb)} | {mb(wb)} | "
                 f"{mb(rb + wb)} |")
  lines += ["", "## What each computes", ""]
  for name, _, description, *_ in rows:
    lines.append(f"- `{name}`: {description}.")
  lines += [
      "",
      "## Notes",
      "",
      "- Seam's random inputs are uniform in [-1, 1). To keep every output finite on them,",
      "  `adam`/`lamb` read the second moment through `abs(v)` (it is >= 0 in real",
      "  training; no extra traffic) and take `sqrt(1-b2^t)` rather than `1-b2^t` as a",
      "  scalar input, and `column_reduce` normalizes by the column sum of |x|, not of x.",
      "- `dropout_residual_layernorm` takes the keep-mask as a `pred` input instead of",
      "  drawing it, so the module holds no RNG.",
      "- The optimizer parameter tensors are f32[1024,4096], f32[4096,1024],",
      "  f32[2048,1024] and f32[4096] (10.5M elements); each function's inputs are the",
      "  lists params, grads, m, v (in that order) and then the scalars; outputs are the",
      "  lists new params, new m, new v.",
      "",
  ]
  with open(os.path.join(HERE, "MANIFEST.md"), "w") as f:
    f.write("\n".join(lines))


def main(argv):
  names = [w[0] for w in WORKLOADS]
  if argv[:1] == ["--list"]:
    print("\n".join(names))
    return
  unknown = [n for n in argv if n not in names]
  if unknown:
    sys.exit(f"unknown workload(s): {' '.join(unknown)}; --list shows the names")
  rows = []
  for name, fn, args, klass, description in WORKLOADS:
    outs = jax.eval_shape(fn, *args)
    if not argv or name in argv:
      hlo = lower(fn, args)
      if any(op in hlo for op in (" custom-call(", " rng(", " rng-bit-generator(", " sort(")):
        sys.exit(f"{name}: the HLO holds a custom-call, RNG or sort op")
      with open(os.path.join(HERE, f"{name}.hlo"), "w") as f:
        f.write(hlo)
      print(f"wrote bench/workloads/{name}.hlo ({len(hlo)} bytes)")
    rows.append((name, klass, description, describe_specs(args), describe_specs(outs),
                 leaves_bytes(args), leaves_bytes(outs)))
  write_manifest(rows)
  print("wrote bench/workloads/MANIFEST.md")


if __name__ == "__main__":
  main(sys.argv[1:])
