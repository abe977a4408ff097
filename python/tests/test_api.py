"""seam.compile and seam.jit as a user meets them: arrays in and out, the
executable's plan, HLO and statistics, errors for bad modules and bad
calls, several threads calling one executable, and JAX's pytrees, static
arguments, Python scalars and bf16 through seam.jit."""

import concurrent.futures
import os

import numpy as np
import pytest

import seam

SOFTMAX = """HloModule softmax

add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT r = f32[] add(x, y)
}

ENTRY main {
  a = f32[4,8] parameter(0)
  e = f32[4,8] exponential(a)
  z = f32[] constant(0)
  s = f32[4] reduce(e, z), dimensions={1}, to_apply=add
  b = f32[4,8] broadcast(s), dimensions={0}
  ROOT d = f32[4,8] divide(e, b)
}
"""

TWO_OUTPUTS = """HloModule pair

ENTRY main {
  x = bf16[3] parameter(0)
  n = s32[] parameter(1)
  y = bf16[3] multiply(x, x)
  m = s32[] add(n, n)
  ROOT t = (bf16[3], s32[]) tuple(y, m)
}
"""


def softmax(x):
    e = np.exp(x.astype(np.float64))
    return e / e.sum(axis=-1, keepdims=True)


def test_compile_text_and_run():
    exe = seam.compile(SOFTMAX)
    x = np.random.RandomState(0).standard_normal((4, 8)).astype(np.float32)
    y = exe(x)
    assert isinstance(y, np.ndarray) and y.dtype == np.float32 and y.shape == (4, 8)
    np.testing.assert_allclose(y, softmax(x), rtol=1e-5)
    assert exe.parameters == [("a", "f32", [4, 8])]


def test_compile_a_path(tmp_path):
    path = tmp_path / "softmax.hlo"
    path.write_text(SOFTMAX)
    for given in (path, str(path)):
        exe = seam.compile(given)
        assert exe.name == str(path)
        np.testing.assert_allclose(exe(np.zeros((4, 8), np.float32)), np.full((4, 8), 0.125))


def test_plan_hlo_and_stats():
    exe = seam.compile(SOFTMAX)
    assert "kernel" in exe.plan
    assert exe.hlo.startswith("HloModule")
    stats = exe.stats
    assert stats["backend"] == "cpu" and stats["fusion"] == "stitch"
    assert stats["kernels"] >= 1 and stats["interpreted"] == []
    assert stats["compile_seconds"] >= 0 and stats["passes_seconds"] >= 0


def test_every_backend_and_strategy_agree():
    x = np.random.RandomState(1).standard_normal((4, 8)).astype(np.float32)
    want = seam.compile(SOFTMAX, backend="interp")(x)
    for fusion in ("stitch", "xla", "none"):
        np.testing.assert_allclose(seam.compile(SOFTMAX, fusion=fusion)(x), want, rtol=1e-6)


def test_tuple_results_bf16_and_scalars():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    exe = seam.compile(TWO_OUTPUTS)
    x = np.array([1.5, -2, 3], dtype=ml_dtypes.bfloat16)
    y, m = exe(x, np.int32(21))
    assert y.dtype == ml_dtypes.bfloat16 and y.tolist() == [2.25, 4, 9]
    assert m.dtype == np.int32 and m.shape == () and int(m) == 42
    # A Python number takes the parameter's type.
    assert int(exe(x, 4)[1]) == 8


def test_bad_calls_raise_clear_errors():
    exe = seam.compile(SOFTMAX)
    with pytest.raises(ValueError, match=r"parameter 'a'.*f64\[4,8\].*takes f32\[4,8\]"):
        exe(np.zeros((4, 8)))
    with pytest.raises(ValueError, match=r"parameter 'a'.*f32\[8,4\]"):
        exe(np.zeros((8, 4), np.float32))
    with pytest.raises(TypeError, match=r"takes 1 argument\(s\) \(a\); given 2"):
        exe(np.zeros((4, 8), np.float32), np.zeros((4, 8), np.float32))
    with pytest.raises(TypeError, match="not an array"):
        exe("zeros")
    # Strided views are copied into order, not misread.
    x = np.random.RandomState(2).standard_normal((8, 8)).astype(np.float32)[::2]
    np.testing.assert_allclose(exe(x), softmax(x), rtol=1e-5)


def test_bad_modules_fail_at_compile_time():
    with pytest.raises(ValueError, match="expected shape f32\\[4\\]"):
        seam.compile("HloModule m\nENTRY e {\n  x = f32[4] parameter(0)\n"
                      "  ROOT y = f32[5] negate(x)\n}\n")
    with pytest.raises(ValueError, match="MyFancyOp"):
        seam.compile("HloModule m\nENTRY e {\n  x = f32[4] parameter(0)\n"
                     "  ROOT y = f32[4] custom-call(x), custom_call_target=\"MyFancyOp\"\n}\n")
    with pytest.raises(ValueError, match="backend 'tpu'"):
        seam.compile(SOFTMAX, backend="tpu")
    with pytest.raises(FileNotFoundError):
        seam.compile(os.path.join("no", "such", "module.hlo"))


def test_one_executable_from_several_threads():
    exe = seam.compile(SOFTMAX)
    rng = np.random.RandomState(3)
    inputs = [rng.standard_normal((4, 8)).astype(np.float32) for _ in range(32)]
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        results = list(pool.map(exe, inputs))
    for x, y in zip(inputs, results):
        np.testing.assert_allclose(y, softmax(x), rtol=1e-5)


def test_the_gym_is_seam_gym():
    pytest.importorskip("gymnasium")
    import seam_gym

    assert seam_gym is seam.gym
    assert seam.gym.action_count() == len(seam.gym.action_names())
