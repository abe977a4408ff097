"""seam.torch.compile: PyTorch modules and functions compiled by Seam.

torchax (PyPI; `pip install '.[torch]'`) runs PyTorch code as a JAX
function, which seam.jit compiles like any other: so the same caching (one
executable per call signature), and torch tensors in and out. A module's
parameters and buffers are read afresh on every call (an optimizer's
updates between calls are seen), passed to the compiled function as
arguments, not baked into it as constants.
"""

import numpy as np

from . import _api, _jit


def _require():
    try:
        import torch
        import torchax
    except ImportError as e:  # pragma: no cover - depends on the install
        raise ImportError("seam.torch needs torch and torchax: pip install '.[torch]'") from e
    return torch, torchax


def _to_numpy(value):
    return _api.as_numpy(value, "an argument") if hasattr(value, "shape") else value


def _to_torch(torch, value):
    if hasattr(value, "__dlpack__"):
        return torch.from_dlpack(value)  # shares the JAX array's memory
    return value


class Compiled:
    """A module or function compiled by Seam per call signature (see
    seam.torch.compile)."""

    def __init__(self, model, backend, fusion, passes):
        torch, torchax = _require()
        self._torch = torch
        self._model = model
        if isinstance(model, torch.nn.Module):
            states, forward = torchax.extract_jax(model)
            self._state_names = list(states)
            self._jitted = _jit.jit(lambda s, a, k: forward(s, a, k), backend=backend,
                                    fusion=fusion, passes=passes)
        else:
            self._state_names = None
            call = torchax.interop.call_torch
            self._jitted = _jit.jit(lambda a, k: call(model, *a, **k), backend=backend,
                                    fusion=fusion, passes=passes)

    def _states(self):
        model = self._model
        live = dict(model.named_buffers(remove_duplicate=False))
        live.update(model.named_parameters(remove_duplicate=False))
        return {name: _to_numpy(live[name]) for name in self._state_names}

    def __call__(self, *args, **kwargs):
        torch = self._torch
        args = tuple(_to_numpy(a) for a in args)
        kwargs = {k: _to_numpy(v) for k, v in kwargs.items()}
        with torch.no_grad():
            if self._state_names is None:
                out = self._jitted(args, kwargs)
            else:
                out = self._jitted(self._states(), args, kwargs)
        import jax

        return jax.tree_util.tree_map(lambda v: _to_torch(torch, v), out)


def compile(model, *, backend="cpu", fusion="stitch", passes="default"):
    """Compiles a torch.nn.Module (its forward) or a function of tensors
    with Seam, through torchax. Call the result as the model: torch tensors
    (or numpy arrays) in, torch tensors out. Inference only: gradients do
    not flow back through it."""
    return Compiled(model, backend, fusion, passes)
