"""The shape every rule shares, and the raw result a rule yields before positions exist."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Literal

import libcst as cst

from inplace_lint.facts.events import Facts, SavedOverwrite

#: How reports grade a rule's findings (SARIF ``level``, LSP severity, GitHub annotation).
Severity = Literal["error", "warning"]
#: The rewrite ``fix/`` offers for a rule's findings: the write made out of place; in a
#: custom ``backward`` a ``g = g.clone()`` before the first in-place write to ``g``; for a
#: leaf, grad mode turned off (``with torch.no_grad():`` or the ``nn.init`` call); for a
#: ``.data`` / ``.detach()`` write, the write made out of place on the name.
FixKind = Literal["out-of-place", "clone-in-backward", "grad-mode", "bypass-out-of-place"]
#: What the dynamic checker saw at run time: a saved tensor's version moved before backward
#: unpacked it (``raises``), it changed without a version bump (``silent``), the run raised
#: torch's in-place error on a leaf (``leaf-error``) or another in-place autograd error
#: (``autograd-error``), or a custom ``autograd.Function``'s ``backward`` wrote into a tensor
#: autograd saved (``function-write``).
Evidence = Literal[
    "raises",
    "silent",
    "leaf-error",
    "autograd-error",
    "function-write",
    "stale-twin",
    "argument-twin",
    "bypass-twin",
]


@dataclass(frozen=True)
class LineOf:
    """Stands in a message for the line ``node`` starts on.

    The engine fills it in when it places the finding, and writes ``?`` where the node has no
    position. The node should also be one of the finding's related locations.
    """

    node: cst.CSTNode


#: A finding's message: plain text, or text parts and line references that the engine joins.
Message = str | tuple[str | LineOf, ...]


def saver(op: str, role: str) -> str:
    """The op that saved a tensor, as a message names it: code in backticks (`torch.relu`),
    a module's forward pass (role ``parameters``) or an op named inside a user module's
    forward, both already worded with their own backticks, as they are."""
    return op if role == "parameters" or "`" in op else f"`{op}`"


def callers_saved_tensor(
    code: str, event: SavedOverwrite, outcome: str = "backward will fail"
) -> RawFinding:
    """A helper writes, in place, a tensor its caller passed after an op there saved it:
    the finding on the helper's write, naming the call and the save."""
    write, record = event.write, event.record
    message = (
        f"{write.what} mutates argument `{write.param}` in place; the caller passes "
        f"`{write.target}` (line ",
        LineOf(write.via_call),
        f"), which {saver(record.op, record.role)} saved for backward (line ",
        LineOf(record.node),
        f"): {outcome}",
    )
    related = (
        (write.via_call, f"called with `{write.target}` here"),
        (record.node, f"saved for backward by {record.op} here"),
    )
    return RawFinding(code, write.node, write.stmt, message, related)


@dataclass(frozen=True)
class RawFinding:
    """A finding that still points at syntax nodes; the engine turns it into a Finding."""

    code: str
    node: cst.CSTNode
    stmt: cst.CSTNode | None
    message: Message
    related: tuple[tuple[cst.CSTNode, str], ...] = ()

    def references(self) -> Iterator[cst.CSTNode]:
        """The nodes whose lines the message names."""
        if not isinstance(self.message, str):
            for part in self.message:
                if isinstance(part, LineOf):
                    yield part.node


@dataclass(frozen=True)
class Rule:
    """Everything about one rule, declared in the rule's own module and read from there.

    The config, the text screen, the engine's precedence, the fixer, the reports and the
    dynamic checker all read these fields; none of them keeps a per-rule list of its own.
    """

    #: The fixed code (``IPL001``) that noqa comments and ``select`` name.
    code: str
    #: The kebab-case name shown beside the code (``saved-for-backward``).
    name: str
    #: One line for ``inplace-lint rules`` and SARIF's short description.
    summary: str
    #: The query over the facts that yields the rule's findings.
    check: Callable[[Facts], Iterator[RawFinding]]
    #: On unless deselected; ``False`` for an opt-in rule, run only when its code is selected.
    default: bool = True
    #: How reports grade the rule's findings.
    severity: Severity = "error"
    #: Codes this rule hides when both report the same write: this one is the louder failure.
    supersedes: tuple[str, ...] = ()
    #: The rewrite offered for a finding, or ``None`` for none.
    fix: FixKind | None = None
    #: Whether an out-of-place rewrite can be safe (it never is when another name sees the
    #: write, since removing it changes what that name reads); ``fix.py`` decides per site.
    safe_fix: bool = False
    #: Words that let a file past the text screen for this rule, beyond the in-place patterns
    #: every rule reports at: only a rule that reports somewhere else needs them.
    screen_words: tuple[str, ...] = ()
    #: Run-time evidence that the dynamic checker reports under this code where no static
    #: finding of any code sits at the place it points to.
    evidence: tuple[Evidence, ...] = ()
