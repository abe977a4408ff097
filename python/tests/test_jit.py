"""seam.jit on JAX functions: what jax.jit gives, as JAX arrays in JAX's
pytrees, compiled once per call signature."""

import numpy as np
import pytest

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402

import seam  # noqa: E402


def test_softmax_as_in_the_readme():
    f = seam.jit(jax.nn.softmax)
    y = f(jnp.ones((4, 8)))
    assert isinstance(y, jax.Array)
    np.testing.assert_array_equal(np.asarray(y), np.full((4, 8), 0.125, np.float32))


def test_pytrees_in_and_out():
    def step(params, batch):
        h = jnp.tanh(batch["x"] @ params["w"] + params["b"])
        return {"mean": h.mean(), "rows": (h.sum(axis=1), batch["x"].shape[0])}

    rng = np.random.RandomState(0)
    params = {"w": rng.standard_normal((5, 3)).astype(np.float32),
              "b": np.zeros(3, np.float32)}
    batch = {"x": rng.standard_normal((7, 5)).astype(np.float32)}
    got, want = seam.jit(step)(params, batch), jax.jit(step)(params, batch)
    assert jax.tree_util.tree_structure(got) == jax.tree_util.tree_structure(want)
    for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-5, atol=1e-6)


def test_one_executable_per_signature():
    f = seam.jit(lambda x, n: x * n, static_argnums=1)
    assert np.asarray(f(jnp.ones(3), 2)).tolist() == [2, 2, 2]
    assert np.asarray(f(jnp.ones(3), 3)).tolist() == [3, 3, 3]
    f(jnp.zeros(3), 2)  # same signature: no new executable
    f(jnp.zeros(4), 2)  # new shape
    assert len(f._executables) == 3
    with pytest.raises(TypeError, match="hashable"):
        f(jnp.ones(3), [1])


def test_keyword_arguments_and_python_scalars():
    f = seam.jit(lambda x, scale=1.0: x * scale + 1)
    np.testing.assert_allclose(np.asarray(f(jnp.arange(3.0), scale=2.0)), [1, 3, 5])
    np.testing.assert_allclose(np.asarray(f(jnp.arange(3.0), 0.5)), [1, 1.5, 2])


def test_bf16_in_and_out():
    f = seam.jit(lambda x: (x * 2).astype(jnp.bfloat16).sum())
    x = jnp.arange(8, dtype=jnp.bfloat16)
    y = f(x)
    assert y.dtype == jnp.bfloat16 and float(y) == 56.0


def test_value_and_grad_scan_and_cond():
    def loss(w, xs):
        def body(carry, x):
            h = jnp.where(x.sum() > 0, jnp.tanh(x @ w), jnp.sin(x @ w))
            return carry + (h ** 2).mean(), h.sum()
        total, per_step = jax.lax.scan(body, 0.0, xs)
        return total + jax.lax.cond(per_step[0] > 0, lambda: 1.0, lambda: -1.0)

    rng = np.random.RandomState(1)
    w = rng.standard_normal((6, 4)).astype(np.float32)
    xs = rng.standard_normal((5, 3, 6)).astype(np.float32)
    vg = jax.value_and_grad(loss)
    (gv, gg), (wv, wg) = seam.jit(vg)(w, xs), jax.jit(vg)(w, xs)
    np.testing.assert_allclose(float(gv), float(wv), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(gg), np.asarray(wg), rtol=1e-4, atol=1e-6)


def test_results_feed_the_next_jax_call():
    f = seam.jit(lambda x: x + 1)
    y = f(jnp.zeros(4))
    z = jax.jit(lambda v: v * 3)(y) + f(y)
    np.testing.assert_array_equal(np.asarray(z), [5, 5, 5, 5])


def test_a_function_seam_cannot_compile_fails_on_its_first_call():
    def fancy(x):
        return jax.ffi.ffi_call("seam_test_no_such_target",
                                jax.ShapeDtypeStruct(x.shape, x.dtype))(x)

    f = seam.jit(fancy)
    with pytest.raises(ValueError, match="seam_test_no_such_target"):
        f(jnp.ones(3))


def test_decorator_forms_and_wrong_calls():
    @seam.jit
    def double(x):
        return 2 * x

    @seam.jit(static_argnums=(1,))
    def power(x, k):
        return x ** k

    assert double.__name__ == "double"
    np.testing.assert_array_equal(np.asarray(power(double(jnp.ones(2)), 3)), [8, 8])
    with pytest.raises(TypeError):
        double(jnp.ones(2), jnp.ones(2))
    with pytest.raises(TypeError, match="static_argnums"):
        power(jnp.ones(2))
