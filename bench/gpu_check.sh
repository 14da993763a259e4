#!/usr/bin/env bash
# One prepared check for a GPU machine (issues 16 and 18): what torch saves for backward on
# CUDA that it does not save on CPU, and whether an in-place write after a recurrent step
# raises there. Run from the repository root:
#
#     OUT=/some/folder bash bench/gpu_check.sh
#
# Needs only python3 with torch (no internet, no inplace_lint install, no libcst; a step that
# needs them is skipped). Without CUDA the CUDA steps are skipped and the rest still runs.
# Writes at most 7 files to $OUT, each well under 16 MiB:
#   gpu_check.log          everything printed below
#   torch_ops_cpu.json     the op table probed on CPU (--detail: with module_args)
#   torch_ops_cuda.json    the same on CUDA, probes isolated in subprocess batches
#   device_diff.json       tools/ops_by_device.py: what differs, per device
#   torch_ops_union.json   the union table with a "device_differences" block
#   dynamic_probe.log      in-place writes after LSTMCell/GRUCell/GRU/LSTM steps, per device
#   confirm.log            inplace-lint lint + confirm on an LSTMCell target (if importable)
#
# Knobs (environment): PYTHON (python3), BUDGET (seconds for the whole script, 330),
# BATCH (probes per worker process, 100), JOBS_CUDA (10), JOBS_CPU (4), PROBE_TIMEOUT (45).
set -u -o pipefail

OUT=${OUT:-/tmp/gpu_check_out}
PY=${PYTHON:-python3}
BUDGET=${BUDGET:-330}
BATCH=${BATCH:-100}
JOBS_CUDA=${JOBS_CUDA:-10}
JOBS_CPU=${JOBS_CPU:-4}
PROBE_TIMEOUT=${PROBE_TIMEOUT:-45}
mkdir -p "$OUT"
SCRATCH=$(mktemp -d)
trap 'rm -rf "$SCRATCH"' EXIT

step() { printf '\n== [%3ds] %s\n' "$SECONDS" "$*"; }
left() { echo $((BUDGET - SECONDS)); }

write_probe() {
    cat >"$SCRATCH/probe.py" <<'EOF'
"""Which in-place writes after a recurrent step break backward, per device (plain torch)."""
import torch
from torch import nn


def cell_case(kind, target):
    def run(device):
        cell = getattr(nn, kind)(4, 5).to(device)
        x, h, c = (torch.rand(2, n, device=device, requires_grad=True).clone() for n in (4, 5, 5))
        if kind == "LSTMCell":
            h1, c1 = cell(x, (h, c))
            loss = h1.sum() + c1.sum()
        else:
            h1 = c1 = cell(x, h)
            loss = h1.sum()
        return loss, {"x": x, "h": h, "c": c, "h_new": h1, "c_new": c1}[target]

    return run


def rnn_case(kind, target):
    def run(device):
        rnn = getattr(nn, kind)(4, 5).to(device)
        x = torch.rand(3, 2, 4, device=device, requires_grad=True).clone()
        out, _ = rnn(x)
        return out.sum(), {"x": x, "out": out}[target]

    return run


CASES = [(f"LSTMCell write {t}", cell_case("LSTMCell", t)) for t in ("c_new", "h_new", "c", "h", "x")]
CASES += [(f"GRUCell write {t}", cell_case("GRUCell", t)) for t in ("h_new", "h", "x")]
CASES += [(f"RNNCell write {t}", cell_case("RNNCell", t)) for t in ("h_new", "h", "x")]
CASES += [(f"{k} write {t}", rnn_case(k, t)) for k in ("GRU", "LSTM", "RNN") for t in ("out", "x")]


def outcome(case, device):
    torch.manual_seed(0)
    try:
        loss, victim = case(device)
        with torch.no_grad():
            victim.mul_(0.5)  # the write after the step: a decay, a mask, a state update
        loss.backward()
        return "clean"
    except RuntimeError as error:
        if "modified by an inplace operation" in str(error):
            return "RAISES"
        return "error: " + str(error).splitlines()[0][:60]


devices = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
cudnn = torch.backends.cudnn.version() if torch.cuda.is_available() else None
print("torch", torch.__version__, "devices", devices, "cudnn", cudnn)
print(f"{'case':24}" + "".join(f"{d:>10}" for d in devices))
for name, case in CASES:
    print(f"{name:24}" + "".join(f"{outcome(case, d):>10}" for d in devices), flush=True)
EOF
    cat >"$SCRATCH/lstm_target.py" <<'EOF'
import torch
from torch import nn

device = "cuda" if torch.cuda.is_available() else "cpu"
torch.manual_seed(0)
cell = nn.LSTMCell(4, 5).to(device)
x = torch.rand(2, 4, device=device)
h = torch.zeros(2, 5, device=device)
c = torch.zeros(2, 5, device=device)
h1, c1 = cell(x, (h, c))
loss = h1.sum() + c1.sum()
c1.mul_(0.5)  # decay the new cell state in place after the step
loss.backward()
print("backward ran on", device)
EOF
}

generate() {  # generate DEVICE JOBS DEADLINE: the op table for one device into $OUT
    local device=$1 jobs=$2 deadline=$3
    timeout -k 10 $((deadline + 60)) "$PY" tools/gen_torch_ops.py --device "$device" --isolate \
        --detail --jobs "$jobs" --batch-size "$BATCH" --probe-timeout "$PROBE_TIMEOUT" \
        --deadline "$deadline" --verbose --output "$OUT/torch_ops_$device.json"
}

main() {
    local status=0 cuda=0
    step "machine"
    date -u
    (nvidia-smi -L && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv) \
        || echo "nvidia-smi: not available"
    echo "cores: $(nproc)"
    "$PY" -c 'import sys, torch; print("python", sys.version.split()[0], "torch", torch.__version__,
"cuda", torch.version.cuda, "available", torch.cuda.is_available(),
torch.cuda.get_device_name(0) if torch.cuda.is_available() else "")' || return 1
    "$PY" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' && cuda=1

    local deadline=$((BUDGET - 120 - SECONDS)) devices=cpu
    [ "$cuda" = 1 ] && devices="cpu and cuda at once"
    step "op tables ($devices; probes stop after ${deadline}s)"
    generate cpu "$JOBS_CPU" "$deadline" >"$SCRATCH/cpu.log" 2>&1 &
    local cpu_pid=$!
    if [ "$cuda" = 1 ]; then
        generate cuda "$JOBS_CUDA" "$deadline" 2>&1 | sed -u 's/^/[cuda] /' || status=1
    else
        echo "CUDA not available: no CUDA table"
    fi
    wait "$cpu_pid" || status=1
    sed 's/^/[cpu] /' "$SCRATCH/cpu.log"
    echo "tables done at ${SECONDS}s"

    if [ "$cuda" = 1 ] && [ -s "$OUT/torch_ops_cpu.json" ] && [ -s "$OUT/torch_ops_cuda.json" ]; then
        step "differences (tools/ops_by_device.py)"
        "$PY" tools/ops_by_device.py "$OUT/torch_ops_cpu.json" "$OUT/torch_ops_cuda.json" \
            --output "$OUT/device_diff.json" --merge "$OUT/torch_ops_union.json" || status=1
    else
        step "differences: skipped (needs both tables)"
    fi

    write_probe
    step "dynamic probe: in-place writes after recurrent steps ($(left)s left)"
    if [ "$(left)" -gt 20 ]; then
        timeout -k 5 $(($(left) > 60 ? 60 : $(left) - 10)) "$PY" "$SCRATCH/probe.py" 2>&1 \
            | tee "$OUT/dynamic_probe.log" || status=1
    else
        echo "skipped: out of time"
    fi

    step "inplace-lint on an LSTMCell target that writes its new cell state ($(left)s left)"
    if [ "$cuda" != 1 ]; then
        echo "skipped: CUDA not available (the target is clean on CPU)"
    elif ! "$PY" -c 'import libcst, inplace_lint.dynamic' 2>/dev/null; then
        echo "skipped: libcst or inplace_lint not importable here"
    elif [ "$(left)" -le 30 ]; then
        echo "skipped: out of time"
    else
        {
            echo "\$ inplace-lint $SCRATCH/lstm_target.py (static, op table from CPU)"
            timeout -k 5 30 "$PY" -m inplace_lint "$SCRATCH/lstm_target.py"
            echo "exit $?"
            echo "\$ inplace-lint confirm $SCRATCH/lstm_target.py"
            timeout -k 5 $(($(left) - 15)) "$PY" -m inplace_lint confirm "$SCRATCH/lstm_target.py"
            echo "exit $?"
        } 2>&1 | tee "$OUT/confirm.log"
    fi

    step "done in ${SECONDS}s (budget ${BUDGET}s), status $status"
    ls -la "$OUT"
    return "$status"
}

main 2>&1 | tee "$OUT/gpu_check.log"
exit "${PIPESTATUS[0]}"
