"""Methods a subclass inherits that call methods it overrides: read again as the subclass's.

A base class's ``forward`` often calls hooks its subclasses define (torch-audiomentations'
``BaseWaveformTransform.forward`` calls ``self.randomize_parameters(samples)`` and then
``self.apply_transform(samples)``; ``PeakNormalization`` defines both, the first keeping
``samples`` for ``abs``'s backward, the second dividing them in place). Read as the base's
own, ``self.randomize_parameters`` is the base's empty default, and the save is never seen.
Python calls the subclass's methods there, so each same-file subclass runs such an inherited
method once more with ``self`` its own instance, and summarises it as its own for its callers
(``Analyzer._summarize_inherited``).

Limits: same-file bases only; only methods that call, through ``self``, some method the
subclass itself defines; ``super()`` calls are not followed into the base.
"""

from __future__ import annotations

import libcst as cst

from inplace_lint.facts.classes import ClassFacts, same_file_bases
from inplace_lint.facts.names import self_attribute
from inplace_lint.facts.walk import own_nodes


def dispatching_inherited(cls: ClassFacts, classes: dict[str, ClassFacts]) -> list[cst.FunctionDef]:
    """The methods ``cls`` inherits from same-file bases (nearest first, ``__init__``
    aside) that call a method ``cls`` overrides through ``self``."""
    found: list[cst.FunctionDef] = []
    names: set[str] = set(cls.methods)
    for base in same_file_bases(cls, classes):
        for name, method in base.methods.items():
            if name in names or name == "__init__":
                continue
            names.add(name)
            if _calls_on_self(method) & set(cls.methods):
                found.append(method)
    return found


def _calls_on_self(func: cst.FunctionDef) -> set[str]:
    """The methods ``func`` calls as ``self.name(...)``."""
    calls = (node for node in own_nodes(func) if isinstance(node, cst.Call))
    return {attr for call in calls if (attr := self_attribute(call.func)) is not None}
