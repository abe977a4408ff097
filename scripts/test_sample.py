#!/usr/bin/env python3
"""Picks CI's sample of the heaviest test families, which do not all fit in
CI's time budget: from `ctest -N` on stdin, prints the tests to run as
ctest's -I list (0,0,1 then each test's number), every test outside those
families included.

  ctest --test-dir build -I "$(ctest --test-dir build -N | scripts/test_sample.py SEED)"

Each family has a budget of seconds. Its cases are taken in an order that
is a pure function of the seed and the case's name, each while it still
fits in what is left of the budget, at its cost in scripts/test_costs.tsv
(a case missing there costs its family's median): the most each took in
the ctest logs the table was made from, a fresh clone's CI run (cold
kernel caches: NVRTC's builds cost minutes there and seconds once
cached) and --full runs.
So a seed repeats its sample exactly, a new seed (CI uses the time) rotates
through the cases, and no draw can pile the heaviest cases into one run:
a shared sample of the same shares once took 2,605 s where the run before
took 1,862. A case dearer than its family's whole budget runs only under
`scripts/run_tests.sh --full`, as everything does. What each family took goes
to stderr.

  scripts/test_sample.py --costs-from LOG...   rewrites scripts/test_costs.tsv
                                               from ctest logs
"""

import hashlib
import os
import re
import statistics
import sys

COSTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "test_costs.tsv")

# Families by test-name prefix (and suffix: the first family a name
# matches is its), and each one's budget in seconds of the cost table
# (2026-11-29: stop 49's CI run and stop 50's and 51's --full runs, all on
# two cores). Every other test always runs, about 600 s on CI's two cores.
FAMILIES = [
    # The CUDA kernels under the emulator (cuda-sim): NVRTC for the launch
    # shapes, the host compiler, then every thread a fiber.
    ("Corpus/Differential.", "_cuda_sim", 40),
    ("Workloads/Differential.", "_cuda_sim", 70),
    # (Random graphs on cuda-sim take 1-5 minutes a case: --full only.)
    ("Modules/RandomGraphs.", "_cuda_sim", 0),
    # NVRTC compiles every kernel of a module for two architectures (random
    # graphs' kernels too, under --full only).
    ("Corpus/CudaPtx.", "", 60),
    ("Workloads/CudaPtx.", "", 30),
    ("Modules/CudaPtxRandom.", "", 0),
    # 100 random graphs a case, compiled under every strategy.
    ("Modules/RandomGraphs.", "", 80),
    # Each workload compiled under every strategy on the CPU.
    ("Workloads/Differential.", "", 70),
    # Random pass sequences on the corpus, verified after every pass.
    ("Shards/RandomSequences.", "", 25),
    # The largest corpus modules through every pass, in the interpreter.
    ("Corpus/LargeModule.", "", 0),
    ("Corpus/EveryPass.", "", 40),
    # Every corpus module compiled under every strategy.
    ("Corpus/Differential.", "", 40),
    # The half-precision modules under the default numerics, each judged
    # with a second, nudged interpreter run where it needs one.
    ("Corpus/DefaultNumerics.", "", 10),
]


def order(name, seed):
  return hashlib.sha256(f"{seed}:{name}".encode()).digest()


def load_costs():
  costs = {}
  if os.path.exists(COSTS):
    with open(COSTS) as f:
      for line in f:
        if line.strip() and not line.startswith("#"):
          name, seconds = line.rstrip("\n").rsplit("\t", 1)
          costs[name] = float(seconds)
  return costs


def family_of(name):
  for index, (prefix, suffix, _) in enumerate(FAMILIES):
    if name.startswith(prefix) and name.endswith(suffix):
      return index
  return None


def sample(seed, tests, costs):
  """The test numbers to run, and per family what it took of its cases and budget."""
  members = {}
  run = []
  for number, name in tests:
    family = family_of(name)
    if family is None:
      run.append(number)
    else:
      members.setdefault(family, []).append((number, name))
  taken_by_family = []
  for family, cases in sorted(members.items()):
    prefix, suffix, budget = FAMILIES[family]
    known = [costs[name] for _, name in cases if name in costs]
    typical = statistics.median(known) if known else 10.0
    left = budget
    taken = 0
    for number, name in sorted(cases, key=lambda case: order(case[1], seed)):
      cost = costs.get(name, typical)
      if cost <= left:
        run.append(number)
        left -= cost
        taken += 1
    taken_by_family.append(
        f"{prefix}*{suffix}: {taken} of {len(cases)} ({budget - left:.0f} of {budget} s)")
  return run, taken_by_family


def costs_from_logs(paths):
  """name -> the most seconds a ctest log in `paths` reports it passed in."""
  costs = {}
  pattern = re.compile(r"Test\s+#\d+: (.+?)(?:  # GetParam\(\) = .*?)? \.+\s+Passed\s+([\d.]+) sec")
  for path in paths:
    with open(path, errors="replace") as f:
      for line in f:
        match = pattern.search(line)
        if match:
          costs[match.group(1)] = max(costs.get(match.group(1), 0), float(match.group(2)))
  return costs


def main():
  if len(sys.argv) > 2 and sys.argv[1] == "--costs-from":
    costs = costs_from_logs(sys.argv[2:])
    with open(COSTS, "w") as f:
      f.write("# The most seconds each sampled family's test took in the ctest logs of "
              "(scripts/test_sample.py --costs-from LOG...).\n")
      for name in sorted(costs):
        if family_of(name) is not None:
          f.write(f"{name}\t{costs[name]:.2f}\n")
    return
  seed = sys.argv[1] if len(sys.argv) > 1 else "0"
  # Whole names: parameterized ones go on with "  # GetParam() = ...".
  tests = [(number, name.split("  #")[0])
           for number, name in re.findall(r"^\s*Test\s+#(\d+): (.+?)\s*$", sys.stdin.read(),
                                          re.MULTILINE)]
  run, taken_by_family = sample(seed, tests, load_costs())
  print("sampled families (taken of all, seconds of the budget): " + "; ".join(taken_by_family),
        file=sys.stderr)
  print(",".join(["0", "0", "1"] + run))


if __name__ == "__main__":
  main()
