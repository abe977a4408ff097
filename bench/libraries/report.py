#!/usr/bin/env python3
"""Turns libbench's JSON lines (run.sh's build folder) into libraries.md/.json.

Rates are per case: the timed problem's flops over the median of its samples.
Aggregates weight every problem by the flops it has in the models (its
occurrences), so they answer "how long would these models' dots and
convolutions take" rather than "how fast is the average shape".
"""

import argparse
import datetime
import glob
import json
import math
import os
import re
import subprocess
from collections import defaultdict
from pathlib import Path

CLASSES = ["gemm_f32", "gemm_bf16", "conv_nhwc", "conv_nchw", "conv_depthwise", "conv_bwd_data", "conv_bwd_filter"]
CLASS_TITLE = {
    "gemm_f32": "f32 GEMM (dots)",
    "gemm_bf16": "bf16 GEMM (dots, f32 accumulation and result)",
    "conv_nhwc": "f32 convolution, NHWC (b01f) activations",
    "conv_nchw": "f32 convolution, NCHW (bf01) activations",
    "conv_depthwise": "depthwise convolution (feature_group_count = channels)",
    "conv_bwd_data": "backward-data convolutions (HWOI kernels; input-dilated = strided conv's gradient)",
    "conv_bwd_filter": "backward-filter convolutions (weight gradients; batch_group_count = channels when depthwise)",
}
# Seam's stacks: which candidate serves each case when a library is chosen
# (Seam's own depthwise loop where no BLAS call is made).
STACKS = [
    ("Seam today: OpenBLAS (COOPERLAKE)", ["openblas", "seam-loop"]),
    ("Seam today + its NCHW→NHWC packing", ["openblas+pack", "seam-loop+pack"]),
    ("OpenBLAS unforced (PRESCOTT)", ["openblas-unforced", "openblas", "seam-loop"]),
    ("MKL", ["mkl", "seam-loop"]),
    ("BLIS", ["blis", "seam-loop"]),
    ("oneDNN (primitive alone)", ["onednn"]),
    ("oneDNN + plain-layout reorders", ["onednn+"]),
    ("oneDNN from/to plain layouts (better of direct and reorders)", ["onednn-best"]),
]
PSEUDO = ("onednn:", "seam:")
ENV_VARS = {
    "openblas": "`OPENBLAS_CORETYPE` (kernel set; Seam forces it), `OPENBLAS_NUM_THREADS` / `GOTO_NUM_THREADS` / "
                "`OMP_NUM_THREADS`, `OPENBLAS_THREAD_TIMEOUT` (how long idle workers spin), `OPENBLAS_BLOCK_FACTOR`, "
                "`OPENBLAS_VERBOSE`",
    "mkl": "`MKL_ENABLE_INSTRUCTIONS` (caps the ISA), `MKL_CBWR` (reproducibility branch: changes kernels), "
           "`MKL_THREADING_LAYER` / `MKL_INTERFACE_LAYER` (which libmkl_* libmkl_rt loads), `MKL_NUM_THREADS`, "
           "`MKL_DYNAMIC`, `MKL_VERBOSE`; `OMP_*`/`KMP_*` of the OpenMP it threads with",
    "blis": "`BLIS_ARCH_TYPE` (sub-configuration id; Debian's build has no `skx`, forcing 0 aborts), `BLIS_ARCH_DEBUG`, "
            "`BLIS_NUM_THREADS` and `BLIS_JC_NT`/`IC_NT`/`JR_NT`/`IR_NT`",
    "onednn": "`ONEDNN_MAX_CPU_ISA` / `DNNL_MAX_CPU_ISA` (caps the ISA), `ONEDNN_CPU_ISA_HINTS`, "
              "`ONEDNN_DEFAULT_FPMATH_MODE` (may allow bf16 math for f32), `ONEDNN_PRIMITIVE_CACHE_CAPACITY`, "
              "`ONEDNN_VERBOSE`, `ONEDNN_JIT_DUMP`; `OMP_NUM_THREADS` etc. (Debian's build threads with OpenMP)",
}


def read_jsonl(path):
    out = []
    if not os.path.exists(path):
        return out
    for line in open(path):
        line = line.strip()
        if line.startswith("{"):
            out.append(json.loads(line))
    return out


def sh(cmd):
    try:
        return subprocess.run(cmd, shell=True, capture_output=True, text=True, timeout=60).stdout.strip()
    except Exception:  # noqa: BLE001 - facts are best effort
        return ""


def facts(venv, wheels):
    f = {}
    f["cpu"] = sh("lscpu | sed -n 's/^Model name: *//p'")
    flags = sh("grep -m1 '^flags' /proc/cpuinfo").split()
    f["flags"] = " ".join(sorted(x for x in flags if re.match(r"(avx512|amx|avx_vnni|avx2$|fma$)", x)))
    f["model"] = sh("lscpu | sed -n 's/^Model: *//p'")
    f["hypervisor"] = sh("lscpu | sed -n 's/^Hypervisor vendor: *//p'")
    f["cores"] = os.cpu_count()
    f["mem_gib"] = round(int(sh("awk '/MemTotal/ {print $2}' /proc/meminfo") or 0) / 1048576, 1)
    f["os"] = sh(". /etc/os-release; echo $PRETTY_NAME")
    f["compiler"] = sh("g++ --version | head -1")
    f["apt"] = {}
    for p in ["libopenblas0-pthread", "libopenblas-dev", "libdnnl2", "libdnnl-dev", "libblis4-pthread"]:
        show = sh(f"apt-cache show --no-all-versions {p}")
        get = lambda k: (re.search(rf"^{k}: (.*)$", show, re.M) or [None, ""])[1]  # noqa: E731
        f["apt"][p] = {"version": get("Version"), "download_bytes": int(get("Size") or 0),
                       "installed_kib": int(get("Installed-Size") or 0)}
    f["openblas_sbgemm_symbols"] = int(sh("nm -D $(readlink -f /usr/lib/x86_64-linux-gnu/libopenblas.so.0) | grep -ci sbgemm") or 0)
    f["wheels"] = {os.path.basename(w): os.path.getsize(w) for w in sorted(glob.glob(os.path.join(wheels, "*.whl")))}
    f["mkl_venv_lib_mib"] = int((sh(f"du -sm {venv}/lib") or "0").split()[0])
    used = sh(f"du -cm {venv}/lib/libmkl_rt.so.* {venv}/lib/libmkl_core.so.* {venv}/lib/libmkl_gnu_thread.so.* "
              f"{venv}/lib/libmkl_intel_lp64.so.* {venv}/lib/libmkl_avx512.so.* {venv}/lib/libmkl_def.so.* | tail -1")
    f["mkl_libs_used_mib"] = int((used or "0").split()[0])
    return f


class Results:
    """Medians by (threads, case, candidate), and the problems they stand for."""

    def __init__(self, build):
        shapes = json.load(open(os.path.join(build, "shapes.json")))
        self.model_flops = shapes["model_flops"]
        self.max_gflop, self.coverage = shapes.get("max_gflop", 0.4), shapes.get("coverage", 1.0)
        self.skipped = []
        self.problems = {p["id"]: p for p in shapes["problems"]}
        self.rows = defaultdict(dict)  # (threads, case) -> candidate -> row
        self.headers, self.loads = {}, defaultdict(list)
        for t in (1, 2):
            for r in read_jsonl(os.path.join(build, f"results-{t}.jsonl")):
                if r.get("header"):
                    self.headers[t] = r
                elif "load" in r:
                    self.loads[t].append(r["loadavg"])
                elif "skipped" in r:
                    self.skipped.append(r)
                else:
                    self.rows[(t, r["case"])][r["candidate"]] = r
        self.verify = [r for t in (1, 2) for r in read_jsonl(os.path.join(build, f"verify-{t}.jsonl"))
                       if r.get("verify") and "ok" in r]

    def threads(self):
        return sorted({t for t, _ in self.rows})

    def cases(self, cls=None):
        return [p for p in self.problems.values() if p["timed"] and (cls is None or p["class"] == cls)
                and any((t, p["id"]) in self.rows for t in (1, 2))]

    def seconds(self, t, case, cand):
        """One occurrence of the real (not batch-reduced) problem, or None."""
        rows = self.rows.get((t, case))
        if not rows:
            return None
        scale = self.problems[case].get("timed_scale", 1)
        if cand.endswith("+pack"):
            base = self.seconds(t, case, cand[:-5])
            if base is None:
                return None
            r = rows.get("seam:pack")
            return base + (r["median_s"] * scale if r else 0.0)
        if cand == "onednn-best":
            # Per case the better of the primitive on the plain layouts and
            # the primitive on its own layouts plus reorders.
            times = [x for x in (self.seconds(t, case, "onednn-plain"), self.seconds(t, case, "onednn+")) if x]
            return min(times) if times else None
        if cand == "onednn+":
            # The primitive on the layouts it picked plus the reorders of
            # activations from and to the plain layouts (GEMMs: B as stored).
            if self.problems[case]["class"].startswith("gemm"):
                r = rows.get("onednn-plain")
                return r["median_s"] * scale if r else None
            if "onednn" not in rows:
                return None
            extra = sum(rows[k]["median_s"] for k in ("onednn:reorder_in", "onednn:reorder_out") if k in rows)
            return (rows["onednn"]["median_s"] + extra) * scale
        r = rows.get(cand)
        return r["median_s"] * scale if r else None

    def stack_seconds(self, t, case, chain):
        for cand in chain:
            s = self.seconds(t, case, cand)
            if s is not None:
                return s, cand
        return None, None

    def candidates(self, cls):
        names = set()
        for p in self.cases(cls):
            for t in self.threads():
                names |= set(self.rows.get((t, p["id"]), {}))
        order = ["openblas", "openblas-unforced", "openblas-own", "mkl", "mkl-own", "blis", "blis-own", "seam-loop",
                 "seam-loop-native", "onednn", "onednn-plain"]
        real = [n for n in order if n in names] + sorted(n for n in names if n not in order and not n.startswith(PSEUDO))
        return real, sorted(n for n in names if n.startswith(PSEUDO))


def total_flops(p):
    return sum(p["model_flops"].values())


def fmt(x, digits=1):
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    return f"{x:.{digits}f}"


def summary_gflops(res, cls, cand, t):
    return class_summary(res, cls, cand, t)[0]


def class_summary(res, cls, cand, t):
    """Flop-weighted GF/s over the class (real flops / real time), cases covered."""
    flops = secs = 0.0
    n = 0
    for p in res.cases(cls):
        s = case_seconds(res, t, p["id"], cand)
        if s is None:
            continue
        occ = sum(p["counts"].values())
        flops += total_flops(p)
        secs += s * occ
        n += 1
    return (flops / secs / 1e9 if secs else None), n


SEAM_TODAY = ["openblas", "seam-loop"]


def case_seconds(res, t, case, cand):
    """A candidate's time, or a composite's (`Seam today`: OpenBLAS, else its loop)."""
    if cand == "seam-today":
        return res.stack_seconds(t, case, SEAM_TODAY)[0]
    if cand == "seam-today+pack":
        return res.stack_seconds(t, case, [c + "+pack" for c in SEAM_TODAY])[0]
    return res.seconds(t, case, cand)


def geomean_ratio(res, cls, cand, t):
    """Geometric mean over the class's cases of Seam today's time over cand's."""
    logs = []
    for p in res.cases(cls):
        a, b = case_seconds(res, t, p["id"], cand), case_seconds(res, t, p["id"], "seam-today")
        if a and b:
            logs.append(math.log(b / a))
    return math.exp(sum(logs) / len(logs)) if logs else None


def wins(res, cls, cand, t, real):
    won = total = 0
    for p in res.cases(cls):
        times = {c: res.seconds(t, p["id"], c) for c in real}
        times = {c: s for c, s in times.items() if s}
        if cand not in times:
            continue
        total += 1
        won += min(times, key=times.get) == cand
    return won, total


def model_times(res, t, chain):
    """Per model: seconds for its dots and convolutions, and the flops share measured."""
    out = {}
    for model, mflops in res.model_flops.items():
        secs = covered = 0.0
        for p in res.cases():
            if model not in p["counts"]:
                continue
            s, _ = res.stack_seconds(t, p["id"], chain)
            if s is None:
                continue
            secs += s * p["counts"][model]
            covered += p["model_flops"][model]
        out[model] = (secs, covered / mflops if mflops else 0)
    return out


def best_stack(res, t):
    """Per class, the real candidate with the least total time over the models."""
    choice = {}
    for cls in CLASSES:
        real, _ = res.candidates(cls)
        best, best_s = None, None
        for cand in real:
            if cand.endswith("-own") or cand == "openblas-unforced":
                continue
            tot, ok = 0.0, True
            for p in res.cases(cls):
                s = res.seconds(t, p["id"], cand)
                if s is None:
                    ok = False
                    break
                tot += s * sum(p["counts"].values())
            if ok and (best_s is None or tot < best_s):
                best, best_s = cand, tot
        choice[cls] = best
    return choice


def cores_used(res):
    """Median over every sample row of the CPU time / wall time, by thread count."""
    out = {}
    for t in res.threads():
        v = sorted(r["cores_used"] for (tt, _), rows in res.rows.items() if tt == t for r in rows.values()
                   if "cores_used" in r)
        if v:
            out[t] = v[len(v) // 2]
    return out


def class_stack_gflops(res, cls, chain, t):
    """Flop-weighted GF/s of a stack over a class (None if a case has no time)."""
    flops = secs = 0.0
    for p in res.cases(cls):
        sec, _ = res.stack_seconds(t, p["id"], chain)
        if sec is None:
            return None
        flops += total_flops(p)
        secs += sec * sum(p["counts"].values())
    return flops / secs / 1e9 if secs else None


SUMMARY_STACKS = [
    ("MKL", ["mkl", "seam-loop"]),
    ("BLIS", ["blis", "seam-loop"]),
    ("oneDNN", ["onednn"]),
    ("oneDNN + reorders", ["onednn+"]),
    ("oneDNN from/to plain layouts", ["onednn-best"]),
]


def summary_section(res, isa, fx):
    T = res.threads()
    out = ["## Summary\n"]
    out.append("Flop-weighted GF/s of Seam's path today (OpenBLAS COOPERLAKE through Seam's pool; Seam's own loop "
               "for depthwise convolutions) and each alternative's speed-up over it (Seam's time / its time over the "
               "class's problems, weighted by their flops in the models; an alternative falls back to Seam's loop "
               "where Seam makes no BLAS call). `oneDNN` is the primitive alone on the layouts it picks; `+ reorders` "
               "adds converting activations from and to the plain layouts on every call; `from/to plain layouts` takes, "
               "per problem, the better of that and the primitive run directly on the plain layouts (where oneDNN "
               "has an optimized kernel for them) — what Seam would get without changing its own layouts. "
               "1T / 2T: threads.\n")
    cores = cores_used(res)
    if 2 in cores:
        out.append(f"**Read the 2T columns with care**: a neighbour kept the machine busy during the 2-thread run "
                   f"(load average {' → '.join(res.loads.get(2, []))} on 2 cores); the median sample got "
                   f"{cores[2]:.2f} cores of CPU time (1T run: {cores.get(1, 0):.2f}). They rank how the candidates "
                   "cope with a busy second core — which is how Seam will often run — not 2-core scaling.\n")
    head = ("| op class | Seam today GF/s | Seam + its NCHW packing | " + " | ".join(n for n, _ in SUMMARY_STACKS)
            + " |")
    out += [head, "|---|---|---|" + "---|" * len(SUMMARY_STACKS)]
    for cls in CLASSES:
        if not res.cases(cls):
            continue
        base = {t: class_stack_gflops(res, cls, SEAM_TODAY, t) for t in T}
        cells = [" / ".join(fmt(base[t]) for t in T)]
        packed = [class_stack_gflops(res, cls, [c + "+pack" for c in SEAM_TODAY], t) for t in T]
        cells.append(" / ".join(f"{g / base[t]:.2f}×" if g and base[t] else "–" for g, t in zip(packed, T)))
        for _, chain in SUMMARY_STACKS:
            r = []
            for t in T:
                g = class_stack_gflops(res, cls, chain, t)
                r.append(f"{g / base[t]:.2f}×" if g and base[t] else "–")
            cells.append(" / ".join(r))
        out.append(f"| {cls} | " + " | ".join(cells) + " |")
    out.append("")
    # Models.
    out.append("Per model, seconds for its dots and convolutions (1 thread; real batch sizes):\n")
    chains = [("Seam today", SEAM_TODAY), ("Seam + NCHW packing", [c + "+pack" for c in SEAM_TODAY])] + SUMMARY_STACKS
    out.append("| model | " + " | ".join(n for n, _ in chains) + " |")
    out.append("|---|" + "---|" * len(chains))
    for model in res.model_flops:
        cells = []
        for _, chain in chains:
            secs, cov = model_times(res, 1, chain)[model]
            cells.append(f"{secs:.3f}" if cov > 0 else "–")
        out.append(f"| {model} | " + " | ".join(cells) + " |")
    out.append("")
    out += recommendation(res, isa, fx)
    return out


def pseudo_total(res, cls, cand, t=1):
    """Seconds of one candidate or conversion over a class's occurrences."""
    return sum((res.seconds(t, p["id"], cand) or 0) * sum(p["counts"].values()) for p in res.cases(cls))


def recommendation(res, isa, fx):
    """The recommendation, its ratios read from this run's numbers."""
    T = res.threads()

    def ratio(cls, chain, t=1, base=None):
        b = class_stack_gflops(res, cls, base or SEAM_TODAY, t)
        g = class_stack_gflops(res, cls, chain, t)
        return f"{g / b:.2f}×" if g and b else "–"

    def both(cls, chain, base=None):
        return " / ".join(ratio(cls, chain, t, base) for t in T) + (" (1T / 2T)" if len(T) > 1 else "")

    def geo(cls, cand, t=1):
        g = geomean_ratio(res, cls, cand, t)
        return f"{g:.2f}×" if g else "–"

    def model(m, chain, t=1):
        secs, cov = model_times(res, t, chain)[m]
        return f"{secs:.3f} s" if cov else "–"

    pack = [c + "+pack" for c in SEAM_TODAY]
    mob, eff, res50 = "xla_mobilenet_v2_ptxla_train", "hloenv_efficientnet_jax_module_0698", "xla_resnet50_keras_jax_f32"
    gem = "xla_gemma3_1b_flax_call"
    n_ref = len({r["case"] for r in res.skipped})
    out = ["### Recommendation\n"]
    out.append(
        "1. **Convolutions, every form → oneDNN** (Debian `libdnnl-dev`), called per op on the layouts Seam "
        "already has (weights in the primitive's layout, prepared once; activations either read directly or "
        "reordered, whichever measured faster for the shape). Primitive alone vs Seam's im2col + OpenBLAS: "
        f"forward NHWC {both('conv_nhwc', ['onednn'])}, NCHW {both('conv_nchw', ['onednn'])}, depthwise "
        f"{both('conv_depthwise', ['onednn'])} (over Seam's own loop), backward-data "
        f"{both('conv_bwd_data', ['onednn'])}, backward-filter {both('conv_bwd_filter', ['onednn'])}. "
        "From and to the plain layouts (the fair comparison for an NCHW model, where Seam packs to NHWC too; its packing as written here): "
        f"NCHW {ratio('conv_nchw', ['onednn-best'], 1, pack)}, backward-data "
        f"{ratio('conv_bwd_data', ['onednn-best'], 1, pack)}, backward-filter "
        f"{ratio('conv_bwd_filter', ['onednn-best'], 1, pack)} over Seam incl. its packing (1T). Per model "
        f"(1T): MobileNetV2 training {model(mob, pack)} → {model(mob, ['onednn-best'])} ({model(mob, ['onednn'])} "
        f"if the layouts stayed blocked), EfficientNet {model(eff, SEAM_TODAY)} → {model(eff, ['onednn-best'])}, "
        f"ResNet-50 {model(res50, SEAM_TODAY)} → {model(res50, ['onednn-best'])}. MKL under the same im2col "
        f"would buy {ratio('conv_nhwc', ['mkl', 'seam-loop'])} (NHWC) to {ratio('conv_bwd_filter', ['mkl', 'seam-loop'])} "
        "(backward-filter): the loss is im2col's, not OpenBLAS's.")
    out.append(
        "2. **bf16 dots → oneDNN `matmul`** (bf16 in, f32 accumulate; weights prepacked where they are "
        f"constants): {both('gemm_bf16', ['onednn'])} over converting to f32 + OpenBLAS, "
        f"{both('gemm_bf16', ['onednn-plain'])} with the weights as stored; MKL's `cblas_gemm_bf16bf16f32` "
        f"{both('gemm_bf16', ['mkl'])}. Gemma-3 1B's dots: {model(gem, SEAM_TODAY)} → {model(gem, ['onednn'])}. "
        f"Prepacking pays only for weights that stay constant across calls: repacking them on every call costs "
        f"{pseudo_total(res, 'gemm_bf16', 'onednn:reorder_weights'):.2f} s over the models against "
        f"{pseudo_total(res, 'gemm_bf16', 'onednn'):.2f} s for the matmuls themselves; otherwise use the weights "
        "as stored. "
        "The corpus's bf16 dots are decode-sized (M = 11 tokens) and memory-bound: the gain is reading the weights "
        "once as bf16 instead of converting them to f32 and reading them again. Compute-bound bf16 is a different "
        "story on this CPU (next section).")
    out.append(
        "3. **f32 dots → keep OpenBLAS, with the core type forced as Seam does.** Flop-weighted, MKL is "
        f"{both('gemm_f32', ['mkl'])}, oneDNN {both('gemm_f32', ['onednn'])}, BLIS {both('gemm_f32', ['blis'])} of "
        f"OpenBLAS; per shape MKL and oneDNN win the small ones (geometric mean {geo('gemm_f32', 'mkl')} and "
        f"{geo('gemm_f32', 'onednn')}), which carry few flops. Unforced OpenBLAS (PRESCOTT kernels) runs at "
        f"{geo('gemm_f32', 'openblas-unforced')} of the forced one: the override is worth keeping. Once oneDNN is "
        "linked for convolutions, routing small f32 dots to its matmul is an option to measure in Seam.")
    bert = "gh_ptxla_bert_single_device_training_fwd_bwd"
    out.append(
        "4. **Not MKL**: per class it trails oneDNN (bf16 dots, and convolutions, where it is stuck with im2col) "
        "or OpenBLAS (f32 dots, flop-weighted); it wins single shapes — BERT's vocabulary-sized bf16 dots "
        f"(model: {model(bert, ['mkl', 'seam-loop'])} vs oneDNN {model(bert, ['onednn-best'])}) — at the price of "
        f"{sum(fx.get('wheels', {}).values()) / 1048576:.0f} MiB of PyPI wheels ({fx.get('mkl_venv_lib_mib', 0)} MiB "
        "installed), no package in Debian main, dispatch by CPU vendor and environment (`MKL_ENABLE_INSTRUCTIONS`, "
        "`MKL_CBWR`), and `libmkl_rt` loading its layers `RTLD_GLOBAL`: in this process its `sgemm_` silently "
        "replaced BLIS's own. **Not BLIS**: Debian's build has no AVX-512 (`skx`) kernels (it picks `haswell` "
        f"here; forcing `BLIS_ARCH_TYPE=0` aborts), {both('conv_nhwc', ['blis', 'seam-loop'])} on NHWC convolutions; "
        "its one win is GPT-2's 50257×4 logits dot (G5), a transposed skinny GEMM where every library is "
        "memory-bound.")
    out.append(
        "5. **Integration costs to plan for**: Debian's oneDNN 2.6 threads with OpenMP (its own team beside Seam's "
        "pool; the 2-thread numbers are with that team) and has the 2.x descriptor API (3.x changed it); "
        "primitive creation (JIT) is not in these times, so primitives must be created once per shape and cached; "
        f"the weight-gradient primitive on plain layouts exists only as `ref:any` ({n_ref} cases skipped, hundreds "
        "of times slower): there it must take blocked layouts plus reorders (still "
        f"{ratio('conv_bwd_filter', ['onednn+'])} over Seam).\n")

    out.append("### Surprises\n")
    if isa.get("isa_peak") is True:
        b1 = res.rows.get((1, "B2"), {})
        out.append(
            f"- **bf16 runs at half the f32 rate, in every library, because of the instruction**: on this CPU one "
            f"core retires {isa['vfmadd231ps_ginstr_s']:.1f} G VFMADD231PS/s (two a cycle: {isa['f32_gflops']:.0f} GF/s "
            f"f32) but only {isa['vdpbf16ps_ginstr_s']:.2f} G VDPBF16PS/s (one every ~"
            f"{isa['vfmadd231ps_ginstr_s'] / 2 / isa['vdpbf16ps_ginstr_s']:.0f} cycles: {isa['bf16_gflops']:.0f} GF/s), "
            "measured by `isa_peak` with 12 independent accumulators in registers, no memory. oneDNN's bf16 matmul "
            "really is `brg:avx512_core_bf16` (verbose below), with weights blocked `BA16a64b2a` (the VNNI pair "
            "layout) or plain `ba`, and MKL reports AVX-512 with BF16 support; both reach ~85 GF/s on a 1024³ bf16 "
            "GEMM (`probe` below) — the instruction's ceiling, not a layout or reorder problem (plain vs blocked "
            "weights differ by a few % on compute-bound shapes). The fast bf16 path of this CPU generation is AMX, "
            "which the VM does not expose. So for large compute-bound bf16 GEMMs, converting to f32 and calling "
            "sgemm beats native bf16 here; native bf16 wins where memory traffic dominates (all the corpus's bf16 "
            "dots).")
    out.append(
        "- **OpenBLAS unforced picks PRESCOTT (SSE3) kernels** on this KVM guest (the CPU model is hidden): "
        f"{geo('gemm_f32', 'openblas-unforced')} of the forced COOPERLAKE speed on f32 dots.")
    out.append(
        "- **BLIS measured MKL's speed** in the first run: BLIS's `cblas_sgemm` calls `sgemm_` through the global "
        "symbol scope, and `libmkl_rt` had put MKL's there. This bench calls `bli_sgemm` directly since.")
    out.append(
        "- **Seam's depthwise loop is compiled for generic x86-64** (Seam's runtime has no `-march`): the same loop "
        f"with `-march=native` is {geo('conv_depthwise', 'seam-loop-native')}; oneDNN "
        f"{geo('conv_depthwise', 'onednn')} (geometric means, 1T).")
    out.append(
        "- **NCHW costs more in layout changes than in arithmetic**: Seam's packing of PyTorch's NCHW operands to "
        "NHWC (a simple tiled permute here) or oneDNN's reorders to its blocked layouts take about as long as the "
        "convolutions (tables below); keeping a model's activations in one layout across ops would be worth more "
        "than any library choice for MobileNetV2.")
    own = {c: summary_gflops(res, "gemm_f32", c, 2) for c in ("openblas", "openblas-own", "mkl-own", "blis-own", "onednn")}
    if all(own.values()):
        out.append(
            "- **A busy core punishes libraries that thread by themselves**: with the neighbour's load, f32 dots at "
            f"2 threads ran at {own['openblas']:.0f} GF/s through Seam's split into independent single-threaded "
            f"OpenBLAS calls, {own['onednn']:.0f} on oneDNN's OpenMP team, but {own['openblas-own']:.0f} on "
            f"OpenBLAS's own threads, {own['mkl-own']:.0f} on MKL's and {own['blis-own']:.1f} on BLIS's "
            "(flop-weighted): a thread waiting at a barrier for a descheduled partner wastes its core. Seam's pool "
            "calling single-threaded libraries is the way to thread any of them; oneDNN's OpenMP team (Debian's "
            "build has no threadpool runtime) is the exception Seam would have to live with.\n")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--build", required=True)
    ap.add_argument("--md", required=True)
    ap.add_argument("--json", required=True)
    ap.add_argument("--venv", default="")
    ap.add_argument("--wheels", default="")
    ap.add_argument("--command", default="bench/libraries/run.sh")
    args = ap.parse_args()
    build = args.build
    res = Results(build)
    fx = facts(args.venv, args.wheels)
    isa = (read_jsonl(os.path.join(build, "isa_peak.json")) or [{}])[0]
    h = res.headers.get(1, {})
    T = res.threads()
    md = []
    w = md.append

    w("# Dot and convolution libraries, measured on the corpus models' shapes\n")
    w(f"Reproduce: `{args.command}` (`--quick`: 90% of each model's flops, 5 rounds, report in the build folder). "
      "It installs what is missing (apt: `cmake g++ libopenblas-dev libdnnl-dev python3-venv`; BLIS unpacked from "
      "`libblis4-pthread`; MKL from PyPI into a venv under `~/.cache/seam-libbench`), builds `bench/libraries/` "
      "standalone, extracts the shapes, checks every candidate against a naive reference, times, and writes this file "
      f"and `{os.path.basename(args.json)}`.\n")
    w(f"Generated {datetime.datetime.now().strftime('%Y-%m-%d %H:%M')} by `bench/libraries/report.py`.\n")
    summary_at = len(md)

    # ---------------------------------------------------------------- machine
    w("## Machine and libraries\n")
    w(f"- CPU: {fx['cpu']} (family 6 model {fx['model']}, {fx['hypervisor']} guest), {fx['cores']} cores, "
      f"{fx['mem_gib']} GiB; {fx['os']}; {fx['compiler']}.")
    w(f"- Vector flags: `{fx['flags']}` (no AMX exposed).")
    if isa.get("isa_peak") is True:
        w(f"- Instruction throughput (`isa_peak`, 12 independent zmm accumulators fed from registers, one core): "
          f"VFMADD231PS {isa['vfmadd231ps_ginstr_s']:.2f} G/s = **{isa['f32_gflops']:.0f} GF/s f32**, "
          f"VDPBF16PS {isa['vdpbf16ps_ginstr_s']:.2f} G/s = **{isa['bf16_gflops']:.0f} GF/s bf16** "
          f"(one VDPBF16PS per ~{isa['vfmadd231ps_ginstr_s'] / 2 / isa['vdpbf16ps_ginstr_s']:.1f} cycles, "
          "two FMAs per cycle).")
    for key in ("openblas", "openblas-unforced", "mkl", "blis", "onednn"):
        if key in h:
            w(f"- `{key}`: {h[key]}")
    w("")

    # ---------------------------------------------------------------- method
    w("## Method\n")
    w("- **Shapes**: `extract_shapes.py` reads every `dot(` and `convolution(` of the models below from "
      "`shared/hlo`, finds operand shapes from their defining lines, and maps each onto a batched GEMM "
      "(batch, M, N, K, transposes) or a 2-D convolution in HLO's exact semantics (dim_labels, window stride / "
      "padding / lhs and rhs dilation / reversal, feature and batch group counts). Identical problems are merged "
      "with per-model occurrence counts (static: an op inside a loop body counts once). "
      f"{len(res.problems)} distinct problems; {len(res.cases())} timed. "
      f"{sum(1 for p in res.problems.values() if p['class'].startswith('gemm') and not p.get('plain', True))} of "
      f"{sum(1 for p in res.problems.values() if p['class'].startswith('gemm'))} distinct dots have an operand whose "
      "layout is not a (possibly transposed) matrix stack, which Seam packs before the call; that copy is not timed "
      "here (the GEMM on packed operands is).")
    w(f"- **Batch reduction**: a convolution over {res.max_gflop} GFLOP a run (EfficientNet at batch 250, MobileNetV2 at 96) "
      "is timed at a smaller image batch (a divisor of it) and its time scaled by the ratio; GEMMs are timed whole. "
      "A hand check (4 cases, one per convolution kind, at twice the timed batch) moved rates by −10% to +12% and "
      "the ratios between candidates by under 10%, on the loaded machine.")
    w("- **Candidates** per case, all in one process (`libbench`), opened with `dlopen(RTLD_LOCAL)`:")
    w("  - `openblas`: Debian's OpenBLAS opened exactly as Seam opens it (`OPENBLAS_CORETYPE` set from the CPU's "
      "instruction sets — Cooperlake here — and `OPENBLAS_NUM_THREADS=1` while it loads); `openblas-unforced`: a "
      "private copy of the same file loaded without the override (it detects PRESCOTT on this VM).")
    w("  - `mkl`: `libmkl_rt` from the PyPI wheel, GNU OpenMP threading layer, LP64; bf16 through "
      "`cblas_gemm_bf16bf16f32`.")
    w("  - `blis`: Debian's BLIS 0.9 (pthreads), through its typed API `bli_sgemm` (its `cblas_sgemm` calls `sgemm_` "
      "through the global scope, which MKL's libraries — loaded `RTLD_GLOBAL` by `libmkl_rt` — answer: an early "
      "run measured MKL under BLIS's name).")
    w("  - BLAS candidates are driven the way Seam drives OpenBLAS today (a rewrite of `blas_dot.cc`/`blas_conv.cc`/"
      "`blas_pack.h` rules in `seam_style.cc`): Seam's pool splits the work (batch elements, or the longer side of C "
      "in multiples of 16 when M·N·K ≥ 2^20) and calls the library single-threaded; convolutions are im2col "
      "(parallel over rows, chunks of ~8M elements) + GEMM on NHWC/HWIO-ordered data; depthwise convolutions "
      "(one input feature per group, no batch groups) use Seam's direct loop instead (`seam-loop`: built like Seam's "
      "runtime, `-O2` generic x86-64; `seam-loop-native`: the same loop with `-march=native`). bf16 operands are "
      "converted to f32 for libraries without a bf16 GEMM (OpenBLAS 0.3.21 from Debian is built without "
      f"`BUILD_BFLOAT16`: `nm -D` finds {fx['openblas_sbgemm_symbols']} `sbgemm` symbols; BLIS 0.9 has no bf16 "
      "GEMM either), conversion included in the time.")
    w("  - `*-own` (2 threads, GEMMs only): the library's own threads (OpenBLAS from a third copy loaded with "
      "`OPENBLAS_THREAD_TIMEOUT=4` so that its idle worker sleeps instead of `sched_yield`-spinning for ~0.1 s "
      "into the next candidate's time; MKL's GNU OpenMP team; BLIS's pthreads).")
    w("  - `onednn`: Debian's oneDNN 2.6.3 (OpenMP runtime). Dots: `matmul` with weights in the layout the primitive "
      "picks (`format_tag::any`, reordered once; the reorder is timed separately) — `onednn-plain`: weights as "
      "stored. Convolutions: `convolution_forward` with `format_tag::any` for source, weights and destination, "
      "exactly the HLO window; input-dilated convolutions (a strided convolution's data gradient) as "
      "`convolution_backward_data` of the forward convolution whose stride is the dilation (kernel flipped); the "
      "weight-gradient form as `convolution_backward_weights` (forward stride = HLO rhs dilation, forward dilation = "
      "HLO stride, `batch_group_count` = groups). The HLO operands are described to oneDNN by strides in their "
      "physical layouts; the primitive is timed alone, the reorders to and from those plain layouts separately "
      "(`onednn:reorder_in/_weights/_out`). `onednn-plain` for convolutions: the primitive reads and writes the "
      "activations (and the weight gradient) directly in those plain layouts, weights still in its own; where only "
      "oneDNN's reference implementation accepts that (`ref:any`, every weight-gradient case) it is not timed. "
      "Seam's packing of NCHW operands to NHWC and back (`seam:pack`: a single-threaded tiled 4-D permute written "
      "here, not Seam's code) is likewise separate.")
    w(f"- **Timing**: per case, every candidate warms up ({h.get('warmup', 2)} runs), then **{h.get('rounds', 15)} "
      "rounds interleave the candidates** (one sample of each per round, rotating order; OpenMP candidates last, "
      "then a 30 ms pause at 2 threads so their spinning workers are asleep before the next round). A sample repeats "
      f"the op until it lasts ≥ {1e3 * h.get('min_sample_s', 0.002):.0f} ms and takes the mean; tables give the "
      "**median of the samples**. Other work (a compile, then another session's test run) shared the 2 cores: "
      "`cores_used` in the JSON is the process's CPU time over wall time per sample; load averages during the "
      "runs: " +
      "; ".join(f"{t} thread(s): {' → '.join(res.loads[t])}" for t in T) + ".")
    w("- **GF/s** counts HLO flops: 2·(output elements)·(kernel window)·(input features per group), taps that "
      "fall into padding or between dilated inputs included — a gradient convolution that skips the zeros is "
      "credited with the same flops as one that multiplies them.")
    nver = len(res.verify)
    bad = [r for r in res.verify if not r["ok"]]
    worst = defaultdict(float)
    for r in res.verify:
        worst[r["candidate"]] = max(worst[r["candidate"]], r["rel_err"])
    w(f"- **Correctness**: every case, cut small (batch ≤ 2, M and N ≤ 96; convolutions at image batch 1-2 and "
      f"≤ 3 groups), against a naive double-precision reference at 1 and 2 threads: {nver} checks, "
      f"{len(bad)} failures (tolerance 1e-4 of the largest reference magnitude; bf16 operands are bf16-exact values "
      "so every candidate computes on the same numbers). Worst relative error per candidate: " +
      ", ".join(f"`{k}` {v:.1e}" for k, v in sorted(worst.items())) + ". The full-size results are also compared "
      "with the first candidate's in every timing run (`check_rel_err` in the JSON).")
    xmax = defaultdict(float)
    for rows in res.rows.values():
        for c, r in rows.items():
            if r["check_rel_err"] >= 0:
                xmax[c] = max(xmax[c], r["check_rel_err"])
    w("  Largest full-size disagreement: " + ", ".join(f"`{k}` {v:.1e}" for k, v in sorted(xmax.items())) + ".\n")

    # ---------------------------------------------------------------- classes
    w("## Per op class\n")
    w("GF/s are flop-weighted over the class (the models' total flops of the class over their total time); "
      "`vs Seam` is the geometric mean over the class's cases of Seam's time today (OpenBLAS COOPERLAKE, or Seam's "
      "depthwise loop) over the candidate's (> 1: faster than Seam today); `wins` counts the cases where it is the "
      "fastest candidate (a case missing from a row: the candidate does not apply, e.g. no BLAS call in Seam's "
      "depthwise loop).\n")
    summary = {}
    for cls in CLASSES:
        real, pseudo = res.candidates(cls)
        if not real:
            continue
        cases = res.cases(cls)
        occ = sum(sum(p["counts"].values()) for p in cases)
        gfl = sum(total_flops(p) for p in cases) / 1e9
        w(f"### {CLASS_TITLE[cls]}\n")
        w(f"{len(cases)} distinct problems, {occ} occurrences, {gfl:.2f} GFLOP in the models.\n")
        head = "| candidate | " + " | ".join(f"GF/s {t}T | vs Seam {t}T | wins {t}T" for t in T) + " |"
        w(head)
        w("|" + "---|" * (1 + 3 * len(T)))
        summary[cls] = {}
        rows = list(real)
        mixed = "openblas" in real and "seam-loop" in real
        if mixed:
            rows.insert(0, "seam-today")
        if "seam:pack" in pseudo:
            rows.append("seam-today+pack")
        if "onednn" in real and not cls.startswith("gemm"):
            rows.append("onednn+")
        label = {"seam-today": "Seam today (OpenBLAS; its loop where it makes no BLAS call)",
                 "seam-today+pack": "Seam today + its NCHW→NHWC packing",
                 "onednn+": "`onednn` + reorders from/to the plain layouts"}
        for cand in rows:
            cells = []
            for t in T:
                g, n = class_summary(res, cls, cand, t)
                ratio = geomean_ratio(res, cls, cand, t)
                won, tot = wins(res, cls, cand, t, real) if cand in real else (0, 0)
                cells += [fmt(g), fmt(ratio, 2) + ("" if n == len(cases) else f" ({n} cases)"), f"{won}/{tot}" if tot else "–"]
                summary[cls].setdefault(cand, {})[t] = {"gflops": g, "vs_seam": ratio, "wins": won, "cases": tot, "n": n}
            w(f"| {label.get(cand, f'`{cand}`')} | " + " | ".join(cells) + " |")
        if pseudo:
            w("\nLayout conversions (not part of the rows above), total seconds over the models' occurrences:\n")
            w("| conversion | " + " | ".join(f"{t}T s" for t in T) + " | primitive (`onednn`) s, 1T |")
            w("|---|" + "---|" * len(T) + "---|")
            prim = sum((res.seconds(1, p["id"], "onednn") or 0) * sum(p["counts"].values()) for p in cases)
            for ps in pseudo:
                cells = []
                for t in T:
                    cells.append(fmt(sum((res.seconds(t, p["id"], ps) or 0) * sum(p["counts"].values()) for p in cases), 4))
                w(f"| `{ps}` | " + " | ".join(cells) + f" | {prim:.4f} |")
        # The shapes that dominate the class.
        top = sorted(cases, key=lambda p: -total_flops(p))[:6]
        w("\nLargest problems of the class (share of the class's flops; GF/s at 1 thread):\n")
        cols = [c for c in real if not c.endswith("-own")]
        w("| id | problem | models (count) | share | " + " | ".join(f"`{c}`" for c in cols) + " | `onednn` impl |")
        w("|---|---|---|---|" + "---|" * len(cols) + "---|")
        for p in top:
            share = total_flops(p) / (gfl * 1e9) if gfl else 0
            if cls.startswith("gemm"):
                desc = f"{p['batch']}×[{p['m']}×{p['k']}]·[{p['k']}×{p['n']}]" + (" Aᵀ" if p["ta"] else "") + (" Bᵀ" if p["tb"] else "")
            else:
                desc = (f"in {p['n']}×{p['h']}×{p['w']}×{p['ci']} k {p['kh']}×{p['kw']}×{p['kin']}×{p['co']} "
                        f"→ {p['on']}×{p['oh']}×{p['ow']}×{p['co']}")
                extra = []
                if p["sh"] > 1 or p["sw"] > 1:
                    extra.append(f"s{p['sh']}")
                if p["lh"] > 1 or p["lw"] > 1:
                    extra.append(f"lhs_dil{p['lh']}")
                if p["dh"] > 1 or p["dw"] > 1:
                    extra.append(f"rhs_dil{p['dh']}")
                if p["fgc"] > 1:
                    extra.append(f"fgc{p['fgc']}")
                if p["bgc"] > 1:
                    extra.append(f"bgc{p['bgc']}")
                desc += (" " + " ".join(extra)) if extra else ""
                desc += f" `{p['in_order']}`"
            models = ", ".join(f"{m.split('_')[1] if m.startswith(('xla_', 'gh_', 'hloenv_')) else m} ({n})"
                               for m, n in p["counts"].items())
            rates = []
            for c in cols:
                r = res.rows.get((1, p["id"]), {}).get(c)
                rates.append(fmt(r["gflops"]) if r else "–")
            impl = res.rows.get((1, p["id"]), {}).get("onednn", {}).get("impl", "")
            w(f"| {p['id']} | {desc} | {models} | {share:.0%} | " + " | ".join(rates) + f" | {impl[:70]} |")
        w("")

    # ---------------------------------------------------------------- models
    w("## Per model: time of its dots and convolutions\n")
    w("Seconds for one execution of each model's dots and convolutions (every occurrence, real batch), per stack: "
      "a stack serves every case with its library, and Seam's depthwise loop where Seam makes no BLAS call. "
      "`best per class` takes, per op class, the candidate with the least total time over all models. "
      "`covered` is the share of the model's dot/convolution flops timed.\n")
    model_table = {}
    for t in T:
        best = best_stack(res, t)
        chains = list(STACKS) + [("best per class", None)]
        w(f"### {t} thread{'s' if t > 1 else ''}\n")
        w("| model | GFLOP | covered | " + " | ".join(name for name, _ in chains) + " |")
        w("|---|---|---|" + "---|" * len(chains))
        for model, mflops in res.model_flops.items():
            cells, covered = [], 0
            for name, chain in chains:
                if chain is None:
                    secs = 0.0
                    for p in res.cases():
                        if model in p["counts"]:
                            c = best.get(p["class"])
                            s = res.seconds(t, p["id"], c) if c else None
                            if s is None:
                                s, _ = res.stack_seconds(t, p["id"], ["openblas", "seam-loop"])
                            secs += (s or 0) * p["counts"][model]
                else:
                    secs, covered = model_times(res, t, chain)[model]
                model_table.setdefault(str(t), {}).setdefault(model, {})[name] = secs
                cells.append(f"{secs:.4f}")
            base = model_table[str(t)][model][chains[0][0]]
            # Mark the fastest.
            times = [model_table[str(t)][model][n] for n, _ in chains]
            low = min(times)
            cells = [f"**{c}**" if abs(v - low) < 1e-12 else c for c, v in zip(cells, times)]
            if covered == 0:
                cells = ["–"] * len(cells)
            w(f"| {model} | {mflops / 1e9:.2f} | {covered:.0%} | " + " | ".join(cells) + " |")
        w("\n`best per class` at this thread count: " + ", ".join(f"{c}: `{b}`" for c, b in best.items() if b) + ".\n")

    # Which problems dominate each model.
    w("### Problems that dominate each model\n")
    w("| model | GFLOP | top problems (class, share of the model's dot/conv flops) |")
    w("|---|---|---|")
    for model, mflops in res.model_flops.items():
        mine = sorted((p for p in res.problems.values() if model in p["model_flops"]),
                      key=lambda p: -p["model_flops"][model])
        top = ", ".join(f"{p['id']} ({p['class'].replace('conv_', '').replace('gemm_', '')}, "
                        f"{p['model_flops'][model] / mflops:.0%})" for p in mine[:5])
        n90, acc = 0, 0.0
        for p in mine:
            if acc >= 0.9 * mflops:
                break
            acc += p["model_flops"][model]
            n90 += 1
        w(f"| {model} | {mflops / 1e9:.2f} | {top}; {n90} of {len(mine)} distinct problems cover 90% |")
    w("")

    # ---------------------------------------------------------------- install
    w("## Installing each candidate on a fresh Debian 12 machine\n")
    w("| candidate | how | size | environment variables that change its kernels or threads |")
    w("|---|---|---|---|")
    a = fx["apt"]
    mib = lambda b: f"{b / 1048576:.1f} MiB"  # noqa: E731
    w(f"| OpenBLAS | apt `libopenblas-dev` → `libopenblas0-pthread` {a['libopenblas0-pthread']['version']} "
      f"(Seam already depends on it) | {mib(a['libopenblas0-pthread']['download_bytes'])} download, "
      f"{a['libopenblas0-pthread']['installed_kib'] / 1024:.0f} MiB installed | {ENV_VARS['openblas']} |")
    w(f"| oneDNN | apt `libdnnl-dev` → `libdnnl2` {a['libdnnl2']['version']} (C++ API in `dnnl.hpp`, links "
      f"libgomp) | {mib(a['libdnnl2']['download_bytes'])} download, {a['libdnnl2']['installed_kib'] / 1024:.0f} MiB "
      f"installed | {ENV_VARS['onednn']} |")
    wheels = fx.get("wheels", {})
    wsum = sum(wheels.values())
    wlist = ", ".join(f"{k.split('-')[0]} {v / 1048576:.0f} MiB" for k, v in wheels.items())
    w(f"| MKL | PyPI `mkl` (pulls `intel-openmp`, `tbb`, …; `mkl-devel` adds headers and .so links); link or "
      f"dlopen `libmkl_rt.so.3` | wheels {wsum / 1048576:.0f} MiB ({wlist}); venv lib/ {fx['mkl_venv_lib_mib']} MiB, "
      f"of which the libraries loaded here {fx['mkl_libs_used_mib']} MiB | {ENV_VARS['mkl']} |")
    w(f"| BLIS | apt `libblis-dev` → `libblis4-pthread` {a['libblis4-pthread']['version']} (installing registers it "
      f"as a `libblas.so.3` / `cblas.h` alternative at priority 75, below OpenBLAS's 100; this bench only unpacks "
      f"it) | {mib(a['libblis4-pthread']['download_bytes'])} download, "
      f"{a['libblis4-pthread']['installed_kib'] / 1024:.0f} MiB installed | {ENV_VARS['blis']} |")
    w("")

    # ---------------------------------------------------------------- probe
    probe = [r for r in read_jsonl(os.path.join(build, "probe-1.jsonl")) if "case" in r and "median_s" in r]
    if probe:
        w("## Compute-bound probe: 1024³ GEMMs (not from the models), 1 thread\n")
        w("What each candidate reaches when arithmetic, not memory, limits: the f32 / bf16 ceiling of "
          f"`isa_peak` is {isa.get('f32_gflops', 0):.0f} / {isa.get('bf16_gflops', 0):.0f} GF/s.\n")
        cands = []
        for r in probe:
            if r["candidate"] not in cands and not r["candidate"].startswith(PSEUDO):
                cands.append(r["candidate"])
        w("| problem | " + " | ".join(f"`{c}`" for c in cands) + " |")
        w("|---|" + "---|" * len(cands))
        names = {"P1": "f32 A·B", "P2": "bf16 A·B", "P3": "bf16 A·Bᵀ"}
        for case in sorted({r["case"] for r in probe}):
            rows = {r["candidate"]: r for r in probe if r["case"] == case}
            w(f"| {names.get(case, case)} | " + " | ".join(fmt(rows[c]["gflops"]) if c in rows else "–" for c in cands) + " |")
        w("\n(bf16 through OpenBLAS/BLIS: converted to f32, then sgemm, conversion included.)\n")

    # ---------------------------------------------------------------- dispatch
    disp = os.path.join(build, "dispatch.txt")
    if os.path.exists(disp):
        lines = set()
        for line in open(disp):
            line = re.sub(r"^\s*\d+\s+", "", line.strip())
            line = re.sub(r",[0-9.]+$", "", line)  # exec time
            line = re.sub(r"\b0x[0-9a-f]+", "…", line)
            line = re.sub(r" [0-9.]+ms ", " ", line)
            lines.add(line)
        w("## What the libraries dispatched to (`ONEDNN_VERBOSE=1 MKL_VERBOSE=1`, largest bf16 dot and G1)\n")
        w("```")
        for line in sorted(lines):
            w(line[:300])
        w("```\n")

    md[summary_at:summary_at] = summary_section(res, isa, fx)
    Path(args.md).parent.mkdir(parents=True, exist_ok=True)
    Path(args.md).write_text("\n".join(md) + "\n")
    per_case = {}
    for (t, case), rows in res.rows.items():
        # Library versions are in the headers: keep implementation names only for oneDNN.
        per_case.setdefault(case, {})[str(t)] = {
            c: {k: r[k] for k in ("median_s", "p25_s", "p75_s", "gflops", "reps", "cores_used", "check_rel_err")
                if k in r} | ({"impl": r["impl"]} if c.startswith("onednn") and r.get("impl") else {})
            for c, r in rows.items()}
    out = {"facts": fx, "isa_peak": isa, "headers": res.headers, "loads": res.loads, "class_summary": summary,
           "model_seconds": model_table,
           "problems": {pid: {k: v for k, v in p.items() if k != "example"} | {"hlo": p["example"]}
                        for pid, p in res.problems.items()},
           "results": per_case}
    Path(args.json).write_text(json.dumps(out, separators=(",", ":")) + "\n")


if __name__ == "__main__":
    main()
