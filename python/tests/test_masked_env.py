"""MaskedPassOrderingEnv (the env RLlib's runners build from a config) and
the corpus split by family."""

import math
import pickle
import unittest
import warnings

import gymnasium as gym
import numpy as np
from gymnasium.utils.env_checker import check_env

from seam import gym as g
from seam.gym import corpus

SMALL = [
    "corpus/hloenv_toy_nn_module_0093.jit_loss.44.before_optimizations.txt",
    "corpus/xla_layer_norm_1x4096x768_bf16.hlo",
    "generator/random/5",
]


class MaskedEnvTest(unittest.TestCase):
    def test_check_env_every_encoder(self):
        for encoder in g.masked_env.ENCODERS:
            with self.subTest(encoder=encoder):
                config = {"benchmarks": SMALL, "encoder": encoder, "max_steps": 8}
                env = gym.make(g.MASKED_ENV_ID, config=config)
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    check_env(env.unwrapped)
                self.assertEqual([str(w.message) for w in caught], [])

    def test_the_config_pickles_and_unknown_keys_are_refused(self):
        config = {"benchmarks": SMALL, "encoder": "features", "max_steps": 5, "seed": 3}
        env = g.MaskedPassOrderingEnv(pickle.loads(pickle.dumps(config)))
        self.assertEqual(env.observation_space["observations"].shape, (len(g.feature_names()),))
        with self.assertRaisesRegex(ValueError, "unknown env config keys"):
            g.MaskedPassOrderingEnv({"benchmark": SMALL})
        with self.assertRaisesRegex(ValueError, "encoder"):
            g.MaskedPassOrderingEnv({"encoder": "graph"})

    def test_mask_is_the_sessions_and_the_return_the_share_of_the_default_saving(self):
        env = g.MaskedPassOrderingEnv({"benchmarks": SMALL[:1], "max_steps": 40})
        observation, _ = env.reset(seed=0)
        total, done, rng = 0.0, False, np.random.default_rng(0)
        while not done:
            mask = observation["action_mask"]
            np.testing.assert_array_equal(mask, np.asarray(env.session.action_mask(), dtype=np.float32))
            self.assertEqual(mask[g.stop_action()], 1.0)
            choices = np.flatnonzero(mask[:-1])  # never STOP, until the step limit
            observation, reward, terminated, truncated, _ = env.step(int(rng.choice(choices)))
            total += reward
            done = terminated or truncated
        info = env.info()
        expected = (info["initial_cost_us"] - info["cost_us"]) / (info["initial_cost_us"] - info["default_cost_us"])
        self.assertTrue(math.isclose(total, expected, rel_tol=1e-9, abs_tol=1e-12), (total, expected))

    def test_runners_of_different_index_draw_different_modules(self):
        class Context(dict):
            worker_index = 0

        draws = []
        for index in (1, 2):
            context = Context(benchmarks=corpus.generated_benchmarks()[:40], max_steps=2)
            context.worker_index = index
            env = g.MaskedPassOrderingEnv(context)
            draws.append([env.reset()[1]["benchmark"] for _ in range(6)])
        self.assertNotEqual(draws[0], draws[1])


class CorpusSplitTest(unittest.TestCase):
    def test_generated_corpus_is_found_and_every_family_named(self):
        generated = corpus.generated_benchmarks()
        self.assertGreaterEqual(len(generated), 250)
        families = {corpus.family_of(uri) for uri in generated}
        self.assertEqual(families, {"mlp", "attention", "norm", "optimizer", "loss", "scan", "recsys",
                                    "transformer", "convnet"})

    def test_no_test_family_is_trained_on(self):
        train, test = corpus.split(corpus.all_benchmarks(random_graphs=3))
        self.assertTrue(train and test)
        self.assertFalse({corpus.family_of(u) for u in train} & set(corpus.TEST_FAMILIES))
        names = " ".join(train).lower()
        for held_out in ("gpt2", "bert", "resnet", "mobilenet", "efficientnet", "/transformer.", "/convnet."):
            self.assertNotIn(held_out, names)
        self.assertIn("generator/random/0", train)

    def test_families_of_real_models(self):
        self.assertEqual(corpus.family_of("corpus/gh_ptxla_gpt2_tp1_n_layer2.hlo"), "transformer")
        self.assertEqual(corpus.family_of("corpus/xla_resnet50_keras_jax_f32.hlo"), "convnet")
        self.assertEqual(corpus.family_of("corpus/xla_dlrm_keras_jax_f32_train_step.hlo"), "recsys")
        self.assertEqual(corpus.family_of("file:///x/mlp.relu_d1_w64_b8_f32.fwd.hlo"), "mlp")


if __name__ == "__main__":
    unittest.main()
