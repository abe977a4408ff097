#!/usr/bin/env python3
"""How far bf16 results are from the same module computed in f32: the
module's text with every bf16 type made f32, run by `seam run` on the same
inputs (bf16 arrays widened exactly), is the reference; each result file
given is measured against it, per float output, as the worst element's
error relative to the output's largest magnitude and the rms error relative
to its rms. Medians and maxima over the outputs.

  python3 bench/half_precision_accuracy.py MODULE.hlo INPUTS.npz \\
      xla=/tmp/seam-compare-models/gemma3_1b_flax_call/xla.npz \\
      seam=/tmp/seam-compare-models/gemma3_1b_flax_call/seam.npz

compare_models.py leaves inputs.npz, xla.npz and seam.npz in its work
directory; bf16 arrays are stored there as uint16 bits (and results in
output order), so every uint16 input is taken for bf16. Run with a Python
that has numpy (build/pyenv/bin/python).
"""

import os
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def widened(array):
  """bf16 (uint16 bits, 2-byte void or ml_dtypes bfloat16) and floats as
  float64; None for other types."""
  a = np.asarray(array)
  if a.dtype == np.uint16 or "bfloat16" in str(a.dtype) or (a.dtype.kind == "V" and a.dtype.itemsize == 2):
    a = (a.view(np.uint16).astype(np.uint32) << 16).view(np.float32)
  return a.astype(np.float64) if a.dtype.kind == "f" else None


def main():
  if len(sys.argv) < 4:
    sys.exit(__doc__)
  module, inputs = sys.argv[1], sys.argv[2]
  results = [arg.split("=", 1) for arg in sys.argv[3:]]
  seam = os.path.join(ROOT, "build", "seam")
  with tempfile.TemporaryDirectory() as tmp:
    f32_module = os.path.join(tmp, "module_f32.hlo")
    with open(module) as src, open(f32_module, "w") as dst:
      dst.write(src.read().replace("bf16", "f32"))
    f32_inputs = os.path.join(tmp, "inputs_f32.npz")
    with np.load(inputs) as src:
      np.savez(f32_inputs, **{k: (v.astype(np.uint32) << 16).view(np.float32)
                              if v.dtype == np.uint16 else v for k, v in src.items()})
    reference = os.path.join(tmp, "reference.npz")
    subprocess.run([seam, "run", f32_module, "--inputs", f32_inputs, "--output", reference],
                   check=True, stdout=subprocess.DEVNULL)
    ref = np.load(reference)
    ref_arrays = [widened(ref[k]) for k in ref.keys()]
  print(f"{os.path.basename(module)}: against the module computed in f32 by seam run")
  print("| results | outputs | worst/max, median | worst/max, max | rms, median |")
  print("|---|---:|---:|---:|---:|")
  for name, path in results:
    got = np.load(path)
    worst, rms = [], []
    for want, key in zip(ref_arrays, got.keys()):
      have = widened(got[key])
      if want is None or have is None or have.shape != want.shape:
        continue
      scale = np.abs(want).max() or 1.0
      worst.append(np.abs(have - want).max() / scale)
      rms.append(np.sqrt(np.mean((have - want) ** 2)) / (np.sqrt(np.mean(want ** 2)) or 1.0))
    print(f"| {name} | {len(worst)} | {np.median(worst):.2e} | {max(worst):.2e} | "
          f"{np.median(rms):.2e} |")


if __name__ == "__main__":
  main()
