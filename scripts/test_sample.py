#!/usr/bin/env python3
"""Picks CI's sample of the heaviest test families, which do not all fit in
CI's time budget: from `ctest -N` on stdin, prints the tests to run as
ctest's -I list (0,0,1 then each test's number), every test outside those
families included.

  ctest --test-dir build -I "$(ctest --test-dir build -N | scripts/test_sample.py SEED)"

Each family keeps a share of its cases; which ones is a pure function of
the seed and the case's name, so a seed repeats its sample exactly and a
new seed (CI uses the time) rotates through all of them. Everything runs
under `scripts/run_tests.sh --full`.
"""

import hashlib
import re
import sys

# Families by test-name prefix (and suffix: the first family a name
# matches is its), and the share of each kept in CI. Every other test
# always runs. The seconds are a case's on CI's two cores with a cold
# kernel cache (one run, 2026-11-28); with these shares the sampled tests
# took 9 minutes of a 24-minute CI run (the earlier shares: 26 of 48).
# Stop 49's CI took 31 minutes: random graphs 0.08 -> 0.06 and corpus
# differential 0.2 -> 0.15 (about 40 s) make room for stop 50's tests.
FAMILIES = [
    # The CUDA kernels under the emulator (cuda-sim): NVRTC for the launch
    # shapes, the host compiler, then every thread a fiber.
    ("Corpus/Differential.", "_cuda_sim", 0.1),      # 25 s (18 cases)
    ("Workloads/Differential.", "_cuda_sim", 0.15),  # 85 s (10)
    ("Modules/RandomGraphs.", "_cuda_sim", 0.03),    # 125 s (20)
    # NVRTC compiles every kernel of a module for two architectures.
    ("Corpus/CudaPtx.", "", 0.05),         # 60 s (22)
    ("Workloads/CudaPtx.", "", 0.1),       # 30 s (10)
    ("Modules/CudaPtxRandom.", "", 0.06),  # 55 s (16)
    # 100 random graphs a case, compiled under every strategy.
    ("Modules/RandomGraphs.", "", 0.06),  # 40 s (20)
    # Random pass sequences on the corpus, verified after every pass.
    ("Shards/RandomSequences.", "", 0.2),  # 12 s (20)
    # The largest corpus modules through every pass, in the interpreter.
    ("Corpus/LargeModule.", "", 0.1),  # 165 s (6)
    ("Corpus/EveryPass.", "", 0.1),    # 1.4 s (555)
    # Every corpus module compiled under every strategy.
    ("Corpus/Differential.", "", 0.15),  # 12 s (36; gemma3 160 s)
    # The half-precision modules under the default numerics, each judged
    # with a second, nudged interpreter run where it needs one.
    ("Corpus/DefaultNumerics.", "", 0.3),  # 10 s (6)
]


def kept(name, seed, share):
  digest = hashlib.sha256(f"{seed}:{name}".encode()).digest()
  return int.from_bytes(digest[:8], "big") / 2**64 < share


def main():
  seed = sys.argv[1] if len(sys.argv) > 1 else "0"
  # Whole names: parameterized ones go on with "  # GetParam() = ...".
  tests = re.findall(r"^\s*Test\s+#(\d+): (.+?)\s*$", sys.stdin.read(), re.MULTILINE)
  run = []
  for number, name in tests:
    family = [share for prefix, suffix, share in FAMILIES
              if name.startswith(prefix) and name.split("  #")[0].endswith(suffix)]
    if not family or kept(name, seed, family[0]):
      run.append(number)
  print(",".join(["0", "0", "1"] + run))


if __name__ == "__main__":
  main()
