"""The dynamic checker's answer: confirmed hazards and a status for each static finding."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from inplace_lint.checks import code_for_evidence
from inplace_lint.dynamic.sites import Site
from inplace_lint.finding import Finding

if TYPE_CHECKING:
    from inplace_lint.dynamic.passa import Hit

#: Confirms the static findings at a site (site, code, evidence, kind, how); False for none.
Confirm = Callable[[Site, str, str, str, str], bool]

__all__ = [
    "CONFIRMED",
    "INCONCLUSIVE",
    "NOT_CONFIRMED",
    "NOT_REACHED",
    "Confirmed",
    "Report",
    "Status",
]

#: ``not confirmed``: the site ran and its out-of-place twin computed the same, beyond the
#: run-to-run noise (a refutation). ``inconclusive``: the site ran but the runs cannot decide
#: (the twin raises too, could not be built, or there was nothing to compare).
CONFIRMED, NOT_CONFIRMED, NOT_REACHED = "confirmed", "not confirmed", "not reached"
INCONCLUSIVE = "inconclusive"


@dataclass(frozen=True)
class Confirmed:
    """A hazard the run proved, at the user's source site, with its evidence."""

    site: Site
    code: str
    evidence: str
    kind: str  # "raises" or "silent"
    how: str  # "pass A", "autograd error", "twin"
    related: tuple[tuple[Site, str], ...] = ()

    def line(self, display: str | None = None) -> str:
        return f"{self.site.at(display)}: {self.code} confirmed: {self.evidence}"


@dataclass(frozen=True)
class Status:
    """What the run says about one static finding."""

    finding: Finding
    status: str
    detail: str = ""

    def line(self) -> str:
        f = self.finding
        tail = f" ({self.detail})" if self.detail else ""
        return f"{f.path}:{f.line}:{f.column}: {f.code} {self.status}{tail}"


@dataclass
class Report:
    """Everything one target's run established."""

    target: str
    confirmed: list[Confirmed] = field(default_factory=list)
    statuses: list[Status] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)
    graphs: dict[Site, str] = field(default_factory=dict)

    @property
    def inconclusive(self) -> list[Status]:
        """Findings that ran but that the runs could neither confirm nor refute."""
        return [s for s in self.statuses if s.status == INCONCLUSIVE]

    @property
    def ok(self) -> bool:
        """No confirmed hazard."""
        return not self.confirmed

    def __bool__(self) -> bool:  # a report is truthy when it found nothing wrong
        return self.ok

    def lines(self) -> list[str]:
        """Confirmed hazards (one a line), then the status of every static finding."""
        out = [c.line(_display(c.site.path)) for c in sorted(self.confirmed, key=_key)]
        out.extend(s.line() for s in self.statuses)
        return out

    def text(self) -> str:
        return "\n".join(self.lines())


def _key(item: Confirmed) -> tuple[str, int, int, str]:
    return (item.site.path, item.site.line, item.site.column, item.code)


def _display(path: str) -> str:
    try:
        relative = os.path.relpath(path)
    except ValueError:
        return path
    return path if relative.startswith(".." + os.sep) else relative


def confirm_hit(
    hit: Hit,
    confirm: Confirm,
    extra: list[Confirmed],
    sites: Sequence[Site] | None = None,
    tail: str = "",
) -> None:
    """Confirm pass A's ``hit`` at its ``sites`` (default: all of them), matching the static
    findings there; where none is, the first site goes to ``extra``. ``tail`` is added to the
    evidence."""
    sites = hit.sites if sites is None else sites
    if hit.write.in_backward:
        code = code_for_evidence("function-write")
    else:
        code = code_for_evidence("raises" if hit.kind == "raises" else "silent")
    evidence = hit.evidence() + tail
    matched = False
    for site in sites:
        matched = confirm(site, code, evidence, hit.kind, "pass A") or matched
    if not matched and sites:
        extra.append(Confirmed(sites[0], code, evidence, hit.kind, "pass A"))
