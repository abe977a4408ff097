"""seam.jit: JAX functions compiled by Seam.

JAX traces and lowers the function (`jax.jit(fn).lower(...)`, as HLO text);
Seam compiles that module and runs it. One executable is kept per call
signature: the pytree structure of the arguments, each array's shape and
dtype, and the values of the static arguments. Results come back as JAX
arrays in JAX's output pytree, so they feed the next JAX call.
"""

import functools

import numpy as np

from . import _api


def _lower_to_hlo(lowered):
    try:
        return lowered.as_text(dialect="hlo")
    except TypeError:  # older JAX
        return lowered.compiler_ir("hlo").as_hlo_text()


# Results at least this large become JAX arrays through DLPack, sharing
# Seam's memory (about 16 us each, whatever the size); smaller ones through
# jaxlib's batched_device_put (2 us; jnp.asarray, the public way, takes 10
# us, which is most of a small call), where this jaxlib has it.
_SHARED_BYTES = 1 << 16


def _small_array_maker():
    """A function numpy array -> JAX array on the default device, as fast as
    this JAX allows."""
    import jax
    import jax.numpy as jnp

    try:
        from jax._src import core
        from jax._src.lib import xla_client
        from jax.sharding import SingleDeviceSharding

        device = jax.devices()[0]
        sharding = SingleDeviceSharding(device)
        put = xla_client.batched_device_put
        avals = {}  # (shape, dtype) -> its abstract value, made once

        def make(a):
            key = (a.shape, a.dtype)
            aval = avals.get(key)
            if aval is None:
                aval = avals[key] = core.ShapedArray(a.shape, a.dtype)
            return put(aval, sharding, [a], [device], False)

        probe = make(np.arange(3, dtype=np.float32))
        if isinstance(probe, jax.Array) and np.asarray(probe).tolist() == [0, 1, 2]:
            return make
    except Exception:  # another jaxlib: the public way
        pass
    return jnp.asarray


_make_small = None


def _to_jax(arrays):
    import jax

    global _make_small
    if _make_small is None:
        _make_small = _small_array_maker()
    out = []
    for a in arrays:
        if a.nbytes >= _SHARED_BYTES:
            try:
                out.append(jax.dlpack.from_dlpack(a))
                continue
            except Exception:  # bf16, odd alignments
                pass
        out.append(_make_small(a))
    return out


def _signature(leaf):
    """What of an argument leaf the executable depends on."""
    if type(leaf) is np.ndarray:  # the common case first
        return (leaf.shape, leaf.dtype, False)  # as a JAX array of its type
    shape = getattr(leaf, "shape", None)
    dtype = getattr(leaf, "dtype", None)
    if shape is not None and dtype is not None:
        return (tuple(shape), dtype, getattr(leaf, "weak_type", False))
    return (type(leaf).__name__,)  # Python scalars: JAX traces them by type


class Jitted:
    """A function compiled by Seam per call signature (see seam.jit)."""

    def __init__(self, fn, backend, fusion, passes, static_argnums, donate_argnums):
        self._fn = fn
        self._backend = backend
        self._fusion = fusion
        self._passes = passes
        self._static = tuple(sorted({int(i) for i in static_argnums}))
        self._donate = tuple(donate_argnums)  # accepted; Seam never writes into arguments
        self._executables = {}
        functools.update_wrapper(self, fn)

    def _split(self, args):
        if not self._static:
            return args, ()
        for i in self._static:
            if i >= len(args) or i < -len(args):
                raise TypeError(f"static_argnums names argument {i}; "
                                f"{getattr(self._fn, '__name__', 'the function')} was given "
                                f"{len(args)}")
        static = {i % len(args) for i in self._static}
        dynamic = tuple(a for i, a in enumerate(args) if i not in static)
        static_values = tuple((i, args[i]) for i in sorted(static))
        return dynamic, static_values

    def lower(self, *args, **kwargs):
        """The JAX lowering of the function for these arguments."""
        import jax

        return jax.jit(self._fn, static_argnums=self._static, keep_unused=True).lower(
            *args, **kwargs)

    def _compile(self, args, kwargs):
        lowered = self.lower(*args, **kwargs)
        executable = _api.compile(_lower_to_hlo(lowered), backend=self._backend,
                                  fusion=self._fusion, passes=self._passes)
        name = getattr(self._fn, "__name__", "function")
        executable.name = f"seam.jit({name})"
        return executable, lowered.out_tree

    def compiled(self, *args, **kwargs):
        """The seam.Executable that runs these arguments (compiled now if
        need be)."""
        return self._entry(args, kwargs)[0]

    def _entry(self, args, kwargs):
        import jax

        dynamic, static_values = self._split(args)
        leaves, tree = jax.tree_util.tree_flatten((dynamic, kwargs))
        try:
            key = (tree, tuple(_signature(l) for l in leaves), static_values)
            hash(key)
        except TypeError:
            raise TypeError("static arguments must be hashable, as for jax.jit") from None
        entry = self._executables.get(key)
        if entry is None:
            entry = self._executables[key] = self._compile(args, kwargs) + (leaves,)
        return entry[0], entry[1], leaves

    def __call__(self, *args, **kwargs):
        import jax

        executable, out_tree, leaves = self._entry(args, kwargs)
        results = executable(*leaves)
        flat = list(results) if isinstance(results, tuple) else [results]
        if out_tree.num_leaves != len(flat):
            raise RuntimeError(f"{executable.name}: the module returned {len(flat)} array(s) "
                               f"for {out_tree.num_leaves} output(s)")
        return jax.tree_util.tree_unflatten(out_tree, _to_jax(flat))

    def __repr__(self):
        return f"<seam.jit of {self._fn!r}: {len(self._executables)} executable(s)>"


def jit(fn=None, *, backend="cpu", fusion="stitch", passes="default", static_argnums=(),
        donate_argnums=()):
    """Compiles a JAX function with Seam (as jax.jit compiles it with XLA).

    Usable as `seam.jit(f)` or as a decorator, `@seam.jit` or
    `@seam.jit(static_argnums=(1,))`. Each call signature (argument pytree,
    shapes, dtypes, static values) is compiled once, on its first call; a
    function Seam cannot compile raises then, with Seam's message. Results
    are JAX arrays in the function's output pytree. donate_argnums is
    accepted for compatibility: Seam never writes into its arguments.
    """
    if isinstance(static_argnums, int):
        static_argnums = (static_argnums,)
    if isinstance(donate_argnums, int):
        donate_argnums = (donate_argnums,)

    def wrap(f):
        return Jitted(f, backend, fusion, passes, static_argnums, donate_argnums)

    return wrap if fn is None else wrap(fn)
