#!/usr/bin/env python3
"""A mutation campaign against the command line, as an attacker would run it.

Writes mutants of HLO modules (seam_hlo_mutate: byte, structure and attribute
mutations), runs each through `seam opt`, `seam run --backend=interp` and
`seam run --verify` (the CPU backend against the interpreter), preferably a
sanitizer build of seam, and sorts every run:

  accepted   exit 0
  refused    a non-zero exit with an error message
  unexplained  a non-zero exit without one
  crash      a signal, a sanitizer report, an uncaught exception
  hang       past --timeout seconds
  wrong      --verify found outputs that differ from the module as written

Crashes, hangs, wrong and unexplained runs are copied with their output to
OUT/findings/<class>/; the counts go to OUT/summary.json and stdout. The exit
status is 1 when anything but accepted and refused was found.

  ninja -C "$(scripts/configure_fuzz_build.sh --optimized)" seam
  scripts/mutation_campaign.py --seam build-fuzz/seam \\
      --mutate build/tests/fuzz/seam_hlo_mutate --count 3000 --out /tmp/campaign
"""
import argparse
import collections
import concurrent.futures
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

COMMANDS = {
    "opt": ["opt"],
    "interp": ["run", "--backend=interp"],
    "verify": ["run", "--verify"],
}
CRASH_SIGNS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:",
               "terminate called", "Segmentation fault", "Aborted")


# The largest array of a default input, in elements: a sanitizer build's
# interpreter takes minutes over 20M elements (a golden test's long reduce),
# which is slowness, not a hang.
MAX_ELEMENTS = 1 << 22


def largest_array(text):
    largest = 0
    for dims in re.findall(r"\b[a-z]+[0-9]*\[([0-9,]+)\]", text):
        elements = 1
        for d in dims.split(","):
            elements *= int(d) if d else 1
        largest = max(largest, elements)
    return largest


def default_inputs():
    """The corpus's modules and the golden tests' modules, up to 64 KiB and arrays of
    MAX_ELEMENTS. Larger models and the benchmark workloads (arrays of 100 MB) take
    minutes in a sanitizer build's interpreter: pass them explicitly, with a longer
    --timeout."""
    patterns = ["tests/corpus/hlo/*.hlo", "tests/corpus/hlo/*.txt", "tests/golden/**/*.hlo"]
    found = []
    for pattern in patterns:
        for path in sorted(glob.glob(os.path.join(ROOT, pattern), recursive=True)):
            if os.path.getsize(path) > 64 << 10:
                continue
            with open(path, errors="replace") as f:
                if largest_array(f.read()) <= MAX_ELEMENTS:
                    found.append(path)
    return found


def classify(returncode, stdout, stderr, timed_out):
    if timed_out:
        return "hang"
    if returncode < 0 or returncode >= 128 or any(s in stderr for s in CRASH_SIGNS):
        return "crash"
    if "verify: FAILED" in stdout:
        return "wrong"
    if returncode == 0:
        return "accepted"
    return "refused" if stderr.strip() or stdout.strip() else "unexplained"


def run_one(seam, command, mutant, timeout, env):
    started = time.monotonic()
    try:
        done = subprocess.run([seam, *COMMANDS[command], mutant], capture_output=True,
                              timeout=timeout, env=env)
        stdout = done.stdout.decode(errors="replace")
        stderr = done.stderr.decode(errors="replace")
        verdict = classify(done.returncode, stdout, stderr, False)
        returncode = done.returncode
    except subprocess.TimeoutExpired as expired:
        stdout = (expired.stdout or b"").decode(errors="replace")
        stderr = (expired.stderr or b"").decode(errors="replace")
        verdict, returncode = "hang", None
    return {"command": command, "mutant": mutant, "verdict": verdict, "returncode": returncode,
            "seconds": time.monotonic() - started, "stdout": stdout[-4000:],
            "stderr": stderr[-8000:]}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seam", required=True, help="the seam binary (a sanitizer build)")
    parser.add_argument("--mutate", required=True, help="the seam_hlo_mutate binary")
    parser.add_argument("--out", required=True, help="directory for mutants and findings")
    parser.add_argument("--count", type=int, default=3000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--timeout", type=float, default=120,
                        help="seconds before a run counts as a hang")
    parser.add_argument("--commands", default="opt,interp,verify")
    parser.add_argument("inputs", nargs="*", help="HLO files to mutate (default: the corpus, "
                        "the workloads and the golden tests' modules)")
    args = parser.parse_args()

    inputs = args.inputs or default_inputs()
    mutants_dir = os.path.join(args.out, "mutants")
    shutil.rmtree(mutants_dir, ignore_errors=True)
    subprocess.run([args.mutate, "--seed", str(args.seed), "--count", str(args.count),
                    "--out", mutants_dir, *inputs], check=True)
    mutants = sorted(glob.glob(os.path.join(mutants_dir, "*.hlo")),
                     key=lambda p: int(os.path.basename(p).split(".")[0]))
    env = dict(os.environ)
    env.setdefault("SEAM_CACHE_DIR", os.path.join(args.out, "kernel-cache"))
    env.setdefault("ASAN_OPTIONS", "detect_leaks=1")
    env.setdefault("LSAN_OPTIONS", f"suppressions={ROOT}/tests/fuzz/lsan.supp")
    env.setdefault("UBSAN_OPTIONS", "print_stacktrace=1")
    commands = args.commands.split(",")
    print(f"campaign: {len(mutants)} mutants of {len(inputs)} modules (seed {args.seed}) "
          f"through {', '.join(commands)}; {args.jobs} jobs", flush=True)

    counts = {c: collections.Counter() for c in commands}
    by_kind = collections.defaultdict(collections.Counter)
    findings = []
    started = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        futures = [pool.submit(run_one, args.seam, c, m, args.timeout, env)
                   for m in mutants for c in commands]
        for n, future in enumerate(concurrent.futures.as_completed(futures), 1):
            result = future.result()
            counts[result["command"]][result["verdict"]] += 1
            kinds = os.path.basename(result["mutant"]).split(".")[1]
            for kind in kinds.split("+"):
                by_kind[kind][result["verdict"]] += 1
            if result["verdict"] not in ("accepted", "refused"):
                findings.append(result)
                where = os.path.join(args.out, "findings", result["verdict"])
                os.makedirs(where, exist_ok=True)
                base = os.path.join(where, f"{result['command']}.{os.path.basename(result['mutant'])}")
                shutil.copy(result["mutant"], base)
                with open(base + ".log", "w") as log:
                    log.write(f"returncode {result['returncode']}\n-- stdout\n{result['stdout']}"
                              f"\n-- stderr\n{result['stderr']}")
                print(f"  {result['verdict']}: {result['command']} {result['mutant']}", flush=True)
            if n % 500 == 0:
                print(f"  {n}/{len(futures)} runs, {time.monotonic() - started:.0f} s", flush=True)

    summary = {"mutants": len(mutants), "inputs": len(inputs), "seed": args.seed,
               "seconds": round(time.monotonic() - started),
               "by_command": {c: dict(v) for c, v in counts.items()},
               "by_mutation": {k: dict(v) for k, v in sorted(by_kind.items())}}
    with open(os.path.join(args.out, "summary.json"), "w") as f:
        json.dump(summary, f, indent=2)
    verdicts = ["accepted", "refused", "unexplained", "crash", "hang", "wrong"]
    print(f"\n{'':12}" + "".join(f"{v:>12}" for v in verdicts))
    for name, table in [*counts.items(), *sorted(by_kind.items())]:
        print(f"{name:12}" + "".join(f"{table.get(v, 0):>12}" for v in verdicts))
    print(f"{summary['seconds']} s; findings: {len(findings)} (in {args.out}/findings)")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
