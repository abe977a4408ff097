"""Helpers of bench/compare_models.py: finding and preparing the models, the
XLA worker process, Seam's subprocesses and the output check.

Run as a script (`python compare_models_lib.py --xla-worker`) this file is
the XLA side: a process that imports jax, loads one HLO module into jaxlib's
CPU client, draws the inputs, and runs and times the module on request. It
answers one JSON line per command on a private copy of its stdout (XLA's
own logging goes to stderr), so compare_models.py can put a time limit on
every command and survive an XLA crash.

Loading HLO text into jaxlib 0.10.2 (no public API does it):
  jaxlib._hlo.hlo_module_from_text(text)           XLA's HLO parser
  -> jaxlib._hlo.XlaComputation(module.as_serialized_hlo_module_proto())
  -> xla_client._xla.mlir.xla_computation_to_mlir_module(computation)  (StableHLO text)
  -> client.compile_and_load(mlir, [cpu device], xla_client.CompileOptions())
  -> LoadedExecutable.execute([jax.Array, ...]) -> [jax.Array, ...]
XLA's parser accepts elided constants (`constant({...})`) and fills them with
a process-wide counter written as raw bits (element k of the n-th elided
value holds the counter's k-th next value: 0, 1, 2, ... as s32; the same
bits as f32 are denormals, which the CPU flushes to zero). Seam fills them
with pseudo-random data seeded by the constant's name, so the two compute
different things unless the constants are written out first.
"""

import json
import math
import os
import re
import select
import signal
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, ".."))
CORPUS_DIR = "/work/shared/hlo"
WORKLOAD_DIR = os.path.join(ROOT, "bench", "workloads")

ELIDED = re.compile(r"constant\(\{\s*\.\.\.\s*\}\)")
NEURON_CALL = re.compile(r'custom_call_target="AwsNeuron')
RNG_OP = re.compile(r"\b(rng|rng-bit-generator|rng-get-and-update-state)\(")
# What transfer-remover leaves: transfers that change the layout. As a
# custom-call XLA cannot run them (nor parse api_version=API_VERSION_UNSPECIFIED);
# `copy` is the same layout-changing identity, and Seam runs it too.
LEFT_TRANSFER = re.compile(
    r'custom-call\(([^()]*)\), custom_call_target="AwsNeuronTransferWithStaticRing"'
    r'(?:, api_version=API_VERSION_UNSPECIFIED)?')


# --- models ----------------------------------------------------------------------

def short_name(stem):
  for prefix in ("gh_ptxla_", "hloenv_", "xla_"):
    if stem.startswith(prefix):
      stem = stem[len(prefix):]
      break
  stem = re.sub(r"(\.before_optimizations)?\.txt$", "", stem).removesuffix(".hlo")
  return re.sub(r"\.\d+$", "", re.sub(r"_module_\d+\..*$", "", stem))  # hloenv's dump ids


def source_of(filename):
  if filename.startswith("gh_ptxla_") or "_ptxla_" in filename:
    return "PyTorch/XLA"
  if filename.startswith("xla_gpu_tests_"):
    return "XLA GPU test"
  if filename.endswith("_optimized.hlo"):
    return "XLA CPU (optimized)"
  return "JAX"


def static_skip_reason(text):
  """Why XLA's CPU client cannot run this file, where that shows in the text."""
  if len(re.findall(r"^HloModule ", text, re.M)) > 1:
    return "several modules in one file (split by `// -----`)"
  reasons = []
  m = re.search(r"num_partitions=(\d+)", text)
  if m and int(m.group(1)) > 1:
    reasons.append(f"multi-partition module (num_partitions={m.group(1)}): needs that many "
                   "devices")
  te = sorted(set(re.findall(r'custom_call_target="(te_[\w]+)"', text)))
  if te:
    reasons.append(f"TransformerEngine custom-calls ({', '.join(te)}): no handler on XLA's CPU")
  return "; ".join(reasons) or None


def find_models(corpus_dir=CORPUS_DIR, workload_dir=WORKLOAD_DIR):
  """Every corpus module and bench workload: name, file, source, kind."""
  models = []
  for f in sorted(os.listdir(corpus_dir)) if os.path.isdir(corpus_dir) else []:
    if f.endswith((".hlo", ".txt")):
      models.append({"name": short_name(f), "file": os.path.join(corpus_dir, f),
                     "source": source_of(f), "kind": "model"})
  for f in sorted(os.listdir(workload_dir)):
    if f.endswith(".hlo"):
      models.append({"name": "workload/" + f[:-4], "file": os.path.join(workload_dir, f),
                     "source": "bench workload", "kind": "workload"})
  for m in models:
    if m["source"].startswith(("XLA GPU test", "XLA CPU")):
      m["kind"] = "test"  # not a model: kept out of the models' geomean
  return models


def select_models(models, spec):
  if spec == "all":
    return list(models), []
  picked, unknown = [], []
  for item in (s.strip() for s in spec.split(",")):
    if not item:
      continue
    hits = [m for m in models if item == m["name"] or item in os.path.basename(m["file"])
            or item in m["name"]]
    if not hits:
      unknown.append(item)
    picked += [m for m in hits if m not in picked]
  return picked, unknown


# --- subprocesses ------------------------------------------------------------------

def run_cmd(cmd, env, timeout, cwd=None):
  """(returncode or 'timeout', stdout, stderr, seconds); never raises."""
  t0 = time.perf_counter()
  try:
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout, cwd=cwd)
    return p.returncode, p.stdout, p.stderr, time.perf_counter() - t0
  except subprocess.TimeoutExpired as e:
    out = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
    err = e.stderr.decode(errors="replace") if isinstance(e.stderr, bytes) else (e.stderr or "")
    return "timeout", out, err, time.perf_counter() - t0
  except OSError as e:
    return "oserror", "", str(e), time.perf_counter() - t0


def last_line(text, fallback=""):
  lines = [l.strip() for l in (text or "").splitlines() if l.strip()]
  return lines[-1][:400] if lines else fallback


def first_error(text, fallback=""):
  """The first line naming an error, else the last line."""
  for line in (text or "").splitlines():
    if "error" in line.lower() or "fail" in line.lower():
      return line.strip()[:400]
  return last_line(text, fallback)


def failure(rc, text):
  if rc == "timeout":
    return "timed out"
  if rc == "oserror":
    return f"could not start: {text}"
  if rc < 0:
    try:
      name = signal.Signals(-rc).name
    except ValueError:
      name = f"signal {-rc}"
    return f"crashed ({name}) after: {last_line(text, 'no output')}"
  return f"exit {rc}: {first_error(text, 'no message')}"


class Seam:
  """build/seam: which of the newer flags it has, and the commands run."""

  def __init__(self, path, env, timeout, excess_precision=True):
    self.path, self.env, self.timeout = path, env, timeout
    # bf16/f16 arithmetic kept in f32 inside kernels (Seam's default, as
    # XLA's), or every half result rounded, as in Seam's interpreter.
    self.flags = [] if excess_precision else ["--no-excess-precision"]
    self.fill_elided = "--fill-elided-constants" in self.help("opt")
    self.bench_inputs = "--inputs" in self.help("bench")
    self.profile = "--profile" in self.help("run")

  def help(self, command):
    _, out, err, _ = run_cmd([self.path, command, "--help"], self.env, 60)
    return out + err

  def opt(self, src, dst, passes, fill):
    cmd = [self.path, "opt", src]
    if passes:
      cmd.append(f"--passes={passes}")
    if fill:
      cmd.append("--fill-elided-constants")
    rc, out, err, _ = run_cmd(cmd, self.env, self.timeout)
    if rc != 0:
      return cmd, f"seam opt failed: {failure(rc, err)}"
    with open(dst, "w") as f:
      f.write(out)
    return cmd, None

  def run(self, hlo, inputs, output, timeout):
    cmd = [self.path, "run", hlo, "--inputs", inputs, "--output", output] + self.flags
    if self.profile:
      cmd.append("--profile")  # and a second, warm run's time by what ran
    rc, out, err, secs = run_cmd(cmd, self.env, timeout)
    record = {"command": cmd, "returncode": rc, "seconds": round(secs, 3),
              "stdout_head": out[:4000], "stderr_tail": err[-2000:]}
    m = re.search(r"interpreted: (\d+) op", out)
    record["interpreted"] = int(m.group(1)) if m else 0
    m = re.search(r"^compiled: .*$", out, re.M)
    record["compiled"] = m.group(0) if m else None
    m = re.search(r"^memory: peak ([0-9.]+) MiB measured, ([0-9.]+) MiB estimated", out, re.M)
    if m:
      record["peak_mib"], record["estimated_mib"] = float(m.group(1)), float(m.group(2))
    m = re.search(r"^profile \(a warm run, ([0-9.]+) ms\): (.*)$", out, re.M)
    if m:
      record["profile_ms"] = {"total": float(m.group(1))}
      for part in m.group(2).split(", "):
        what, value = part.rsplit(" ", 2)[0], part.rsplit(" ", 2)[1]
        record["profile_ms"][what] = float(value)
    if rc != 0:
      record["error"] = failure(rc, err or out)
    return record

  def bench(self, hlo, inputs, repeat, timeout):
    """One `seam bench` call: its median over `repeat` runs after one warm-up."""
    cmd = [self.path, "bench", hlo, "--strategies=stitch", f"--repeat={repeat}", "--json"]
    cmd += self.flags
    if self.bench_inputs and inputs:
      cmd += ["--inputs", inputs]
    rc, out, err, secs = run_cmd(cmd, self.env, timeout)
    record = {"command": cmd, "seconds": round(secs, 3)}
    if rc != 0:
      record["error"] = failure(rc, err)
      return record
    try:
      stitch = json.loads(out)["workloads"][0]["strategies"]["stitch"]
    except (ValueError, KeyError, IndexError) as e:
      record["error"] = f"unreadable JSON from seam bench: {e}"
      return record
    record.update(stitch)
    return record


def prepare(model, seam, work_dir):
  """The HLO text both sides run: the file in place when nothing needs
  rewriting; else Seam's rewrite (PyTorch/XLA custom-calls, elided
  constants written out when seam can) with the layout-changing transfers
  left as `copy`. Returns (path, facts, error)."""
  with open(model["file"]) as f:
    text = f.read()
  facts = {"elided_constants": len(ELIDED.findall(text)), "neuron_custom_calls":
           len(NEURON_CALL.findall(text)), "rng": bool(RNG_OP.search(text)), "rewrites": []}
  reason = static_skip_reason(text)
  if reason:
    return None, facts, reason
  passes = "transfer-remover,gelu-expander" if facts["neuron_custom_calls"] else None
  fill = bool(facts["elided_constants"]) and seam.fill_elided
  facts["elided_filled"] = fill
  if not passes and not fill:
    return model["file"], facts, None
  dst = os.path.join(work_dir, "model.hlo")
  cmd, err = seam.opt(model["file"], dst, passes, fill)
  facts["rewrites"].append(" ".join(cmd))
  if err:
    return None, facts, err
  with open(dst) as f:
    text = f.read()
  text, n = LEFT_TRANSFER.subn(r"copy(\1)", text)
  if n:
    facts["rewrites"].append(f"{n} layout-changing AwsNeuronTransferWithStaticRing -> copy")
    with open(dst, "w") as f:
      f.write(text)
  facts["custom_calls_left"] = len(re.findall(r"custom_call_target=", text))
  return dst, facts, None


# --- the XLA worker, seen from compare_models.py --------------------------------------

class XlaWorker:
  """A worker process with one module loaded; every call has a time limit
  and returns a dict with "error" on failure (timeout, crash, XLA error)."""

  def __init__(self, env, log_path):
    self.log_path = log_path
    self.log = open(log_path, "w")
    self.proc = subprocess.Popen(
        [sys.executable, os.path.abspath(__file__), "--xla-worker"], stdin=subprocess.PIPE,
        stdout=subprocess.PIPE, stderr=self.log, env=env)
    self.buffer = b""

  def call(self, timeout, **command):
    if self.proc.poll() is not None:
      return {"error": self.died()}
    try:
      self.proc.stdin.write((json.dumps(command) + "\n").encode())
      self.proc.stdin.flush()
    except OSError:
      return {"error": self.died()}
    deadline = time.monotonic() + timeout
    fd = self.proc.stdout.fileno()
    while b"\n" not in self.buffer:
      left = deadline - time.monotonic()
      if left <= 0 or not select.select([fd], [], [], left)[0]:
        self.close()
        return {"error": f"timed out after {timeout:.0f} s"}
      chunk = os.read(fd, 1 << 16)
      if not chunk:
        return {"error": self.died()}
      self.buffer += chunk
    line, self.buffer = self.buffer.split(b"\n", 1)
    return json.loads(line)

  def died(self):
    code = self.proc.wait()
    self.log.flush()
    with open(self.log_path, errors="replace") as f:
      tail = [l.strip() for l in f if l.strip() and not l.startswith(("WARNING", "I0000"))]
    return f"XLA worker exited with code {code}: {' | '.join(tail[-3:])[:400]}"

  def close(self):
    if self.proc.poll() is None:
      try:
        self.proc.kill()
      except OSError:
        pass
      self.proc.wait()
    self.log.close()


# --- output check ---------------------------------------------------------------------

def tolerance(dtype_name):
  if dtype_name in ("bfloat16", "float16"):
    return 2e-2
  if dtype_name.startswith(("float", "complex")):
    return 1e-3
  return 0.0  # integers and pred: equal


def as_float(a):
  """Seam writes bf16 as raw 16-bit '|V2' data: widen it to f32."""
  if a.dtype.kind == "V" and a.dtype.itemsize == 2:
    return (a.view(np.uint16).astype(np.uint32) << 16).view(np.float32)
  if a.dtype.kind == "c":
    return a.astype(np.complex128)
  return a.astype(np.float64)


def compare_one(ref, got, dtype_name):
  """max |ref - got| / max |ref| over the finite elements; a NaN or Inf on
  one side only is a mismatch."""
  x, y = as_float(ref), as_float(got)
  out = {"dtype": dtype_name, "shape": list(x.shape), "tolerance": tolerance(dtype_name)}
  if x.shape != y.shape:
    out.update(ok=False, problem=f"shape {list(y.shape)} from Seam, {list(x.shape)} from XLA")
    return out
  fx, fy = np.isfinite(x), np.isfinite(y)
  bad = int(np.count_nonzero(fx != fy))
  same_nonfinite = np.where(~fx & ~fy, (x == y) | (np.isnan(x) & np.isnan(y)), True)
  bad += int(np.count_nonzero(~same_nonfinite))
  both = fx & fy
  scale = float(np.max(np.abs(x[both]))) if both.any() else 0.0
  err = float(np.max(np.abs(x[both] - y[both]))) if both.any() else 0.0
  rel = err / scale if scale > 0 else err
  out.update(max_abs_ref=scale, max_abs_err=err, rel_err=rel, nonfinite_mismatches=bad,
             ok=bad == 0 and rel <= out["tolerance"])
  if bad:
    out["problem"] = f"{bad} element(s) NaN/Inf on one side only (or different)"
  return out


def compare_outputs(xla_npz, xla_dtypes, seam_npz):
  """Per output, XLA's in result order against Seam's in archive order."""
  with np.load(xla_npz) as xz, np.load(seam_npz) as sz:
    names = list(sz.files)
    if len(names) != len(xz.files):
      return {"ok": False, "problem": f"{len(names)} output(s) from Seam, {len(xz.files)} "
              "from XLA", "outputs": []}
    outputs = []
    for i, name in enumerate(names):
      r = compare_one(xz[f"out{i}"], sz[name], xla_dtypes[i])
      r["index"], r["name"] = i, name
      outputs.append(r)
  worst = max((o.get("rel_err", math.inf) for o in outputs), default=0.0)
  failed = [o for o in outputs if not o["ok"]]
  return {"ok": not failed, "worst_rel_err": worst, "outputs": outputs,
          "failed": [f"{o['index']} ({o['name']}): " +
                     o.get("problem", f"rel err {o['rel_err']:.2e} > {o['tolerance']:.0e}")
                     for o in failed]}


# --- the XLA worker itself --------------------------------------------------------------

# Ops through which a parameter's sign reaches a square root or logarithm
# unchanged or only moved: reshapes and broadcasts of a batch-norm variance,
# and the epsilon added to it.
SIGN_KEEPING_OPS = {"reshape", "broadcast", "transpose", "copy", "bitcast", "convert", "slice",
                    "add"}
NONNEGATIVE_DOMAIN_OPS = {"rsqrt", "sqrt", "log"}
INSTRUCTION = re.compile(r"^\s*(?:ROOT\s+)?%?([^\s=]+) = \S+ ([\w-]+)\(([^)]*)\)", re.M)


def nonnegative_parameters(module_text):
  """Numbers of the ENTRY parameters that reach a square root, reciprocal
  square root or logarithm through SIGN_KEEPING_OPS alone: a model's
  batch-norm variances. Drawn in [-1, 1) half of them are negative, the
  normalisation is NaN for those channels and every prediction after it, on
  both sides; so they are drawn in [0, 1) instead (see draw_inputs)."""
  entry = module_text[module_text.find("\nENTRY"):]
  users, parameters = {}, {}
  for m in INSTRUCTION.finditer(entry):
    name, opcode, operands = m.groups()
    if opcode == "parameter":
      parameters[name] = int(operands)
      continue
    for operand in re.findall(r"%?([^\s,%]+)(?:,|$)", operands.strip()):
      users.setdefault(operand, []).append((name, opcode))
  found = set()
  for parameter, number in parameters.items():
    frontier, seen = [parameter], {parameter}
    while frontier and number not in found:
      for user, opcode in users.get(frontier.pop(), []):
        if opcode in NONNEGATIVE_DOMAIN_OPS:
          found.add(number)
        elif opcode in SIGN_KEEPING_OPS and user not in seen:
          seen.add(user)
          frontier.append(user)
  return found


def draw_inputs(shapes, seed=0, nonnegative=()):
  """Seam's distribution: floats uniform in [-1, 1), integers in [0, 8),
  pred a fair coin; one generator per model, parameters in order. The
  parameters numbered in `nonnegative` take the absolute value of their draw
  (uniform in [0, 1)), leaving every other parameter's draw as it was."""
  rng = np.random.default_rng(seed)
  arrays = []
  for number, (dims, dtype) in enumerate(shapes):
    if dtype == np.bool_:
      a = rng.integers(0, 2, size=dims, dtype=np.uint8).astype(np.bool_)
    elif dtype.kind in "iu":
      a = rng.integers(0, 8, size=dims).astype(dtype)
    elif dtype.kind == "c":
      a = (rng.random(dims) * 2 - 1 + 1j * (rng.random(dims) * 2 - 1)).astype(dtype)
    elif dtype == np.float64:
      a = rng.random(dims) * 2 - 1
    else:
      a = (rng.random(dims, dtype=np.float32) * 2 - 1).astype(dtype)
    if number in nonnegative and dtype.kind == "f":
      a = np.abs(a)
    arrays.append(np.asarray(a))
  return arrays


def entry_parameter_names(module_text, count):
  """Parameter names of the ENTRY computation, by number; when one is not
  found, NumPy's positional names for all (seam run binds arrays by name, or
  in order only when named arr_0, arr_1...)."""
  names = {}
  entry = module_text[module_text.find("\nENTRY"):]
  for m in re.finditer(r"^\s*%?([^\s=]+) = [^\n]*? parameter\((\d+)\)", entry, re.M):
    names.setdefault(int(m.group(2)), m.group(1))
    if len(names) == count:
      break
  if len(names) < count:
    return [f"arr_{i}" for i in range(count)]
  return [names[i] for i in range(count)]


def save_inputs(path, names, arrays):
  """bf16 goes in as its 16 raw bits ('<u2'), which seam run accepts."""
  import ml_dtypes
  out = {}
  for name, a in zip(names, arrays):
    out[name] = a.view(np.uint16) if a.dtype == ml_dtypes.bfloat16 else a
  np.savez(path, **out)


def check_memory(stats):
  """Refuses a module whose inputs (host and device copies), outputs and
  temporaries would not fit in the memory available now."""
  need = (2 * stats.argument_size_in_bytes + stats.output_size_in_bytes
          - stats.alias_size_in_bytes + stats.temp_size_in_bytes)
  available = 0
  with open("/proc/meminfo") as f:
    for line in f:
      if line.startswith("MemAvailable:"):
        available = int(line.split()[1]) * 1024
  if available and need > 0.8 * available:
    raise MemoryError(f"needs ~{need / 1e9:.1f} GB (inputs twice, outputs, temporaries "
                      f"{stats.temp_size_in_bytes / 1e9:.1f} GB); {available / 1e9:.1f} GB "
                      "available")


class Worker:
  def __init__(self):
    import jax
    jax.config.update("jax_enable_x64", True)  # s64/f64 parameters stay 64-bit
    self.jax = jax
    self.exe = None

  def load(self, hlo, inputs, warmup, warmup_budget):
    from jaxlib import _hlo as hlo_lib
    from jax._src.lib import xla_client as xc
    jax = self.jax
    with open(hlo) as f:
      text = f.read()
    t0 = time.perf_counter()
    module = hlo_lib.hlo_module_from_text(text)
    computation = hlo_lib.XlaComputation(module.as_serialized_hlo_module_proto())
    mlir = xc._xla.mlir.xla_computation_to_mlir_module(computation)
    self.device = jax.devices("cpu")[0]
    self.exe = self.device.client.compile_and_load(mlir, [self.device], xc.CompileOptions())
    compile_s = time.perf_counter() - t0
    check_memory(self.exe.get_compiled_memory_stats())
    shapes = [(tuple(s.dimensions()), np.dtype(s.numpy_dtype()))
              for s in computation.program_shape().parameter_shapes()]
    module_text = module.to_string()
    self.host = draw_inputs(shapes, nonnegative=nonnegative_parameters(module_text))
    names = entry_parameter_names(module_text, len(shapes))
    save_inputs(inputs, names, self.host)
    self.args = [jax.device_put(a, self.device) for a in self.host]
    self.donated = False
    t0 = time.perf_counter()
    self.outputs = self.execute()
    first_s = time.perf_counter() - t0
    warm = []  # past the first warm-up, no more than warmup_budget seconds
    while len(warm) < warmup and (not warm or first_s + sum(warm) < warmup_budget):
      warm.append(self.timed())
    return {"compile_s": compile_s, "first_s": first_s, "warmup_s": warm,
            "parameters": len(shapes), "outputs": len(self.outputs),
            "donates": self.donated}

  def execute(self):
    out = self.exe.execute(self.args)
    self.jax.block_until_ready(out)
    return out

  def refresh_donated(self):
    """Arguments XLA took over (input_output_alias) are put back, untimed."""
    for i, a in enumerate(self.args):
      if a.is_deleted():
        self.args[i] = self.jax.device_put(self.host[i], self.device)
        self.donated = True

  def timed(self):
    self.refresh_donated()
    t0 = time.perf_counter()
    out = self.execute()
    t = time.perf_counter() - t0
    del out
    return t

  def save_outputs(self, path):
    arrays, dtypes = {}, []
    for i, o in enumerate(self.outputs):
      a = np.asarray(o)
      dtypes.append(a.dtype.name)
      arrays[f"out{i}"] = a.astype(np.float32) if a.dtype.name == "bfloat16" else a
    np.savez(path, **arrays)
    self.outputs = None  # memory back before the timing
    return {"dtypes": dtypes}


def worker_main():
  reply = os.fdopen(os.dup(1), "w")
  os.dup2(2, 1)  # anything else printed goes to the log
  worker = None
  for line in sys.stdin:
    command = json.loads(line)
    try:
      if worker is None:
        worker = Worker()
      op = command.pop("op")
      if op == "load":
        answer = worker.load(**command)
      elif op == "outputs":
        answer = worker.save_outputs(**command)
      elif op == "time":
        answer = {"times": [worker.timed() for _ in range(command["k"])]}
      else:
        answer = {"error": f"unknown op {op}"}
    except Exception as e:  # noqa: BLE001
      text = f"{type(e).__name__}: {e}"
      answer = {"error": " | ".join(l for l in text.splitlines()[:3] if l.strip())[:500]}
    reply.write(json.dumps(answer) + "\n")
    reply.flush()


if __name__ == "__main__" and sys.argv[1:] == ["--xla-worker"]:
  worker_main()
