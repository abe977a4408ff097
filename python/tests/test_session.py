"""The bindings of seam::gym::Session and the module-level API."""

import copy
import unittest

import numpy as np

from seam import gym as g

GPT2 = "corpus/gh_ptxla_gpt2_tp1_n_layer2.hlo"
LAYER_NORM = "corpus/xla_layer_norm_1x4096x768_bf16.hlo"
TOY = "corpus/hloenv_toy_nn_module_0093.jit_loss.44.before_optimizations.txt"


def run(session, names):
    for name in names:
        session.step(g.action_index(name))
    return session


class ApiTest(unittest.TestCase):
    def test_actions(self):
        names = g.action_names()
        self.assertEqual(len(names), g.action_count())
        self.assertEqual(g.stop_action(), g.action_count() - 1)
        self.assertEqual(names[g.stop_action()], "stop")
        self.assertEqual(len(g.action_descriptions()), g.action_count())
        for index, name in enumerate(names):
            self.assertEqual(g.action_index(name), index)
            self.assertEqual(g.action_name(index), name)
        self.assertIn("dce", names)
        with self.assertRaisesRegex(ValueError, "no-such-pass"):
            g.action_index("no-such-pass")
        with self.assertRaisesRegex(ValueError, "out of range"):
            g.action_name(g.action_count())

    def test_spaces(self):
        self.assertEqual(g.observation_spaces(), ["opcode_histogram", "features", "hlo_text"])
        self.assertIn("ops_vs_default", g.reward_spaces())
        s = g.Session()
        s.reset(GPT2)
        self.assertEqual(len(s.observe("features")), len(g.feature_names()))
        self.assertEqual(len(s.observe("opcode_histogram")), len(g.opcode_names()))

    def test_corpus(self):
        benchmarks = g.corpus_benchmarks()
        self.assertIn(GPT2, benchmarks)
        self.assertEqual(benchmarks, sorted(benchmarks))


class SessionTest(unittest.TestCase):
    def test_reset_and_observe(self):
        s = g.Session()
        self.assertFalse(s.has_episode)
        self.assertIsNone(s.benchmark)
        s.reset(GPT2)
        self.assertEqual(s.benchmark, GPT2)
        self.assertEqual((s.steps, s.done, s.pass_spec, s.actions), (0, False, "", []))
        self.assertEqual(s.ops, s.initial_ops)
        self.assertLess(s.default_ops, s.initial_ops)
        histogram = s.observe("opcode_histogram")
        self.assertEqual(histogram.dtype, np.int64)
        self.assertEqual(histogram.sum(), s.ops)
        features = s.observe("features")
        self.assertEqual(features.dtype, np.float64)
        self.assertEqual(features[g.feature_names().index("instructions")], s.ops)
        self.assertIn("ENTRY", s.observe("hlo_text"))
        self.assertEqual(s.reward(), 0.0)
        self.assertTrue(s.action_mask().all())

    def test_step(self):
        s = g.Session()
        s.reset(GPT2)
        changed, terminated, truncated = s.step(g.action_index("algsimp"))
        self.assertEqual((changed, terminated, truncated), (True, False, False))
        self.assertLess(s.ops, s.initial_ops)
        self.assertEqual(s.pass_spec, "algsimp")
        self.assertEqual(s.reward("ops_delta"), s.initial_ops - s.ops)
        self.assertAlmostEqual(s.reward(), (s.initial_ops - s.ops) / (s.initial_ops - s.default_ops))
        # A pass that changed the module may change it again, so it stays available...
        self.assertTrue(s.action_mask()[g.action_index("algsimp")])
        runs = 1
        while s.step("algsimp")[0]:  # by name, too
            runs += 1
        # ...until it runs and changes nothing.
        self.assertFalse(s.action_mask()[g.action_index("algsimp")])
        self.assertEqual(s.reward(), 0.0)
        self.assertEqual(s.pass_spec, ",".join(["algsimp"] * runs))  # only changing actions count
        self.assertEqual(s.actions, [g.action_index("algsimp")] * (runs + 1))
        self.assertEqual(s.step(np.int64(g.stop_action())), (False, True, False))
        self.assertTrue(s.done)

    def test_truncation(self):
        s = g.Session(max_steps=3)
        s.reset(TOY)
        self.assertFalse(s.step(0)[2])
        self.assertFalse(s.step(1)[2])
        self.assertEqual(s.step(2)[1:], (False, True))
        self.assertTrue(s.done)
        self.assertEqual(s.max_steps, 3)

    def test_fork_is_independent(self):
        s = g.Session()
        s.reset(GPT2)
        run(s, ["algsimp"])
        before = (s.ops, s.steps, s.pass_spec, s.actions, s.observe("hlo_text"))
        histogram = s.observe("opcode_histogram")
        fork = s.fork()
        self.assertEqual((fork.ops, fork.steps, fork.pass_spec), before[:3])
        run(fork, ["cse", "dce"])
        self.assertLess(fork.ops, s.ops)
        self.assertEqual(fork.pass_spec, "algsimp,cse,dce")
        # The original is untouched by its fork's steps...
        self.assertEqual((s.ops, s.steps, s.pass_spec, s.actions, s.observe("hlo_text")), before)
        np.testing.assert_array_equal(s.observe("opcode_histogram"), histogram)
        # ...and the fork by the original's.
        fork_text = fork.observe("hlo_text")
        run(s, ["batchnorm-expander"])
        self.assertEqual(fork.observe("hlo_text"), fork_text)
        self.assertEqual(fork.pass_spec, "algsimp,cse,dce")
        # Ending one side's episode leaves the other's running.
        s.step(g.stop_action())
        self.assertFalse(fork.done)
        fork.step(g.action_index("dce"))

    def test_copy_forks(self):
        s = g.Session()
        s.reset(TOY)
        for clone in (copy.copy(s), copy.deepcopy(s)):
            run(clone, ["algsimp"])
            self.assertEqual(s.steps, 0)
            self.assertEqual(clone.steps, 1)

    def test_reset_text(self):
        s = g.Session()
        s.reset(TOY)
        t = g.Session()
        t.reset_text(s.observe("hlo_text"), name="toy")
        self.assertEqual((t.benchmark, t.ops, t.default_ops), ("toy", s.ops, s.default_ops))
        with self.assertRaises(ValueError):
            t.reset_text("HloModule broken\nENTRY e { ROOT x = f32[] bogus() }")

    def test_other_reward_spaces(self):
        s = g.Session(reward_space="cost_time")
        s.reset(LAYER_NORM)
        run(s, ["algsimp"])
        self.assertIsInstance(s.reward(), float)
        self.assertEqual(s.reward_space, "cost_time")
        shaped = g.Session(reward_space="ops_vs_default_shaped", verify_each=True)
        shaped.reset(LAYER_NORM)
        run(shaped, ["algsimp"])
        self.assertIsInstance(shaped.reward(), float)


    def test_canonical_start(self):
        raw, canonical = g.Session(), g.Session(canonical_start=True)
        raw.reset(GPT2)
        canonical.reset(GPT2)
        self.assertTrue(canonical.canonical_start)
        self.assertNotEqual(canonical.initial_ops, raw.initial_ops)  # batch norms expanded
        run(canonical, ["algsimp", "cse", "dce"])
        self.assertTrue(canonical.pass_spec.endswith("algsimp,cse,dce"))
        v = g.validate_pass_order(GPT2, canonical.pass_spec)
        self.assertEqual((v["ops"], v["differences"]), (canonical.ops, ""))

    def test_cost(self):
        s = g.Session(reward_space="cost_time")
        s.reset(LAYER_NORM)
        self.assertGreater(s.cost_us, 0)
        self.assertIsNone(g.Session().cost_us)
        result = g.greedy_search(s, max_steps=10, budget_seconds=1.0, objective="cost")
        self.assertLessEqual(result["best_cost_us"], s.cost_us)
        v = g.validate_pass_order(LAYER_NORM, result["best_spec"])
        self.assertAlmostEqual(v["cost_us"], result["best_cost_us"], delta=1e-6 * v["cost_us"])
        self.assertIsNone(g.greedy_search(s, max_steps=2, budget_seconds=1.0)["best_cost_us"])
        with self.assertRaisesRegex(ValueError, "objective"):
            g.greedy_search(s, objective="joy")
        ops_session = g.Session()
        ops_session.reset(LAYER_NORM)
        with self.assertRaisesRegex((ValueError, RuntimeError), "cost_time"):
            g.greedy_search(ops_session, objective="cost")


class ErrorTest(unittest.TestCase):
    def test_bad_benchmark(self):
        s = g.Session()
        with self.assertRaisesRegex(ValueError, "corpus/no_such_module.hlo"):
            s.reset("corpus/no_such_module.hlo")
        with self.assertRaisesRegex(ValueError, "seed"):
            s.reset("generator/random/abc")
        self.assertFalse(s.has_episode)

    def test_bad_action(self):
        s = g.Session()
        s.reset(TOY)
        with self.assertRaisesRegex(ValueError, r"action 999 is out of range \[0, \d+\)"):
            s.step(999)
        with self.assertRaisesRegex(ValueError, "out of range"):
            s.step(-1)
        with self.assertRaisesRegex(ValueError, "no-such-pass"):
            s.step("no-such-pass")
        with self.assertRaises(TypeError):
            s.step(1.5)
        self.assertEqual(s.steps, 0)

    def test_step_before_reset_and_after_done(self):
        s = g.Session()
        with self.assertRaisesRegex(RuntimeError, "no episode"):
            s.step(0)
        with self.assertRaisesRegex(RuntimeError, "no episode"):
            s.observe("features")
        s.reset(TOY)
        s.step(g.stop_action())
        with self.assertRaisesRegex(RuntimeError, "has ended .*STOP"):
            s.step(0)
        t = g.Session(max_steps=1)
        t.reset(TOY)
        t.step(0)
        with self.assertRaisesRegex(RuntimeError, "step limit"):
            t.step(0)

    def test_bad_names_and_options(self):
        s = g.Session()
        s.reset(TOY)
        with self.assertRaisesRegex(ValueError, "unknown observation space 'pixels'"):
            s.observe("pixels")
        with self.assertRaisesRegex(ValueError, "unknown reward space"):
            s.reward("karma")
        with self.assertRaisesRegex(RuntimeError, "cost_time"):
            s.reward("cost_time")  # measured only when it is the session's reward space
        with self.assertRaisesRegex(ValueError, "unknown reward space"):
            g.Session(reward_space="karma")
        with self.assertRaisesRegex(ValueError, "max_steps"):
            g.Session(max_steps=0)
        with self.assertRaises(ValueError):
            g.Session(device="tpu")

    def test_bad_validation_and_search(self):
        with self.assertRaises(ValueError):
            g.validate_pass_order(TOY, "no-such-pass")
        with self.assertRaises(ValueError):
            g.validate_pass_order("corpus/no_such_module.hlo", "")
        with self.assertRaisesRegex(RuntimeError, "no episode"):
            g.greedy_search(g.Session())
        s = g.Session()
        s.reset(TOY)
        with self.assertRaises(ValueError):
            g.search("psychic", s)
        with self.assertRaisesRegex(ValueError, "beam_width"):
            g.beam_search(s, beam_width=0)


class SearchTest(unittest.TestCase):
    def test_searches_validate(self):
        s = g.Session()
        s.reset(LAYER_NORM)
        for search in (g.random_search, g.greedy_search, g.beam_search):
            result = search(s, max_steps=10, budget_seconds=1.0)
            self.assertLessEqual(result["best_ops"], result["initial_ops"])
            self.assertEqual(result["initial_ops"], s.initial_ops)
            v = g.validate_pass_order(LAYER_NORM, result["best_spec"])
            self.assertEqual(set(v), {"ops", "cost_us", "planned_ops", "interpreted", "differences"})
            self.assertEqual(v["ops"], result["best_ops"])
            self.assertTrue(v["interpreted"])
            self.assertEqual(v["differences"], "")
        self.assertEqual(s.steps, 0)  # searches fork, never step


class DeterminismTest(unittest.TestCase):
    def test_same_actions_same_states(self):
        rng = np.random.default_rng(7)
        for uri in (GPT2, LAYER_NORM, "generator/random/3"):
            actions = rng.integers(0, g.stop_action(), size=30)
            a, b = g.Session(max_steps=100), g.Session(max_steps=100)
            a.reset(uri)
            b.reset(uri)
            for action in actions:
                self.assertEqual(a.step(int(action)), b.step(int(action)))
                self.assertEqual(a.reward(), b.reward())
            self.assertEqual(a.pass_spec, b.pass_spec)
            self.assertEqual(a.observe("hlo_text"), b.observe("hlo_text"))
            np.testing.assert_array_equal(a.observe("features"), b.observe("features"))

    def test_random_generator_seeds(self):
        a, b = g.Session(), g.Session()
        a.reset("generator/random/11")
        b.reset("generator/random/12")
        self.assertNotEqual(a.observe("hlo_text"), b.observe("hlo_text"))


if __name__ == "__main__":
    unittest.main()
