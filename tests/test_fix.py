"""Autofix: each rewrite before/after, its safety verdict, byte preservation and the CLI.

The catalogue tests apply every fix the linter offers on every labelled example and run the
result under torch next to its out-of-place twin; the twins' runs are shared with
test_examples_torch.py through the session's ``torch_runs`` (tests/conftest.py).
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from harness import Example, TorchRuns, all_examples, compare, run_example

from inplace_lint.autofix import _write_atomic, apply_edits, fix_bytes, fix_text, unified_diff
from inplace_lint.engine import lint_source
from inplace_lint.finding import Edit, Finding, Position

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = all_examples(ROOT)
TOLERANCE = 1e-5


def fixed(source: str, unsafe: bool = True) -> str:
    return fix_text(textwrap.dedent(source), "m.py", unsafe=unsafe).after


def verdicts(source: str) -> list[tuple[str, bool]]:
    """``(code, safe)`` of each finding that carries a fix."""
    found = lint_source(textwrap.dedent(source), "m.py")
    return [(f.code, f.fix.safe) for f in found if f.fix is not None]


# --------------------------------------------------------------------------- each rewrite

SIGMOID = "import torch\na = torch.randn(4, requires_grad=True)\nh = torch.sigmoid(a)\n"
BACKWARD = "h.sum().backward()\n"

REWRITES: list[tuple[str, str, str]] = [
    ("method statement", "h.mul_(2)\n", "h = h.mul(2)\n"),
    ("augmented assignment", "h /= h.sum()\n", "h = h / h.sum()\n"),
    ("operand parenthesised", "h -= 0.5 * a\n", "h = h - (0.5 * a)\n"),
    ("operand kept in its parentheses", "h *= (a + 1)\n", "h = h * (a + 1)\n"),
    ("function form", "torch.sigmoid_(h)\n", "h = torch.sigmoid(h)\n"),
    ("item assignment", "h[0] = 0.0\n", "h = h.clone()\nh[0] = 0.0\n"),
    ("out= naming the saved tensor", "torch.mul(h, 2.0, out=h)\n", "h = torch.mul(h, 2.0)\n"),
    ("inplace keyword", "F.relu(h, inplace=True)\n", "h = F.relu(h)\n"),
    ("inside a block", "if a.sum() > 0:\n    h.mul_(2)\n", "if a.sum() > 0:\n    h = h.mul(2)\n"),
    ("chain of in-place methods", "h.mul_(2).add_(1)\n", "h = h.mul(2).add(1)\n"),
    ("chain rebinding its name", "h = h.mul_(2).add_(1)\n", "h = h.mul(2).add(1)\n"),
    ("tuple operand parenthesised", "h *= 1.0, 2.0, 3.0, 4.0\n", "h = h * (1.0, 2.0, 3.0, 4.0)\n"),
    ("tuple kept in parentheses", "h *= (1.0, 2.0, 3.0, 4.0)\n", "h = h * (1.0, 2.0, 3.0, 4.0)\n"),
]  # fmt: skip


@pytest.mark.parametrize(("name", "write", "after"), REWRITES, ids=[r[0] for r in REWRITES])
def test_each_rewrite(name: str, write: str, after: str) -> None:
    """The write after a sigmoid (IPL001) becomes its out-of-place form, safely."""
    head = SIGMOID.replace("import torch\n", "import torch\nimport torch.nn.functional as F\n")
    result = fix_text(head + write + BACKWARD, "m.py")
    assert result.after == head + after + BACKWARD, name
    assert [f.code for f in result.applied] == ["IPL001"]
    assert all(f.fix is not None and f.fix.safe for f in result.applied)
    assert result.remaining == []


def test_inplace_keyword_variants() -> None:
    """Dropping `inplace=True` keeps the other arguments, commas and comments intact."""
    seq = (
        "import torch\nfrom torch import nn\nm = nn.Sequential(nn.Linear(4, 8), nn.Sigmoid(), {})\n"
    )
    run = "y = m(torch.randn(2, 4)).sum()\ny.backward()\n"
    cases = {
        "nn.ReLU(inplace=True)": "nn.ReLU()",
        "nn.ReLU(True)": "nn.ReLU(False)",
        "nn.LeakyReLU(0.1, inplace=True)": "nn.LeakyReLU(0.1)",
        "nn.LeakyReLU(inplace=True, negative_slope=0.1)": "nn.LeakyReLU(negative_slope=0.1)",
        "nn.ReLU(\n    inplace=True,\n)": "nn.ReLU(\n    \n)",
        "nn.Hardtanh(0.0, 1.0, inplace=True  # why\n)": "nn.Hardtanh(0.0, 1.0  # why\n)",
        "nn.ELU(1.0,  # a\n    inplace=True)": "nn.ELU(1.0,  # a\n    inplace=False)",
    }  # fmt: skip
    for before, after in cases.items():
        result = fix_text(seq.format(before) + run, "m.py")
        assert result.after == seq.format(after) + run, before
        assert result.remaining == [], before


def test_one_line_compound_statement() -> None:
    source = SIGMOID + "if a.sum() > 0: h.mul_(2)\n" + BACKWARD
    assert fix_text(source, "m.py").after == source.replace("h.mul_(2)", "h = h.mul(2)")


def test_value_context_and_module_call_site() -> None:
    """`y = x.relu_()` keeps its target; `self.act(out)` is fixed where `act` is built."""
    source = """\
        import torch
        from torch import nn


        class Block(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 4)
                self.act = nn.ReLU(inplace=True)

            def forward(self, x):
                out = torch.tanh(self.fc(x))
                out = self.act(out)
                return out


        x = torch.randn(2, 4)
        Block()(x).sum().backward()
        h = torch.sigmoid(torch.randn(3, requires_grad=True))
        g = h.exp_()
        (g + h).sum().backward()
        """
    after = fixed(source)
    assert "self.act = nn.ReLU()\n" in after
    assert "out = self.act(out)\n" in after
    assert "g = h.exp()\n" in after
    assert lint_source(after, "m.py") == []


def test_custom_backward_gets_a_clone_once() -> None:
    """IPL005: one `grad_output = grad_output.clone()` before the first write, tabs kept."""
    source = (
        "import torch\n\n\nclass Mask(torch.autograd.Function):\n"
        "\t@staticmethod\n\tdef forward(ctx, x):\n\t\tctx.save_for_backward(x)\n"
        "\t\treturn x * 1\n\n"
        "\t@staticmethod\n\tdef backward(ctx, grad_output):\n\t\t(x,) = ctx.saved_tensors\n"
        "\t\tgrad_output[x < 0] = 0\n\t\tgrad_output.mul_(2)\n\t\treturn grad_output\n"
    )
    result = fix_text(source, "m.py", unsafe=False)
    assert result.after == source.replace(
        "\t\tgrad_output[x < 0] = 0\n",
        "\t\tgrad_output = grad_output.clone()\n\t\tgrad_output[x < 0] = 0\n",
    )
    assert result.remaining == []
    assert fix_text(result.after, "m.py").after == result.after


def test_leaf_and_data_writes_get_only_unsafe_fixes() -> None:
    """IPL003 (a leaf) and IPL007 (``.data``) had no fix; issue 17 gave them one, never safe:
    ``no_grad`` or a visible write changes what the program computes."""
    leaf = "import torch\nw = torch.randn(3, requires_grad=True)\nw.add_(1)\n"
    data = "import torch\na = torch.randn(3, requires_grad=True)\nh = torch.sigmoid(a)\n"
    data += "h.data.mul_(2)\nh.sum().backward()\n"
    for source in (leaf, data):
        found = lint_source(source, "m.py")
        assert found and all(f.fix is not None and not f.fix.safe for f in found)


def test_no_rebinding_fix_for_a_name_that_is_differentiated_against() -> None:
    """``x_adv = x_adv.clamp(...)`` would hand ``autograd.grad`` a tensor outside the graph
    (torch raises that it was not used); with no grad call on that name the fix is offered."""
    source = textwrap.dedent(
        """\
        import torch
        from torch import nn
        model = nn.Linear(6, 3)
        x_adv = torch.rand(4, 6) + torch.zeros(4, 6).requires_grad_(True)
        loss = model(x_adv).sum()
        x_adv.clamp_(0.0, 1.0)
        {tail}
        """
    )
    targeted = lint_source(source.format(tail="(g,) = torch.autograd.grad(loss, x_adv)"), "m.py")
    assert {f.code for f in targeted} == {"IPL001", "IPL006"}
    assert all(f.fix is None for f in targeted)
    plain = lint_source(source.format(tail="loss.backward()"), "m.py")
    assert [f.code for f in plain] == ["IPL001"] and plain[0].fix is not None


# --------------------------------------------------------------------------- safety


@pytest.mark.parametrize(
    ("why", "setup", "safe"),
    [
        ("a fresh local", "", True),
        ("an alias read later", "alias = h\n", False),
        ("a view", "v = h.view(-1)\n", False),
        ("kept in a list", "keep = [h]\n", False),
        ("passed to an unknown call", "log(h)\n", False),
        ("read by a fresh op", "s = h.sum() + torch.exp(h).mean()\n", True),
        ("metadata only", "n = h.shape[0] + h.numel()\n", True),
        ("reshaped under its own name", "h = h.view(2, 2)\n", True),
        ("an element read by a fresh op", "s = h[0] * 2 + torch.exp(-h[1:])\n", True),
        ("an element kept under a name", "row = h[0]\n", False),
        ("an alias of the tensor it replaced", "alias = h\nh = torch.sigmoid(a)\n", True),
        ("unpacked from fresh values", "h, g = torch.sigmoid(a), a * 2\n", True),
        ("unpacked from another name", "g = torch.sigmoid(a)\nh, k = g, a * 2\n", False),
        ("its top values read", "top = h.topk(2).indices\n", True),
        ("an element returned by a call", "log(h[0])\n", False),
        ("two names bound at once", "h = alias = torch.sigmoid(a)\n", False),
        (
            "a helper reads only its metadata",
            "def new(src):\n    return src.new_zeros(3)\n\nz = new(h)\n",
            True,
        ),
        ("a helper hands it back", "def same(src):\n    return src\n\nz = same(h)\n", False),
        (
            "a helper keeps it",
            "kept = []\ndef keep(src):\n    kept.append(src)\n\nkeep(h)\n",
            False,
        ),
        ("read into another tensor", "total = torch.zeros(4)\ntotal.add_(h)\n", True),
        ("shared by another tensor", "other = torch.zeros(4)\nother.set_(h)\n", False),
    ],
)
def test_rebinding_is_safe_only_without_aliases(why: str, setup: str, safe: bool) -> None:
    """A safe IPL001 rewrite needs a local whose tensor nobody else can see."""
    source = "import torch\nlog = print\n" + SIGMOID.split("\n", 1)[1] + setup + "h.mul_(2)\n"
    assert verdicts(source + BACKWARD) == [("IPL001", safe)], why


OWN_FORWARD = """\
import torch
from torch import nn


class Actor(nn.Module):
    def __init__(self):
        super().__init__()
        self.out = nn.Linear(3, 2)

    def forward(self, t):
        if t.dim() > 2:
            return FORWARD
        return torch.tanh(self.out(t))


class Agent:
    def __init__(self):
        self.target = Actor()

    def act(self, s):
        a = self.target.forward(s)
        a += 1.0
        return a


torch.manual_seed(0)
s = torch.randn(4, 3)
out = Agent().act(s)
out.sum().backward()
"""


@pytest.mark.parametrize(
    ("returned", "safe"), [("torch.tanh(t)", True), ("torch.sigmoid(t).contiguous()", False)]
)
def test_a_same_file_module_returning_fresh_tensors_gives_a_fresh_local(
    returned: str, safe: bool
) -> None:
    """TD3's ``target_actions = self.actor_target.forward(s)``: ``Actor.forward`` returns a
    new tensor at every ``return``, so ``a += 1.0`` may safely become ``a = a + 1.0``; a
    forward that may hand its input back leaves the rewrite unsafe."""
    source = OWN_FORWARD.replace("FORWARD", returned)
    assert verdicts(source) == [("IPL001", safe)]
    if safe:
        result = fix_text(source, "m.py", unsafe=False)
        assert "        a = a + 1.0\n" in result.after
        assert run_example(result.after).ok


def test_unsafe_contexts() -> None:
    """Parameters, closures, no_grad, loops that alias and stale-read codes are unsafe."""
    parameter = """\
        import torch
        def f(h):
            h.mul_(2)
            return h
        a = torch.randn(3, requires_grad=True)
        h = torch.sigmoid(a)
        f(h)
        h.sum().backward()
        """
    no_grad = SIGMOID + "with torch.no_grad():\n    h.mul_(2)\n" + BACKWARD
    closure = SIGMOID + "get = lambda: h\nh.mul_(2)\n" + BACKWARD
    loop = SIGMOID + "prev = None\nfor i in range(2):\n    prev = h\n    h.mul_(2)\n" + BACKWARD
    for source in (parameter, no_grad, closure, loop):
        found = verdicts(source)
        assert found and not any(safe for _, safe in found), source
    stale = SIGMOID + "keep = h\nh.mul_(2)\nprint(keep)\n"
    assert all(not safe for _, safe in verdicts(stale))


def test_safe_fix_keeps_values_of_code_that_runs() -> None:
    """Where the original runs (no backward reaches the write), a safe fix changes nothing."""
    source = textwrap.dedent(
        """\
        import torch


        def head(a, scale):
            h = torch.sigmoid(a)
            out = h * 2
            if scale:
                h.mul_(2)
                h += 1
            return out + h


        a = torch.randn(4, requires_grad=True)
        y = head(a, False)
        y.sum().backward()
        """
    )
    result = fix_text(source, "m.py", unsafe=False)
    assert result.applied and all(f.fix.safe for f in result.applied)  # type: ignore[union-attr]
    before, after = run_example(source), run_example(result.after)
    assert before.ok and after.ok
    assert compare(before, after) == 0.0


BLOCK = textwrap.dedent(
    """\
    import torch
    from torch import nn


    def conv3x3(channels):
        return nn.Conv2d(channels, channels, 3, padding=1, bias=False)


    class Block(nn.Module):
        def __init__(self, channels):
            super().__init__()
            self.conv = conv3x3(channels)
            self.bn = nn.BatchNorm2d(channels)
            self.relu = {relu}

        def forward(self, x):
            out = self.conv(x)
            out = self.bn(out)
            out = self.relu(out)
            out += x
            return out


    x = torch.randn(2, 3, 4, 4, requires_grad=True)
    y = Block(3)(x)
    y.sum().backward()
    """
)


@pytest.mark.parametrize(
    ("relu", "safe"),
    [
        ("nn.ReLU(inplace=True)", True),  # its output is its input: still only `out` holds it
        ("nn.Sigmoid()", True),
        ("nn.Sigmoid()\n        self.relu = nn.Sigmoid()", False),  # built twice: unknown
    ],
)
def test_a_module_chain_under_one_name_stays_a_fresh_local(relu: str, safe: bool) -> None:
    """torchvision's BasicBlock: ``out`` is rebound through ``self.conv`` (built by a helper
    returning ``nn.Conv2d``), ``self.bn`` and ``self.relu``; ``out += x`` may safely become
    ``out = out + x`` when every module returns a new tensor or its input."""
    source = BLOCK.format(relu=relu)
    found = [(f.code, f.fix.safe) for f in lint_source(source, "m.py") if f.fix is not None]
    assert found == [("IPL001", safe)], relu
    if safe:
        result = fix_text(source, "m.py", unsafe=False)
        assert "        out = out + x\n" in result.after
        assert run_example(result.after).ok


def test_a_parameter_replaced_by_a_fresh_tensor_is_a_fresh_local() -> None:
    """An RNN cell's ``h = torch.tanh(...)`` replaces the caller's ``h`` before ``h.relu_()``:
    the write no longer reaches the caller, so ``h = h.relu()`` is safe; without that
    rebinding it is the caller's tensor."""
    cell = "import torch\n\n\ndef cell(x, h):\n    h = torch.tanh(x + h)\n    h.relu_()\n"
    cell += "    return h\n\n\nx = torch.randn(3, requires_grad=True)\n"
    cell += "cell(x, torch.zeros(3)).sum().backward()\n"
    assert verdicts(cell) == [("IPL001", True)]
    direct = cell.replace("    h = torch.tanh(x + h)\n", "")
    direct = direct.replace("torch.zeros(3)", "torch.tanh(x)")
    assert [safe for _, safe in verdicts(direct)] == [False]


LOOP = textwrap.dedent(
    """\
    import torch

    a = torch.randn(3, 4, requires_grad=True)
    kept = []
    {bind_outside}
    for i in range(3):
        {bind_inside}
        y[0] = y[0] * 2
        kept.append(y.view(-1))
    torch.cat(kept).sum().backward()
    """
)


@pytest.mark.parametrize(
    ("outside", "inside", "safe"),
    [
        ("", "y = a[i].sigmoid()", True),  # each iteration binds a new tensor first
        ("y = a[0].sigmoid()", "pass", False),  # the next iteration writes the kept tensor
    ],
)
def test_a_use_after_the_write_in_a_loop_counts_unless_the_loop_renews_the_name(
    outside: str, inside: str, safe: bool
) -> None:
    """yolov5's Detect: ``y = x[i].sigmoid()``, writes into ``y``, then ``z.append(y.view())``
    in the same loop body; the append reaches the next write only when nothing rebinds ``y``
    in between."""
    source = LOOP.format(bind_outside=outside, bind_inside=inside)
    found = [(f.code, f.fix.safe) for f in lint_source(source, "m.py") if f.fix is not None]
    assert found == [("IPL001", safe)]
    if safe:
        after = fix_text(source, "m.py", unsafe=False).after
        assert "    y = y.clone()\n    y[0] = y[0] * 2\n" in after
        before, fixed = run_example(source), run_example(after)
        assert not before.ok and fixed.ok


# --------------------------------------------------------------------------- the catalogue


_FOUND: dict[str, tuple[Finding, ...]] = {}


def _findings(example: Example) -> tuple[Finding, ...]:
    """The example's findings with the default codes, linted once (collection asks too)."""
    if example.origin not in _FOUND:
        _FOUND[example.origin] = tuple(lint_source(example.source, example.origin))
    return _FOUND[example.origin]


def _fixable(example: Example) -> bool:
    return any(f.fix is not None for f in _findings(example))


#: Every hazard; the ones without a fix are skipped when their test runs (linting them all
#: here would cost each xdist worker's collection several seconds).
HAZARDS = [e for e in EXAMPLES if e.label == "hazard"]


def test_the_catalogue_offers_fixes() -> None:
    """Most hazards have a fix; safe examples have no finding, so nothing to fix."""
    assert len([e for e in HAZARDS if _fixable(e)]) >= 60
    for example in EXAMPLES:
        if example.label == "safe":
            assert fix_text(example.source, example.origin, unsafe=True).applied == []


@pytest.mark.parametrize("example", HAZARDS, ids=[e.origin for e in HAZARDS])
def test_every_catalogue_fix_removes_its_hazard(example: Example, torch_runs: TorchRuns) -> None:
    """Fixed whole: every finding is fixed or went with a fix on its line, idempotent, and
    torch agrees: the fixed program runs and computes what the out-of-place twin computes (a
    `raises` hazard no longer raises)."""
    if not _fixable(example):
        pytest.skip("no fix is offered for this hazard")
    before = _findings(example)
    result = fix_text(example.source, example.origin, unsafe=True)
    assert result.applied, example.origin
    assert result.remaining == [], (example.origin, [f.code for f in result.remaining])
    applied = {(f.line, f.code) for f in result.applied}
    assert applied <= {(f.line, f.code) for f in before}
    fixed_lines = {line for line, _ in applied}
    # a finding not fixed itself sat on a rewritten line (e.g. `a.sub_(m).div_(s)`, whose one
    # rewrite removes the IPL002 of `sub_` and the IPL004 of `div_`)
    assert all(f.line in fixed_lines for f in before), example.origin
    again = fix_text(result.after, example.origin, unsafe=True)
    assert again.after == result.after and again.applied == []
    outcome = torch_runs.run(result.after, example.origin)
    assert outcome.ok, (example.origin, outcome.error, result.after)
    if example.twin and not all(_grad_mode_fix(f) for f in result.applied):
        twin = torch_runs.run_twin(example)
        assert twin.ok, (example.origin, twin.error)
        difference = compare(outcome, twin)
        assert difference is not None and difference <= TOLERANCE, (example.origin, difference)


def _grad_mode_fix(finding: Finding) -> bool:
    """A fix that keeps the write and turns autograd off around it (``with torch.no_grad():``,
    an ``nn.init`` function): it runs the program its author meant, which the out-of-place
    twin (the leaf rebound to a new tensor) is not, so the twin is no reference for it; its
    values are checked in tests/test_fix_new.py."""
    description = finding.fix.description if finding.fix is not None else ""
    return "no_grad" in description or "nn.init" in description


# --------------------------------------------------------------------------- bytes and text


def test_apply_edits_and_diff() -> None:
    text = "a = 1\r\nb = 2\r\n"
    edits = [Edit(Position(2, 1), Position(2, 2), "c"), Edit(Position(1, 5), Position(1, 5), "0")]
    assert apply_edits(text, edits) == "a = 01\r\nc = 2\r\n"
    with pytest.raises(ValueError):
        apply_edits(text, [Edit(Position(9, 1), Position(9, 1), "x")])
    diff = unified_diff("m.py", "x = 1", "x = 2")
    assert diff.splitlines()[:2] == ["--- a/m.py", "+++ b/m.py"]
    assert "\\ No newline at end of file" in diff


@pytest.mark.parametrize(
    ("name", "prefix", "newline", "encoding"),
    [
        ("bom", b"\xef\xbb\xbf", "\n", "utf-8"),
        ("crlf", b"", "\r\n", "utf-8"),
        ("cr", b"", "\r", "utf-8"),
        ("latin-1 cookie", b"# -*- coding: latin-1 -*-\n", "\n", "latin-1"),
    ],
)
def test_bytes_outside_the_edit_are_kept(
    name: str, prefix: bytes, newline: str, encoding: str
) -> None:
    """BOM, line endings, encodings, tabs and a missing final newline survive the fix."""
    body = SIGMOID + "\tif True:\n\t\th.mul_(2)  # caf\xe9\n" + "h.sum().backward()"
    body = body.replace("\tif", "if")
    data = prefix + body.replace("\n", newline).encode(encoding)
    result, new = fix_bytes(data, name + ".py")
    assert result.error is None and result.applied, name
    expected = data.replace(b"h.mul_(2)", b"h = h.mul(2)")
    assert new == expected


def test_files_that_cannot_be_fixed_are_left_alone() -> None:
    """Undecodable, null bytes and syntax errors: no change, one-line reason or IPL999."""
    for data in (b"\xff\xfe", b"import torch\x00\n", b"import torch\nx.add_(1\n"):
        result, new = fix_bytes(data, "m.py")
        assert new == data and not result.applied


def test_atomic_write_refuses_a_file_that_changed(tmp_path: Path) -> None:
    target = tmp_path / "m.py"
    target.write_bytes(b"now\n")
    assert _write_atomic(target, b"new\n", b"then\n") == "it changed on disk during the run"
    assert target.read_bytes() == b"now\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.py"]


# --------------------------------------------------------------------------- the command

HAZARD = SIGMOID + "h.mul_(2)\n" + BACKWARD
STALE = SIGMOID + "keep = h\nh.mul_(2)\n(keep + h).sum().backward()\n"


def cli(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        [sys.executable, "-m", "inplace_lint", "--no-cache", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


def test_fix_diff_and_unsafe_fixes_on_the_command_line(tmp_path: Path) -> None:
    """--diff writes nothing; --fix writes safe fixes and keeps the mode; exit 1 if any remain."""
    (tmp_path / "pyproject.toml").write_text("", encoding="utf-8")
    hazard, stale = tmp_path / "hazard.py", tmp_path / "stale.py"
    hazard.write_text(HAZARD, encoding="utf-8")
    stale.write_text(STALE, encoding="utf-8")
    hazard.chmod(0o640)
    diff = cli(tmp_path, "--diff", ".")
    assert diff.returncode == 1
    assert "-h.mul_(2)\n+h = h.mul(2)\n" in diff.stdout and "stale.py" not in diff.stdout
    assert hazard.read_text(encoding="utf-8") == HAZARD
    fix = cli(tmp_path, "--fix", ".")
    assert fix.returncode == 1  # the stale read's fix is unsafe: it remains
    assert fix.stdout.splitlines()[0].startswith("stale.py:5:1: IPL001")
    summary = "Found 2 findings (1 fixed, 1 remaining, 1 fixable with --unsafe-fixes)."
    assert fix.stdout.splitlines()[1:] == [summary]
    assert hazard.read_text(encoding="utf-8") == HAZARD.replace("h.mul_(2)", "h = h.mul(2)")
    assert stat.S_IMODE(hazard.stat().st_mode) == 0o640
    assert cli(tmp_path, "--fix", "hazard.py").returncode == 0  # idempotent, nothing left
    unsafe = cli(tmp_path, "--fix", "--unsafe-fixes", ".")
    assert (unsafe.returncode, unsafe.stdout) == (0, "Found 1 finding (1 fixed, 0 remaining).\n")
    assert "h = h.mul(2)" in stale.read_text(encoding="utf-8")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["hazard.py", "pyproject.toml", "stale.py"]


def test_fix_never_writes_unparseable_files_or_stdin(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("", encoding="utf-8")
    broken = tmp_path / "broken.py"
    broken.write_text(HAZARD + "def (\n", encoding="utf-8")
    result = cli(tmp_path, "--fix", "broken.py")
    assert result.returncode == 2 and "IPL999" in result.stdout
    assert broken.read_text(encoding="utf-8") == HAZARD + "def (\n"
    piped = subprocess.run(
        [sys.executable, "-m", "inplace_lint", "--fix", "-"],
        cwd=tmp_path,
        input=HAZARD,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert piped.returncode == 2 and "standard input" in piped.stderr


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symlinks")
def test_fix_writes_through_a_symlink(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("", encoding="utf-8")
    real = tmp_path / "real.py"
    real.write_text(HAZARD, encoding="utf-8")
    (tmp_path / "link.py").symlink_to("real.py")
    assert cli(tmp_path, "--fix", "link.py").returncode == 0
    assert (tmp_path / "link.py").is_symlink()
    assert "h = h.mul(2)" in real.read_text(encoding="utf-8")
