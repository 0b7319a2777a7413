#!/usr/bin/env bash
# On the lent GPU machine, from the repository root: install the wheels carried in .device/
# (made by prepare.py), unpack SciFact, run the GPU benchmark, keep its log in $OUT.
# Extra arguments go to bench_harness_dense_gpu.py (e.g. --repeats 3).
set -uo pipefail
cd "$(dirname "$0")/../../.."
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .device/whl/*.whl || exit 1
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1
scifact=()
if [ -f .device/scifact.tar.gz ]; then
    tar -xzf .device/scifact.tar.gz -C /tmp && scifact=(--scifact /tmp/scifact)
fi
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
log="${OUT:-/tmp}/gpu-bench.log"
python3 tests/benchmarks/bench_harness_dense_gpu.py --model .device/model "${scifact[@]}" "$@" \
    2>&1 | tee "$log"
exit "${PIPESTATUS[0]}"
