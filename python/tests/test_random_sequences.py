"""Random action sequences through the bindings, every reached pass order
validated from scratch: reloaded, verified after every pass, interpreted
against the original on the same inputs (validate_pass_order)."""

import unittest

import numpy as np

from seam import gym as g

CORPUS = [
    "corpus/xla_layer_norm_1x4096x768_bf16.hlo",
    "corpus/xla_mha_block_1x12x128x64_bf16.hlo",
    "corpus/hloenv_toy_nn_module_0093.jit_loss.44.before_optimizations.txt",
    "corpus/gh_ptxla_linear_module_adam.hlo",
]
SEQUENCES = 1000
CORPUS_SEQUENCES = 600  # the rest run on generator/random/<seed>, one seed each
MAX_LENGTH = 30


def benchmark(i):
    return CORPUS[i % len(CORPUS)] if i < CORPUS_SEQUENCES else f"generator/random/{i - CORPUS_SEQUENCES}"


class RandomSequencesTest(unittest.TestCase):
    def test_random_sequences_validate(self):
        rng = np.random.default_rng(2024)
        finals = []  # (benchmark, pass_spec, ops) of every sequence
        for i in range(SEQUENCES):
            uri = benchmark(i)
            session = g.Session(max_steps=MAX_LENGTH, verify_each=bool(i % 2))
            session.reset(uri)
            length = int(rng.integers(1, MAX_LENGTH + 1))
            # Half the sequences continue on a fork from a random point; the
            # original must stay where it was.
            fork_at = int(rng.integers(0, length)) if i % 4 < 2 else None
            original = None
            for step in range(length):
                if step == fork_at:
                    original = (session, session.ops, session.pass_spec, session.steps)
                    session = session.fork()
                # Any action, STOP included: known no-ops and early ends are part of the API.
                session.step(int(rng.integers(g.action_count())))
                if session.done:
                    break
            if original is not None:
                kept, ops, spec, steps = original
                self.assertEqual((kept.ops, kept.pass_spec, kept.steps), (ops, spec, steps), uri)
            finals.append((uri, session.pass_spec, session.ops))

        # Identical orders on one module validate identically: check each once.
        validated = {}
        for uri, spec, ops in finals:
            if (uri, spec) not in validated:
                validated[uri, spec] = g.validate_pass_order(uri, spec, interpret=True, seed=0)
            v = validated[uri, spec]
            with self.subTest(benchmark=uri, spec=spec):
                self.assertEqual(v["ops"], ops)
                self.assertTrue(v["interpreted"])
                self.assertEqual(v["differences"], "")
        self.assertEqual(len(finals), SEQUENCES)
        # The sequences explore: most modules reach many distinct orders.
        self.assertGreater(len(validated), SEQUENCES // 3)


if __name__ == "__main__":
    unittest.main()
