"""Compute autofixes for findings, after the fact, from the parsed module.

``attach_fixes`` finds the CST node each finding points at and, where the hazard has a
mechanical rewrite, returns the finding with a :class:`~inplace_lint.finding.Fix`:

* ``x.relu_()`` as a statement -> ``x = x.relu()``; as a value -> ``x.relu()``;
* ``F.relu_(x)`` / ``torch.relu_(x)`` -> ``x = F.relu(x)`` (statement) or ``F.relu(x)``;
* ``x += y`` -> ``x = x + y`` for a plain-name target (the operand parenthesised if needed);
* ``inplace=True`` dropped at the flagged call, at the flagged ``nn.Sequential`` element, or at
  the ``self.act = nn.ReLU(inplace=True)`` behind a flagged ``self.act(out)``; a positional
  ``True`` becomes ``False``; a statement ``F.relu(x, inplace=True)`` becomes ``x = F.relu(x)``;
* ``torch.mul(h, 2, out=h)`` as a statement -> ``h = torch.mul(h, 2)``;
* ``x[i] = v`` on a plain name -> ``x = x.clone()`` inserted before the statement;
* in a custom ``backward`` (IPL005), ``g = g.clone()`` before the first in-place write to ``g``;
* the newer rewrites of :mod:`.grad_mode` (IPL003: ``no_grad`` / ``nn.init``), :mod:`.bypass`
  (IPL007), :mod:`.reorder` (the optimizer step), :mod:`.clones` (IPL004 and ``forward``) and
  :mod:`.elements` (container items, views, grad calls); each module states its safety.

No fix rebinds a name that ``torch.autograd.grad`` or ``backward(inputs=...)`` differentiates
against after the write: the grad call would then get a tensor outside the graph.

A fix is *safe* when it cannot change what correct code computes. Only IPL001 rewrites (and
IPL005 clones) can be: IPL002, IPL004 and IPL006 exist because another name sees the write, so
removing it changes what that name reads. An IPL001 rewrite is safe only when the written name
is a local whose every earlier binding is a fresh tensor and whose earlier uses create no alias
(no view, no container, no call that might keep it, no closure), outside ``no_grad``. An
IPL003 ``no_grad`` / ``nn.init`` fix is safe in init-like code. This package never imports
the code it reads, nor torch.

Rooms: :mod:`.tree` (positions, parent links, imports of one module), :mod:`.safety` (whether
a rewrite can change what correct code computes), :mod:`.rewrites` (the edits of each
rewrite); the out-of-place forms themselves come from :mod:`inplace_lint.outofplace`, shared
with the dynamic checker's twin.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

import libcst as cst
from libcst.metadata import CodeRange

from inplace_lint.finding import Finding
from inplace_lint.fix.rewrites import Fixer
from inplace_lint.fix.tree import ParentMemo

__all__ = ["ParentMemo", "attach_fixes"]


def attach_fixes(
    module: cst.Module,
    findings: Sequence[Finding],
    positions: Mapping[cst.CSTNode, CodeRange] | None = None,
    text: str | None = None,
    parents: ParentMemo | None = None,
) -> list[Finding]:
    """``findings`` with a :class:`Fix` attached wherever this module knows one.

    ``positions`` holds the positions the caller has (at least every node of the top-level
    statements with findings); ``text`` is the module's source when the caller has it;
    ``parents`` keeps the parent links of unchanged top-level statements between versions
    of one document (the language server's).
    """
    if not findings:
        return list(findings)
    fixer = Fixer(module, positions, text, parents)
    result = []
    cloned: set[tuple[int, str]] = set()
    for finding in findings:
        try:
            fix = fixer.fix_for(finding, cloned)
        except (RecursionError, KeyError, IndexError, ValueError, AttributeError, TypeError):
            fix = None  # a rewrite this module cannot build is simply not offered
        result.append(replace(finding, fix=fix) if fix is not None else finding)
    return result
