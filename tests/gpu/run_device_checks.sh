#!/usr/bin/env bash
# One run on a machine with an NVIDIA GPU: install from the working tree (with CuPy),
# run the gpu-marked tests and the GPU allocator benchmark, print a compact summary.
# Usage (repo root): bash tests/gpu/run_device_checks.sh   (writes logs to ${OUT:-/tmp})
set -uo pipefail
OUT=${OUT:-/tmp}
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
python3 -m pip install -q -e ".[test,gpu]" 2>&1 | tail -3
python3 -m pytest -m gpu -q -rs --no-header 2>&1 | tee "$OUT/gpu_tests.log" | tail -25
python3 asv_bench/run_gpu_figures.py 2>&1 | tee "$OUT/gpu_bench.log" | tail -30
echo "== summary"
grep -E "passed|failed|error" "$OUT/gpu_tests.log" | tail -1
