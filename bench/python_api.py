#!/usr/bin/env python3
"""Seam through its Python API (seam.jit) against jax.jit in the same
process: the same functions, the same inputs, the same threads, calls
interleaved round by round, medians. A benchmark, not a timed test.

  - dispatch: the time of a call on tiny inputs (x + 1 on f32[4]): what a
    call costs besides its kernels. jax.jit's results are waited for
    (block_until_ready), as Seam's calls return finished.
  - first call: tracing, lowering and compiling, with Seam's caches empty
    (cold: a fresh SEAM_CACHE_DIR) and full (warm: the module and kernel
    caches hold it, as in a second process); jax.jit's first call of a
    function it has not seen.
  - steady state: the bench workloads (bench/workloads/make_workloads.py)
    and the training steps of python/tests/train_problems.py (an MLP and a
    transformer block, value_and_grad + Adam).

Run from the repository root with the test venv, after scripts/run_tests.sh
(or any build with -DSEAM_PYTHON=ON):

  PYTHONPATH=build/python build/pyenv/bin/python bench/python_api.py [--rounds R]

Writes bench/results/python-api.md and .json (--out-dir to change).
"""

import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

os.environ.setdefault("JAX_PLATFORMS", "cpu")
os.environ["SEAM_BENCH_PYTHON"] = "current"  # make_workloads: this interpreter, no venv

import numpy as np  # noqa: E402
import jax  # noqa: E402

import seam  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(ROOT, "bench", "workloads"))
sys.path.insert(0, os.path.join(ROOT, "python", "tests"))
import make_workloads  # noqa: E402
import train_problems  # noqa: E402


def random_inputs(specs, seed=0):
    """numpy arrays for a pytree of ShapeDtypeStruct: floats uniform in
    [-1, 1), pred a fair coin (as bench/compare.py draws them)."""
    rng = np.random.RandomState(seed)

    def one(spec):
        if spec.dtype == np.bool_:
            return rng.randint(0, 2, spec.shape).astype(np.bool_)
        return rng.uniform(-1, 1, spec.shape).astype(spec.dtype)

    return jax.tree_util.tree_map(one, specs)


def block(tree):
    for leaf in jax.tree_util.tree_leaves(tree):
        if hasattr(leaf, "block_until_ready"):
            leaf.block_until_ready()
    return tree


def interleaved(calls, rounds, budget_s):
    """Median seconds per call of each of `calls` (name -> thunk): every
    round runs each K times in turn, K chosen so a round of one takes about
    budget_s."""
    for call in calls.values():  # warm-up
        block(call())
    per_round = {}
    for name, call in calls.items():
        start = time.perf_counter()
        block(call())
        one = max(time.perf_counter() - start, 1e-7)
        per_round[name] = max(1, min(10000, int(budget_s / one)))
    samples = {name: [] for name in calls}
    for _ in range(rounds):
        for name, call in calls.items():
            k = per_round[name]
            start = time.perf_counter()
            for _ in range(k):
                block(call())
            samples[name].append((time.perf_counter() - start) / k)
    return {name: statistics.median(s) for name, s in samples.items()}


def dispatch(rounds):
    x = np.ones(4, np.float32)
    inc = lambda v: v + 1
    with_seam, with_jax = seam.jit(inc), jax.jit(inc)
    exe = with_seam.compiled(x)
    xj = jax.numpy.asarray(x)
    t = interleaved({"seam.jit": lambda: with_seam(x), "jax.jit": lambda: with_jax(x),
                     "seam.jit, JAX array in": lambda: with_seam(xj),
                     "jax.jit, JAX array in": lambda: with_jax(xj),
                     "seam.Executable, numpy": lambda: exe(x)}, rounds, 0.05)
    return {k: v * 1e6 for k, v in t.items()}


def first_calls():
    """Seconds of the first call of each workload: Seam cold, Seam warm,
    jax.jit."""
    rows = []
    old = os.environ.get("SEAM_CACHE_DIR")
    with tempfile.TemporaryDirectory() as cache:
        os.environ["SEAM_CACHE_DIR"] = cache
        for name, fn, specs, _, _ in make_workloads.WORKLOADS:
            args = random_inputs(specs)
            row = {"name": name}
            for label in ("seam cold", "seam warm"):
                f = seam.jit(lambda *a, fn=fn: fn(*a))  # a new function: nothing cached in memory
                start = time.perf_counter()
                block(f(*args))
                row[label] = time.perf_counter() - start
            g = jax.jit(lambda *a, fn=fn: fn(*a))
            start = time.perf_counter()
            block(g(*args))
            row["jax.jit"] = time.perf_counter() - start
            rows.append(row)
    if old is None:
        del os.environ["SEAM_CACHE_DIR"]
    else:
        os.environ["SEAM_CACHE_DIR"] = old
    return rows


def steady(rounds):
    rows = []
    for name, fn, specs, klass, _ in make_workloads.WORKLOADS:
        args = random_inputs(specs)
        seam_fn, jax_fn = seam.jit(fn), jax.jit(fn)
        t = interleaved({"seam": lambda: seam_fn(*args), "jax": lambda: jax_fn(*args)},
                        rounds, 0.2)
        rows.append({"name": name, "class": klass, "seam_ms": t["seam"] * 1e3,
                     "jax_ms": t["jax"] * 1e3})
    for name, problem in (("train step: MLP", train_problems.mlp_problem),
                          ("train step: transformer block", train_problems.transformer_problem)):
        loss_fn, params, batches = problem(1)
        step = train_problems.adam_step(loss_fn)
        opt = train_problems.adam_state(params)
        seam_fn, jax_fn = seam.jit(step), jax.jit(step)
        t = interleaved({"seam": lambda: seam_fn(params, opt, batches[0]),
                         "jax": lambda: jax_fn(params, opt, batches[0])}, rounds, 0.2)
        rows.append({"name": name, "class": "training (value_and_grad + Adam)",
                     "seam_ms": t["seam"] * 1e3, "jax_ms": t["jax"] * 1e3})
    return rows


def geomean(values):
    return float(np.exp(np.mean(np.log(values))))


def commit():
    try:
        return subprocess.check_output(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                                       text=True).strip()
    except (OSError, subprocess.CalledProcessError):
        return "?"


def report(results):
    d, f, s = results["dispatch_us"], results["first_call"], results["steady"]
    lines = [
        "# Seam from Python: seam.jit against jax.jit in one process", "",
        f"{results['date']} · {results['machine']} · {results['threads']} threads for both · "
        f"seam {results['commit']} · jax {results['jax']} · Python {results['python']} · "
        f"{results['rounds']} interleaved rounds, medians",
        "", "Made by `PYTHONPATH=build/python build/pyenv/bin/python bench/python_api.py`.",
        "", "## Dispatch: a call on f32[4] (x + 1)", "",
        "| path | us per call |", "|---|---:|"]
    lines += [f"| {k} | {v:.1f} |" for k, v in d.items()]
    lines += ["", f"seam.jit / jax.jit: {d['seam.jit'] / d['jax.jit']:.2f}x the time per call "
              f"(numpy in), {d['seam.jit, JAX array in'] / d['jax.jit, JAX array in']:.2f}x "
              "(JAX arrays in); the aim is within 2x.", "",
              "## First call: trace, lower, compile and run (s)", "",
              "| workload | Seam, cold caches | Seam, warm caches | jax.jit |", "|---|---:|---:|---:|"]
    lines += [f"| {r['name']} | {r['seam cold']:.3f} | {r['seam warm']:.3f} | {r['jax.jit']:.3f} |"
              for r in f]
    lines += ["", f"Medians: Seam cold {statistics.median(r['seam cold'] for r in f):.3f} s, "
              f"warm {statistics.median(r['seam warm'] for r in f):.3f} s, "
              f"jax.jit {statistics.median(r['jax.jit'] for r in f):.3f} s.", "",
              "## Steady state (ms per call)", "",
              "| function | class | seam.jit | jax.jit | jax.jit / seam.jit |",
              "|---|---|---:|---:|---:|"]
    lines += [f"| {r['name']} | {r['class']} | {r['seam_ms']:.3f} | {r['jax_ms']:.3f} | "
              f"{r['jax_ms'] / r['seam_ms']:.2f}x |" for r in s]
    work = [r for r in s if not r["name"].startswith("train")]
    train = [r for r in s if r["name"].startswith("train")]
    lines += ["", f"Geomean jax.jit / seam.jit: workloads "
              f"{geomean([r['jax_ms'] / r['seam_ms'] for r in work]):.2f}x ({len(work)}), "
              f"training steps {geomean([r['jax_ms'] / r['seam_ms'] for r in train]):.2f}x "
              f"({len(train)}). Above 1: Seam is faster.", ""]
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--out-dir", default=os.path.join(ROOT, "bench", "results"))
    args = parser.parse_args()
    started = time.time()
    results = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "machine": f"{platform.processor() or platform.machine()} ({os.cpu_count()} CPUs)",
        "threads": len(os.sched_getaffinity(0)), "commit": commit(), "jax": jax.__version__,
        "python": platform.python_version(), "rounds": args.rounds}
    print("dispatch ...", file=sys.stderr)
    results["dispatch_us"] = dispatch(args.rounds)
    print("first calls ...", file=sys.stderr)
    results["first_call"] = first_calls()
    print("steady state ...", file=sys.stderr)
    results["steady"] = steady(args.rounds)
    results["seconds"] = time.time() - started
    os.makedirs(args.out_dir, exist_ok=True)
    text = report(results)
    with open(os.path.join(args.out_dir, "python-api.md"), "w") as f:
        f.write(text)
    with open(os.path.join(args.out_dir, "python-api.json"), "w") as f:
        json.dump(results, f, indent=1)
    print(text)


if __name__ == "__main__":
    main()
