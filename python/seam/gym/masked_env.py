"""MaskedPassOrderingEnv: the pass-ordering env as RL libraries with action
masking take it, built from one picklable config dict.

The observation is a dict: "observations", the state's encoding (float32),
and "action_mask" (1.0 where an action may change the module). Ray RLlib
builds one env per env runner process from `env_config`, so every runner
owns its C++ sessions; nothing unpicklable crosses processes.

The encoding ("encoder" in the config):
  histogram   log1p of instructions per opcode;
  features    log1p of the graph summary (sizes, flops, bytes after stitch
              fusion, the last pass's edits, the step);
  both        the two concatenated (the default: the histogram says what
              ops a pass could rewrite, the features how much is at stake).
"""

from __future__ import annotations

from typing import Any, Optional

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from .env import PassOrderingEnv

ENCODERS = ("histogram", "features", "both")

DEFAULT_CONFIG = {
    "benchmarks": None,  # URIs; every corpus module when None
    "encoder": "both",
    "reward_space": "cost_vs_default",
    "max_steps": 30,
    "canonical_start": True,
    "device": "cpu",
    "seed": 0,
}


class MaskedPassOrderingEnv(gym.Env):
    """PassOrderingEnv with a dict observation of an encoding and the action
    mask; `config` holds DEFAULT_CONFIG's keys (missing ones default)."""

    metadata = {"render_modes": []}

    def __init__(self, config: Optional[dict] = None):
        # RLlib's EnvContext carries the runner's index: runners draw different modules.
        runner = int(getattr(config, "worker_index", 0) or 0)
        config = {**DEFAULT_CONFIG, **dict(config or {})}
        unknown = set(config) - set(DEFAULT_CONFIG)
        if unknown:
            raise ValueError(f"unknown env config keys: {sorted(unknown)}")
        if config["encoder"] not in ENCODERS:
            raise ValueError(f"encoder must be one of {ENCODERS}, not {config['encoder']!r}")
        self.encoder = config["encoder"]
        self.env = PassOrderingEnv(
            benchmarks=config["benchmarks"],
            observation="dict",
            reward_space=config["reward_space"],
            max_steps=config["max_steps"],
            device=config["device"],
            canonical_start=config["canonical_start"],
        )
        self._seed = int(config["seed"]) + 1000 * runner
        self._seeded = False
        width = {
            "histogram": self.env.observation_space["histogram"].shape[0],
            "features": self.env.observation_space["features"].shape[0],
        }
        size = sum(width.values()) if self.encoder == "both" else width[self.encoder]
        self.action_space = self.env.action_space
        self.observation_space = spaces.Dict(
            {
                "action_mask": spaces.Box(0.0, 1.0, shape=(self.action_space.n,), dtype=np.float32),
                # log1p of a float64 is below 710: finite bounds, as for the counts.
                "observations": spaces.Box(0.0, 710.0, shape=(size,), dtype=np.float32),
            }
        )

    @property
    def session(self):
        return self.env.session

    def _encode(self, observation: dict) -> dict:
        parts = {k: np.log1p(np.maximum(v, 0).astype(np.float64)).astype(np.float32) for k, v in observation.items()}
        if self.encoder == "both":
            encoded = np.concatenate([parts["histogram"], parts["features"]])
        else:
            encoded = parts[self.encoder]
        mask = np.asarray(self.env.action_masks(), dtype=np.float32)
        return {"action_mask": mask, "observations": encoded}

    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None):
        if seed is None and not self._seeded:
            seed = self._seed
        self._seeded = True
        super().reset(seed=seed)
        observation, info = self.env.reset(seed=seed, options=options)
        return self._encode(observation), info

    def step(self, action):
        observation, reward, terminated, truncated, info = self.env.step(action)
        return self._encode(observation), reward, terminated, truncated, info

    def info(self) -> dict[str, Any]:
        s = self.session
        return {"benchmark": s.benchmark, "cost_us": s.cost_us, "default_cost_us": s.default_cost_us,
                "initial_cost_us": s.initial_cost_us, "ops": s.ops, "pass_spec": s.pass_spec}
