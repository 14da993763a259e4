"""One verified fix on every path: the editor's quick fix, ``--diff``, ``--fix`` and JSON.

The IPL005 clone of ``grad_output`` is the regression: for ``grad_output *= ctx.scale`` its
insertion was placed at the ``def backward`` line, so the editor's quick fix broke the file
and ``--fix`` / ``--diff`` dropped it without a word. Each path is driven for real: the
language server through pytest-lsp's client, the command line as a process.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import textwrap
from dataclasses import replace
from pathlib import Path

import pytest

from inplace_lint.autofix import (
    NO_CHANGE,
    NO_PARSE,
    NO_PLACE,
    STILL_THERE,
    apply_edits,
    fix_text,
    verified,
)
from inplace_lint.engine import lint_source

pytest.importorskip("pygls")
pytest_lsp = pytest.importorskip("pytest_lsp")

from lsprotocol import types  # noqa: E402
from test_lsp import CONFIG, Client, _apply, _diagnostics, _init_params, _open  # noqa: E402

in_module_loop = pytest.mark.asyncio(loop_scope="module")

#: A custom backward that scales ``grad_output`` in place; ``{write}`` is the write's form.
BACKWARD = textwrap.dedent(
    """\
    import torch


    class Scale(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, scale):
            ctx.scale = scale
            return x * scale

        @staticmethod
        def backward(ctx, grad_output):
            {write}
            return grad_output, None


    x = torch.randn(3, requires_grad=True)
    y = Scale.apply(x, 2.0)
    g = torch.ones(3)
    y.backward(g)
    """
)
WRITES = ["grad_output *= ctx.scale", "grad_output.mul_(ctx.scale)", "grad_output[0] = 0.0"]
CLONE = "        grad_output = grad_output.clone()\n"


def _backward(write: str) -> str:
    return BACKWARD.format(write=write)


def _cli(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        [sys.executable, "-m", "inplace_lint", "--no-cache", "--isolated", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


@pytest.mark.parametrize("write", WRITES)
def test_the_clone_goes_inside_backward_for_every_form_of_write(write: str) -> None:
    """The offered edit, applied alone, parses and puts the clone right before the write."""
    source = _backward(write)
    (finding,) = lint_source(source, "scale.py")
    assert finding.code == "IPL005" and finding.fix is not None and finding.fix.safe
    after = apply_edits(source, finding.fix.edits)
    ast.parse(after)
    assert f"{CLONE}        {write}\n" in after
    assert lint_source(after, "scale.py") == []


def test_fix_and_diff_apply_the_clone_on_the_command_line(tmp_path: Path) -> None:
    source = _backward(WRITES[0])
    (tmp_path / "scale.py").write_text(source)
    diff = _cli(tmp_path, "--diff", "scale.py")
    assert diff.returncode == 1, diff
    assert f"+{CLONE}" in diff.stdout
    assert diff.stderr == "Would fix 1 finding.\n"
    fixed = _cli(tmp_path, "--fix", "scale.py")
    assert fixed.returncode == 0, fixed
    after = (tmp_path / "scale.py").read_text()
    assert after == source.replace("        grad_output *=", CLONE + "        grad_output *=")
    assert fixed.stdout.splitlines()[-1] == "Found 1 finding (1 fixed, 0 remaining)."
    assert fix_text(after, "scale.py").applied == []  # a second run changes nothing


@pytest_lsp.fixture(config=CONFIG, scope="module")
async def server(lsp_client: Client, tmp_path_factory: pytest.TempPathFactory):
    await lsp_client.initialize_session(_init_params(tmp_path_factory.mktemp("workspace")))
    yield
    await lsp_client.shutdown_session()


async def _quick_fixes(client: Client, uri: str, text: str) -> list[types.CodeAction]:
    diagnostics = await _diagnostics(client, uri, 1, _open(client, uri, text))
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=diagnostics[0].range,
            context=types.CodeActionContext(diagnostics=diagnostics),
        )
    )
    assert actions is not None
    return [a for a in actions if isinstance(a, types.CodeAction) and a.title.startswith("Fix")]


@in_module_loop
async def test_the_editors_quick_fix_for_an_augmented_write_parses(
    server: Client, tmp_path: Path
) -> None:
    uri = (tmp_path / "scale.py").as_uri()
    text = _backward(WRITES[0])
    (action,) = await _quick_fixes(server, uri, text)
    assert action.title == "Fix IPL005: Clone `grad_output` before writing to it in backward"
    assert action.edit is not None and action.edit.changes is not None
    after = _apply(text, list(action.edit.changes[uri]))
    ast.parse(after)
    assert f"{CLONE}        {WRITES[0]}\n" in after


def test_json_carries_the_same_edit_that_fix_writes(tmp_path: Path) -> None:
    source = _backward(WRITES[0])
    (tmp_path / "scale.py").write_text(source)
    report = json.loads(_cli(tmp_path, "--format", "json", "scale.py").stdout)
    (finding,) = report
    edits = finding["fix"]["edits"]
    assert [(e["start_line"], e["start_column"]) for e in edits] == [(12, 9)]
    assert edits[0]["text"] == "grad_output = grad_output.clone()\n        "


#: A real fix that fails verification: writing ``t = t.relu()`` instead of through ``.data``
#: (IPL007) makes ``t[0].add_`` write the output ``relu`` saved (IPL001), which has no fix; the
#: fix is therefore offered nowhere.
UNVERIFIABLE = textwrap.dedent(
    """\
    import torch
    from torch import nn


    class Block(nn.Module):
        def forward(self, t):
            t.data.relu_()
            t[0].add_(1.0)
            return t


    x = torch.randn(4, 4, requires_grad=True)
    c = torch.randn(4, 4) * x
    out = Block()(c)
    (out * x).sum().backward()
    print(c)
    """
)
DROPPED = (
    "inplace-lint: 1 fix failed verification, not applied:\n"
    "  block.py:7:9: IPL007 Write `t = t.relu(...)` so autograd sees it: "
)


def test_a_fix_that_fails_verification_is_offered_nowhere_on_the_command_line(
    tmp_path: Path,
) -> None:
    (tmp_path / "block.py").write_text(UNVERIFIABLE)
    (finding,) = lint_source(UNVERIFIABLE, "block.py")
    assert finding.code == "IPL007" and finding.fix is not None  # the engine's candidate
    report = _cli(tmp_path, "--format", "json", "block.py")
    assert [f["fix"] for f in json.loads(report.stdout)] == [None] and report.stderr == ""
    text = _cli(tmp_path, "block.py")
    assert text.stdout.splitlines()[-1] == "Found 1 finding."  # nothing "fixable"
    diff = _cli(tmp_path, "--diff", "--unsafe-fixes", "block.py")
    assert (diff.returncode, diff.stdout) == (0, "")
    assert diff.stderr.startswith(DROPPED) and "it would add a finding (IPL00" in diff.stderr
    assert (tmp_path / "block.py").read_text() == UNVERIFIABLE


@in_module_loop
async def test_a_fix_that_fails_verification_is_no_quick_fix(
    server: Client, tmp_path: Path
) -> None:
    uri = (tmp_path / "block.py").as_uri()
    diagnostics = await _diagnostics(server, uri, 1, _open(server, uri, UNVERIFIABLE))
    (target,) = diagnostics
    assert not (isinstance(target.data, dict) and "fix" in target.data)
    actions = await server.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=target.range,
            context=types.CodeActionContext(diagnostics=[target]),
        )
    )
    assert [a.title for a in actions or []] == ["Add `# noqa: IPL007`"]


def test_verification_names_why_a_fix_is_dropped() -> None:
    """The reasons, on fixes built to fail each check (the engine's own never do)."""
    source = _backward(WRITES[1])
    (finding,) = lint_source(source, "scale.py")
    assert finding.fix is not None
    (edit,) = finding.fix.edits
    broken = {
        NO_PARSE: (replace(edit, text="grad_output = (\n        "),),
        STILL_THERE: (replace(edit, text="pass\n        "),),
        NO_CHANGE: (replace(edit, text=""),),
        NO_PLACE: (
            replace(edit, start=replace(edit.start, line=99), end=replace(edit.end, line=99)),
        ),
    }
    for reason, edits in broken.items():
        bad = replace(finding, fix=replace(finding.fix, edits=edits))
        kept, dropped = verified(source, "scale.py", [bad])
        assert [f.fix for f in kept] == [None], reason
        assert [d.reason for d in dropped] == [reason]
    kept, dropped = verified(source, "scale.py", [finding])
    assert kept == [finding] and dropped == []


def test_fix_in_a_machine_format_counts_the_unsafe_fixes_it_held_back(tmp_path: Path) -> None:
    stale = "import torch\na = torch.randn(4, requires_grad=True)\nh = torch.sigmoid(a)\n"
    stale += "keep = h\nh.mul_(2)\n(keep + h).sum().backward()\n"
    (tmp_path / "stale.py").write_text(stale)
    (tmp_path / "scale.py").write_text(_backward(WRITES[0]))
    fixed = _cli(tmp_path, "--fix", "--format", "json", ".")
    assert (
        fixed.stderr
        == "inplace-lint: fixed 1 finding(s) in 1 file(s) (1 more with --unsafe-fixes)\n"
    )
    (left,) = json.loads(fixed.stdout)
    assert left["path"].endswith("stale.py") and left["fix"]["safe"] is False


def test_the_clone_fix_reads_a_clone_on_the_right_as_in_timm_fasternet() -> None:
    """timm's FasterNet writes a conv's output into the slice the conv read: a clone before
    the write alone keeps the finding (the conv saved a view of the clone), which is why
    9f9bf88's fix was dropped; the fix now also reads a clone of ``x`` on the right-hand
    side, which verifies, and the fixed program runs where torch refuses the original."""
    source = textwrap.dedent(
        """\
        import torch
        from torch import nn


        class PartialConv(nn.Module):
            def __init__(self, dim: int) -> None:
                super().__init__()
                self.dim = dim // 4
                self.conv = nn.Conv2d(self.dim, self.dim, 3, 1, 1, bias=False)

            def forward(self, x: torch.Tensor) -> torch.Tensor:
                x = x.clone()
                x[:, : self.dim, :, :] = self.conv(x[:, : self.dim, :, :])
                return x


        x = torch.randn(1, 8, 4, 4, requires_grad=True)
        PartialConv(8)(x).sum().backward()
        """
    )
    (finding,) = lint_source(source, "fasternet.py")
    assert finding.fix is not None and "read a clone" in finding.fix.description
    kept, dropped = verified(source, "fasternet.py", [finding])
    assert kept[0].fix is not None and dropped == []
    fixed = fix_text(source, "fasternet.py", unsafe=True).after
    assert "self.conv(x[:, : self.dim, :, :].clone())" in fixed
    torch = pytest.importorskip("torch")
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        exec(compile(source, "fasternet.py", "exec"), {"__name__": "__main__", "torch": torch})
    exec(compile(fixed, "fasternet.py", "exec"), {"__name__": "__main__", "torch": torch})


#: Two fixes on one function, each verified by itself: the IPL003 clone of the argument once
#: needed the IPL007 rewrite first, because the engine took the ``.data`` write it leaves for a
#: write that torch refuses on a leaf (it does not: ``.data`` writes to leaves are allowed);
#: ``--fix`` applies both. A fix that does not verify by itself is dropped (``fasternet``
#: above).
ONE_AFTER_THE_OTHER = textwrap.dedent(
    """\
    import torch
    from torch import nn


    class Block(nn.Module):
        def forward(self, t):
            t.data.relu_()
            t[0] = 0.0
            v = t.t()
            return t


    w = torch.randn(4, 4, requires_grad=True)
    out = Block()(w)
    """
)


def test_only_fixes_that_verify_by_themselves_are_offered() -> None:
    found = lint_source(ONE_AFTER_THE_OTHER, "block.py")
    assert [(f.code, f.fix is not None) for f in found] == [("IPL007", True), ("IPL003", True)]
    offered, dropped = verified(ONE_AFTER_THE_OTHER, "block.py", found)
    assert [(f.code, f.fix is not None) for f in offered] == [("IPL007", True), ("IPL003", True)]
    assert dropped == []
    result = fix_text(ONE_AFTER_THE_OTHER, "block.py", unsafe=True)
    assert [f.line for f in result.applied] == [7, 8]  # the `.data` write, then `t[0] = 0.0`
    assert result.remaining == [] and "        t = t.clone()\n" in result.after


@in_module_loop
async def test_the_editor_offers_a_quick_fix_only_if_it_verifies_by_itself(
    server: Client, tmp_path: Path
) -> None:
    uri = (tmp_path / "block.py").as_uri()
    diagnostics = await _diagnostics(server, uri, 1, _open(server, uri, ONE_AFTER_THE_OTHER))
    titles = {}
    for diagnostic in diagnostics:
        actions = await server.text_document_code_action_async(
            types.CodeActionParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                range=diagnostic.range,
                context=types.CodeActionContext(diagnostics=[diagnostic]),
            )
        )
        titles[str(diagnostic.code)] = [a.title for a in actions or []]
    assert titles == {
        "IPL007": [
            "Fix IPL007: Write `t = t.relu(...)` so autograd sees it",
            "Add `# noqa: IPL007`",
        ],
        "IPL003": [
            "Fix IPL003: Clone argument `t` at the top of `forward()`",
            "Add `# noqa: IPL003`",
        ],
    }


def test_the_language_server_checks_again_only_the_fixes_of_an_edited_block() -> None:
    """Verdicts are kept per top-level block: an edit inside one function re-verifies that
    function's fix (one analysis of the fixed text), an edit elsewhere none."""
    from inplace_lint.lsp.fixes import FixVerdicts

    head = "import torch\n\n\n"
    body = "def {name}(a):\n    h = torch.sigmoid(a)\n    h.mul_(2)\n    return h\n\n\n"
    tail = "a = torch.randn(3, requires_grad=True)\n(first(a) + second(a)).sum().backward()\n"
    text = head + body.format(name="first") + body.format(name="second") + tail + "x = 1\n"
    analysed: list[str] = []

    def lint(source: str) -> list:
        analysed.append(source)
        return lint_source(source, "m.py")

    verdicts = FixVerdicts()
    found = lint_source(text, "m.py")
    assert [f.fix is not None for f in verdicts.publishable(text, "m.py", found, lint)] == [
        True,
        True,
    ]
    assert len(analysed) == 1  # both fixes together
    edited = text.replace("def second(a):\n", "def second(a):\n    # tuned\n")
    found = lint_source(edited, "m.py")
    assert all(f.fix for f in verdicts.publishable(edited, "m.py", found, lint))
    assert len(analysed) == 2  # the second function's fix only
    moved = edited.replace("x = 1\n", "x = 2\n")
    verdicts.publishable(moved, "m.py", lint_source(moved, "m.py"), lint)
    assert len(analysed) == 2
