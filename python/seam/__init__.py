"""Seam: an optimizing compiler for the memory-intensive part of deep-learning
programs. It reads XLA HLO, runs graph passes, stitches memory-intensive
operators into few kernels and runs whole modules on the CPU (or an NVIDIA
GPU).

    import seam, jax
    f = seam.jit(jax.nn.softmax)      # JAX functions, compiled by Seam
    exe = seam.compile("model.hlo")   # or an HLO module, text or path
    seam.torch.compile(module)        # PyTorch modules, through torchax
    seam.gym                          # the pass-ordering gym (needs gymnasium)
"""

__version__ = "0.2.0"

from ._api import Executable, compile  # noqa: E402
from ._jit import Jitted, jit  # noqa: E402


def __getattr__(name):
    # The gym needs gymnasium and seam.torch needs torch and torchax, which
    # the compiler does not: imported on use.
    if name in ("gym", "torch"):
        import importlib

        return importlib.import_module("." + name, __name__)
    raise AttributeError(f"module 'seam' has no attribute {name!r}")


__all__ = ["Executable", "Jitted", "compile", "jit", "__version__"]
