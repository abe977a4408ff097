#!/usr/bin/env python3
"""Train a pass-ordering policy with Ray RLlib's PPO (new API stack) and
evaluate it on the held-out model families.

Each env runner is a process of its own owning its C++ gym sessions (built
inside seam.gym.MaskedPassOrderingEnv from the picklable env config); the
learner runs in the driver. The policy masks the actions known to leave
the module unchanged (seam.gym.rllib_module). The reward is
cost_vs_default by default: an episode's return is the share of the
default pipeline's cost-model saving it reaches, 1 = as fast as default.

On one machine (a local Ray instance of --num-env-runners + 1 CPUs):
    python python/scripts/train_rllib.py --iterations 50 --num-env-runners 2 --out-dir runs/ppo

On a Ray cluster: start it, then point the script (or `ray job submit`)
at it; every node needs Seam installed (pip install .[train]):
    ray start --head --port=6379                      # on the head node
    ray start --address=HEAD_IP:6379                  # on each other node
    python python/scripts/train_rllib.py --address auto --num-env-runners 16 ...
    ray job submit --address http://HEAD_IP:8265 --working-dir . -- \\
        python python/scripts/train_rllib.py --address auto --num-env-runners 16 ...

Writes to --out-dir: progress.jsonl (one line per iteration), events for
TensorBoard (tensorboardX, when installed), checkpoint/ (the algorithm,
RLlib's format, after each --checkpoint-every iterations and at the end),
split.json (the train and test benchmarks) and evaluation.json (the
deterministic policy's episode on every test benchmark: its cost-model
time against the default pipeline's, its pass order, its wall time).
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import platform
import sys
import time

import numpy as np

from seam import gym as seam_gym
from seam.gym import corpus


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--iterations", type=int, default=50, help="training iterations (algo.train() calls)")
    p.add_argument("--minutes", type=float, default=None,
                   help="stop training after the iteration that ends past this many minutes")
    p.add_argument("--num-env-runners", type=int, default=2, help="env runner processes")
    p.add_argument("--address", default=None, help="a Ray cluster ('auto' or HOST:PORT); default: a local instance")
    p.add_argument("--encoder", default="both", choices=seam_gym.masked_env.ENCODERS)
    p.add_argument("--reward-space", default="cost_vs_default")
    p.add_argument("--max-steps", type=int, default=30, help="actions per episode")
    p.add_argument("--max-ops", type=int, default=3000,
                   help="train on modules of at most this many instructions (a step plans the module)")
    p.add_argument("--random-graphs", type=int, default=32, help="random-generator seeds added to training")
    p.add_argument("--test-families", default=",".join(corpus.TEST_FAMILIES))
    p.add_argument("--train-batch", type=int, default=1024, help="env steps per iteration")
    p.add_argument("--minibatch", type=int, default=256)
    p.add_argument("--fragment", type=int, default=64, help="env steps a runner samples per call")
    p.add_argument("--sample-timeout", type=float, default=600,
                   help="seconds an iteration waits for its samples")
    p.add_argument("--epochs", type=int, default=6)
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--gamma", type=float, default=0.99)
    p.add_argument("--gae-lambda", type=float, default=0.95)
    p.add_argument("--clip", type=float, default=0.2)
    p.add_argument("--entropy", type=float, default=0.01)
    p.add_argument("--hidden", default="256,256", help="hidden layers of the policy and value networks")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--checkpoint-every", type=int, default=10)
    p.add_argument("--restore", default=None, help="a checkpoint directory to continue from")
    p.add_argument("--no-interpret", dest="interpret", action="store_false",
                   help="replay the evaluated orders under the verifier only, not the interpreter too")
    p.add_argument("--eval-only", action="store_true", help="with --restore: evaluate, do not train")
    p.add_argument("--out-dir", default="runs/rllib")
    return p.parse_args(argv)


def benchmarks(args):
    """(train, test) URIs: the split by family, training capped by size."""
    everything = corpus.all_benchmarks(random_graphs=args.random_graphs)
    train, test = corpus.split(everything, tuple(args.test_families.split(",")))
    return corpus.within_ops(train, args.max_ops), test


def env_config(args, uris):
    return {
        "benchmarks": uris,
        "encoder": args.encoder,
        "reward_space": args.reward_space,
        "max_steps": args.max_steps,
        "canonical_start": True,
        "seed": args.seed,
    }


def build_algorithm(args, train):
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    from seam.gym.rllib_module import MaskedPPOModule

    hidden = [int(h) for h in args.hidden.split(",") if h]
    config = (
        PPOConfig()
        .environment(env=seam_gym.MaskedPassOrderingEnv, env_config=env_config(args, train))
        # Short fragments and a long timeout: a runner's first episodes plan
        # every module's baselines (seconds each on a loaded machine), and a
        # sample that misses the timeout is dropped whole.
        .env_runners(num_env_runners=args.num_env_runners, num_envs_per_env_runner=1,
                     num_cpus_per_env_runner=1, rollout_fragment_length=args.fragment,
                     sample_timeout_s=args.sample_timeout)
        # An env whose step raises (a module file gone from under a long run)
        # is made again and logged, not the runner lost for the rest of it.
        .fault_tolerance(restart_failed_sub_environments=True, restart_failed_env_runners=True)
        .learners(num_learners=0)
        .rl_module(rl_module_spec=RLModuleSpec(
            module_class=MaskedPPOModule,
            model_config={"fcnet_hiddens": hidden, "fcnet_activation": "tanh", "head_fcnet_hiddens": [],
                          "vf_share_layers": False}))
        .training(lr=args.lr, gamma=args.gamma, lambda_=args.gae_lambda, clip_param=args.clip,
                  entropy_coeff=args.entropy, train_batch_size_per_learner=args.train_batch,
                  minibatch_size=args.minibatch, num_epochs=args.epochs)
        .debugging(seed=args.seed)
    )
    return config.build_algo()


def metric_value(value, default=float("nan")):
    """A result metric as a float; RLlib reports NaN or nothing for a
    metric no episode of the iteration completed."""
    return default if value is None or value != value else float(value)


def progress_line(result, elapsed):
    runners = result.get("env_runners", {})
    steps = runners.get("num_env_steps_sampled_lifetime", result.get("num_env_steps_sampled_lifetime"))
    return {
        "iteration": result.get("training_iteration"),
        "env_steps": int(metric_value(steps, 0)),
        "episode_return_mean": metric_value(runners.get("episode_return_mean")),
        "episode_len_mean": metric_value(runners.get("episode_len_mean")),
        "episodes": int(metric_value(runners.get("num_episodes"), 0)),
        "elapsed_s": round(elapsed, 2),
    }


def greedy_action(module, observation):
    import torch

    batch = {"obs": {k: torch.as_tensor(v[None]) for k, v in observation.items()}}
    with torch.no_grad():
        logits = module.forward_inference(batch)["action_dist_inputs"][0].numpy()
    return int(np.argmax(logits))


def evaluate(module, args, uris):
    """One deterministic episode per benchmark: cost-model time of the
    reached state against the default pipeline's, with wall time."""
    env = seam_gym.MaskedPassOrderingEnv(env_config(args, uris))
    rows = []
    for uri in uris:
        start = time.perf_counter()
        observation, _ = env.reset(options={"benchmark": uri})
        # The rollout's time, as a search's walltime counts from the loaded
        # module; the reset also plans the reward's baselines.
        reset_s, start = time.perf_counter() - start, time.perf_counter()
        done = False
        while not done:
            observation, _, terminated, truncated, _ = env.step(greedy_action(module, observation))
            done = terminated or truncated
        info = env.info()
        info["walltime_s"] = time.perf_counter() - start
        info["reset_s"] = reset_s
        info["family"] = corpus.family_of(uri)
        info["default_over_policy"] = info["default_cost_us"] / max(info["cost_us"], 1e-9)
        # The order replayed from scratch: a fresh load, the verifier after
        # every pass, the interpreter against the original.
        replay = seam_gym.validate_pass_order(
            uri, info["pass_spec"], args.interpret and not corpus.slow_to_interpret(uri))
        info["validated"] = {"ops": replay["ops"], "cost_us": replay["cost_us"],
                             "interpreted": replay["interpreted"], "differences": replay["differences"]}
        if replay["differences"] or replay["ops"] != info["ops"]:
            raise RuntimeError(f"the policy's order on {uri} differs from scratch: {replay}")
        rows.append(info)
        print(f"  {uri.rsplit('/', 1)[-1]}: {info['cost_us']:.1f} us against default {info['default_cost_us']:.1f} "
              f"({info['default_over_policy']:.3f}x), {info['walltime_s']:.2f} s, replayed "
              f"{'and interpreted' if replay['interpreted'] else '(verifier only)'}", flush=True)
    geomean = math.exp(sum(math.log(r["default_over_policy"]) for r in rows) / max(1, len(rows)))
    return {"geomean_default_over_policy": geomean, "modules": rows}


def main(argv=None):
    args = parse_args(argv)
    import ray

    os.makedirs(args.out_dir, exist_ok=True)
    train, test = benchmarks(args)
    with open(os.path.join(args.out_dir, "split.json"), "w") as f:
        json.dump({"train": train, "test": test, "test_families": args.test_families.split(",")}, f, indent=1)
    print(f"train on {len(train)} benchmarks, test on {len(test)} (families {args.test_families})", flush=True)

    if args.address:
        ray.init(address=args.address)
    else:
        # A new local instance whatever this machine runs: ray.init() alone
        # would join a cluster started here before.
        ray.init(address="local", num_cpus=args.num_env_runners + 1, include_dashboard=False)
    if args.restore:
        from ray.rllib.algorithms.algorithm import Algorithm

        algo = Algorithm.from_checkpoint(os.path.abspath(args.restore))
    else:
        algo = build_algorithm(args, train)

    writer = None
    try:
        from tensorboardX import SummaryWriter

        writer = SummaryWriter(os.path.join(args.out_dir, "tensorboard"))
    except ImportError:
        pass
    checkpoint = os.path.abspath(os.path.join(args.out_dir, "checkpoint"))
    start, last = time.perf_counter(), None
    with open(os.path.join(args.out_dir, "progress.jsonl"), "a") as progress:
        for _ in range(0 if args.eval_only else args.iterations):
            if args.minutes is not None and time.perf_counter() - start > 60 * args.minutes:
                break
            line = last = progress_line(algo.train(), time.perf_counter() - start)
            progress.write(json.dumps(line) + "\n")
            progress.flush()
            print(f"iter {line['iteration']}: {line['env_steps']} env steps, return {line['episode_return_mean']:.3f}, "
                  f"episode {line['episode_len_mean']:.1f} steps, {line['elapsed_s']:.0f} s", flush=True)
            if writer is not None:
                for key in ("episode_return_mean", "episode_len_mean", "env_steps"):
                    if line[key] == line[key]:  # no NaN of an iteration without episodes
                        writer.add_scalar(key, line[key], line["iteration"])
            if line["iteration"] % args.checkpoint_every == 0:
                algo.save_to_path(checkpoint)
    if not args.eval_only:
        algo.save_to_path(checkpoint)
    train_s = time.perf_counter() - start
    # Lifetime counts: a restored run goes on counting from its checkpoint.
    trained = {"iterations": last["iteration"], "env_steps": last["env_steps"]} if last else {}

    print(f"evaluating on {len(test)} test benchmarks", flush=True)
    result = evaluate(algo.get_module(), args, test)
    result.update(
        date=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        command=" ".join([os.path.basename(sys.argv[0])] + (argv if argv is not None else sys.argv[1:])),
        train_seconds=train_s, trained=trained, host=platform.node(), args=vars(args))
    with open(os.path.join(args.out_dir, "evaluation.json"), "w") as f:
        json.dump(result, f, indent=1)
    print(f"geomean of default / policy cost on the test families: {result['geomean_default_over_policy']:.4f}")
    algo.stop()
    ray.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
