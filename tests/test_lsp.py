"""The language server, end to end: a real client (pytest-lsp) drives ``inplace-lint lsp``.

Most tests share one server process per module (each opens its own documents, under its own
folder, and closes them afterwards); the tests that need other client capabilities or
initialization options start their own.
"""

from __future__ import annotations

import asyncio
import os
import sys
import textwrap
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pygls")
pytest_lsp = pytest.importorskip("pytest_lsp")

from lsprotocol import types  # noqa: E402
from pygls.protocol import default_converter  # noqa: E402
from pytest_lsp import ClientServerConfig, LanguageClient  # noqa: E402
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES  # noqa: E402

from inplace_lint import catalogue  # noqa: E402
from inplace_lint.finding import Finding, Fix, Position  # noqa: E402
from inplace_lint.lsp.hover import HOVER_LIMIT, hover_markdown  # noqa: E402

#: every test runs on the module's event loop, where the shared server's client lives
in_module_loop = pytest.mark.asyncio(loop_scope="module")

ROOT = Path(__file__).resolve().parent.parent
TIMEOUT = 30.0

MODEL = textwrap.dedent(
    """\
    import torch
    from torch import nn


    class Gate(nn.Module):
        def __init__(self, dim):
            super().__init__()
            self.proj = nn.Linear(dim, dim)

        def forward(self, x, mask):
            attn = torch.softmax(self.proj(x), dim=-1)
            attn.masked_fill_(mask, 0.0)
            gate = torch.sigmoid(self.proj(x))
            gate.mul_(2)
            return attn * gate
    """
)
#: 0-based (line, start, end) of the two IPL001 writes in MODEL.
MASKED_FILL = (11, 8, 36)
GATE_MUL = (13, 8, 20)


class Client(LanguageClient):
    """pytest-lsp's client, also keeping every publishDiagnostics and registration."""

    published: list[types.PublishDiagnosticsParams]
    #: when each of ``published`` arrived (``time.monotonic()``)
    arrivals: list[float]
    registrations: list[types.Registration]
    #: documents opened and not yet closed
    opened: set[str]


def _make_client() -> Client:
    client = Client(converter_factory=default_converter)
    client.published = []
    client.arrivals = []
    client.registrations = []
    client.opened = set()
    for method, handler in DEFAULT_CLIENT_FEATURES.items():
        if method != types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS:
            client.feature(method)(handler)

    @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def _publish(ls: Client, params: types.PublishDiagnosticsParams) -> None:
        ls.arrivals.append(time.monotonic())
        ls.published.append(params)
        ls.diagnostics[params.uri] = params.diagnostics

    @client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def _register(ls: Client, params: types.RegistrationParams) -> None:
        ls.registrations.extend(params.registrations)

    return client


CONFIG = ClientServerConfig(
    server_command=[sys.executable, "-m", "inplace_lint", "lsp"],
    client_factory=_make_client,
    server_env={**os.environ, "PYTHONPATH": str(ROOT)},
)


def _init_params(root: Path, client: str = "neovim@v0.10.0") -> types.InitializeParams:
    return types.InitializeParams(
        capabilities=pytest_lsp.client_capabilities(client),
        root_uri=root.as_uri(),
        workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name="project")],
    )


@pytest_lsp.fixture(config=CONFIG, scope="module")
async def shared_server(lsp_client: Client, tmp_path_factory: pytest.TempPathFactory):
    await lsp_client.initialize_session(_init_params(tmp_path_factory.mktemp("workspace")))
    yield
    await lsp_client.shutdown_session()


@pytest.fixture
def client(shared_server: Client) -> Iterator[Client]:
    """The module's server; the documents a test opened are closed after it."""
    yield shared_server
    for uri in sorted(shared_server.opened):
        shared_server.text_document_did_close(
            types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri=uri))
        )
    shared_server.opened.clear()


@pytest_lsp.fixture(config=CONFIG, loop_scope="module")
async def vscode(lsp_client: Client, tmp_path: Path):
    await lsp_client.initialize_session(_init_params(tmp_path, "visual-studio-code"))
    yield
    await lsp_client.shutdown_session()


async def _until(condition: Callable[[], Any], what: str) -> Any:
    """Wait until ``condition()`` is truthy and return it."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + TIMEOUT
    while loop.time() < deadline:
        value = condition()
        if value:
            return value
        await asyncio.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


async def _diagnostics(
    client: Client, uri: str, version: int | None = None, after: int = 0
) -> list[types.Diagnostic]:
    """The first diagnostics published for ``uri`` (at ``version``) after ``after`` messages."""

    def found() -> types.PublishDiagnosticsParams | None:
        for params in client.published[after:]:
            if params.uri == uri and (version is None or params.version == version):
                return params
        return None

    params = await _until(found, f"diagnostics for {uri} v{version}")
    return list(params.diagnostics)


def _open(client: Client, uri: str, text: str, version: int = 1, language: str = "python") -> int:
    mark = len(client.published)
    client.opened.add(uri)
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            types.TextDocumentItem(uri=uri, language_id=language, version=version, text=text)
        )
    )
    return mark


def _arrival(client: Client, uri: str, version: int) -> float:
    """When the diagnostics for ``uri`` at ``version`` arrived."""
    for params, arrived in zip(client.published, client.arrivals, strict=True):
        if params.uri == uri and params.version == version:
            return arrived
    raise AssertionError(f"no diagnostics for {uri} v{version}")


def _edit(client: Client, uri: str, version: int, edits: list[types.TextEdit]) -> int:
    """Send ``edits`` (ranges in the current text) as incremental changes, as an editor does.

    Changes apply one after another, so they go last first: earlier positions stay valid.
    """
    mark = len(client.published)
    ordered = sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character))
    changes: list[types.TextDocumentContentChangeEvent] = [
        types.TextDocumentContentChangePartial(range=e.range, text=e.new_text)
        for e in reversed(ordered)
    ]
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=changes,
        )
    )
    return mark


def _replace(line: int, start: int, end: int, text: str) -> types.TextEdit:
    where = types.Range(types.Position(line, start), types.Position(line, end))
    return types.TextEdit(range=where, new_text=text)


def _spans(diagnostics: list[types.Diagnostic]) -> list[tuple[str, int, int, int]]:
    return [
        (str(d.code), d.range.start.line, d.range.start.character, d.range.end.character)
        for d in diagnostics
    ]


def _index(line: str, units: int) -> int:
    """The string index of a UTF-16 column."""
    count = 0
    for index, char in enumerate(line):
        if count >= units:
            return index
        count += 2 if ord(char) > 0xFFFF else 1
    return len(line)


def _apply(text: str, edits: list[types.TextEdit]) -> str:
    """Apply LSP edits (ranges in the original text, UTF-16 columns) as an editor does."""
    lines = text.split("\n")
    for edit in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character))[::-1]:
        start, end = edit.range.start, edit.range.end
        head = lines[start.line][: _index(lines[start.line], start.character)]
        tail = lines[end.line][_index(lines[end.line], end.character) :]
        lines[start.line : end.line + 1] = (head + edit.new_text + tail).split("\n")
    return "\n".join(lines)


@in_module_loop
async def test_open_publishes_diagnostics_from_the_buffer(client: Client, tmp_path: Path):
    uri = (tmp_path / "gate.py").as_uri()  # never written to disk: the buffer is linted
    diagnostics = await _diagnostics(client, uri, 1, _open(client, uri, MODEL))
    assert _spans(diagnostics) == [("IPL001", *MASKED_FILL), ("IPL001", *GATE_MUL)]
    first = diagnostics[0]
    assert first.source == "inplace-lint"
    assert first.severity == types.DiagnosticSeverity.Error  # catalogue.severity("IPL001")
    assert first.code_description is not None
    assert first.code_description.href == catalogue.url("IPL001")
    assert "masked_fill_" in first.message
    assert first.related_information is not None
    related = first.related_information[0]
    assert related.location.uri == uri
    assert related.location.range.start == types.Position(10, 15)  # torch.softmax(...)
    assert "saved for backward" in related.message


@in_module_loop
async def test_untitled_buffers_and_other_languages(client: Client, tmp_path: Path):
    untitled = "untitled:Untitled-1"
    assert len(await _diagnostics(client, untitled, 1, _open(client, untitled, MODEL))) == 2
    notes = (tmp_path / "notes.md").as_uri()
    mark = _open(client, notes, MODEL, language="markdown")
    hover = await client.text_document_hover_async(
        types.HoverParams(types.TextDocumentIdentifier(uri=notes), types.Position(11, 9))
    )
    assert hover is None
    # a Python document opened after it is linted after it: once its diagnostics are in, the
    # server has long decided about the Markdown one
    after = (tmp_path / "after.py").as_uri()
    assert len(await _diagnostics(client, after, 1, _open(client, after, MODEL))) == 2
    assert not [p for p in client.published[mark:] if p.uri == notes]


@in_module_loop
async def test_edits_update_diagnostics_and_close_clears_them(client: Client, tmp_path: Path):
    uri = (tmp_path / "gate.py").as_uri()
    await _diagnostics(client, uri, 1, _open(client, uri, MODEL))
    # masked_fill_ -> out of place: only the gate hazard is left
    line, start, end = MASKED_FILL
    fixed = _replace(line, start, end, "attn = attn.masked_fill(mask, 0.0)")
    diagnostics = await _diagnostics(client, uri, 2, _edit(client, uri, 2, [fixed]))
    assert _spans(diagnostics) == [("IPL001", *GATE_MUL)]
    # a new hazard two lines above, and the gate fixed too
    line, start, end = GATE_MUL
    edits = [
        _replace(line, start, end, "gate = gate * 2"),
        _replace(9, 31, 31, "\n        x = torch.tanh(self.proj(x))\n        x.add_(1)"),
    ]
    diagnostics = await _diagnostics(client, uri, 3, _edit(client, uri, 3, edits))
    assert _spans(diagnostics) == [("IPL001", 11, 8, 17)]
    assert "`x.add_()`" in diagnostics[0].message
    mark = len(client.published)
    client.text_document_did_close(
        types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri=uri))
    )
    assert await _diagnostics(client, uri, None, mark) == []


@in_module_loop
async def test_rapid_edits_publish_only_the_latest_text(client: Client, tmp_path: Path):
    uri = (tmp_path / "gate.py").as_uri()
    await _diagnostics(client, uri, 1, _open(client, uri, MODEL))
    mark = len(client.published)
    line, start, end = MASKED_FILL
    for version, text in enumerate(["attn.mul_(2)", "attn.add_(1)", "attn = attn + 1"], 2):
        _edit(client, uri, version, [_replace(line, start, end, text)])
        end = start + len(text)
    diagnostics = await _diagnostics(client, uri, 4, mark)
    assert _spans(diagnostics) == [("IPL001", *GATE_MUL)]
    # the first edit of the burst is linted at once (leading edge) and may be published if
    # that lint ends before the next edit is read; the middle one never is, the last one is
    versions = [p.version for p in client.published[mark:] if p.uri == uri]
    assert versions[-1] == 4
    assert set(versions) <= {2, 4}


@in_module_loop
async def test_noqa_code_action_silences_the_finding(client: Client, tmp_path: Path):
    uri = (tmp_path / "gate.py").as_uri()
    text = MODEL.replace("gate.mul_(2)", "gate.mul_(2)  # noqa: IPL002")
    diagnostics = await _diagnostics(client, uri, 1, _open(client, uri, text))
    assert [d.code for d in diagnostics] == ["IPL001", "IPL001"]
    version = 1
    for target in diagnostics:
        actions = await client.text_document_code_action_async(
            types.CodeActionParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                range=target.range,
                context=types.CodeActionContext(diagnostics=[target]),
            )
        )
        assert actions is not None
        (action,) = [a for a in actions if a.title == "Add `# noqa: IPL001`"]
        assert isinstance(action, types.CodeAction)
        assert action.kind == types.CodeActionKind.QuickFix
        assert action.edit is not None and action.edit.changes is not None
        edits = list(action.edit.changes[uri])
        text = _apply(text, edits)
        version += 1
        remaining = await _diagnostics(client, uri, version, _edit(client, uri, version, edits))
        assert target.range not in [d.range for d in remaining]
    assert remaining == []
    assert "attn.masked_fill_(mask, 0.0)  # noqa: IPL001\n" in text
    assert "gate.mul_(2)  # noqa: IPL002,IPL001\n" in text  # appended to the existing list


@in_module_loop
async def test_fix_code_action_rewrites_the_hazard(client: Client, tmp_path: Path):
    uri = (tmp_path / "gate.py").as_uri()
    text = MODEL.replace(
        "attn.masked_fill_(mask, 0.0)", 'note = "😀"; attn.masked_fill_(mask, 0.0)'
    )
    diagnostics = await _diagnostics(client, uri, 1, _open(client, uri, text))
    target = diagnostics[0]
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=target.range,
            context=types.CodeActionContext(diagnostics=[target]),
        )
    )
    assert actions is not None
    fixes = [a for a in actions if isinstance(a, types.CodeAction) and a.title.startswith("Fix")]
    (fix,) = fixes
    assert fix.is_preferred and list(fix.diagnostics or ()) == [target]
    assert fix.edit is not None and fix.edit.changes is not None
    edits = list(fix.edit.changes[uri])
    # the diagnostic's data carries the same edits, for clients that resolve from it
    assert isinstance(target.data, dict)
    assert [e["newText"] for e in target.data["fix"]["edits"]] == [e.new_text for e in edits]
    text = _apply(text, edits)
    assert 'note = "😀"; attn = attn.masked_fill(mask, 0.0)\n' in text
    remaining = await _diagnostics(client, uri, 2, _edit(client, uri, 2, edits))
    assert _spans(remaining) == [("IPL001", *GATE_MUL)]


@in_module_loop
async def test_code_actions_for_a_range_without_context(client: Client, tmp_path: Path):
    uri = (tmp_path / "gate.py").as_uri()
    await _diagnostics(client, uri, 1, _open(client, uri, MODEL))
    line = GATE_MUL[0]
    cursor = types.Range(types.Position(line, 10), types.Position(line, 10))
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=cursor,
            context=types.CodeActionContext(diagnostics=[]),
        )
    )
    assert actions is not None
    assert [a.title for a in actions] == [
        "Fix IPL001: Replace `gate.mul_(...)` with `gate = gate.mul(...)`",
        "Add `# noqa: IPL001`",
    ]
    refactors = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=cursor,
            context=types.CodeActionContext(diagnostics=[], only=[types.CodeActionKind.Refactor]),
        )
    )
    assert not refactors


@in_module_loop
async def test_hover_shows_the_finding_and_the_rules_summary(client: Client, tmp_path: Path):
    uri = (tmp_path / "gate.py").as_uri()
    await _diagnostics(client, uri, 1, _open(client, uri, MODEL))
    line, start, end = MASKED_FILL
    hover = await client.text_document_hover_async(
        types.HoverParams(types.TextDocumentIdentifier(uri=uri), types.Position(line, start + 3))
    )
    assert hover is not None
    assert isinstance(hover.contents, types.MarkupContent)
    assert hover.contents.kind == types.MarkupKind.Markdown
    value = hover.contents.value
    assert value.startswith("**IPL001** (saved-for-backward): `attn.masked_fill_()`")
    # the page's opening paragraph and a link to the whole page, not the page itself
    assert catalogue.description("IPL001") in value
    assert f"[IPL001 saved-for-backward: the full rule page]({catalogue.url('IPL001')})" in value
    assert (
        "Quick fix: Replace `attn.masked_fill_(...)` with `attn = attn.masked_fill(...)`" in value
    )
    page = catalogue.page("IPL001")
    assert page is not None and len(page) > 4 * len(value)
    assert len(value) <= HOVER_LIMIT and "## Examples" not in value
    assert hover.range == types.Range(types.Position(line, start), types.Position(line, end))
    nothing = await client.text_document_hover_async(
        types.HoverParams(types.TextDocumentIdentifier(uri=uri), types.Position(0, 2))
    )
    assert nothing is None


def test_the_hover_stays_bounded_however_long_or_many_the_findings() -> None:
    at = Position(3, 5)
    long = Finding("m.py", at, at, "IPL002", "`x` " + "is read again " * 2000)
    text = hover_markdown([long])
    assert len(text) <= HOVER_LIMIT
    assert text.startswith("**IPL002** (stale-read): `x` is read again")
    assert "…" in text and catalogue.url("IPL002") in text  # the message is cut, not the link
    unsafe = Fix("Replace `x.relu_()` with `x = x.relu()`", (), safe=False)
    many = [Finding("m.py", at, at, "IPL001", f"finding {n}", fix=unsafe) for n in range(40)]
    text = hover_markdown(many)
    assert len(text) <= HOVER_LIMIT
    assert text.startswith("**IPL001** (saved-for-backward): finding 0")
    assert "Unsafe quick fix (it can change what other code sees)" in text
    shown = text.count("**IPL001**")
    assert 1 <= shown < 40 and text.endswith(f"*{40 - shown} more findings here*")


@in_module_loop
async def test_broken_document_gets_one_ipl999_and_the_server_keeps_serving(
    client: Client, tmp_path: Path
):
    uri = (tmp_path / "broken.py").as_uri()
    broken = MODEL.replace("def forward(self, x, mask):", "def forward(self, x, mask:")
    diagnostics = await _diagnostics(client, uri, 1, _open(client, uri, broken))
    assert len(diagnostics) == 1
    (problem,) = diagnostics
    assert problem.code == "IPL999"
    assert problem.severity == types.DiagnosticSeverity.Error
    assert problem.range.start == types.Position(9, 15)  # the unclosed "("
    assert "cannot parse" in problem.message
    hover = await client.text_document_hover_async(
        types.HoverParams(types.TextDocumentIdentifier(uri=uri), types.Position(9, 20))
    )
    assert hover is not None and isinstance(hover.contents, types.MarkupContent)
    assert hover.contents.value.startswith("**IPL999** (cannot-parse): cannot parse")
    assert catalogue.url("IPL999") in hover.contents.value
    # fix the typo: back to the two real findings
    mark = _edit(client, uri, 2, [_replace(9, 29, 30, "):")])
    diagnostics = await _diagnostics(client, uri, 2, mark)
    assert _spans(diagnostics) == [("IPL001", *MASKED_FILL), ("IPL001", *GATE_MUL)]


@in_module_loop
async def test_columns_are_utf16_code_units(client: Client, tmp_path: Path):
    uri = (tmp_path / "emoji.py").as_uri()
    text = MODEL.replace(
        "attn.masked_fill_(mask, 0.0)", 'note = "😀"; attn.masked_fill_(mask, 0.0)'
    )
    diagnostics = await _diagnostics(client, uri, 1, _open(client, uri, text))
    # "😀" is one code point but two UTF-16 code units
    assert _spans(diagnostics)[0] == ("IPL001", 11, 21, 49)


@in_module_loop
async def test_workspace_config_is_honoured_and_reloaded(client: Client, tmp_path: Path):
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text('[tool.inplace-lint]\nignore = ["IPL001"]\n', encoding="utf-8")
    uri = (tmp_path / "gate.py").as_uri()
    assert await _diagnostics(client, uri, 1, _open(client, uri, MODEL)) == []

    mark = len(client.published)
    pyproject.write_text("[tool.inplace-lint]\n", encoding="utf-8")
    client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            changes=[types.FileEvent(uri=pyproject.as_uri(), type=types.FileChangeType.Changed)]
        )
    )
    assert len(await _diagnostics(client, uri, 1, mark)) == 2

    # per-file-ignores, picked up when pyproject.toml is saved in the editor
    mark = len(client.published)
    pyproject.write_text(
        '[tool.inplace-lint.per-file-ignores]\n"gate.py" = ["IPL00"]\n', encoding="utf-8"
    )
    client.text_document_did_save(
        types.DidSaveTextDocumentParams(types.TextDocumentIdentifier(uri=pyproject.as_uri()))
    )
    assert await _diagnostics(client, uri, 1, mark) == []
    other = (tmp_path / "other.py").as_uri()
    assert len(await _diagnostics(client, other, 1, _open(client, other, MODEL))) == 2

    # excluded folders are not linted
    vendored = (tmp_path / "build" / "gate.py").as_uri()
    assert await _diagnostics(client, vendored, 1, _open(client, vendored, MODEL)) == []


GATED = """import torch


def gated(h, w):
    y = torch.sigmoid(h @ w)
    y.mul_(2)
    return y
"""


@in_module_loop
async def test_assume_grad_in_the_config_reaches_the_editor(client: Client, tmp_path: Path):
    """``assume-grad = true`` gives the editor the command line's opt-in findings."""
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text("[tool.inplace-lint]\nassume-grad = true\n", encoding="utf-8")
    uri = (tmp_path / "gated.py").as_uri()
    diagnostics = await _diagnostics(client, uri, 1, _open(client, uri, GATED))
    assert [d.code for d in diagnostics] == ["IPL001"]
    assert diagnostics[0].message.endswith("no caller in this run shows whether it does)")


@in_module_loop
async def test_broken_config_falls_back_to_defaults_with_a_message(client: Client, tmp_path: Path):
    (tmp_path / "pyproject.toml").write_text(
        '[tool.inplace-lint]\nselect = ["NOPE1"]\n', encoding="utf-8"
    )
    uri = (tmp_path / "gate.py").as_uri()
    assert len(await _diagnostics(client, uri, 1, _open(client, uri, MODEL))) == 2
    message = await _until(
        lambda: [m for m in client.messages if "NOPE1" in m.message], "a config warning"
    )
    assert message[0].type == types.MessageType.Warning


@in_module_loop
async def test_save_relints_and_watches_pyproject(vscode: Client, tmp_path: Path):
    await _until(lambda: vscode.registrations, "a file-watch registration")
    (registration,) = vscode.registrations
    assert registration.method == types.WORKSPACE_DID_CHANGE_WATCHED_FILES
    uri = (tmp_path / "gate.py").as_uri()
    await _diagnostics(vscode, uri, 1, _open(vscode, uri, MODEL))
    mark = len(vscode.published)
    vscode.text_document_did_save(
        types.DidSaveTextDocumentParams(types.TextDocumentIdentifier(uri=uri))
    )
    assert len(await _diagnostics(vscode, uri, 1, mark)) == 2


@in_module_loop
async def test_bad_requests_get_errors_and_the_server_keeps_answering(
    client: Client, tmp_path: Path
):
    from pygls.exceptions import JsonRpcException

    uri = (tmp_path / "gate.py").as_uri()
    await _diagnostics(client, uri, 1, _open(client, uri, MODEL))
    with pytest.raises(JsonRpcException) as info:
        await client.protocol.send_request_async("inplace-lint/no-such-method", {})
    assert info.value.code == -32601
    # hover on a document that was never opened, and at a line far past the end
    ghost = (tmp_path / "ghost.py").as_uri()
    assert (
        await client.text_document_hover_async(
            types.HoverParams(types.TextDocumentIdentifier(uri=ghost), types.Position(3, 0))
        )
        is None
    )
    assert (
        await client.text_document_hover_async(
            types.HoverParams(types.TextDocumentIdentifier(uri=uri), types.Position(999, 0))
        )
        is None
    )
    line, start, _ = MASKED_FILL
    hover = await client.text_document_hover_async(
        types.HoverParams(types.TextDocumentIdentifier(uri=uri), types.Position(line, start))
    )
    assert hover is not None


#: The debounce window the ``slow_debounce`` server is given, in seconds.
WINDOW = 2.0


@pytest_lsp.fixture(config=CONFIG, loop_scope="module")
async def slow_debounce(lsp_client: Client, tmp_path: Path):
    params = _init_params(tmp_path)
    params.initialization_options = {"debounceMs": WINDOW * 1000}
    await lsp_client.initialize_session(params)
    yield
    await lsp_client.shutdown_session()


@in_module_loop
async def test_an_edit_after_a_pause_is_linted_at_once_and_a_burst_waits(
    slow_debounce: Client, tmp_path: Path
):
    client = slow_debounce
    uri = (tmp_path / "gate.py").as_uri()
    await _diagnostics(client, uri, 1, _open(client, uri, MODEL))
    # the quiet spell: the open's lint began before its diagnostics arrived, so once a window
    # has passed since they arrived, more than a window has passed since that lint began
    quiet_from = _arrival(client, uri, 1) + WINDOW
    await asyncio.sleep(max(0.0, quiet_from - time.monotonic()) + 0.05)
    line, start, end = MASKED_FILL
    fixed = _replace(line, start, end, "attn = attn.masked_fill(mask, 0.0)")
    sent = time.monotonic()
    diagnostics = await _diagnostics(client, uri, 2, _edit(client, uri, 2, [fixed]))
    assert _spans(diagnostics) == [("IPL001", *GATE_MUL)]
    # a debounced lint cannot be published before a window has passed: this one was not
    leading = _arrival(client, uri, 2) - sent
    assert leading < WINDOW, f"the edit after a pause waited {leading:.2f} s"

    # the next edit comes within a window of that lint's start: it waits for the window
    line, start, end = GATE_MUL
    burst = time.monotonic()
    assert burst - sent < WINDOW, "too slow to test the burst: the window had passed"
    edit = _replace(line, start, end, "gate = gate * 2")
    assert await _diagnostics(client, uri, 3, _edit(client, uri, 3, [edit])) == []
    trailing = _arrival(client, uri, 3) - burst
    assert trailing >= WINDOW, f"the edit in a burst was linted after {trailing:.2f} s"
    assert [p.version for p in client.published if p.uri == uri] == [1, 2, 3]
