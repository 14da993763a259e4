#!/usr/bin/env bash
# One prepared GPU session (issues 16 and 18), for a lent machine with about 8 minutes to run.
# From the repository root, with libcst's wheel for the machine's Python in .whl/:
#
#     OUT=/some/folder bash bench/gpu_session.sh bench/rounds/round14 bench/rounds/round15
#
# 1. bench/gpu_check.sh: the op table probed on CPU and on CUDA with the machine's torch, what
#    differs (device_diff.json, the block the shipped table carries) and the recurrent probe;
# 2. the nondeterministic-kernel probe, 20 runs of `confirm` on CUDA (must confirm nothing);
# 3. confirm on each named round, every run on CUDA, then on the same machine's CPU;
# 4. confirm on tests/cases, every run on CUDA;
# 5. with OUTCOMES="FOLDER...", bench/device_outcomes.py: those case files run plainly on CPU and
#    on CUDA, and the files whose outcome differs (outcomes.log, outcomes.json).
# Knobs: CHECK_BUDGET (seconds for step 1, 170), BUDGET (the whole script, 470), JOBS (14),
# CHECK=0 skips steps 1-2, CPU=0 skips the CPU runs of step 3, OUTCOMES_BUDGET (120).
# DEVICE=cpu runs steps 3-4 on the CPU only (how it is tried where there is no GPU).
set -u -o pipefail

OUT=${OUT:-/tmp/gpu_session_out}
PY=${PYTHON:-python3}
BUDGET=${BUDGET:-470}
CHECK_BUDGET=${CHECK_BUDGET:-170}
DEVICE=${DEVICE:-cuda}
JOBS=${JOBS:-14}
mkdir -p "$OUT/check"
SCRATCH=$(mktemp -d)
trap 'rm -rf "$SCRATCH"' EXIT
export PYTHONUNBUFFERED=1 PYTHONWARNINGS=ignore

left() { echo $((BUDGET - SECONDS)); }
within() {  # within SECONDS LOG CMD...: run CMD into $OUT/LOG, never past the budget
    local limit=$1 log=$2
    shift 2
    [ "$limit" -gt "$(left)" ] && limit=$(left)
    printf '\n== [%3ds] %s (%ss)\n' "$SECONDS" "$log" "$limit" | tee -a "$OUT/session.log"
    if [ "$limit" -lt 10 ]; then
        echo "skipped: out of time" | tee "$OUT/$log"
        return 0
    fi
    timeout -k 5 "$limit" "$@" >"$OUT/$log" 2>&1
    [ $? = 124 ] && echo "(stopped after ${limit}s)" >>"$OUT/$log"
    tail -3 "$OUT/$log" | tee -a "$OUT/session.log"
}

if ! "$PY" -c 'import libcst' 2>/dev/null; then
    "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir \
        --target "$SCRATCH/site" .whl/*.whl >>"$OUT/session.log" 2>&1
    export PYTHONPATH="$SCRATCH/site${PYTHONPATH:+:$PYTHONPATH}"
fi
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
{
    date -u
    nvidia-smi -L 2>/dev/null || echo "nvidia-smi: not available"
    "$PY" -c 'import sys, torch, libcst; print(sys.version.split()[0], torch.__version__,
torch.cuda.is_available(), libcst.__file__)'
} 2>&1 | tee -a "$OUT/session.log"

CHECK=${CHECK:-1}
CPU=${CPU:-1}
if [ "$DEVICE" != cpu ] && [ "$CHECK" = 1 ]; then
    within $((CHECK_BUDGET + 20)) check.log env OUT="$OUT/check" BUDGET="$CHECK_BUDGET" \
        PYTHON="$PY" bash bench/gpu_check.sh
    within 60 probe_cuda.log "$PY" bench/confirm_probe.py --device cuda --runs 20
fi
for round in "$@"; do
    name=$(basename "$round")
    [ "$DEVICE" != cpu ] && within 70 "${name}_cuda.log" "$PY" bench/confirm_device.py \
        --device cuda "$round" --jobs "$JOBS" --timeout 40
    [ "$CPU" = 1 ] && within 60 "${name}_cpu.log" "$PY" tools/confirm_score.py "$round" --jobs "$JOBS" --timeout 40
done
[ "$DEVICE" != cpu ] && within 90 cases_cuda.log "$PY" bench/confirm_device.py --device cuda \
    tests/cases --jobs "$JOBS" --timeout 40
if [ -n "${OUTCOMES:-}" ] && [ "$DEVICE" != cpu ]; then
    # shellcheck disable=SC2086
    within $((${OUTCOMES_BUDGET:-120} + 30)) outcomes.log "$PY" bench/device_outcomes.py \
        $OUTCOMES --jobs "$JOBS" --budget "${OUTCOMES_BUDGET:-120}" --out "$OUT/outcomes.json"
fi
printf '\n== done in %ss (budget %ss)\n' "$SECONDS" "$BUDGET" | tee -a "$OUT/session.log"
