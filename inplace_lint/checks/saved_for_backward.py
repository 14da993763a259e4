"""IPL001: an in-place write overwrites a tensor an earlier op saved for backward."""

from __future__ import annotations

from collections.abc import Iterator

from inplace_lint.checks.base import LineOf, RawFinding, Rule, callers_saved_tensor, saver
from inplace_lint.facts.events import OUT_GRAD, Facts, SavedOverwrite
from inplace_lint.facts.function_views import FUNCTION_VIEW_PREFIX
from inplace_lint.facts.hooks import HOOK_VIEW
from inplace_lint.facts.model import ModuleSpec, Write
from inplace_lint.facts.syntax import short_name

#: how a broken save makes backward fail
_OUTCOME = "backward will fail with 'modified by an inplace operation'"


def _most_specific(facts: Facts) -> list[SavedOverwrite]:
    """One event per write, in the order of the first: where a step's write breaks both a
    save of the module it updates and one of a module owning it (the whole model, whose
    method's result carries every submodule's saves), the submodule's own save."""
    chosen: dict[int, SavedOverwrite] = {}
    for event in facts.saved_overwrites:
        key = id(event.write.node)
        held = chosen.get(key)
        if held is None or (held.record.group.children and not event.record.group.children):
            chosen[key] = event
    return list(chosen.values())


def check(facts: Facts) -> Iterator[RawFinding]:
    seen: set[int] = set()
    for event in _most_specific(facts):
        write, record = event.write, event.record
        if write.hidden or write.via_detach:
            continue
        seen.add(id(write.node))  # one event per write already (``_most_specific``)
        if write.via_call is not None and record.role != "parameters":
            # a helper writes its caller's saved tensor
            yield callers_saved_tensor("IPL001", event, _OUTCOME)
            continue
        if record.role == "parameters":
            saved = f"{record.op} saved them for backward"
        elif record.role == "result":
            saved = f"{saver(record.op, record.role)} saved its output for backward"
        else:
            saved = f"{saver(record.op, record.role)} saved its input for backward"
        when = (
            "backward will fail"
            if event.backward is not None
            else ("the caller's backward will fail")
        )
        if record.role == "parameters":
            target = record.tensor
        else:
            target = f"`{write.name or write.target}`" if write.target else "a tensor"
        message = (
            f"{write.what} overwrites {target} in place after {saved} (line ",
            LineOf(record.node),
            f"); {when} with 'modified by an inplace operation'",
        )
        related = [(record.node, f"saved for backward by {record.op} here"), *write.related]
        if event.backward is not None:
            related.append((event.backward, "backward needs the saved value here"))
        yield RawFinding("IPL001", write.node, write.stmt, message, tuple(related))
    yield from _multi_view_writes(facts, seen)
    yield from _sequential_chains(facts)


def _multi_view_writes(facts: Facts, seen: set[int]) -> Iterator[RawFinding]:
    """``q, k = qk.chunk(2); q *= scale``: autograd refuses the write when it runs (the views
    share one backward node, which cannot see it)."""
    for event in facts.multi_view_writes:
        write = event.write
        if id(write.node) in seen:
            continue
        seen.add(id(write.node))
        target = f"`{write.name or write.target}`" if write.target else "a tensor"
        if event.op == HOOK_VIEW:
            yield _hooked_write(facts, write, target)
            continue
        if event.op == OUT_GRAD:
            message = (
                f"{write.what} writes {target} with an argument that requires grad; torch "
                "raises 'functions with out=... arguments don't support automatic "
                "differentiation, but one of the arguments requires grad'",
            )
            yield RawFinding("IPL001", write.node, write.stmt, message, write.related)
            continue
        if event.op.startswith(FUNCTION_VIEW_PREFIX):
            function = event.op[len(FUNCTION_VIEW_PREFIX) :]
            message = (
                f"{write.what} writes {target} in place, a view that the custom Function "
                f"`{function}` returned; with grad on, torch raises 'Output 0 of {function} "
                "is a view and is being modified inplace. This view was created inside a "
                "custom Function'",
            )
            yield RawFinding("IPL001", write.node, write.stmt, message, write.related)
            continue
        message = (
            f"{write.what} writes {target} in place, one of the views `{event.op}` returned; "
            "with grad on, torch raises 'is a view and is being modified inplace ... Such "
            "functions do not allow the output views to be modified inplace'",
        )
        yield RawFinding("IPL001", write.node, write.stmt, message, write.related)


def _hooked_write(facts: Facts, write: Write, target: str) -> RawFinding:
    """A write to a view ``BackwardHookFunction`` made of a hooked module's input or output."""
    hooks = facts.backward_hooks.covers
    message = (
        f"{write.what} writes {target} in place, a module's output or input that a full "
        "backward hook (line ",
        LineOf(hooks[0].node) if hooks else "?",
        ") passes through BackwardHookFunction; torch raises 'Output 0 of "
        "BackwardHookFunction is a view and is being modified inplace'",
    )
    related = list(write.related)
    if hooks:
        related.append((hooks[0].node, "the full backward hook is registered here"))
    return RawFinding("IPL001", write.node, write.stmt, message, tuple(related))


def _sequential_chains(facts: Facts) -> Iterator[RawFinding]:
    """``nn.Sequential(..., <saves its output>, <in place>, ...)``, where the Sequential is
    called with grad on somewhere (or its calls are not seen)."""
    for built in facts.sequentials:
        if True not in facts.sequential_calls.get(id(built.node), {True}):
            continue
        pairs = list(built.pairs)
        previous: ModuleSpec | None = None
        for element in built.spec.elements or ():
            if element.is_view:
                continue
            if previous is not None:
                pairs.append((previous, element))
            previous = element
        for previous, element in pairs:
            found = _hooked_chain(facts, previous, element) or _saved_chain(previous, element)
            if found is not None:
                yield found


def _saved_chain(previous: ModuleSpec, element: ModuleSpec) -> RawFinding | None:
    """An in-place member right after one that saves its output for backward."""
    if not (
        previous.saves_result
        and element.inplace
        and element.node is not None
        and previous.node is not None
    ):
        return None
    previous_name = short_name(previous.qualname or "module")
    message = (
        f"{short_name(element.qualname or 'module')}(inplace=True) overwrites the "
        f"output that {previous_name} saved for backward (line ",
        LineOf(previous.node),
        "); backward will fail",
    )
    related = ((previous.node, f"{previous_name} saves its output here"),)
    if element.inplace_at is not None:  # made in place later, by ``m.inplace = True``
        related += ((element.node, "the module is built here"),)
        return RawFinding("IPL001", element.inplace_at, None, message, related)
    return RawFinding("IPL001", element.node, None, message, related)


def _hooked_chain(facts: Facts, previous: ModuleSpec, element: ModuleSpec) -> RawFinding | None:
    """An in-place member after another member, where a full backward hook reaches either:
    it writes the view ``BackwardHookFunction`` returned."""
    if previous.node is None or not element.inplace or element.node is None:
        return None
    hooks = facts.backward_hooks
    registration = hooks.covering(previous) or hooks.covering(element)
    if registration is None:
        return None
    name = short_name(element.qualname or "module")
    message = (
        f"{name}(inplace=True) writes in place the output of "
        f"{short_name(previous.qualname or 'module')} (line ",
        LineOf(previous.node),
        "), which a full backward hook (line ",
        LineOf(registration),
        ") passes through BackwardHookFunction; torch raises 'Output 0 of BackwardHookFunction "
        "is a view and is being modified inplace'",
    )
    related = ((registration, "the full backward hook is registered here"),)
    return RawFinding("IPL001", element.node, None, message, related)


RULE = Rule(
    code="IPL001",
    name="saved-for-backward",
    summary="in-place write to a tensor that an earlier op saved for backward",
    check=check,
    supersedes=("IPL002", "IPL004", "IPL007"),
    fix="out-of-place",
    safe_fix=True,
    # an embedding lookup with ``max_norm`` writes its weight in place (op_extras)
    screen_words=("max_norm",),
    evidence=("raises", "autograd-error"),
)
