"""Conformance cases for single HLO ops: elementwise, compare, convert,
bitcast, data movement. Each case is `make(rng) -> (fn, args)`; see
make_goldens.py for how they become goldens."""

import numpy as np
import jax.numpy as jnp
from jax import lax
from jax._src import core
from jax._src.lax import lax as lax_internal
from jax._src.lib.mlir.dialects import hlo
from jax.extend.core import Primitive
from jax.interpreters import mlir

from registry import case, BF16

NAN, INF = np.float32(np.nan), np.float32(np.inf)
S32_MIN, S32_MAX = np.iinfo(np.int32).min, np.iinfo(np.int32).max

# Edge values every float op sees; no f32 subnormals (XLA CPU flushes them).
F32_EDGES = [np.nan, np.inf, -np.inf, -0.0, 0.0, 1.0, -1.0, 0.5, -0.5, 1.5, 2.5, -2.5,
             3.5, -3.5, 0.49999997, 1e-3, 100.0, -1e4, 1e20, -1e20, 3.0e38, -3.0e38]
# Moderate magnitudes for ops whose large-argument behaviour is the peer's
# approximation rather than a semantic (trigonometric range reduction).
TRIG_EDGES = [np.nan, np.inf, -np.inf, -0.0, 0.0, 1.0, -1.0, 0.5, 1.5707964, 3.1415927,
              -3.1415927, 10.0, -100.0, 1000.0]
S32_EDGES = [S32_MIN, S32_MAX, S32_MIN + 1, -1, 0, 1, 2, -2, 7, -7, 255, 65536]


def with_edges(rng, n, edges, scale=3.0, dtype=np.float32):
  """At least n values: the edges, then normal samples times `scale`."""
  n = max(n, len(edges) + 8)
  values = (rng.standard_normal(n) * scale).astype(np.float64)
  values[:len(edges)] = edges
  return values.astype(dtype)


def normal(rng, shape, scale=1.0, dtype=np.float32):
  return (rng.standard_normal(shape) * scale).astype(dtype)


def ints(rng, shape, lo, hi, dtype=np.int32, edges=()):
  values = rng.randint(lo, hi, size=shape, dtype=np.int64)
  flat = values.reshape(-1)
  flat[:len(edges)] = edges
  return values.astype(dtype)


# ---------------------------------------------------------------- unary float

def unary_case(name, fn, edges=F32_EDGES, scale=3.0, shift=0.0):
  @case(name)
  def make(rng):
    return fn, [with_edges(rng, 40, edges, scale) + np.float32(shift)]


unary_case("abs_f32", lax.abs)
unary_case("neg_f32", lax.neg)
unary_case("sign_f32", lax.sign)
unary_case("floor_f32", lax.floor)
unary_case("ceil_f32", lax.ceil)
unary_case("round_nearest_even_f32",
           lambda x: lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN))
unary_case("round_away_from_zero_f32",
           lambda x: lax.round(x, lax.RoundingMethod.AWAY_FROM_ZERO))
unary_case("sqrt_f32", lax.sqrt)
unary_case("rsqrt_f32", lax.rsqrt)
unary_case("cbrt_f32", lax.cbrt)
unary_case("exp_f32", lax.exp, edges=F32_EDGES[:16] + [88.0, 89.0, -80.0, -104.0])
unary_case("expm1_f32", lax.expm1, edges=F32_EDGES[:16] + [1e-6, -1e-7, 88.0, -90.0])
unary_case("log_f32", lax.log)
unary_case("log1p_f32", lax.log1p, edges=F32_EDGES + [-0.999, 1e-7, -1e-7])
unary_case("logistic_f32", lax.logistic, edges=F32_EDGES[:16] + [30.0, -30.0, -90.0])
# lax.logistic lowers to 1 / (1 + exp(-x)); this one reaches HLO `logistic`.
logistic_p = Primitive("hlo_logistic")
logistic_p.def_abstract_eval(lambda x: core.ShapedArray(x.shape, x.dtype))
mlir.register_lowering(logistic_p, lambda ctx, x: [hlo.logistic(x)])
unary_case("logistic_op_f32", logistic_p.bind, edges=F32_EDGES[:16] + [30.0, -30.0, -90.0])
unary_case("sin_f32", lax.sin, edges=TRIG_EDGES)
unary_case("cos_f32", lax.cos, edges=TRIG_EDGES)
unary_case("tan_f32", lax.tan, edges=TRIG_EDGES, scale=1.0)
unary_case("tanh_f32", lax.tanh, edges=F32_EDGES + [8.0, -9.5, 1e-4])
unary_case("erf_f32", lax.erf, edges=F32_EDGES + [3.9, -4.1, 1e-4])
unary_case("erf_inv_f32", lax.erf_inv, edges=[np.nan, 1.0, -1.0, 0.0, -0.0, 0.999, -0.5, 1.5],
           scale=0.4)
unary_case("is_finite_f32", lax.is_finite)
unary_case("lgamma_digamma_f32", lambda x: (lax.lgamma(x), lax.digamma(x)),
           edges=[np.nan, np.inf, 1.0, 2.0, 0.5, 3.5, 10.0, 30.0], scale=2.0, shift=4.0)
unary_case("reduce_precision_f32", lambda x: (lax.reduce_precision(x, 5, 10),
                                              lax.reduce_precision(x, 8, 7),
                                              lax.reduce_precision(x, 4, 3)))


@case("square_integer_pow_f32")
def _(rng):
  return (lambda x: (x * x, lax.integer_pow(x, 3), lax.integer_pow(x, -2))), [
      with_edges(rng, 32, F32_EDGES[:14])]


# --------------------------------------------------------------- binary float

def pairs(rng, n, edges):
  """x and y with every pair of `edges` followed by normal samples."""
  e = np.array(edges, np.float32)
  xs, ys = np.meshgrid(e, e, indexing="ij")
  x = np.concatenate([xs.reshape(-1), normal(rng, n, 3.0)])
  y = np.concatenate([ys.reshape(-1), normal(rng, n, 3.0)])
  return x, y


BINARY_EDGES = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 2.5, -3.0, 0.5]


@case("arith_f32")
def _(rng):
  x, y = pairs(rng, 24, BINARY_EDGES)
  return (lambda a, b: (a + b, a - b, a * b, a / b)), [x, y]


@case("max_min_f32")
def _(rng):
  x, y = pairs(rng, 24, BINARY_EDGES)
  return (lambda a, b: (lax.max(a, b), lax.min(a, b))), [x, y]


@case("atan2_f32")
def _(rng):
  x, y = pairs(rng, 24, BINARY_EDGES)
  return lax.atan2, [x, y]


@case("pow_f32")
def _(rng):
  x, y = pairs(rng, 24, [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 2.0, -8.0, 0.5, 3.0,
                         -2.0, 1.0 / 3.0])
  x[-24:] = np.abs(x[-24:])
  return lax.pow, [x, y]


@case("rem_f32")
def _(rng):
  x, y = pairs(rng, 24, [np.nan, np.inf, -np.inf, 0.0, -0.0, 7.5, -7.5, 2.0, -2.0, 0.3])
  return lax.rem, [x, y]


@case("nextafter_f32")
def _(rng):
  x, y = pairs(rng, 8, [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0])
  return jnp.nextafter, [x, y]


@case("select_clamp_f32")
def _(rng):
  x = with_edges(rng, 24, F32_EDGES[:10])
  y = normal(rng, 24)
  p = rng.rand(24) < 0.5
  lo, hi = np.float32(-1.0), np.float32(2.0)
  return (lambda p, x, y: (lax.select(p, x, y), lax.clamp(lo, x, hi),
                           lax.clamp(y - 1, x, y + 1))), [p, x, y]


@case("select_n_s32")
def _(rng):
  which = ints(rng, (20,), 0, 3)
  return (lambda w, a, b, c: lax.select_n(w, a, b, c)), [
      which, ints(rng, (20,), -9, 9), ints(rng, (20,), -9, 9), ints(rng, (20,), -9, 9)]


# ------------------------------------------------------------------- integers

@case("arith_s32_wrap")
def _(rng):
  x = ints(rng, (32,), -2**31, 2**31, edges=S32_EDGES)
  y = ints(rng, (32,), -2**31, 2**31, edges=S32_EDGES[::-1])
  return (lambda a, b: (a + b, a - b, a * b, lax.neg(a), lax.abs(a), lax.sign(a),
                        lax.max(a, b), lax.min(a, b))), [x, y]


@case("div_rem_s32")
def _(rng):
  x = np.array([7, -7, 7, -7, S32_MIN, S32_MIN, S32_MIN, 5, -5, 0, S32_MAX, 1] +
               list(ints(rng, (20,), -1000, 1000)), np.int32)
  y = np.array([2, 2, -2, -2, -1, 1, 0, 0, 0, 0, -1, S32_MIN] +
               list(ints(rng, (20,), -20, 20)), np.int32)
  return (lambda a, b: (lax.div(a, b), lax.rem(a, b))), [x, y]


@case("div_rem_u32")
def _(rng):
  x = np.array([7, 0, 2**32 - 1, 2**31, 5, 100] + list(ints(rng, (18,), 0, 2**32, np.int64)),
               np.uint64).astype(np.uint32)
  y = np.array([2, 0, 0, 3, 2**32 - 1, 7] + list(ints(rng, (18,), 0, 50, np.int64)),
               np.uint64).astype(np.uint32)
  return (lambda a, b: (lax.div(a, b), lax.rem(a, b))), [x, y]


@case("div_rem_s8")
def _(rng):
  x = np.array([-128, -128, -128, 127, -7, 7, 0, 100], np.int8)
  y = np.array([-1, 0, 3, 0, 2, -2, 0, -7], np.int8)
  return (lambda a, b: (lax.div(a, b), lax.rem(a, b), a * b, a + b)), [x, y]


# lax.pow takes only float bases; this primitive lowers straight to HLO
# `power` so XLA's integer power is what runs.
int_pow_p = Primitive("int_pow")
int_pow_p.def_abstract_eval(lambda x, y: core.ShapedArray(x.shape, x.dtype))
mlir.register_lowering(int_pow_p, lambda ctx, x, y: [hlo.power(x, y)])


@case("pow_s32")
def _(rng):
  x = np.array([2, -2, 0, 0, 1, -1, -1, 3, 2, 5, -3, 7, 2, 0, -2], np.int32)
  y = np.array([10, 3, 0, 5, -5, -3, -4, -1, 31, 13, 7, 0, 40, -1, -1], np.int32)
  return (lambda x, y: (int_pow_p.bind(x, y), jnp.power(x, jnp.abs(y)))), [x, y]


@case("bitwise_s32")
def _(rng):
  x = ints(rng, (24,), -2**31, 2**31, edges=S32_EDGES)
  y = ints(rng, (24,), -2**31, 2**31, edges=S32_EDGES[::-1])
  return (lambda a, b: (a & b, a | b, a ^ b, lax.bitwise_not(a))), [x, y]


@case("bitwise_u8_pred")
def _(rng):
  x = ints(rng, (24,), 0, 256, np.uint8)
  y = ints(rng, (24,), 0, 256, np.uint8)
  p, q = rng.rand(24) < 0.5, rng.rand(24) < 0.5
  return (lambda a, b, p, q: (a & b, a | b, a ^ b, ~a, p & q, p | q, p ^ q, ~p)), [x, y, p, q]


def shift_case(name, dtype, bits):
  @case(name)
  def make(rng):
    info = np.iinfo(dtype)
    x = ints(rng, (30,), info.min, int(info.max) + 1, dtype,
             edges=[info.min, info.max, -1 if info.min < 0 else info.max, 1, 0])
    s = ints(rng, (30,), 0, bits, dtype,
             edges=[0, 1, bits - 1, bits, bits + 1, 2 * bits] + ([-1, -bits] if info.min < 0 else
                                                               [info.max]))
    return (lambda a, b: (lax.shift_left(a, b), lax.shift_right_logical(a, b),
                          lax.shift_right_arithmetic(a, b))), [x, s]


shift_case("shift_s32", np.int32, 32)
shift_case("shift_u8", np.uint8, 8)
shift_case("shift_s16", np.int16, 16)


@case("popcnt_clz")
def _(rng):
  x = ints(rng, (24,), -2**31, 2**31, edges=S32_EDGES)
  u = ints(rng, (24,), 0, 256, np.uint8, edges=[0, 1, 128, 255])
  return (lambda a, u: (lax.population_count(a), lax.clz(a), lax.population_count(u),
                        lax.clz(u))), [x, u]


@case("arith_s64", x64=True)
def _(rng):
  i64 = np.iinfo(np.int64)
  x = ints(rng, (20,), -2**62, 2**62, np.int64, edges=[i64.min, i64.max, i64.min, -1, 7])
  y = ints(rng, (20,), -2**62, 2**62, np.int64, edges=[-1, 1, 0, 0, -2])
  s = ints(rng, (20,), 0, 64, np.int64, edges=[63, 64, 65, 0, 1])
  return (lambda a, b, s: (a + b, a * b, lax.div(a, b), lax.rem(a, b), lax.shift_left(a, s),
                           lax.shift_right_arithmetic(a, s), lax.shift_right_logical(a, s),
                           lax.clz(a), lax.population_count(a))), [x, y, s]


@case("arith_u64", x64=True)
def _(rng):
  x = np.array([2**64 - 1, 2**63, 5, 0, 12345678901234567] + [3] * 5, np.uint64)
  y = np.array([2, 2**64 - 1, 0, 0, 1000] + [1, 2, 3, 4, 5], np.uint64)
  return (lambda a, b: (a + b, a * b, lax.div(a, b), lax.rem(a, b), a > b)), [x, y]


# -------------------------------------------------------------------- compare

@case("compare_f32")
def _(rng):
  x, y = pairs(rng, 16, BINARY_EDGES)
  return (lambda a, b: (a == b, a != b, a < b, a <= b, a > b, a >= b)), [x, y]


@case("compare_int")
def _(rng):
  x = ints(rng, (24,), -2**31, 2**31, edges=S32_EDGES)
  y = ints(rng, (24,), -2**31, 2**31, edges=S32_EDGES[::-1])
  u = np.array([0, 1, 2**31, 2**32 - 1, 5, 2**31 - 1], np.uint32)
  v = np.array([2**32 - 1, 0, 1, 2**31, 5, 2**31], np.uint32)
  return (lambda a, b, u, v: (a < b, a >= b, a == b, u < v, u >= v, u != v)), [x, y, u, v]


@case("compare_total_order_f32")
def _(rng):
  edges = [np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 1e-30]
  x, y = pairs(rng, 8, edges)
  neg_nan = np.array([0xFFC00000], np.uint32).view(np.float32)[0]
  x[x != x] = np.where(np.arange(np.sum(x != x)) % 2 == 0, NAN, neg_nan)
  return (lambda a, b: (lax_internal.lt_to_p.bind(a, b), lax_internal.le_to_p.bind(a, b),
                        lax_internal.eq_to_p.bind(a, b))), [x, y]


# -------------------------------------------------------------------- convert

CONVERT_EDGES = [np.nan, np.inf, -np.inf, -0.0, 0.5, -0.5, 1.5, 2.5, -2.5, 127.5, 128.0,
                 -129.0, 255.5, 256.0, 3e9, -3e9, 2.1474836e9, -2.1474836e9, 4.2949673e9,
                 1e20, -1e20, 65504.0, 65520.0, 1.00390625, 1.01171875, 3.3961776e38]


@case("convert_f32_to_small_floats")
def _(rng):
  x = with_edges(rng, 40, CONVERT_EDGES + [1e-5, 6e-8, -3e-8, 1e-30])
  return (lambda x: (x.astype(jnp.bfloat16), x.astype(jnp.float16))), [x]


@case("convert_small_floats_to_f32")
def _(rng):
  b = with_edges(rng, 24, CONVERT_EDGES, dtype=np.float32).astype(BF16)
  h = with_edges(rng, 24, CONVERT_EDGES[:14] + [6e-8, 1e-5]).astype(np.float16)
  return (lambda b, h: (b.astype(jnp.float32), h.astype(jnp.float32), b.astype(jnp.float16),
                        h.astype(jnp.bfloat16))), [b, h]


@case("convert_f32_to_int")
def _(rng):
  x = with_edges(rng, 36, CONVERT_EDGES, scale=200.0)
  return (lambda x: (x.astype(jnp.int32), x.astype(jnp.uint32), x.astype(jnp.int8),
                     x.astype(jnp.uint8), x.astype(jnp.int16), x.astype(jnp.bool_))), [x]


@case("convert_int_to_float")
def _(rng):
  x = ints(rng, (24,), -2**31, 2**31,
           edges=S32_EDGES + [2**24 + 1, 2**24 + 3, -(2**24 + 1), 2**30 + 65])
  u = np.array([2**32 - 1, 2**31 + 129, 0, 16777217], np.uint32)
  return (lambda x, u: (x.astype(jnp.float32), x.astype(jnp.bfloat16), x.astype(jnp.float16),
                        u.astype(jnp.float32))), [x, u]


@case("convert_int_to_int")
def _(rng):
  x = ints(rng, (24,), -2**31, 2**31, edges=S32_EDGES)
  b = ints(rng, (8,), -128, 128, np.int8, edges=[-128, 127, -1])
  u = ints(rng, (8,), 0, 256, np.uint8, edges=[255, 128])
  p = rng.rand(6) < 0.5
  return (lambda x, b, u, p: (x.astype(jnp.int8), x.astype(jnp.uint8), x.astype(jnp.uint32),
                              x.astype(jnp.int16), b.astype(jnp.int32), b.astype(jnp.uint32),
                              u.astype(jnp.int32), u.astype(jnp.int8), p.astype(jnp.int32),
                              p.astype(jnp.float32), x.astype(jnp.bool_))), [x, b, u, p]


@case("convert_64bit", x64=True)
def _(rng):
  d = with_edges(rng, 24, CONVERT_EDGES + [9.3e18, -9.3e18, 1e-300, 1e300],
                 dtype=np.float64)
  i = np.array([2**63 - 1, -2**63, 2**53 + 1, -(2**53 + 1), 2**40 + 7, -1], np.int64)
  u = np.array([2**64 - 1, 2**63 + 2049, 0], np.uint64)
  return (lambda d, i, u: (d.astype(jnp.float32), d.astype(jnp.int64), d.astype(jnp.uint64),
                           d.astype(jnp.int32), i.astype(jnp.float64), i.astype(jnp.float32),
                           i.astype(jnp.int32), u.astype(jnp.float64),
                           d.astype(jnp.float32).astype(jnp.float64))), [d, i, u]


# --------------------------------------------------------------- bitcast

@case("bitcast_same_width")
def _(rng):
  x = with_edges(rng, 16, F32_EDGES[:12])
  i = ints(rng, (16,), 0x3F000000, 0x7FC00000 + 5, edges=[0x7F800001, -1, S32_MIN])
  b = normal(rng, (8,)).astype(BF16)
  return (lambda x, i, b: (lax.bitcast_convert_type(x, jnp.int32),
                           lax.bitcast_convert_type(x, jnp.uint32),
                           lax.bitcast_convert_type(i, jnp.float32),
                           lax.bitcast_convert_type(b, jnp.int16),
                           lax.bitcast_convert_type(b, jnp.float16))), [x, i, b]


@case("bitcast_different_width")
def _(rng):
  x = with_edges(rng, 6, [1.0, -0.0, np.inf])
  u = ints(rng, (5, 4), 0, 256, np.uint8)
  w = ints(rng, (3, 2), 0, 65536, np.uint16)
  return (lambda x, u, w: (lax.bitcast_convert_type(x, jnp.uint8),
                           lax.bitcast_convert_type(x, jnp.int16),
                           lax.bitcast_convert_type(u, jnp.float32),
                           lax.bitcast_convert_type(w, jnp.uint32))), [x, u, w]


@case("bitcast_64bit", x64=True)
def _(rng):
  d = with_edges(rng, 4, [1.0, -2.5, np.nan], dtype=np.float64)
  u = ints(rng, (3, 2), 0, 2**32, np.uint32)
  return (lambda d, u: (lax.bitcast_convert_type(d, jnp.uint32),
                        lax.bitcast_convert_type(d, jnp.int64),
                        lax.bitcast_convert_type(u, jnp.float64))), [d, u]


# ---------------------------------------------------------- low precision

@case("elementwise_bf16")
def _(rng):
  x = with_edges(rng, 32, F32_EDGES[:14]).astype(BF16)
  y = normal(rng, (32,), 2.0).astype(BF16)
  return (lambda a, b: (a + b, a * b, a / b, lax.exp(b), lax.tanh(a), lax.sqrt(a),
                        lax.max(a, b), a < b, lax.log1p(b))), [x, y]


@case("elementwise_f16")
def _(rng):
  x = with_edges(rng, 32, F32_EDGES[:14] + [65504.0, 1000.0]).astype(np.float16)
  y = normal(rng, (32,), 2.0).astype(np.float16)
  return (lambda a, b: (a + b, a * b, a / b, lax.exp(b), lax.tanh(a), lax.rsqrt(a),
                        lax.min(a, b), a >= b, lax.erf(b))), [x, y]


@case("elementwise_f64", x64=True)
def _(rng):
  x = with_edges(rng, 32, F32_EDGES[:14] + [1e300, -1e-300], dtype=np.float64)
  y = normal(rng, (32,), 2.0, np.float64)
  return (lambda a, b: (a + b, a * b, a / b, lax.exp(b), lax.tanh(a), lax.log(a),
                        lax.sin(b), lax.atan2(a, b), lax.pow(lax.abs(b), a), lax.rem(a, b),
                        lax.erf(b), lax.cbrt(a), lax.expm1(b), lax.logistic(b))), [x, y]


@case("complex_c64")
def _(rng):
  re, im = normal(rng, (12,)), normal(rng, (12,))
  re2, im2 = normal(rng, (12,)), normal(rng, (12,))
  def fn(a, b, c, d):
    z, w = lax.complex(a, b), lax.complex(c, d)
    p = z * w + z / w
    return lax.real(p), lax.imag(p), lax.abs(z), lax.real(lax.exp(z)), lax.imag(lax.sqrt(w))
  return fn, [re, im, re2, im2]
