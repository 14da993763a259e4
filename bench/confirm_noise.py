"""False confirmations from nondeterminism: run ``confirm`` on a noisy probe many times.

The probe is a model whose kernels add in a nondeterministic order and that holds one
harmless in-place site the static linter flags (``h.add_(0.0)`` while a view of ``h`` is read
later: IPL002, but adding zero changes nothing). A checker that compares each twin once with
one run of the original confirms the noise. Three probes:

* ``index_put``: ``index_put_(accumulate=True)`` on 2 CPU threads, nondeterministic in torch
  unless deterministic algorithms are on (atomics on a GPU behave alike);
* ``jitter``: a relative 1e-4 of noise from the operating system's random source, a stand-in
  for kernels that have no deterministic version (the run-to-run noise floor must absorb it);
* ``hazard``: the jitter probe with a real silent hazard instead (a write to a view that a
  later read sees), which must still be confirmed every time (the floor hides no real bug).

    python bench/confirm_noise.py [--runs 20] [--device cuda]

Prints, per probe, how many of the runs confirmed something. Runs the ``inplace_lint`` that
Python imports (``PYTHONPATH=/path/to/checkout python -P ...`` scores another checkout).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings

import torch
from torch import nn

_JITTER = torch.Generator()


class IndexPutProbe(nn.Module):
    """Scatter-adds 200k rows into 64 bins, then a harmless flagged in-place add."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(16, 16)
        index = torch.randint(0, 64, (200_000,), generator=torch.Generator().manual_seed(1))
        self.register_buffer("index", index)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        rows = self.fc(x).repeat(2_000, 1)
        h = torch.zeros(64, 16, device=x.device).index_put((self.index,), rows, accumulate=True)
        v = h[0]
        h.add_(0.0)  # harmless: adds zero
        return h * 2 + v.sum()


class JitterProbe(nn.Module):
    """Output noise of a relative 1e-4, then the harmless flagged in-place add."""

    def __init__(self, hazard: bool = False) -> None:
        super().__init__()
        self.fc = nn.Linear(16, 64)
        self.hazard = hazard

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.fc(x)
        seed = int.from_bytes(os.urandom(4), "little")
        noise = torch.rand(h.shape, generator=_JITTER.manual_seed(seed)).to(h.device)
        h = h * (1 + 1e-4 * noise)
        v = h[0]
        if self.hazard:
            h.mul_(2.0)  # a real hazard: v sees the doubled values
        else:
            h.add_(0.0)  # harmless: adds zero
        return h * 2 + v.sum()


def _confirmations(model: nn.Module, runs: int, device: str) -> tuple[int, float, list[str]]:
    from inplace_lint.dynamic import confirm

    hits, seconds, examples = 0, 0.0, []
    x = torch.randn(100, 16, generator=torch.Generator().manual_seed(0)).to(device)
    model = model.to(device)
    for _ in range(runs):
        started = time.perf_counter()
        report = confirm(model, x)
        seconds += time.perf_counter() - started
        if report.confirmed:
            hits += 1
            if len(examples) < 2:
                examples.append(report.confirmed[0].evidence[:160])
    return hits, seconds / max(runs, 1), examples


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20, help="confirm runs per probe (20)")
    parser.add_argument("--device", default="cpu", help="where the probes run (cpu; cuda)")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    torch.set_num_threads(2)
    import inplace_lint

    print(f"inplace_lint from {os.path.dirname(inplace_lint.__file__)}; torch {torch.__version__}")
    print(f"device {args.device}; threads {torch.get_num_threads()}; {args.runs} runs per probe")
    probes = [
        ("index_put (harmless site)", IndexPutProbe(), False),
        ("jitter 1e-4 (harmless site)", JitterProbe(), False),
        ("jitter 1e-4 (real silent hazard)", JitterProbe(hazard=True), True),
    ]
    bad = False
    for name, model, hazard in probes:
        hits, mean, examples = _confirmations(model, args.runs, args.device)
        what = "confirmed (must be all)" if hazard else "false confirmations (must be 0)"
        print(f"{name:<34} {what}: {hits}/{args.runs}; {mean:.2f} s per confirm")
        for example in examples if not hazard else []:
            print(f"    e.g. {example}")
        bad = bad or (hits != args.runs if hazard else hits != 0)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
