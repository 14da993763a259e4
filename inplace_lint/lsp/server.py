"""The language server: diagnostics, quick fixes and rule summaries over stdio (pygls 2).

Documents are linted from the editor's buffer, never from disk, and never imported or run.
Linting happens on one worker thread, so the event loop keeps answering while a large file is
analysed; a change made while a lint runs supersedes it (only the newest text is published).
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from lsprotocol import converters, types
from pygls.exceptions import (
    JsonRpcException,
    JsonRpcInvalidParams,
    JsonRpcInvalidRequest,
    JsonRpcParseError,
)
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.uris import to_fs_path

from inplace_lint import __version__
from inplace_lint.autofix import Lint
from inplace_lint.checks import PARSE_ERROR
from inplace_lint.engine import MAX_BYTES, lint_source
from inplace_lint.finding import Finding, Position
from inplace_lint.lsp.actions import noqa_edit, split_lines
from inplace_lint.lsp.fixes import FixVerdicts
from inplace_lint.lsp.hover import hover_markdown
from inplace_lint.lsp.settings import ConfigCache
from inplace_lint.reparse import StatementReuse
from inplace_lint.report import lsp as report

#: The debounce window: an edit after a quiet spell this long is linted at once (leading
#: edge); edits that follow a lint sooner, or arrive while one is waiting or running, are
#: gathered into one lint this long after the last of them (trailing edge).
DEBOUNCE_SECONDS = 0.05
#: Stack for the lint thread: libcst's parser and the analysis recurse on deep code.
_LINT_STACK_BYTES = 64 * 1024 * 1024

log = logging.getLogger(__name__)
_converter = converters.get_converter()


@dataclass(frozen=True)
class Result:
    """The latest lint of one open document."""

    version: int | None
    findings: tuple[Finding, ...]
    diagnostics: tuple[dict[str, Any], ...]
    #: What was linted, so that an unchanged buffer (a save, an undo) is not linted again.
    text: str = ""
    codes: frozenset[str] | None = None
    assume_grad: bool = False


class _Answered:
    """Stands in for a message that was already answered with a JSON-RPC error."""


_ANSWERED = _Answered()


class Protocol(LanguageServerProtocol):
    """pygls's protocol, answering malformed requests with JSON-RPC errors.

    pygls logs a request whose params do not fit the method's type and never answers it;
    the client would wait forever. Here every request gets a response.
    """

    def structure_message(self, data: dict[str, Any]) -> Any:
        try:
            return super().structure_message(data)
        except JsonRpcException as exc:
            if "method" not in data:  # a bad notification or response: nothing to answer
                log.warning("dropping malformed message: %s", exc)
                return _ANSWERED
            if "id" in data:
                error = JsonRpcInvalidParams(f"invalid params for {data.get('method')!r}")
                self.send_error(_request_id(data), error)
            return _ANSWERED

    def handle_message(self, message: Any) -> None:
        if message is _ANSWERED:
            return
        if not hasattr(message, "jsonrpc") or message.jsonrpc != self.VERSION:
            ident = None
            if isinstance(message, dict):
                ident = _request_id(message)
            elif hasattr(message, "id"):
                ident = _request_id({"id": message.id})
            if not (hasattr(message, "method") and not hasattr(message, "id")):
                self.send_error(ident, JsonRpcInvalidRequest("not a JSON-RPC 2.0 request"))
            return
        super().handle_message(message)

    def send_error(self, ident: int | str | None, error: JsonRpcException) -> None:
        """A JSON-RPC error response; ``"id": null`` when the request's id is unknown."""
        payload = {"code": error.code, "message": error.message}
        self._send_data({"jsonrpc": self.VERSION, "id": ident, "error": payload})


def _request_id(data: dict[str, Any]) -> int | str | None:
    ident = data.get("id")
    return ident if isinstance(ident, int | str) and not isinstance(ident, bool) else None


class InplaceLintServer(LanguageServer):
    """pygls server plus the state of open documents."""

    protocol: Protocol

    def __init__(self, debounce: float = DEBOUNCE_SECONDS) -> None:
        super().__init__(
            "inplace-lint",
            __version__,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
            protocol_cls=Protocol,
        )
        self.debounce = debounce
        self.configs = ConfigCache()
        self.results: dict[str, Result] = {}
        #: per open document, the libcst statements of its last lint (used on the lint thread)
        self._reuse: dict[str, StatementReuse] = {}
        #: per open document, the parse reuse of the texts its fixes are verified on
        self._verify_reuse: dict[str, StatementReuse] = {}
        #: per open document, the verdicts on its fixes (lsp/fixes.py)
        self._verdicts: dict[str, FixVerdicts] = {}
        self._last_start: dict[str, float] = {}  # when each document's last lint began
        self._pending: dict[str, asyncio.Task[None]] = {}
        self._shown_errors: set[str] = set()
        self._lint_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="inplace-lint")
        previous = threading.stack_size(_LINT_STACK_BYTES)
        try:
            self._lint_pool.submit(lambda: None).result()  # start the thread with a big stack
        finally:
            threading.stack_size(previous)

    def shutdown(self) -> None:
        self._lint_pool.shutdown(wait=False, cancel_futures=True)
        super().shutdown()

    def report_server_error(self, error: Exception, source: Any) -> None:
        """Answer unparseable JSON with a parse error; log everything else, never pop up."""
        if isinstance(error, json.JSONDecodeError | UnicodeDecodeError):
            self.protocol.send_error(None, JsonRpcParseError(f"invalid JSON: {error}"))
            return
        log.error("%s", error)
        self.window_log_message(
            types.LogMessageParams(types.MessageType.Error, f"inplace-lint: {error}")
        )

    # -- documents ---------------------------------------------------------------------------

    def open_document(self, uri: str) -> Any | None:
        """The open buffer for ``uri``, or None (never a file read from disk)."""
        return self.workspace.text_documents.get(unquote(uri))

    def schedule(self, uri: str, delay: float) -> None:
        """Lint ``uri`` after ``delay`` seconds, replacing a lint already waiting for it."""
        pending = self._pending.pop(uri, None)
        if pending is not None:
            pending.cancel()
        self._pending[uri] = asyncio.ensure_future(self._lint_later(uri, delay))

    def schedule_edit(self, uri: str) -> None:
        """Lint ``uri`` after an edit: now after a quiet spell, else once typing pauses."""
        now = time.monotonic()
        quiet = now - self._last_start.get(uri, float("-inf")) >= self.debounce
        self.schedule(uri, 0 if quiet and uri not in self._pending else self.debounce)

    def forget(self, uri: str) -> None:
        """Stop linting a closed document and clear its diagnostics."""
        pending = self._pending.pop(uri, None)
        if pending is not None:
            pending.cancel()
        self.results.pop(uri, None)
        self._reuse.pop(uri, None)
        self._verify_reuse.pop(uri, None)
        self._verdicts.pop(uri, None)
        self._last_start.pop(uri, None)
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=[])
        )

    def relint_all(self) -> None:
        """Forget loaded configurations and lint every open document again."""
        self.configs.clear()
        self._shown_errors.clear()
        for uri in set(self.results) | set(self._pending):
            self.schedule(uri, 0)

    async def _lint_later(self, uri: str, delay: float) -> None:
        try:
            if delay > 0:
                await asyncio.sleep(delay)
            document = self.open_document(uri)
            if document is None or not _is_python(document):
                return
            version, text = document.version, document.source
            self._last_start[uri] = time.monotonic()
            path = _document_path(uri)
            loop = asyncio.get_running_loop()
            outcome = await loop.run_in_executor(
                self._lint_pool, self._lint, uri, version, text, path, self._encoding()
            )
        except asyncio.CancelledError:
            return
        except Exception as exc:  # an engine bug must not take the server down
            log.exception("linting %s failed", uri)
            self.window_log_message(
                types.LogMessageParams(types.MessageType.Error, f"inplace-lint: {uri}: {exc!r}")
            )
            return
        finally:
            if self._pending.get(uri) is asyncio.current_task():
                del self._pending[uri]
        current = self.open_document(uri)
        if current is None or current.version != version:
            return  # closed or edited meanwhile: a newer lint is on its way
        result, error = outcome
        if error is not None:
            self._config_problem(error)
        self.results[uri] = result
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(
                uri=uri,
                version=version,
                diagnostics=[_converter.structure(d, types.Diagnostic) for d in result.diagnostics],
            )
        )

    def _lint(
        self, uri: str, version: int | None, text: str, path: Path | None, encoding: str
    ) -> tuple[Result, str | None]:
        """Runs on the lint thread: settings, engine, conversion to diagnostics."""
        settings = self.configs.settings(path, self._root())
        findings: list[Finding] = []
        previous = self.results.get(uri)
        key = (text, settings.codes, settings.assume_grad)
        if previous is not None and (previous.text, previous.codes, previous.assume_grad) == key:
            findings = list(previous.findings)
        elif settings.codes is not None:
            display = str(path) if path is not None else uri
            problem = _unlintable(text)
            if problem is not None:
                line, message = problem
                where = Position(line, 1)
                findings = [Finding(display, where, where, PARSE_ERROR, message)]
            else:
                reuse = self._reuse.setdefault(uri, StatementReuse())
                assume = settings.assume_grad
                findings = lint_source(
                    text, display, settings.codes, reuse=reuse, assume_grad=assume
                )
                verdicts = self._verdicts.setdefault(uri, FixVerdicts())
                lint = self._verifier(uri, display, settings.codes, assume)
                findings = verdicts.publishable(text, display, findings, lint)
        lines = split_lines(text)
        diagnostics = tuple(report.to_diagnostic(f, uri, lines, encoding) for f in findings)
        result = Result(
            version, tuple(findings), diagnostics, text, settings.codes, settings.assume_grad
        )
        return result, settings.error

    def _verifier(
        self, uri: str, display: str, codes: frozenset[str], assume_grad: bool = False
    ) -> Lint:
        """Lints the texts that fixes of ``uri`` produce, reusing their unchanged statements."""
        reuse = self._verify_reuse.setdefault(uri, StatementReuse())
        return functools.partial(
            lint_source, path=display, codes=codes, reuse=reuse, assume_grad=assume_grad
        )

    def _fails_alone(self, uri: str, result: Result, finding: Finding) -> str:
        """Runs on the lint thread: why ``finding``'s fix, applied by itself as a quick fix
        applies it, fails verification ("" when it passes)."""
        verdicts = self._verdicts.setdefault(uri, FixVerdicts())
        lint = self._verifier(uri, finding.path, result.codes or frozenset(), result.assume_grad)
        return verdicts.fails_alone(result.text, result.findings, finding, lint)

    def _config_problem(self, message: str) -> None:
        self.window_log_message(types.LogMessageParams(types.MessageType.Warning, message))
        if message not in self._shown_errors:
            self._shown_errors.add(message)
            self.window_show_message(
                types.ShowMessageParams(
                    types.MessageType.Warning, f"inplace-lint: {message} (using the defaults)"
                )
            )

    def _encoding(self) -> str:
        kind = self.workspace.position_encoding
        value = getattr(kind, "value", kind) or "utf-16"
        return value if value in report.ENCODINGS else "utf-16"

    def _root(self) -> Path | None:
        root = self.workspace.root_path
        return Path(root) if root else None

    # -- requests ----------------------------------------------------------------------------

    async def code_actions(self, params: types.CodeActionParams) -> list[types.CodeAction] | None:
        """The rule's fix (when it has one and it passes verification by itself) and
        ``# noqa`` for each finding in the range."""
        only = params.context.only
        if only and not any(types.CodeActionKind.QuickFix.startswith(k) for k in only):
            return None
        uri = params.text_document.uri
        result = self.results.get(uri)
        document = self.open_document(uri)
        if result is None or document is None:
            return []
        text = document.source
        chosen = self._requested(params, result)
        loop = asyncio.get_running_loop()
        failing = set()
        for finding, _ in chosen:
            if finding.fix is None:
                continue
            if (
                text != result.text
            ):  # edited since the lint: its fixes were verified on another text
                failing.add(id(finding))
                continue
            why = await loop.run_in_executor(
                self._lint_pool, self._fails_alone, uri, result, finding
            )
            if why:
                failing.add(id(finding))
        return self._actions(uri, text, chosen, failing)

    def _requested(
        self, params: types.CodeActionParams, result: Result
    ) -> list[tuple[Finding, dict[str, Any]]]:
        """The findings (with their diagnostics) that a code action request asks about."""
        wanted = {
            (_code(d), _key(_converter.unstructure(d.range)))
            for d in params.context.diagnostics
            if d.source == report.SOURCE
        }
        request_range = _converter.unstructure(params.range)
        chosen = []
        for finding, diagnostic in zip(result.findings, result.diagnostics, strict=True):
            if finding.code == PARSE_ERROR:
                continue
            key = (finding.code, _key(diagnostic["range"]))
            if wanted and key not in wanted:
                continue
            if not wanted and not _overlaps(diagnostic["range"], request_range):
                continue
            chosen.append((finding, diagnostic))
        return chosen

    def _actions(
        self,
        uri: str,
        text: str,
        chosen: list[tuple[Finding, dict[str, Any]]],
        failing: set[int],
    ) -> list[types.CodeAction]:
        """A quick fix for each verified fix of ``chosen``, and a ``# noqa`` for each."""
        lines = split_lines(text)
        encoding = self._encoding()
        actions: list[types.CodeAction] = []
        for finding, diagnostic in chosen:
            structured = _converter.structure(diagnostic, types.Diagnostic)
            if finding.fix is not None and id(finding) not in failing:
                edits = [report.text_edit(e, lines, encoding) for e in finding.fix.edits]
                actions.append(
                    types.CodeAction(
                        title=f"Fix {finding.code}: {finding.fix.description}",
                        kind=types.CodeActionKind.QuickFix,
                        diagnostics=[structured],
                        is_preferred=finding.fix.safe,
                        edit=_workspace_edit(uri, edits),
                    )
                )
            edit = report.text_edit(noqa_edit(text, finding), lines, encoding)
            actions.append(
                types.CodeAction(
                    title=f"Add `# noqa: {finding.code}`",
                    kind=types.CodeActionKind.QuickFix,
                    diagnostics=[structured],
                    edit=_workspace_edit(uri, [edit]),
                )
            )
        return actions

    def hover(self, params: types.HoverParams) -> types.Hover | None:
        """The findings at a position: message, rule summary and a link to the rule page."""
        result = self.results.get(params.text_document.uri)
        if result is None:
            return None
        at = (params.position.line, params.position.character)
        hits: list[Finding] = []
        span: dict[str, Any] | None = None
        for finding, diagnostic in zip(result.findings, result.diagnostics, strict=True):
            if not _contains(diagnostic["range"], at):
                continue
            span = span or diagnostic["range"]
            hits.append(finding)
        if span is None:
            return None
        return types.Hover(
            contents=types.MarkupContent(types.MarkupKind.Markdown, hover_markdown(hits)),
            range=_converter.structure(span, types.Range),
        )


def _unlintable(text: str) -> tuple[int, str] | None:
    """What the command line reports as IPL999 before parsing: a null byte, a huge file."""
    if "\x00" in text:
        return text[: text.index("\x00")].count(
            "\n"
        ) + 1, "cannot parse: source contains a null byte"
    if len(text) * 4 > MAX_BYTES:
        size = len(text.encode("utf-8", "surrogatepass"))
        if size > MAX_BYTES:
            return 1, f"cannot parse: file too large ({size} bytes)"
    return None


def _workspace_edit(uri: str, edits: list[dict[str, Any]]) -> types.WorkspaceEdit:
    return types.WorkspaceEdit(
        changes={uri: [_converter.structure(e, types.TextEdit) for e in edits]}
    )


def _code(diagnostic: types.Diagnostic) -> str:
    return str(diagnostic.code)


def _key(span: dict[str, Any]) -> tuple[int, int, int, int]:
    start, end = span["start"], span["end"]
    return (start["line"], start["character"], end["line"], end["character"])


def _overlaps(a: dict[str, Any], b: dict[str, Any]) -> bool:
    a0, a1, b0, b1 = (
        (a["start"]["line"], a["start"]["character"]),
        (a["end"]["line"], a["end"]["character"]),
        (b["start"]["line"], b["start"]["character"]),
        (b["end"]["line"], b["end"]["character"]),
    )
    return a0 <= b1 and b0 <= a1


def _contains(span: dict[str, Any], at: tuple[int, int]) -> bool:
    start = (span["start"]["line"], span["start"]["character"])
    end = (span["end"]["line"], span["end"]["character"])
    if start == end:  # a point (a parse error): the rest of its line
        return at[0] == start[0] and at[1] >= start[1]
    return start <= at <= end


def _document_path(uri: str) -> Path | None:
    path = to_fs_path(uri) if uri.startswith("file:") else None
    return Path(path) if path else None


def _is_python(document: Any) -> bool:
    if document.language_id:
        return bool(document.language_id == "python")
    return str(document.uri).endswith((".py", ".pyi"))


def _is_pyproject(uri: str) -> bool:
    return unquote(uri).rstrip("/").endswith("/pyproject.toml")


def build_server(debounce: float = DEBOUNCE_SECONDS) -> InplaceLintServer:
    """A server with every feature registered (not yet started)."""
    server = InplaceLintServer(debounce)

    @server.feature(types.INITIALIZE)
    def initialize(ls: InplaceLintServer, params: types.InitializeParams) -> None:
        options = params.initialization_options
        if isinstance(options, dict) and isinstance(options.get("debounceMs"), int | float):
            ls.debounce = max(float(options["debounceMs"]), 0.0) / 1000

    @server.feature(types.INITIALIZED)
    async def initialized(ls: InplaceLintServer, params: types.InitializedParams) -> None:
        watched = getattr(ls.client_capabilities.workspace, "did_change_watched_files", None)
        if watched is None or not watched.dynamic_registration:
            return
        options = types.DidChangeWatchedFilesRegistrationOptions(
            watchers=[types.FileSystemWatcher(glob_pattern="**/pyproject.toml")]
        )
        registration = types.Registration(
            id="inplace-lint-pyproject",
            method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
            register_options=options,
        )
        try:
            await ls.client_register_capability_async(
                types.RegistrationParams(registrations=[registration])
            )
        except Exception as exc:  # the client refused: saves of pyproject.toml still work
            log.info("could not watch pyproject.toml: %s", exc)

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: InplaceLintServer, params: types.DidOpenTextDocumentParams) -> None:
        ls.schedule(params.text_document.uri, 0)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: InplaceLintServer, params: types.DidChangeTextDocumentParams) -> None:
        ls.schedule_edit(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE, types.SaveOptions(include_text=False))
    def did_save(ls: InplaceLintServer, params: types.DidSaveTextDocumentParams) -> None:
        if _is_pyproject(params.text_document.uri):
            ls.relint_all()
        else:
            ls.schedule(params.text_document.uri, 0)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: InplaceLintServer, params: types.DidCloseTextDocumentParams) -> None:
        ls.forget(params.text_document.uri)

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def watched(ls: InplaceLintServer, params: types.DidChangeWatchedFilesParams) -> None:
        if any(_is_pyproject(change.uri) for change in params.changes):
            ls.relint_all()

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix]),
    )
    async def code_action(
        ls: InplaceLintServer, params: types.CodeActionParams
    ) -> list[types.CodeAction] | None:
        return await ls.code_actions(params)

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    def hover(ls: InplaceLintServer, params: types.HoverParams) -> types.Hover | None:
        return ls.hover(params)

    return server


def serve() -> None:
    """Run the server on stdin/stdout until the client says exit."""
    logging.basicConfig(level=logging.WARNING, format="inplace-lint lsp: %(message)s")
    build_server().start_io()
