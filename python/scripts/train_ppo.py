#!/usr/bin/env python3
"""Train a PPO pass-ordering agent on some corpus model families and
evaluate it on held-out ones, in one process (stable-baselines3). The
default trainer is python/scripts/train_rllib.py (Ray RLlib: env runners in
processes of their own, on one machine or a cluster); this one stays as
the small path with no Ray, over the real models' corpus only.

MaskablePPO (sb3-contrib) with the paper's settings as defaults: 256 steps
per rollout and per minibatch, lr 3e-4, gamma 0.99, GAE lambda 0.95, clip
0.2, separate policy and value MLPs of [2048, 2048], 200k timesteps. The
corpus is split by model family (seam.gym.corpus): transformers (GPT-2,
GPT-NeoX, BERT) and the conv nets (ResNet, MobileNet, EfficientNet) are
held out; every other family trains. After training, the deterministic policy runs one
episode per module; the pass order it reaches is re-validated from scratch
(verifier after every pass, interpreter against the original).

    python python/scripts/train_ppo.py --timesteps 200000 --seed 0 --out results.json
"""

from __future__ import annotations

import argparse
import datetime
import json
import multiprocessing
import os
import platform
import shlex
import sys
import time

import numpy as np

from seam import gym as seam_gym
from seam.gym import corpus

family_of = corpus.family_of
TEST_FAMILIES = corpus.TEST_FAMILIES


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--timesteps", type=int, default=200_000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default="results.json", help="where the results JSON goes")
    p.add_argument("--n-steps", type=int, default=256, help="rollout length per env")
    p.add_argument("--batch-size", type=int, default=256)
    p.add_argument("--n-epochs", type=int, default=10)
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--gamma", type=float, default=0.99)
    p.add_argument("--gae-lambda", type=float, default=0.95)
    p.add_argument("--clip", type=float, default=0.2)
    p.add_argument("--ent-coef", type=float, default=0.0)
    p.add_argument("--net-arch", default="2048,2048", help="hidden layers of both MLPs")
    p.add_argument("--n-envs", type=int, default=1)
    p.add_argument("--max-steps", type=int, default=50, help="actions per episode")
    p.add_argument("--observation", default="histogram", choices=seam_gym.env.OBSERVATIONS)
    p.add_argument("--reward-space", default="ops_vs_default")
    p.add_argument("--test-families", default=",".join(TEST_FAMILIES))
    p.add_argument("--train", nargs="*", help="train benchmark URIs (overrides the split)")
    p.add_argument("--test", nargs="*", help="test benchmark URIs (overrides the split)")
    p.add_argument("--max-train-ops", type=int, default=0,
                   help="drop training modules with more initial ops than this (0: keep all)")
    p.add_argument("--random-train", type=int, default=0,
                   help="also train on generator/random/<seed> for this many seeds")
    p.add_argument("--canonical-start", action="store_true",
                   help="episodes start from the planner's canonical forms (batch norms expanded)")
    p.add_argument("--no-interpret", action="store_true",
                   help="validate with the verifier only, without the interpreter")
    p.add_argument("--interpret-timeout", type=float, default=100.0,
                   help="seconds the interpreter may take per validation, else verifier only (0: no limit)")
    p.add_argument("--search-budget", type=float, default=5.0,
                   help="seconds of greedy search per held-out module as a reference (0: none)")
    p.add_argument("--torch-threads", type=int, default=0, help="0: torch's default")
    p.add_argument("--save-model", help="save the trained model here (.zip)")
    return p.parse_args(argv)


def make_raw_env(benchmarks, args):
    return seam_gym.PassOrderingEnv(benchmarks, observation=args.observation,
                                    reward_space=args.reward_space, max_steps=args.max_steps,
                                    canonical_start=args.canonical_start)


def make_env(benchmarks, args, seed):
    from stable_baselines3.common.monitor import Monitor

    def thunk():
        env = Monitor(seam_gym.LogObservation(make_raw_env(benchmarks, args)))
        env.reset(seed=seed)
        return env

    return thunk


def initial_ops(uri, args):
    s = seam_gym.Session(canonical_start=args.canonical_start)
    s.reset(uri)
    return s.initial_ops


def _validate_interpreted(uri, spec):
    return seam_gym.validate_pass_order(uri, spec, interpret=True)


def validate(uri, spec, args):
    """validate_pass_order with the interpreter's share bounded: the reference
    interpreter can take hours on the conv nets' convolutions and cannot be
    interrupted from Python, so it runs in a child process killed at the
    timeout, after which the order is checked by the verifier alone."""
    interpret = not args.no_interpret
    if interpret and args.interpret_timeout > 0:
        with multiprocessing.get_context("spawn").Pool(1) as pool:
            job = pool.apply_async(_validate_interpreted, (uri, spec))
            try:
                return job.get(args.interpret_timeout) | {"interpret_timed_out": False}
            except multiprocessing.TimeoutError:
                pass  # leaving the block terminates the child
        return seam_gym.validate_pass_order(uri, spec, interpret=False) | {"interpret_timed_out": True}
    return seam_gym.validate_pass_order(uri, spec, interpret=interpret)


def evaluate(model, uri, args, search_budget):
    """One deterministic episode on `uri`, its order validated from scratch."""
    from sb3_contrib.common.maskable.utils import get_action_masks

    env = seam_gym.LogObservation(make_raw_env([uri], args))
    begin = time.perf_counter()
    obs, info = env.reset(seed=args.seed)
    episode_return, actions = 0.0, []
    done = False
    while not done:
        action, _ = model.predict(obs, deterministic=True, action_masks=get_action_masks(env))
        obs, reward, terminated, truncated, info = env.step(int(action))
        episode_return += reward
        actions.append(seam_gym.action_name(int(action)))
        done = terminated or truncated
    walltime = time.perf_counter() - begin
    I, D, R = info["initial_ops"], info["default_ops"], info["ops"]
    row = {
        "benchmark": uri,
        "family": family_of(uri),
        "initial_ops": I,
        "default_ops": D,
        "ops": R,
        "ops_vs_default_pct": 100.0 * (R - D) / D if D else 0.0,
        "metric": (I - R) / (I - D) if I != D else None,  # (I-R)/(I-D): 1 = as good as default
        "return": episode_return,
        "pass_spec": info["pass_spec"],
        "actions": actions,
        "steps": info["steps"],
        "walltime_s": walltime,
    }
    begin = time.perf_counter()
    try:
        v = validate(uri, info["pass_spec"], args)
        row["validation"] = {"ok": v["ops"] == R and not v["differences"], **v}
    except (ValueError, RuntimeError) as e:
        row["validation"] = {"ok": False, "error": str(e)}
    row["validation"]["walltime_s"] = time.perf_counter() - begin
    if search_budget > 0:
        s = seam_gym.Session(max_steps=args.max_steps, canonical_start=args.canonical_start)
        s.reset(uri)
        g = seam_gym.greedy_search(s, max_steps=args.max_steps, budget_seconds=search_budget)
        row["greedy"] = {"ops": g["best_ops"], "pass_spec": g["best_spec"], "walltime_s": g["walltime_s"]}
    return row


def summarize(rows):
    metrics = [r["metric"] for r in rows if r["metric"] is not None]
    return {
        "modules": len(rows),
        "ops": int(sum(r["ops"] for r in rows)),
        "default_ops": int(sum(r["default_ops"] for r in rows)),
        "initial_ops": int(sum(r["initial_ops"] for r in rows)),
        "beats_default": sum(r["ops"] < r["default_ops"] for r in rows),
        "ties_default": sum(r["ops"] == r["default_ops"] for r in rows),
        "mean_metric": float(np.mean(metrics)) if metrics else None,
        "all_validated": all(r["validation"]["ok"] for r in rows),
    }


def print_table(title, rows):
    print(f"\n{title}")
    print(f"{'benchmark':60} {'initial':>7} {'default':>7} {'agent':>7} {'vs def':>7} {'greedy':>7}  validated")
    for r in rows:
        v = r["validation"]
        check = ("interpreter" if v.get("interpreted") else "verifier") if v["ok"] else "FAILED"
        greedy = str(r["greedy"]["ops"]) if "greedy" in r else "-"
        print(f"{r['benchmark'][:60]:60} {r['initial_ops']:7d} {r['default_ops']:7d} {r['ops']:7d} "
              f"{r['ops_vs_default_pct']:+6.1f}% {greedy:>7}  {check}")


def main(argv=None):
    args = parse_args(argv)
    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env import DummyVecEnv

    if args.torch_threads:
        torch.set_num_threads(args.torch_threads)
    test_families = tuple(f for f in args.test_families.split(",") if f)
    train, test = corpus.split(seam_gym.corpus_benchmarks(), test_families)
    if args.train is not None:
        train = args.train
    if args.test is not None:
        test = args.test
    dropped = []
    if args.max_train_ops:
        dropped = [b for b in train if initial_ops(b, args) > args.max_train_ops]
        train = [b for b in train if b not in dropped]
    train += [f"generator/random/{seed}" for seed in range(args.random_train)]
    if not train:
        sys.exit("no training benchmarks")
    print(f"train ({len(train)}): {train}\ntest ({len(test)}): {test}\ndropped: {dropped}", flush=True)

    net_arch = [int(n) for n in args.net_arch.split(",") if n]
    venv = DummyVecEnv([make_env(train, args, args.seed + i) for i in range(args.n_envs)])
    policy = "MultiInputPolicy" if args.observation == "dict" else "MlpPolicy"
    model = MaskablePPO(
        policy, venv, n_steps=args.n_steps, batch_size=args.batch_size, n_epochs=args.n_epochs,
        learning_rate=args.lr, gamma=args.gamma, gae_lambda=args.gae_lambda, clip_range=args.clip,
        ent_coef=args.ent_coef, policy_kwargs={"net_arch": net_arch}, seed=args.seed, verbose=1,
        device="cpu")
    begin = time.perf_counter()
    model.learn(total_timesteps=args.timesteps)
    train_s = time.perf_counter() - begin
    if args.save_model:
        model.save(args.save_model)

    begin = time.perf_counter()
    test_rows = [evaluate(model, uri, args, args.search_budget) for uri in test]
    train_rows = [evaluate(model, uri, args, 0) for uri in train if not uri.startswith("generator/")]
    eval_s = time.perf_counter() - begin
    print_table("held-out modules", test_rows)
    print_table("training modules", train_rows)

    results = {
        "command": " ".join(shlex.quote(a) for a in [os.path.relpath(sys.argv[0])] + sys.argv[1:]),
        "date": datetime.datetime.now().isoformat(timespec="seconds"),
        "python": sys.executable,
        "host": {"machine": platform.machine(), "cpus": os.cpu_count(),
                 "torch_threads": torch.get_num_threads(), "python": platform.python_version()},
        "config": vars(args) | {"net_arch": net_arch, "algorithm": "MaskablePPO", "policy": policy},
        "split": {"test_families": list(test_families), "train": train, "test": test,
                  "dropped_train": dropped,
                  "families": {b: family_of(b) for b in seam_gym.corpus_benchmarks()}},
        "training": {"timesteps": int(model.num_timesteps), "walltime_s": train_s,
                     "steps_per_s": model.num_timesteps / train_s},
        "evaluation_walltime_s": eval_s,
        "test_summary": summarize(test_rows),
        "train_summary": summarize(train_rows) if train_rows else None,
        "test": test_rows,
        "train_eval": train_rows,
    }
    with open(args.out, "w") as f:
        json.dump(results, f, indent=2)
    print(f"\nheld out: {json.dumps(results['test_summary'])}\nwrote {args.out}")


if __name__ == "__main__":
    main()
