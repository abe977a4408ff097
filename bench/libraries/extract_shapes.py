#!/usr/bin/env python3
"""Every distinct dot and convolution of the corpus models, as benchmark cases.

Reads HLO text with regexes (enough for the dumps in shared/hlo: one
instruction a line), finds each dot's and convolution's operand shapes from
their defining lines, maps it onto a canonical problem (batched GEMM, or a
2-D convolution in HLO's own semantics) and writes:

  shapes.json  every distinct problem: its class, per-model occurrence counts
               and flops, and the HLO it came from (one example line);
  cases.txt    what libbench times: the distinct problems, batch-reduced
               where one run would be long, one line each.

Occurrences are static: an op inside a while body counts once.
"""

import argparse
import json
import math
import re
import sys
from pathlib import Path

# The models the report covers (glob patterns inside the corpus folder).
MODELS = [
    "xla_resnet50_keras_jax_f32.hlo",
    "gh_ptxla_bert_single_device_training_fwd_bwd.hlo",
    "gh_ptxla_gpt2_tp1_n_layer2.hlo",
    "xla_dlrm_keras_jax_f32_train_step.hlo",
    "xla_gemma3_1b_flax_call.hlo",
    "xla_mha_block_1x12x128x64_bf16.hlo",
    "xla_mobilenet_v2_ptxla_train.hlo",
    "hloenv_efficientnet_jax_module_0698*",
]

SHAPE_RE = re.compile(r"^(pred|[sufc]\d+|bf16|f8\w*)\[([^\]]*)\](\{[^}]*\})?")


def parse_shape(text):
    """'f32[2,3]{0,1}' -> (dtype, dims, minor_to_major) or None for tuples/tokens."""
    m = SHAPE_RE.match(text.strip())
    if not m:
        return None
    dims = [int(d.lstrip("<=")) for d in m.group(2).split(",") if d.strip()]
    layout = None
    if m.group(3):
        inner = m.group(3)[1:-1].split(":")[0]  # drop tiling / memory space
        if inner.strip():
            layout = [int(x) for x in inner.split(",")]
    if layout is None:
        layout = list(range(len(dims) - 1, -1, -1))
    return m.group(1), dims, layout


def split_top(text, sep=","):
    """Splits on `sep` outside (), [], {}."""
    parts, depth, cur = [], 0, []
    for ch in text:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == sep and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    if cur:
        parts.append("".join(cur))
    return [p.strip() for p in parts]


def balanced(text, start):
    """Index just past the bracket group opening at text[start]."""
    depth = 0
    for i in range(start, len(text)):
        if text[i] in "([{":
            depth += 1
        elif text[i] in ")]}":
            depth -= 1
            if depth == 0:
                return i + 1
    return len(text)


INST_RE = re.compile(r"^\s*(?:ROOT\s+)?%?([\w.\-]+)\s*=\s*")


def parse_instructions(path):
    """Yields (name, shape_text, opcode, operand_texts, attrs_text, line)."""
    for line in Path(path).read_text().splitlines():
        m = INST_RE.match(line)
        if not m:
            continue
        rest = line[m.end():]
        if rest.startswith("("):
            end = balanced(rest, 0)
        else:
            end = rest.find(" ")
            if end < 0:
                continue
        shape_text, rest = rest[:end], rest[end:].lstrip()
        om = re.match(r"([\w\-]+)\(", rest)
        if not om:
            continue
        opcode = om.group(1)
        close = balanced(rest, om.end() - 1)
        operands = split_top(rest[om.end():close - 1])
        yield m.group(1), shape_text, opcode, operands, rest[close:], line.strip()


def operand_shape(text, shapes):
    """An operand's shape: typed in place, else from its defining line."""
    s = parse_shape(text)
    if s:
        return s
    name = text.split()[-1].lstrip("%")
    return shapes.get(name)


def attr(attrs, key):
    m = re.search(r"\b" + key + r"=\{([^}]*)\}", attrs)
    if not m:
        m = re.search(r"\b" + key + r"=([^,\s]+)", attrs)
    return m.group(1) if m else None


def int_list(text):
    return [int(x) for x in text.split(",") if x.strip()] if text else []


def physical(layout):
    """Logical dimension indices, major to minor."""
    return list(reversed(layout))


def dot_problem(lhs, rhs, out, attrs):
    """A dot as (batch, m, n, k, transpose_a, transpose_b, plain).

    plain: both operands are row-major matrices (possibly transposed) per batch
    with batch dimensions outermost; else a library call needs a copy first."""
    lb, lc = int_list(attr(attrs, "lhs_batch_dims")), int_list(attr(attrs, "lhs_contracting_dims"))
    rb, rc = int_list(attr(attrs, "rhs_batch_dims")), int_list(attr(attrs, "rhs_contracting_dims"))
    ld, rd = lhs[1], rhs[1]
    lf = [i for i in range(len(ld)) if i not in lb and i not in lc]
    rf = [i for i in range(len(rd)) if i not in rb and i not in rc]
    prod = lambda dims, idx: math.prod(dims[i] for i in idx)  # noqa: E731
    batch, m, n, k = prod(ld, lb), prod(ld, lf), prod(rd, rf), prod(ld, lc)

    def orientation(dims, order, bdims, cdims, fdims):
        """(contracting dims first?, batch dims outermost?); None: interleaved."""
        order = [d for d in order if dims[d] != 1]  # unit dimensions constrain nothing
        b = [d for d in order if d in bdims]
        rest = [d for d in order if d not in bdims]
        batch_outer = order[:len(b)] == b
        c = [d for d in rest if d in cdims]
        f = [d for d in rest if d in fdims]
        if rest == f + c:
            return False, batch_outer
        if rest == c + f:
            return True, batch_outer
        return None, batch_outer

    lorder, rorder = physical(lhs[2]), physical(rhs[2])
    ta, lok = orientation(ld, lorder, lb, lc, lf)
    tb_rev, rok = orientation(rd, rorder, rb, rc, rf)
    plain = ta is not None and tb_rev is not None and lok and rok
    # rhs is k x n when contracting dims come first: not transposed.
    tb = (not tb_rev) if tb_rev is not None else False
    return dict(batch=batch, m=m, n=n, k=k, ta=int(bool(ta)), tb=int(tb), plain=plain)


def conv_problem(lhs, rhs, out, attrs):
    """A 2-D convolution in HLO's semantics, on canonical (b, 0, 1, f) orders."""
    labels = attr(attrs, "dim_labels")
    lhs_l, rest = labels.split("_")
    ker_l, out_l = rest.split("->")
    if len(lhs_l) != 4:
        return None
    window = attr(attrs, "window") or ""
    fields = dict(re.findall(r"(\w+)=([^\s]+)", window))
    size = [int(x) for x in fields["size"].split("x")]

    def pair(key, default):
        v = fields.get(key)
        return [int(x) for x in v.split("x")] if v else [default, default]

    pads = [[0, 0], [0, 0]]
    if "pad" in fields:
        pads = [[int(a) for a in p.split("_")] for p in fields["pad"].split("x")]
    rev = [0, 0]
    if "rhs_reversal" in fields:
        rev = [int(x) for x in fields["rhs_reversal"].split("x")]
    li = {c: lhs_l.index(c) for c in lhs_l}
    ki = {c: ker_l.index(c) for c in ker_l}
    oi = {c: out_l.index(c) for c in out_l}
    d = dict(
        n=lhs[1][li["b"]], ci=lhs[1][li["f"]], h=lhs[1][li["0"]], w=lhs[1][li["1"]],
        kh=rhs[1][ki["0"]], kw=rhs[1][ki["1"]], kin=rhs[1][ki["i"]], co=rhs[1][ki["o"]],
        oh=out[1][oi["0"]], ow=out[1][oi["1"]], on=out[1][oi["b"]],
        sh=pair("stride", 1)[0], sw=pair("stride", 1)[1],
        plh=pads[0][0], phh=pads[0][1], plw=pads[1][0], phw=pads[1][1],
        lh=pair("lhs_dilate", 1)[0], lw=pair("lhs_dilate", 1)[1],
        dh=pair("rhs_dilate", 1)[0], dw=pair("rhs_dilate", 1)[1],
        rh=rev[0], rw=rev[1],
        fgc=int(attr(attrs, "feature_group_count") or 1),
        bgc=int(attr(attrs, "batch_group_count") or 1),
    )
    assert size == [d["kh"], d["kw"]], (size, d)

    # Physical orders (major to minor) as label strings.
    def order(lbls, shape):
        return "".join(lbls[i] for i in physical(shape[2]))

    d["in_order"], d["ker_order"], d["out_order"] = order(lhs_l, lhs), order(ker_l, rhs), order(out_l, out)
    d["labels"] = labels
    return d


def conv_class(d):
    """Which op class a convolution belongs to (see libraries.md)."""
    if d["bgc"] > 1 or d["kh"] * d["kw"] > d["oh"] * d["ow"]:
        return "conv_bwd_filter"
    ker_l = d["labels"].split("_")[1].split("->")[0]
    # Forward kernels are HWIO (JAX, TF) or OIHW (PyTorch); HWOI, reversed
    # kernels and dilated inputs are the data gradient's forms.
    if d["lh"] > 1 or d["lw"] > 1 or d["rh"] or d["rw"] or ker_l == "01oi":
        return "conv_bwd_data"
    if d["fgc"] > 1 and d["kin"] == 1:
        return "conv_depthwise"
    return "conv_nhwc" if d["in_order"] == "b01f" else "conv_nchw"


def conv_flops(d):
    # 2 * output elements * (kernel positions * kernel input features),
    # counting taps that fall into padding or between dilated inputs.
    return 2 * d["on"] * d["oh"] * d["ow"] * d["co"] * d["kh"] * d["kw"] * d["kin"]


def scan_model(path):
    shapes, ops = {}, []
    for name, shape_text, opcode, operands, attrs, line in parse_instructions(path):
        s = parse_shape(shape_text)
        if s:
            shapes[name] = s
        if opcode not in ("dot", "convolution"):
            continue
        lhs, rhs = operand_shape(operands[0], shapes), operand_shape(operands[1], shapes)
        if lhs is None or rhs is None or s is None:
            print(f"{path.name}: {name}: operand shapes not found, skipped", file=sys.stderr)
            continue
        dtype = lhs[0]
        if opcode == "dot":
            p = dot_problem(lhs, rhs, s, attrs)
            p["dtype"] = "bf16" if dtype in ("bf16", "f16") else dtype
            p["class"] = f"gemm_{p['dtype']}"
            p["flops"] = 2 * p["batch"] * p["m"] * p["n"] * p["k"]
            key = ("gemm", p["dtype"], p["batch"], p["m"], p["n"], p["k"], p["ta"], p["tb"])
        else:
            p = conv_problem(lhs, rhs, s, attrs)
            if p is None:
                print(f"{path.name}: {name}: not a 2-D convolution, skipped", file=sys.stderr)
                continue
            p["dtype"] = dtype
            p["class"] = conv_class(p)
            p["flops"] = conv_flops(p)
            key = ("conv", dtype) + tuple(p[k] for k in CONV_KEYS)
        p["example"] = re.sub(r",?\s*metadata=\{.*", "", line)[:300]
        ops.append((key, p))
    return ops


CONV_KEYS = ["n", "ci", "h", "w", "kh", "kw", "kin", "co", "oh", "ow", "on", "sh", "sw", "plh", "phh",
             "plw", "phw", "lh", "lw", "dh", "dw", "rh", "rw", "fgc", "bgc", "in_order", "ker_order",
             "out_order"]


def reduce_batch(p, max_flops):
    """The problem timed: its image batch cut (by a divisor of the batch
    groups) until one run is at most max_flops, and the factor cut."""
    if p["flops"] <= max_flops:
        return dict(p), 1
    if p["class"].startswith("gemm"):
        return dict(p), 1  # GEMMs are timed whole (the largest is small enough)
    q = dict(p)
    if p["class"] == "conv_bwd_filter":
        # The image batch is the contracted feature dimension (f of the
        # input, i of the kernel); batch groups are the channels.
        full = p["ci"]
        want = max(1, math.ceil(full * max_flops / p["flops"]))
        nb = next(b for b in range(want, full + 1) if full % b == 0)
        q["ci"] = q["kin"] = nb
        return q, full / nb
    full = p["n"]
    want = max(p["bgc"], math.ceil(full * max_flops / p["flops"]))
    nb = next(b for b in range(want, full + 1) if full % b == 0 and b % p["bgc"] == 0)
    q["n"] = nb
    q["on"] = nb // p["bgc"]
    return q, full / nb


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hlo", default=str(Path(__file__).resolve().parents[3] / "shared" / "hlo"),
                    help="corpus folder (default: shared/hlo beside the repository)")
    ap.add_argument("--out", default=".", help="folder for shapes.json and cases.txt")
    ap.add_argument("--max-gflop", type=float, default=0.4,
                    help="convolutions above this many GFLOP a run are timed at a smaller batch")
    ap.add_argument("--coverage", type=float, default=1.0,
                    help="time only the largest problems covering this fraction of each model's flops")
    args = ap.parse_args()

    hlo = Path(args.hlo)
    problems = {}  # key -> problem with per-model counts
    model_flops = {}
    for pattern in MODELS:
        paths = sorted(hlo.glob(pattern))
        if not paths:
            sys.exit(f"no model matches {pattern} in {hlo}")
        for path in paths:
            model = path.name.split(".")[0] if path.name.startswith("hloenv") else path.stem
            model_flops.setdefault(model, 0)
            for key, p in scan_model(path):
                entry = problems.setdefault(key, dict(p, counts={}, model_flops={}))
                entry["counts"][model] = entry["counts"].get(model, 0) + 1
                entry["model_flops"][model] = entry["model_flops"].get(model, 0) + p["flops"]
                model_flops[model] += p["flops"]

    # Case ids in a stable order: class, then flops, largest first.
    ordered = sorted(problems.values(), key=lambda p: (p["class"], -p["flops"], p["example"]))
    selected = set()
    for model, total in model_flops.items():
        mine = sorted((p for p in ordered if model in p["model_flops"]), key=lambda p: -p["model_flops"][model])
        covered = 0
        for p in mine:
            if covered >= args.coverage * total and args.coverage < 1.0:
                break
            selected.add(id(p))
            covered += p["model_flops"][model]

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    cases, listing = [], []
    prefix = {"gemm_f32": "G", "gemm_bf16": "B", "conv_nhwc": "CH", "conv_nchw": "CN",
              "conv_depthwise": "DW", "conv_bwd_data": "BD", "conv_bwd_filter": "BF"}
    numbers = {}
    for p in ordered:
        numbers[p["class"]] = numbers.get(p["class"], 0) + 1
        p["id"] = f"{prefix[p['class']]}{numbers[p['class']]}"
        p["timed"] = id(p) in selected
        if p["timed"]:
            q, scale = reduce_batch(p, args.max_gflop * 1e9)
            p["timed_scale"] = scale
            p["timed_flops"] = q["flops"] / 1  # recomputed below for convolutions
            if p["class"].startswith("gemm"):
                fields = ["batch", "m", "n", "k", "ta", "tb"]
                kind = "gemm"
            else:
                q["flops"] = conv_flops(q)
                p["timed_flops"] = q["flops"]
                fields = CONV_KEYS
                kind = "conv"
            cases.append(" ".join([kind, f"id={p['id']}", f"class={p['class']}", f"dtype={p['dtype']}"] +
                                  [f"{f}={q[f]}" for f in fields]))
        listing.append(p)
    (out / "cases.txt").write_text("\n".join(cases) + "\n")
    (out / "shapes.json").write_text(json.dumps({"model_flops": model_flops, "max_gflop": args.max_gflop,
                                                   "coverage": args.coverage, "problems": listing}, indent=1))
    by_class = {}
    for p in listing:
        c = by_class.setdefault(p["class"], [0, 0, 0])
        c[0] += 1
        c[1] += sum(p["counts"].values())
        c[2] += p["timed"]
    for c, (n, occ, timed) in sorted(by_class.items()):
        print(f"{c:16s} {n:4d} distinct, {occ:4d} occurrences, {timed:4d} timed")
    for m, f in model_flops.items():
        print(f"{m:55s} {f / 1e9:10.2f} GFLOP")


if __name__ == "__main__":
    main()
