#!/usr/bin/env python3
"""Writes the conformance goldens: for every case in cases_*.py, the HLO that
JAX lowers it to (before XLA optimizes anything), its inputs and what XLA on
CPU computes from them.

  tests/conformance/<name>/module.hlo    jax.jit(f).lower(*args), HLO dialect
  tests/conformance/<name>/inputs.npz    arr_0, arr_1, ... in parameter order
  tests/conformance/<name>/expected.npz  arr_0, arr_1, ... outputs, tuples flattened

bf16 arrays are stored as their raw uint16 bits. 64-bit types exist only in
cases registered with x64=True, which run under jax.enable_x64(True); every
other case runs with JAX's default 32-bit types, so the HLO is what ordinary
JAX programs produce. Run through scripts/conformance/run.sh, which pins the
JAX version.
"""

import argparse
import os
import shutil
import sys
import zlib

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import numpy as np  # noqa: E402
import jax  # noqa: E402

from registry import CASES, BF16  # noqa: E402
import cases_ops  # noqa: E402,F401  (registers cases)
import cases_shapes  # noqa: E402,F401
import cases_compute  # noqa: E402,F401

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DEFAULT_OUT = os.path.join(ROOT, "tests", "conformance")


def to_storable(value):
  """A NumPy array as written to .npz: bf16 becomes its uint16 bits."""
  array = np.asarray(value)
  if array.dtype == BF16:
    array = array.view(np.uint16)
  return np.array(array, order="C", copy=True)  # keeps 0-d arrays 0-d


def check_inputs_kept_types(name, args):
  for i, arg in enumerate(args):
    kept = jax.dtypes.canonicalize_dtype(arg.dtype)
    if kept != arg.dtype:
      sys.exit(f"{name}: input {i} of type {arg.dtype} would become {kept}; "
               "register the case with x64=True")


def lower_and_run(name, make, x64):
  """(hlo_text, inputs, outputs) of one case."""
  rng = np.random.RandomState(zlib.crc32(name.encode()))
  with jax.enable_x64(x64):
    fn, args = make(rng)
    args = [np.asarray(a) for a in args]
    check_inputs_kept_types(name, args)
    jitted = jax.jit(fn, keep_unused=True)
    hlo = jitted.lower(*args).as_text(dialect="hlo")
    outputs = [np.asarray(o) for o in jax.tree_util.tree_leaves(jitted(*args))]
  return hlo, args, outputs


def write_case(out_dir, name, hlo, args, outputs):
  case_dir = os.path.join(out_dir, name)
  os.makedirs(case_dir, exist_ok=True)
  with open(os.path.join(case_dir, "module.hlo"), "w") as f:
    f.write(hlo)
  np.savez(os.path.join(case_dir, "inputs.npz"), *[to_storable(a) for a in args])
  np.savez(os.path.join(case_dir, "expected.npz"), *[to_storable(o) for o in outputs])


def remove_stale(out_dir, names):
  """Deletes golden directories of cases that no longer exist (corpus_*
  directories belong to corpus_goldens.py and are left alone)."""
  for entry in sorted(os.listdir(out_dir)):
    path = os.path.join(out_dir, entry)
    if os.path.isdir(path) and entry not in names and not entry.startswith("corpus_"):
      print(f"removing stale golden {entry}")
      shutil.rmtree(path)


def main():
  parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  parser.add_argument("--out", default=DEFAULT_OUT)
  parser.add_argument("--only", nargs="*", help="case names to regenerate")
  parser.add_argument("--keep-going", action="store_true",
                      help="report failing cases and go on with the rest")
  parser.add_argument("--list", action="store_true", help="print case names and exit")
  options = parser.parse_args()
  if options.list:
    print("\n".join(sorted(CASES)))
    return
  names = options.only or sorted(CASES)
  unknown = [n for n in names if n not in CASES]
  if unknown:
    sys.exit(f"unknown case(s): {' '.join(unknown)}")
  os.makedirs(options.out, exist_ok=True)
  for name in names:
    make, x64 = CASES[name]
    try:
      hlo, args, outputs = lower_and_run(name, make, x64)
    except Exception as error:  # pylint: disable=broad-except
      if not options.keep_going:
        raise
      print(f"error: {name}: {type(error).__name__}: {str(error).splitlines()[0]}")
      continue
    if "custom-call" in hlo:
      print(f"warning: {name}: the HLO holds a custom-call")
    write_case(options.out, name, hlo, args, outputs)
  if not options.only:
    remove_stale(options.out, set(CASES))
  print(f"wrote {len(names)} golden(s) to {options.out} with jax {jax.__version__}")


if __name__ == "__main__":
  main()
