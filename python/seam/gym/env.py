"""PassOrderingEnv: the pass-ordering gym as a Gymnasium environment.

An episode starts on a benchmark module; every action runs one graph pass
(or STOP, the last action, which ends the episode); the reward is a session
reward space (ops_vs_default by default: an episode's return is
(initial - reached) / (initial - default-pipeline), 1 = as good as the
default pipeline). Episodes are truncated after max_steps actions.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from .._core import gym as _core

OBSERVATIONS = ("histogram", "features", "dict")


class PassOrderingEnv(gym.Env):
    """Pass ordering over Seam's graph passes.

    Args:
        benchmarks: the URIs reset() picks from (corpus/<file>[#k],
            file:///path[#k], generator/random/<seed>); every corpus module
            by default.
        observation: "histogram" (instructions per opcode, int64),
            "features" (the graph summary, feature_names(), float64) or
            "dict" (both, keys "histogram" and "features").
        reward_space: a name of reward_spaces().
        max_steps: actions after which an episode is truncated.
        verify_each: run the HLO verifier after every changing step.
        device: the cost model's device ("cpu", "h100", "a100") for the
            features' dram_bytes_after_stitch and the cost_time reward.
        canonical_start: start episodes from the fusion planner's canonical
            forms (batch norms expanded...), where op counts compare with
            the default pipeline like for like.
        render_mode: None or "ansi" (a one-line summary of the state).
    """

    # render_fps only quiets the checker: "ansi" frames are text, never timed.
    metadata = {"render_modes": ["ansi"], "render_fps": 1}

    def __init__(
        self,
        benchmarks: Optional[Sequence[str]] = None,
        observation: str = "histogram",
        reward_space: str = "ops_vs_default",
        max_steps: int = 50,
        verify_each: bool = False,
        device: str = "cpu",
        canonical_start: bool = False,
        render_mode: Optional[str] = None,
    ):
        if observation not in OBSERVATIONS:
            raise ValueError(f"observation must be one of {OBSERVATIONS}, not {observation!r}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be None or one of {self.metadata['render_modes']}")
        self.benchmarks = list(benchmarks) if benchmarks is not None else _core.corpus_benchmarks()
        if not self.benchmarks:
            raise ValueError("no benchmarks to pick from (is the corpus directory empty?)")
        self.observation = observation
        self.render_mode = render_mode
        self.session = _core.Session(
            max_steps=max_steps,
            reward_space=reward_space,
            verify_each=verify_each,
            device=device,
            canonical_start=canonical_start,
        )
        self.action_names = _core.action_names()
        self.stop_action = _core.stop_action()
        self.action_space = spaces.Discrete(_core.action_count())

        # Counts and sizes have no natural upper bound: the dtype's is finite,
        # which keeps the space honest without infinities.
        histogram = spaces.Box(
            low=0, high=np.iinfo(np.int64).max, shape=(len(_core.opcode_names()),), dtype=np.int64
        )
        features = spaces.Box(
            low=0.0, high=np.finfo(np.float64).max, shape=(len(_core.feature_names()),), dtype=np.float64
        )
        if observation == "histogram":
            self.observation_space = histogram
        elif observation == "features":
            self.observation_space = features
        else:
            self.observation_space = spaces.Dict({"histogram": histogram, "features": features})

    # -- Gymnasium API ------------------------------------------------------

    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None):
        super().reset(seed=seed)
        benchmark = (options or {}).get("benchmark")
        if benchmark is None:
            benchmark = self.benchmarks[int(self.np_random.integers(len(self.benchmarks)))]
        self.session.reset(benchmark)
        return self._observe(), self._info(changed=False)

    def step(self, action):
        changed, terminated, truncated = self.session.step(int(action))
        reward = float(self.session.reward())
        return self._observe(), reward, terminated, truncated, self._info(changed)

    def render(self):
        if self.render_mode != "ansi":
            return None
        s = self.session
        if not s.has_episode:
            return "(no episode)"
        return (
            f"{s.benchmark}: {s.ops} ops (initial {s.initial_ops}, default {s.default_ops}) "
            f"after {s.steps} steps: {s.pass_spec or '(no change)'}"
        )

    # -- Extras -------------------------------------------------------------

    def action_masks(self) -> np.ndarray:
        """Valid actions (sb3-contrib's MaskablePPO calls this): passes known
        to leave the current module unchanged are masked; STOP never is."""
        return self.session.action_mask()

    def _observe(self):
        if self.observation == "histogram":
            return self.session.observe("opcode_histogram")
        if self.observation == "features":
            return self.session.observe("features")
        return {
            "histogram": self.session.observe("opcode_histogram"),
            "features": self.session.observe("features"),
        }

    def _info(self, changed: bool) -> dict[str, Any]:
        s = self.session
        return {
            "benchmark": s.benchmark,
            "ops": s.ops,
            "initial_ops": s.initial_ops,
            "default_ops": s.default_ops,
            "steps": s.steps,
            "changed": changed,
            "pass_spec": s.pass_spec,
            "action_mask": s.action_mask(),
        }


def _log_box(space: spaces.Box) -> spaces.Box:
    return spaces.Box(
        low=np.log1p(space.low.astype(np.float64)).astype(np.float32),
        high=np.log1p(space.high.astype(np.float64)).astype(np.float32),
        dtype=np.float32,
    )


class LogObservation(gym.ObservationWrapper):
    """log1p of every observation entry, as float32.

    Op counts, bytes and flops span many orders of magnitude across modules;
    an MLP learns far better from their logarithms than from raw values.
    """

    def __init__(self, env: gym.Env):
        super().__init__(env)
        space = env.observation_space
        if isinstance(space, spaces.Dict):
            self.observation_space = spaces.Dict({k: _log_box(v) for k, v in space.spaces.items()})
        else:
            self.observation_space = _log_box(space)

    def observation(self, observation):
        if isinstance(observation, dict):
            return {k: np.log1p(v.astype(np.float64)).astype(np.float32) for k, v in observation.items()}
        return np.log1p(observation.astype(np.float64)).astype(np.float32)

    def action_masks(self) -> np.ndarray:
        return self.env.unwrapped.action_masks()
