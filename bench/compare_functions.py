"""PyTorch twins of the JAX workloads in bench/workloads/make_workloads.py.

Each twin takes the same arguments in the same order and pytree layout (lists
of tensors for the optimizers, 0-d tensors for their scalars) and returns the
same outputs in the same layout, computing the same math in the same dtypes.
Where PyTorch has a built-in that computes exactly the function the JAX code
spells out (softmax, tanh-GELU, layer_norm, batch_norm, the layer-norm
backward), the twin calls it: that is what a PyTorch user writes, and it gives
eager mode its fused kernels. bench/compare.py checks every twin against JAX.
"""

import math

import torch
import torch.nn.functional as F

TWINS = {}


def twin(name):
  def register(fn):
    TWINS[name] = fn
    return fn
  return register


@twin("attention_softmax")
def attention_softmax(scores, mask):
  return torch.softmax(scores * (1.0 / math.sqrt(64.0)) + mask, dim=-1)


@twin("bias_gelu")
def bias_gelu(x, bias):
  # approximate="tanh" is 0.5*y*(1+tanh(sqrt(2/pi)*(y+0.044715*y^3))), the JAX formula.
  return F.gelu(x + bias, approximate="tanh")


@twin("dropout_residual_layernorm")
def dropout_residual_layernorm(x, keep_mask, residual, gamma, beta):
  keep = 0.9
  h = torch.where(keep_mask, x * (1.0 / keep), 0.0) + residual
  return F.layer_norm(h, (h.shape[-1],), gamma, beta, eps=1e-12)


@twin("layernorm_backward")
def layernorm_backward(x, dy, gamma):
  # The JAX function recomputes the forward statistics from x (jax.vjp), so the
  # twin does too, then calls the backward kernel autograd would call.
  var, mean = torch.var_mean(x, dim=-1, keepdim=True, correction=0)
  rstd = torch.rsqrt(var + 1e-12)
  beta = torch.zeros_like(gamma)  # as in JAX; only dbeta's shape depends on it
  dx, dgamma, dbeta = torch.ops.aten.native_layer_norm_backward(
      dy, x, [x.shape[-1]], mean, rstd, gamma, beta, [True, True, True])
  return dx, dgamma, dbeta


@twin("rms_norm")
def rms_norm(x, weight):
  xf = x.float()
  ms = torch.mean(xf * xf, dim=-1, keepdim=True)
  return (xf * torch.rsqrt(ms + 1e-6) * weight.float()).to(torch.bfloat16)


@twin("vocab_log_softmax")
def vocab_log_softmax(logits):
  return torch.log_softmax(logits, dim=-1)


@twin("dien_rows")
def dien_rows(scores, gate):
  return torch.softmax(scores, dim=-1) * torch.sigmoid(gate)


@twin("batchnorm_relu_nchw")
def batchnorm_relu_nchw(x, gamma, beta, running_mean, running_var):
  # F.batch_norm updates the running stats in place (with the unbiased batch
  # variance, n/(n-1), as the JAX code does); the twin updates copies so the
  # inputs stay untouched and the new stats are outputs, as in JAX.
  new_mean = running_mean.clone()
  new_var = running_var.clone()
  y = F.batch_norm(x, new_mean, new_var, gamma, beta, training=True, momentum=0.1, eps=1e-5)
  return torch.relu(y), new_mean, new_var


@twin("column_reduce")
def column_reduce(x):
  col_mean = torch.mean(x, dim=0)
  denom = torch.sum(torch.abs(x), dim=0) + 1e-6
  return x / denom[None, :], col_mean


@twin("adam")
def adam(params, grads, ms, vs, step_size, bc2_sqrt):
  b1, b2, eps = 0.9, 0.999, 1e-8
  new_p, new_m, new_v = [], [], []
  for p, g, m, v in zip(params, grads, ms, vs):
    v = torch.abs(v)
    m = b1 * m + (1 - b1) * g
    v = b2 * v + (1 - b2) * g * g
    p = p - step_size * m / (torch.sqrt(v) / bc2_sqrt + eps)
    new_p.append(p)
    new_m.append(m)
    new_v.append(v)
  return new_p, new_m, new_v


def l2_norm(x):
  """Blocked like the JAX version: per-row partial sums, then their sum."""
  sq = x * x
  partial = torch.sum(sq, dim=-1) if x.dim() > 1 else sq
  return torch.sqrt(torch.sum(partial))


@twin("lamb")
def lamb(params, grads, ms, vs, lr, bc1, bc2_sqrt):
  b1, b2, eps, wd = 0.9, 0.999, 1e-6, 0.01
  new_p, new_m, new_v = [], [], []
  for p, g, m, v in zip(params, grads, ms, vs):
    v = torch.abs(v)
    m = b1 * m + (1 - b1) * g
    v = b2 * v + (1 - b2) * g * g
    u = (m / bc1) / (torch.sqrt(v) / bc2_sqrt + eps) + wd * p
    p_norm = l2_norm(p)
    u_norm = l2_norm(u)
    ratio = torch.where((p_norm > 0) & (u_norm > 0), p_norm / u_norm, 1.0)
    new_p.append(p - lr * ratio * u)
    new_m.append(m)
    new_v.append(v)
  return new_p, new_m, new_v
