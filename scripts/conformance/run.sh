#!/usr/bin/env bash
# Regenerates the conformance goldens in tests/conformance with a pinned JAX:
#   scripts/conformance/run.sh                 every case and the corpus goldens
#   scripts/conformance/run.sh --only NAME...  just those cases
#   scripts/conformance/run.sh --list          the case names
#   scripts/conformance/run.sh --check-large   compare build/seam with XLA on the
#                                              large corpus modules; writes nothing
# The virtual environment lives in .venv-conformance at the repository root
# (git-ignored); SEAM_CONFORMANCE_VENV overrides where.
set -euo pipefail

JAX_VERSION=0.10.2
ML_DTYPES_VERSION=0.6.0
NUMPY_VERSION=2.4.6

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
venv="${SEAM_CONFORMANCE_VENV:-$root/.venv-conformance}"

if [[ ! -x "$venv/bin/python" ]]; then
  python3 -m venv "$venv"
fi
if ! "$venv/bin/python" -c "import jax, jaxlib, sys; sys.exit(
    not (jax.__version__ == jaxlib.__version__ == '$JAX_VERSION'))" 2>/dev/null; then
  "$venv/bin/pip" install --quiet "jax[cpu]==$JAX_VERSION" "jaxlib==$JAX_VERSION" \
    "ml_dtypes==$ML_DTYPES_VERSION" "numpy==$NUMPY_VERSION"
fi

cd "$root/scripts/conformance"
python="$venv/bin/python"
case "${1:-}" in
  --check-large)
    exec "$python" corpus_goldens.py --check-with-seam ;;
  --only|--list)
    exec "$python" make_goldens.py "$@" ;;
  "")
    "$python" make_goldens.py
    "$python" corpus_goldens.py ;;
  *)
    echo "usage: $0 [--only NAME... | --list | --check-large]" >&2
    exit 2 ;;
esac
