"""Conformance cases for data movement, reductions, windows, gather and
scatter."""

import numpy as np
import jax
import jax.numpy as jnp
from jax import lax
from jax._src.lax import windowed_reductions as windowed

from registry import case, BF16
from cases_ops import normal, ints

# ------------------------------------------------------------- data movement


@case("broadcast_in_dim")
def _(rng):
  return (lambda v, s: (lax.broadcast_in_dim(v, (2, 3, 4), (1,)),
                        lax.broadcast_in_dim(s, (3, 2), ()),
                        lax.broadcast_in_dim(v.reshape(3, 1), (3, 5), (0, 1)))), [
      normal(rng, (3,)), np.float32(2.5)]


@case("reshape_transpose")
def _(rng):
  x = normal(rng, (2, 3, 4))
  return (lambda x: (x.reshape(4, 3, 2), lax.transpose(x, (2, 0, 1)),
                     lax.reshape(x, (6, 4), dimensions=(1, 0, 2)), x.reshape(24),
                     jnp.swapaxes(x, 0, 2).reshape(8, 3))), [x]


@case("slice_strided")
def _(rng):
  x = ints(rng, (6, 5, 10), -100, 100)
  return (lambda x: (lax.slice(x, (1, 0, 2), (5, 3, 9), (2, 1, 3)),
                     lax.slice(x, (0, 4, 0), (6, 5, 10)), x[::-2, 1:4, ::4])), [x]


@case("dynamic_slice_clamped")
def _(rng):
  x = normal(rng, (6, 7))
  starts = np.array([0, 0, 5, 6, -3, 2, 100, -100, 1, 3], np.int32)
  def fn(x, s):
    return tuple(lax.dynamic_slice(x, (s[2 * k], s[2 * k + 1]), (3, 2)) for k in range(5))
  return fn, [x, starts]


@case("dynamic_update_slice_clamped")
def _(rng):
  x, u = normal(rng, (6, 7)), normal(rng, (2, 3))
  starts = np.array([1, 2, 5, 6, -3, -1, 100, 2], np.int32)
  def fn(x, u, s):
    return tuple(lax.dynamic_update_slice(x, u, (s[2 * k], s[2 * k + 1])) for k in range(4))
  return fn, [x, u, starts]


@case("concatenate")
def _(rng):
  a, b, c = normal(rng, (2, 3, 2)), normal(rng, (2, 1, 2)), normal(rng, (2, 4, 2))
  return (lambda a, b, c: (lax.concatenate([a, b, c], 1), jnp.concatenate([a, a], 0))), [a, b, c]


@case("pad_negative_interior")
def _(rng):
  x = normal(rng, (4, 5))
  return (lambda x: (lax.pad(x, np.float32(0.5), [(1, -1, 1), (-2, 3, 2)]),
                     lax.pad(x, np.float32(-1), [(0, 0, 0), (2, 1, 0)]),
                     lax.pad(x, np.float32(0), [(-2, -1, 0), (0, -3, 1)]))), [x]


@case("rev_iota")
def _(rng):
  x = ints(rng, (3, 4, 2), -9, 9)
  return (lambda x: (lax.rev(x, (0, 2)), lax.broadcasted_iota(jnp.int32, (3, 4), 1) + x[:, :, 0],
                     lax.broadcasted_iota(jnp.float32, (2, 5), 0),
                     jnp.arange(12, dtype=jnp.float32) * 0.5 + x.reshape(-1)[:12],
                     lax.iota(jnp.uint8, 7))), [x]


@case("copy_tuple_gte")
def _(rng):
  def fn(x, y):
    t = jax.lax.optimization_barrier((x, y))
    return t[1], t[0] * 2
  return fn, [normal(rng, (3,)), ints(rng, (2,), 0, 5)]


# ----------------------------------------------------------------- reduction


@case("reduce_sum_dims")
def _(rng):
  x = normal(rng, (3, 4, 5))
  return (lambda x: (jnp.sum(x, axis=(0, 2)), jnp.sum(x, axis=0), jnp.sum(x))), [x]


@case("reduce_max_min_nan")
def _(rng):
  x = normal(rng, (4, 6))
  x[1, 2] = np.nan
  x[2, :] = -np.inf
  x[3, 0] = np.inf
  return (lambda x: (jnp.max(x, axis=1), jnp.min(x, axis=0), lax.reduce_max(x, (0, 1)))), [x]


@case("reduce_prod_int")
def _(rng):
  x = normal(rng, (5, 4), 0.8)
  i = ints(rng, (3, 8), -2**31, 2**31)
  return (lambda x, i: (jnp.prod(x, axis=0), jnp.sum(i, axis=1), jnp.prod(i, axis=0),
                        jnp.max(i, axis=1), jnp.min(i.astype(jnp.uint32), axis=0))), [x, i]


@case("reduce_variadic_argmax")
def _(rng):
  x = ints(rng, (4, 7), 0, 5).astype(np.float32)
  x[0, 3] = np.nan
  def fn(x):
    idx = lax.broadcasted_iota(jnp.int32, x.shape, 1)
    def pick(a, b):
      (av, ai), (bv, bi) = a, b
      take_a = (av > bv) | ((av == bv) & (ai < bi))
      return lax.select(take_a, av, bv), lax.select(take_a, ai, bi)
    return lax.reduce((x, idx), (np.float32(-np.inf), np.int32(0)), pick, (1,))
  return fn, [x]


@case("argmax_argmin")
def _(rng):
  x = ints(rng, (5, 6), 0, 4).astype(np.float32)
  x[1, 4] = np.nan
  return (lambda x: (jnp.argmax(x, axis=1), jnp.argmin(x, axis=0), jnp.argmax(x))), [x]


@case("reduce_pred_any_all")
def _(rng):
  p = rng.rand(4, 5) < 0.3
  p[0, :] = True
  return (lambda p: (jnp.any(p, axis=1), jnp.all(p, axis=1), jnp.any(p, axis=0))), [p]


@case("reduce_bf16")
def _(rng):
  x = normal(rng, (4, 16)).astype(BF16)
  return (lambda x: (lax.reduce_sum(x, (1,)), lax.reduce_max(x, (0,)),
                     jnp.sum(x, axis=1), jnp.mean(x, axis=0, dtype=jnp.float32))), [x]


@case("reduce_4d_non_last")
def _(rng):
  x = normal(rng, (2, 3, 4, 5))
  return (lambda x: (jnp.sum(x, axis=(0, 1)), jnp.max(x, axis=(1, 3)), jnp.mean(x, axis=2))), [x]


# -------------------------------------------------------------- reduce_window


@case("max_pool")
def _(rng):
  x = normal(rng, (2, 6, 7, 3))
  x[0, 0, 0, 0] = np.nan
  return (lambda x: (lax.reduce_window(x, -np.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "SAME"),
                     lax.reduce_window(x, -np.inf, lax.max, (1, 3, 3, 1), (1, 2, 1, 1),
                                       "VALID"))), [x]


@case("avg_pool_padded")
def _(rng):
  x = normal(rng, (1, 2, 6, 6))
  def fn(x):
    s = lax.reduce_window(x, 0.0, lax.add, (1, 1, 3, 3), (1, 1, 1, 1),
                          ((0, 0), (0, 0), (1, 1), (1, 1)))
    n = lax.reduce_window(jnp.ones_like(x), 0.0, lax.add, (1, 1, 3, 3), (1, 1, 1, 1),
                          ((0, 0), (0, 0), (1, 1), (1, 1)))
    return s / n
  return fn, [x]


@case("reduce_window_dilated")
def _(rng):
  x = normal(rng, (5, 6))
  return (lambda x: (lax.reduce_window(x, 0.0, lax.add, (2, 2), (1, 2), ((1, 0), (2, 1)),
                                       base_dilation=(2, 1), window_dilation=(1, 2)),
                     lax.reduce_window(x, -np.inf, lax.max, (3, 2), (2, 1), ((0, 0), (0, 0)),
                                       window_dilation=(2, 2)))), [x]


@case("cumulative")
def _(rng):
  x = normal(rng, (4, 6))
  i = ints(rng, (10,), -5, 5)
  return (lambda x, i: (jnp.cumsum(x, axis=1), lax.cummax(x, axis=0), jnp.cumprod(i),
                        lax.cumsum(i, reverse=True))), [x, i]


@case("select_and_scatter_maxpool_grad")
def _(rng):
  x = ints(rng, (1, 6, 6, 2), 0, 6).astype(np.float32)  # ties in windows
  def pool(x):
    return lax.reduce_window(x, -np.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
  def loss(x):
    return jnp.sum(pool(x) * jnp.arange(18, dtype=jnp.float32).reshape(1, 3, 3, 2))
  return jax.grad(loss), [x]


@case("select_and_scatter_padded")
def _(rng):
  x = normal(rng, (5, 7))
  src = normal(rng, (3, 4))
  return (lambda x, s: windowed._select_and_scatter_add(
      s, x, lax.ge_p, (3, 3), (2, 2), ((1, 1), (1, 2)))), [x, src]


# ----------------------------------------------------------- gather / scatter


@case("gather_indexing")
def _(rng):
  x = normal(rng, (6, 5))
  i = np.array([0, 5, -1, 2, 2], np.int32)
  j = np.array([4, 0, 1, -5, 3], np.int32)
  return (lambda x, i, j: (x[i], x[:, j], x[i, j], x[i.reshape(5, 1), j[:2]],
                           x[1:4, j])), [x, i, j]


@case("gather_modes")
def _(rng):
  x = normal(rng, (7, 4))
  i = np.array([0, 6, 7, -1, 100, -100, 3], np.int32)
  return (lambda x, i: (jnp.take(x, i, axis=0, mode="clip"),
                        x.at[i].get(mode="fill", fill_value=-1.0),
                        jnp.take(x.T, i, axis=1, mode="clip"))), [x, i]


@case("dynamic_index_gather")
def _(rng):
  x = normal(rng, (4, 6, 3))
  i = np.array([2, 5], np.int32)
  return (lambda x, i: (x[i[0]], x[:, i[1], 1:], lax.dynamic_index_in_dim(x, i[1], 1))), [x, i]


@case("scatter_add_duplicates")
def _(rng):
  idx = np.array([0, 3, 3, 1, 0, 7, 3], np.int32)
  v = normal(rng, (7,))
  iv = ints(rng, (7, 2), -9, 9)
  return (lambda idx, v, iv: (jnp.zeros(8, jnp.float32).at[idx].add(v),
                              jnp.ones((8, 2), jnp.int32).at[idx].add(iv))), [idx, v, iv]


@case("scatter_set_max_min_mul")
def _(rng):
  x = normal(rng, (6, 3))
  idx = np.array([4, 0, 2], np.int32)
  dup = np.array([1, 1, 5], np.int32)
  u = normal(rng, (3, 3))
  return (lambda x, idx, dup, u: (x.at[idx].set(u), x.at[dup].max(u), x.at[dup].min(u),
                                  x.at[dup].mul(u), x.at[idx, 1].set(u[:, 0]))), [x, idx, dup, u]


@case("scatter_out_of_bounds")
def _(rng):
  x = normal(rng, (5, 4))
  idx = np.array([0, 5, -1, 100, 2], np.int32)
  u = normal(rng, (5, 4))
  return (lambda x, i, u: (x.at[i].add(u, mode="drop"), x.at[i].set(u, mode="drop"),
                           x.at[i].add(u, mode="clip"),
                           x.at[i].add(u, mode="promise_in_bounds"))), [x, idx, u]


@case("scatter_2d_indices")
def _(rng):
  x = jnp.zeros((4, 5), jnp.float32)
  i = np.array([0, 3, 3, 1], np.int32)
  j = np.array([4, 0, 0, 2], np.int32)
  v = normal(rng, (4,))
  return (lambda i, j, v: (x.at[i, j].add(v), x.at[i, 1:3].add(v[:, None]))), [i, j, v]


@case("gather_scatter_batched")
def _(rng):
  x = normal(rng, (3, 6))
  i = ints(rng, (3, 4), 0, 6)
  v = normal(rng, (3, 4))
  gather = jax.vmap(lambda row, ix: row[ix])
  scatter = jax.vmap(lambda row, ix, vs: row.at[ix].add(vs))
  return (lambda x, i, v: (gather(x, i), scatter(x, i, v))), [x, i, v]
