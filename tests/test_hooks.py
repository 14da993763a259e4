"""The backward-hook pre-pass and the grown-list order, on small sources."""

from __future__ import annotations

import libcst as cst

from inplace_lint.facts.grown_lists import grown
from inplace_lint.facts.hooks import BackwardHooks, find_backward_hooks
from inplace_lint.facts.model import ModuleSpec
from inplace_lint.facts.names import ImportTable
from inplace_lint.facts.walk import walk


def _hooks(
    source: str, classes: frozenset[str] = frozenset(), leaves: frozenset[str] = frozenset()
) -> BackwardHooks:
    module = cst.parse_module(source)
    calls = [n for n in walk(module) if isinstance(n, cst.Call)]
    imports = ImportTable.from_statements(walk(module))
    return find_backward_hooks(module, calls, imports, classes, leaves)


def _spec(qualname: str | None, user_class: str | None = None) -> ModuleSpec:
    return ModuleSpec(qualname=qualname, node=None, user_class=user_class)


def test_isinstance_narrows_a_modules_loop() -> None:
    hooks = _hooks(
        "import torch.nn as nn\n"
        "for name, m in model.named_modules():\n"
        "    if isinstance(m, (nn.Linear, nn.Conv2d)):\n"
        "        m.register_full_backward_hook(h)\n"
    )
    assert hooks.covering(_spec("torch.nn.Linear")) is not None
    assert hooks.covering(_spec("torch.nn.Conv2d")) is not None
    assert hooks.covering(_spec("torch.nn.ReLU")) is None


def test_comprehension_and_abstract_base() -> None:
    hooks = _hooks(
        "import torch.nn as nn\n"
        "hs = [m.register_full_backward_hook(h) for m in net.modules()\n"
        "      if isinstance(m, nn.modules.batchnorm._BatchNorm)]\n"
    )
    assert hooks.covering(_spec("torch.nn.BatchNorm2d")) is not None
    assert hooks.covering(_spec("torch.nn.Linear")) is None


def test_recursion_over_children_reaches_leaves_only() -> None:
    hooks = _hooks(
        "def add(model, h):\n"
        "    kids = list(model.children())\n"
        "    if kids:\n"
        "        for kid in kids:\n"
        "            add(kid, h)\n"
        "    else:\n"
        "        model.register_full_backward_hook(h)\n",
        classes=frozenset({"Block", "Gate"}),
        leaves=frozenset({"Gate"}),
    )
    assert hooks.covering(_spec("torch.nn.ReLU")) is not None
    assert hooks.covering(_spec("torch.nn.Sequential")) is None
    assert hooks.covering(_spec(None, user_class="Block")) is None
    assert hooks.covering(_spec(None, user_class="Gate")) is not None


def test_one_named_module_and_forward_hooks_are_not_read() -> None:
    hooks = _hooks(
        "model.layer4.register_full_backward_hook(h)\n"
        "for m in model.modules():\n"
        "    m.register_forward_hook(h)\n"
    )
    assert hooks.covers == []


def _pairs(source: str) -> set[tuple[str, str]]:
    func = cst.parse_module(source).body[0]
    assert isinstance(func, cst.FunctionDef)
    module = cst.Module(body=[])
    found = grown(func)[0]
    return {(module.code_for_node(a), module.code_for_node(b)) for a, b in found["layers"]}


def test_grown_list_pairs_follow_branches_and_loops() -> None:
    pairs = _pairs(
        "def make(n, smooth):\n"
        "    layers = []\n"
        "    for i in range(n):\n"
        "        layers.append(L())\n"
        "        if smooth:\n"
        "            layers.append(T())\n"
        "        else:\n"
        "            layers.append(R())\n"
        "    layers += [F(), G()]\n"
        "    return S(*layers)\n"
    )
    assert ("L()", "T()") in pairs and ("L()", "R()") in pairs
    assert ("T()", "R()") not in pairs and ("R()", "T()") not in pairs
    assert ("T()", "L()") in pairs  # the next iteration
    assert ("F()", "G()") in pairs and ("R()", "F()") in pairs


def test_a_list_changed_otherwise_is_not_grown() -> None:
    func = cst.parse_module(
        "def make():\n    layers = []\n    layers.append(L())\n    layers.insert(0, R())\n"
    ).body[0]
    assert isinstance(func, cst.FunctionDef)
    assert grown(func)[0] == {}
