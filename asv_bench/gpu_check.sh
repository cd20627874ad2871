#!/usr/bin/env bash
# The GPU checks, as one prepared script for a machine with an NVIDIA GPU (run from the repo root):
# the CUDA test suite on the real device, then the comparison on cuda (jitgrad vs PyTorch CUDA
# when a CUDA build of torch is installed). Writes everything under ${OUT:-gpu-out}.
set -uo pipefail
out="${OUT:-gpu-out}"
mkdir -p "$out"
python -m pip install -q '.[test,cuda]' 2>&1 | tail -2
nvidia-smi > "$out/nvidia-smi.txt" 2>&1 || true
python -c "import jitgrad; print('cuda available:', jitgrad.cuda.is_available(), jitgrad.cuda.device_count())" \
    | tee "$out/available.txt"
JITGRAD_TEST_CUDA=1 timeout 300 python -m pytest -p no:cacheprovider -o addopts= -q -x tests/cuda \
    > "$out/tests.txt" 2>&1; echo "tests rc=$?" | tee -a "$out/tests.txt"
tail -5 "$out/tests.txt"
timeout 240 python asv_bench/compare.py --device cuda --frameworks jitgrad,torch \
    --workloads W2,W3,W4,W5h,W8 --quick --out "$out/compare" > "$out/compare.txt" 2>&1
echo "compare rc=$?"; tail -30 "$out/compare.txt"
