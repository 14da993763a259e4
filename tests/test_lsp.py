"""The language server, end to end: a real client (pytest-lsp) drives ``inplace-lint lsp``."""

from __future__ import annotations

import asyncio
import os
import sys
import textwrap
from collections.abc import Callable
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
    registrations: list[types.Registration]


def _make_client() -> Client:
    client = Client(converter_factory=default_converter)
    client.published = []
    client.registrations = []
    for method, handler in DEFAULT_CLIENT_FEATURES.items():
        if method != types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS:
            client.feature(method)(handler)

    @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def _publish(ls: Client, params: types.PublishDiagnosticsParams) -> None:
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


@pytest_lsp.fixture(config=CONFIG)
async def client(lsp_client: Client, tmp_path: Path):
    await lsp_client.initialize_session(_init_params(tmp_path))
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=CONFIG)
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


def _open(client: Client, uri: str, text: str, version: int = 1) -> int:
    mark = len(client.published)
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            types.TextDocumentItem(uri=uri, language_id="python", version=version, text=text)
        )
    )
    return mark


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


@pytest.mark.asyncio
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


@pytest.mark.asyncio
async def test_untitled_buffers_and_other_languages(client: Client, tmp_path: Path):
    untitled = "untitled:Untitled-1"
    assert len(await _diagnostics(client, untitled, 1, _open(client, untitled, MODEL))) == 2
    notes = (tmp_path / "notes.md").as_uri()
    mark = len(client.published)
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            types.TextDocumentItem(uri=notes, language_id="markdown", version=1, text=MODEL)
        )
    )
    hover = await client.text_document_hover_async(
        types.HoverParams(types.TextDocumentIdentifier(uri=notes), types.Position(11, 9))
    )
    assert hover is None
    assert not [p for p in client.published[mark:] if p.uri == notes]


@pytest.mark.asyncio
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


@pytest.mark.asyncio
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


@pytest.mark.asyncio
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


@pytest.mark.asyncio
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


@pytest.mark.asyncio
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


@pytest.mark.asyncio
async def test_hover_shows_the_rule_page(client: Client, tmp_path: Path):
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
    page = catalogue.page("IPL001")
    assert page is not None
    assert value.startswith("**IPL001** (saved-for-backward): `attn.masked_fill_()`")
    assert catalogue.url("IPL001") in value
    assert page.strip().splitlines()[0] in value
    assert hover.range == types.Range(types.Position(line, start), types.Position(line, end))
    nothing = await client.text_document_hover_async(
        types.HoverParams(types.TextDocumentIdentifier(uri=uri), types.Position(0, 2))
    )
    assert nothing is None


@pytest.mark.asyncio
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
    assert hover is not None and "IPL999" in str(hover.contents)
    # fix the typo: back to the two real findings
    mark = _edit(client, uri, 2, [_replace(9, 29, 30, "):")])
    diagnostics = await _diagnostics(client, uri, 2, mark)
    assert _spans(diagnostics) == [("IPL001", *MASKED_FILL), ("IPL001", *GATE_MUL)]


@pytest.mark.asyncio
async def test_columns_are_utf16_code_units(client: Client, tmp_path: Path):
    uri = (tmp_path / "emoji.py").as_uri()
    text = MODEL.replace(
        "attn.masked_fill_(mask, 0.0)", 'note = "😀"; attn.masked_fill_(mask, 0.0)'
    )
    diagnostics = await _diagnostics(client, uri, 1, _open(client, uri, text))
    # "😀" is one code point but two UTF-16 code units
    assert _spans(diagnostics)[0] == ("IPL001", 11, 21, 49)


@pytest.mark.asyncio
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


@pytest.mark.asyncio
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


@pytest.mark.asyncio
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


@pytest.mark.asyncio
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


@pytest_lsp.fixture(config=CONFIG)
async def slow_debounce(lsp_client: Client, tmp_path: Path):
    params = _init_params(tmp_path)
    params.initialization_options = {"debounceMs": 2000}
    await lsp_client.initialize_session(params)
    yield
    await lsp_client.shutdown_session()


@pytest.mark.asyncio
async def test_an_edit_after_a_pause_is_linted_at_once_and_a_burst_waits(
    slow_debounce: Client, tmp_path: Path
):
    client = slow_debounce
    uri = (tmp_path / "gate.py").as_uri()
    await _diagnostics(client, uri, 1, _open(client, uri, MODEL))
    await asyncio.sleep(2.1)  # a quiet spell longer than the debounce
    loop = asyncio.get_running_loop()
    line, start, end = MASKED_FILL
    began = loop.time()
    fixed = _replace(line, start, end, "attn = attn.masked_fill(mask, 0.0)")
    diagnostics = await _diagnostics(client, uri, 2, _edit(client, uri, 2, [fixed]))
    leading = loop.time() - began
    assert _spans(diagnostics) == [("IPL001", *GATE_MUL)]
    # right after that lint began: the next edit waits for the typing to pause
    began = loop.time()
    line, start, end = GATE_MUL
    diagnostics = await _diagnostics(
        client, uri, 3, _edit(client, uri, 3, [_replace(line, start, end, "gate = gate * 2")])
    )
    trailing = loop.time() - began
    assert diagnostics == []
    assert leading < 1.5 <= trailing, (leading, trailing)
