"""A jitted JAX function as classic HLO text before any XLA pass, the text
Seam reads: what the workload and gym corpus generators save. JAX releases
print it with `as_text(dialect="hlo")`; older ones through `compiler_ir`."""

import jax


def lower(fn, args):
  lowered = jax.jit(fn, keep_unused=True).lower(*args)
  try:
    return lowered.as_text(dialect="hlo")
  except TypeError:
    return lowered.compiler_ir("hlo").as_hlo_text()
