#!/usr/bin/env bash
# Creates (once) a venv at $1 (default build/trainenv) holding what training
# needs beside the bindings: the `train` extra of pyproject.toml (Ray RLlib,
# torch, stable-baselines3...) and pytest. Seam itself comes from the build
# tree (PYTHONPATH=build/python), so nothing is compiled a second time; a
# user installs everything with `pip install .[train]` instead.
set -euo pipefail
cd "$(dirname "$0")/.."
venv="${1:-build/trainenv}"
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
mapfile -t packages < <(python3 - <<'PY'
import tomllib
with open("pyproject.toml", "rb") as f:
    project = tomllib.load(f)["project"]
for requirement in project["dependencies"] + project["optional-dependencies"]["train"] + ["pytest"]:
    print(requirement)
PY
)
"$venv/bin/python" -c "import ray.rllib, torch, gymnasium, stable_baselines3, sb3_contrib, pytest" 2>/dev/null ||
  "$venv/bin/pip" install -q --disable-pip-version-check "${packages[@]}"
