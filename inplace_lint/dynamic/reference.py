"""The reference a twin is compared with: the unchanged run, repeated, with its noise floor.

A single comparison of a twin with one run of the original confirms noise: kernels that add
in a nondeterministic order (``index_put_(accumulate=True)`` on several CPU threads, atomics
on a GPU) change low bits from run to run. So the original runs at least twice (with
``torch.use_deterministic_algorithms`` on, where torch has deterministic kernels) and each
tensor's run-to-run spread is measured. An element of a twin fails when its difference from
the reference exceeds both the tolerance (``1e-6 + 1e-5 * |reference|``) and four times the
spread of its tensor; a twin that fails is run once more, and it differs only if the second
run fails too (its own spread added). The evidence names the first element that failed. A twin
whose random generators end in another state than the reference's drew other random numbers
(an in-place dropout on CUDA draws its mask by another kernel): it is not compared at all.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import torch

from inplace_lint.dynamic.runner import Outcome, Subject, run

__all__ = ["Difference", "Reference", "difference", "judge_twin", "measure"]

ATOL, RTOL = 1e-6, 1e-5
#: How far outside the measured run-to-run spread a difference must be.
MARGIN = 4.0


@dataclass(frozen=True)
class Difference:
    """How a twin compares with the reference."""

    differs: bool
    worst: float = 0.0  # the largest absolute difference anywhere
    where: str | None = None  # the tensor holding it
    failed: str = ""  # the first element that failed tolerance and spread, described
    #: the twin drew other random numbers than the reference: nothing can be compared
    other_draws: bool = False

    def evidence(self) -> str:
        if self.failed:
            return self.failed
        return f"largest difference {self.worst:.4g} in '{self.where}'"


def _as_float(left: torch.Tensor, right: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    if left.is_complex():
        left, right = torch.view_as_real(left), torch.view_as_real(right)
    return left.detach().cpu().to(torch.float64), right.detach().cpu().to(torch.float64)


def _abs_diff(left: torch.Tensor, right: torch.Tensor) -> torch.Tensor:
    """Elementwise ``|left - right|``; NaNs in the same places are equal, elsewhere infinite."""
    same = (left == right) | (left.isnan() & right.isnan())
    diff = torch.where(same, torch.zeros_like(left), (left - right).abs())
    return torch.where(diff.isnan(), torch.full_like(diff, math.inf), diff)


def spread(runs: list[dict[str, torch.Tensor]]) -> dict[str, float]:
    """Each tensor's largest elementwise difference between the runs (inf: shapes differ)."""
    found: dict[str, float] = {}
    first = runs[0]
    for other in runs[1:]:
        for key in first.keys() & other.keys():
            a, b = first[key], other[key]
            if a.shape != b.shape or a.dtype != b.dtype:
                found[key] = math.inf
                continue
            value = float(_abs_diff(*_as_float(a, b)).max()) if a.numel() else 0.0
            found[key] = max(found.get(key, 0.0), value)
    return found


def difference(
    reference: dict[str, torch.Tensor],
    twin: dict[str, torch.Tensor],
    noise: dict[str, float] | None = None,
) -> Difference:
    """Compare ``twin`` with ``reference``, ignoring what lies within ``noise`` (per tensor)."""
    noise = noise or {}
    worst, where, failed = 0.0, None, ""
    for key in sorted(reference.keys() & twin.keys()):
        a, b = reference[key], twin[key]
        if a.shape != b.shape or a.dtype != b.dtype:
            shown = f"{list(a.shape)} {a.dtype} -> {list(b.shape)} {b.dtype}"
            return Difference(True, math.inf, key, f"'{key}' changes shape or type ({shown})")
        if a.numel() == 0:
            continue
        left, right = _as_float(a, b)
        diff = _abs_diff(left, right)
        biggest = float(diff.max())
        if biggest > worst:
            worst, where = biggest, key
        floor = MARGIN * noise.get(key, 0.0)
        bad = (diff > ATOL + RTOL * left.abs().nan_to_num(0.0)) & (diff > floor)
        if not failed and bool(bad.any()):
            flat = int(bad.flatten().nonzero()[0])
            index = list(torch.unravel_index(torch.tensor(flat), a.shape)) if a.dim() else []
            at = f"'{key}'" + (f" at [{', '.join(str(int(i)) for i in index)}]" if index else "")
            was, now = float(left.flatten()[flat]), float(right.flatten()[flat])
            failed = (
                f"{at} is {now:.6g} in the twin, {was:.6g} in the original (difference "
                f"{abs(now - was):.4g}; run-to-run spread {noise.get(key, 0.0):.3g})"
            )
    return Difference(bool(failed), worst, where, failed)


class Reference:
    """The original's values over two or more runs, and their spread."""

    def __init__(self, runs: list[dict[str, torch.Tensor]], rng: bytes = b"") -> None:
        self.runs = runs
        self.values = runs[0]
        self.noise = spread(runs)
        self.rng = rng  # the generators' states at the end of the first run

    def judge(
        self, twin: dict[str, torch.Tensor], again: Callable[[], dict[str, torch.Tensor] | None]
    ) -> Difference:
        """Whether ``twin`` differs beyond tolerance and noise; a difference must survive a
        second twin run (``again``; ``None`` when it could not run)."""
        first = difference(self.values, twin, self.noise)
        if not first.differs:
            return first
        second = again()
        if second is None:
            return Difference(False, first.worst, first.where)
        noise = dict(self.noise)
        for key, value in spread([twin, second]).items():
            noise[key] = max(noise.get(key, 0.0), value)
        confirmed = difference(self.values, twin, noise)
        if not confirmed.differs:
            return Difference(False, first.worst, first.where)
        if not difference(self.values, second, noise).differs:
            return Difference(False, first.worst, first.where)
        return confirmed


def measure(subject: Subject, runs: int = 2) -> Reference | None:
    """Run the unchanged subject ``runs`` times (after pass A's run, so state it built is
    captured and put back: ``StateGuard``); ``None`` when a run raises (a flaky subject)."""
    values = []
    rng = b""
    for _ in range(runs):
        outcome = run(subject)
        if not outcome.ok:
            return None
        values.append(outcome.values)
        rng = rng or outcome.rng
    return Reference(values, rng)


def judge_twin(
    reference: Reference | None, twin: Outcome, again: Callable[[], Outcome]
) -> Difference | None:
    """Whether a twin that ran differs from the reference; ``None`` when there is no
    reference to compare with (the unchanged subject raised on a later run)."""
    if reference is None:
        return None
    if reference.rng and twin.rng and twin.rng != reference.rng:
        return Difference(False, other_draws=True)

    def second() -> dict[str, torch.Tensor] | None:
        outcome = again()
        return outcome.values if outcome.flipped and outcome.ok else None

    return reference.judge(twin.values, second)
