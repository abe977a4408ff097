#!/usr/bin/env python3
"""Runs the benchmark workloads under jax.jit (XLA), PyTorch eager,
torch.compile (Inductor) and Seam side by side, in one run, with the same
thread count, and writes a markdown table, a JSON file with every raw number
and a PNG plot.

  python3 bench/compare.py                                  all 11 workloads, CPU
  python3 bench/compare.py --workloads rms_norm,bias_gelu --repeat 3
  python3 bench/compare.py --dtype bf16                      the same at bf16 (compare-cpu-bf16.*)
  python3 bench/compare.py --check-only                     JAX vs torch numerics on small shapes
  python3 bench/compare.py --help                           every option

Outputs (in --out-dir, default bench/results/): compare-<device>.md,
compare-<device>.json, compare-<device>.png; the table also goes to stdout,
progress to stderr.

Where the pieces come from:
- The JAX functions are the ones in bench/workloads/make_workloads.py,
  imported as a module (inside the venv its bootstrap is a no-op and its main
  does not run); the PyTorch twins are in bench/compare_functions.py.
- JAX and PyTorch get identical inputs: numpy arrays drawn once per workload
  (seed 0: floats uniform in [-1, 1), pred a fair coin, scalars too), shared by
  both. Seam draws its own inputs of the same distribution (`seam bench
  --seed 0`), so the values differ but shapes, dtypes and distribution match.
- Rounds (--rounds R, default 3): each workload is timed R times over, every
  framework in turn within a round (each Seam strategy by its own `seam bench
  --json --strategies=S` of that workload, so that its timed runs follow one
  another as every peer's do; one `seam bench --strategies=xla,stitch`
  alternates the two, and the xla-style plan's larger traffic between stitch
  runs evicts what a peer's back-to-back runs find in the last-level cache),
  the order rotated from round to round, so that every framework meets the
  same spells of a shared machine's noise. A framework's time is the median of its rounds' medians; the report
  also gives the geomeans of each round alone.
- Threads (--threads N, default os.cpu_count()): torch.set_num_threads(N) and
  OMP_NUM_THREADS=N (PyTorch, Inductor's OpenMP kernels, Seam's subprocess);
  for XLA, PJRT_NPROC=N plus XLA_FLAGS=--xla_cpu_multi_thread_eigen=true.
  jaxlib 0.10.2's CPU client sizes its thread pool from PJRT_NPROC (else the
  machine's parallelism): checked by the process's thread count rising with
  it. `intra_op_parallelism_threads` is a TensorFlow session option, not an
  XLA flag: as `--intra_op_parallelism_threads=N` in XLA_FLAGS jaxlib aborts
  ("Unknown flag in XLA_FLAGS"), without the dashes it is silently ignored.

The script runs itself inside bench/.venv (git-ignored, shared with
make_workloads.py): it creates the venv when missing, installs the JAX pins
of make_workloads.py, torch (the CPU wheel index first, PyPI when that index
is unreachable; PyPI's CUDA build for --device cuda) and matplotlib there,
then re-executes under it. When everything is installed that check costs no
pip call. SEAM_BENCH_PYTHON=current skips all of that and uses the running
interpreter's packages as they are.
"""

import argparse
import atexit
import os
import shlex
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, ".."))
MAKE_WORKLOADS = os.path.join(ROOT, "bench", "workloads", "make_workloads.py")
WORKLOAD_DIR = os.path.join(ROOT, "bench", "workloads")
TORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu"
ALL_WORKLOADS = ["attention_softmax", "bias_gelu", "dropout_residual_layernorm",
                 "layernorm_backward", "rms_norm", "vocab_log_softmax", "dien_rows",
                 "batchnorm_relu_nchw", "column_reduce", "adam", "lamb"]


def parse_args(argv):
  p = argparse.ArgumentParser(
      description="Seam vs jax.jit vs PyTorch eager vs torch.compile on the bench workloads.")
  p.add_argument("--workloads", default="all",
                 help="comma-separated workload names (default: all): " + ",".join(ALL_WORKLOADS))
  p.add_argument("--repeat", type=int, default=11,
                 help="timed runs per framework and round (default 11)")
  p.add_argument("--rounds", type=int, default=3,
                 help="rounds per workload (default 3): each times every framework in turn, "
                      "the order rotated from round to round; a framework's time is the "
                      "median of its rounds' medians")
  p.add_argument("--warmup", type=int, default=2,
                 help="untimed runs after the first (compiling) call (default 2)")
  p.add_argument("--threads", type=int, default=os.cpu_count(),
                 help="threads for every framework (default os.cpu_count())")
  p.add_argument("--out-dir", default=os.path.join(ROOT, "bench", "results"),
                 help="where the .md/.json/.png go (default bench/results/)")
  p.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
  p.add_argument("--dtype", choices=["f32", "bf16"], default="f32",
                 help="f32 (default): the workloads as committed; bf16: every f32 input of "
                      "each JAX function made bf16 and lowered again for Seam (the report is "
                      "compare-DEVICE-bf16)")
  p.add_argument("--seam", default=os.path.join(ROOT, "build", "seam"),
                 help="the seam binary (default build/seam in the repository)")
  p.add_argument("--seam-strategies", default="xla,stitch",
                 help="the Seam strategies timed, each by its own seam bench --strategies=S "
                      "(default xla,stitch)")
  p.add_argument("--malloc", choices=["hugepage", "default"], default="hugepage",
                 help="hugepage (default): run with GLIBC_TUNABLES=glibc.malloc.hugetlb=1 and "
                      "THP_MEM_ALLOC_ENABLE=1, so the fresh output buffers jax.jit and torch "
                      "allocate on every call fault in 2 MiB pages, not 4 KiB ones (Seam's "
                      "bench reuses its output buffers); default: the C library's defaults")
  p.add_argument("--skip-compile", action="store_true", help="do not run torch.compile")
  p.add_argument("--skip-seam", action="store_true", help="do not run seam bench")
  p.add_argument("--check-only", action="store_true",
                 help="only compare JAX and the torch twins numerically on small shapes "
                      "(every dimension capped at --check-cap) and print the result")
  p.add_argument("--check-cap", type=int, default=48, help="dimension cap for --check-only")
  args = p.parse_args(argv)
  names = ALL_WORKLOADS if args.workloads == "all" else [
      n.strip() for n in args.workloads.split(",") if n.strip()]
  unknown = [n for n in names if n not in ALL_WORKLOADS]
  if unknown or not names:
    p.error(f"unknown workload(s) {','.join(unknown)}; known: {','.join(ALL_WORKLOADS)}")
  args.names = names
  if args.repeat < 1 or args.rounds < 1 or args.threads < 1 or args.warmup < 0:
    p.error("--repeat, --rounds and --threads must be >= 1, --warmup >= 0")
  return args


# --- bootstrap ---------------------------------------------------------------

sys.path.insert(0, HERE)
import bench_venv  # noqa: E402
from bench_venv import JAX_VERSION, PINNED, dist_version, pip  # noqa: E402


def cuda_jax_extra():
  """The jax extra whose CUDA major matches the installed torch (PyPI's
  torch builds for CUDA 12 or 13)."""
  from importlib import metadata
  try:
    requires = " ".join(metadata.requires("torch") or [])
  except metadata.PackageNotFoundError:
    requires = ""
  return "cuda12" if "cu12" in requires else "cuda13"


def missing_packages(device):
  missing = []
  for req in PINNED:
    name, version = req.split("==")
    if dist_version(name.split("[")[0]) != version:
      missing.append(req)
  torch_version = dist_version("torch")
  if torch_version is None or (device == "cuda" and "+cpu" in torch_version):
    missing.append("torch")
  if dist_version("matplotlib") is None:
    missing.append("matplotlib")
  if device == "cuda" and dist_version(f"jax-{cuda_jax_extra()}-plugin") != JAX_VERSION:
    missing.append(f"jax[{cuda_jax_extra()}]=={JAX_VERSION}")
  return missing


def install(missing, device):
  numpy_pin = [r for r in PINNED if r.startswith("numpy==")]
  pinned = [r for r in missing if r in PINNED]
  if pinned and pip(*PINNED) != 0:
    sys.exit("compare.py: installing the JAX pins failed")
  if "torch" in missing:
    torch_version = dist_version("torch")
    if device == "cuda":
      # the CPU wheel cannot run on the GPU: PyPI's torch is the CUDA build
      extra = ["--force-reinstall", f"torch=={torch_version.split('+')[0]}"] if torch_version \
          else ["torch"]
      if pip(*extra) != 0:
        sys.exit("compare.py: installing torch (CUDA build, PyPI) failed")
    elif pip("--timeout", "15", "--retries", "0", "--index-url", TORCH_CPU_INDEX, "torch") != 0:
      print(f"compare.py: {TORCH_CPU_INDEX} unreachable or failed; torch from PyPI instead",
            file=sys.stderr)
      if pip("torch") != 0:
        sys.exit("compare.py: installing torch failed")
  if "matplotlib" in missing and pip("matplotlib", *numpy_pin) != 0:
    sys.exit("compare.py: installing matplotlib failed")
  cuda = [r for r in missing if r.startswith("jax[cuda")]
  if cuda and pip(*cuda, *numpy_pin) != 0:
    print(f"compare.py: installing {cuda[0]} failed; JAX will have no GPU", file=sys.stderr)


def apply_malloc(args, argv):
  """--malloc hugepage: glibc reads its tunables at start-up, so set them and
  re-execute once."""
  tunables = os.environ.get("GLIBC_TUNABLES", "")
  if args.malloc != "hugepage" or "glibc.malloc.hugetlb" in tunables:
    return
  os.environ["GLIBC_TUNABLES"] = ":".join(filter(None, [tunables, "glibc.malloc.hugetlb=1"]))
  os.environ["THP_MEM_ALLOC_ENABLE"] = "1"  # PyTorch's CPU allocator: madvise huge pages
  os.execv(sys.executable, [sys.executable, *argv])


def bootstrap(args):
  """Runs this script in bench/.venv (bench_venv) with the JAX pins, torch and
  matplotlib; glibc's tunables for --malloc once there."""
  argv = [os.path.abspath(__file__), *sys.argv[1:]]
  bench_venv.enter(__file__, lambda: missing_packages(args.device),
                   lambda missing: install(missing, args.device),
                   required=lambda missing: any(m in PINNED or m == "torch" for m in missing),
                   ready=lambda: apply_malloc(args, argv))


ARGS = parse_args(sys.argv[1:])
bootstrap(ARGS)

# Threads and platforms must be set before jax and torch are imported.
N_THREADS = ARGS.threads
os.environ["OMP_NUM_THREADS"] = str(N_THREADS)
os.environ["PJRT_NPROC"] = str(N_THREADS)
if "xla_cpu_multi_thread_eigen" not in os.environ.get("XLA_FLAGS", ""):
  os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") +
                             " --xla_cpu_multi_thread_eigen=true").strip()
os.environ["JAX_PLATFORMS"] = "cpu" if ARGS.device == "cpu" else "cuda,cpu"
sys.dont_write_bytecode = True  # leave no __pycache__ in bench/workloads

import datetime  # noqa: E402
import resource  # noqa: E402
import gc  # noqa: E402
import importlib.util  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import platform  # noqa: E402
import shutil  # noqa: E402
import statistics  # noqa: E402
import tempfile  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402
import traceback  # noqa: E402

import numpy as np  # noqa: E402
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import jaxlib  # noqa: E402
import torch  # noqa: E402


def import_make_workloads():
  spec = importlib.util.spec_from_file_location("make_workloads", MAKE_WORKLOADS)
  module = importlib.util.module_from_spec(spec)
  spec.loader.exec_module(module)  # bootstrap() is a no-op here: in the venv, pinned jax
  return module


MW = import_make_workloads()
sys.path.insert(0, HERE)
from compare_functions import TWINS  # noqa: E402
import report_files  # noqa: E402

BF16 = np.dtype(jnp.bfloat16)
FRAMEWORKS = [  # key, label
    ("jax", "jax.jit"), ("torch_eager", "torch eager"), ("torch_compile", "torch.compile"),
    ("seam_stitch", "Seam stitch"), ("seam_xla", "Seam xla-style")]
LABEL = dict(FRAMEWORKS)
PEERS = ["jax", "torch_eager", "torch_compile", "seam_xla"]  # what stitch is compared with


def log(msg):
  print(msg, file=sys.stderr, flush=True)


# --- inputs and conversions ----------------------------------------------------

def make_inputs(specs, seed=0):
  """numpy arrays for a pytree of ShapeDtypeStruct: floats uniform in [-1, 1),
  pred a fair coin; one generator per workload so a subset draws the same."""
  rng = np.random.default_rng(seed)

  def one(s):
    dtype = np.dtype(s.dtype)
    if dtype == np.bool_:
      return rng.integers(0, 2, size=s.shape, dtype=np.uint8).astype(np.bool_)
    x = np.asarray(rng.random(s.shape, dtype=np.float32))
    x *= 2
    x -= 1
    return x if dtype == np.float32 else x.astype(dtype)

  return jax.tree_util.tree_map(one, specs)


def np_to_torch(a, device):
  if a.dtype == BF16:
    t = torch.from_numpy(a.view(np.uint16)).view(torch.bfloat16)
  else:
    t = torch.from_numpy(a)
  return t.to(device) if device != "cpu" else t


def to_float_np(x):
  if isinstance(x, torch.Tensor):
    x = x.detach().cpu()
    return (x.float() if x.is_floating_point() else x).numpy()
  x = np.asarray(x)
  return x.astype(np.float32) if x.dtype == BF16 else x


def leaves(tree):
  return jax.tree_util.tree_leaves(tree)


def agreement(ref, got):
  """Worst over the outputs of max|ref - got| / max|ref| (normwise relative
  error); inf where shapes differ or where one side has a NaN/Inf the other
  does not."""
  ref_leaves, got_leaves = leaves(ref), leaves(got)
  if len(ref_leaves) != len(got_leaves):
    return math.inf
  worst = 0.0
  for r, g in zip(ref_leaves, got_leaves):
    r, g = to_float_np(r), to_float_np(g)
    if r.shape != g.shape:
      return math.inf
    r = r.astype(np.float32, copy=False)
    g = g.astype(np.float32, copy=False)
    finite_r, finite_g = np.isfinite(r), np.isfinite(g)
    if not np.array_equal(finite_r, finite_g):
      return math.inf
    if not finite_r.all():
      r, g = r[finite_r], g[finite_g]
    if r.size == 0:
      continue
    scale = float(np.max(np.abs(r)))
    err = float(np.max(np.abs(r - g)))
    worst = max(worst, err / scale if scale > 0 else err)
  return worst


def tolerance(out_specs):
  """1e-4 for f32 outputs; for bf16 ones a few of bf16's steps (2^-8 of the
  value): JAX rounds every op to bf16, PyTorch's kernels keep float inside,
  and a layer norm backward's or LAMB's chain of ops differ by 1-1.5e-2."""
  return 3e-2 if any(np.dtype(s.dtype) == BF16 for s in leaves(out_specs)) else 1e-4


# --- timing --------------------------------------------------------------------

def short_error(e):
  text = f"{type(e).__name__}: {e}".strip()
  lines = [l for l in text.splitlines() if l.strip()]
  return " | ".join(lines[:3])[:500]


def torch_device():
  return "cuda" if ARGS.device == "cuda" else "cpu"


def torch_sync(_):
  if ARGS.device == "cuda":
    torch.cuda.synchronize()


def jax_device():
  if ARGS.device == "cuda":
    return jax.devices("gpu")[0]
  return jax.devices("cpu")[0]


def prepare_peers(name, fn, specs, warmup, skip_compile):
  """Compiles one workload under jax.jit, torch eager and torch.compile, runs
  each once plus `warmup` times, and checks torch's outputs against JAX's.
  Returns (calls by framework: each runs and synchronizes one call; results by
  framework: first call, compile time or the error; agreement by torch
  framework)."""
  inputs = make_inputs(specs)
  calls, results, agree = {}, {}, {}
  ref = None
  try:
    device = jax_device()
    jax_args = jax.tree_util.tree_map(lambda a: jax.device_put(a, device), inputs)
    jitted = jax.jit(fn)
    log(f"  jax.jit ...")
    t0 = time.perf_counter()
    jitted.lower(*jax_args).compile()  # timed apart: XLA's compile alone
    compile_s = time.perf_counter() - t0
    calls["jax"] = lambda: jax.block_until_ready(jitted(*jax_args))
    ref, first = first_calls(calls["jax"], warmup)
    results["jax"] = {"first_call_s": round(first, 4), "compile_s": round(compile_s, 4)}
    ref = jax.tree_util.tree_map(np.asarray, ref)
  except Exception as e:  # noqa: BLE001
    calls.pop("jax", None)
    results["jax"] = {"error": short_error(e)}
    log(f"  jax.jit failed: {short_error(e)}")
  gc.collect()

  twin = TWINS[name]
  dev = torch_device()
  try:
    torch_args = jax.tree_util.tree_map(lambda a: np_to_torch(a, dev), inputs)
  except Exception as e:  # noqa: BLE001
    torch_args = None
    for key in ("torch_eager", "torch_compile"):
      results[key] = {"error": short_error(e)}
  variants = [("torch_eager", False)]
  if skip_compile:
    results["torch_compile"] = {"error": "skipped (--skip-compile)"}
  else:
    variants.append(("torch_compile", True))
  for key, compiled in variants if torch_args is not None else []:
    log(f"  {LABEL[key]} ...")
    try:
      f = torch.compile(twin, dynamic=False) if compiled else twin

      def call(f=f):
        with torch.no_grad():
          out = f(*torch_args)
        torch_sync(out)
        return out

      out, first = first_calls(call, warmup)
      calls[key] = call
      results[key] = {"first_call_s": round(first, 4)}
      if ref is not None:
        agree[key] = agreement(ref, out)
      del out
    except Exception as e:  # noqa: BLE001
      results[key] = {"error": short_error(e)}
      log(f"  {LABEL[key]} failed: {short_error(e)}")
      if os.environ.get("SEAM_COMPARE_TRACEBACK"):
        traceback.print_exc()
    gc.collect()
  del inputs, ref
  gc.collect()
  return calls, results, agree


def first_calls(call, warmup):
  """The first call's output and seconds (compiling, for the JIT peers), then
  `warmup` calls more."""
  t0 = time.perf_counter()
  out = call()
  first = time.perf_counter() - t0
  for _ in range(warmup):
    call()
  return out, first


def run_round(name, calls, repeat, rotation):
  """One round of one workload: every peer's `repeat` timed calls and a
  `seam bench` of it per Seam strategy, in an order rotated each round
  (whoever goes first meets the machine as the last round left it).
  Returns (timed calls by framework, seam's records)."""
  strategies = [s for s in ARGS.seam_strategies.split(",") if s]
  order = list(calls) + [("seam", s) for s in strategies]
  order = order[rotation % len(order):] + order[:rotation % len(order)]
  timed, seam = {}, []
  for key in order:
    if isinstance(key, tuple):
      seam.append(run_seam([name], key[1]) if not ARGS.skip_seam else
                  {"error": "skipped (--skip-seam)"})
      continue
    try:
      timed[key] = time_calls(calls[key], repeat)
    except Exception as e:  # noqa: BLE001
      timed[key] = {"error": short_error(e)}
  return timed, seam


def time_calls(call, repeat):
  """`repeat` timed calls: their seconds and the minor page faults a call."""
  times = []
  faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
  for _ in range(repeat):
    t0 = time.perf_counter()
    o = call()
    times.append(time.perf_counter() - t0)
    del o
  faults = (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - faults) / repeat
  return {"times": times, "faults": faults}


def summarize(rounds, first_call_s=None):
  """A peer's timed rounds as one result (merge_rounds), with every timed
  call kept; torch.compile's compile time is its first call less that
  median."""
  errors = [r["error"] for r in rounds if "error" in r]
  if errors:
    return {"error": errors[0]}
  result = merge_rounds([{"median_ms": 1e3 * statistics.median(r["times"]),
                          "min_ms": 1e3 * min(r["times"]), "max_ms": 1e3 * max(r["times"]),
                          "runs": len(r["times"])} for r in rounds])
  result["times_ms"] = [round(1e3 * t, 4) for r in rounds for t in r["times"]]
  result["minor_faults_per_run"] = round(statistics.mean(r["faults"] for r in rounds), 1)
  if first_call_s is not None:
    result["compile_s"] = round(max(0.0, first_call_s - result["median_ms"] / 1e3), 4)
  return result


def merge_rounds(rounds):
  """Rounds of one framework (each with median_ms, min_ms, max_ms, runs) as
  one: the median of the rounds' medians (a round the machine spoiled moves
  it least), min and max over all, and each round's median for the
  per-round geomeans."""
  medians = [r["median_ms"] for r in rounds]
  return {"median_ms": statistics.median(medians), "min_ms": min(r["min_ms"] for r in rounds),
          "max_ms": max(r["max_ms"] for r in rounds),
          "runs": sum(r.get("runs", 0) for r in rounds),
          "rounds_ms": [round(m, 4) for m in medians]}


# --- Seam ----------------------------------------------------------------------

def resolve_seam(path):
  if os.path.exists(path):
    return os.path.abspath(path)
  candidate = os.path.join(ROOT, path)
  return candidate if os.path.exists(candidate) else os.path.abspath(path)


def run_seam(names, strategies):
  seam = resolve_seam(ARGS.seam)
  files = seam_modules(names)
  cmd = [seam, "bench", *files, "--json", f"--strategies={strategies}",
         f"--repeat={ARGS.repeat}"]
  if ARGS.device == "cuda":
    cmd.append("--backend=cuda")
  env = dict(os.environ, OMP_NUM_THREADS=str(N_THREADS))
  env.setdefault("SEAM_CACHE_DIR", "/tmp/seam-compare-cache")
  record = {"command": shlex.join(cmd), "SEAM_CACHE_DIR": env["SEAM_CACHE_DIR"],
            "OMP_NUM_THREADS": N_THREADS}
  if not os.path.exists(seam):
    record["error"] = f"{seam}: not found"
    return record
  log("+ " + record["command"])
  try:
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                            text=True)
  except OSError as e:
    record["error"] = short_error(e)
    return record
  stdout = []
  reader = threading.Thread(target=lambda: stdout.append(proc.stdout.read()))
  reader.start()
  stderr = []
  for line in proc.stderr:  # progress lines: pass them on
    stderr.append(line)
    sys.stderr.write("  seam: " + line)
  reader.join()
  record["returncode"] = proc.wait()
  text = "".join(stdout)
  if record["returncode"] != 0:
    record["error"] = ("".join(stderr).strip().splitlines() or [f"exit {proc.returncode}"])[-1]
    return record
  try:
    record["raw"] = json.loads(text)
  except json.JSONDecodeError as e:
    record["error"] = f"unparsable JSON from seam: {e}"
  return record


def seam_results(record, name):
  """Seam's numbers for one workload, by framework key."""
  raw = record.get("raw")
  if not raw:
    err = {"error": record.get("error", "not run")}
    return {"seam_stitch": err, "seam_xla": err}, None
  for w in raw.get("workloads", []):
    if os.path.basename(w.get("file", "")) == f"{name}.hlo" or w.get("name") == f"jit_{name}":
      out = {}
      for strategy in ("stitch", "xla"):
        s = w.get("strategies", {}).get(strategy)
        out[f"seam_{strategy}"] = dict(s) if s else {"error": "strategy not run"}
      return out, w.get("bytes")
  err = {"error": "workload missing from seam's output"}
  return {"seam_stitch": err, "seam_xla": err}, None


def round_results(records, name):
  """seam_results of one round's records (a strategy each) as one."""
  out, seam_bytes = {}, None
  for record in records:
    results, b = seam_results(record, name)
    seam_bytes = b if seam_bytes is None else seam_bytes
    for key, r in results.items():
      if key not in out or "median_ms" in r:
        out[key] = r
  return out, seam_bytes


def merge_seam_rounds(rounds, name):
  """Seam's rounds of one workload (each a list of records) as one result
  per strategy (merge_rounds), the other fields, the compile time among
  them, from the first round (later ones hit the kernel cache)."""
  per_round = [round_results(records, name) for records in rounds]
  merged, seam_bytes = {}, next((b for _, b in per_round if b is not None), None)
  for key in ("seam_stitch", "seam_xla"):
    rounds = [out[key] for out, _ in per_round]
    bad = [r for r in rounds if "median_ms" not in r]
    if bad:
      merged[key] = {"error": bad[0].get("error", "not run")}
      continue
    merged[key] = {**rounds[0], **merge_rounds(rounds)}
  return merged, seam_bytes


# --- machine, versions ---------------------------------------------------------

def machine_info():
  info = {"platform": platform.platform(), "os_cpu_count": os.cpu_count()}
  try:
    out = subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout
    fields = dict(line.split(":", 1) for line in out.splitlines() if ":" in line)
    fields = {k.strip(): v.strip() for k, v in fields.items()}
    info["cpu_model"] = fields.get("Model name")
    info["cpus"] = fields.get("CPU(s)")
    info["threads_per_core"] = fields.get("Thread(s) per core")
    info["cores_per_socket"] = fields.get("Core(s) per socket")
    info["sockets"] = fields.get("Socket(s)")
  except (OSError, subprocess.CalledProcessError):
    pass
  try:
    with open("/proc/meminfo") as f:
      info["mem_total"] = f.readline().split(":", 1)[1].strip()
  except OSError:
    pass
  try:
    with open("/sys/kernel/mm/transparent_hugepage/enabled") as f:
      info["transparent_hugepage"] = f.read().strip()
  except OSError:
    pass
  if ARGS.device == "cuda" and torch.cuda.is_available():
    info["gpu"] = torch.cuda.get_device_name(0)
  return info


def git(*args):
  try:
    return subprocess.run(["git", "-C", ROOT, *args], capture_output=True, text=True,
                          check=True).stdout.strip()
  except (OSError, subprocess.CalledProcessError):
    return None


def versions():
  v = {"python": sys.version.split()[0], "jax": jax.__version__, "jaxlib": jaxlib.__version__,
       "torch": torch.__version__, "numpy": np.__version__,
       "matplotlib": dist_version("matplotlib"),
       "seam_commit": git("rev-parse", "--short", "HEAD"),
       "seam_tree_dirty": bool(git("status", "--porcelain", "--untracked-files=no"))}
  seam = resolve_seam(ARGS.seam)
  if os.path.exists(seam):
    v["seam_binary"] = seam
    v["seam_binary_mtime"] = datetime.datetime.fromtimestamp(
        os.path.getmtime(seam)).isoformat(timespec="seconds")
  return v


def torch_copy_gbps(repeat):
  """A copy bandwidth measured with torch's copy_ (read + write bytes), used
  only where seam's copy_gbps is missing (e.g. --device cuda)."""
  try:
    n = 64 * 1024 * 1024
    src = torch.ones(n, dtype=torch.float32, device=torch_device())
    dst = torch.empty_like(src)
    first_calls(lambda: torch_sync(dst.copy_(src)), 2)
    times = time_calls(lambda: torch_sync(dst.copy_(src)), max(3, repeat))["times"]
    return 2 * 4 * n / statistics.median(times) / 1e9
  except Exception as e:  # noqa: BLE001
    log(f"torch copy bandwidth failed: {short_error(e)}")
    return None


# --- report --------------------------------------------------------------------

def ms(r):
  return f"{r['median_ms']:.3f}" if r and "median_ms" in r else "n/a"


def spread(r):
  return f"{r['min_ms']:.3f}–{r['max_ms']:.3f}" if r and "median_ms" in r else "n/a"


def speedup(w, peer):
  a, b = w["frameworks"].get(peer, {}), w["frameworks"].get("seam_stitch", {})
  if "median_ms" in a and "median_ms" in b and b["median_ms"] > 0:
    return a["median_ms"] / b["median_ms"]
  return None


def round_speedup(w, peer, r):
  """Seam stitch over `peer` in round r alone (both timed in that round)."""
  a, b = w["frameworks"].get(peer, {}), w["frameworks"].get("seam_stitch", {})
  a, b = a.get("rounds_ms", []), b.get("rounds_ms", [])
  return a[r] / b[r] if r < len(a) and r < len(b) and b[r] > 0 else None


def x(v):
  return f"{v:.2f}x" if v is not None else "n/a"


def of_copy(w, key, copy_gbps):
  r = w["frameworks"].get(key, {})
  if "median_ms" not in r or not copy_gbps:
    return None
  return w["bytes"] / (r["median_ms"] / 1e3) / 1e9 / copy_gbps


def geomean(values):
  values = [v for v in values if v]
  return (math.exp(sum(math.log(v) for v in values) / len(values)), len(values)) if values \
      else (None, 0)


def markdown(report):
  wl = report["workloads"]
  copy = report["copy_gbps"]
  m = report["machine"]
  lines = [
      f"# Seam vs jax.jit vs PyTorch (eager, torch.compile) — {report['device']}"
      f"{', ' + report['dtype'] if report.get('dtype', 'f32') != 'f32' else ''}",
      "",
      f"{report['date']} · {m.get('cpu_model')} ({m.get('cpus')} CPUs"
      f"{', ' + m['gpu'] if m.get('gpu') else ''}) · {report['threads']} threads for every "
      f"framework · {report.get('rounds', 1)} interleaved rounds of {report['repeat']} timed "
      f"runs after {report['warmup']} warm-up runs (Seam: 1 a round) · median of the rounds' "
      f"median ms · seam {report['versions']['seam_commit']}"
      f"{' (dirty tree)' if report['versions'].get('seam_tree_dirty') else ''} · jax "
      f"{report['versions']['jax']} · torch {report['versions']['torch']}",
      "",
      f"Copy bandwidth: {copy:.1f} GB/s ({report['copy_gbps_source']})." if copy else
      "Copy bandwidth: n/a.",
      "",
      "| workload | MB | jax.jit ms | torch eager ms | torch.compile ms | Seam stitch ms | "
      "Seam xla ms | stitch vs jax.jit | stitch vs eager | stitch vs torch.compile | "
      "Seam GB/s | of copy |",
      "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
  ]
  for w in wl:
    f = w["frameworks"]
    st = f.get("seam_stitch", {})
    gbps = w["bytes"] / (st["median_ms"] / 1e3) / 1e9 if "median_ms" in st else None
    frac = of_copy(w, "seam_stitch", copy)
    lines.append(
        f"| `{w['name']}` | {w['bytes'] / 1e6:.1f} | {ms(f.get('jax'))} | "
        f"{ms(f.get('torch_eager'))} | {ms(f.get('torch_compile'))} | {ms(st)} | "
        f"{ms(f.get('seam_xla'))} | {x(speedup(w, 'jax'))} | {x(speedup(w, 'torch_eager'))} | "
        f"{x(speedup(w, 'torch_compile'))} | {f'{gbps:.1f}' if gbps else 'n/a'} | "
        f"{f'{100 * frac:.0f}%' if frac else 'n/a'} |")
  g = report["geomean_speedup"]

  def by_round(p):
    values = [v for v in g[p].get("rounds", []) if v]
    return f"; rounds {', '.join(x(v) for v in values)}" if len(values) > 1 else ""

  lines += ["", "Geomean speed-up of Seam stitch over the suite: " + ", ".join(
      f"{LABEL[p]} {x(g[p]['value'])} ({g[p]['workloads']} workloads{by_round(p)})"
      for p in PEERS) + "."]
  lines += ["", "## Spread (min–max ms over the timed runs)", "",
            "| workload | " + " | ".join(label for _, label in FRAMEWORKS) + " |",
            "|---|" + "---:|" * len(FRAMEWORKS)]
  for w in wl:
    lines.append(f"| `{w['name']}` | " + " | ".join(
        spread(w["frameworks"].get(k)) for k, _ in FRAMEWORKS) + " |")
  lines += ["", "## Achieved bandwidth, fraction of copy (minimum bytes / median time / copy GB/s)",
            "", "| workload | " + " | ".join(label for _, label in FRAMEWORKS) + " |",
            "|---|" + "---:|" * len(FRAMEWORKS)]
  for w in wl:
    cells = []
    for k, _ in FRAMEWORKS:
      v = of_copy(w, k, copy)
      cells.append(f"{100 * v:.0f}%" if v else "n/a")
    lines.append(f"| `{w['name']}` | " + " | ".join(cells) + " |")
  lines += ["", "## Minor page faults per timed call", "",
            "| workload | jax.jit | torch eager | torch.compile |", "|---|---:|---:|---:|"]
  for w in wl:
    cells = []
    for k in ("jax", "torch_eager", "torch_compile"):
      v = w["frameworks"].get(k, {}).get("minor_faults_per_run")
      cells.append(f"{v:.0f}" if v is not None else "n/a")
    lines.append(f"| `{w['name']}` | " + " | ".join(cells) + " |")
  lines += ["", "## Compile time (s; jax.jit: lower + compile; torch.compile: first call minus median run, Inductor's on-disk cache included; Seam: its compile_s, kernel cache included)", "",
            "| workload | jax.jit | torch.compile | Seam stitch | Seam xla |",
            "|---|---:|---:|---:|---:|"]
  for w in wl:
    cells = []
    for k in ("jax", "torch_compile", "seam_stitch", "seam_xla"):
      v = w["frameworks"].get(k, {}).get("compile_s")
      cells.append(f"{v:.2f}" if v is not None else "n/a")
    lines.append(f"| `{w['name']}` | " + " | ".join(cells) + " |")
  lines += ["", "## JAX vs torch agreement on the benchmark inputs",
            "(max |jax - torch| / max |jax| over the outputs)", "",
            "| workload | tolerance | torch eager | torch.compile |", "|---|---:|---:|---:|"]
  for w in wl:
    a = w["agreement"]
    cells = []
    for k in ("torch_eager", "torch_compile"):
      v = a.get(k)
      cells.append("n/a" if v is None else f"{v:.1e}{'' if v <= a['tolerance'] else ' MISMATCH'}")
    lines.append(f"| `{w['name']}` | {a['tolerance']:.0e} | {cells[0]} | {cells[1]} |")
  errors = [(w["name"], LABEL[k], r["error"]) for w in wl for k, r in w["frameworks"].items()
            if "error" in r]
  if report["seam"].get("error"):
    errors.insert(0, ("all", "Seam", report["seam"]["error"]))
    errors = [e for e in errors if not (e[1].startswith("Seam") and e[0] != "all")]
  if errors:
    lines += ["", "## Not measured", ""]
    lines += [f"- `{n}` {label}: {err}" for n, label, err in errors]
  lines += ["", "## Notes", ""] + [f"- {n}" for n in report["notes"]]
  lines += ["", f"Command: `{report['command']}`", ""]
  return "\n".join(lines)


def plot(report, path):
  import matplotlib
  matplotlib.use("Agg")
  import matplotlib.pyplot as plt

  wl = report["workloads"]
  names = [w["name"] for w in wl]
  n = len(names)
  fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(max(8, 1.3 * n + 3), 9))
  xs = np.arange(n)
  colors = {"jax": "tab:blue", "torch_eager": "tab:orange", "torch_compile": "tab:red",
            "seam_xla": "tab:gray", "seam_stitch": "tab:green"}

  width = 0.8 / len(PEERS)
  top = []
  for i, p in enumerate(PEERS):
    vals = [speedup(w, p) for w in wl]
    pos = [xs[j] + (i - (len(PEERS) - 1) / 2) * width for j in range(n) if vals[j]]
    ys = [v for v in vals if v]
    if ys:
      top += ys
      ax1.bar(pos, ys, width, label=f"over {LABEL[p]}", color=colors[p])
  if top:
    ax1.set_yscale("log")
    ax1.set_ylim(min(0.5, min(top) / 1.5), max(top) * 4)  # head room for the legend
    ax1.axhline(1.0, color="black", linewidth=0.8)
    ax1.legend(fontsize=8, ncol=4, loc="upper center")
  else:
    ax1.text(0.5, 0.5, "Seam not measured: " + str(report["seam"].get("error", ""))[:80],
             ha="center", va="center", transform=ax1.transAxes)
  ax1.set_ylabel("speed-up of Seam stitch (x, log)")
  ax1.set_title(f"Seam stitch speed-up per workload ({report['device']}, "
                f"{report['threads']} threads)")
  ax1.set_xticks(xs)
  ax1.set_xticklabels(names, rotation=20, ha="right", fontsize=8)

  keys = [k for k, _ in FRAMEWORKS]
  width = 0.8 / len(keys)
  copy = report["copy_gbps"]
  top = [1.0]
  for i, k in enumerate(keys):
    vals = [of_copy(w, k, copy) for w in wl]
    pos = [xs[j] + (i - (len(keys) - 1) / 2) * width for j in range(n) if vals[j]]
    ys = [v for v in vals if v]
    if ys:
      top += ys
      ax2.bar(pos, ys, width, label=LABEL[k], color=colors[k])
  ax2.set_ylim(0, max(top) * 1.3)
  ax2.axhline(1.0, color="black", linewidth=0.8, linestyle="--")
  ax2.set_ylabel("bytes / median time / copy GB/s")
  ax2.set_title(f"Achieved bandwidth as a fraction of copy ({copy:.1f} GB/s)" if copy
                else "Achieved bandwidth: no copy bandwidth measured")
  ax2.set_xticks(xs)
  ax2.set_xticklabels(names, rotation=20, ha="right", fontsize=8)
  ax2.legend(fontsize=8, ncol=5, loc="upper center")
  for ax in (ax1, ax2):
    ax.set_xlim(-0.5, n - 0.5)
  fig.tight_layout()
  fig.savefig(path, dpi=120)
  plt.close(fig)


# --- modes ---------------------------------------------------------------------

def at_dtype(specs):
  """The input specs at --dtype: f32 leaves become bf16 with --dtype bf16."""
  if ARGS.dtype == "f32":
    return specs
  return jax.tree_util.tree_map(
      lambda s: jax.ShapeDtypeStruct(s.shape, BF16) if np.dtype(s.dtype) == np.float32 else s,
      specs)


def workload_table():
  return {name: (name, fn, at_dtype(specs), klass, description)
          for name, fn, specs, klass, description in MW.WORKLOADS}


_LOWERED = {}  # workload name -> its module at --dtype, lowered once a run


def seam_modules(names):
  """The HLO files Seam runs: the committed workloads, or each lowered again
  at --dtype into a scratch directory removed when the run ends."""
  if ARGS.dtype == "f32":
    return [os.path.join(WORKLOAD_DIR, f"{n}.hlo") for n in names]
  if not _LOWERED:
    directory = tempfile.mkdtemp(prefix=f"seam-workloads-{ARGS.dtype}-")
    atexit.register(shutil.rmtree, directory, ignore_errors=True)
    _LOWERED[None] = directory
  table = workload_table()
  for name in names:
    if name not in _LOWERED:
      _, fn, specs, _, _ = table[name]
      _LOWERED[name] = os.path.join(_LOWERED[None], f"{name}.hlo")
      with open(_LOWERED[name], "w") as f:
        f.write(MW.lower(fn, specs))
  return [_LOWERED[name] for name in names]


def check_only():
  """JAX vs the torch twins on small shapes (each dimension capped)."""
  table = workload_table()
  cap = ARGS.check_cap
  torch.set_num_threads(N_THREADS)
  print(f"JAX vs torch on small shapes (each dimension capped at {cap}); "
        "error = max |jax - torch| / max |jax| over the outputs\n")
  print("| workload | small inputs | tolerance | torch eager | torch.compile |")
  print("|---|---|---:|---:|---:|")
  bad = 0
  for name in ARGS.names:
    _, fn, specs, _, _ = table[name]
    small = jax.tree_util.tree_map(
        lambda s: jax.ShapeDtypeStruct(tuple(min(d, cap) for d in s.shape), s.dtype), specs)
    tol = tolerance(jax.eval_shape(fn, *small))
    inputs = make_inputs(small)
    ref = jax.tree_util.tree_map(np.asarray, jax.jit(fn)(*inputs))
    targs = jax.tree_util.tree_map(lambda a: np_to_torch(a, torch_device()), inputs)
    cells = []
    for compiled in (False, True):
      if compiled and ARGS.skip_compile:
        cells.append("skipped")
        continue
      try:
        f = torch.compile(TWINS[name], dynamic=False) if compiled else TWINS[name]
        with torch.no_grad():
          err = agreement(ref, f(*targs))
        ok = err <= tol
        bad += not ok
        cells.append(f"{err:.1e}{'' if ok else ' MISMATCH'}")
      except Exception as e:  # noqa: BLE001
        cells.append(f"error: {short_error(e)[:80]}")
    print(f"| `{name}` | {MW.describe_specs(small)} | {tol:.0e} | {cells[0]} | {cells[1]} |",
          flush=True)
  return 1 if bad else 0


def main():
  table = workload_table()
  torch.set_num_threads(N_THREADS)
  if ARGS.check_only:
    return check_only()
  command = shlex.join(["python3", os.path.relpath(os.path.abspath(__file__), os.getcwd()),
                        *sys.argv[1:]])
  log(f"{len(ARGS.names)} workload(s), {N_THREADS} threads, repeat {ARGS.repeat}, "
      f"device {ARGS.device}")
  workloads, seam_records = [], []
  for i, name in enumerate(ARGS.names):
    _, fn, specs, klass, _ = table[name]
    out_specs = jax.eval_shape(fn, *specs)
    log(f"[{i + 1}/{len(ARGS.names)}] {name}")
    calls, results, agree = prepare_peers(name, fn, specs, ARGS.warmup, ARGS.skip_compile)
    timed = {key: [] for key in calls}
    seam = []
    for r in range(ARGS.rounds):
      log(f"  round {r + 1}/{ARGS.rounds}")
      round_timed, round_seam = run_round(name, calls, ARGS.repeat, r)
      for key, t in round_timed.items():
        timed[key].append(t)
      seam.append(round_seam)
    del calls
    gc.collect()
    for key, rounds in timed.items():
      first = results[key].get("first_call_s") if key == "torch_compile" else None
      results[key].update(summarize(rounds, first))
    agree["tolerance"] = tolerance(out_specs)
    w = {"name": name, "class": klass,
         "bytes": MW.leaves_bytes(specs) + MW.leaves_bytes(out_specs),
         "frameworks": results, "agreement": agree}
    extra, seam_bytes = merge_seam_rounds(seam, name)
    w["frameworks"].update(extra)
    if seam_bytes is not None:
      w["bytes_seam"] = seam_bytes
      if abs(seam_bytes - w["bytes"]) > 0.5:
        log(f"warning: {name}: seam counts {seam_bytes:.0f} bytes, the manifest {w['bytes']}")
    workloads.append(w)
    seam_records += [record for records in seam for record in records]

  seam_copies = [c for c in ((r.get("raw") or {}).get("copy_gbps") for r in seam_records) if c]
  copy = statistics.median(seam_copies) if seam_copies else None
  torch_copy = torch_copy_gbps(ARGS.repeat)
  copy_source = (f"seam bench's pool copy, the kernels' compiler and flags; median of "
                 f"{len(seam_copies)} measured beside the workloads")
  if not copy and torch_copy:
    copy, copy_source = torch_copy, "torch copy_ of 256 MiB (seam's was not measured)"
  seam_errors = [r["error"] for r in seam_records if r.get("error")]
  seam = {"commands": sorted({r.get("command", "") for r in seam_records}),
          "copy_gbps_measured": seam_copies}
  if seam_errors:
    seam["error"] = seam_errors[0]

  geo = {}
  for p in PEERS:
    value, count = geomean([speedup(w, p) for w in workloads])
    geo[p] = {"value": value, "workloads": count,
              "rounds": [geomean([round_speedup(w, p, r) for w in workloads])[0]
                         for r in range(ARGS.rounds)]}
  notes = [
      "JAX and PyTorch run on identical inputs: numpy arrays drawn once per workload "
      "(seed 0; floats uniform in [-1, 1), pred a fair coin, scalar inputs too). Seam draws "
      "its own inputs of the same distribution (seam bench --seed 0): other values, same "
      "shapes, dtypes and distribution.",
      "MB = the manifest's minimum traffic: every input read once + every output written "
      "once (10^6 bytes); every framework's bandwidth is that over its median time.",
      f"Threads: torch.set_num_threads({N_THREADS}); OMP_NUM_THREADS={N_THREADS} for "
      f"PyTorch/Inductor and Seam's subprocess; XLA: PJRT_NPROC={N_THREADS} (sizes jaxlib's "
      "CPU thread pool) and XLA_FLAGS=" + os.environ.get("XLA_FLAGS", "") + ".",
      "jax.jit and torch time one call each (block_until_ready / cuda synchronize) after a "
      f"first call and {ARGS.warmup} warm-up calls; Seam times `seam bench` after its own "
      f"warm-up run. {ARGS.rounds} rounds a workload, each timing every framework in turn "
      "(the order rotated from round to round); times are medians of the rounds' medians. "
      "Compile time: jax.jit's lower().compile() timed alone; torch.compile's first "
      "call minus its median run (Inductor's on-disk cache in /tmp may make it a cache hit); "
      "Seam's compile_s (its kernel cache, SEAM_CACHE_DIR, likewise).",
      ("--malloc hugepage: GLIBC_TUNABLES=" + str(os.environ.get("GLIBC_TUNABLES")) +
       ", THP_MEM_ALLOC_ENABLE=1: jax.jit and torch allocate fresh output (and temporary) "
       "buffers on every call and the kernel zero-fills them on first touch, where Seam's "
       "bench reuses its buffers; 2 MiB pages cut those page faults ~500x (transparent "
       "huge pages: " + str(machine_info().get("transparent_hugepage")) + "). Faults per "
       "timed call are in the JSON (minor_faults_per_run)." if ARGS.malloc == "hugepage" else
       "--malloc default: jax.jit and torch allocate fresh output buffers on every call and "
       "fault them in 4 KiB pages, which Seam's bench (reusing its buffers) does not pay; "
       "see minor_faults_per_run in the JSON."),
      "The torch twins are bench/compare_functions.py; outputs are checked against JAX on "
      "the benchmark inputs (tolerance 1e-4 for f32 outputs, 3e-2 where bf16).",
  ]
  report = {
      "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
      "command": command, "argv": sys.argv, "orig_argv": getattr(sys, "orig_argv", None),
      "device": ARGS.device, "dtype": ARGS.dtype, "threads": N_THREADS, "repeat": ARGS.repeat,
      "rounds": ARGS.rounds,
      "warmup": ARGS.warmup, "machine": machine_info(), "versions": versions(),
      "malloc": ARGS.malloc,
      "env": {k: os.environ.get(k) for k in ("XLA_FLAGS", "PJRT_NPROC", "OMP_NUM_THREADS",
                                             "JAX_PLATFORMS", "GLIBC_TUNABLES",
                                             "THP_MEM_ALLOC_ENABLE")},
      "copy_gbps": copy, "copy_gbps_source": copy_source if copy else None,
      "copy_gbps_torch": torch_copy, "seam": seam, "workloads": workloads,
      "geomean_speedup": geo, "notes": notes,
  }
  stem = f"compare-{ARGS.device}" + ("" if ARGS.dtype == "f32" else f"-{ARGS.dtype}")
  base = report_files.write_report(ARGS.out_dir, stem, markdown(report), report, plot, log)
  log(f"wrote {base}.md, {base}.json, {base}.png")
  return 0


if __name__ == "__main__":
  sys.exit(main())
