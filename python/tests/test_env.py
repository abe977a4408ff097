"""PassOrderingEnv: the Gymnasium API, episode semantics and masks."""

import unittest
import warnings

import gymnasium as gym
import numpy as np
from gymnasium.utils.env_checker import check_env

from seam import gym as g
from seam.gym import PassOrderingEnv

SMALL = [
    "corpus/xla_layer_norm_1x4096x768_bf16.hlo",
    "corpus/xla_mha_block_1x12x128x64_bf16.hlo",
    "corpus/hloenv_toy_nn_module_0093.jit_loss.44.before_optimizations.txt",
    "corpus/gh_ptxla_linear_module_adam.hlo",
    "generator/random/5",
]


class CheckEnvTest(unittest.TestCase):
    def check_without_warnings(self, env):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            check_env(env)
        self.assertEqual([str(w.message) for w in caught], [])

    def test_check_env_every_observation(self):
        for observation in ("histogram", "features", "dict"):
            with self.subTest(observation=observation):
                # Through the registry, so the checker can also make the env
                # in its other render modes.
                env = gym.make(g.ENV_ID, benchmarks=SMALL, observation=observation, max_steps=10)
                self.check_without_warnings(env.unwrapped)

    def test_log_observation(self):
        env = g.LogObservation(PassOrderingEnv(SMALL, observation="dict"))
        env.action_space.seed(0)
        obs, _ = env.reset(seed=0)
        self.assertIn(obs, env.observation_space)
        for _ in range(30):
            obs, _, terminated, truncated, _ = env.step(env.action_space.sample())
            self.assertIn(obs, env.observation_space)
            self.assertEqual(obs["histogram"].dtype, np.float32)
            if terminated or truncated:
                env.reset()
        self.assertEqual(env.action_masks().shape, (g.action_count(),))


class EnvTest(unittest.TestCase):
    def test_spaces(self):
        env = PassOrderingEnv(SMALL)
        self.assertEqual(env.action_space, gym.spaces.Discrete(g.action_count()))
        self.assertEqual(env.observation_space.shape, (len(g.opcode_names()),))
        self.assertEqual(PassOrderingEnv(SMALL, observation="features").observation_space.shape,
                         (len(g.feature_names()),))
        dict_env = PassOrderingEnv(SMALL, observation="dict")
        obs, _ = dict_env.reset(seed=1)
        self.assertEqual(set(obs), {"histogram", "features"})
        with self.assertRaises(ValueError):
            PassOrderingEnv(SMALL, observation="pixels")
        with self.assertRaises(ValueError):
            PassOrderingEnv([])

    def test_reset_picks_with_np_random(self):
        env = PassOrderingEnv(SMALL)
        picks = []
        for seed in range(20):
            _, info = env.reset(seed=seed)
            picks.append(info["benchmark"])
        self.assertGreater(len(set(picks)), 2)
        self.assertLessEqual(set(picks), set(SMALL))
        again = [env.reset(seed=seed)[1]["benchmark"] for seed in range(20)]
        self.assertEqual(picks, again)

    def test_reset_option_forces_benchmark(self):
        env = PassOrderingEnv(SMALL)
        for uri in SMALL:
            obs, info = env.reset(seed=0, options={"benchmark": uri})
            self.assertEqual(info["benchmark"], uri)
            self.assertEqual(obs.sum(), info["initial_ops"])
        # Any benchmark, not only the env's list.
        _, info = env.reset(options={"benchmark": "corpus/gh_ptxla_gpt2_tp1_n_layer2.hlo"})
        self.assertEqual(info["initial_ops"], 356)
        with self.assertRaisesRegex(ValueError, "nope"):
            env.reset(options={"benchmark": "corpus/nope.hlo"})

    def test_episode(self):
        env = PassOrderingEnv(SMALL, max_steps=5)
        obs, info = env.reset(options={"benchmark": SMALL[0]})
        self.assertEqual(set(info), {"benchmark", "ops", "initial_ops", "default_ops", "steps",
                                     "changed", "pass_spec", "action_mask"})
        total = 0.0
        obs, reward, terminated, truncated, info = env.step(g.action_index("algsimp"))
        total += reward
        self.assertTrue(info["changed"])
        self.assertEqual(info["pass_spec"], "algsimp")
        self.assertEqual(obs.sum(), info["ops"])
        np.testing.assert_array_equal(info["action_mask"], env.action_masks())
        self.assertTrue(env.action_masks()[g.action_index("algsimp")])  # it changed: may again
        self.assertTrue(env.action_masks()[g.stop_action()])
        for step in range(2, 6):
            obs, reward, terminated, truncated, info = env.step(g.action_index("dce"))
            total += reward
            self.assertFalse(terminated)
            self.assertEqual(truncated, step == 5)
        # The episode's return is the paper's metric.
        I, D, R = info["initial_ops"], info["default_ops"], info["ops"]
        self.assertAlmostEqual(total, (I - R) / (I - D))
        with self.assertRaisesRegex(RuntimeError, "has ended"):
            env.step(0)

    def test_stop_terminates(self):
        env = PassOrderingEnv(SMALL)
        env.reset(seed=3)
        obs, reward, terminated, truncated, info = env.step(env.stop_action)
        self.assertEqual((reward, terminated, truncated, info["steps"]), (0.0, True, False, 1))

    def test_bad_action(self):
        env = PassOrderingEnv(SMALL)
        env.reset(seed=0)
        with self.assertRaisesRegex(ValueError, "out of range"):
            env.step(g.action_count())

    def test_render(self):
        env = PassOrderingEnv(SMALL, render_mode="ansi")
        env.reset(options={"benchmark": SMALL[0]})
        env.step(g.action_index("algsimp"))
        self.assertIn("algsimp", env.render())
        self.assertIsNone(PassOrderingEnv(SMALL).render())

    def test_seeded_rollouts_are_deterministic(self):
        def rollout(seed):
            env = PassOrderingEnv(SMALL, observation="dict", max_steps=15)
            env.action_space.seed(seed)
            trace = []
            env.reset(seed=seed)
            for _ in range(60):
                obs, reward, terminated, truncated, info = env.step(env.action_space.sample())
                trace.append((info["benchmark"], info["pass_spec"], reward,
                              obs["histogram"].tolist(), obs["features"].tolist()))
                if terminated or truncated:
                    env.reset()
            return trace

        self.assertEqual(rollout(4), rollout(4))
        self.assertNotEqual(rollout(4), rollout(5))


if __name__ == "__main__":
    unittest.main()
