"""The table of conformance cases: `@case(name)` registers a function
`make(rng) -> (fn, args)` that builds a JAX function and its inputs."""

import ml_dtypes

BF16 = ml_dtypes.bfloat16

# name -> (make, x64)
CASES = {}


def case(name, x64=False):
  """Registers `make`; x64 runs it with jax_enable_x64 (64-bit types kept)."""
  def register(make):
    assert name not in CASES, f"duplicate case {name}"
    CASES[name] = (make, x64)
    return make
  return register
