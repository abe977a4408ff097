"""Conformance cases for dot, convolution, sort, control flow, random numbers
and small networks (forward and backward)."""

import numpy as np
import jax
import jax.numpy as jnp
from jax import lax

from registry import case, BF16
from cases_ops import normal, ints

# ------------------------------------------------------------------------ dot


@case("dot_matmul")
def _(rng):
  a, b, v = normal(rng, (8, 16)), normal(rng, (16, 12)), normal(rng, (16,))
  return (lambda a, b, v: (a @ b, a @ v, jnp.dot(v, v))), [a, b, v]


@case("dot_general_batch_contract")
def _(rng):
  a, b = normal(rng, (3, 4, 5)), normal(rng, (3, 5, 2))
  c, d = normal(rng, (5, 4, 3)), normal(rng, (4, 6, 5))
  e, f = normal(rng, (4, 2, 3)), normal(rng, (3, 2, 5))
  return (lambda a, b, c, d, e, f: (
      jnp.einsum("bij,bjk->bik", a, b),
      lax.dot_general(c, d, (((0, 1), (2, 0)), ((), ()))),
      jnp.einsum("ibj,jbk->bik", e, f),
      lax.dot_general(a, a, (((2,), (2,)), ((0,), (0,)))))), [a, b, c, d, e, f]


@case("dot_mixed_precision")
def _(rng):
  a, b = normal(rng, (6, 8)).astype(BF16), normal(rng, (8, 5)).astype(BF16)
  i, j = ints(rng, (4, 9), -128, 128, np.int8), ints(rng, (9, 3), -128, 128, np.int8)
  h = normal(rng, (5, 8)).astype(np.float16)
  return (lambda a, b, i, j, h: (
      lax.dot(a, b, preferred_element_type=jnp.float32),
      lax.dot(a, b),
      lax.dot(i, j, preferred_element_type=jnp.int32),
      lax.dot(h, a.astype(jnp.float16).T, preferred_element_type=jnp.float32))), [a, b, i, j, h]


@case("dot_f64", x64=True)
def _(rng):
  a, b = normal(rng, (5, 7), dtype=np.float64), normal(rng, (7, 3), dtype=np.float64)
  i, j = ints(rng, (3, 4), -2**40, 2**40, np.int64), ints(rng, (4, 2), -1000, 1000, np.int64)
  return (lambda a, b, i, j: (a @ b, i @ j)), [a, b, i, j]


# ---------------------------------------------------------------- convolution


def conv(lhs, rhs, dn=("NCHW", "OIHW", "NCHW"), **kw):
  kw.setdefault("window_strides", (1,) * (lhs.ndim - 2))
  kw.setdefault("padding", "SAME")
  return lax.conv_general_dilated(lhs, rhs, dimension_numbers=dn, **kw)


@case("conv_nchw_same")
def _(rng):
  return (lambda x, w: conv(x, w)), [normal(rng, (2, 3, 6, 6)), normal(rng, (4, 3, 3, 3))]


@case("conv_nhwc_strided_padded")
def _(rng):
  x, w = normal(rng, (1, 7, 8, 3)), normal(rng, (3, 2, 3, 5))
  return (lambda x, w: conv(x, w, ("NHWC", "HWIO", "NHWC"), window_strides=(2, 3),
                            padding=((1, 0), (0, 2)))), [x, w]


@case("conv_lhs_rhs_dilation")
def _(rng):
  x, w = normal(rng, (1, 2, 5, 5)), normal(rng, (3, 2, 3, 2))
  return (lambda x, w: (conv(x, w, padding=((1, 1), (0, 1)), lhs_dilation=(2, 2)),
                        conv(x, w, padding="VALID", rhs_dilation=(2, 1)),
                        conv(x, w, padding=((2, -1), (1, 1)), window_strides=(2, 1),
                             lhs_dilation=(1, 2), rhs_dilation=(1, 2)))), [x, w]


@case("conv_depthwise")
def _(rng):
  x, w = normal(rng, (2, 5, 5, 4)), normal(rng, (3, 3, 1, 8))
  return (lambda x, w: conv(x, w, ("NHWC", "HWIO", "NHWC"), feature_group_count=4)), [x, w]


@case("conv_grouped_filter_grad")
def _(rng):
  x, w = normal(rng, (3, 4, 5, 5)), normal(rng, (6, 2, 3, 3))
  def loss(x, w):
    y = conv(x, w, feature_group_count=2)
    return jnp.sum(y * y)
  return jax.grad(loss, argnums=(0, 1)), [x, w]


@case("conv_1d_and_3d")
def _(rng):
  x1, w1 = normal(rng, (2, 9, 3)), normal(rng, (3, 3, 4))
  x3, w3 = normal(rng, (1, 2, 4, 4, 4)), normal(rng, (2, 2, 2, 2, 2))
  return (lambda x1, w1, x3, w3: (
      conv(x1, w1, ("NWC", "WIO", "NWC"), window_strides=(2,)),
      conv(x3, w3, ("NCDHW", "OIDHW", "NCDHW"), padding="VALID"))), [x1, w1, x3, w3]


@case("conv_transpose_bf16")
def _(rng):
  x, w = normal(rng, (1, 4, 4, 2)).astype(BF16), normal(rng, (3, 3, 2, 3)).astype(BF16)
  return (lambda x, w: (
      lax.conv_transpose(x, w, (2, 2), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")),
      conv(x, w, ("NHWC", "HWIO", "NHWC"), preferred_element_type=jnp.float32))), [x, w]


@case("conv_int")
def _(rng):
  x, w = ints(rng, (1, 2, 5, 5), -5, 5), ints(rng, (2, 2, 2, 2), -3, 3)
  return (lambda x, w: conv(x, w, padding="VALID")), [x, w]


# ---------------------------------------------------------------------- sort


@case("sort_f32_specials")
def _(rng):
  x = normal(rng, (40,))
  x[:8] = [np.nan, -0.0, 0.0, np.inf, -np.inf, 1.0, -0.0, np.nan]
  return (lambda x: (jnp.sort(x), jnp.sort(-x))), [x]


@case("sort_2d_axis")
def _(rng):
  x = ints(rng, (5, 6), -20, 20)
  u = ints(rng, (5, 6), 0, 2**32, np.int64).astype(np.uint32)
  return (lambda x, u: (jnp.sort(x, axis=0), jnp.sort(x, axis=1), jnp.sort(u, axis=1))), [x, u]


@case("argsort_stable")
def _(rng):
  x = ints(rng, (24,), 0, 5).astype(np.float32)
  return (lambda x: (jnp.argsort(x, stable=True), jnp.argsort(-x, stable=True))), [x]


@case("sort_multi_operand")
def _(rng):
  k1, k2 = ints(rng, (16,), 0, 3), ints(rng, (16,), 0, 4)
  v = normal(rng, (16,))
  return (lambda k1, k2, v: (lax.sort((k1, v, k2), num_keys=1, is_stable=True),
                             lax.sort((k1, k2, v), num_keys=2, is_stable=True))), [k1, k2, v]


@case("sort_custom_comparator")
def _(rng):
  x = ints(rng, (4, 10), -50, 50)
  return (lambda x: lax.sort(-x, dimension=1) * -1), [x]


@case("top_k")
def _(rng):
  x = normal(rng, (3, 12))
  x[0, 4] = x[0, 7] = 5.0
  return (lambda x: lax.top_k(x, 4)), [x]


# --------------------------------------------------------------- control flow


@case("while_loop_collatz")
def _(rng):
  n = ints(rng, (8,), 1, 30)
  def steps(n):
    def body(state):
      v, c = state
      active = v != 1
      nxt = jnp.where(v % 2 == 0, v // 2, 3 * v + 1)
      return jnp.where(active, nxt, v), c + active.astype(jnp.int32)
    return lax.while_loop(lambda s: jnp.any(s[0] != 1), body, (n, jnp.zeros_like(n)))[1]
  return steps, [n]


@case("fori_loop_carry")
def _(rng):
  x = normal(rng, (5,))
  def fn(x, k):
    def body(i, c):
      v, s = c
      return v * 0.9 + i.astype(jnp.float32), s + i
    return lax.fori_loop(0, 10, body, (x, k)), lax.fori_loop(0, k, lambda i, v: v * 2.0, x)
  return fn, [x, np.int32(3)]


@case("cond_branches")
def _(rng):
  x = normal(rng, (6,))
  def fn(p, q, x):
    a = lax.cond(p, lambda v: jnp.sin(v), lambda v: v * 3.0, x)
    b = lax.cond(q, lambda v: (v + 1, jnp.int32(1)), lambda v: (v - 1, jnp.int32(2)), x)
    return a, b
  return fn, [np.bool_(True), np.bool_(False), x]


@case("switch_index")
def _(rng):
  x = normal(rng, (4,))
  branches = [lambda v: v + 1.0, lambda v: v * v, lambda v: jnp.exp(v)]
  def fn(i, x):
    return tuple(lax.switch(i[k], branches, x) for k in range(4))
  return fn, [np.array([0, 2, -5, 9], np.int32), x]


@case("scan_cumulative")
def _(rng):
  xs = normal(rng, (7, 3))
  def fn(xs):
    def step(c, x):
      c = c * 0.5 + x
      return c, jnp.tanh(c)
    return lax.scan(step, jnp.zeros(3, jnp.float32), xs)
  return fn, [xs]


@case("nested_loops")
def _(rng):
  x = normal(rng, (3, 3))
  def fn(x):
    def outer(i, m):
      return lax.cond(i % 2 == 0, lambda m: m @ m * 0.5,
                      lambda m: lax.fori_loop(0, 2, lambda j, z: z + 1.0, m), m)
    return lax.fori_loop(0, 4, outer, x)
  return fn, [x]


# --------------------------------------------------------------------- random

KEY = np.array([0, 42], np.uint32)


@case("random_uniform_bits")
def _(rng):
  return (lambda k: (jax.random.uniform(k, (8, 8)), jax.random.bits(k, (16,)),
                     jax.random.randint(k, (12,), -5, 100))), [KEY]


@case("random_normal_split")
def _(rng):
  def fn(k):
    k1, k2 = jax.random.split(k)
    return jax.random.normal(k1, (32,)), jax.random.bernoulli(k2, 0.3, (16,)), k1
  return fn, [np.array([7, 1234], np.uint32)]


@case("random_permutation")
def _(rng):
  return (lambda k: jax.random.permutation(k, 16)), [np.array([3, 9], np.uint32)]


@case("rng_bit_generator")
def _(rng):
  def fn(key):
    return tuple(lax.rng_bit_generator(key, shape, dtype=dtype, algorithm=algorithm)
                 for algorithm in (lax.RandomAlgorithm.RNG_THREE_FRY,
                                   lax.RandomAlgorithm.RNG_PHILOX)
                 for shape, dtype in (((4, 6), jnp.uint32), ((5,), jnp.uint8)))
  return fn, [np.array([1, 2, 3, 4], np.uint32)]


# ------------------------------------------------------------------- networks


@case("softmax_logsumexp")
def _(rng):
  x = normal(rng, (4, 10), 3.0)
  x[0, :] = -np.inf
  x[0, 3] = 1.0
  x[1, 2] = 80.0
  return (lambda x: (jax.nn.softmax(x), jax.nn.log_softmax(x),
                     jax.scipy.special.logsumexp(x, axis=1))), [x]


@case("layer_norm")
def _(rng):
  x, g, b = normal(rng, (4, 32), 2.0), normal(rng, (32,)), normal(rng, (32,))
  def ln(x, g, b):
    m = jnp.mean(x, axis=-1, keepdims=True)
    v = jnp.mean((x - m) ** 2, axis=-1, keepdims=True)
    return (x - m) * lax.rsqrt(v + 1e-5) * g + b
  return ln, [x, g, b]


@case("activations")
def _(rng):
  x = normal(rng, (48,), 3.0)
  x[:6] = [0.0, -0.0, 20.0, -20.0, 1e-3, -5.5]
  return (lambda x: (jax.nn.gelu(x, approximate=True), jax.nn.gelu(x, approximate=False),
                     jax.nn.relu(x), jax.nn.silu(x), jax.nn.softplus(x), jax.nn.elu(x),
                     jax.nn.sigmoid(x))), [x]


@case("attention")
def _(rng):
  q, k, v = normal(rng, (2, 5, 8)), normal(rng, (2, 6, 8)), normal(rng, (2, 6, 8))
  def attn(q, k, v):
    s = jnp.einsum("bqd,bkd->bqk", q, k) / np.sqrt(8.0).astype(np.float32)
    mask = jnp.arange(6)[None, :] <= jnp.arange(5)[:, None] + 1
    s = jnp.where(mask, s, -1e9)
    return jnp.einsum("bqk,bkd->bqd", jax.nn.softmax(s, axis=-1), v)
  return attn, [q, k, v]


def mlp_params(rng, sizes, dtype=np.float32):
  params = []
  for n_in, n_out in zip(sizes[:-1], sizes[1:]):
    params += [normal(rng, (n_in, n_out), 1 / np.sqrt(n_in), dtype),
               normal(rng, (n_out,), 0.1, dtype)]
  return params


def mlp(params, x):
  for i in range(0, len(params) - 2, 2):
    x = jax.nn.gelu(x @ params[i] + params[i + 1])
  return x @ params[-2] + params[-1]


def xent(params, x, labels):
  logits = mlp(params, x)
  return -jnp.mean(jnp.take_along_axis(jax.nn.log_softmax(logits), labels[:, None], 1))


@case("mlp_forward_backward")
def _(rng):
  params = mlp_params(rng, [6, 12, 4])
  x, y = normal(rng, (5, 6)), ints(rng, (5,), 0, 4)
  return (lambda *a: jax.value_and_grad(xent)(list(a[:4]), a[4], a[5])), params + [x, y]


@case("mlp_sgd_step")
def _(rng):
  params = mlp_params(rng, [8, 16, 16, 3])
  x, y = normal(rng, (4, 8)), ints(rng, (4,), 0, 3)
  def step(*a):
    p = list(a[:6])
    loss, g = jax.value_and_grad(xent)(p, a[6], a[7])
    return [loss] + [w - 0.1 * dw for w, dw in zip(p, g)]
  return step, params + [x, y]


@case("mlp_bf16_forward")
def _(rng):
  params = mlp_params(rng, [8, 16, 4], BF16)
  x = normal(rng, (3, 8)).astype(BF16)
  return (lambda *a: mlp(list(a[:4]), a[4])), params + [x]


@case("cnn_nchw_train_step")
def _(rng):
  # A MobileNet-style block in PyTorch's channel-major layout, as a training
  # step: convolutions with batch-norm statistics, ReLU6, a depthwise
  # convolution, a residual add, average pooling and a dense head; the
  # gradients of every weight (and of the input, for data gradients of the
  # first convolution). Seam's channels-last pass rewrites all of it.
  x = normal(rng, (4, 3, 10, 10))
  w1, w2 = normal(rng, (8, 3, 3, 3), 0.4), normal(rng, (8, 1, 3, 3), 0.4)
  w3, head = normal(rng, (8, 8, 1, 1), 0.4), normal(rng, (8, 5), 0.4)
  gamma, beta = normal(rng, (8,), 0.2) + 1, normal(rng, (8,), 0.2)
  def bn(h):
    mean = jnp.mean(h, axis=(0, 2, 3), keepdims=True)
    var = jnp.mean(jnp.square(h - mean), axis=(0, 2, 3), keepdims=True)
    return (h - mean) * lax.rsqrt(var + 1e-5) * gamma[None, :, None, None] + beta[None, :, None, None]
  def loss(x, w1, w2, w3, head, gamma, beta):
    h = jnp.clip(bn(conv(x, w1)), 0, 6)
    d = jnp.clip(bn(conv(h, w2, feature_group_count=8)), 0, 6)
    r = conv(d, w3) + h
    pooled = jnp.mean(r, axis=(2, 3))
    return jnp.sum(jnp.square(pooled @ head))
  return jax.grad(loss, argnums=(0, 1, 2, 3, 4, 5, 6)), [x, w1, w2, w3, head, gamma, beta]


@case("cnn_grad")
def _(rng):
  w1, w2 = normal(rng, (3, 3, 1, 4), 0.5), normal(rng, (4 * 4 * 4, 3), 0.2)
  x = normal(rng, (2, 8, 8, 1))
  def loss(w1, w2, x):
    h = jax.nn.relu(conv(x, w1, ("NHWC", "HWIO", "NHWC")))
    h = lax.reduce_window(h, -np.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
    return jnp.sum(jax.nn.log_softmax(h.reshape(2, -1) @ w2)[:, 0])
  return jax.grad(loss, argnums=(0, 1)), [w1, w2, x]
