"""Build the libcst tree the analysis reads from a stdlib ``ast`` tree, without libcst's parser.

libcst's parser builds every token of a file (whitespace, commas, parentheses) as Python objects,
and on real code bases it costs several times CPython's own parse. The analysis reads none of
that trivia. So the engine first analyses a tree made here, straight from ``ast.parse``: the
same node classes with the same content fields, trivia left at libcst's defaults (shared, never
walked). Only a file where that pass finds something is parsed again by libcst, whose tree
places the findings and builds fixes. Nodes are made without libcst's validation, which the
stdlib parser has already done.

Differences from libcst's own tree, none of which the analysis reads: statements on one line
after a colon sit in an indented block; numbers and strings are spelled canonically
(``repr``); implicitly concatenated strings are one string; call arguments keep positional
before keyword order unless the source puts a keyword first; ``x[(a), b]`` reads as
``x[((a), b)]``. A ``match`` statement raises :class:`Unsupported`, and the caller
falls back to libcst's parser.
"""

from __future__ import annotations

import ast
import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

import libcst as cst

__all__ = ["Unsupported", "module_from_ast"]


class Unsupported(Exception):
    """The tree holds a construct this builder does not make; parse with libcst instead."""


_new = object.__new__
_DEFAULT = cst.MaybeSentinel.DEFAULT


def _slot_setter(kind: type, name: str) -> Callable[[object, object], None]:
    for klass in kind.__mro__:
        found = klass.__dict__.get(name)
        if found is not None and hasattr(found, "__set__"):
            return found.__set__
    raise TypeError(f"{kind.__name__}.{name} is not a slot")  # pragma: no cover


def _maker(kind: type, *given: str) -> Callable[..., Any]:
    """A constructor for ``kind`` taking ``given`` fields in order; the rest get defaults.

    Default values are made once and shared: they are trivia, sentinels or empty sequences.
    """
    setters = [_slot_setter(kind, name) for name in given]
    fixed: list[tuple[Callable[[object, object], None], object]] = []
    for field in dataclasses.fields(kind):
        if field.name in given:
            continue
        if field.default is not dataclasses.MISSING:
            value = field.default
        elif field.default_factory is not dataclasses.MISSING:
            value = field.default_factory()
        else:  # pragma: no cover - a required field missing from ``given`` is a bug here
            raise TypeError(f"{kind.__name__}.{field.name} has no default")
        fixed.append((_slot_setter(kind, field.name), value))
    count = len(given)
    pairs = tuple(fixed)

    if count == 1:
        (set0,) = setters

        def make1(a: object) -> Any:
            node = _new(kind)
            set0(node, a)
            for setter, value in pairs:
                setter(node, value)
            return node

        return make1

    def make(*values: object) -> Any:
        node = _new(kind)
        for index in range(count):
            setters[index](node, values[index])
        for setter, value in pairs:
            setter(node, value)
        return node

    return make


_Name = _maker(cst.Name, "value")
_Attribute = _maker(cst.Attribute, "value", "attr")
_Call = _maker(cst.Call, "func", "args")
_Arg = _maker(cst.Arg, "value", "keyword", "star")
_Subscript = _maker(cst.Subscript, "value", "slice")
_SubscriptElement = _maker(cst.SubscriptElement, "slice")
_Index = _maker(cst.Index, "value", "star")
_Slice = _maker(cst.Slice, "lower", "upper", "step")
_BinaryOperation = _maker(cst.BinaryOperation, "left", "operator", "right")
_UnaryOperation = _maker(cst.UnaryOperation, "operator", "expression")
_BooleanOperation = _maker(cst.BooleanOperation, "left", "operator", "right")
_Comparison = _maker(cst.Comparison, "left", "comparisons")
_ComparisonTarget = _maker(cst.ComparisonTarget, "operator", "comparator")
_Tuple = _maker(cst.Tuple, "elements")
_List = _maker(cst.List, "elements")
_Set = _maker(cst.Set, "elements")
_Element = _maker(cst.Element, "value")
_StarredElement = _maker(cst.StarredElement, "value")
_Dict = _maker(cst.Dict, "elements")
_DictElement = _maker(cst.DictElement, "key", "value")
_StarredDictElement = _maker(cst.StarredDictElement, "value")
_Integer = _maker(cst.Integer, "value")
_Float = _maker(cst.Float, "value")
_Imaginary = _maker(cst.Imaginary, "value")
_SimpleString = _maker(cst.SimpleString, "value")
_FormattedString = _maker(cst.FormattedString, "parts")
_FormattedStringText = _maker(cst.FormattedStringText, "value")
_FormattedStringExpression = _maker(
    cst.FormattedStringExpression, "expression", "conversion", "format_spec"
)
_Ellipsis = _maker(cst.Ellipsis)
_IfExp = _maker(cst.IfExp, "test", "body", "orelse")
_Lambda = _maker(cst.Lambda, "params", "body")
_NamedExpr = _maker(cst.NamedExpr, "target", "value")
_Await = _maker(cst.Await, "expression")
_Yield = _maker(cst.Yield, "value")
_From = _maker(cst.From, "item")
_ListComp = _maker(cst.ListComp, "elt", "for_in")
_SetComp = _maker(cst.SetComp, "elt", "for_in")
_GeneratorExp = _maker(cst.GeneratorExp, "elt", "for_in")
_DictComp = _maker(cst.DictComp, "key", "value", "for_in")
_CompFor = _maker(cst.CompFor, "target", "iter", "ifs", "inner_for_in", "asynchronous")
_CompIf = _maker(cst.CompIf, "test")
_Param = _maker(cst.Param, "name", "annotation", "default", "star")
_ParamStar = _maker(cst.ParamStar)
_ParamSlash = _maker(cst.ParamSlash)
_Parameters = _maker(
    cst.Parameters,
    "params",
    "star_arg",
    "kwonly_params",
    "star_kwarg",
    "posonly_params",
    "posonly_ind",
)
_Annotation = _maker(cst.Annotation, "annotation")
_Decorator = _maker(cst.Decorator, "decorator")
_AsName = _maker(cst.AsName, "name")
_Asynchronous = _maker(cst.Asynchronous)

_Module = _maker(cst.Module, "body")
_SimpleStatementLine = _maker(cst.SimpleStatementLine, "body")
_IndentedBlock = _maker(cst.IndentedBlock, "body")
_Expr = _maker(cst.Expr, "value")
_Assign = _maker(cst.Assign, "targets", "value")
_AssignTarget = _maker(cst.AssignTarget, "target")
_AnnAssign = _maker(cst.AnnAssign, "target", "annotation", "value")
_AugAssign = _maker(cst.AugAssign, "target", "operator", "value")
_Return = _maker(cst.Return, "value")
_Del = _maker(cst.Del, "target")
_Pass = _maker(cst.Pass)
_Break = _maker(cst.Break)
_Continue = _maker(cst.Continue)
_Raise = _maker(cst.Raise, "exc", "cause")
_Assert = _maker(cst.Assert, "test", "msg")
_Global = _maker(cst.Global, "names")
_Nonlocal = _maker(cst.Nonlocal, "names")
_NameItem = _maker(cst.NameItem, "name")
_Import = _maker(cst.Import, "names")
_ImportFrom = _maker(cst.ImportFrom, "module", "names", "relative")
_ImportAlias = _maker(cst.ImportAlias, "name", "asname")
_ImportStar = _maker(cst.ImportStar)
_Dot = cst.Dot()
_FunctionDef = _maker(
    cst.FunctionDef, "name", "params", "body", "decorators", "returns", "asynchronous"
)
_ClassDef = _maker(cst.ClassDef, "name", "body", "bases", "keywords", "decorators")
_If = _maker(cst.If, "test", "body", "orelse")
_Else = _maker(cst.Else, "body")
_For = _maker(cst.For, "target", "iter", "body", "orelse", "asynchronous")
_While = _maker(cst.While, "test", "body", "orelse")
_With = _maker(cst.With, "items", "body", "asynchronous")
_WithItem = _maker(cst.WithItem, "item", "asname")
_Try = _maker(cst.Try, "body", "handlers", "orelse", "finalbody")
_TryStar = _maker(cst.TryStar, "body", "handlers", "orelse", "finalbody")
_ExceptHandler = _maker(cst.ExceptHandler, "body", "type", "name")
_ExceptStarHandler = _maker(cst.ExceptStarHandler, "body", "type", "name")
_Finally = _maker(cst.Finally, "body")

#: Operators are trivia to the walks and read only by type, so one instance of each is shared.
_BINARY = {
    ast.Add: cst.Add(),
    ast.Sub: cst.Subtract(),
    ast.Mult: cst.Multiply(),
    ast.MatMult: cst.MatrixMultiply(),
    ast.Div: cst.Divide(),
    ast.FloorDiv: cst.FloorDivide(),
    ast.Mod: cst.Modulo(),
    ast.Pow: cst.Power(),
    ast.LShift: cst.LeftShift(),
    ast.RShift: cst.RightShift(),
    ast.BitOr: cst.BitOr(),
    ast.BitXor: cst.BitXor(),
    ast.BitAnd: cst.BitAnd(),
}
_AUGMENTED = {
    ast.Add: cst.AddAssign(),
    ast.Sub: cst.SubtractAssign(),
    ast.Mult: cst.MultiplyAssign(),
    ast.MatMult: cst.MatrixMultiplyAssign(),
    ast.Div: cst.DivideAssign(),
    ast.FloorDiv: cst.FloorDivideAssign(),
    ast.Mod: cst.ModuloAssign(),
    ast.Pow: cst.PowerAssign(),
    ast.LShift: cst.LeftShiftAssign(),
    ast.RShift: cst.RightShiftAssign(),
    ast.BitOr: cst.BitOrAssign(),
    ast.BitXor: cst.BitXorAssign(),
    ast.BitAnd: cst.BitAndAssign(),
}
_UNARY = {
    ast.UAdd: cst.Plus(),
    ast.USub: cst.Minus(),
    ast.Not: cst.Not(),
    ast.Invert: cst.BitInvert(),
}
_BOOLEAN = {ast.And: cst.And(), ast.Or: cst.Or()}
_COMPARE = {
    ast.Eq: cst.Equal(),
    ast.NotEq: cst.NotEqual(),
    ast.Lt: cst.LessThan(),
    ast.LtE: cst.LessThanEqual(),
    ast.Gt: cst.GreaterThan(),
    ast.GtE: cst.GreaterThanEqual(),
    ast.Is: cst.Is(),
    ast.IsNot: cst.IsNot(),
    ast.In: cst.In(),
    ast.NotIn: cst.NotIn(),
}
_CONVERSIONS = {-1: None, 115: "s", 114: "r", 97: "a"}


def module_from_ast(tree: ast.Module) -> cst.Module:
    """The libcst module for ``tree``, as the analysis reads it (see the module docstring)."""
    return _Module(_block(tree.body))


# -- statements -------------------------------------------------------------------------------


def _block(body: Sequence[ast.stmt]) -> list[cst.BaseStatement]:
    """Statements as libcst groups them: small ones on one line share a statement line."""
    out: list[cst.BaseStatement] = []
    line: list[cst.BaseSmallStatement] = []
    last_line = -1
    for stmt in body:
        small = _SMALL.get(type(stmt))
        if small is not None:
            if line and stmt.lineno != last_line:
                out.append(_SimpleStatementLine(line))
                line = []
            line.append(small(stmt))
            last_line = stmt.end_lineno or stmt.lineno
            continue
        if line:
            out.append(_SimpleStatementLine(line))
            line = []
        compound = _COMPOUND.get(type(stmt))
        if compound is None:
            raise Unsupported(type(stmt).__name__)
        out.append(compound(stmt))
    if line:
        out.append(_SimpleStatementLine(line))
    return out


def _suite(body: Sequence[ast.stmt]) -> cst.IndentedBlock:
    return _IndentedBlock(_block(body))


def _expr_stmt(node: ast.Expr) -> cst.Expr:
    return _Expr(_expr(node.value))


def _assign(node: ast.Assign) -> cst.Assign:
    return _Assign([_AssignTarget(_expr(t)) for t in node.targets], _expr(node.value))


def _ann_assign(node: ast.AnnAssign) -> cst.AnnAssign:
    value = _expr(node.value) if node.value is not None else None
    return _AnnAssign(_expr(node.target), _Annotation(_expr(node.annotation)), value)


def _aug_assign(node: ast.AugAssign) -> cst.AugAssign:
    return _AugAssign(_expr(node.target), _AUGMENTED[type(node.op)], _expr(node.value))


def _return(node: ast.Return) -> cst.Return:
    return _Return(_expr(node.value) if node.value is not None else None)


def _delete(node: ast.Delete) -> cst.Del:
    if len(node.targets) == 1:
        return _Del(_expr(node.targets[0]))
    return _Del(_Tuple([_Element(_expr(t)) for t in node.targets]))


def _raise(node: ast.Raise) -> cst.Raise:
    exc = _expr(node.exc) if node.exc is not None else None
    cause = _From(_expr(node.cause)) if node.cause is not None else None
    return _Raise(exc, cause)


def _assert(node: ast.Assert) -> cst.Assert:
    return _Assert(_expr(node.test), _expr(node.msg) if node.msg is not None else None)


def _global(node: ast.Global) -> cst.Global:
    return _Global([_NameItem(_Name(n)) for n in node.names])


def _nonlocal(node: ast.Nonlocal) -> cst.Nonlocal:
    return _Nonlocal([_NameItem(_Name(n)) for n in node.names])


def _dotted(name: str) -> cst.Name | cst.Attribute:
    parts = name.split(".")
    node: cst.Name | cst.Attribute = _Name(parts[0])
    for part in parts[1:]:
        node = _Attribute(node, _Name(part))
    return node


def _alias(alias: ast.alias) -> cst.ImportAlias:
    asname = _AsName(_Name(alias.asname)) if alias.asname else None
    return _ImportAlias(_dotted(alias.name), asname)


def _import(node: ast.Import) -> cst.Import:
    return _Import([_alias(a) for a in node.names])


def _import_from(node: ast.ImportFrom) -> cst.ImportFrom:
    module = _dotted(node.module) if node.module else None
    if len(node.names) == 1 and node.names[0].name == "*":
        names: cst.ImportStar | list[cst.ImportAlias] = _ImportStar()
    else:
        names = [_alias(a) for a in node.names]
    return _ImportFrom(module, names, [_Dot] * (node.level or 0))


def _pass(node: ast.Pass) -> cst.Pass:
    return _Pass()


def _break(node: ast.Break) -> cst.Break:
    return _Break()


def _continue(node: ast.Continue) -> cst.Continue:
    return _Continue()


def _function(node: ast.FunctionDef | ast.AsyncFunctionDef) -> cst.FunctionDef:
    returns = _Annotation(_expr(node.returns)) if node.returns is not None else None
    return _FunctionDef(
        _Name(node.name),
        _parameters(node.args),
        _suite(node.body),
        [_Decorator(_expr(d)) for d in node.decorator_list],
        returns,
        _Asynchronous() if isinstance(node, ast.AsyncFunctionDef) else None,
    )


def _class(node: ast.ClassDef) -> cst.ClassDef:
    return _ClassDef(
        _Name(node.name),
        _suite(node.body),
        [_positional(b) for b in node.bases],
        [_keyword(k) for k in node.keywords],
        [_Decorator(_expr(d)) for d in node.decorator_list],
    )


def _orelse(body: Sequence[ast.stmt], text_is_elif: bool) -> cst.If | cst.Else | None:
    if not body:
        return None
    if text_is_elif:
        return _if(body[0])  # type: ignore[arg-type]
    return _Else(_suite(body))


def _if(node: ast.If) -> cst.If:
    orelse = node.orelse
    elif_ = (
        len(orelse) == 1 and type(orelse[0]) is ast.If and orelse[0].col_offset == node.col_offset
    )
    return _If(_expr(node.test), _suite(node.body), _orelse(orelse, elif_))


def _for(node: ast.For | ast.AsyncFor) -> cst.For:
    return _For(
        _expr(node.target),
        _expr(node.iter),
        _suite(node.body),
        _Else(_suite(node.orelse)) if node.orelse else None,
        _Asynchronous() if isinstance(node, ast.AsyncFor) else None,
    )


def _while(node: ast.While) -> cst.While:
    orelse = _Else(_suite(node.orelse)) if node.orelse else None
    return _While(_expr(node.test), _suite(node.body), orelse)


def _with(node: ast.With | ast.AsyncWith) -> cst.With:
    items = [
        _WithItem(
            _expr(item.context_expr),
            _AsName(_expr(item.optional_vars)) if item.optional_vars is not None else None,
        )
        for item in node.items
    ]
    asynchronous = _Asynchronous() if isinstance(node, ast.AsyncWith) else None
    return _With(items, _suite(node.body), asynchronous)


def _handler(handler: ast.ExceptHandler, make: Callable[..., Any]) -> Any:
    kind = _expr(handler.type) if handler.type is not None else None
    name = _AsName(_Name(handler.name)) if handler.name else None
    return make(_suite(handler.body), kind, name)


def _try(node: ast.Try) -> cst.Try:
    return _Try(
        _suite(node.body),
        [_handler(h, _ExceptHandler) for h in node.handlers],
        _Else(_suite(node.orelse)) if node.orelse else None,
        _Finally(_suite(node.finalbody)) if node.finalbody else None,
    )


def _try_star(node: ast.TryStar) -> cst.TryStar:
    return _TryStar(
        _suite(node.body),
        [_handler(h, _ExceptStarHandler) for h in node.handlers],
        _Else(_suite(node.orelse)) if node.orelse else None,
        _Finally(_suite(node.finalbody)) if node.finalbody else None,
    )


_SMALL: dict[type, Callable[[Any], cst.BaseSmallStatement]] = {
    ast.Expr: _expr_stmt,
    ast.Assign: _assign,
    ast.AnnAssign: _ann_assign,
    ast.AugAssign: _aug_assign,
    ast.Return: _return,
    ast.Delete: _delete,
    ast.Pass: _pass,
    ast.Break: _break,
    ast.Continue: _continue,
    ast.Raise: _raise,
    ast.Assert: _assert,
    ast.Global: _global,
    ast.Nonlocal: _nonlocal,
    ast.Import: _import,
    ast.ImportFrom: _import_from,
}
_COMPOUND: dict[type, Callable[[Any], cst.BaseCompoundStatement]] = {
    ast.FunctionDef: _function,
    ast.AsyncFunctionDef: _function,
    ast.ClassDef: _class,
    ast.If: _if,
    ast.For: _for,
    ast.AsyncFor: _for,
    ast.While: _while,
    ast.With: _with,
    ast.AsyncWith: _with,
    ast.Try: _try,
    ast.TryStar: _try_star,
}


# -- parameters -------------------------------------------------------------------------------


def _param(arg: ast.arg, default: ast.expr | None, star: str) -> cst.Param:
    annotation = _Annotation(_expr(arg.annotation)) if arg.annotation is not None else None
    value = _expr(default) if default is not None else None
    return _Param(_Name(arg.arg), annotation, value, star)


def _parameters(args: ast.arguments) -> cst.Parameters:
    positional = [*args.posonlyargs, *args.args]
    defaults: list[ast.expr | None] = [None] * (len(positional) - len(args.defaults))
    defaults.extend(args.defaults)
    made = [_param(a, d, "") for a, d in zip(positional, defaults, strict=True)]
    split = len(args.posonlyargs)
    if args.vararg is not None:
        star_arg: Any = _param(args.vararg, None, "*")
    elif args.kwonlyargs:
        star_arg = _ParamStar()
    else:
        star_arg = _DEFAULT
    kwonly = [_param(a, d, "") for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True)]
    star_kwarg = _param(args.kwarg, None, "**") if args.kwarg is not None else None
    slash = _ParamSlash() if split else _DEFAULT
    return _Parameters(made[split:], star_arg, kwonly, star_kwarg, made[:split], slash)


# -- expressions ------------------------------------------------------------------------------


def _expr(node: ast.expr) -> Any:
    make = _EXPRESSIONS.get(type(node))
    if make is None:
        raise Unsupported(type(node).__name__)
    return make(node)


def _name(node: ast.Name) -> cst.Name:
    return _Name(node.id)


def _attribute(node: ast.Attribute) -> cst.Attribute:
    return _Attribute(_expr(node.value), _Name(node.attr))


def _keyword(node: ast.keyword) -> cst.Arg:
    if node.arg is None:
        return _Arg(_expr(node.value), None, "**")
    return _Arg(_expr(node.value), _Name(node.arg), "")


def _positional(node: ast.expr) -> cst.Arg:
    if type(node) is ast.Starred:
        return _Arg(_expr(node.value), None, "*")
    return _Arg(_expr(node), None, "")


def _call(node: ast.Call) -> cst.Call:
    args = [_positional(a) for a in node.args]
    if node.keywords:
        keywords = [_keyword(k) for k in node.keywords]
        first = node.keywords[0]
        if node.args and (first.lineno, first.col_offset) < (
            node.args[-1].lineno,
            node.args[-1].col_offset,
        ):  # a keyword before a positional (``f(k=1, *rest)``): keep the source order
            pairs = [*zip(node.args, args, strict=True), *zip(node.keywords, keywords, strict=True)]
            pairs.sort(key=lambda pair: (pair[0].lineno, pair[0].col_offset))
            args = [made for _, made in pairs]
        else:
            args.extend(keywords)
    return _Call(_expr(node.func), args)


def _index(node: ast.expr) -> cst.SubscriptElement:
    kind = type(node)
    if kind is ast.Slice:
        return _SubscriptElement(
            _Slice(
                _expr(node.lower) if node.lower is not None else None,  # type: ignore[attr-defined]
                _expr(node.upper) if node.upper is not None else None,  # type: ignore[attr-defined]
                _expr(node.step) if node.step is not None else None,  # type: ignore[attr-defined]
            )
        )
    if kind is ast.Starred:
        return _SubscriptElement(_Index(_expr(node.value), "*"))  # type: ignore[attr-defined]
    return _SubscriptElement(_Index(_expr(node), None))


def _parenthesized(node: ast.Tuple) -> bool:
    """``x[(a, b)]``: CPython starts the tuple at its parenthesis, before its first element."""
    first = node.elts[0]
    return (node.lineno, node.col_offset) < (first.lineno, first.col_offset)


def _subscript(node: ast.Subscript) -> cst.Subscript:
    index = node.slice
    if type(index) is ast.Tuple and index.elts and not _parenthesized(index):
        elements = [_index(e) for e in index.elts]
    else:
        elements = [_index(index)]
    return _Subscript(_expr(node.value), elements)


def _bin_op(node: ast.BinOp) -> cst.BinaryOperation:
    return _BinaryOperation(_expr(node.left), _BINARY[type(node.op)], _expr(node.right))


def _unary_op(node: ast.UnaryOp) -> cst.UnaryOperation:
    return _UnaryOperation(_UNARY[type(node.op)], _expr(node.operand))


def _bool_op(node: ast.BoolOp) -> cst.BooleanOperation:
    operator = _BOOLEAN[type(node.op)]
    values = node.values
    out = _BooleanOperation(_expr(values[0]), operator, _expr(values[1]))
    for value in values[2:]:
        out = _BooleanOperation(out, operator, _expr(value))
    return out


def _compare(node: ast.Compare) -> cst.Comparison:
    targets = [
        _ComparisonTarget(_COMPARE[type(op)], _expr(right))
        for op, right in zip(node.ops, node.comparators, strict=True)
    ]
    return _Comparison(_expr(node.left), targets)


def _element(node: ast.expr) -> cst.BaseElement:
    if type(node) is ast.Starred:
        return _StarredElement(_expr(node.value))
    return _Element(_expr(node))


def _tuple(node: ast.Tuple) -> cst.Tuple:
    return _Tuple([_element(e) for e in node.elts])


def _list(node: ast.List) -> cst.List:
    return _List([_element(e) for e in node.elts])


def _set(node: ast.Set) -> cst.Set:
    return _Set([_element(e) for e in node.elts])


def _dict(node: ast.Dict) -> cst.Dict:
    elements: list[cst.BaseDictElement] = []
    for key, value in zip(node.keys, node.values, strict=True):
        if key is None:
            elements.append(_StarredDictElement(_expr(value)))
        else:
            elements.append(_DictElement(_expr(key), _expr(value)))
    return _Dict(elements)


def _constant(node: ast.Constant) -> cst.BaseExpression:
    value = node.value
    if value is None or value is True or value is False:
        return _Name(repr(value))
    kind = type(value)
    if kind is str or kind is bytes:
        return _SimpleString(repr(value))
    if kind is int:
        return _Integer(repr(value))
    if kind is float:
        return _Float(repr(value))
    if kind is complex:
        return _Imaginary(repr(value).strip("()").split("+")[-1])
    if value is Ellipsis:
        return _Ellipsis()
    raise Unsupported(f"constant {kind.__name__}")  # pragma: no cover


def _format_parts(values: Sequence[ast.expr]) -> list[cst.BaseFormattedStringContent]:
    parts: list[cst.BaseFormattedStringContent] = []
    for value in values:
        if type(value) is ast.Constant:
            parts.append(_FormattedStringText(str(value.value)))
        elif type(value) is ast.FormattedValue:
            spec = value.format_spec
            made_spec = _format_parts(spec.values) if isinstance(spec, ast.JoinedStr) else None
            parts.append(
                _FormattedStringExpression(
                    _expr(value.value), _CONVERSIONS.get(value.conversion), made_spec
                )
            )
        else:  # pragma: no cover - CPython puts only these two in a JoinedStr
            raise Unsupported(type(value).__name__)
    return parts


def _joined_str(node: ast.JoinedStr) -> cst.FormattedString:
    return _FormattedString(_format_parts(node.values))


def _if_exp(node: ast.IfExp) -> cst.IfExp:
    return _IfExp(_expr(node.test), _expr(node.body), _expr(node.orelse))


def _lambda(node: ast.Lambda) -> cst.Lambda:
    return _Lambda(_parameters(node.args), _expr(node.body))


def _named_expr(node: ast.NamedExpr) -> cst.NamedExpr:
    return _NamedExpr(_expr(node.target), _expr(node.value))


def _await(node: ast.Await) -> cst.Await:
    return _Await(_expr(node.value))


def _yield(node: ast.Yield) -> cst.Yield:
    return _Yield(_expr(node.value) if node.value is not None else None)


def _yield_from(node: ast.YieldFrom) -> cst.Yield:
    return _Yield(_From(_expr(node.value)))


def _comp_for(generators: Sequence[ast.comprehension]) -> cst.CompFor:
    inner = None
    for gen in reversed(generators):
        inner = _CompFor(
            _expr(gen.target),
            _expr(gen.iter),
            [_CompIf(_expr(test)) for test in gen.ifs],
            inner,
            _Asynchronous() if gen.is_async else None,
        )
    assert inner is not None
    return inner


def _list_comp(node: ast.ListComp) -> cst.ListComp:
    return _ListComp(_expr(node.elt), _comp_for(node.generators))


def _set_comp(node: ast.SetComp) -> cst.SetComp:
    return _SetComp(_expr(node.elt), _comp_for(node.generators))


def _generator_exp(node: ast.GeneratorExp) -> cst.GeneratorExp:
    return _GeneratorExp(_expr(node.elt), _comp_for(node.generators))


def _dict_comp(node: ast.DictComp) -> cst.DictComp:
    return _DictComp(_expr(node.key), _expr(node.value), _comp_for(node.generators))


def _starred(node: ast.Starred) -> cst.StarredElement:
    return _StarredElement(_expr(node.value))


_EXPRESSIONS: dict[type, Callable[[Any], Any]] = {
    ast.Name: _name,
    ast.Attribute: _attribute,
    ast.Call: _call,
    ast.Subscript: _subscript,
    ast.Constant: _constant,
    ast.BinOp: _bin_op,
    ast.UnaryOp: _unary_op,
    ast.BoolOp: _bool_op,
    ast.Compare: _compare,
    ast.Tuple: _tuple,
    ast.List: _list,
    ast.Set: _set,
    ast.Dict: _dict,
    ast.JoinedStr: _joined_str,
    ast.IfExp: _if_exp,
    ast.Lambda: _lambda,
    ast.NamedExpr: _named_expr,
    ast.Await: _await,
    ast.Yield: _yield,
    ast.YieldFrom: _yield_from,
    ast.ListComp: _list_comp,
    ast.SetComp: _set_comp,
    ast.GeneratorExp: _generator_exp,
    ast.DictComp: _dict_comp,
    ast.Starred: _starred,
}
