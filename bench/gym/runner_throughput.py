#!/usr/bin/env python3
"""Env steps per second with N env runner processes (Ray actors, as RLlib's
runners are), each stepping its own MaskedPassOrderingEnv with random valid
actions over the training benchmarks, against one runner: how sampling
scales with the processes a machine or cluster gives it.

  PYTHONPATH=build/python python bench/gym/runner_throughput.py --runners 1,2 [--seconds 20]

Needs ray (pip install .[train]).
"""

import argparse
import json
import sys
import time

import numpy as np
import ray

from seam import gym as seam_gym
from seam.gym import corpus


@ray.remote(num_cpus=1)
class Runner:
    def __init__(self, config, seed):
        self.env = seam_gym.MaskedPassOrderingEnv(config)
        self.rng = np.random.default_rng(seed)
        self.observation, _ = self.env.reset(seed=seed)

    def run(self, seconds):
        steps, end = 0, time.perf_counter() + seconds
        while time.perf_counter() < end:
            valid = np.flatnonzero(self.observation["action_mask"])
            self.observation, _, terminated, truncated, _ = self.env.step(int(self.rng.choice(valid)))
            if terminated or truncated:
                self.observation, _ = self.env.reset()
            steps += 1
        return steps


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--runners", default="1,2")
    p.add_argument("--seconds", type=float, default=20)
    p.add_argument("--rounds", type=int, default=3, help="alternated rounds; the median is reported")
    p.add_argument("--max-ops", type=int, default=3000)
    args = p.parse_args(argv)
    counts = [int(n) for n in args.runners.split(",")]
    train, _ = corpus.split(corpus.all_benchmarks(random_graphs=32))
    config = {"benchmarks": corpus.within_ops(train, args.max_ops), "max_steps": 30}
    ray.init(address="local", num_cpus=max(counts), include_dashboard=False)
    rates = {n: [] for n in counts}
    # One pool of the largest count (one CPU each, so a pool per count would not
    # fit); a round of n runners steps the first n. Warm every runner's
    # baselines (its first resets plan the modules) before timing.
    pool = [Runner.remote(config, seed) for seed in range(max(counts))]
    ray.get([r.run.remote(args.seconds) for r in pool])
    for _ in range(args.rounds):
        for n in counts:
            steps = ray.get([r.run.remote(args.seconds) for r in pool[:n]])
            rates[n].append(sum(steps) / args.seconds)
    per_runner = float(np.median(rates[counts[0]])) / counts[0]
    out = {}
    for n in counts:
        rate = float(np.median(rates[n]))
        # Efficiency: the rate over n times the first count's rate per runner (1 = linear).
        out[n] = {"steps_per_s": rate, "rounds": rates[n], "efficiency": rate / (n * per_runner)}
        print(f"{n} runner(s): {rate:.0f} env steps/s (rounds {', '.join(f'{r:.0f}' for r in rates[n])}), "
              f"{rate / (n * per_runner):.2f} of linear scaling")
    print(json.dumps(out))
    ray.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
