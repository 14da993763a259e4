#!/usr/bin/env bash
# One prepared GPU check for new real-bug rounds (issues 16 and 18). From the repository root,
# with libcst's wheel for the machine's Python in .whl/ (the device image has no libcst):
#
#     OUT=/some/folder bash bench/gpu_rounds.sh bench/rounds/round9 bench/rounds/round10
#
# 1. the machine and its torch;
# 2. the op table's multi-view probe on CUDA (tools/gen_torch_ops.py --device cuda --isolate
#    --only ...): which ops refuse an in-place write to one of their views there;
# 3. for each round: tools/confirm_score.py with every run on CUDA (bench/confirm_device.py),
#    then on the same machine's CPU, each within what is left of BUDGET seconds.
# DEVICE=cpu skips the CUDA steps (how it is tested without a GPU). Files in $OUT: gpu.log,
# multi_view_cuda.json, gen.log, <round>_cuda.log, <round>_cpu.log.
set -u -o pipefail

OUT=${OUT:-/tmp/gpu_rounds_out}
PY=${PYTHON:-python3}
BUDGET=${BUDGET:-300}
DEVICE=${DEVICE:-cuda}
JOBS=${JOBS:-12}
START=$(date +%s)
mkdir -p "$OUT"
SCRATCH=$(mktemp -d)

left() { echo $((BUDGET - ($(date +%s) - START))); }

step() {  # step LOG SECONDS COMMAND...: run within the budget, output to $OUT/LOG
    local log=$1 limit=$2
    shift 2
    local remaining
    remaining=$(left)
    [ "$remaining" -lt "$limit" ] && limit=$remaining
    if [ "$limit" -le 5 ]; then
        echo "(skipped: no time left)" >"$OUT/$log"
        return 0
    fi
    timeout -k 5 "$limit" "$@" >"$OUT/$log" 2>&1
    [ $? = 124 ] && echo "(stopped after ${limit}s)" >>"$OUT/$log"
    return 0
}

{
    date -u
    command -v nvidia-smi >/dev/null && nvidia-smi -L
    "$PY" -c 'import sys, torch; print(sys.version.split()[0], torch.__version__, torch.cuda.is_available())'
} >"$OUT/gpu.log" 2>&1

if ! "$PY" -c 'import libcst' 2>/dev/null; then
    "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir \
        --target "$SCRATCH/site" .whl/*.whl >>"$OUT/gpu.log" 2>&1
    export PYTHONPATH="$SCRATCH/site${PYTHONPATH:+:$PYTHONPATH}"
fi
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"

if [ "$DEVICE" != cpu ]; then
    step gen.log 60 "$PY" tools/gen_torch_ops.py --device cuda --isolate \
        --only unbind,chunk,split,split_with_sizes,tensor_split,hsplit \
        --output "$OUT/multi_view_cuda.json"
fi

for round in "$@"; do
    name=$(basename "$round")
    if [ "$DEVICE" != cpu ]; then
        step "${name}_cuda.log" 150 "$PY" bench/confirm_device.py --device cuda "$round" \
            --jobs "$JOBS" --timeout 40
    fi
    step "${name}_cpu.log" 150 "$PY" tools/confirm_score.py "$round" --jobs "$JOBS" --timeout 40
done
echo "done in $(($(date +%s) - START)) s" >>"$OUT/gpu.log"
