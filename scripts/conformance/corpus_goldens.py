#!/usr/bin/env python3
"""Writes conformance goldens for real modules of tests/corpus/hlo: XLA on CPU
compiles the HLO text itself (HloModule text -> proto -> StableHLO -> PJRT
CPU client) and runs it on seeded random inputs.

  tests/conformance/corpus_<name>/module.path    the corpus file, repo-relative
  tests/conformance/corpus_<name>/inputs.npz     arr_0, ... in parameter order
  tests/conformance/corpus_<name>/expected.npz   outputs, tuples flattened

The module text is referenced, not copied, so its attribution stays in
tests/corpus/hlo/MANIFEST.md. Only modules whose inputs and outputs are a few
kilobytes are kept here; larger ones (layer norm 1x4096x768, the MHA block)
can be checked on demand with --check-with-seam, which runs build/seam on the
same inputs and compares without writing anything.
"""

import argparse
import os
import subprocess
import sys
import tempfile
import zlib

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import numpy as np  # noqa: E402
import jax  # noqa: E402
import jax.extend  # noqa: E402
import jaxlib._hlo as hlo_lib  # noqa: E402
from jax._src.lib import xla_client  # noqa: E402

from make_goldens import ROOT, DEFAULT_OUT, to_storable  # noqa: E402

CORPUS = "tests/corpus/hlo"
# name -> corpus file; every one small enough to keep its data in the repo.
GOLDEN_MODULES = {
    "toy_nn_loss": "hloenv_toy_nn_module_0093.jit_loss.44.before_optimizations.txt",
    "maml_flax_train_step":
        "hloenv_maml_flax_module_0067.jit_train_step.26.before_optimizations.txt",
    "hlo_test_train_step": "hloenv_hlo_test_jit_train_step.151.txt",
    "jax_issue33666_frag": "xla_jax_issue33666_frag_0428_module_0004.hlo",
}
# Checked with --check-with-seam only: their data is megabytes.
LARGE_MODULES = {
    "layer_norm_bf16": "xla_layer_norm_1x4096x768_bf16.hlo",
    "mha_block_bf16": "xla_mha_block_1x12x128x64_bf16.hlo",
}


def compile_hlo_text(text):
  """(loaded executable, parameter shapes, device) for HLO module text."""
  module = hlo_lib.hlo_module_from_text(text)
  proto = module.as_serialized_hlo_module_proto()
  program_shape = hlo_lib.XlaComputation(proto).program_shape()
  stablehlo = xla_client._xla.mlir.hlo_to_stablehlo(proto)  # pylint: disable=protected-access
  backend = jax.extend.backend.get_backend("cpu")
  device = backend.local_devices()[0]
  executable = backend.compile_and_load(stablehlo,
                                        executable_devices=xla_client.DeviceList((device,)),
                                        compile_options=xla_client.CompileOptions())
  return executable, program_shape.parameter_shapes(), device


def random_input(rng, shape):
  """Normal values scaled by 0.5 for floats, small non-negative integers
  (valid class labels and indices) for integers, coin flips for pred."""
  dims, dtype = shape.dimensions(), np.dtype(shape.numpy_dtype())
  if dtype == np.bool_:
    return rng.rand(*dims) < 0.5
  if dtype.kind in "iu":
    return rng.randint(0, 4, size=dims).astype(dtype)
  return (rng.standard_normal(dims) * 0.5).astype(dtype)


def run_module(name, path):
  with open(os.path.join(ROOT, path)) as f:
    executable, shapes, device = compile_hlo_text(f.read())
  rng = np.random.RandomState(zlib.crc32(name.encode()))
  args = [random_input(rng, s) for s in shapes]
  outputs = executable.execute([jax.device_put(a, device) for a in args])
  return args, [np.asarray(o) for o in outputs]


def write_golden(out_dir, name, path):
  args, outputs = run_module(name, path)
  case_dir = os.path.join(out_dir, f"corpus_{name}")
  os.makedirs(case_dir, exist_ok=True)
  with open(os.path.join(case_dir, "module.path"), "w") as f:
    f.write(path + "\n")
  np.savez(os.path.join(case_dir, "inputs.npz"), *[to_storable(a) for a in args])
  np.savez(os.path.join(case_dir, "expected.npz"), *[to_storable(o) for o in outputs])


# (absolute, relative) as in tests/eval/conformance_test.cc.
TOLERANCES = {"float32": (1e-5, 1e-5), "float64": (1e-12, 1e-12), "bfloat16": (1e-3, 1e-2),
              "float16": (1e-4, 1e-3)}


def check_with_seam(name, path):
  """Runs build/seam on XLA's inputs; prints how many elements are outside
  the conformance test's tolerance for their type and the largest error."""
  args, outputs = run_module(name, path)
  with tempfile.TemporaryDirectory() as tmp:
    inputs, result = os.path.join(tmp, "in.npz"), os.path.join(tmp, "out.npz")
    np.savez(inputs, *[to_storable(a) for a in args])
    subprocess.run([os.path.join(ROOT, "build", "seam"), "run", os.path.join(ROOT, path),
                    "--inputs", inputs, "--output", result], check=True, capture_output=True)
    got = list(np.load(result).values())
  for i, (g, want) in enumerate(zip(got, outputs)):
    if g.dtype.kind == "V":  # bf16 bits as written by seam
      g = g.view(np.uint16).view(want.dtype)
    absolute, relative = TOLERANCES.get(want.dtype.name, (0, 0))
    g, w = g.astype(np.float64), want.astype(np.float64)
    diff = np.abs(g - w)
    outside = diff > absolute + relative * np.abs(w)
    print(f"{name} output {i} {want.dtype}{list(want.shape)}: {np.sum(outside)} of {w.size} "
          f"outside tolerance; max |got-want| {np.max(diff):.3g}, max |want| "
          f"{np.max(np.abs(w)):.3g}")


def main():
  parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  parser.add_argument("--out", default=DEFAULT_OUT)
  parser.add_argument("--check-with-seam", action="store_true",
                      help="compare build/seam with XLA on the large modules; write nothing")
  options = parser.parse_args()
  if options.check_with_seam:
    for name, file in LARGE_MODULES.items():
      check_with_seam(name, f"{CORPUS}/{file}")
    return
  for name, file in GOLDEN_MODULES.items():
    write_golden(options.out, name, f"{CORPUS}/{file}")
  print(f"wrote {len(GOLDEN_MODULES)} corpus golden(s) to {options.out}")


if __name__ == "__main__":
  sys.path.insert(0, os.path.dirname(__file__))
  main()
