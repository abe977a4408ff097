"""seam.compile: an HLO module compiled by Seam, called on arrays.

Arrays cross into C++ as C-contiguous CPU buffers tagged with Seam's name
for their element type; this file holds the one table between numpy's
types and Seam's. bf16 and the 8-bit floats travel as their bits and come
back as ml_dtypes arrays (the types JAX uses).
"""

import os

import numpy as np

from . import _core

try:  # JAX's extra float types; present wherever JAX is
    import ml_dtypes as _ml_dtypes
except ImportError:  # pragma: no cover - numpy-only installs
    _ml_dtypes = None

# Seam's element type name -> numpy dtype.
_NUMPY_OF = {
    "pred": np.dtype(np.bool_),
    "s8": np.dtype(np.int8), "s16": np.dtype(np.int16),
    "s32": np.dtype(np.int32), "s64": np.dtype(np.int64),
    "u8": np.dtype(np.uint8), "u16": np.dtype(np.uint16),
    "u32": np.dtype(np.uint32), "u64": np.dtype(np.uint64),
    "f16": np.dtype(np.float16), "f32": np.dtype(np.float32), "f64": np.dtype(np.float64),
    "c64": np.dtype(np.complex64), "c128": np.dtype(np.complex128),
}
if _ml_dtypes is not None:
    _NUMPY_OF["bf16"] = np.dtype(_ml_dtypes.bfloat16)
_SEAM_OF = {dtype: name for name, dtype in _NUMPY_OF.items()}
# Types numpy has no arithmetic for, passed as their bits.
_AS_BITS = {"bf16": np.dtype(np.uint16)}


def seam_dtype(dtype):
    """Seam's name for a numpy dtype (None when Seam has no such type)."""
    return _SEAM_OF.get(np.dtype(dtype))


def numpy_dtype(name):
    """The numpy dtype of Seam's element type `name`."""
    if name not in _NUMPY_OF:
        raise ValueError(f"element type {name} has no numpy dtype here"
                         + (" (install ml_dtypes)" if name == "bf16" else ""))
    return _NUMPY_OF[name]


def _torch_to_numpy(tensor):
    import torch

    tensor = tensor.detach()
    if tensor.device.type != "cpu":
        tensor = tensor.cpu()
    if tensor.dtype == torch.bfloat16:
        return tensor.contiguous().view(torch.int16).numpy().view(numpy_dtype("bf16"))
    return tensor.numpy()


def as_numpy(value, what):
    """`value` as a numpy array, without a copy where it is one already or
    shares its memory (JAX and torch CPU arrays, DLPack exporters)."""
    if isinstance(value, np.ndarray):
        return value
    if isinstance(value, np.generic):
        return np.asarray(value)
    if type(value).__module__.startswith("torch"):
        return _torch_to_numpy(value)
    if hasattr(value, "__array__"):  # JAX arrays, array-likes
        return np.asarray(value)
    if hasattr(value, "__dlpack__"):
        return np.from_dlpack(value)
    raise TypeError(f"{what} is a {type(value).__name__}, not an array "
                    "(numpy, JAX, torch, or anything exporting DLPack)")


def _from_result(result):
    """A result of the C++ run, (array, type name) or a tuple of results,
    as numpy arrays (a tuple for a tuple)."""
    if isinstance(result, tuple) and len(result) == 2 and isinstance(result[1], str):
        array, name = result
        return array.view(numpy_dtype(name)) if name in _AS_BITS else array
    return tuple(_from_result(r) for r in result)


class Executable:
    """A module compiled by Seam. Call it with one array per entry
    parameter; it returns numpy arrays (a tuple for a tuple result).

    Calls from several threads are safe: they run one at a time (an
    executable's buffers are its own), and the GIL is released while one
    runs, so other Python threads go on meanwhile. Arguments are read where
    they lie (no copy) when C-contiguous in the parameter's type: do not
    change them while a call runs.
    """

    def __init__(self, compiled, name):
        self._compiled = compiled
        self.name = name
        self.parameters = compiled.parameters  # [(name, element type, dims)]
        # What an argument already in shape looks like, by parameter: numpy
        # dtype (None: passed as bits, or no numpy type), dims, type name.
        self._expected = [
            (None if t in _AS_BITS or t not in _NUMPY_OF else _NUMPY_OF[t], tuple(d), t)
            for _, t, d in self.parameters]

    @property
    def hlo(self):
        """The module after Seam's graph passes, as HLO text."""
        return self._compiled.hlo

    @property
    def plan(self):
        """The fusion plan, as `seam plan` prints it."""
        return self._compiled.plan

    @property
    def stats(self):
        """Kernels, library calls, interpreted ops, compile times, memory."""
        return self._compiled.stats

    def _argument(self, index, value):
        if type(value) is not np.ndarray and not isinstance(value, (bool, int, float, complex)):
            if not type(value).__module__.startswith("torch") and hasattr(value, "__array__"):
                value = np.asarray(value)  # JAX arrays: a view, kept by JAX after the first
        dtype, dims, type_name = self._expected[index]
        if (type(value) is np.ndarray and value.dtype == dtype and value.shape == dims
                and value.flags.c_contiguous):
            return value, type_name  # the common case, checked in few steps
        return self._convert(index, value)

    def _convert(self, index, value):
        name, type_name, dims = self.parameters[index]
        what = f"argument {index} (parameter '{name}')"
        if type_name == "tuple":
            raise ValueError(f"{what} is a tuple parameter, which seam.compile cannot take")
        if isinstance(value, (bool, int, float, complex)):
            array = np.asarray(value, dtype=numpy_dtype(type_name))
        else:
            array = as_numpy(value, what)
        got = seam_dtype(array.dtype)
        if got != type_name or list(array.shape) != list(dims):
            shape = ",".join(str(d) for d in array.shape)
            raise ValueError(f"{what} is {got or array.dtype}[{shape}]; the module takes "
                             f"{type_name}[{','.join(str(d) for d in dims)}]")
        if not array.flags.c_contiguous:  # (np.ascontiguousarray would make a 0-d array 1-d)
            array = np.array(array, order="C")
        if type_name in _AS_BITS:
            array = array.view(_AS_BITS[type_name])
        return array, type_name

    def __call__(self, *arguments):
        if len(arguments) != len(self.parameters):
            raise TypeError(f"{self.name} takes {len(self.parameters)} argument(s) "
                            f"({', '.join(p[0] for p in self.parameters)}); "
                            f"given {len(arguments)}")
        converted = [self._argument(i, a) for i, a in enumerate(arguments)]
        return _from_result(self._compiled.run(converted))

    def __repr__(self):
        return (f"<seam.Executable {self.name}: {len(self.parameters)} parameter(s), "
                f"backend {self.stats['backend']}>")


def _hlo_text(hlo):
    """(text, name for messages) of HLO given as text or as a path."""
    # A one-line string without braces cannot be a module: a path.
    if isinstance(hlo, os.PathLike) or (isinstance(hlo, str) and "\n" not in hlo
                                        and "{" not in hlo):
        path = os.fspath(hlo)
        with open(path, encoding="utf-8") as f:
            return f.read(), path
    if isinstance(hlo, bytes):
        hlo = hlo.decode("utf-8")
    if not isinstance(hlo, str):
        raise TypeError(f"hlo is a {type(hlo).__name__}; give HLO text or a path to it")
    return hlo, "<text>"


def compile(hlo, *, backend="cpu", fusion="stitch", passes="default",
            excess_precision=True):
    """Compiles one XLA HLO module (text, or a path to a file of it).

    backend: "cpu" (the default), "cuda" (an NVIDIA GPU) or "interp" (the
    reference interpreter). fusion: "stitch", "xla" or "none". passes: a
    pass pipeline spec ("default", "none", or as `seam passes` lists).
    excess_precision: on the CPU, bf16/f16 arithmetic stays in f32 inside
    a kernel (as in XLA). The JIT and module caches are the command line's.
    A module Seam cannot run raises here, with Seam's message.
    """
    text, name = _hlo_text(hlo)
    compiled = _core.compile(text, name, backend, fusion, passes, bool(excess_precision))
    return Executable(compiled, name)
