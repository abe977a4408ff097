#!/usr/bin/env python3
"""The pass-ordering leaderboard (CompilerGym-style): per corpus module, the
ops left by the default pipeline and by each search agent (`seam gym`), plus
PPO on held-out families when its results file is given, each with walltime,
the paper's metric (I - R) / (I - D) and its geometric mean.

Two protocols:
  raw        episodes start from the module as dumped (the paper's protocol);
  canonical  episodes start from the planner's canonical forms (batch norms
             expanded, no calls, row-major), so op counts compare with the
             default pipeline like for like;
  cost       canonical, beam search minimising the cost model's time after
             stitch fusion instead: whether fewer ops mean faster code.

The learned policy (python/scripts/train_rllib.py) is compared on the
held-out families under the cost protocol: one deterministic rollout
against the default pipeline and the searches at the policy's own walltime
and at --budget seconds, and the measured time (`seam bench`) of the orders
the cost model says gain most.

Usage:
  python3 bench/gym_leaderboard.py run [--budget S] [--modules a,b] [--out bench/gym/runs.jsonl]
  python3 bench/gym_leaderboard.py policy --evaluation DIR/evaluation.json [--budget S]
  python3 bench/gym_leaderboard.py measure --evaluation DIR/evaluation.json [--top 5]
  python3 bench/gym_leaderboard.py render [--runs bench/gym/runs.jsonl] [--ppo FILE.json]...
                                          [--evaluation DIR/evaluation.json]
Writes bench/gym/leaderboard.csv and bench/gym/leaderboard.md (render).
Only the standard library is needed.
"""
import argparse
import csv
import datetime
import importlib.util
import json
import math
import os
import random
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SEAM = os.path.join(ROOT, "build", "seam")
CORPUS = os.path.join(ROOT, "tests", "corpus", "hlo")
AGENTS = ["random", "greedy", "beam"]
PROTOCOLS = ["raw", "canonical"]
# protocol -> (flags, agents)
PROTOCOL_RUNS = {
    "raw": ([], AGENTS),
    "canonical": (["--canonical-start"], AGENTS),
    "cost": (["--canonical-start", "--objective=cost"], ["beam"]),
}
# The learned policy's comparison: the searches on its test modules, and
# measured times of its largest gains.
POLICY_RUNS = os.path.join(ROOT, "bench", "gym", "policy_runs.jsonl")
POLICY_MEASURED = os.path.join(ROOT, "bench", "gym", "policy_measured.json")
# Which modules are too slow to interpret (validated by the verifier
# only): the gym's own list, read from the package's source so the
# leaderboard needs neither a build nor a second copy of it.
_CORPUS_SPEC = importlib.util.spec_from_file_location(
    "seam_gym_corpus", os.path.join(ROOT, "python", "seam", "gym", "corpus.py"))
gym_corpus = importlib.util.module_from_spec(_CORPUS_SPEC)
_CORPUS_SPEC.loader.exec_module(gym_corpus)
# The paper's headline graphs: the 10% aim is stated on these.
HEADLINE = ["gh_ptxla_gpt2_tp1_n_layer2.hlo", "gh_ptxla_bert_single_device_training_fwd_bwd.hlo",
            "gh_ptxla_bert_pretrain_tp1_dp1_pp1_optimizer.hlo", "xla_resnet50_keras_jax_f32.hlo"]


def corpus_modules():
    return sorted(f for f in os.listdir(CORPUS) if not f.endswith(".md"))


def run(args):
    modules = args.modules.split(",") if args.modules else corpus_modules()
    protocols = args.protocols.split(",") if args.protocols else list(PROTOCOL_RUNS)
    with open(args.out, "a") as out:
        for module in modules:
            slow = gym_corpus.slow_to_interpret(f"corpus/{module}")
            for protocol in protocols:
                flags, agents = PROTOCOL_RUNS[protocol]
                for agent in agents:
                    row = gym_run(f"corpus/{module}", agent, args.budget,
                                  flags + (["--no-interpret"] if slow else []))
                    if row is None:
                        continue
                    row.update(module=module, protocol=protocol)
                    out.write(json.dumps(row) + "\n")
                    out.flush()
                    print(f"{module:60.60s} {protocol:9s} {agent:6s} I={row['initial_ops']} "
                          f"D={row['default_ops']} R={row['best_ops']} {row['walltime_s']:.1f}s", flush=True)


def gym_run(target, agent, budget, flags):
    """One `seam gym` search, its JSON row; None (reported) when it fails."""
    cmd = [SEAM, "gym", target, f"--agent={agent}", f"--budget={budget}", "--json"] + flags
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        print(f"FAILED {' '.join(cmd)}\n{done.stderr}", file=sys.stderr)
        return None
    row = json.loads(done.stdout)
    row.update(command=" ".join(cmd[1:]), date=datetime.date.today().isoformat())
    return row


def load_evaluation(path):
    with open(path) as f:
        return json.load(f)


def compared_modules(rows, sample):
    """The evaluation's real models and a seeded sample of `sample` of its
    generated modules (all of them when sample is 0): 10-s searches on
    every module would take most of an hour here."""
    real = [r for r in rows if r["benchmark"].startswith("corpus/")]
    generated = [r for r in rows if not r["benchmark"].startswith("corpus/")]
    if 0 < sample < len(generated):
        generated = random.Random(0).sample(generated, sample)
    return real + generated


def policy(args):
    """The searches on the policy's test modules, cost protocol: at the
    policy's walltime on each module ("equal") and at --budget seconds."""
    evaluation = load_evaluation(args.evaluation)
    with open(args.out, "a") as out:
        for row in compared_modules(evaluation["modules"], args.sample):
            uri = row["benchmark"]
            interpret = args.interpret and row.get("validated", {}).get("interpreted", True)
            flags = PROTOCOL_RUNS["cost"][0] + ([] if interpret else ["--no-interpret"])
            for agent in AGENTS:
                for budget_name, budget in (("equal", row["walltime_s"]), ("budget", args.budget)):
                    r = gym_run(uri, agent, budget, flags)
                    if r is None:
                        continue
                    r.update(module=os.path.basename(uri), protocol="policy-" + budget_name)
                    out.write(json.dumps(r) + "\n")
                    out.flush()
                    print(f"{r['module']:50.50s} {agent:6s} {budget:6.2f}s: {r['best_cost_us']:.1f} us, "
                          f"default {r['default_cost_us']:.1f} us", flush=True)


def bench_ms(path, spec, repeat):
    """`seam bench`'s median of the stitched module compiled after `spec`;
    raises CalledProcessError when it fails."""
    cmd = [SEAM, "bench", path, f"--passes={spec}", "--strategies=stitch", f"--repeat={repeat}", "--json"]
    done = subprocess.run(cmd, capture_output=True, text=True, check=True)
    return json.loads(done.stdout)["workloads"][0]["strategies"]["stitch"]["median_ms"]


def interleaved_ms(path, specs, rounds, repeat):
    """Per spec (a dict of label to pass spec), the median over `rounds` of
    bench_ms, every spec once a round: the host's drift falls on all alike.
    A spec whose bench fails is left out (its error on stderr)."""
    times = {k: [] for k in specs}
    for _ in range(rounds):
        for k, spec in specs.items():
            if times[k] is None:
                continue
            try:
                times[k].append(bench_ms(path, spec, repeat))
            except subprocess.CalledProcessError as failed:
                print(f"  bench failed for {spec!r}: {failed.stderr.strip()[-300:]}", file=sys.stderr)
                times[k] = None
    return {k: sorted(v)[len(v) // 2] for k, v in times.items() if v}, times


def measure(args):
    """Measured times of the default pipeline's module against the policy's
    for the modules where the cost model sees the policy gain most, rounds
    interleaved, the median of each kept."""
    evaluation = load_evaluation(args.evaluation)
    top = sorted(evaluation["modules"], key=lambda r: r["default_over_policy"], reverse=True)[:args.top]
    rows = []
    for r in top:
        path = r["benchmark"].removeprefix("file://")
        specs = {"default": "default", "policy": r["pass_spec"] or "none"}
        med, times = interleaved_ms(path, specs, args.rounds, args.repeat)
        if len(med) < len(specs):
            continue
        rows.append({"module": os.path.basename(path), "default_cost_us": r["default_cost_us"],
                     "policy_cost_us": r["cost_us"], "default_ms": med["default"], "policy_ms": med["policy"],
                     "rounds": times, "policy_spec": r["pass_spec"]})
        print(f"{rows[-1]['module']}: cost model {r['default_cost_us']:.0f} -> {r['cost_us']:.0f} us, "
              f"measured {med['default']:.3f} -> {med['policy']:.3f} ms", flush=True)
    with open(args.out, "w") as f:
        json.dump({"date": datetime.date.today().isoformat(), "repeat": args.repeat, "rounds": args.rounds,
                   "rows": rows}, f, indent=1)


def metric(initial, default, best):
    return (initial - best) / (initial - default) if initial != default else None


def geomean(values):
    """The geometric mean over the positive values (a module whose order
    left more ops than it started with has no logarithm), and how many
    values it covers of how many."""
    defined = [v for v in values if v is not None]
    positive = [v for v in defined if v > 0]
    if not positive:
        return None
    return math.exp(sum(math.log(v) for v in positive) / len(positive)), len(positive), len(defined)


def load_ppo(paths):
    """PPO results per (module, protocol): the held-out modules only."""
    results = {}
    for path in paths:
        with open(path) as f:
            data = json.load(f)
        protocol = "canonical" if data.get("canonical_start") else "raw"
        for row in data["test"]:
            module = row["benchmark"].split("/", 1)[1]
            results[(module, protocol)] = dict(row, command=data.get("command", ""))
    return results


def trained_text(evaluation):
    trained = evaluation.get("trained") or {}
    text = f"{evaluation.get('train_seconds', 0) / 60:.0f} min"
    if trained:
        text = f"{trained['iterations']} iterations, {trained['env_steps']} env steps ({text} in its last run)"
    return text


def policy_section(evaluation, runs_path, measured_path):
    """The learned policy against the default pipeline and the searches on
    the held-out families: cost-model time, D / R per cell (> 1 faster
    than the default pipeline), geomeans and walltimes; then measured times."""
    runs = {}
    if os.path.exists(runs_path):
        with open(runs_path) as f:
            for line in f:
                r = json.loads(line)
                runs[(r["module"], r["protocol"], r["agent"])] = r
    args_used = evaluation.get("args", {})
    lines = [f"## Learned policy on the held-out families ({', '.join(args_used.get('test_families', '').split(','))})",
             "",
             "Canonical start, cost model (host CPU, after stitch fusion). The policy: PPO on Ray RLlib "
             f"trained {trained_text(evaluation)} on the training families "
             "(`python/scripts/train_rllib.py`), one deterministic rollout, no search. Each cell: the "
             "cost-model time of the best order in µs and D / R (the default pipeline's time over it; "
             "> 1 is faster than the default pipeline); searches at the policy's own walltime on the "
             "module (=) and at 10 s. Every order was replayed from scratch with the verifier after "
             "every pass and the interpreter against the original.", "",
             "| module | D µs | policy | random = | greedy = | beam = | random 10 s | greedy 10 s | beam 10 s |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    columns = [("policy", None)] + [(a, "policy-equal") for a in AGENTS] + [(a, "policy-budget") for a in AGENTS]
    ratios = {c: [] for c in columns}
    walls = {c: [] for c in columns}
    compared = {m for m, _, _ in runs}
    every = evaluation["modules"]
    shown = [r for r in every if os.path.basename(r["benchmark"]) in compared] if compared else every
    for row in sorted(shown, key=lambda r: os.path.basename(r["benchmark"])):
        module = os.path.basename(row["benchmark"])
        d = row["default_cost_us"]
        cells = []
        for agent, protocol in columns:
            if protocol is None:
                cost, wall = row["cost_us"], row["walltime_s"]
            else:
                r = runs.get((module, protocol, agent))
                if r is None:
                    cells.append("–")
                    continue
                cost, wall = r["best_cost_us"], r["walltime_s"]
            ratio = d / cost if cost > 0 else 1.0
            ratios[(agent, protocol)].append(ratio)
            walls[(agent, protocol)].append(wall)
            cells.append(f"{cost:.0f} ({ratio:.3f})")
        lines.append(f"| {module} | {d:.0f} | " + " | ".join(cells) + " |")

    def gm(values):
        return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None

    lines.append("| **geomean D / R** (modules) | | " + " | ".join(
        "–" if not ratios[c] else f"**{gm(ratios[c]):.4f}** ({len(ratios[c])})" for c in columns) + " |")
    lines.append("| median walltime per module (s) | | " + " | ".join(
        "–" if not walls[c] else f"{sorted(walls[c])[len(walls[c]) // 2]:.3f}" for c in columns) + " |")
    lines.append("")
    if len(shown) < len(every):
        lines += [f"The policy on all {len(every)} held-out modules: geomean D / R "
                  f"**{gm([r['default_over_policy'] for r in every]):.4f}** (the searches ran on the "
                  f"{len(shown)} above: the real models and a seeded sample of the generated ones).", ""]
    if measured_path and os.path.exists(measured_path):
        with open(measured_path) as f:
            measured = json.load(f)
        lines += ["### Measured: the five largest gains the cost model sees", "",
                  f"`seam bench --strategies=stitch --repeat={measured['repeat']}`, {measured['rounds']} "
                  f"interleaved rounds, medians ({measured['date']}, this host).", "",
                  "| module | cost model D → policy (µs) | measured D → policy (ms) | measured speed-up |",
                  "|---|---:|---:|---:|"]
        for r in measured["rows"]:
            lines.append(f"| {r['module']} | {r['default_cost_us']:.0f} → {r['policy_cost_us']:.0f} | "
                         f"{r['default_ms']:.3f} → {r['policy_ms']:.3f} | {r['default_ms'] / r['policy_ms']:.3f}x |")
        lines.append("")
    return lines


def render(args):
    runs = {}
    with open(args.runs) as f:
        for line in f:
            row = json.loads(line)
            runs[(row["module"], row["protocol"], row["agent"])] = row  # the latest run wins
    ppo = load_ppo(args.ppo)
    modules = sorted({m for m, _, _ in runs})
    csv_path = os.path.join(args.dir, "leaderboard.csv")
    with open(csv_path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["date", "protocol", "module", "agent", "initial_ops", "default_ops", "best_ops",
                         "metric", "vs_default_pct", "walltime_s", "steps", "best_planned_ops",
                         "default_planned_ops", "best_cost_us", "default_cost_us", "spec", "command"])
        for (module, protocol, agent), r in sorted(runs.items()):
            m = metric(r["initial_ops"], r["default_ops"], r["best_ops"])
            writer.writerow([r["date"], protocol, module, agent, r["initial_ops"], r["default_ops"],
                             r["best_ops"], "" if m is None else f"{m:.4f}",
                             f"{100 * (r['best_ops'] - r['default_ops']) / r['default_ops']:.2f}",
                             f"{r['walltime_s']:.2f}", r["steps"], r["best_planned_ops"],
                             r["default_planned_ops"], f"{r['best_cost_us']:.1f}",
                             f"{r['default_cost_us']:.1f}", r["best_spec"], r["command"]])
        for (module, protocol), r in sorted(ppo.items()):
            m = metric(r["initial_ops"], r["default_ops"], r["ops"])
            writer.writerow([args.date, protocol, module, "ppo", r["initial_ops"], r["default_ops"], r["ops"],
                             "" if m is None else f"{m:.4f}",
                             f"{100 * (r['ops'] - r['default_ops']) / r['default_ops']:.2f}",
                             f"{r.get('walltime_s', 0):.2f}", r.get("steps", ""), "", "", "", "",
                             r.get("pass_spec", ""), r["command"]])
    dates = sorted({r["date"] for r in runs.values()})
    lines = [f"# Pass-ordering leaderboard (rendered {args.date}; search runs of {', '.join(dates)})", "",
             "Ops left after each agent's best order, per corpus module; the paper's metric "
             "(I − R)/(I − D) in parentheses (1 = as many ops removed as the default pipeline, "
             "> 1 better). Every order was replayed from scratch by `seam gym` with the verifier "
             "after every pass, and interpreted against the original where the interpreter takes "
             "seconds. PPO: held-out families only (trained on the others). Regenerate with "
             "`python3 bench/gym_leaderboard.py run` then `render` (commands below).", ""]
    for protocol in PROTOCOLS:
        lines += [f"## Protocol: {protocol}", "",
                  "| module | I | D | random | greedy | beam | PPO | best vs D | cost model, best / D |",
                  "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
        per_agent = {a: [] for a in AGENTS + ["ppo"]}
        times = {a: [] for a in AGENTS + ["ppo"]}
        for module in modules:
            rows = {a: runs.get((module, protocol, a)) for a in AGENTS}
            if not all(rows.values()):
                continue
            first = rows["beam"]
            i, d = first["initial_ops"], first["default_ops"]
            cells = []
            best = min(r["best_ops"] for r in rows.values())
            for a in AGENTS:
                r = rows[a]
                m = metric(i, d, r["best_ops"])
                per_agent[a].append(m)
                times[a].append(r["walltime_s"])
                cells.append(f"{r['best_ops']}" + ("" if m is None else f" ({m:.2f})"))
            p = ppo.get((module, protocol))
            if p:
                m = metric(i, d, p["ops"])
                per_agent["ppo"].append(m)
                times["ppo"].append(p.get("walltime_s", 0))
                cells.append(f"{p['ops']}" + ("" if m is None else f" ({m:.2f})"))
                best = min(best, p["ops"])
            else:
                cells.append("–")
            beam = rows["beam"]
            name = module if len(module) <= 48 else module[:45] + "…"
            lines.append(f"| {name} | {i} | {d} | " + " | ".join(cells) +
                         f" | {100 * (best - d) / d:+.1f}% | {beam['best_cost_us']:.0f} / {beam['default_cost_us']:.0f} µs |")
        gm = {a: geomean(v) for a, v in per_agent.items()}
        lines.append("| **geomean of (I−R)/(I−D)** (modules counted) | | | " + " | ".join(
            "–" if gm[a] is None else f"**{gm[a][0]:.3f}** ({gm[a][1]}/{gm[a][2]})" for a in AGENTS + ["ppo"])
            + " | | |")
        lines.append("| median walltime per module (s) | | | " + " | ".join(
            f"{sorted(t)[len(t) // 2]:.2f}" if t else "–" for t in times.values()) + " | | |")
        lines.append("")
    lines += ["## Fewer ops or faster code? (cost model, host CPU, after stitch fusion)", "",
              "Beam search from the canonical forms minimising ops, and minimising the cost model's "
              "time instead, against the default pipeline.", "",
              "| module | D: ops, µs | min ops: ops, µs | min cost: ops, µs | min cost vs D |",
              "|---|---:|---:|---:|---:|"]
    ratios = []
    for module in modules:
        ops_run, cost_run = runs.get((module, "canonical", "beam")), runs.get((module, "cost", "beam"))
        if not ops_run or not cost_run:
            continue
        d_us = cost_run["default_cost_us"]
        ratio = cost_run["best_cost_us"] / d_us if d_us > 0 else 1.0
        ratios.append(ratio)
        name = module if len(module) <= 48 else module[:45] + "…"
        lines.append(f"| {name} | {cost_run['default_ops']}, {d_us:.0f} | {ops_run['best_ops']}, "
                     f"{ops_run['best_cost_us']:.0f} | {cost_run['best_ops']}, {cost_run['best_cost_us']:.0f} | "
                     f"{100 * (ratio - 1):+.1f}% |")
    if ratios:
        gm = math.exp(sum(math.log(max(r, 1e-12)) for r in ratios) / len(ratios))
        lines += [f"| **geomean time, min cost / D** | | | | **{gm:.3f}** |", ""]
    if args.evaluation:
        lines += policy_section(load_evaluation(args.evaluation), args.policy_runs, args.measured)
    cmds = sorted({r["command"] for r in runs.values() if r["module"] == modules[0]})
    lines += ["## Commands", "", "```sh", "cmake --build build",
              "python3 bench/gym_leaderboard.py run --budget " + str(args.budget),
              "python3 bench/gym_leaderboard.py render " + " ".join(f"--ppo {p}" for p in args.ppo)
              + (f" --evaluation {args.evaluation}" if args.evaluation else ""),
              "# per module, e.g.:"] + [f"build/seam {c}" for c in cmds] + ["```", ""]
    with open(os.path.join(args.dir, "leaderboard.md"), "w") as f:
        f.write("\n".join(lines))
    print("\n".join(lines))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="what", required=True)
    r = sub.add_parser("run")
    r.add_argument("--budget", type=float, default=10)
    r.add_argument("--modules", default="")
    r.add_argument("--protocols", default="", help="raw,canonical,cost (default: all)")
    r.add_argument("--out", default=os.path.join(ROOT, "bench", "gym", "runs.jsonl"))
    g = sub.add_parser("render")
    g.add_argument("--runs", default=os.path.join(ROOT, "bench", "gym", "runs.jsonl"))
    g.add_argument("--ppo", action="append", default=[])
    g.add_argument("--dir", default=os.path.join(ROOT, "bench", "gym"))
    g.add_argument("--budget", type=float, default=10)
    g.add_argument("--date", default=datetime.date.today().isoformat())
    g.add_argument("--evaluation", default="", help="train_rllib.py's evaluation.json: the policy section")
    g.add_argument("--policy-runs", default=POLICY_RUNS)
    g.add_argument("--measured", default=POLICY_MEASURED)
    pr = sub.add_parser("policy")
    pr.add_argument("--evaluation", required=True)
    pr.add_argument("--budget", type=float, default=10)
    pr.add_argument("--sample", type=int, default=0,
                    help="compare on the real models and this many generated modules (0: all)")
    pr.add_argument("--no-interpret", dest="interpret", action="store_false")
    pr.add_argument("--out", default=POLICY_RUNS)
    m = sub.add_parser("measure")
    m.add_argument("--evaluation", required=True)
    m.add_argument("--top", type=int, default=5)
    m.add_argument("--repeat", type=int, default=9)
    m.add_argument("--rounds", type=int, default=3)
    m.add_argument("--out", default=POLICY_MEASURED)
    args = parser.parse_args()
    {"run": run, "render": render, "policy": policy, "measure": measure}[args.what](args)


if __name__ == "__main__":
    main()
