#!/usr/bin/env bash
# Measures the dot/convolution library candidates on the corpus models' shapes
# and writes bench/results/libraries.md (+ .json). See that file's top.
#
#   bench/libraries/run.sh            # full: every distinct shape, 15 rounds, 1 and 2 threads (~30 min)
#   bench/libraries/run.sh --quick    # 90% of each model's flops, 5 rounds (~3 min); report in build/
#
# Installs what is missing: apt packages (cmake g++ libopenblas-dev libdnnl-dev
# python3-venv), BLIS unpacked from its Debian package (not installed: that
# would register it as a libblas.so.3 alternative) and MKL from PyPI into a
# virtual environment, both under $LIBBENCH_CACHE (default ~/.cache/seam-libbench).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
build=${LIBBENCH_BUILD:-$here/build}
cache=${LIBBENCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/seam-libbench}
hlo=${LIBBENCH_HLO:-$repo/../shared/hlo}
[[ -d $hlo ]] || hlo=$repo/shared/hlo
mkl_version=${LIBBENCH_MKL_VERSION:-2026.2.0}

quick=0
for arg in "$@"; do
  case $arg in
    --quick) quick=1 ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    *) echo "unknown argument $arg" >&2; exit 2 ;;
  esac
done
if ((quick)); then
  rounds=5 warmup=1 coverage=0.9 max_gflop=0.25 min_ms=1
  report=$build/libraries-quick.md
else
  rounds=15 warmup=2 coverage=1.0 max_gflop=0.4 min_ms=2
  report=$repo/bench/results/libraries.md
fi

# --- packages -------------------------------------------------------------
sudo=""
[[ $(id -u) -eq 0 ]] || sudo=sudo
need=()
for p in cmake g++ libopenblas-dev libdnnl-dev python3-venv; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need+=("$p")
done
if ((${#need[@]})); then
  echo "== apt-get install ${need[*]}"
  $sudo apt-get update -q
  $sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${need[@]}"
fi

mkdir -p "$cache"
blis=/usr/lib/x86_64-linux-gnu/blis-pthread/libblis.so.4
if [[ ! -e $blis ]]; then
  blis=$cache/blis/usr/lib/x86_64-linux-gnu/blis-pthread/libblis.so.4
  if [[ ! -e $blis ]]; then
    echo "== BLIS: apt-get download libblis4-pthread, unpacked into $cache/blis"
    (cd "$cache" && apt-get download libblis4-pthread && dpkg -x libblis4-pthread_*.deb blis)
  fi
fi

venv=$cache/mkl-venv
mkl=$venv/lib/libmkl_rt.so.3
if [[ ! -e $mkl ]]; then
  echo "== MKL $mkl_version from PyPI into $venv (wheels kept in $cache/wheels)"
  python3 -m venv "$venv"
  "$venv/bin/pip" download -q -d "$cache/wheels" "mkl==$mkl_version"
  "$venv/bin/pip" install -q --no-index --find-links "$cache/wheels" "mkl==$mkl_version"
fi

# --- build ------------------------------------------------------------------
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
cmake -S "$here" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" >/dev/null

# --- shapes -----------------------------------------------------------------
python3 "$here/extract_shapes.py" --hlo "$hlo" --out "$build" --coverage "$coverage" --max-gflop "$max_gflop"

export LD_LIBRARY_PATH=$venv/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
bench=("$build/libbench" --cases "$build/cases.txt" --mkl "$mkl" --blis "$blis" --scratch "$build/scratch")

# --- facts ------------------------------------------------------------------
"$build/isa_peak" > "$build/isa_peak.json"

# --- correctness --------------------------------------------------------------
for t in 1 2; do
  echo "== verify, $t thread(s): small versions of every case against a naive double reference"
  "${bench[@]}" --threads $t --verify > "$build/verify-$t.jsonl"
done

# --- what oneDNN and MKL dispatch to (one bf16 GEMM, one f32 GEMM) -------------
big_bf16=$(python3 -c "
import json; d=json.load(open('$build/shapes.json'))
p=[p for p in d['problems'] if p['class']=='gemm_bf16' and p['timed']]
print(max(p, key=lambda p: p['flops'])['id'] if p else '')")
if [[ -n $big_bf16 ]]; then
  ONEDNN_VERBOSE=1 DNNL_VERBOSE=1 MKL_VERBOSE=1 "${bench[@]}" --threads 1 --rounds 1 --warmup 1 --only "$big_bf16",G1 \
    2>&1 | grep -E '^(onednn_verbose|dnnl_verbose|MKL_VERBOSE)' | grep -vE 'reorder' | sort | uniq -c | sort -rn | head -20 \
    > "$build/dispatch.txt" || true
fi

# --- compute-bound probe: is bf16 slower than f32 by the instruction? ------------
printf '%s\n' \
  'gemm id=P1 class=gemm_f32 dtype=f32 batch=1 m=1024 n=1024 k=1024 ta=0 tb=0' \
  'gemm id=P2 class=gemm_bf16 dtype=bf16 batch=1 m=1024 n=1024 k=1024 ta=0 tb=0' \
  'gemm id=P3 class=gemm_bf16 dtype=bf16 batch=1 m=1024 n=1024 k=1024 ta=0 tb=1' > "$build/probe.txt"
"$build/libbench" --cases "$build/probe.txt" --mkl "$mkl" --blis "$blis" --scratch "$build/scratch" \
  --threads 1 --rounds 7 > "$build/probe-1.jsonl"

# --- timing ---------------------------------------------------------------------
for t in 1 2; do
  echo "== timing, $t thread(s), $rounds rounds"
  "${bench[@]}" --threads $t --rounds $rounds --warmup $warmup --min-sample-ms $min_ms > "$build/results-$t.jsonl"
done

python3 "$here/report.py" --build "$build" --md "$report" --json "${report%.md}.json" --venv "$venv" --wheels "$cache/wheels" \
  --command "bench/libraries/run.sh$( ((quick)) && echo ' --quick')"
echo "== wrote $report"
