#!/usr/bin/env python3
"""Runs whole real models, as HLO modules, under XLA's CPU client (jaxlib)
and Seam's CPU backend, on the same HLO text, the same inputs and the same
thread count: checks that the outputs agree and times both in interleaved
rounds; writes a markdown table, a JSON file with every raw number and a
PNG plot.

  python3 bench/compare_models.py                       every model, 5 rounds
  python3 bench/compare_models.py --models mha_block,layer_norm,gpt2 --rounds 3
  python3 bench/compare_models.py --contention          also with a busy process on one core
  python3 bench/compare_models.py --no-excess-precision Seam's kernels round every bf16 result, as its interpreter
  python3 bench/compare_models.py --help                every option

Outputs (in --out-dir, default bench/results/): compare-models.md,
compare-models.json, compare-models.png; the table also goes to stdout,
progress to stderr. Per model, the HLO both sides ran, the inputs, both
sides' outputs and XLA's log stay in --work-dir (default
/tmp/seam-compare-models/<model>/) to reproduce any failure by hand.

The models: every module of /work/shared/hlo (third-party dumps; attribution
in /work/shared/hlo/MANIFEST.md, read in place) that XLA's CPU client can load
and run, plus bench/workloads/*.hlo. What XLA cannot load or run (several
modules in one file, multi-partition modules, TransformerEngine
custom-calls, post-optimization fusions, more memory than the machine has) is
listed with XLA's reason and not timed.

Where the pieces come from:
- One HLO text for both sides (compare_models_lib.prepare): the file in
  place, or for PyTorch/XLA (AWS Neuron) dumps Seam's own rewrite, `seam opt
  FILE --passes=transfer-remover,gelu-expander`, with the transfers it keeps
  (those that change the layout) written as `copy`. Elided constants
  (`constant({...})`) are written out by `seam opt --fill-elided-constants`
  when the binary has that flag; otherwise XLA (which fills them with a
  counter pattern) and Seam (pseudo-random by name) compute different
  things, and the output check says n/a for those modules (timing still
  runs). Modules with RNG ops get n/a too: Seam's stream is not XLA's.
- XLA: a worker process (compare_models_lib.py --xla-worker) loads the text
  with jaxlib's HLO parser, converts it to StableHLO and compiles it with
  the CPU client (see compare_models_lib's docstring for the API); it draws
  the inputs (seed 0, Seam's distribution: floats uniform in [-1, 1),
  integers in [0, 8), pred a fair coin; a parameter reaching a square root
  or logarithm through reshapes, broadcasts and additions only, a batch-norm
  variance or an optimizer's second moment, takes the absolute value of its
  draw), writes them as inputs.npz (one array
  per parameter, named after it) and times `execute` + block_until_ready
  after --warmup untimed runs (fewer for long runs). Arguments XLA takes
  over (input_output_alias) are put back between runs, untimed; seam bench
  does the same for its runs.
- Seam: `seam run FILE --inputs inputs.npz --output seam.npz` (CPU backend,
  default passes, stitch fusion) for the output check, and per round `seam
  bench FILE --strategies=stitch --repeat K --json` (one warm-up run, median
  of K; with `--inputs inputs.npz` when the binary has that flag, else on
  its own seed-0 inputs of the same distribution).
- Timing: --rounds interleaved rounds, the side that goes first alternating;
  each round times K runs per side (K = --repeat, fewer where one XLA run
  is longer than --round-budget / K). Per side: the median of the round
  medians; XLA/Seam: the median of the rounds' ratios.
- Threads (--threads N, default os.cpu_count()): XLA with PJRT_NPROC=N and
  XLA_FLAGS=--xla_cpu_multi_thread_eigen=true (as bench/compare.py), Seam
  with SEAM_NUM_THREADS=N and OMP_NUM_THREADS=N.
- --contention repeats the rounds of every model while a separate
  `python -c 'while True: pass'` process spins (started before, killed
  after); slowdown = contended median / quiet median, per side. It also
  times both sides quiet on one thread (XLA with PJRT_NPROC=1 and Eigen's
  pool off, Seam with SEAM_NUM_THREADS=1): with one core of two taken, a
  side can at best keep about its one-thread speed, so contended / one
  thread says how close each comes to that, and quiet one thread / quiet
  is the most a side that uses the second core well can lose.
- Every call on either side has what is left of --timeout seconds (per model
  and side); a failure or a timeout is reported and the run goes on.

The script runs itself inside bench/.venv (git-ignored, shared with
make_workloads.py and compare.py): it creates the venv when missing, installs
the JAX pins of make_workloads.py and matplotlib there, then re-executes
under it. SEAM_BENCH_PYTHON=current uses the running interpreter's packages.
"""

import argparse
import os
import shlex
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, ".."))


def parse_args(argv):
  p = argparse.ArgumentParser(
      description="Seam vs XLA's CPU client (jaxlib) on whole models: outputs and time.")
  p.add_argument("--models", default="all",
                 help="comma-separated names or parts of file names (e.g. gpt2,mha_block,"
                      "workload/adam), or 'all' (default)")
  p.add_argument("--rounds", type=int, default=5, help="interleaved rounds (default 5)")
  p.add_argument("--repeat", type=int, default=10,
                 help="timed runs per side per round, K (default 10)")
  p.add_argument("--round-budget", type=float, default=10.0,
                 help="lower K for a model where K of XLA's runs would take longer than this "
                      "many seconds (default 10; at least 1 run)")
  p.add_argument("--warmup", type=int, default=2,
                 help="XLA's untimed runs after the first (default 2, fewer once the first "
                      "and these pass --round-budget seconds; seam bench does 1)")
  p.add_argument("--threads", type=int, default=os.cpu_count(),
                 help="threads for both sides (default os.cpu_count())")
  p.add_argument("--no-excess-precision", action="store_true",
                 help="Seam rounds every bf16/f16 result inside kernels, as its interpreter "
                      "(seam run/bench --no-excess-precision); by default it keeps them in f32 "
                      "until stored, as XLA does")
  p.add_argument("--contention", action="store_true",
                 help="also time every model while a busy process spins on one core")
  p.add_argument("--timeout", type=float, default=1800,
                 help="seconds per model and side for everything it runs (default 1800)")
  p.add_argument("--out-dir", default=os.path.join(ROOT, "bench", "results"),
                 help="where compare-models.{md,json,png} go (default bench/results/)")
  p.add_argument("--work-dir", default="/tmp/seam-compare-models",
                 help="per-model HLO, inputs and outputs (default /tmp/seam-compare-models)")
  p.add_argument("--seam", default=os.path.join(ROOT, "build", "seam"),
                 help="the seam binary (default build/seam in the repository)")
  p.add_argument("--malloc", choices=["hugepage", "default"], default="hugepage",
                 help="hugepage (default): both sides run with GLIBC_TUNABLES="
                      "glibc.malloc.hugetlb=1 (XLA allocates fresh outputs every run), "
                      "as bench/compare.py; default: the C library's defaults")
  args = p.parse_args(argv)
  if min(args.rounds, args.repeat, args.threads) < 1 or args.warmup < 0:
    p.error("--rounds, --repeat and --threads must be >= 1, --warmup >= 0")
  return args


# --- bootstrap ------------------------------------------------------------------------

sys.path.insert(0, HERE)
import bench_venv  # noqa: E402


def missing_packages():
  missing = bench_venv.missing_pins()
  if bench_venv.dist_version("matplotlib") is None:
    missing.append("matplotlib")
  return missing


def install(missing):
  numpy_pin = [r for r in bench_venv.PINNED if r.startswith("numpy==")]
  if bench_venv.pip(*bench_venv.PINNED, "matplotlib", *numpy_pin) != 0:
    sys.exit("compare_models.py: pip install failed")


ARGS = parse_args(sys.argv[1:])
bench_venv.enter(__file__, missing_packages, install)
sys.dont_write_bytecode = True  # leave no __pycache__ in bench/

import datetime  # noqa: E402
import math  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

import compare_models_lib as lib  # noqa: E402
import report_files  # noqa: E402


def log(msg):
  print(msg, file=sys.stderr, flush=True)


def side_envs(threads, malloc):
  """Environments of the XLA worker and of Seam's subprocesses."""
  base = dict(os.environ, OMP_NUM_THREADS=str(threads))
  if malloc == "hugepage":
    tunables = base.get("GLIBC_TUNABLES", "")
    if "glibc.malloc.hugetlb" not in tunables:
      base["GLIBC_TUNABLES"] = ":".join(filter(None, [tunables, "glibc.malloc.hugetlb=1"]))
  xla = dict(base, PJRT_NPROC=str(threads), JAX_PLATFORMS="cpu", PYTHONDONTWRITEBYTECODE="1")
  flags = xla.get("XLA_FLAGS", "")
  if "xla_cpu_multi_thread_eigen" not in flags:
    xla["XLA_FLAGS"] = (flags + " --xla_cpu_multi_thread_eigen=true").strip()
  seam = dict(base, SEAM_NUM_THREADS=str(threads))
  seam.setdefault("SEAM_CACHE_DIR", "/tmp/seam-compare-cache")
  return xla, seam


class Budget:
  """What is left of one side's --timeout for one model."""

  def __init__(self, seconds):
    self.deadline = time.monotonic() + seconds

  def left(self):
    return max(1.0, self.deadline - time.monotonic())

  def spent(self):
    return time.monotonic() >= self.deadline


# --- one model ------------------------------------------------------------------------

def choose_repeat(load):
  """K: --repeat, fewer where K of XLA's runs would pass --round-budget."""
  one = min(load["warmup_s"]) if load.get("warmup_s") else load["first_s"]
  return max(1, min(ARGS.repeat, int(ARGS.round_budget / max(one, 1e-9))))


def run_rounds(worker, seam, hlo, inputs, k, budgets, label):
  """--rounds interleaved rounds, the first side alternating; per side the
  round medians (ms) and raw times, and the first error, if any."""
  sides = {"xla": {"rounds_ms": [], "medians_ms": []}, "seam": {"rounds": [], "medians_ms": []}}
  for r in range(ARGS.rounds):
    order = ["xla", "seam"] if r % 2 == 0 else ["seam", "xla"]
    for side in order:
      s = sides[side]
      if "error" not in s and budgets[side].spent():
        s["error"] = f"timed out (--timeout {ARGS.timeout:.0f} s for the model)"
      if "error" in s:
        continue
      if side == "xla":
        reply = worker.call(budgets["xla"].left(), op="time", k=k)
        if "error" in reply:
          s["error"] = reply["error"]
          continue
        times = [1e3 * t for t in reply["times"]]
        s["rounds_ms"].append([round(t, 4) for t in times])
        s["medians_ms"].append(statistics.median(times))
      else:
        rec = seam.bench(hlo, inputs, k, budgets["seam"].left())
        s["rounds"].append(rec)
        if "error" in rec:
          s["error"] = rec["error"]
          continue
        s["medians_ms"].append(rec["median_ms"])
    log(f"  {label} round {r + 1}/{ARGS.rounds}: " + ", ".join(
        f"{n} {s['medians_ms'][-1]:.3f} ms" if s["medians_ms"] and "error" not in s
        else f"{n} {s.get('error', 'n/a')}" for n, s in sides.items()))
  for s in sides.values():
    s["median_ms"] = statistics.median(s["medians_ms"]) if s["medians_ms"] else None
  ratios = [a / b for a, b in zip(sides["xla"]["medians_ms"], sides["seam"]["medians_ms"])
            if b > 0]
  return {"xla": sides["xla"], "seam": sides["seam"], "ratios": ratios,
          "ratio": statistics.median(ratios) if ratios else None}


def one_thread_rounds(hlo, k, budgets, one_thread, work):
  """Quiet rounds with both sides on one thread (a worker of its own for XLA)."""
  seam1, xla1_env = one_thread
  worker = lib.XlaWorker(xla1_env, os.path.join(work, "xla-one-thread.log"))
  try:
    inputs = os.path.join(work, "inputs.npz")
    load = worker.call(budgets["xla"].left(), op="load", hlo=hlo, inputs=inputs,
                       warmup=ARGS.warmup, warmup_budget=ARGS.round_budget)
    if "error" in load:
      return {"error": "XLA: " + load["error"]}
    return run_rounds(worker, seam1, hlo, inputs, k, budgets, "one thread")
  finally:
    worker.close()


def contended_rounds(worker, seam, hlo, inputs, k, budgets):
  busy = subprocess.Popen([sys.executable, "-c", "while True: pass"])
  try:
    time.sleep(0.2)
    return run_rounds(worker, seam, hlo, inputs, k, budgets, "contended")
  finally:
    busy.kill()
    busy.wait()


def check_outputs(worker, seam, hlo, work, budgets, facts):
  """XLA's outputs of the first run against `seam run` on the same inputs."""
  inputs = os.path.join(work, "inputs.npz")
  reply = worker.call(budgets["xla"].left(), op="outputs", path=os.path.join(work, "xla.npz"))
  run = seam.run(hlo, inputs, os.path.join(work, "seam.npz"), budgets["seam"].left())
  check = {"seam_run": run}
  if "error" in reply:
    check["error"] = "XLA: " + reply["error"]
  elif "error" in run:
    check["error"] = "Seam: " + run["error"]
  else:
    try:
      check.update(lib.compare_outputs(os.path.join(work, "xla.npz"), reply["dtypes"],
                                       os.path.join(work, "seam.npz")))
    except (OSError, ValueError, KeyError) as e:
      check["error"] = f"comparing the outputs failed: {e}"
  if facts["elided_constants"] and not facts.get("elided_filled"):
    check["not_comparable"] = (f"{facts['elided_constants']} elided constant(s): XLA fills a "
                               "counter pattern, Seam pseudo-random data")
  elif facts["rng"]:
    check["not_comparable"] = "RNG ops: Seam's SplitMix64 stream is not XLA's bits"
  return check


def run_model(model, seam, xla_env, one_thread):
  """Everything measured on one model; "skip" when XLA cannot run it."""
  t0 = time.monotonic()
  work = os.path.join(ARGS.work_dir, model["name"].replace("/", "_"))
  os.makedirs(work, exist_ok=True)
  rec = dict(model, work_dir=work)
  hlo, facts, reason = lib.prepare(model, seam, work)
  rec.update(hlo=hlo, facts=facts)
  if reason:
    rec["skip"] = reason
    return rec
  budgets = {"xla": Budget(ARGS.timeout), "seam": Budget(ARGS.timeout)}
  worker = lib.XlaWorker(xla_env, os.path.join(work, "xla.log"))
  try:
    inputs = os.path.join(work, "inputs.npz")
    load = worker.call(budgets["xla"].left(), op="load", hlo=hlo, inputs=inputs,
                       warmup=ARGS.warmup, warmup_budget=ARGS.round_budget)
    rec["xla_load"] = load
    if "error" in load:
      rec["skip"] = "XLA: " + load["error"]
      return rec
    k = rec["repeat"] = choose_repeat(load)
    log(f"  XLA compiled in {load['compile_s']:.2f} s, first run {load['first_s']:.3f} s; "
        f"K = {k}")
    rec["check"] = check_outputs(worker, seam, hlo, work, budgets, facts)
    log("  outputs: " + verdict(rec))
    rec["quiet"] = run_rounds(worker, seam, hlo, inputs, k, budgets, "quiet")
    if ARGS.contention:
      rec["contended"] = contended_rounds(worker, seam, hlo, inputs, k, budgets)
      rec["one_thread"] = one_thread_rounds(hlo, k, budgets, one_thread, work)
  finally:
    worker.close()
    rec["wall_s"] = round(time.monotonic() - t0, 1)
  return rec


# --- report ---------------------------------------------------------------------------

def verdict(rec):
  c = rec.get("check", {})
  if "error" in c:
    return f"error ({c['error'][:160]})"
  if "ok" not in c:
    return "n/a"
  worst = c.get("worst_rel_err")
  worst = f"{worst:.1e}" if worst is not None and math.isfinite(worst) else str(worst)
  if "not_comparable" in c:
    return f"n/a: {c['not_comparable']} (max rel err {worst})"
  if c["ok"]:
    return f"yes ({worst})"
  return "**NO**: " + "; ".join(c.get("failed") or [c.get("problem", "")])[:300]


def ms_cell(side):
  if side.get("median_ms") is not None:
    return f"{side['median_ms']:.3f}" + (" (incomplete)" if "error" in side else "")
  return f"failed: {side.get('error', 'n/a')[:100]}"


def median_over(rec, side, numerator, denominator):
  """rec[numerator][side]'s median over rec[denominator][side]'s."""
  n = rec.get(numerator, {}).get(side, {}).get("median_ms")
  d = rec.get(denominator, {}).get(side, {}).get("median_ms")
  return n / d if n and d else None


def slowdown(rec, side):
  return median_over(rec, side, "contended", "quiet")


def geomean(values):
  values = [v for v in values if v]
  return (math.exp(sum(math.log(v) for v in values) / len(values)), len(values)) if values \
      else (None, 0)


def x(v):
  return f"{v:.2f}x" if v else "n/a"


def peak_cell(rec):
  """Seam's measured peak memory (the estimate it checked before running)."""
  run = rec.get("check", {}).get("seam_run", {})
  if "peak_mib" not in run:
    return ""
  return f"{run['peak_mib']:.0f} ({run['estimated_mib']:.0f})"


def profile_lines(report):
  """Where a warm Seam run's time went, per model (seam run --profile)."""
  rows = []
  for rec in report["models"]:
    p = rec.get("check", {}).get("seam_run", {}).get("profile_ms")
    if not p or "skip" in rec:
      continue
    rows.append(f"| `{rec['name']}` | {p['total']:.1f} | {p.get('kernels', 0):.1f} | "
                f"{p.get('op kernels', 0):.1f} | {p.get('BLAS', 0):.1f} | "
                f"{p.get('interpreter', 0):.1f} | {p.get('the rest', 0):.1f} |")
  if not rows:
    return []
  return ["", "## Where Seam's time goes (one warm `seam run --profile`, ms)", "",
          "| model | total | stitched kernels | op kernels | BLAS | interpreter | the rest |",
          "|---|---:|---:|---:|---:|---:|---:|"] + rows


def table_lines(report):
  head = "| model | source | K | XLA ms | Seam ms | XLA/Seam | outputs equal? | Seam peak MiB |"
  rule = "|---|---|---:|---:|---:|---:|---|---:|"
  if report["contention"]:
    head += (" XLA slowdown (contended) | Seam slowdown (contended) | XLA contended / one"
             " thread | Seam contended / one thread | XLA one thread / quiet | Seam one thread /"
             " quiet |")
    rule += "---:|---:|---:|---:|---:|---:|"
  lines = [head, rule]
  for rec in report["models"]:
    if "skip" in rec:
      continue
    q = rec.get("quiet", {})
    row = (f"| `{rec['name']}` | {rec['source']} | {rec.get('repeat', '')} | "
           f"{ms_cell(q.get('xla', {}))} | {ms_cell(q.get('seam', {}))} | "
           f"{x(q.get('ratio'))} | {verdict(rec)} | {peak_cell(rec)} |")
    if report["contention"]:
      row += f" {x(slowdown(rec, 'xla'))} | {x(slowdown(rec, 'seam'))} |"
      for numerator, denominator in (("contended", "one_thread"), ("one_thread", "quiet")):
        row += "".join(f" {x(median_over(rec, side, numerator, denominator))} |"
                       for side in ("xla", "seam"))
    lines.append(row)
  return lines


def markdown(report):
  m, v = report["machine"], report["versions"]
  lines = [
      "# Seam vs XLA (jaxlib CPU client) on whole models", "",
      f"{report['date']} · {m.get('cpu_model')} ({m.get('cpus')} CPUs) · {report['threads']} "
      f"threads for both · {report['rounds']} interleaved rounds × K runs per side · median "
      f"ms · seam {v.get('seam_commit')}{' (dirty tree)' if v.get('seam_tree_dirty') else ''} "
      f"· jax/jaxlib {v.get('jax')}/{v.get('jaxlib')} · numpy {v.get('numpy')} · Python "
      f"{v.get('python')} · the run took {report['wall_s'] / 60:.1f} min", "",
      "XLA/Seam > 1: Seam is faster. XLA ms, Seam ms: median over rounds of each round's "
      "median of K runs; XLA/Seam: median of the rounds' ratios.", ""]
  lines += table_lines(report)
  g = report["geomean"]
  lines += ["", f"Geomean XLA/Seam: real models {x(g['models']['value'])} "
            f"({g['models']['count']} models); bench workloads {x(g['workloads']['value'])} "
            f"({g['workloads']['count']} workloads). Seam peak MiB: measured in `seam run` "
            "(arguments, constants, its buffers), with the estimate it checked against the "
            "machine's memory before running in parentheses."]
  lines += profile_lines(report)
  lines += details_lines(report)
  skipped = [r for r in report["models"] if "skip" in r]
  if skipped:
    lines += ["", "## Not run (XLA cannot load or run them, or did not in time, or preparing them failed)", ""]
    lines += [f"- `{r['name']}` ({os.path.basename(r['file'])}): {r['skip']}" for r in skipped]
  lines += ["", "## Notes", ""] + [f"- {n}" for n in report["notes"]]
  lines += ["", f"Command: `{report['command']}`", ""]
  return "\n".join(lines)


def details_lines(report):
  """Per model: what was rewritten, what Seam interpreted, every failure."""
  lines = []
  for rec in report["models"]:
    if "skip" in rec:
      continue
    rewrites = [r.replace(ROOT + os.sep, "") for r in rec["facts"]["rewrites"]]
    items = [f"HLO rewritten: {'; '.join(rewrites)}"] if rewrites else []
    run = rec.get("check", {}).get("seam_run", {})
    if run.get("interpreted"):
      fallbacks = run["stdout_head"].split("interpreted:", 1)[-1].splitlines()[1:]
      items.append(f"Seam interpreted {run['interpreted']} op(s)/kernel(s): " + ", ".join(
          f"`{f.strip()}`" for f in fallbacks[:run["interpreted"]] if f.startswith("  ")))
    items += [f"output {f}" for f in rec.get("check", {}).get("failed", [])]
    if "error" in rec.get("check", {}):
      items.append(f"output check: {rec['check']['error']}")
    for phase in ("quiet", "contended"):
      for side in ("xla", "seam"):
        if "error" in rec.get(phase, {}).get(side, {}):
          items.append(f"{phase} {side}: {rec[phase][side]['error']}")
    if items:
      lines += [f"- `{rec['name']}`: " + "; ".join(items)]
  return ["", "## Details", ""] + lines if lines else []


def plot(report, path):
  import matplotlib
  matplotlib.use("Agg")
  import matplotlib.pyplot as plt
  import matplotlib.ticker  # noqa: F401

  recs = [r for r in report["models"] if r.get("quiet", {}).get("xla", {}).get("median_ms")
          or r.get("quiet", {}).get("seam", {}).get("median_ms")]
  if not recs:
    return
  n = len(recs)
  xs = np.arange(n)
  fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(max(8, 0.7 * n + 3), 9))
  for i, (side, color) in enumerate((("xla", "tab:blue"), ("seam", "tab:green"))):
    vals = [r["quiet"][side].get("median_ms") for r in recs]
    pos = [xs[j] + (i - 0.5) * 0.4 for j in range(n) if vals[j]]
    ax1.bar(pos, [v for v in vals if v], 0.4, label="XLA" if side == "xla" else "Seam",
            color=color)
  ax1.set_yscale("log")
  ax1.set_ylabel("median ms (log)")
  ax1.set_title(f"Time per run ({report['machine'].get('cpu_model')}, {report['threads']} "
                "threads)")
  ax1.legend(fontsize=8)
  ratios = [r["quiet"].get("ratio") for r in recs]
  palette = {"model": "tab:purple", "workload": "tab:gray", "test": "tab:orange"}
  kept = [j for j in range(n) if ratios[j]]
  ax2.bar([xs[j] for j in kept], [ratios[j] - 1 for j in kept], 0.6, bottom=1,
          color=[palette[recs[j]["kind"]] for j in kept])  # bars grow from 1x
  ax2.set_yscale("log")
  if kept:
    values = [ratios[j] for j in kept]
    ax2.set_ylim(min(0.5, min(values) / 1.3), max(2.0, max(values) * 1.3))
  times = matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}x")
  ax2.yaxis.set_major_formatter(times)
  ax2.yaxis.set_minor_formatter(times)
  ax2.axhline(1.0, color="black", linewidth=0.8)
  ax2.set_ylabel("XLA ms / Seam ms (log; > 1: Seam faster)")
  ax2.set_title("XLA/Seam (purple: models, gray: bench workloads, orange: XLA tests)")
  for ax in (ax1, ax2):
    ax.set_xticks(xs)
    ax.set_xticklabels([r["name"] for r in recs], rotation=30, ha="right", fontsize=7)
    ax.set_xlim(-0.5, n - 0.5)
  fig.tight_layout()
  fig.savefig(path, dpi=120)
  plt.close(fig)


# --- machine, versions ----------------------------------------------------------------

def machine_info():
  info = {"platform": platform.platform(), "os_cpu_count": os.cpu_count()}
  try:
    out = subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout
    fields = {k.strip(): v.strip() for k, v in
              (line.split(":", 1) for line in out.splitlines() if ":" in line)}
    info.update(cpu_model=fields.get("Model name"), cpus=fields.get("CPU(s)"),
                threads_per_core=fields.get("Thread(s) per core"),
                sockets=fields.get("Socket(s)"))
  except (OSError, subprocess.CalledProcessError):
    pass
  try:
    with open("/proc/meminfo") as f:
      info["mem_total"] = f.readline().split(":", 1)[1].strip()
  except OSError:
    pass
  return info


def git(*args):
  try:
    return subprocess.run(["git", "-C", ROOT, *args], capture_output=True, text=True,
                          check=True).stdout.strip()
  except (OSError, subprocess.CalledProcessError):
    return None


def versions(seam_path):
  version = bench_venv.dist_version
  v = {"python": sys.version.split()[0], "jax": version("jax"), "jaxlib": version("jaxlib"),
       "numpy": np.__version__, "ml_dtypes": version("ml_dtypes"),
       "matplotlib": version("matplotlib"),
       "seam_commit": git("rev-parse", "--short", "HEAD"),
       "seam_tree_dirty": bool(git("status", "--porcelain", "--untracked-files=no"))}
  if os.path.exists(seam_path):
    v["seam_binary"] = seam_path
    v["seam_binary_mtime"] = datetime.datetime.fromtimestamp(
        os.path.getmtime(seam_path)).isoformat(timespec="seconds")
  return v


# --- main -----------------------------------------------------------------------------

def notes(seam, xla_env, seam_env):
  return [
      "Both sides run the same HLO text on the same inputs (inputs.npz, drawn once per "
      "model, seed 0: floats uniform in [-1, 1), integers in [0, 8), pred a fair coin; "
      "batch-norm variances and optimizer second moments, the parameters reaching a square "
      "root or logarithm through reshapes, broadcasts and additions only, in [0, 1)). "
      "PyTorch/XLA dumps: `seam opt --passes=transfer-remover,gelu-expander`, remaining "
      "(layout-changing) AwsNeuronTransferWithStaticRing custom-calls written as `copy`.",
      ("Elided constants are written out by `seam opt --fill-elided-constants` for both sides."
       if seam.fill_elided else
       "This seam has no `opt --fill-elided-constants`: modules with elided constants run "
       "different constants on the two sides (XLA's parser fills a counter pattern, Seam "
       "pseudo-random data), so their output check is n/a; their timing is still measured."),
      ("seam bench ran on inputs.npz (--inputs)." if seam.bench_inputs else
       "This seam bench has no --inputs: it times its own seed-0 inputs of the same "
       "distribution (other values, same shapes and dtypes); seam run used inputs.npz."),
      "Output check: per output max |XLA - Seam| / max |XLA| over the finite elements; "
      "tolerance 1e-3 for f32/f64, 2e-2 for bf16/f16, exact for integers and pred; a NaN or "
      "Inf on one side only is a mismatch. Details per output in the JSON.",
      "XLA times execute + block_until_ready of the loaded executable in its own process "
      f"after up to {ARGS.warmup} untimed runs (fewer past --round-budget). Arguments "
      "donated through input_output_alias are put back between runs, untimed, on both sides "
      "(seam bench gives each run its own copy of them). Seam: "
      "`seam bench --strategies=stitch --repeat K` per round (a warm-up run, its median of K; "
      "compile and kernel cache outside the timing).",
      ("bf16/f16: Seam's kernels round every half-typed result, as its interpreter "
       "(--no-excess-precision)." if ARGS.no_excess_precision else
       "bf16/f16: both keep half arithmetic in f32 inside a kernel or fusion until a value is "
       "stored (excess precision, both sides' default)."),
      f"Threads: XLA PJRT_NPROC={xla_env['PJRT_NPROC']}, XLA_FLAGS={xla_env['XLA_FLAGS']}; "
      f"Seam SEAM_NUM_THREADS={seam_env['SEAM_NUM_THREADS']}, OMP_NUM_THREADS="
      f"{seam_env['OMP_NUM_THREADS']}; GLIBC_TUNABLES={xla_env.get('GLIBC_TUNABLES')} for both.",
      "Contention (when run): a separate `python -c 'while True: pass'` process spins, "
      "unpinned, during the contended rounds; slowdown = contended median / quiet median. "
      "One thread: both sides quiet on one thread (XLA PJRT_NPROC=1 and "
      "--xla_cpu_multi_thread_eigen=false, Seam SEAM_NUM_THREADS=1); with one of two cores "
      "taken a side can at best keep about its one-thread speed.",
  ]


def main():
  seam_path = os.path.abspath(ARGS.seam)
  if not os.path.exists(seam_path):
    sys.exit(f"compare_models.py: {seam_path} not found (build Seam first)")
  models, unknown = lib.select_models(lib.find_models(), ARGS.models)
  if unknown or not models:
    names = ", ".join(m["name"] for m in lib.find_models())
    sys.exit(f"compare_models.py: no model matches {','.join(unknown) or ARGS.models}; "
             f"known: {names}")
  xla_env, seam_env = side_envs(ARGS.threads, ARGS.malloc)
  seam = lib.Seam(seam_path, seam_env, ARGS.timeout, not ARGS.no_excess_precision)
  xla1_env, seam1_env = side_envs(1, ARGS.malloc)
  xla1_env["XLA_FLAGS"] = xla1_env["XLA_FLAGS"].replace("multi_thread_eigen=true",
                                                        "multi_thread_eigen=false")
  one_thread = (lib.Seam(seam_path, seam1_env, ARGS.timeout, not ARGS.no_excess_precision), xla1_env)
  log(f"{len(models)} model(s), {ARGS.threads} threads, {ARGS.rounds} rounds x K<={ARGS.repeat}"
      f"; seam: fill-elided-constants {'yes' if seam.fill_elided else 'no'}, bench --inputs "
      f"{'yes' if seam.bench_inputs else 'no'}")
  records, t0 = [], time.monotonic()
  for i, model in enumerate(models):
    log(f"[{i + 1}/{len(models)}] {model['name']}")
    rec = run_model(model, seam, xla_env, one_thread)
    if "skip" in rec:
      log(f"  not run: {rec['skip']}")
    records.append(rec)
  report = build_report(records, seam, xla_env, seam_env, time.monotonic() - t0)
  write_outputs(report)
  return 0


def build_report(records, seam, xla_env, seam_env, wall_s):
  def ratios(kind):
    value, count = geomean([r.get("quiet", {}).get("ratio") for r in records
                            if r["kind"] == kind])
    return {"value": value, "count": count}

  command = shlex.join(["python3", os.path.relpath(os.path.abspath(__file__), os.getcwd()),
                        *sys.argv[1:]])
  return {
      "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
      "command": command, "threads": ARGS.threads, "rounds": ARGS.rounds,
      "repeat": ARGS.repeat, "round_budget_s": ARGS.round_budget, "warmup": ARGS.warmup,
      "contention": ARGS.contention, "timeout_s": ARGS.timeout, "wall_s": round(wall_s, 1),
      "machine": machine_info(), "versions": versions(os.path.abspath(ARGS.seam)),
      "seam_features": {"opt_fill_elided_constants": seam.fill_elided,
                        "bench_inputs": seam.bench_inputs},
      "env": {"xla": {k: xla_env.get(k) for k in ("PJRT_NPROC", "XLA_FLAGS", "OMP_NUM_THREADS",
                                                  "JAX_PLATFORMS", "GLIBC_TUNABLES")},
              "seam": {k: seam_env.get(k) for k in ("SEAM_NUM_THREADS", "OMP_NUM_THREADS",
                                                    "SEAM_CACHE_DIR", "GLIBC_TUNABLES")}},
      "geomean": {"models": ratios("model"), "workloads": ratios("workload")},
      "models": records, "notes": notes(seam, xla_env, seam_env),
  }


def write_outputs(report):
  base = report_files.write_report(ARGS.out_dir, "compare-models", markdown(report), report, plot, log)
  log(f"wrote {base}.md, {base}.json, {base}.png ({report['wall_s']:.0f} s)")


if __name__ == "__main__":
  sys.exit(main())
