#!/bin/bash
# Builds the CUDA backend on the GPU machine, runs the cuda test suite and the
# benchmark table; logs go to $OUT. Usage (from the repository root, through
# the device tool): source .devdeps/env.sh && engine/cuda/device-run.sh [bench]
# where bench is a SHARPSKY_CUDA_BENCH list (it,gets,direct) or "none".
set -o pipefail
bench=${1:-it,gets,direct}
out=${OUT:-/tmp/out}
mkdir -p "$out"
nvidia-smi --query-gpu=name,memory.total,memory.used,clocks.sm,clocks.max.sm,power.limit --format=csv > "$out/gpu.txt" 2>&1
cat "$out/gpu.txt"
meson setup /tmp/b -Dgui=disabled -Dcuda=enabled > "$out/setup.log" 2>&1 || { tail -30 "$out/setup.log"; exit 1; }
ninja -C /tmp/b -j16 tests/test-cuda > "$out/build.log" 2>&1 || { grep -E "error|FAILED" "$out/build.log" | head -40; exit 1; }
if [ "${2:-}" != notests ]; then
echo "== tests"
timeout 300 /tmp/b/tests/test-cuda --tap 2>&1 | tee "$out/tests.log" | grep -E "^(ok|not ok)|ERROR|Bail|GETS|relative|stopped|objective" | head -60
fi
if [ "$bench" != none ]; then
  echo "== bench $bench"
  SHARPSKY_CUDA_BENCH=$bench timeout 420 /tmp/b/tests/test-cuda -p /cuda/bench 2>&1 | tee "$out/bench.log" | grep -E "BENCH|ERROR|not ok"
fi

if [ "${3:-}" = cli ]; then
  echo "== cli"
  if ninja -C /tmp/b -j16 app/sharpsky-cli > "$out/build-cli.log" 2>&1; then
    cli=/tmp/b/app/sharpsky-cli
    for b in cuda cpu; do
      echo "-- seed 000 section 7, backend $b"
      timeout 120 $cli run --psf box:5 --ratio 0.5 --alpha 1e-3 --iters 300 --nonneg --backend $b --quiet 2>&1 | tee -a "$out/cli.log" | tail -8
    done
    for s in cpadmm fista; do
      timeout 120 $cli bench --backend cuda --solver $s --size 1024 --iters 300 2>&1 | tee -a "$out/cli.log" | tail -12
    done
    timeout 120 $cli bench --backend cuda --solver direct --size 128 --direct-method inverse 2>&1 | tee -a "$out/cli.log" | tail -12
  else
    grep -E "error|FAILED" "$out/build-cli.log" | head -20
  fi
fi
