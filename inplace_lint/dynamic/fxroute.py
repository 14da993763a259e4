"""Pass B through ``torch.fx``: flip in-place nodes of the traced model, not its source.

For a subject that builds ``(model, inputs)`` with an ``nn.Module``, the model is built once
(seeded, construction sites recorded), traced on a deep copy with stack traces kept, and the
traced graph is trusted only if it reproduces the eager run: ``symbolic_trace`` records
``x += y`` as an out-of-place add, so a graph that computes other numbers (or raises
differently) is refused and every site goes through the source twins instead. A site is
flipped here when graph nodes whose innermost user frame (or, for ``call_module``, whose
module's construction line) is that site write in place and can be turned out of place
without renaming Python variables: ``relu_`` -> ``relu``, ``torch.relu_`` -> ``torch.relu``,
``inplace=True`` -> ``False``, an in-place module -> a copy with ``inplace=False``.
"""

from __future__ import annotations

import copy
import os
import random
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import torch
import torch.fx
import torch.nn.functional as F

from inplace_lint.dynamic import sites
from inplace_lint.dynamic.passa import ModuleSites, track_modules
from inplace_lint.dynamic.runner import Outcome, Subject, _describe, compare, drive, environment
from inplace_lint.dynamic.sites import Site
from inplace_lint.outofplace import Form, inplace_position, method_form

__all__ = ["FxRoute", "prepare"]

_FRAME = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+)')

#: Namespaces whose ``name_`` functions have the out-of-place twin ``name`` beside them.
_NAMESPACES: tuple[Any, ...] = (torch, F, torch._C._nn)

#: How a node is flipped: swap its module, turn its flag off, rename it, clone its input.
MODULE, FLAG, RENAME, CLONE = "module", "flag", "rename", "clone"


@dataclass(frozen=True)
class Flip:
    """One node to flip, by its position in the graph."""

    index: int
    how: str
    twin: Any = None  # the out-of-place method name or function for RENAME


@lru_cache(maxsize=1024)
def _real(path: str) -> str:
    return os.path.realpath(path)


def _innermost_user_line(stack_trace: str | None) -> tuple[str, int] | None:
    """The innermost user frame of an fx stack trace (outermost first), as (path, line)."""
    found = None
    for match in _FRAME.finditer(stack_trace or ""):
        if sites.is_user_file(match.group("file")):
            found = (_real(match.group("file")), int(match.group("line")))
    return found


def _function_twin(target: Any) -> tuple[str, Any] | None:
    """``torch.relu_`` -> (RENAME, ``torch.relu``); an in-place one without a twin -> CLONE."""
    name = getattr(target, "__name__", None)
    form = method_form(name) if isinstance(name, str) else None
    if form is None:
        return None
    for namespace in _NAMESPACES:
        if getattr(namespace, name, None) is target:
            twin = getattr(namespace, name[:-1], None)
            if callable(twin) and form is not Form.CLONE:
                return RENAME, twin
            return CLONE, None
    return None


def _method_twin(name: str) -> tuple[str, Any] | None:
    """``relu_`` -> (RENAME, ``relu``); ``fill_`` / ``copy_`` -> CLONE (clone, then write)."""
    form = method_form(name)
    if form is None:
        return None
    stem = name[:-1]
    if form is not Form.RENAME:
        return CLONE, None
    return (RENAME, stem) if callable(getattr(torch.Tensor, stem, None)) else (CLONE, None)


def _flag_set(node: torch.fx.Node) -> bool:
    """Whether the call passes ``inplace=True`` (by keyword or a known position)."""
    if node.kwargs.get("inplace") is True:
        return True
    name = getattr(node.target, "__name__", node.target)
    position = inplace_position(name) if isinstance(name, str) else None
    return position is not None and len(node.args) > position and node.args[position] is True


def classify(node: torch.fx.Node, root: torch.nn.Module) -> tuple[str, Any] | None:
    """How to flip ``node`` out of place; ``None`` when it does not write in place."""
    if node.op == "call_module":
        module = root.get_submodule(str(node.target))
        return (MODULE, None) if getattr(module, "inplace", None) is True else None
    if node.op not in ("call_function", "call_method"):
        return None
    if _flag_set(node):
        return FLAG, None
    if node.op == "call_method":
        return _method_twin(str(node.target))
    return _function_twin(node.target)


class FxRoute:
    """A traced model that reproduces the eager run, and its one-site twins."""

    def __init__(
        self,
        subject: Subject,
        module: torch.fx.GraphModule,
        inputs: tuple[tuple[Any, ...], dict[str, Any]],
        rng: Callable[[], None],
        built: dict[str, tuple[str, int]],
    ) -> None:
        self.subject = subject
        self.module = module
        self.args, self.kwargs = inputs
        self.restore_rng = rng
        nodes = list(module.graph.nodes)
        self.where = [_innermost_user_line(node.stack_trace) for node in nodes]
        self.built = [
            built.get(str(node.target)) if node.op == "call_module" else None for node in nodes
        ]
        self.kinds = [classify(node, module) for node in nodes]
        self.users = [len(node.users) for node in nodes]

    def flips(self, path: str, line: int) -> list[Flip] | None:
        """The nodes to flip for the site, or ``None`` when this route cannot flip it.

        Renamed calls, flags and clones need their result used: as a statement the source
        twin rebinds the written variable (``x = x.relu()``), which a graph cannot express.
        """
        key = (_real(path), line)
        found: list[Flip] = []
        for index, kind in enumerate(self.kinds):
            if kind is None or key not in (self.where[index], self.built[index]):
                continue
            how, twin = kind
            if how != MODULE and not self.users[index]:
                return None
            found.append(Flip(index, how, twin))
        return found or None

    def twin(self, flips: list[Flip]) -> torch.fx.GraphModule:
        """A fresh copy of the traced model with ``flips`` applied."""
        module = copy.deepcopy(self.module)
        nodes = list(module.graph.nodes)
        for number, flip in enumerate(flips):
            node = nodes[flip.index]
            if flip.how == MODULE:
                swapped = copy.deepcopy(module.get_submodule(str(node.target)))
                swapped.inplace = False
                name = f"_inplace_lint_twin_{number}"
                module.add_submodule(name, swapped)
                node.target = name
            elif flip.how == FLAG:
                if "inplace" in node.kwargs:
                    node.update_kwarg("inplace", False)
                else:
                    name = getattr(node.target, "__name__", node.target)
                    position = inplace_position(name)
                    assert position is not None  # ``classify`` found the flag there
                    node.update_arg(position, False)
            elif flip.how == RENAME:
                node.target = flip.twin
            else:
                with module.graph.inserting_before(node):
                    clone = module.graph.call_method("clone", (node.args[0],))
                node.update_arg(0, clone)
        module.recompile()
        return module

    def run(self, flips: list[Flip]) -> Outcome:
        """Drive the twin (or, with no flips, the traced model) as the eager run drives it.

        ``flipped`` is false when the twin could not be built.
        """
        outcome = Outcome()
        try:
            module = self.twin(flips)
        except Exception:
            outcome.flipped = False
            return outcome
        with environment(self.subject):
            self.restore_rng()
            try:
                outcome.values = drive(module, self.args, self.kwargs, loss=self.subject.loss)
            except Exception as exc:
                outcome.error = exc
        return outcome


def _rng_saver() -> Callable[[], None]:
    """Capture the random states now; the returned function puts them back."""
    cpu = torch.get_rng_state()
    python = random.getstate()
    cuda = torch.cuda.get_rng_state_all() if torch.cuda.is_initialized() else None

    def restore() -> None:
        torch.set_rng_state(cpu)
        random.setstate(python)
        if cuda is not None:
            torch.cuda.set_rng_state_all(cuda)

    return restore


def prepare(subject: Subject, base: Outcome) -> tuple[FxRoute | None, str]:
    """Build and trace the subject's model, and check the traced graph against ``base``.

    Returns the route, or ``None`` with the reason (empty when the route does not apply).
    """
    if not subject.builds:
        return None, ""
    tracker = ModuleSites()
    try:
        with environment(subject):
            with track_modules(tracker):
                built = subject.build(None)
            if built is None or not isinstance(built[0], torch.nn.Module):
                return None, ""
            model, args, kwargs = built
            restore = _rng_saver()
            tracer = torch.fx.Tracer()
            tracer.record_stack_traces = True
            copied = copy.deepcopy(model)
            graph = tracer.trace(copied)
            traced = torch.fx.GraphModule(tracer.root, graph, type(model).__name__)
    except (Exception, SystemExit) as exc:
        return None, f"torch.fx cannot trace the model ({_describe(exc)})"
    sites_by_name: dict[str, tuple[str, int]] = {}
    for name, module in model.named_modules(remove_duplicate=False):
        site: Site | None = tracker.built.get(module)
        if site is not None:
            sites_by_name[name] = (_real(site.path), site.line)
    route = FxRoute(subject, traced, (args, kwargs), restore, sites_by_name)
    try:
        plain = route.run([])
    except Exception as exc:
        return None, f"the traced model cannot be copied or run ({_describe(exc)})"
    if base.error is not None:
        if plain.error is None or type(plain.error) is not type(base.error):
            return None, "the traced graph does not raise as the eager run does"
        return route, ""
    if plain.error is not None:
        return None, f"the traced graph raises {_describe(plain.error)}; the eager run does not"
    if plain.values.keys() != base.values.keys():
        return None, "the traced graph returns other tensors than the eager run"
    worst, where, differs = compare(base.values, plain.values)
    if differs:
        return None, (
            f"the traced graph differs from the eager run "
            f"(largest difference {worst:.4g} in '{where}')"
        )
    return route, ""
