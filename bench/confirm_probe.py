"""A nondeterministic-kernel probe: ``confirm`` must never confirm its harmless site.

    python bench/confirm_probe.py [--device cuda] [--runs 20]

``build()`` returns a model whose forward sums rows with ``index_add_`` over repeated
indices (atomic adds on a GPU, several threads on a CPU: the order, and so the low bits,
change from run to run) and then makes a write the static linter flags but that changes no
value (``pooled.add_(0.0)`` with a view of ``pooled`` read afterwards). Run as a script, it
first measures how far two plain runs of the model differ with torch's default settings
(the noise ``confirm`` has to see through), then runs the checker ``--runs`` times on the
target ``bench/confirm_probe.py::build`` and counts confirmations (the figure the issue asks
for: zero over 20 runs) and the statuses of the flagged site.
"""

from __future__ import annotations

import argparse
import collections
import os
import sys
import time

import torch
from torch import nn


class Probe(nn.Module):
    """Linear, then a scatter-sum with repeated indices, then a harmless flagged write."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(16, 256)

    def forward(self, x: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
        h = self.fc(x)
        pooled = torch.zeros(64, 256).index_add_(0, index, h)  # nondeterministic order
        v = pooled[0]
        pooled.add_(0.0)  # flagged, harmless: the probe's site
        return pooled * 2 + v.sum()


def build() -> tuple[nn.Module, tuple[torch.Tensor, torch.Tensor]]:
    torch.manual_seed(0)
    rows = 8192
    return Probe(), (torch.randn(rows, 16), torch.randint(0, 64, (rows,)))


def plain_spread(device: torch.device) -> float:
    """The largest difference between two plain runs' input-layer gradients."""
    grads = []
    for _ in range(2):
        model, (x, index) = build()
        model = model.to(device)
        with torch.device(device):
            out = model(x.to(device), index.to(device))
        out.pow(2).sum().backward()
        grads.append(model.fc.weight.grad.detach().double())
    return float((grads[0] - grads[1]).abs().max())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--runs", type=int, default=20)
    ns = parser.parse_args()
    from inplace_lint.dynamic.core import check
    from inplace_lint.dynamic.device import DeviceError, resolve
    from inplace_lint.dynamic.targets import subject_for

    try:
        device = resolve(ns.device)
    except DeviceError as exc:
        print(f"confirm_probe: error: {exc}", file=sys.stderr)
        return 2
    print(f"torch {torch.__version__} on {device}; {torch.get_num_threads()} CPU threads")
    print(f"plain runs differ by up to {plain_spread(device):.3g} (weight gradient)")
    target = os.path.join(os.path.dirname(os.path.abspath(__file__)), "confirm_probe.py")
    confirmed = 0
    statuses: collections.Counter[str] = collections.Counter()
    started = time.perf_counter()
    for _ in range(ns.runs):
        report = check(subject_for(f"{target}::build"), device=device)
        confirmed += len(report.confirmed)
        for line in report.lines()[: len(report.confirmed)]:
            print("  CONFIRMED", line)
        for status in report.statuses:
            statuses[f"{status.status} ({status.detail.split(';')[0][:60]})"] += 1
    seconds = time.perf_counter() - started
    print(f"{ns.runs} runs in {seconds:.1f} s: {confirmed} confirmation(s)")
    for text, count in statuses.most_common():
        print(f"  {count:3d} x {text}")
    return 1 if confirmed else 0


if __name__ == "__main__":
    sys.exit(main())
