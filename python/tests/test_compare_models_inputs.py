"""compare_models' input drawing: batch-norm variances and optimizer second
moments (parameters whose sign reaches a square root or logarithm) are drawn
non-negative, every other parameter exactly as before."""

import os
import sys
import unittest

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "bench"))
import compare_models_lib as lib  # noqa: E402

BATCH_NORM = """HloModule bn

ENTRY %main (x: f32[2,4], variance: f32[4], scale: f32[4], moment: f32[4]) -> (f32[2,4], f32[4]) {
  %x = f32[2,4]{1,0} parameter(0)
  %variance = f32[4]{0} parameter(1)
  %reshape.1 = f32[1,4]{1,0} reshape(%variance)
  %epsilon = f32[] constant(1e-05)
  %broadcast.1 = f32[1,4]{1,0} broadcast(%epsilon), dimensions={}
  %add.1 = f32[1,4]{1,0} add(%reshape.1, %broadcast.1)
  %rsqrt.1 = f32[1,4]{1,0} rsqrt(%add.1)
  %scale = f32[4]{0} parameter(2)
  %reshape.2 = f32[1,4]{1,0} reshape(%scale)
  %multiply.1 = f32[1,4]{1,0} multiply(%rsqrt.1, %reshape.2)
  %reshape.3 = f32[4]{0} reshape(%multiply.1)
  %broadcast.2 = f32[2,4]{1,0} broadcast(%reshape.3), dimensions={1}
  %multiply.2 = f32[2,4]{1,0} multiply(%x, %broadcast.2)
  %moment = f32[4]{0} parameter(3)
  %sqrt.1 = f32[4]{0} sqrt(%moment)
  ROOT %tuple.1 = (f32[2,4]{1,0}, f32[4]{0}) tuple(%multiply.2, %sqrt.1)
}
"""


class NonnegativeParametersTest(unittest.TestCase):
    def test_variance_and_moment_but_not_what_only_multiplies_a_root(self):
        # The scale meets the root only as a factor of its result, and x only
        # after a multiply: both keep their sign.
        self.assertEqual(lib.nonnegative_parameters(BATCH_NORM), {1, 3})

    def test_a_module_without_roots_has_none(self):
        text = BATCH_NORM.replace("rsqrt(", "negate(").replace("sqrt(%moment)", "abs(%moment)")
        self.assertEqual(lib.nonnegative_parameters(text), set())

    def test_drawn_non_negative_and_the_others_unchanged(self):
        shapes = [((2, 4), np.dtype(np.float32))] + [((4,), np.dtype(np.float32))] * 3
        before = lib.draw_inputs(shapes)
        after = lib.draw_inputs(shapes, nonnegative={1, 3})
        self.assertTrue((before[1] < 0).any())
        for number in (1, 3):
            np.testing.assert_array_equal(after[number], np.abs(before[number]))
        for number in (0, 2):
            np.testing.assert_array_equal(after[number], before[number])


if __name__ == "__main__":
    unittest.main()
