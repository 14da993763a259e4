"""Resolve local names to qualified names through a module's imports."""

from __future__ import annotations

from collections.abc import Iterable

import libcst as cst

#: Old or internal spellings mapped to the public names the op table uses.
_PREFIX_ALIASES = (
    ("torch.nn.modules.activation.", "torch.nn."),
    ("torch.nn.modules.conv.", "torch.nn."),
    ("torch.nn.modules.linear.", "torch.nn."),
    ("torch.nn.modules.batchnorm.", "torch.nn."),
    ("torch.nn.modules.container.", "torch.nn."),
    ("torch.nn.modules.dropout.", "torch.nn."),
    ("torch.nn.modules.module.", "torch.nn."),
    ("torch.nn.modules.", "torch.nn."),
    ("torch.nn.parameter.", "torch.nn."),
    ("torch.autograd.function.", "torch.autograd."),
    ("torch.functional.", "torch."),
    ("torch._C._nn.", "torch.nn.functional."),
)


def dotted_name(node: cst.BaseExpression) -> str | None:
    """``a.b.c`` for a chain of Name/Attribute nodes, else None."""
    kind = type(node)
    if kind is cst.Name:  # the common case; type(), as isinstance on libcst's ABCs is slow
        return node.value  # type: ignore[attr-defined]
    parts: list[str] = []
    while kind is cst.Attribute:
        parts.append(node.attr.value)  # type: ignore[attr-defined]
        node = node.value  # type: ignore[attr-defined]
        kind = type(node)
    if kind is not cst.Name:
        return None
    parts.append(node.value)  # type: ignore[attr-defined]
    return ".".join(reversed(parts))


def self_attribute(node: cst.BaseExpression | None) -> str | None:
    """``attr`` for ``self.attr``, else None."""
    if (
        isinstance(node, cst.Attribute)
        and isinstance(node.value, cst.Name)
        and node.value.value == "self"
    ):
        return node.attr.value
    return None


def assignment_targets(node: cst.CSTNode) -> list[cst.BaseExpression]:
    """What an assignment statement binds: every target of ``a = b = v``, the one of
    ``a: T = v`` or ``a += v``; nothing for any other node."""
    kind = type(node)  # libcst's node classes have no subclasses
    if kind is cst.Assign:
        return [t.target for t in node.targets]  # type: ignore[attr-defined]
    if kind is cst.AugAssign or kind is cst.AnnAssign:
        return [node.target]  # type: ignore[attr-defined]
    return []


def isinstance_test(node: cst.BaseExpression) -> tuple[str, cst.BaseExpression] | None:
    """``isinstance(x, T)`` (``T`` a type or a tuple of them) on a plain name ``x``: ``x``
    and ``T``; None for any other expression."""
    if not (isinstance(node, cst.Call) and isinstance(node.func, cst.Name)):
        return None
    args = node.args
    if node.func.value != "isinstance" or len(args) != 2:
        return None
    if any(a.keyword is not None or a.star for a in args):
        return None
    subject = args[0].value
    return (subject.value, args[1].value) if isinstance(subject, cst.Name) else None


def _module_name(node: cst.BaseExpression) -> str:
    return dotted_name(node) or ""


class ImportTable:
    """Maps the local names bound by import statements to fully qualified names."""

    def __init__(self) -> None:
        self._names: dict[str, str] = {}

    @classmethod
    def from_statements(cls, statements: Iterable[cst.CSTNode]) -> ImportTable:
        """The table for the imports among ``statements`` (a module's, at any depth)."""
        table = cls()
        for node in statements:
            if type(node) is cst.Import or type(node) is cst.ImportFrom:
                table.add(node)
        return table

    def add(self, node: cst.Import | cst.ImportFrom) -> None:
        if isinstance(node, cst.Import):
            for alias in node.names:
                full = _module_name(alias.name)
                if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                    self._names[alias.asname.name.value] = full
                else:
                    top = full.split(".")[0]
                    self._names[top] = top
            return
        if node.relative or node.module is None or isinstance(node.names, cst.ImportStar):
            return
        base = _module_name(node.module)
        for alias in node.names:
            imported = _module_name(alias.name)
            local = imported
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                local = alias.asname.name.value
            self._names[local] = f"{base}.{imported}"

    def names(self) -> dict[str, str]:
        """A copy of the table: local name -> qualified name."""
        return dict(self._names)

    @property
    def imports_torch(self) -> bool:
        return any(q == "torch" or q.startswith("torch.") for q in self._names.values())

    def qualify(self, node: cst.BaseExpression) -> str | None:
        """The qualified name of a Name/Attribute chain rooted at an imported name."""
        dotted = dotted_name(node)
        if dotted is None:
            return None
        head, _, rest = dotted.partition(".")
        base = self._names.get(head)
        if base is None:
            return None
        full = f"{base}.{rest}" if rest else base
        return normalize(full)


def normalize(qualified: str) -> str:
    """Map internal module paths to the public name (``torch.nn.modules.conv.Conv2d``)."""
    for old, new in _PREFIX_ALIASES:
        if qualified.startswith(old):
            tail = qualified[len(old) :]
            if old == "torch.nn.modules." or old.startswith("torch.nn.modules."):
                tail = tail.rsplit(".", 1)[-1]
            return new + tail
    return qualified
