#!/usr/bin/env bash
# A CUDA context lost to a device-side assert (issue 16), on a lent GPU machine, from the
# repository root (libcst importable, as bench/gpu_session.sh arranges):
#
#     OUT=/some/folder bash bench/gpu_lost_context.sh [ROUND ...]
#
# 1. `inplace-lint confirm --device cuda` on three targets of one file: a real hazard, a target
#    whose indexing kernel asserts (an index out of range), and the hazard again. The first
#    must be confirmed, the second reported with torch's error, and the third named on one
#    line as not run (exit 1: a hazard was confirmed).
# 2. bench/confirm_device.py --device cuda on each ROUND: a case scored after another case's
#    device-side assert in the same worker is scored again in a fresh process.
set -u -o pipefail
OUT=${OUT:-/tmp/gpu_lost_context}
PY=${PYTHON:-python3}
JOBS=${JOBS:-14}
mkdir -p "$OUT"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
TARGETS=$(mktemp -d)
trap 'rm -rf "$TARGETS"' EXIT
cat >"$TARGETS/lost.py" <<'EOF'
import torch


def hazard():
    x = torch.randn(3, requires_grad=True)
    y = x.sigmoid()
    y.mul_(2)
    y.sum().backward()


def asserts():
    x = torch.zeros(3)
    index = torch.tensor([7])
    print(x[index].sum().item())
EOF
(
    cd "$TARGETS" || exit 2
    "$PY" -m inplace_lint confirm --device cuda lost.py::hazard lost.py::asserts lost.py::hazard
    echo "exit $?"
) >"$OUT/lost_context.log" 2>&1
cat "$OUT/lost_context.log"
for round in "$@"; do
    name=$(basename "$round")
    "$PY" bench/confirm_device.py --device cuda "$round" --jobs "$JOBS" --timeout 40 \
        >"$OUT/${name}_cuda.log" 2>&1
    grep -h "^all\|device-side" "$OUT/${name}_cuda.log" | cut -c1-200
done
