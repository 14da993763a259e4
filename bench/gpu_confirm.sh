#!/usr/bin/env bash
# One prepared check of `inplace-lint confirm --device cuda` for a GPU machine (issue 16).
# Run from the repository root, with libcst's wheel for the machine's Python in .whl/
# (the device image has torch, pyyaml, timm and transformers but no libcst):
#
#     OUT=/some/folder bash bench/gpu_confirm.sh
#
# Steps, each within what is left of BUDGET seconds (default 170), CUDA steps skipped without
# CUDA (DEVICE=cpu runs the same steps on the CPU, as tested where there is no GPU):
#   1. the machine, and the .whl/ wheels installed into a scratch folder if libcst is missing;
#   2. confirm --device cuda on four small targets: a silent .data write (pass A's
#      silent-write check), an LSTMCell whose new cell state is written (raises on CUDA only),
#      a target that puts itself on CUDA (no --device), and a safe model; expected verdicts
#      are printed beside each;
#   3. the nondeterministic-kernel probe (bench/confirm_probe.py, index_add_ atomics), 20
#      runs on the device: the figure is the number of confirmations (must be 0);
#   4. tools/confirm_score.py through bench/confirm_device.py, every run on the device, in
#      order of what matters most while time lasts: round 6; the silent and custom-Function
#      cases (ipl005, ipl007); round 6 on the CPU of the same machine, to compare; the safe
#      cases (false confirmations); the other cases. A score cut short prints nothing.
# Files written to $OUT (8 at most): gpu_confirm.log (everything), targets.log, probe.log,
# round6_cuda.log, cases_silent_cuda.log, round6_cpu.log, cases_safe_cuda.log,
# cases_rest_cuda.log.
set -u -o pipefail

OUT=${OUT:-/tmp/gpu_confirm_out}
PY=${PYTHON:-python3}
BUDGET=${BUDGET:-170}
DEVICE=${DEVICE:-cuda}
JOBS=${JOBS:-12}
mkdir -p "$OUT"
SCRATCH=$(mktemp -d)
trap 'rm -rf "$SCRATCH"' EXIT
export PYTHONUNBUFFERED=1 PYTHONWARNINGS=ignore

step() { printf '\n== [%3ds] %s\n' "$SECONDS" "$*"; }
left() { echo $((BUDGET - SECONDS)); }
within() {  # within SECONDS CMD...: run CMD, stopped after SECONDS (never past the budget)
    local limit=$1
    shift
    [ "$limit" -gt "$(left)" ] && limit=$(left)
    if [ "$limit" -lt 10 ]; then
        echo "skipped: out of time"
        return 0
    fi
    timeout -k 5 "$limit" "$@"
    local rc=$?
    [ "$rc" = 124 ] && echo "(stopped after ${limit}s)"
    return "$rc"
}

write_targets() {
    cat >"$SCRATCH/silent_data.py" <<'EOF'
# expect: IPL007 confirmed at line 9 (pass A), the same as on CPU
import torch

torch.manual_seed(0)
w = torch.randn(4, 5, requires_grad=True)
x = torch.randn(3, 4)
h = torch.sigmoid(x @ w)
loss = h.sum()
h.data.mul_(2)  # a write autograd cannot see
loss.backward()
EOF
    cat >"$SCRATCH/lstm_cell.py" <<'EOF'
# expect on CUDA: confirmed at line 10 (the fused LSTMCell saves the new cell state);
# on CPU nothing is confirmed (CPU saves input, h and c only)
import torch
from torch import nn

cell = nn.LSTMCell(4, 5)
x, h, c = torch.rand(2, 4), torch.zeros(2, 5), torch.zeros(2, 5)
h1, c1 = cell(x, (h, c))
loss = h1.sum() + c1.sum()
c1.mul_(0.5)  # decay the new cell state in place
loss.backward()
EOF
    cat >"$SCRATCH/builds_on_cuda.py" <<'EOF'
# expect (no --device): confirmed at line 9, the model and inputs on CUDA where it exists
import torch
from torch import nn

where = "cuda" if torch.cuda.is_available() else "cpu"


def build():
    model = nn.Sequential(nn.Linear(8, 8), nn.Sigmoid(), nn.ReLU(inplace=True)).to(where)
    return model, torch.randn(4, 8, device=where)
EOF
    cat >"$SCRATCH/safe_model.py" <<'EOF'
# expect: nothing confirmed (exit 0)
import torch
from torch import nn


def build():
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(inplace=True), nn.Linear(16, 2))
    return model, torch.randn(4, 8)
EOF
}

score() {  # score NAME DEVICE SECONDS PATH...: tools/confirm_score.py, every run on DEVICE
    local name=$1 device=$2 limit=$3
    shift 3
    local label=$device
    [ "$device" = none ] && label=cpu
    step "score $name on $label: $* ($(left)s left)"
    within "$limit" "$PY" bench/confirm_device.py --device "$device" "$@" \
        --jobs "$JOBS" --timeout 40 2>&1 | tee "$OUT/${name}_${label}.log"
}

confirm() {  # confirm ARGS...: one CLI run, its exit code printed
    echo "\$ inplace-lint confirm $*"
    within 60 "$PY" -m inplace_lint confirm "$@"
    echo "exit $?"
}

main() {
    step "machine"
    date -u
    nvidia-smi -L 2>/dev/null || echo "nvidia-smi: not available"
    echo "cores: $(nproc)"
    if ! "$PY" -c 'import libcst' 2>/dev/null; then
        if ls .whl/*.whl >/dev/null 2>&1; then
            "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
                --target "$SCRATCH/site" .whl/*.whl || return 1
            export PYTHONPATH="$SCRATCH/site:${PYTHONPATH:-}"
        else
            echo "libcst missing and no .whl/ folder: see the header"
            return 1
        fi
    fi
    export PYTHONPATH="$PWD:${PYTHONPATH:-}"
    "$PY" -c 'import sys, torch, libcst, inplace_lint.dynamic
print("python", sys.version.split()[0], "torch", torch.__version__, "cuda", torch.version.cuda,
      "available", torch.cuda.is_available(),
      torch.cuda.get_device_name(0) if torch.cuda.is_available() else "")' || return 1
    write_targets
    if [ "$DEVICE" = cuda ] && ! "$PY" -c 'import torch, sys; sys.exit(not torch.cuda.is_available())'; then
        echo "CUDA not available: the CUDA steps are skipped (DEVICE=cpu runs them on the CPU)"
        confirm --device cuda "$SCRATCH/silent_data.py" 2>&1  # the one-line error, exit 2
        return 0
    fi

    step "confirm --device $DEVICE on small targets ($(left)s left)"
    {
        for target in silent_data.py lstm_cell.py; do
            head -2 "$SCRATCH/$target"
            confirm --device "$DEVICE" --confirmed-only "$SCRATCH/$target"
        done
        head -1 "$SCRATCH/builds_on_cuda.py"
        confirm --confirmed-only "$SCRATCH/builds_on_cuda.py::build"
        head -1 "$SCRATCH/safe_model.py"
        confirm --device "$DEVICE" "$SCRATCH/safe_model.py::build"
    } 2>&1 | tee "$OUT/targets.log"

    step "nondeterministic probe, 20 runs on $DEVICE ($(left)s left)"
    within 50 "$PY" bench/confirm_probe.py --device "$DEVICE" --runs 20 2>&1 | tee "$OUT/probe.log"

    score round6 "$DEVICE" 50 bench/rounds/round6
    score cases_silent "$DEVICE" 40 tests/cases/ipl005 tests/cases/ipl007
    [ "$DEVICE" != cpu ] && score round6 none 40 bench/rounds/round6
    score cases_safe "$DEVICE" 45 tests/cases/safe
    score cases_rest "$DEVICE" 120 tests/cases/ipl00[1234] tests/cases/ipl00[68]

    step "done in ${SECONDS}s (budget ${BUDGET}s)"
    ls -la "$OUT"
}

main 2>&1 | tee "$OUT/gpu_confirm.log"
exit "${PIPESTATUS[0]}"
