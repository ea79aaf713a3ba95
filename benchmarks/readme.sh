#!/usr/bin/env bash
# Every figure of README's "Performance" section, from one command, on one day:
#
#   QT_QPA_PLATFORM=offscreen bash benchmarks/readme.sh [OUT_DIR] [--quick]
#
# Each benchmark prints its own table with its reference measured in the same run
# (torchviz + dot, plain Python, to_svg); this script runs them one after another,
# writes each one's output under OUT_DIR (default: bench-out/<date>) and notes the
# machine, the date and the load average before and after each, since these machines
# are shared and a figure means little without the load it was measured at.
# --quick runs the short variants (a few minutes in all) to check the script itself.
set -uo pipefail
cd "$(dirname "$0")/.."

out="${1:-bench-out/$(date +%Y-%m-%d)}"
quick=0
for arg in "$@"; do [[ "$arg" == "--quick" ]] && quick=1; done
[[ "$out" == "--quick" ]] && out="bench-out/$(date +%Y-%m-%d)"
mkdir -p "$out"
export QT_QPA_PLATFORM="${QT_QPA_PLATFORM:-offscreen}"

{
  echo "date: $(date -u +%Y-%m-%dT%H:%MZ)"
  echo "machine: $(uname -m), $(nproc) cores, $(python3 -c 'import platform; print("Python", platform.python_version())')"
  python3 -c 'import torch, PySide6; print("torch", torch.__version__, "PySide6", PySide6.__version__)'
  command -v dot >/dev/null && dot -V 2>&1
} | tee "$out/machine.txt"

# gradviz byte-compiled, as an installed one is (pip compiles a wheel on install): a
# checkout run where PYTHONDONTWRITEBYTECODE is set compiles every module in every
# process, and confined kernels never write bytecode (see benchmarks/_bytecode.py)
{ python3 benchmarks/_bytecode.py gradviz 2>&1 \
  || echo "bytecode: NOT written (the figures below include compiling gradviz at each start)"; } \
  | tee -a "$out/machine.txt"

run() {  # run NAME CMD...: one benchmark, its output in $out/NAME.txt
  local name="$1"; shift
  echo
  echo "=== $name: $*"
  echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)" | tee "$out/$name.txt"
  local start=$SECONDS
  "$@" 2>&1 | tee -a "$out/$name.txt"
  local rc=${PIPESTATUS[0]}
  echo "load after: $(cut -d' ' -f1-3 /proc/loadavg); $((SECONDS - start)) s; exit $rc" \
    | tee -a "$out/$name.txt"
}

if ((quick)); then
  run peers python3 benchmarks/bench_peers.py --quick --repeat 1 --json "$out/peers.json"
  run export python3 benchmarks/bench_export.py --graphs resnet50 --repeat 1 --json "$out/export.json"
  run steps python3 benchmarks/bench_steps.py --steps 5 --sizes lesson
  exit 0
fi

# Against torchviz: every model of the table, then the two --big chains (gradviz and
# torchviz only: torchlens takes minutes on them)
run peers python3 benchmarks/bench_peers.py --repeat 3 --json "$out/peers.json"
run peers-big python3 benchmarks/bench_peers.py --graphs chain50k,chain100k \
  --tools gradviz,torchviz --repeat 2 --json "$out/peers-big.json"
# Exports: to_svg, to_html and the notebook's payload per model
run export python3 benchmarks/bench_export.py --repeat 3 --json "$out/export.json"
# Step to repaint in the real window, both engines
run steps python3 benchmarks/bench_steps.py --steps 30 --sizes lesson 2k 10k
# ...and the lesson from an idle window, to the end of the last paint each step caused,
# three times: on these shared machines one run's median moves by 20% from the next
for n in 1 2 3; do
  run "steps-settled-$n" python3 benchmarks/bench_steps.py --steps 30 --sizes lesson --settled
done
# Big graphs and cold start
run scale python3 benchmarks/bench_scale.py --layers --no-dot --big 10000 50000 100000 --repeat 2
run cold-start python3 benchmarks/bench_cold_start.py --runs 7
# Trusted mode against plain python
run trusted python3 benchmarks/bench_trusted.py --repeat 4
echo
echo "all outputs: $out"
