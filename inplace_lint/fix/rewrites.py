"""The edits of each autofix rewrite, and the dispatch from a finding to its rewrite.

The out-of-place form of each write (its stem, the ``inplace`` position, the binary operator
of an augmented assignment) comes from :mod:`inplace_lint.outofplace`; this module turns it
into text edits and asks :class:`~inplace_lint.fix.safety.SafetyAnalysis` how safe each is.
An in-place method is offered its stem only when the op table says the stem returns what the
method writes, in new storage (``outofplace_twins``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import libcst as cst

from inplace_lint.checks import all_rules
from inplace_lint.facts.syntax import overlapping_copy
from inplace_lint.facts.walk import walk
from inplace_lint.finding import Edit, Finding, Fix, Position
from inplace_lint.fix.bypass import BypassRewrites
from inplace_lint.fix.clones import CloneRewrites
from inplace_lint.fix.elements import ElementRewrites
from inplace_lint.fix.grad_mode import GradModeRewrites
from inplace_lint.fix.reorder import StepReorder
from inplace_lint.fix.safety import SCOPES, built_fresh, fresh_function, has_twin
from inplace_lint.fix.tree import NEWLINE
from inplace_lint.outofplace import (
    binary_form,
    dotted_name,
    inplace_position,
    is_inplace_name,
    is_self,
    is_true,
    keyword,
    method_chain,
    needs_parens,
    positional_inplace,
)

__all__ = ["Fixer"]

_REBINDING = re.compile(r"\s*([A-Za-z_]\w*) = ")


def _rebound(edits: Sequence[Edit]) -> set[str]:
    """The names an insertion among ``edits`` rebinds (``x = `` or ``x = x.clone()``)."""
    names: set[str] = set()
    for edit in edits:
        match = _REBINDING.match(edit.text) if edit.start == edit.end else None
        if match:
            names.add(match.group(1))
    return names


#: Codes whose fix makes the write out of place (each rule's ``fix`` field).
_OUT_OF_PLACE_CODES = frozenset(r.code for r in all_rules() if r.fix == "out-of-place")
#: Of those, the codes whose fix can be safe (``safe_fix``; the others change what another
#: name reads).
_SAFE_CAPABLE = frozenset(r.code for r in all_rules() if r.fix == "out-of-place" and r.safe_fix)
#: Codes whose fix clones a gradient in a custom ``backward`` before it is written.
_CLONE_CODES = frozenset(r.code for r in all_rules() if r.fix == "clone-in-backward")
#: Codes whose fix turns grad mode off for a leaf write: ``no_grad`` / ``nn.init``
#: (:mod:`.grad_mode`); and codes whose ``.data`` / ``.detach()`` write is rewritten out of
#: place on the name (:mod:`.bypass`).
_LEAF_CODES = frozenset(r.code for r in all_rules() if r.fix == "grad-mode")
_BYPASS_CODES = frozenset(r.code for r in all_rules() if r.fix == "bypass-out-of-place")
#: The code whose fix may fall back to cloning the argument at the top of the function.
_ARGUMENT_CODE = "IPL004"

#: Operands the autofix writes without parentheses beside ``OPERAND_ATOMS``: strings and
#: bracketed displays. A tuple is not among them: ``x += 1, 2`` becomes ``x = x + (1, 2)``
#: (written ``x = x + 1, 2`` it would bind a tuple); a tuple already in parentheses is kept.
_UNWRAPPED = (
    cst.ConcatenatedString,
    cst.FormattedString,
    cst.List,
    cst.Dict,
    cst.Set,
)

_Built = tuple[str, list[Edit], bool]


class Fixer(GradModeRewrites, BypassRewrites, CloneRewrites, ElementRewrites, StepReorder):
    """The rewrites of one module's findings."""

    # ----------------------------------------------------------------- dispatch

    def fix_for(self, finding: Finding, cloned: set[tuple[int, str]]) -> Fix | None:
        node = self.node_at(finding)
        if node is None:
            return None
        built = self._built_for(finding.code, node, cloned)
        if built is None:
            return None
        description, edits, safe = built
        if not edits:
            return None
        rebound = _rebound(edits) & self.grad_targets
        if rebound and not self.grad_calls_precede(rebound, node):
            return None  # ``x = ...`` would hand the grad call a tensor outside the graph
        return Fix(description, tuple(sorted(edits, key=lambda e: (e.start, e.end))), safe)

    def _built_for(
        self, code: str, node: cst.CSTNode, cloned: set[tuple[int, str]]
    ) -> _Built | None:
        if code in _CLONE_CODES:
            return self._clone_in_backward(node, cloned) or self.clone_in_forward(node, cloned)
        if code in _LEAF_CODES:
            if self.differentiable_update(node):
                return self._out_of_place(node, code)
            if self.writes_argument(node):  # a helper's write to the leaf its caller passes
                return self.clone_argument_fix(node, cloned)
            return self.leaf_write_fix(node)
        if code in _BYPASS_CODES:
            return self.bypass_fix(node)
        if code not in _OUT_OF_PLACE_CODES:
            return None
        overlap = self._overlap_fix(node)
        if overlap is not None:
            return overlap
        built = self._out_of_place(node, code)
        if built is None and isinstance(node, cst.Call):
            built = (
                self.step_move_fix(node)
                or self.element_chain_fix(node)
                or self.view_write_fix(node, code in _SAFE_CAPABLE)
                or self.grad_call_fix(node)
            )
        if built is None and code == _ARGUMENT_CODE:
            built = self.clone_argument_fix(node, cloned)
        return built

    def _overlap_fix(self, node: cst.CSTNode) -> _Built | None:
        """``x[..., 1:] = x[..., :-1]``: copy from a clone of the overlapping source (the
        values the statement meant to copy; safe: nothing else changes)."""
        if isinstance(node, cst.Subscript):  # the finding points at the written slice
            node = self.parent.get(node)
            node = self.parent.get(node) if isinstance(node, cst.AssignTarget) else node
        if not isinstance(node, cst.Assign) or not overlapping_copy(node):
            return None
        end = self.end(node.value)
        return "Copy from a clone of the overlapping source", [Edit(end, end, ".clone()")], True

    def _out_of_place(self, node: cst.CSTNode, code: str) -> _Built | None:
        capable = code in _SAFE_CAPABLE
        if isinstance(node, cst.Assign) and len(node.targets) == 1:
            target = node.targets[0].target
            return (
                self._subscript_write(target, capable)
                if isinstance(target, cst.Subscript)
                else None
            )
        if isinstance(node, cst.AugAssign):
            return self._augassign(node, capable)
        if isinstance(node, cst.Subscript):
            return self._subscript_write(node, capable)
        if not isinstance(node, cst.Call):
            return None
        func = node.func
        if isinstance(func, cst.Attribute) and is_inplace_name(func.attr.value):
            if self.is_torch(func.value):
                return self._function_form(node, func, capable)
            return self._method_form(node, func, capable)
        if _inplace_arg(node, self.qualified(func) or dotted_name(func) or "") is not None:
            return self._inplace_flag(node, capable)
        if keyword(node, "out") is not None:
            return self._out_argument(node, capable)
        if isinstance(func, cst.Attribute) and is_self(func.value):
            return self._module_call_site(node, func.attr.value, capable)
        return None

    # ----------------------------------------------------------------- rewrites

    def _method_form(self, call: cst.Call, func: cst.Attribute, capable: bool) -> _Built | None:
        method = func.attr.value
        if not has_twin(method):
            return None
        base = method[:-1]
        receiver = func.value
        chain = self._inplace_chain(call)
        if chain is not None:
            return self._chain_form(*chain, capable)
        rename = Edit(self.start(func.attr), self.end(func.attr), base)
        if self.is_statement(call):
            if not isinstance(receiver, cst.Name) or receiver.value in self.aliases:
                return None  # ``np.add_(...)``-like calls on a module are not tensor writes
            name = receiver.value
            edits = [Edit(self.start(call), self.start(call), f"{name} = "), rename]
            safe = capable and self.rebind_is_safe(name, call)
            return f"Replace `{name}.{method}(...)` with `{name} = {name}.{base}(...)`", edits, safe
        safe = self._value_safe(call, receiver, capable)
        return f"Use `{base}()` instead of `{method}()`", [rename], safe

    def _inplace_chain(
        self, call: cst.Call
    ) -> tuple[list[cst.Attribute], cst.BaseExpression, cst.Call] | None:
        """For a call inside ``h.mul_(2).add_(1)``: the chain's in-place methods (innermost
        first), its receiver ``h`` and its outermost call; ``None`` for a lone in-place call."""
        methods, root = method_chain(call, is_inplace_name)
        top = call
        while True:
            attribute = self.parent.get(top)
            outer = self.parent.get(attribute) if attribute is not None else None
            if not (
                isinstance(attribute, cst.Attribute)
                and attribute.value is top
                and isinstance(outer, cst.Call)
                and outer.func is attribute
                and is_inplace_name(attribute.attr.value)
            ):
                break
            methods.append(attribute)
            top = outer
        return (methods, root, top) if len(methods) > 1 else None

    def _chain_form(
        self, methods: list[cst.Attribute], root: cst.BaseExpression, top: cst.Call, capable: bool
    ) -> _Built | None:
        """``h.mul_(2).add_(1)``: every method goes out of place; as a statement the chain
        rebinds ``h``. No fix when a method has no out-of-place form."""
        if not all(has_twin(m.attr.value) for m in methods):
            return None
        if not isinstance(root, cst.Name) or root.value in self.aliases:
            return None
        name = root.value
        renames = [Edit(self.start(m.attr), self.end(m.attr), m.attr.value[:-1]) for m in methods]
        if self.is_statement(top):
            edits = [Edit(self.start(top), self.start(top), f"{name} = "), *renames]
            safe = capable and self.rebind_is_safe(name, top)
            return f"Replace the in-place chain on `{name}` with `{name} = ...`", edits, safe
        safe = self._value_safe(top, root, capable)
        return f"Use out-of-place methods for the chain on `{name}`", renames, safe

    def _function_form(self, call: cst.Call, func: cst.Attribute, capable: bool) -> _Built | None:
        name = func.attr.value
        base = name[:-1]
        stem = (self.qualified(func) or f"torch.{name}")[:-1]
        if not fresh_function(stem) or not call.args or call.args[0].keyword is not None:
            return None
        written = call.args[0].value
        rename = Edit(self.start(func.attr), self.end(func.attr), base)
        shown = dotted_name(func.value) or "torch"
        if self.is_statement(call):
            if not isinstance(written, cst.Name):
                return None
            target = written.value
            edits = [Edit(self.start(call), self.start(call), f"{target} = "), rename]
            safe = capable and self.rebind_is_safe(target, call)
            return (
                f"Replace `{shown}.{name}({target})` with `{target} = {shown}.{base}({target})`",
                edits,
                safe,
            )
        safe = self._value_safe(call, written, capable)
        return f"Use `{shown}.{base}()` instead of `{shown}.{name}()`", [rename], safe

    def _value_safe(self, call: cst.Call, written: cst.BaseExpression, capable: bool) -> bool:
        """An in-place call used as a value may go out of place when nobody else sees the write."""
        if not capable:
            return False
        if self.is_fresh(written) and not self.grad_off(call):
            return True
        if isinstance(written, cst.Name) and self.assigned_to(call) == written.value:
            return self.rebind_is_safe(written.value, self.parent[call])
        return False

    def _augassign(self, node: cst.AugAssign, capable: bool) -> _Built | None:
        if not isinstance(node.target, cst.Name):
            return self._subscript_target(node, capable)
        name = node.target.value
        operator = self.text(self.start(node.operator), self.end(node.operator))
        form = binary_form(node.operator)
        if form is None:
            return None
        binary = form[1]
        edits = [Edit(self.start(node.operator), self.end(node.operator), f"= {name} {binary}")]
        value = node.value
        if needs_parens(value) and not isinstance(value, _UNWRAPPED):
            edits.append(Edit(self.start(value), self.start(value), "("))
            edits.append(Edit(self.end(value), self.end(value), ")"))
        safe = capable and self.rebind_is_safe(name, node)
        return f"Replace `{name} {operator} ...` with `{name} = {name} {binary} ...`", edits, safe

    def _subscript_target(self, node: cst.AugAssign, capable: bool) -> _Built | None:
        if not isinstance(node.target, cst.Subscript):
            return None
        value = node.value
        parens: list[Edit] = []
        if needs_parens(value) and not isinstance(value, _UNWRAPPED):
            parens = [
                Edit(self.start(value), self.start(value), "("),
                Edit(self.end(value), self.end(value), ")"),
            ]
        element = self.element_augassign_fix(node, parens)
        if element is not None:
            return element
        base = node.target.value
        if isinstance(base, cst.Name) and self.may_be_container(base):
            return None  # a list's element, not provably: no clone of the list
        return self._subscript_write(node.target, capable)

    def _subscript_write(self, node: cst.Subscript, capable: bool) -> _Built | None:
        if not isinstance(node.value, cst.Name):
            return None
        holder = self.parent.get(node)
        if isinstance(holder, cst.AssignTarget):
            holder = self.parent.get(holder)
        if not isinstance(holder, cst.Assign | cst.AugAssign):
            return None
        name = node.value.value
        edits = self._clone_before(holder, name)
        if edits is None:
            return None
        safe = capable and self.rebind_is_safe(name, holder)
        what = f"Write into a clone: insert `{name} = {name}.clone()` first"
        reads = _reads_of(holder.value, name) if isinstance(holder, cst.Assign) else []
        if reads:  # ``x[s] = mix(x[s], w)``: the right side may keep its view of ``x`` too
            edits += [Edit(self.end(read), self.end(read), ".clone()") for read in reads]
            what += f", and read a clone of `{name}` on the right-hand side"
        return what, edits, safe

    def _inplace_flag(self, call: cst.Call, capable: bool) -> _Built | None:
        name = self.qualified(call.func) or dotted_name(call.func) or ""
        short = name.rsplit(".", 1)[-1]
        edits = self._drop_inplace(call, short)
        if edits is None:
            return None
        if short[:1].isupper():  # a module: its input is the previous element's output
            safe = capable and self._fresh_sequential_input(call)
            return f"Use `{short}()` without `inplace=True`", edits, safe
        if not call.args or call.args[0].keyword is not None:
            return None
        written = call.args[0].value
        if self.is_statement(call):
            if not isinstance(written, cst.Name):
                return None
            target = written.value
            edits.append(Edit(self.start(call), self.start(call), f"{target} = "))
            safe = capable and self.rebind_is_safe(target, call)
            return (
                f"Replace `{short}(..., inplace=True)` with `{target} = {short}(...)`",
                edits,
                safe,
            )
        safe = self._value_safe(call, written, capable)
        return f"Use `{short}(...)` without `inplace=True`", edits, safe

    def _drop_inplace(self, call: cst.Call, short: str) -> list[Edit] | None:
        """Edits that turn ``inplace=True`` off: drop the keyword, or a positional ``True``."""
        for index, arg in enumerate(call.args):
            if arg.keyword is not None and arg.keyword.value == "inplace":
                if not is_true(arg.value):
                    return None
                drop = self._drop_argument(call, index)
                if drop is not None:
                    return [drop]
                return [Edit(self.start(arg.value), self.end(arg.value), "False")]
        flag = positional_inplace(call, short)
        if flag is not None and is_true(flag.value):
            return [Edit(self.start(flag.value), self.end(flag.value), "False")]
        return None

    def _drop_argument(self, call: cst.Call, index: int) -> Edit | None:
        """Remove argument ``index`` with one comma, unless that would delete a comment."""
        args = call.args
        arg = args[index]
        first = arg.keyword if arg.keyword is not None else arg.value
        if index > 0:
            start, end = self.end(args[index - 1].value), self.end(arg.value)
        elif len(args) > 1:
            nxt = args[1]
            start, end = self.start(first), self.start(nxt.keyword or nxt.value)
            if nxt.star:
                return None
        else:
            start, end = self.start(first), self.end(arg.value)
            if isinstance(arg.comma, cst.Comma):
                end = Position(end.line, end.column + 1)
                if self.text(start, end)[-1:] != ",":
                    return None
        if "#" in self.text(start, end):
            return None
        return Edit(start, end, "")

    def _out_argument(self, call: cst.Call, capable: bool) -> _Built | None:
        out = keyword(call, "out")
        if out is None:
            return None
        index = list(call.args).index(out)
        if not self.is_statement(call):
            return self._out_already_bound(call, out, index, capable)
        if not isinstance(out.value, cst.Name):
            return None
        drop = self._drop_argument(call, index)
        if drop is None:
            return None
        name = out.value.value
        edits = [Edit(self.start(call), self.start(call), f"{name} = "), drop]
        safe = capable and self.rebind_is_safe(name, call)
        return f"Replace `out={name}` with `{name} = ...`", edits, safe

    def _out_already_bound(
        self, call: cst.Call, out: cst.Arg, index: int, capable: bool
    ) -> _Built | None:
        """``t = op(..., out=t)`` (``self._u = F.normalize(..., out=self._u)``): the call is
        bound to the name already, so ``out=`` is dropped; safe only for a local name."""
        assign = self.parent.get(call)
        if not (
            isinstance(assign, cst.Assign) and assign.value is call and len(assign.targets) == 1
        ):
            return None
        target = assign.targets[0].target
        spelled = self.text(self.start(out.value), self.end(out.value))
        if self.text(self.start(target), self.end(target)) != spelled:
            return None
        drop = self._drop_argument(call, index)
        if drop is None:
            return None
        safe = capable and isinstance(target, cst.Name) and self.rebind_is_safe(spelled, assign)
        return f"Drop `out={spelled}`: the call is bound to it already", [drop], safe

    def _fresh_sequential_input(self, call: cst.Call) -> bool:
        """``call`` is an element of ``nn.Sequential`` after a module that returns new tensors."""
        arg = self.parent.get(call)
        seq = self.parent.get(arg) if arg is not None else None
        if not isinstance(arg, cst.Arg) or not isinstance(seq, cst.Call):
            return False
        if not (dotted_name(seq.func) or "").endswith("Sequential"):
            return False
        index = next((i for i, a in enumerate(seq.args) if a is arg), 0)
        if index == 0 or arg.keyword is not None:
            return False
        previous = seq.args[index - 1].value
        if not isinstance(previous, cst.Call):
            return False
        short = (dotted_name(previous.func) or "").rsplit(".", 1)[-1]
        if built_fresh(short, previous):
            return True
        # an activation with an ``inplace`` flag left off returns a new tensor (``nn.ReLU()``);
        # dropout does not: in eval mode it hands its input back
        if "Dropout" in short or inplace_position(short) is None:
            return False
        return _inplace_arg(previous, short) is None and not _flag_unknown(previous, short)

    def _module_call_site(self, call: cst.Call, attr: str, capable: bool) -> _Built | None:
        """``self.act(out)`` with ``self.act = nn.ReLU(inplace=True)`` in the class."""
        cls = next((a for a in self.ancestors(call) if isinstance(a, cst.ClassDef)), None)
        if cls is None:
            return None
        constructors: list[cst.Call] = []
        uses = self._self_attributes(cls).get(attr, [])
        for use in uses:
            target = self.parent.get(use)
            assign = self.parent.get(target) if isinstance(target, cst.AssignTarget) else None
            if isinstance(assign, cst.Assign):
                if not isinstance(assign.value, cst.Call):
                    return None
                constructors.append(assign.value)
        if len(constructors) != 1:
            return None
        constructor = constructors[0]
        short = (dotted_name(constructor.func) or "").rsplit(".", 1)[-1]
        if short == "Sequential":  # the first element is the one that gets the call's input
            first = constructor.args[0].value if constructor.args else None
            if not isinstance(first, cst.Call) or constructor.args[0].star:
                return None
            constructor = first
            short = (dotted_name(constructor.func) or "").rsplit(".", 1)[-1]
        edits = self._drop_inplace(constructor, short)
        if edits is None:
            return None
        safe = capable
        for use in uses:
            site = self.parent.get(use)
            if isinstance(site, cst.AssignTarget):
                continue
            if not (isinstance(site, cst.Call) and site.func is use and len(site.args) == 1):
                safe = False
                break
            arg = site.args[0].value
            if not (isinstance(arg, cst.Name) and self.assigned_to(site) == arg.value):
                safe = False
                break
            if not self.rebind_is_safe(arg.value, self.parent[site]):
                safe = False
                break
        return f"Construct `self.{attr}` without `inplace=True`", edits, safe

    def _clone_in_backward(self, node: cst.CSTNode, cloned: set[tuple[int, str]]) -> _Built | None:
        function = next((a for a in self.ancestors(node) if isinstance(a, SCOPES)), None)
        if not isinstance(function, cst.FunctionDef) or function.name.value != "backward":
            return None  # forward needs mark_dirty or a copy: a decision, not a rewrite
        name = self.written_name(node)
        if name is None:
            return None
        key = (id(function), name)
        if key in cloned:
            return None  # the clone before the first write covers this one too
        statement = self.statement(node)
        if statement is None or isinstance(self.parent.get(statement), cst.If):
            return None  # nothing can be inserted before an ``elif``
        edits = self._clone_before(statement, name)
        if edits is None:
            return None
        cloned.add(key)
        return f"Clone `{name}` before writing to it in backward", edits, True

    def _clone_before(self, statement: cst.CSTNode, name: str) -> list[Edit] | None:
        """Insert ``name = name.clone()`` before ``statement``, on its own line if it has one."""
        start = self.start(statement)
        line = self.lines()[start.line - 1]
        before = line[: start.column - 1]
        clone = f"{name} = {name}.clone()"
        if before.strip() == "":
            ending = NEWLINE.search(line)
            newline = ending.group(0) if ending else self.module.default_newline
            return [Edit(start, start, f"{clone}{newline}{before}")]
        if isinstance(statement, cst.BaseSmallStatement):
            return [Edit(start, start, f"{clone}; ")]
        return None


def _reads_of(value: cst.BaseExpression, name: str) -> list[cst.BaseExpression]:
    """The reads of ``name`` in ``value`` passed straight to a call (``self.conv(x[:, :k])``):
    the name or a subscript of it, a view the called layer or function may keep."""
    calls = (n for n in walk(value, skip=_is_lambda) if isinstance(n, cst.Call))
    return [
        arg.value
        for call in calls
        for arg in call.args
        if _is_name(arg.value, name)
        or (isinstance(arg.value, cst.Subscript) and _is_name(arg.value.value, name))
    ]


def _is_lambda(node: cst.CSTNode) -> bool:
    return isinstance(node, cst.Lambda)


def _is_name(node: cst.CSTNode, name: str) -> bool:
    return isinstance(node, cst.Name) and node.value == name


def _inplace_arg(call: cst.Call, name: str) -> cst.Arg | None:
    """The argument that turns ``inplace`` on, by keyword or by its known position."""
    flag = keyword(call, "inplace")
    if flag is not None:
        return flag if is_true(flag.value) else None
    positional = positional_inplace(call, name.rsplit(".", 1)[-1])
    return positional if positional is not None and is_true(positional.value) else None


def _flag_unknown(call: cst.Call, short: str) -> bool:
    """The ``inplace`` flag of ``call`` is set by something other than a literal or left off
    (``nn.ReLU(inplace=flag)``, ``nn.ReLU(*args)``), so its output may be its input."""
    flag = keyword(call, "inplace") or positional_inplace(call, short)
    if any(a.star for a in call.args):
        return True
    return flag is not None and not (
        isinstance(flag.value, cst.Name) and flag.value.value in ("True", "False")
    )
