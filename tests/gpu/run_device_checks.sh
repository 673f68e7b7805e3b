#!/usr/bin/env bash
# One run on a machine with an NVIDIA GPU and no package registry: build in place, run the
# gpu-marked tests, the GPU figures (allocator; the MLP step beside PyTorch CUDA) and
# both training jobs on the GPU at a small size, then print a compact summary.
# Usage (repo root): bash tests/gpu/run_device_checks.sh   (writes logs to ${OUT:-/tmp})
set -uo pipefail
OUT=${OUT:-/tmp}
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
python3 setup.py build_ext --inplace -j 16 > "$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
python3 -m pytest -m gpu -q -rs --no-header -p no:cacheprovider 2>&1 | tee "$OUT/gpu_tests.log" | tail -25
timeout 300 python3 asv_bench/run_gpu_figures.py 2>&1 | tee "$OUT/gpu_bench.log" | tail -30
for job in sparse mlp; do
    timeout 120 python3 -m runtime train $job --ctx gpu --epochs 1 --rows 20000 --quiet \
        2>&1 | tee "$OUT/gpu_train_$job.log" | tail -12
done
echo "== summary"
grep -E "passed|failed|error" "$OUT/gpu_tests.log" | tail -1
