"""Random small PyTorch programs with in-place statements, and their out-of-place twins.

``programs()`` is a hypothesis strategy of ``Program``: CPU code on 4x4 tensors with fixed seeds
(leaves, saving and non-saving ops, views and copies, aliases, containers, literal branches,
loops, helpers, ``nn.Module`` classes, tensor and forward hooks, ``no_grad`` blocks, ``.data`` /
``.detach()`` writes, a custom ``autograd.Function``) that ends in a backward. Every in-place
statement carries its out-of-place twin, so ``Program.source(flip)`` renders any mix of the two;
``bench/fuzz_diff.py`` labels them with torch and compares the linter. This module never imports
torch.

Limits: one shape family (4x4 and views of it), no CUDA, no optimizers. A write hidden from
autograd (``no_grad``, ``.data``) goes to a leaf only before the leaf's first use, because its
twin must make a new leaf. Types and ``requires_grad`` are tracked approximately: what then
fails for another reason than an in-place op is left to the labeller (callers ``assume`` it away).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from hypothesis import strategies as st

T = TypeVar("T")
S4 = (4, 4)
BUDGET = 40  # lines per program, about
TOLERANCE = 1e-6  # largest relative difference that still counts as equal

HEADER = (
    "import torch",
    "import torch.nn.functional as F",
    "from torch import nn",
    "",
    "torch.manual_seed(0)",
    "probe = torch.linspace(-1.0, 1.0, 16).view(4, 4)",
    "x = torch.randn(4, 4, requires_grad=True)",
    "w = torch.randn(4, 4, requires_grad=True)",
    "c = torch.randn(4, 4)",
)


def _items(text: str) -> tuple[str, ...]:
    """``"a; b; c"`` -> ``("a", "b", "c")``: keeps the tables below dense."""
    return tuple(item.strip() for item in text.split(";") if item.strip())


def _pairs(text: str) -> tuple[tuple[str, str, bool], ...]:
    """``"in-place => out-of-place; ..."`` -> (in-place, out-of-place, uses a 4x4 operand {b})."""
    pairs = (item.split(" => ") for item in _items(text))
    return tuple((new, old, "{b}" in new) for new, old in pairs)


SAVING = _items(
    "torch.sigmoid({a}); {a}.tanh(); {a}.exp(); torch.relu({a}); torch.softmax({a}, dim=-1);"
    "{a}.pow(2); ({a}.abs() + 1.0).log(); {a}.clamp(min=-0.5, max=0.5)"
)
UNARY = tuple((t, True) for t in SAVING) + tuple(
    (t, False) for t in _items("{a} + 1.0; {a} - 0.5; -{a}; {a} * 2.0; {a}.sum() + {a}")
)
BINARY = tuple(
    (t, True) for t in _items("{a} * {b}; {a} @ {b}; F.linear({a}, {b}); {a} / ({b}.abs() + 1.0)")
) + tuple((t, False) for t in _items("{a} + {b}; {a} - {b}; torch.add({a}, {b}, alpha=0.5)"))
ACTS = _items(
    "nn.ReLU(inplace=True); nn.ReLU(); nn.SiLU(inplace=True); nn.LeakyReLU(0.1, inplace=True);"
    "nn.Hardtanh(inplace=True); nn.Sequential(nn.Linear(4, 4), nn.ReLU(inplace=True));"
    "nn.Sequential(nn.Linear(4, 4), nn.Sigmoid(), nn.ReLU(inplace=True))"
)
LAYERS = {  # kind -> (constructors, call)
    "lin": (("nn.Linear(4, 4)",), "{m}({a})"),
    "bn": (("nn.BatchNorm1d(4)",), "{m}({a})"),
    "ln": (("nn.LayerNorm(4)",), "{m}({a})"),
    "conv": (("nn.Conv1d(4, 4, 1)",), "{m}({a}.unsqueeze(0)).squeeze(0)"),
    "act": (ACTS, "{m}({a})"),
}
METHODS = _pairs(
    "{a}.relu_() => {a}.relu(); {a}.mul_(2.0) => {a}.mul(2.0); {a}.add_(1.0) => {a}.add(1.0);"
    "{a}.sigmoid_() => {a}.sigmoid(); {a}.tanh_() => {a}.tanh(); {a}.exp_() => {a}.exp();"
    "{a}.sub_(0.5) => {a}.sub(0.5); {a}.div_(2.0) => {a}.div(2.0); {a}.neg_() => {a}.neg();"
    "{a}.clamp_(min=0) => {a}.clamp(min=0); {a}.clamp_(-0.5, 0.5) => {a}.clamp(-0.5, 0.5);"
    "{a}.pow_(2) => {a}.pow(2); {a}.masked_fill_({a} < 0, 0.0) => {a}.masked_fill({a} < 0, 0.0);"
    "{a}.mul_({b}) => {a}.mul({b}); {a}.add_({b}) => {a}.add({b}); {a}.copy_({b}) => {b}.clone()"
)
FUNCTIONAL = _pairs(
    "F.relu_({a}) => F.relu({a}); torch.relu_({a}) => torch.relu({a});"
    "F.relu({a}, inplace=True) => F.relu({a}); torch.sigmoid_({a}) => torch.sigmoid({a});"
    "F.leaky_relu_({a}, 0.1) => F.leaky_relu({a}, 0.1); torch.exp_({a}) => torch.exp({a});"
    "F.hardtanh({a}, inplace=True) => F.hardtanh({a})"
)
OUTS = _pairs(
    "torch.sigmoid({a}, out={a}) => torch.sigmoid({a}); torch.exp({a}, out={a}) => torch.exp({a});"
    "torch.mul({a}, 2.0, out={a}) => torch.mul({a}, 2.0); torch.add({a}, {b}, out={a}) => "
    "torch.add({a}, {b})"
)
AUGS = (("+=", "1.0"), ("*=", "2.0"), ("-=", "0.5"), ("/=", "2.0"))
AUGS_B = (("+=", "{b}"), ("*=", "{b}"), ("-=", "{b}"))
INDICES = ("0", "1:3", ":, 0", "[0, 2]", "torch.tensor([1, 3])", "{a} > 0")
# views of a 4x4 tensor: (suffix, shape, contiguous, needs a contiguous base, overlapping)
VIEWS = (
    ("[0]", (4,), True, False, False),
    ("[1:3]", (2, 4), True, False, False),
    (".t()", S4, False, False, False),
    ("[:, :2]", (4, 2), False, False, False),
    (".transpose(0, 1)", S4, False, False, False),
    (".view(16)", (16,), True, True, False),
    (".narrow(0, 1, 2)", (2, 4), True, False, False),
    (".reshape(4, 4)", S4, True, False, False),
    ("[0].expand(4, 4)", S4, False, False, True),
)
COPIES = (  # (suffix, shape, feature)
    (".clone()", S4, "copy"),
    (".t().contiguous()", S4, "copy"),
    ("[[0, 2]]", (2, 4), "copy"),
    ("[torch.tensor([1, 3])]", (2, 4), "copy"),
    (".to(torch.float32, copy=True)", S4, "copy"),
    (".contiguous()", S4, "contiguous"),
    (".detach()", S4, "detach_alias"),
)
FORMS = ("method", "aug", "setitem", "view", "functional", "out", "data", "detach", "value")
HOOK_OPS = tuple(
    p[:2]
    for p in _pairs(
        "mul_(2.0) => mul(2.0); add_(1.0) => add(1.0); clamp_(-0.1, 0.1) => clamp(-0.1, 0.1)"
    )
)


@dataclass(frozen=True)
class Line:
    """One source line; an in-place statement (``sid >= 0``) also has its twin lines."""

    indent: int
    text: str
    twin: tuple[str, ...] | None = None
    sid: int = -1
    tag: str = ""  # the in-place form, e.g. "method", "data", "act-module"
    calls: tuple[int, ...] = ()  # in-place statements this line runs (helper/module/hook sites)


@dataclass(frozen=True)
class Program:
    """A generated program: its lines and the constructs it uses."""

    lines: tuple[Line, ...]
    features: frozenset[str]

    def source(self, flip: Iterable[int] = ()) -> str:
        """The source with the in-place statements in ``flip`` replaced by their twins."""
        flipped = set(flip)
        out: list[str] = []
        for line in self.lines:
            pad = "    " * line.indent
            use_twin = line.sid in flipped and line.twin is not None
            out.extend(
                pad + text if text else ""
                for text in (line.twin if use_twin else None) or (line.text,)
            )
        return "\n".join(out) + "\n"

    @property
    def sids(self) -> dict[int, int]:
        """In-place statement id -> its 1-based line in the original source."""
        return {line.sid: n for n, line in enumerate(self.lines, 1) if line.sid >= 0}

    def twin(self) -> str:
        """The out-of-place twin: every in-place statement flipped."""
        return self.source(self.sids)

    def sites(self, sids: Iterable[int]) -> set[int]:
        """Lines of these in-place statements and of the calls and registrations that run them."""
        wanted = set(sids)
        return {
            n
            for n, line in enumerate(self.lines, 1)
            if line.sid in wanted or wanted.intersection(line.calls)
        }

    def tag(self, sid: int) -> str:
        """The form of one in-place statement."""
        return next(line.tag for line in self.lines if line.sid == sid)


@dataclass(frozen=True)
class Ref:
    """A tensor the generated code can name: a variable or a container element."""

    expr: str
    shape: tuple[int, ...] = S4
    grad: bool = True
    leafish: bool = False  # a leaf, or an alias, view or element of one
    contig: bool = True
    overlap: bool = False  # an expanded view: any write raises
    slot: tuple[str, int, int] | None = None  # (tuple name, index, arity) of a tuple element

    def assign(self, value: str) -> str:
        """A statement that rebinds this name (or container slot) to ``value``."""
        if self.slot is None:
            return f"{self.expr} = {value}"
        name, index, arity = self.slot
        items = [value if i == index else f"{name}[{i}]" for i in range(arity)]
        return f"{name} = ({', '.join(items)})"


@dataclass
class Scope:
    """What the code at one point can use, and how it runs (indent, no_grad, function kind)."""

    names: dict[str, Ref]
    boxes: dict[str, list[Ref]] = field(default_factory=dict)
    mods: dict[str, tuple[str, tuple[int, ...]]] = field(default_factory=dict)
    new_mod: Callable[[str, str], str] | None = None
    indent: int = 0
    depth: int = 0
    kind: str = "top"  # "top" | "func" | "forward"
    no_grad: bool = False

    def refs(self) -> list[Ref]:
        return [*self.names.values(), *(ref for box in self.boxes.values() for ref in box)]

    def child(self, dead: bool = False, **changes: Any) -> Scope:
        """A nested block; a dead block (a branch not taken) gets copies of the bindings."""
        if dead:
            changes |= {
                "names": dict(self.names),
                "boxes": {k: list(v) for k, v in self.boxes.items()},
            }
        return replace(self, indent=self.indent + 1, depth=self.depth + 1, **changes)


class _Gen:
    """Draws one program; see the module docstring."""

    def __init__(self, draw: Callable[[st.SearchStrategy[Any]], Any]) -> None:
        self.draw = draw
        self.defs: list[Line] = []
        self.features: set[str] = set()
        self.next_sid = 0
        self.counts: dict[str, int] = {}
        self.used = len(HEADER) + 4
        self.flag = False
        self.helpers: list[tuple[str, int, tuple[int, ...]]] = []

    # -- choices -----------------------------------------------------------------------------
    def pick(self, options: Sequence[T]) -> T:
        return self.draw(st.sampled_from(options))

    def chance(self, percent: int) -> bool:
        """True with this probability; shrinks to False."""
        return self.draw(st.integers(0, 99)) >= 100 - percent

    def fresh(self, stem: str) -> str:
        self.counts[stem] = self.counts.get(stem, 0) + 1
        return f"{stem}{self.counts[stem]}"

    def sid(self) -> int:
        self.next_sid += 1
        return self.next_sid - 1

    def room(self) -> int:
        return BUDGET - self.used

    def emit(self, out: list[Line], line: Line) -> None:
        self.used += 1
        out.append(line)

    # -- the program ---------------------------------------------------------------------------
    def program(self) -> Program:
        self.flag = self.draw(st.booleans())
        top = Scope(
            names={
                "x": Ref("x", leafish=True),
                "w": Ref("w", leafish=True),
                "c": Ref("c", grad=False),
            }
        )
        top.new_mod = self._top_module(top)
        head = [Line(0, text) for text in HEADER] + [Line(0, f"flag = {self.flag}")]
        init = self._init_write()
        body: list[Line] = []
        self.emit(body, Line(0, "h = x + w"))
        top.names["h"] = Ref("h")
        for _ in range(self.draw(st.integers(1, 6))):
            if self.room() < 4:
                break
            self._step(top, body)
        if not any(line.sid >= 0 for line in (*init, *self.defs, *body)):
            self._inplace(top, body)
        lines = head + init + self.defs + body + self._tail(top)
        return Program(tuple(lines), frozenset(self.features))

    def _init_write(self) -> list[Line]:
        """Maybe write a leaf before its first use (safe when hidden from autograd)."""
        if not self.chance(25):
            return []
        leaf = self.pick(("w", "x"))
        inplace, oop, _ = self.pick(METHODS[1:3] + METHODS[10:11])
        form = self.pick(("no_grad", "data", "detach", "plain"))
        self.features |= {"init_write", f"init_{form}"}
        sid = self.sid()
        target = {"data": f"{leaf}.data", "detach": f"{leaf}.detach()"}.get(form, leaf)
        text = inplace.format(a=target)
        value = oop.format(a=leaf)
        twin = (
            f"{leaf} = {value}"
            if form == "plain"
            else f"{leaf} = ({value}).detach().requires_grad_()"
        )
        self.used += 2
        if form == "no_grad":
            return [Line(0, "with torch.no_grad():"), Line(1, text, (twin,), sid, "init")]
        return [Line(0, text, (twin,), sid, "init")]

    def _tail(self, top: Scope) -> list[Line]:
        """Read every live tensor into the loss, then differentiate (and maybe take a step)."""
        terms: list[str] = []
        for ref in top.refs():
            term = (
                f"({ref.expr} * probe).sum()" if ref.shape == S4 else f"{ref.expr}.square().sum()"
            )
            if term not in terms:
                terms.append(term)
        lines = [Line(0, "loss = " + " + ".join(terms))]
        inner = [r for r in top.names.values() if r.grad and not r.leafish and r.shape == S4]
        mode = self.pick(("backward", "grad", "grad_inner") if inner else ("backward", "grad"))
        if mode == "grad":
            self.features.add("autograd.grad")
            return [*lines, Line(0, "gx, gw = torch.autograd.grad(loss, [x, w])")]
        if mode == "grad_inner":
            self.features |= {"autograd.grad", "grad_inner"}
            target = self.pick(inner).expr
            return [*lines, Line(0, f"(g_{target},) = torch.autograd.grad(loss, [{target}])")]
        lines.append(Line(0, "loss.backward()"))
        if self.chance(15):
            self.features.add("sgd_step")
            step = self.pick(
                ("w -= 0.1 * w.grad", "w.sub_(0.1 * w.grad)", "w.data -= 0.1 * w.grad")
            )
            twin = (
                "_g = w.grad",
                "w = (w - 0.1 * w.grad).detach().requires_grad_()",
                "w.grad = _g",
            )
            guarded = self.chance(80)
            if guarded:
                lines.append(Line(0, "with torch.no_grad():"))
            lines.append(Line(int(guarded), step, twin, self.sid(), "sgd"))
        return lines

    # -- steps -------------------------------------------------------------------------------
    def _step(self, sc: Scope, out: list[Line]) -> None:
        kinds = ["compute", "inplace", "inplace", "view", "alias"]
        if not sc.no_grad:
            kinds += ["inplace", "container", "no_grad"]
            if sc.depth < 2 and self.room() > 6:
                kinds += ["branch", "loop"]
            if sc.kind == "top" and self.room() > 6:
                kinds += ["helper", "module", "hook", "function"]
        getattr(self, f"_{self.pick(kinds)}")(sc, out)

    def _block(self, sc: Scope, out: list[Line]) -> None:
        before = len(out)
        for _ in range(self.draw(st.integers(1, 2))):
            self._step(sc, out)
        if len(out) == before:
            self.emit(out, Line(sc.indent, "pass"))

    def _operand(self, sc: Scope, square: bool = True) -> Ref:
        refs = [r for r in sc.refs() if r.shape == S4 or not square]
        return self.pick(refs)

    def _bind(self, sc: Scope, stem: str = "h") -> str:
        """A fresh name, or (sometimes) an existing non-leaf name to rebind."""
        old = [n for n, r in sc.names.items() if not r.leafish and n not in ("c", "x", "w")]
        return self.pick(old) if old and self.chance(30) else self.fresh(stem)

    def _compute(self, sc: Scope, out: list[Line]) -> None:
        a = self._operand(sc, square=False)
        kinds = ["unary"] + (["binary"] if a.shape == S4 else [])
        if a.shape == S4 and not sc.no_grad and sc.new_mod is not None:
            kinds += ["layer", "layer"]
        kind = self.pick(kinds)
        calls: tuple[int, ...] = ()
        grad, shape = a.grad, a.shape
        if kind == "unary":
            template, saves = self.pick(UNARY)
            expr = template.format(a=a.expr)
        elif kind == "binary":
            b = self._operand(sc)
            template, saves = self.pick(BINARY)
            expr, grad = template.format(a=a.expr, b=b.expr), a.grad or b.grad
        else:
            expr, calls = self._layer_call(sc, a.expr)
            saves = grad = True
        if saves:
            self.features.add("saving_op")
        name = self._bind(sc)
        self.emit(out, Line(sc.indent, f"{name} = {expr}", calls=calls))
        sc.names[name] = Ref(name, shape, grad and not sc.no_grad)

    def _layer_call(self, sc: Scope, a: str) -> tuple[str, tuple[int, ...]]:
        kind = self.pick((*LAYERS, "act"))  # activations twice: they may be inplace
        ctors, call = LAYERS[kind]
        same = [m for m, (k, _) in sc.mods.items() if k == kind]
        assert sc.new_mod is not None
        module = self.pick(same) if same and self.chance(50) else sc.new_mod(kind, self.pick(ctors))
        self.features.add("nn_layer")
        return call.format(m=module, a=a), sc.mods[module][1]

    def _module_line(self, target: str, ctor: str, indent: int) -> tuple[Line, tuple[int, ...]]:
        """``target = ctor``; an ``inplace=True`` constructor is an in-place statement."""
        if "inplace=True" not in ctor:
            return Line(indent, f"{target} = {ctor}"), ()
        self.features.add("inplace_module")
        plain = ctor.replace(", inplace=True", "").replace("inplace=True", "")
        sid = self.sid()
        return Line(indent, f"{target} = {ctor}", (f"{target} = {plain}",), sid, "act-module"), (
            sid,
        )

    def _top_module(self, top: Scope) -> Callable[[str, str], str]:
        def make(kind: str, ctor: str) -> str:
            name = self.fresh(kind)
            line, sids = self._module_line(name, ctor, 0)
            self.emit(self.defs, line)
            top.mods[name] = (kind, sids)
            return name

        return make

    def _view(self, sc: Scope, out: list[Line]) -> None:
        a = self._operand(sc)
        name = self.fresh("v")
        if self.chance(40):
            suffix, shape, feature = self.pick(COPIES)
            self.features.add(feature)
            detached = feature == "detach_alias"
            alias = feature == "contiguous" and a.contig
            ref = Ref(
                name, shape, a.grad and not detached, a.leafish and alias, True, a.overlap and alias
            )
        else:
            options = [v for v in VIEWS if a.contig or not v[3]]
            suffix, shape, contig, _, overlap = self.pick(options)
            self.features.add("expand" if overlap else "view")
            ref = Ref(name, shape, a.grad, a.leafish, contig and a.contig, overlap or a.overlap)
        self.emit(out, Line(sc.indent, f"{name} = {a.expr}{suffix}"))
        sc.names[name] = replace(ref, grad=ref.grad and not sc.no_grad)

    def _alias(self, sc: Scope, out: list[Line]) -> None:
        a = self._operand(sc, square=False)
        name = self.fresh("b")
        self.features.add("alias")
        self.emit(out, Line(sc.indent, f"{name} = {a.expr}"))
        sc.names[name] = replace(a, expr=name, slot=None)

    def _container(self, sc: Scope, out: list[Line]) -> None:
        a, b = self._operand(sc, square=False), self._operand(sc, square=False)
        kind = self.pick(("list", "tuple", "dict"))
        name = self.fresh({"list": "xs", "tuple": "tp", "dict": "d"}[kind])
        self.features.add("container")
        if kind == "dict":
            text, keys = f'{{"p": {a.expr}, "q": {b.expr}}}', ('"p"', '"q"')
        else:
            text, keys = (
                (f"[{a.expr}, {b.expr}]" if kind == "list" else f"({a.expr}, {b.expr})"),
                ("0", "1"),
            )
        self.emit(out, Line(sc.indent, f"{name} = {text}"))
        slots = [(name, i, 2) if kind == "tuple" else None for i in range(2)]
        sc.boxes[name] = [
            replace(r, expr=f"{name}[{k}]", slot=s)
            for r, k, s in zip((a, b), keys, slots, strict=True)
        ]

    def _branch(self, sc: Scope, out: list[Line]) -> None:
        negate = self.draw(st.booleans())
        live = self.flag != negate
        self.features.add("branch")
        arms = [not live, live] if self.chance(40) else [not live]
        for arm, dead in enumerate(arms):
            self.emit(out, Line(sc.indent, "else:" if arm else f"if {'not ' * negate}flag:"))
            start = len(out)
            self._block(sc.child(dead=dead), out)
            if dead and any(line.sid >= 0 or line.calls for line in out[start:]):
                self.features.add("dead_branch")  # in-place code that never runs

    def _loop(self, sc: Scope, out: list[Line]) -> None:
        self.features.add("loop")
        self.emit(out, Line(sc.indent, f"for i in range({self.pick((2, 3))}):"))
        self._block(sc.child(), out)

    def _no_grad(self, sc: Scope, out: list[Line]) -> None:
        self.features.add("no_grad")
        self.emit(out, Line(sc.indent, "with torch.no_grad():"))
        self._block(sc.child(no_grad=True), out)

    # -- in-place statements -------------------------------------------------------------------
    def _target(self, sc: Scope, ok: Callable[[Ref], bool], hidden: bool) -> Ref | None:
        refs = [r for r in sc.refs() if ok(r) and not ((hidden or sc.no_grad) and r.leafish)]
        if not refs:
            return None
        gentle = [r for r in refs if not r.leafish and not r.overlap]
        return self.pick(gentle if gentle and not self.chance(7) else refs)

    def _twin(self, sc: Scope, t: Ref, oop: str, hidden: bool = False) -> tuple[str, ...]:
        """The out-of-place twin of a write of ``oop`` into ``t``."""
        if hidden or sc.no_grad:
            stmt = t.assign(f"({oop}).detach() + ({t.expr} - {t.expr}.detach())")
            return ("with torch.enable_grad():", "    " + stmt) if sc.no_grad else (stmt,)
        return (t.assign(oop),)

    def _clone_twin(self, sc: Scope, t: Ref, text: str) -> tuple[str, ...]:
        """Clone, then write: the twin of a write through a view."""
        clone = t.assign(f"{t.expr}.clone()")
        return ("with torch.enable_grad():", "    " + clone, text) if sc.no_grad else (clone, text)

    def _inplace(self, sc: Scope, out: list[Line]) -> None:
        forms = FORMS if not sc.no_grad else FORMS[:-1]
        form = self.pick(forms)
        built = getattr(self, f"_form_{form}")(sc)
        if built is None:  # no suitable target: fall back to a method call on anything
            form, built = "method", self._form_method(sc)
        if built is None:
            return
        text, twin = built
        self.features.add(form)
        self.emit(out, Line(sc.indent, text, twin, self.sid(), form))

    def _method_parts(
        self, sc: Scope, t: Ref, table: Sequence[tuple[str, str, bool]]
    ) -> tuple[str, str, str]:
        """An in-place template from ``table`` usable on ``t``, its twin and operand ``b``."""
        template, oop, needs_b = self.pick([m for m in table if t.shape == S4 or not m[2]])
        b = self._operand(sc).expr if needs_b else ""
        return template, oop, b

    def _form_method(self, sc: Scope) -> tuple[str, tuple[str, ...]] | None:
        t = self._target(sc, lambda r: True, False)
        if t is None:
            return None
        template, oop, b = self._method_parts(sc, t, METHODS)
        return template.format(a=t.expr, b=b), self._twin(sc, t, oop.format(a=t.expr, b=b))

    def _form_functional(self, sc: Scope) -> tuple[str, tuple[str, ...]] | None:
        t = self._target(sc, lambda r: True, False)
        if t is None:
            return None
        template, oop, _ = self.pick(FUNCTIONAL)
        return template.format(a=t.expr), self._twin(sc, t, oop.format(a=t.expr))

    def _form_out(self, sc: Scope) -> tuple[str, tuple[str, ...]] | None:
        """``out=`` fails whenever an operand requires grad: mostly write tensors that do not."""
        prefer_plain = sc.no_grad or not self.chance(30)
        t = self._target(sc, lambda r: not (prefer_plain and r.grad), False)
        t = t or self._target(sc, lambda r: True, False)
        if t is None:
            return None
        template, oop, b = self._method_parts(sc, t, OUTS)
        return template.format(a=t.expr, b=b), self._twin(sc, t, oop.format(a=t.expr, b=b))

    def _form_aug(self, sc: Scope) -> tuple[str, tuple[str, ...]] | None:
        t = self._target(sc, lambda r: r.slot is None, False)
        if t is None:
            return None
        op, rhs = self.pick(AUGS + (AUGS_B if t.shape == S4 else ()))
        rhs = rhs.format(b=self._operand(sc).expr)
        return f"{t.expr} {op} {rhs}", self._twin(sc, t, f"{t.expr} {op[0]} {rhs}")

    def _form_setitem(self, sc: Scope) -> tuple[str, tuple[str, ...]] | None:
        t = self._target(sc, lambda r: r.shape == S4, False)
        if t is None:
            return None
        index = self.pick(INDICES).format(a=t.expr)
        rhs = self.pick(("0.0", f"{t.expr}[{index}] * 2.0", "{b}[{i}]"))
        rhs = rhs.format(b=self._operand(sc).expr, i=index)
        text = f"{t.expr}[{index}] = {rhs}"
        self.features.add("setitem")
        if rhs == "0.0" and index.endswith("> 0") and self.chance(70):
            return text, self._twin(sc, t, f"torch.where({index}, 0.0, {t.expr})")
        if rhs == "0.0" and index.startswith(("[", "torch")) and self.chance(70):
            rows = index if index.startswith("torch") else f"torch.tensor({index})"
            return text, self._twin(sc, t, f"{t.expr}.index_put(({rows},), torch.tensor(0.0))")
        return text, self._clone_twin(sc, t, text)

    def _form_view(self, sc: Scope) -> tuple[str, tuple[str, ...]] | None:
        t = self._target(sc, lambda r: r.shape == S4, False)
        if t is None:
            return None
        suffix = self.pick([v[0] for v in VIEWS[:-1] if t.contig or not v[3]])
        view = f"{t.expr}{suffix}"
        if suffix.startswith("[") and self.chance(40):
            op, rhs = self.pick(AUGS)
            text = f"{view} {op} {rhs}"
        else:
            text = self.pick([m[0] for m in METHODS if not m[2]]).format(a=view)
        self.features.add("view_write")
        return text, self._clone_twin(sc, t, text)

    def _hidden(self, sc: Scope, via: str) -> tuple[str, tuple[str, ...]] | None:
        t = self._target(sc, lambda r: True, True)
        if t is None:
            return None
        template, oop, b = self._method_parts(sc, t, METHODS)
        text = template.format(a=f"{t.expr}{via}", b=b)
        return text, self._twin(sc, t, oop.format(a=t.expr, b=b), hidden=True)

    def _form_data(self, sc: Scope) -> tuple[str, tuple[str, ...]] | None:
        return self._hidden(sc, ".data")

    def _form_detach(self, sc: Scope) -> tuple[str, tuple[str, ...]] | None:
        return self._hidden(sc, ".detach()")

    def _form_value(self, sc: Scope) -> tuple[str, tuple[str, ...]] | None:
        """An in-place call used as a value: ``y = h.sigmoid_()``, ``tanh(F.relu_(h))``."""
        t = self._target(sc, lambda r: True, False)
        if t is None:
            return None
        table = self.pick((METHODS, FUNCTIONAL, OUTS))
        template, oop, b = self._method_parts(sc, t, table)
        inner, outer = template.format(a=t.expr, b=b), oop.format(a=t.expr, b=b)
        if self.chance(30):
            wrap = self.pick(("torch.tanh({})", "({}) * 2.0", "torch.sigmoid({})"))
            inner, outer = wrap.format(inner), wrap.format(outer)
        name = self._bind(sc)
        sc.names[name] = replace(t, expr=name, slot=None)
        return f"{name} = {inner}", (f"{name} = {outer}",)

    # -- compound constructs -------------------------------------------------------------------
    def _body(self, sc: Scope, out: list[Line], steps: int) -> str:
        """Fill a function body; returns the name it returns."""
        for _ in range(self.draw(st.integers(1, steps))):
            self._step(sc, out)
        if not any(line.sid >= 0 for line in out) and self.chance(70):
            self._inplace(sc, out)
        return self.pick([n for n, r in sc.names.items() if r.shape == S4])

    def _helper(self, sc: Scope, out: list[Line]) -> None:
        self.features.add("helper")
        if self.helpers and self.chance(40):
            name, arity, sids = self.pick(self.helpers)
        else:
            name, arity = self.fresh("f"), self.pick((1, 2))
            params = ("t", "u")[:arity]
            inner = Scope(
                {p: Ref(p) for p in params},
                mods=sc.mods,
                new_mod=sc.new_mod,
                indent=1,
                depth=1,
                kind="func",
            )
            body: list[Line] = []
            self.used += 2
            result = self._body(inner, body, 3)
            lines = [
                Line(0, f"def {name}({', '.join(params)}):"),
                *body,
                Line(1, f"return {result}"),
            ]
            sids = tuple(
                sorted(
                    {ln.sid for ln in body if ln.sid >= 0} | {s for ln in body for s in ln.calls}
                )
            )
            self.defs.extend(lines)
            self.helpers.append((name, arity, sids))
        args = [self._operand(sc) for _ in range(arity)]
        call = f"{name}({', '.join(a.expr for a in args)})"
        if self.chance(20):
            self.emit(out, Line(sc.indent, call, calls=sids))
            return
        new = self._bind(sc)
        self.emit(out, Line(sc.indent, f"{new} = {call}", calls=sids))
        sc.names[new] = Ref(new, S4, any(a.grad for a in args))

    def _module(self, sc: Scope, out: list[Line]) -> None:
        self.features.add("module")
        blocks = [m for m, (k, _) in sc.mods.items() if k == "block"]
        if blocks and self.chance(40):
            inst = self.pick(blocks)
        else:
            cls, inst = self.fresh("Block"), self.fresh("blk")
            init: list[Line] = []

            def attr(kind: str, ctor: str) -> str:
                target = f"self.{self.fresh(kind)}"
                line, sids = self._module_line(target, ctor, 2)
                self.emit(init, line)
                inner.mods[target] = (kind, sids)
                return target

            inner = Scope({"t": Ref("t")}, mods={}, new_mod=attr, indent=2, depth=1, kind="forward")
            body: list[Line] = []
            self.used += 6
            result = self._body(inner, body, 3)
            head = [Line(0, f"class {cls}(nn.Module):"), Line(1, "def __init__(self):")]
            head += [Line(2, "super().__init__()"), *init, Line(1, "def forward(self, t):")]
            lines = [*head, *body, Line(2, f"return {result}"), Line(0, f"{inst} = {cls}()")]
            sids = tuple(
                sorted(
                    {ln.sid for ln in lines if ln.sid >= 0} | {s for ln in lines for s in ln.calls}
                )
            )
            self.defs.extend(lines)
            sc.mods[inst] = ("block", sids)
        a = self._operand(sc)
        new = self._bind(sc)
        self.emit(out, Line(sc.indent, f"{new} = {inst}({a.expr})", calls=sc.mods[inst][1]))
        sc.names[new] = Ref(new)

    def _hook(self, sc: Scope, out: list[Line]) -> None:
        targets = [r for r in sc.refs() if r.grad and not r.overlap]
        forward = bool(sc.mods) and (not targets or self.chance(60))
        if not forward and not targets:
            return self._compute(sc, out)
        name = self.fresh("fhook" if forward else "hook")
        arg = "out" if forward else "g"
        self.features.add("forward_hook" if forward else "tensor_hook")
        inplace, oop = self.pick(HOOK_OPS)
        lines = [Line(0, f"def {name}(mod, inp, out):" if forward else f"def {name}(g):")]
        sids: tuple[int, ...] = ()
        if self.chance(75):
            sid = self.sid()
            sids = (sid,)
            lines.append(Line(1, f"{arg}.{inplace}", (f"{arg} = {arg}.{oop}",), sid, "hook"))
            if self.chance(50):
                lines.append(Line(1, f"return {arg}"))
        else:
            lines.append(Line(1, f"return {arg}.{oop}"))
        self.used += len(lines)
        self.defs.extend(lines)
        if forward:
            self.emit(
                out,
                Line(
                    sc.indent,
                    f"{self.pick(sorted(sc.mods))}.register_forward_hook({name})",
                    calls=sids,
                ),
            )
        else:
            self.emit(
                out, Line(sc.indent, f"{self.pick(targets).expr}.register_hook({name})", calls=sids)
            )
        return None

    def _function(self, sc: Scope, out: list[Line]) -> None:
        """A custom autograd.Function whose backward may write grad_output or a saved tensor."""
        self.features.add("autograd_function")
        name = self.fresh("Fn")
        lines = [Line(0, f"class {name}(torch.autograd.Function):")]
        lines += [Line(1, "@staticmethod"), Line(1, "def forward(ctx, t):")]
        lines += [Line(2, "ctx.save_for_backward(t)"), Line(2, "return t * t")]
        lines += [Line(1, "@staticmethod"), Line(1, "def backward(ctx, g):")]
        lines.append(Line(2, "(t,) = ctx.saved_tensors"))
        sids: tuple[int, ...] = ()
        if self.chance(75):
            target = self.pick(("g", "t"))
            inplace, oop = self.pick(HOOK_OPS)
            sids = (self.sid(),)
            lines.append(
                Line(
                    2,
                    f"{target}.{inplace}",
                    (f"{target} = {target}.{oop}",),
                    sids[0],
                    "fn-backward",
                )
            )
        lines.append(Line(2, "return 2.0 * g * t"))
        self.used += len(lines)
        self.defs.extend(lines)
        a = self._operand(sc, square=False)
        new = self._bind(sc)
        self.emit(out, Line(sc.indent, f"{new} = {name}.apply({a.expr})", calls=sids))
        sc.names[new] = Ref(new, a.shape, a.grad)


@st.composite
def programs(draw: Callable[[st.SearchStrategy[Any]], Any]) -> Program:
    """A hypothesis strategy of small runnable programs with in-place statements and twins."""
    return _Gen(draw).program()
