#!/usr/bin/env bash
# Creates (once) the Python environment the bindings build and test with:
# a venv at $1 (default build/pyenv) holding numpy, nanobind, gymnasium,
# pytest, and JAX for seam.jit's tests. JAX is pinned to the version the
# conformance goldens and workloads are made with (0.10.2: the newest for
# the machines' Python 3.11; JAX 0.12 needs 3.12). PPO training needs more
# (torch, stable-baselines3): see python/README.md.
set -euo pipefail
cd "$(dirname "$0")/.."
venv="${1:-build/pyenv}"
packages=(numpy gymnasium nanobind pytest "jax[cpu]==0.10.2" "jaxlib==0.10.2" "ml_dtypes==0.6.0")
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
"$venv/bin/python" - <<'PY' 2>/dev/null ||
import numpy, gymnasium, nanobind, pytest, ml_dtypes
import jax
assert jax.__version__ == "0.10.2"
PY
  "$venv/bin/pip" install -q --disable-pip-version-check "${packages[@]}"
