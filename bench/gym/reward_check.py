#!/usr/bin/env python3
"""Does the gym's cost reward rank pass orders as measured times do?

For each module: the default pipeline, the canonical forms alone, and
random pass orders of several lengths (random valid actions in a gym
session from the canonical start); each order's cost-model time after
stitch fusion (the cost_time reward's state measure) against `seam bench
--passes=SPEC --strategies=stitch` timing the module compiled after it,
the orders' rounds interleaved and the median of each kept. Prints per
module Spearman's rank correlation and, among order pairs whose measured
times differ by more than the noise (--margin), the share the cost model
ranks as measured where it tells them apart, and how many it prices alike
(within --cost-tie: orders it cannot tell apart, most often one plan);
writes the rows as JSON.

  python3 bench/gym/reward_check.py [--modules a.hlo,b.hlo] [--out FILE.json]

Needs the C++ build (build/seam, through bench/gym_leaderboard.py's bench_ms) and the bindings (build/python, as
scripts/python_env.sh and the build make them).
"""

import argparse
import glob
import json
import os
import random
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "build", "python"))
sys.path.insert(0, os.path.join(ROOT, "bench"))

from gym_leaderboard import interleaved_ms  # noqa: E402
from seam import gym  # noqa: E402

# The bench workloads, modules of the generated corpus from train and test
# families, and ../shared/hlo's small and mid-sized models.
CORPUS_SAMPLE = 14
SHARED = ["gh_ptxla_bert_single_device_training_fwd_bwd.hlo", "gh_ptxla_gpt2_tp1_n_layer2.hlo",
          "xla_dlrm_keras_jax_f32_train_step.hlo", "xla_mha_block_1x12x128x64_bf16.hlo",
          "hloenv_toy_nn_module_0093.jit_loss.44.before_optimizations.txt"]
EPISODE_LENGTHS = (3, 6, 12, 25)


def default_modules():
  files = sorted(glob.glob(os.path.join(ROOT, "bench", "workloads", "*.hlo")))
  corpus = sorted(glob.glob(os.path.join(ROOT, "bench", "gym", "corpus", "*.hlo")))
  # The larger half of the corpus: a tiny module's time is the launch's.
  corpus = sorted(corpus, key=os.path.getsize)[len(corpus) // 2:]
  files += sorted(random.Random(0).sample(corpus, CORPUS_SAMPLE))
  shared = os.path.join(ROOT, "tests", "corpus", "hlo")
  files += [os.path.join(shared, f) for f in SHARED if os.path.exists(os.path.join(shared, f))]
  return files


def orders(path, seed):
  """(label, spec, cost-model µs) of the orders tried on one module."""
  uri = "file://" + path
  # cost_vs_default: the session plans the default pipeline's module too.
  session = gym.Session(max_steps=100, reward_space="cost_vs_default", canonical_start=True)
  session.reset(uri)
  out = [("default", "default", session.default_cost_us), ("canonical", session.pass_spec, session.cost_us)]
  rng = random.Random(seed)
  stop = gym.stop_action()
  for length in EPISODE_LENGTHS:
    session.reset(uri)
    for _ in range(length):
      valid = [a for a, ok in enumerate(session.action_mask()) if ok and a != stop]
      if not valid or session.done:
        break
      session.step(rng.choice(valid))
    out.append((f"random{length}", session.pass_spec, session.cost_us))
  seen, unique = set(), []
  for label, spec, cost in out:
    if spec not in seen:
      seen.add(spec)
      unique.append((label, spec, cost))
  return unique


def ranks(values):
  order = sorted(range(len(values)), key=lambda i: values[i])
  r = [0.0] * len(values)
  i = 0
  while i < len(order):
    j = i
    while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
      j += 1
    for k in range(i, j + 1):
      r[order[k]] = (i + j) / 2
    i = j + 1
  return r


def spearman(a, b):
  ra, rb = ranks(a), ranks(b)
  n = len(a)
  ma, mb = sum(ra) / n, sum(rb) / n
  cov = sum((x - ma) * (y - mb) for x, y in zip(ra, rb))
  va = sum((x - ma) ** 2 for x in ra) ** 0.5
  vb = sum((y - mb) ** 2 for y in rb) ** 0.5
  return cov / (va * vb) if va > 0 and vb > 0 else None


def agreeing_pairs(costs, times, margin, cost_tie, least=0.0):
  """(pairs ranked alike, pairs the cost model tells apart, pairs it prices
  alike) among pairs whose measured times differ by more than `margin` and
  by at least `least` (relative)."""
  agree = apart = alike = 0
  for i in range(len(times)):
    for j in range(i + 1, len(times)):
      lo, hi = sorted((times[i], times[j]))
      if hi <= lo * (1 + max(margin, least)):
        continue
      if max(costs[i], costs[j]) <= min(costs[i], costs[j]) * (1 + cost_tie):
        alike += 1
        continue
      apart += 1
      agree += (costs[i] - costs[j]) * (times[i] - times[j]) > 0
  return agree, apart, alike


def main(argv=None):
  p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  p.add_argument("--modules", help="comma-separated HLO files (default: workloads, a corpus sample, shared models)")
  p.add_argument("--repeat", type=int, default=5, help="seam bench runs per order and round")
  p.add_argument("--rounds", type=int, default=3, help="interleaved rounds per module (the median is kept)")
  p.add_argument("--margin", type=float, default=0.05, help="measured difference below which a pair is noise")
  p.add_argument("--cost-tie", type=float, default=0.01, help="cost difference below which the model prices a pair alike")
  p.add_argument("--large", type=float, default=0.3, help="measured difference of the pairs reported apart as large")
  p.add_argument("--seed", type=int, default=0)
  p.add_argument("--out", default=os.path.join(ROOT, "bench", "gym", "reward_check.json"))
  args = p.parse_args(argv)
  modules = args.modules.split(",") if args.modules else default_modules()
  rows, rhos = [], []
  totals = {"all": [0, 0, 0], "large": [0, 0, 0]}
  for path in modules:
    tried = [t for t in orders(os.path.abspath(path), args.seed) if t[2] is not None]
    medians, _ = interleaved_ms(path, {label: spec for label, spec, _ in tried}, args.rounds, args.repeat)
    measured = [(label, spec, cost, medians[label]) for label, spec, cost in tried if label in medians]
    costs, times = [m[2] for m in measured], [m[3] for m in measured]
    rho = spearman(costs, times) if len(measured) >= 3 else None
    counts = {"all": agreeing_pairs(costs, times, args.margin, args.cost_tie),
              "large": agreeing_pairs(costs, times, args.margin, args.cost_tie, args.large)}
    for key, c in counts.items():
      totals[key] = [t + n for t, n in zip(totals[key], c)]
    if rho is not None and sum(counts["all"][1:]) > 0:
      rhos.append(rho)
    agree, apart, alike = counts["all"]
    name = os.path.basename(path)
    print(f"{name}: {len(measured)} orders, spearman {rho if rho is None else round(rho, 2)}, "
          f"pairs beyond noise ranked alike {agree}/{apart}, priced alike {alike}; "
          + ", ".join(f"{label} {cost:.0f}us/{ms:.3f}ms" for label, _, cost, ms in measured), flush=True)
    rows.append({"module": name, "orders": [{"label": l, "spec": s, "cost_us": c, "measured_ms": t}
                                            for l, s, c, t in measured],
                 "spearman": rho, "pairs_agreeing": agree, "pairs_told_apart": apart, "pairs_priced_alike": alike})
  summary = {"modules": len(rows), "median_spearman_where_times_differ": sorted(rhos)[len(rhos) // 2] if rhos else None,
             "margin": args.margin, "cost_tie": args.cost_tie, "repeat": args.repeat, "rounds": args.rounds}
  for key, (agree, apart, alike) in totals.items():
    prefix = "" if key == "all" else f"beyond_{round(args.large * 100)}pct_"
    summary.update({f"{prefix}pairs_agreeing": agree, f"{prefix}pairs_told_apart": apart,
                    f"{prefix}pairs_priced_alike": alike})
  print(json.dumps(summary))
  with open(args.out, "w") as f:
    json.dump({"summary": summary, "rows": rows}, f, indent=1)
  return 0


if __name__ == "__main__":
  sys.exit(main())
