"""Raising writes behind the first one: a run stops at its first autograd error, so a second
hazard later in the same script is never reached (``conv.weight[:] = w`` then
``conv.bias[:] = b``; ``opt_style.step()`` before one backward, ``opt_adv.step()`` before
the next).

Once a raising site is confirmed, the script is run again with each one found so far put out
of the way, with pass A watching, and a further site that makes it raise is confirmed in turn
(at most ``ROUNDS`` times). A site is put out of the way by the change that keeps the rest of
the program meaningful: a write to a leaf runs under ``torch.no_grad()`` (what its fix does;
``runner.no_grad_lines``); a statement the out-of-place twin rewrites is flipped; any other
(an optimizer step, which has no out-of-place form) is skipped (``runner.skip_lines``). A
second write to the same leaf is not a second hazard: a leaf stays one under ``no_grad``,
while the real fix of the first write may not have left it a leaf.

Limits: only sites in the subject's own source, which runs from its text (a script, a
``path.py::name`` target).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from inplace_lint.dynamic.discover import code_for_error, inplace_error
from inplace_lint.dynamic.passa import Hit
from inplace_lint.dynamic.report import Confirm, Confirmed, confirm_hit
from inplace_lint.dynamic.runner import Outcome, Subject, _describe, flippable, run
from inplace_lint.dynamic.sites import traceback_sites
from inplace_lint.dynamic.written import written_at

__all__ = ["ROUNDS", "past_raising_sites"]

#: The most further raising sites looked for, one run each.
ROUNDS = 12


def past_raising_sites(
    subject: Subject, confirm: Confirm, confirmed: list[Confirmed], extra: list[Confirmed]
) -> None:
    """Confirm the raising sites the first one hid (see the module docstring); ``confirm``
    matches a site to the static findings there, ``extra`` takes the ones it does not."""
    path = subject.path
    if path is None or not hasattr(subject, "source"):
        return
    source: str = subject.source  # type: ignore[attr-defined]
    tree = ast.parse(source)
    leaf = code_for_error("leaf Variable")
    found = {
        c.site.line: c.code == leaf
        for c in (*confirmed, *extra)
        if c.site.path == path and c.kind == "raises"
    }
    for _ in range(ROUNDS):
        if not found:
            return
        outcome = _without(subject, path, source, found)
        error = outcome.error
        if error is None or not inplace_error(error):
            return
        shown = ", ".join(str(n) for n in sorted(found))
        tail = f" (with line(s) {shown} out of the way, so the run gets this far)"
        past = _Past(path, found, confirm, extra, tail)
        new = past.from_hits(outcome.hits)
        if not new and "leaf Variable" in str(error):
            new = past.leaf_error(error, tree)
        if not new:
            return
        found.update(new)


def _without(subject: Subject, path: str, source: str, found: dict[int, bool]) -> Outcome:
    """One run with pass A, each site in ``found`` put out of the way."""
    guard = frozenset(line for line, leaf in found.items() if leaf)
    rest = [line for line, leaf in found.items() if not leaf]
    flips = frozenset(n for n in rest if flippable(source, n))
    skip = frozenset(rest) - flips
    first = (path, min(flips)) if flips else None
    return run(subject, flip=first, also=flips, guard=guard, skip=skip, detect=True)


@dataclass
class _Past:
    """One round of the search: the sites found so far and where new ones go."""

    path: str
    found: dict[int, bool]  # line -> whether it is a leaf write
    confirm: Confirm
    extra: list[Confirmed]
    tail: str

    def from_hits(self, hits: list[Hit]) -> dict[int, bool]:
        """Pass A's raising hits at sites not found before."""
        new: dict[int, bool] = {}
        for hit in hits:
            if hit.kind != "raises":
                continue
            own = [s for s in hit.sites if s.path == self.path]
            sites = [s for s in own if s.line not in self.found]
            if not sites or len(sites) < len(own):
                continue  # a site of this hit was found already: the same hazard
            confirm_hit(hit, self.confirm, self.extra, sites, self.tail)
            new.update((site.line, False) for site in sites)
        return new

    def leaf_error(self, error: BaseException, tree: ast.Module) -> dict[int, bool]:
        """A leaf written in place raises where it is written: its line, unless it is a
        leaf written before."""
        where = traceback_sites(error.__traceback__)
        if not where or where[0].path != self.path or where[0].line in self.found:
            return {}
        place = written_at(tree, where[0].line).place
        earlier = {written_at(tree, line).place for line, leaf in self.found.items() if leaf}
        if place in earlier:
            return {}
        evidence = f"the run raises {_describe(error)}{self.tail}"
        if not self.confirm(where[0], "", evidence, "raises", "autograd error"):
            code = code_for_error(str(error))
            self.extra.append(Confirmed(where[0], code, evidence, "raises", "autograd error"))
        return {where[0].line: True}
