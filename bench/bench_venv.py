"""The Python environment the comparison scripts run in: bench/.venv
(git-ignored), holding the JAX pins of bench/workloads/make_workloads.py and
whatever else a script needs. A script calls `enter` before importing any of
those packages: it re-executes itself under the venv, creating the venv and
installing what is missing first; once everything is there that costs no
pip call. SEAM_BENCH_PYTHON=current keeps the running interpreter and its
packages, whatever their versions (a machine with JAX preinstalled and no
network, such as a lent GPU machine).
"""

import ast
import os
import shlex
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, ".."))
VENV = os.path.join(ROOT, "bench", ".venv")
VENV_PYTHON = os.path.join(VENV, "bin", "python")
MAKE_WORKLOADS = os.path.join(ROOT, "bench", "workloads", "make_workloads.py")


def read_pins():
  """JAX_VERSION and PINNED from make_workloads.py, evaluated without
  importing it (its import runs its own venv bootstrap)."""
  with open(MAKE_WORKLOADS) as f:
    tree = ast.parse(f.read(), MAKE_WORKLOADS)
  keep = [node for node in tree.body if isinstance(node, ast.Assign) and any(
      isinstance(t, ast.Name) and t.id in ("JAX_VERSION", "PINNED") for t in node.targets)]
  namespace = {}
  exec(compile(ast.Module(body=keep, type_ignores=[]), MAKE_WORKLOADS, "exec"), namespace)
  return namespace["JAX_VERSION"], namespace["PINNED"]


JAX_VERSION, PINNED = read_pins()


def dist_version(name):
  """The installed version of distribution `name`, or None."""
  from importlib import metadata
  try:
    return metadata.version(name)
  except metadata.PackageNotFoundError:
    return None


def missing_pins():
  """The JAX pins not installed at their pinned versions."""
  return [r for r in PINNED if dist_version(r.split("==")[0].split("[")[0]) != r.split("==")[1]]


def pip(*args):
  cmd = [sys.executable, "-m", "pip", "install", "--quiet", *args]
  print("+ " + shlex.join(cmd), file=sys.stderr)
  return subprocess.call(cmd)


def enter(script, missing, install, required=lambda missing: True, ready=lambda: None):
  """Runs `script` (its __file__) under the venv with what it needs.

  missing(): what is not installed yet; install(missing): installs it (in
  the venv); required(missing): whether what is still missing after
  installing stops the script; ready(): called once the script runs where
  it should (re-executing there is allowed, as for glibc tunables)."""
  name = os.path.basename(script)
  argv = [os.path.abspath(script), *sys.argv[1:]]
  if os.environ.get("SEAM_BENCH_PYTHON") == "current":
    ready()
    return
  if os.path.realpath(sys.prefix) == os.path.realpath(VENV):
    still = missing()
    if not still:
      ready()
      return
    if os.environ.get("SEAM_BENCH_INSTALLED"):
      print(f"{name}: still missing after installing: {' '.join(still)}", file=sys.stderr)
      if required(still):
        sys.exit(1)
      ready()
      return
    print(f"installing into {VENV}: {' '.join(still)}", file=sys.stderr)
    install(still)
    os.environ["SEAM_BENCH_INSTALLED"] = "1"
    os.execv(sys.executable, [sys.executable, *argv])
  if os.environ.get("SEAM_BENCH_BOOTSTRAPPED"):
    sys.exit(f"{name}: could not run inside {VENV}")
  if not os.path.exists(VENV_PYTHON):
    print(f"creating {VENV}", file=sys.stderr)
    subprocess.check_call(["python3", "-m", "venv", VENV])
  os.environ["SEAM_BENCH_BOOTSTRAPPED"] = "1"
  os.execv(VENV_PYTHON, [VENV_PYTHON, *argv])
