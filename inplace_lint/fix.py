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
* in a custom ``backward`` (IPL005), ``g = g.clone()`` before the first in-place write to ``g``.

No fix rebinds a name that ``torch.autograd.grad`` or ``backward(inputs=...)`` differentiates
against: the grad call would then get a tensor outside the graph.

A fix is *safe* when it cannot change what correct code computes. Only IPL001 rewrites (and
IPL005 clones) can be: IPL002, IPL004 and IPL006 exist because another name sees the write, so
removing it changes what that name reads. An IPL001 rewrite is safe only when the written name
is a local whose every earlier binding is a fresh tensor and whose earlier uses create no alias
(no view, no container, no call that might keep it, no closure), outside ``no_grad``. IPL003,
IPL007 and IPL008 carry no fix. This module never imports the code it reads, nor torch.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace

import libcst as cst
from libcst.metadata import CodeRange

from inplace_lint.facts.walk import children_of, walk
from inplace_lint.finding import Edit, Finding, Fix, Position
from inplace_lint.positions import Range, by_range, module_positions

__all__ = ["ParentMemo", "attach_fixes"]

_REBINDING = re.compile(r"\s*([A-Za-z_]\w*) = ")


def _rebound(edits: Sequence[Edit]) -> set[str]:
    """The names an insertion among ``edits`` rebinds (``x = `` or ``x = x.clone()``)."""
    names: set[str] = set()
    for edit in edits:
        match = _REBINDING.match(edit.text) if edit.start == edit.end else None
        if match:
            names.add(match.group(1))
    return names


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


#: Codes whose fix makes the write out of place.
_OUT_OF_PLACE_CODES = frozenset({"IPL001", "IPL002", "IPL004", "IPL006"})
#: Of those, the codes whose fix can be safe (the others change what another name reads).
_SAFE_CAPABLE = frozenset({"IPL001"})

#: Out-of-place tensor operations that always return a new tensor (never a view or ``self``);
#: ``name_`` is an in-place twin with the same signature where it exists.
_FRESH = _words(
    """
    abs absolute acos acosh add addbmm addcdiv addcmul addmm addmv addr asin asinh atan atan2
    atanh baddbmm bernoulli bitwise_and bitwise_not bitwise_or bitwise_xor bmm cat ceil celu clamp
    clamp_max clamp_min clip clone concat concatenate cos cosh cross cummax cummin cumprod cumsum
    deg2rad digamma div divide dot einsum elu eq erf erfc erfinv exp exp2 expm1 eye fix flip
    float_power floor floor_divide fmax fmin fmod frac full full_like gather ge gelu gt hardshrink
    hardsigmoid hardswish hardtanh heaviside hypot i0 index_add index_copy index_fill index_put
    index_select isfinite isinf isnan layer_norm le leaky_relu lerp lgamma linear log log10 log1p
    log2 log_softmax logaddexp logical_and logical_not logical_or logical_xor logit logsigmoid
    logsumexp lt masked_fill masked_scatter masked_select matmul maximum mean minimum mish mm mul
    multiply mv nan_to_num ne neg negative norm normalize ones ones_like outer pow prod rad2deg
    rand rand_like randint randint_like randn randn_like reciprocal relu relu6 remainder renorm
    repeat repeat_interleave roll round rrelu rsqrt scatter scatter_add scatter_reduce selu sgn
    sigmoid sign silu sin sinc sinh softmax softmin softplus softshrink sqrt square stack std sub
    subtract sum tan tanh tensor threshold tril triu true_divide trunc var where xlogy zeros
    zeros_like conv1d conv2d conv3d conv_transpose1d conv_transpose2d conv_transpose3d
    batch_norm group_norm instance_norm embedding one_hot cosine_similarity cdist linspace arange
    empty empty_like logspace
    """
)

#: Tensor methods and attributes that read metadata or values without aliasing the storage.
_META = _words(
    """
    shape dtype device ndim requires_grad is_leaf grad_fn grad layout is_cuda size dim numel
    nelement item tolist stride element_size is_contiguous is_floating_point is_complex data_ptr
    get_device storage_offset any all argmax argmin max min count_nonzero allclose equal isclose
    """
)

#: Builtins that take a tensor without keeping a reference to it.
_SAFE_BUILTINS = _words(
    "len print float int bool str repr format isinstance type id hash round abs"
)

#: ``nn`` modules whose output is always a new tensor (never their input).
_FRESH_MODULES = _words(
    """
    Linear Bilinear Conv1d Conv2d Conv3d ConvTranspose1d ConvTranspose2d ConvTranspose3d
    BatchNorm1d BatchNorm2d BatchNorm3d LayerNorm GroupNorm InstanceNorm1d InstanceNorm2d
    InstanceNorm3d Sigmoid Tanh Softmax LogSoftmax Softplus GELU Embedding MaxPool1d MaxPool2d
    MaxPool3d AvgPool1d AvgPool2d AvgPool3d AdaptiveAvgPool1d AdaptiveAvgPool2d AdaptiveAvgPool3d
    LogSigmoid Softsign Tanhshrink
    """
)

#: Modules and functionals that take ``inplace`` positionally, with its 0-based position.
_INPLACE_ARG = {
    **dict.fromkeys(("ReLU", "ReLU6", "SELU", "SiLU", "Mish", "Hardswish", "Hardsigmoid"), 0),
    **dict.fromkeys(("ELU", "CELU", "LeakyReLU", "Dropout", "Dropout1d", "Dropout2d"), 1),
    **dict.fromkeys(("Dropout3d", "AlphaDropout", "FeatureAlphaDropout"), 1),
    **dict.fromkeys(("Hardtanh", "Threshold", "RReLU"), 2),
    **dict.fromkeys(("relu", "relu6", "selu", "silu", "mish", "hardswish", "hardsigmoid"), 1),
    **dict.fromkeys(("elu", "celu", "leaky_relu"), 2),
    **dict.fromkeys(("hardtanh", "threshold", "dropout", "dropout1d", "dropout2d"), 3),
    **dict.fromkeys(("dropout3d", "alpha_dropout", "feature_alpha_dropout"), 3),
    "rrelu": 4,
}

_GRAD_OFF = ("no_grad", "inference_mode", "set_grad_enabled")

_AUG_TO_BIN = {
    "+=": "+",
    "-=": "-",
    "*=": "*",
    "/=": "/",
    "//=": "//",
    "%=": "%",
    "**=": "**",
    "@=": "@",
    "&=": "&",
    "|=": "|",
    "^=": "^",
    "<<=": "<<",
    ">>=": ">>",
}

_ATOMS = (
    cst.Name,
    cst.Attribute,
    cst.Call,
    cst.Subscript,
    cst.Integer,
    cst.Float,
    cst.Imaginary,
    cst.SimpleString,
    cst.ConcatenatedString,
    cst.FormattedString,
    cst.List,
    cst.Tuple,
    cst.Dict,
    cst.Set,
)

_SCOPES = (cst.FunctionDef, cst.Lambda, cst.ClassDef)
_COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)
_NEWLINE = re.compile(r"\r\n|\r|\n")

_Built = tuple[str, list[Edit], bool]


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
    fixer = _Fixer(module, positions, text, parents)
    result = []
    cloned: set[tuple[int, str]] = set()
    for finding in findings:
        try:
            fix = fixer.fix_for(finding, cloned)
        except (RecursionError, KeyError, IndexError, ValueError, AttributeError, TypeError):
            fix = None  # a rewrite this module cannot build is simply not offered
        result.append(replace(finding, fix=fix) if fix is not None else finding)
    return result


_Links = tuple[dict[cst.CSTNode, cst.CSTNode], list[cst.Import | cst.ImportFrom]]


def _links(root: cst.CSTNode) -> _Links:
    """Parent links under ``root`` and its imports, in the order a stack walk meets them."""
    parent: dict[cst.CSTNode, cst.CSTNode] = {}
    imports: list[cst.Import | cst.ImportFrom] = []
    stack = [root]
    while stack:
        node = stack.pop()
        if type(node) is cst.Import or type(node) is cst.ImportFrom:
            imports.append(node)
        for child in children_of(node):
            parent[child] = node
            stack.append(child)
    return parent, imports


_ScopeIndex = tuple[dict[str, list[tuple[cst.Name, bool]]], set[str]]


class ParentMemo:
    """Parent links of one document's top-level statements, kept between its versions, and
    the name indexes of its scopes and classes (each depends only on its own nodes)."""

    def __init__(self) -> None:
        self._links: dict[cst.CSTNode, _Links] = {}
        self.scopes: dict[cst.CSTNode, _ScopeIndex] = {}
        self.classes: dict[cst.ClassDef, dict[str, list[cst.Attribute]]] = {}

    def links(self, statement: cst.CSTNode) -> _Links:
        found = self._links.get(statement)
        if found is None:
            found = self._links[statement] = _links(statement)
        return found

    def keep(self, statements: Sequence[cst.CSTNode]) -> None:
        """Forget the statements of older versions."""
        current = set(statements)
        for statement in [s for s in self._links if s not in current]:
            del self._links[statement]


class _Fixer:
    """Positions, parents and imports of one module, and the rewrites built from them."""

    def __init__(
        self,
        module: cst.Module,
        positions: Mapping[cst.CSTNode, CodeRange] | None = None,
        text: str | None = None,
        parents: ParentMemo | None = None,
    ) -> None:
        self.module = module
        if positions is None:
            positions = module_positions(module)
        self.pos: Mapping[cst.CSTNode, CodeRange] = positions
        self.parent: dict[cst.CSTNode, cst.CSTNode] = {}
        self.at: dict[Range, list[cst.CSTNode]] | None = None
        self.aliases: dict[str, str] = {}
        self._text = text
        children = children_of(module)
        for child in children:
            self.parent[child] = module
        # the walk goes last statement first (a stack): an earlier import's alias wins
        for child in reversed(children):
            links, imports = _links(child) if parents is None else parents.links(child)
            self.parent.update(links)
            for node in imports:
                self._record_import(node)
        if parents is not None:
            parents.keep(children)
        self._lines: list[str] | None = None
        self._scopes: dict[cst.CSTNode, _ScopeIndex] = {}
        self._classes: dict[cst.ClassDef, dict[str, list[cst.Attribute]]] = {}
        if parents is not None:  # indexes of scopes and classes that are still in the tree
            self._scopes = parents.scopes = {
                k: v for k, v in parents.scopes.items() if k in self.parent
            }
            self._classes = parents.classes = {
                k: v for k, v in parents.classes.items() if k in self.parent
            }

    # ----------------------------------------------------------------- lookup helpers

    def _record_import(self, node: cst.Import | cst.ImportFrom) -> None:
        if isinstance(node, cst.Import):
            for alias in node.names:
                full = _dotted(alias.name)
                if full is None:
                    continue
                if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                    self.aliases[alias.asname.name.value] = full
                else:
                    root = full.split(".")[0]
                    self.aliases[root] = root
            return
        if node.relative or node.module is None or isinstance(node.names, cst.ImportStar):
            return
        base = _dotted(node.module)
        if base is None:
            return
        for alias in node.names:
            name = _dotted(alias.name)
            if name is None:
                continue
            local = name
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                local = alias.asname.name.value
            self.aliases[local] = f"{base}.{name}"

    def qualified(self, node: cst.BaseExpression) -> str | None:
        """``F.relu`` -> ``torch.nn.functional.relu`` through the module's imports."""
        dotted = _dotted(node)
        if dotted is None:
            return None
        head, _, rest = dotted.partition(".")
        if head in self.aliases:
            return self.aliases[head] + (f".{rest}" if rest else "")
        return None

    @functools.cached_property
    def grad_targets(self) -> frozenset[str]:
        """Names some ``torch.autograd.grad(out, inputs)`` or ``.backward(inputs=...)`` in the
        module differentiates against: rebinding one of them changes what is differentiated."""
        found: set[str] = set()
        for node in walk(self.module):
            if not isinstance(node, cst.Call):
                continue
            inputs: cst.BaseExpression | None = None
            for position, arg in enumerate(node.args):
                keyword = arg.keyword.value if arg.keyword is not None else None
                if keyword == "inputs" or (
                    keyword is None and position == 1 and self._is_grad_call(node)
                ):
                    inputs = arg.value
            if inputs is None:
                continue
            elements = (
                [e.value for e in inputs.elements]
                if isinstance(inputs, cst.List | cst.Tuple)
                else [inputs]
            )
            found.update(e.value for e in elements if isinstance(e, cst.Name))
        return frozenset(found)

    def _is_grad_call(self, call: cst.Call) -> bool:
        name = self.qualified(call.func) or _dotted(call.func) or ""
        return name in ("torch.autograd.grad", "autograd.grad")

    def is_torch(self, node: cst.BaseExpression) -> bool:
        name = self.qualified(node)
        return name is not None and (name == "torch" or name.startswith("torch."))

    def node_at(self, finding: Finding) -> cst.CSTNode | None:
        start = (finding.start.line, finding.start.column - 1)
        end = (finding.end.line, finding.end.column - 1)
        nodes_at = getattr(self.pos, "nodes_at", None)
        if nodes_at is not None:
            nodes = nodes_at(start, end)
        else:
            if self.at is None:
                self.at = by_range(self.pos)
            nodes = self.at.get((*start, *end), [])
        for kind in (cst.Call, cst.AugAssign, cst.Subscript, cst.Assign):
            for node in nodes:
                if isinstance(node, kind):
                    return node
        return None

    def ancestors(self, node: cst.CSTNode) -> Iterator[cst.CSTNode]:
        while node in self.parent:
            node = self.parent[node]
            yield node

    def start(self, node: cst.CSTNode) -> Position:
        where = self.pos[node]
        return Position(where.start.line, where.start.column + 1)

    def end(self, node: cst.CSTNode) -> Position:
        where = self.pos[node]
        return Position(where.end.line, where.end.column + 1)

    def lines(self) -> list[str]:
        if self._lines is None:
            code = self._text if self._text is not None else self.module.code
            self._lines = []
            begin = 0
            for match in _NEWLINE.finditer(code):
                self._lines.append(code[begin : match.end()])
                begin = match.end()
            self._lines.append(code[begin:])
        return self._lines

    def text(self, start: Position, end: Position) -> str:
        lines = self.lines()
        if start.line == end.line:
            return lines[start.line - 1][start.column - 1 : end.column - 1]
        parts = [lines[start.line - 1][start.column - 1 :]]
        parts.extend(lines[start.line : end.line - 1])
        parts.append(lines[end.line - 1][: end.column - 1])
        return "".join(parts)

    def statement(self, node: cst.CSTNode) -> cst.CSTNode | None:
        """The small statement (``Expr``, ``Assign``, ...) that holds ``node``."""
        for parent in self.ancestors(node):
            if isinstance(parent, cst.BaseSmallStatement):
                return parent
            if isinstance(parent, cst.BaseCompoundStatement):
                return parent
        return None

    def is_statement(self, call: cst.CSTNode) -> bool:
        """``call`` is a whole expression statement (its value is thrown away)."""
        parent = self.parent.get(call)
        return isinstance(parent, cst.Expr) and parent.value is call

    def assigned_to(self, value: cst.CSTNode) -> str | None:
        """``y`` when ``value`` is the whole right-hand side of ``y = value``."""
        parent = self.parent.get(value)
        if (
            isinstance(parent, cst.Assign)
            and parent.value is value
            and len(parent.targets) == 1
            and isinstance(parent.targets[0].target, cst.Name)
        ):
            return parent.targets[0].target.value
        return None

    # ----------------------------------------------------------------- dispatch

    def fix_for(self, finding: Finding, cloned: set[tuple[int, str]]) -> Fix | None:
        node = self.node_at(finding)
        if node is None:
            return None
        built: _Built | None = None
        if finding.code == "IPL005":
            built = self._clone_in_backward(node, cloned)
        elif finding.code in _OUT_OF_PLACE_CODES:
            built = self._out_of_place(node, finding.code)
        if built is None:
            return None
        description, edits, safe = built
        if not edits:
            return None
        rebound = _rebound(edits)
        if rebound and rebound & self.grad_targets:
            return None  # ``x = ...`` would hand the grad call a tensor outside the graph
        return Fix(description, tuple(sorted(edits, key=lambda e: (e.start, e.end))), safe)

    def _out_of_place(self, node: cst.CSTNode, code: str) -> _Built | None:
        capable = code in _SAFE_CAPABLE
        if isinstance(node, cst.AugAssign):
            return self._augassign(node, capable)
        if isinstance(node, cst.Subscript):
            return self._subscript_write(node, capable)
        if not isinstance(node, cst.Call):
            return None
        func = node.func
        if isinstance(func, cst.Attribute) and _is_inplace_name(func.attr.value):
            if self.is_torch(func.value):
                return self._function_form(node, func, capable)
            return self._method_form(node, func, capable)
        if _inplace_arg(node, self.qualified(func) or _dotted(func) or "") is not None:
            return self._inplace_flag(node, capable)
        if _keyword(node, "out") is not None:
            return self._out_argument(node, capable)
        if isinstance(func, cst.Attribute) and _is_self(func.value):
            return self._module_call_site(node, func.attr.value, capable)
        return None

    # ----------------------------------------------------------------- rewrites

    def _method_form(self, call: cst.Call, func: cst.Attribute, capable: bool) -> _Built | None:
        method = func.attr.value
        base = method[:-1]
        if base not in _FRESH:
            return None
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
        methods: list[cst.Attribute] = []
        node: cst.BaseExpression = call
        while (
            isinstance(node, cst.Call)
            and isinstance(node.func, cst.Attribute)
            and _is_inplace_name(node.func.attr.value)
        ):
            methods.insert(0, node.func)
            node = node.func.value
        root, top = node, call
        while True:
            attribute = self.parent.get(top)
            outer = self.parent.get(attribute) if attribute is not None else None
            if not (
                isinstance(attribute, cst.Attribute)
                and attribute.value is top
                and isinstance(outer, cst.Call)
                and outer.func is attribute
                and _is_inplace_name(attribute.attr.value)
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
        if any(m.attr.value[:-1] not in _FRESH for m in methods):
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
        if base not in _FRESH or not call.args or call.args[0].keyword is not None:
            return None
        written = call.args[0].value
        rename = Edit(self.start(func.attr), self.end(func.attr), base)
        shown = _dotted(func.value) or "torch"
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
        binary = _AUG_TO_BIN.get(operator)
        if binary is None:
            return None
        edits = [Edit(self.start(node.operator), self.end(node.operator), f"= {name} {binary}")]
        value = node.value
        if not isinstance(value, _ATOMS) and not value.lpar:
            edits.append(Edit(self.start(value), self.start(value), "("))
            edits.append(Edit(self.end(value), self.end(value), ")"))
        safe = capable and self.rebind_is_safe(name, node)
        return f"Replace `{name} {operator} ...` with `{name} = {name} {binary} ...`", edits, safe

    def _subscript_target(self, node: cst.AugAssign, capable: bool) -> _Built | None:
        if isinstance(node.target, cst.Subscript):
            return self._subscript_write(node.target, capable)
        return None

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
        return f"Write into a clone: insert `{name} = {name}.clone()` first", edits, safe

    def _inplace_flag(self, call: cst.Call, capable: bool) -> _Built | None:
        name = self.qualified(call.func) or _dotted(call.func) or ""
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
                if not _is_true(arg.value):
                    return None
                drop = self._drop_argument(call, index)
                if drop is not None:
                    return [drop]
                return [Edit(self.start(arg.value), self.end(arg.value), "False")]
        position = _INPLACE_ARG.get(short)
        positional = [a for a in call.args if a.keyword is None and not a.star]
        if position is not None and position < len(positional):
            value = positional[position].value
            if _is_true(value):
                return [Edit(self.start(value), self.end(value), "False")]
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
        out = _keyword(call, "out")
        if out is None or not isinstance(out.value, cst.Name) or not self.is_statement(call):
            return None
        index = list(call.args).index(out)
        drop = self._drop_argument(call, index)
        if drop is None:
            return None
        name = out.value.value
        edits = [Edit(self.start(call), self.start(call), f"{name} = "), drop]
        safe = capable and self.rebind_is_safe(name, call)
        return f"Replace `out={name}` with `{name} = ...`", edits, safe

    def _fresh_sequential_input(self, call: cst.Call) -> bool:
        """``call`` is an element of ``nn.Sequential`` after a module that returns new tensors."""
        arg = self.parent.get(call)
        seq = self.parent.get(arg) if arg is not None else None
        if not isinstance(arg, cst.Arg) or not isinstance(seq, cst.Call):
            return False
        if not (_dotted(seq.func) or "").endswith("Sequential"):
            return False
        index = next((i for i, a in enumerate(seq.args) if a is arg), 0)
        if index == 0 or arg.keyword is not None:
            return False
        previous = seq.args[index - 1].value
        if not isinstance(previous, cst.Call):
            return False
        short = (_dotted(previous.func) or "").rsplit(".", 1)[-1]
        return short in _FRESH_MODULES and _keyword(previous, "inplace") is None

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
        short = (_dotted(constructor.func) or "").rsplit(".", 1)[-1]
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
        function = next((a for a in self.ancestors(node) if isinstance(a, _SCOPES)), None)
        if not isinstance(function, cst.FunctionDef) or function.name.value != "backward":
            return None  # forward needs mark_dirty or a copy: a decision, not a rewrite
        name = self._written_name(node)
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

    def _written_name(self, node: cst.CSTNode) -> str | None:
        if isinstance(node, cst.Call):
            func = node.func
            if isinstance(func, cst.Attribute) and _is_inplace_name(func.attr.value):
                if self.is_torch(func.value):
                    written = node.args[0].value if node.args else None
                else:
                    written = func.value
                return written.value if isinstance(written, cst.Name) else None
            return None
        if isinstance(node, cst.AugAssign):
            target = node.target
            if isinstance(target, cst.Subscript):
                target = target.value
            return target.value if isinstance(target, cst.Name) else None
        if isinstance(node, cst.Subscript) and isinstance(node.value, cst.Name):
            return node.value.value
        return None

    def _clone_before(self, statement: cst.CSTNode, name: str) -> list[Edit] | None:
        """Insert ``name = name.clone()`` before ``statement``, on its own line if it has one."""
        start = self.start(statement)
        line = self.lines()[start.line - 1]
        before = line[: start.column - 1]
        clone = f"{name} = {name}.clone()"
        if before.strip() == "":
            ending = _NEWLINE.search(line)
            newline = ending.group(0) if ending else self.module.default_newline
            return [Edit(start, start, f"{clone}{newline}{before}")]
        if isinstance(statement, cst.BaseSmallStatement):
            return [Edit(start, start, f"{clone}; ")]
        return None

    # ----------------------------------------------------------------- safety

    def grad_off(self, node: cst.CSTNode) -> bool:
        """``node`` runs under ``no_grad``/``inference_mode`` as far as the text shows."""
        for parent in self.ancestors(node):
            if isinstance(parent, cst.With):
                for item in parent.items:
                    if any(word in _source(item.item) for word in _GRAD_OFF):
                        return True
            if isinstance(parent, cst.FunctionDef):
                for decorator in parent.decorators:
                    if any(word in _source(decorator.decorator) for word in _GRAD_OFF):
                        return True
        return False

    def is_fresh(self, node: cst.BaseExpression) -> bool:
        """``node`` always evaluates to a tensor that no other name holds."""
        if isinstance(node, cst.BinaryOperation | cst.Comparison):
            return True
        if isinstance(node, cst.UnaryOperation):
            return not isinstance(node.operator, cst.Plus)
        if not isinstance(node, cst.Call):
            return False
        if _keyword(node, "out") is not None:
            return False
        flag = _keyword(node, "inplace")
        if flag is not None and not (
            isinstance(flag.value, cst.Name) and flag.value.value == "False"
        ):
            return False
        func = node.func
        qualified = self.qualified(func)
        if qualified is not None:
            return qualified.startswith("torch.") and qualified.rsplit(".", 1)[-1] in _FRESH
        if isinstance(func, cst.Attribute):  # a tensor method; ``self.relu(x)`` is a module
            root = func.value
            while isinstance(root, cst.Attribute | cst.Call | cst.Subscript):
                root = root.func if isinstance(root, cst.Call) else root.value
            return func.attr.value in _FRESH and not _is_self(root)
        return False

    def rebind_is_safe(self, name: str, site: cst.CSTNode) -> bool:
        """Rebinding ``name`` instead of writing to its tensor at ``site`` changes nothing else.

        True when ``name`` is a local (not a parameter, global or closure variable), every
        binding that can reach ``site`` is a fresh tensor, and no use that can run before
        ``site`` hands the tensor to anything that could keep it (another name, a view, a
        container, an unknown call), and the write is not under ``no_grad``.
        """
        if self.grad_off(site):
            return False
        scope: cst.CSTNode | None = None
        for parent in self.ancestors(site):
            if isinstance(parent, (*_COMPREHENSIONS, cst.Lambda, cst.ClassDef)):
                return False
            if isinstance(parent, cst.FunctionDef | cst.Module):
                scope = parent
                break
        if scope is None:
            return False
        if isinstance(scope, cst.FunctionDef):
            params = scope.params
            every = [*params.posonly_params, *params.params, *params.kwonly_params]
            for extra in (params.star_arg, params.star_kwarg):
                if isinstance(extra, cst.Param):
                    every.append(extra)
            if any(p.name.value == name for p in every):
                return False
        here = self.pos[site].start
        loops = [self.pos[a] for a in self.ancestors(site) if isinstance(a, cst.For | cst.While)]
        site_nodes = set(_walk(site))
        bound_before = False
        names, declared = self._scope_index(scope)
        if name in declared:
            return False
        for node, nested in names.get(name, ()):
            if self._not_a_variable(node):
                continue
            if nested:
                return False  # a closure or nested class may keep the tensor
            if node in site_nodes:
                continue
            where = self.pos.get(node)
            if where is None:
                return False
            earlier = (where.start.line, where.start.column) < (here.line, here.column)
            looped = any(_inside(where, loop) for loop in loops)
            if not (earlier or looped):
                continue
            verdict = self._use_is_harmless(node)
            if verdict is None:
                return False
            bound_before = bound_before or (verdict == "bind" and earlier)
        return bound_before

    def _scope_index(self, scope: cst.CSTNode) -> _ScopeIndex:
        """The ``Name`` nodes of a scope by name (with whether they sit in a nested scope) and
        the names it declares ``global`` or ``nonlocal``; built once per scope."""
        cached = self._scopes.get(scope)
        if cached is not None:
            return cached
        names: dict[str, list[tuple[cst.Name, bool]]] = {}
        declared: set[str] = set()
        body = scope.body if isinstance(scope, cst.FunctionDef) else scope
        for node, nested in _walk_scope(body):
            if isinstance(node, cst.Name):
                names.setdefault(node.value, []).append((node, nested))
            elif isinstance(node, cst.Global | cst.Nonlocal):
                declared.update(n.name.value for n in node.names)
        self._scopes[scope] = (names, declared)
        return names, declared

    def _self_attributes(self, cls: cst.ClassDef) -> dict[str, list[cst.Attribute]]:
        """Every ``self.NAME`` in a class, by ``NAME``; built once per class."""
        cached = self._classes.get(cls)
        if cached is None:
            cached = {}
            for node in _walk(cls):
                if isinstance(node, cst.Attribute) and _is_self(node.value):
                    cached.setdefault(node.attr.value, []).append(node)
            self._classes[cls] = cached
        return cached

    def _not_a_variable(self, name: cst.Name) -> bool:
        """``obj.name`` and ``f(name=...)`` spell the name without using the variable."""
        parent = self.parent.get(name)
        if isinstance(parent, cst.Attribute) and parent.attr is name:
            return True
        return isinstance(parent, cst.Arg) and parent.keyword is name

    def _use_is_harmless(self, name: cst.Name) -> str | None:
        """``"bind"`` for a fresh binding, ``"use"`` for a use that keeps no alias, else None."""
        parent = self.parent.get(name)
        if isinstance(parent, cst.AssignTarget):
            assign = self.parent.get(parent)
            if isinstance(assign, cst.Assign) and self.is_fresh(assign.value):
                return "bind"
            return None
        if isinstance(parent, cst.AnnAssign) and parent.target is name:
            return "bind" if parent.value is not None and self.is_fresh(parent.value) else None
        if isinstance(parent, cst.AugAssign) and parent.target is name:
            return "use"
        if isinstance(parent, cst.NamedExpr):
            return "bind" if parent.target is name and self.is_fresh(parent.value) else None
        if isinstance(parent, cst.Attribute) and parent.value is name:
            outer = self.parent.get(parent)
            attr = parent.attr.value
            if isinstance(outer, cst.Call) and outer.func is parent:
                if attr in _META or (attr in _FRESH and _keyword(outer, "out") is None):
                    return "use"
                if _is_inplace_name(attr) and self.is_statement(outer):
                    return "use"
                return None
            return "use" if attr in _META else None
        if isinstance(parent, cst.BinaryOperation | cst.Comparison | cst.ComparisonTarget):
            return "use"
        if isinstance(parent, cst.UnaryOperation):
            return None if isinstance(parent.operator, cst.Plus) else "use"
        if isinstance(parent, cst.Return | cst.Expr | cst.If | cst.While | cst.Del):
            return "use"
        if isinstance(parent, cst.FormattedStringExpression):
            return "use"
        if isinstance(parent, cst.Arg) and parent.value is name:
            call = self.parent.get(parent)
            if not isinstance(call, cst.Call):
                return None
            func = call.func
            if isinstance(func, cst.Name) and func.value in _SAFE_BUILTINS - self.aliases.keys():
                return "use"
            return "use" if self.is_fresh(call) else None
        if isinstance(parent, cst.Element):
            sequence = self.parent.get(parent)
            arg = self.parent.get(sequence) if sequence is not None else None
            call = self.parent.get(arg) if isinstance(arg, cst.Arg) else None
            if isinstance(sequence, cst.List | cst.Tuple) and isinstance(call, cst.Call):
                return "use" if self.is_fresh(call) else None
        return None


# --------------------------------------------------------------------------- plain helpers


def _dotted(node: cst.CSTNode) -> str | None:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        head = _dotted(node.value)
        return f"{head}.{node.attr.value}" if head is not None else None
    return None


def _source(node: cst.CSTNode) -> str:
    return cst.Module(body=[]).code_for_node(node)


def _is_self(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Name) and node.value == "self"


def _is_true(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Name) and node.value == "True"


def _is_inplace_name(name: str) -> bool:
    return name.endswith("_") and not name.endswith("__") and len(name) > 1


def _keyword(call: cst.Call, keyword: str) -> cst.Arg | None:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == keyword:
            return arg
    return None


def _inplace_arg(call: cst.Call, name: str) -> cst.Arg | None:
    """The argument that turns ``inplace`` on, by keyword or by its known position."""
    flag = _keyword(call, "inplace")
    if flag is not None:
        return flag if _is_true(flag.value) else None
    position = _INPLACE_ARG.get(name.rsplit(".", 1)[-1])
    positional = [a for a in call.args if a.keyword is None and not a.star]
    if position is not None and position < len(positional) and _is_true(positional[position].value):
        return positional[position]
    return None


def _inside(inner: CodeRange, outer: CodeRange) -> bool:
    a = (inner.start.line, inner.start.column)
    b = (outer.start.line, outer.start.column)
    c = (outer.end.line, outer.end.column)
    return b <= a <= c


def _walk(root: cst.CSTNode) -> Iterator[cst.CSTNode]:
    stack = [root]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(node.children)


def _walk_scope(root: cst.CSTNode) -> Iterator[tuple[cst.CSTNode, bool]]:
    """Nodes under ``root``, each with whether it sits in a nested function, lambda or class."""
    stack: list[tuple[cst.CSTNode, bool]] = [(root, False)]
    while stack:
        node, nested = stack.pop()
        yield node, nested
        inner = nested or (node is not root and isinstance(node, _SCOPES))
        stack.extend((child, inner) for child in node.children)
