"""Never breaks: hypothesis feeds the engine, the fixer, the CLI and the language server junk.

Inputs: random bytes, token soup, grammar-generated Python (hypothesmith) and the corpus
(tests/cases, examples/, catalogue examples) with random deletions and insertions.
Properties: no uncaught exception, exit codes 0/1/2 only, output well-formed in every
``--format``, no file written without ``--fix``, and with ``--fix`` the result parses or the
file is untouched. Example counts are small and derandomised for CI;
``python bench/fuzz_long.py`` runs the same tests with many random examples.
"""

from __future__ import annotations

import ast
import contextlib
import importlib.util
import io
import json
import os
import queue
import re
import subprocess
import sys
import tempfile
import threading
import warnings
from pathlib import Path
from typing import Any

import pytest
from harness import catalogue_examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inplace_lint.autofix import fix_text
from inplace_lint.cli import main
from inplace_lint.engine import lint_bytes, lint_source
from inplace_lint.finding import Finding
from inplace_lint.report import FORMATS
from inplace_lint.source import decode

ROOT = Path(__file__).resolve().parent.parent
#: ``INPLACE_LINT_FUZZ_SCALE`` multiplies every example count (bench/fuzz_long.py sets it).
SCALE = max(1, int(os.environ.get("INPLACE_LINT_FUZZ_SCALE", "1") or 1))
RANDOM = os.environ.get("INPLACE_LINT_FUZZ_RANDOM") == "1"

CORPUS = sorted(
    {p.read_text(encoding="utf-8") for p in (ROOT / "tests" / "cases").rglob("*.py")}
    | {p.read_text(encoding="utf-8") for p in (ROOT / "examples").glob("*.py")}
    | {e.source for e in catalogue_examples(ROOT)}
)
SNIPPETS = [
    *"()[]{}:,.=*@#\\'\"\n\t\r ",
    "    ",
    "\\\n",
    "\x00",
    "\ufeff",
    "\u2028",
    "\x0c",
    ".add_(1)",
    ".relu_()",
    " += ",
    "inplace=True",
    "out=",
    "torch.",
    "F.relu_(",
    ".data",
    ".detach()",
    "'''",
    "lambda x: ",
    "yield ",
    "async ",
    "await ",
    "global x\n",
    "nonlocal y\n",
    "with torch.no_grad():\n",
    "def f(x):\n",
    "class C(torch.autograd.Function):\n",
    "@staticmethod\n",
    "def backward(ctx, grad_output):\n",
    ".backward()",
    "ctx.save_for_backward(x)",
    "x[0] = 0\n",
    "if x:\n",
    "for i in x:\n",
    "match x:\n    case _:\n",
    "from torch import nn\n",
    "import torch.nn.functional as F\n",
    "nn.Sequential(nn.Sigmoid(), nn.ReLU(True))",
    "é",
    "😀",
]
HEADER = "import torch\nx = torch.randn(3, requires_grad=True)\nh = torch.sigmoid(x)\nh.add_(1)\n"
FINDING_LINE = re.compile(r"^.+:\d+:\d+: IPL\d{3} \S")
COMMON = {
    "deadline": None,
    "database": None,
    "derandomize": not RANDOM,
    "suppress_health_check": list(HealthCheck),
}


def fuzz(examples: int) -> Any:
    return settings(max_examples=examples * SCALE, **COMMON)


@st.composite
def mutated(draw: st.DrawFn) -> str:
    """A corpus file with a few random deletions, insertions and duplications."""
    text = draw(st.sampled_from(CORPUS))
    for _ in range(draw(st.integers(1, 6))):
        at = draw(st.integers(0, len(text)))
        kind = draw(st.sampled_from(("delete", "insert", "duplicate")))
        if kind == "delete":
            text = text[:at] + text[draw(st.integers(at, min(len(text), at + 60))) :]
        elif kind == "insert":
            piece = draw(st.sampled_from(SNIPPETS) | st.text(max_size=6))
            text = text[:at] + piece + text[at:]
        else:
            end = draw(st.integers(at, min(len(text), at + 200)))
            text = text[:end] + text[at:end] + text[end:]
    return text


TOKEN_SOUP = st.lists(st.sampled_from([*SNIPPETS, "x", "h", "y", "1", "0.5", "None"]), max_size=120)
SOUP = TOKEN_SOUP.map(lambda tokens: HEADER + "".join(tokens))


def grammar() -> st.SearchStrategy[str]:
    """Python from hypothesmith's grammar (and libcst nodes in long runs), after HEADER."""
    try:
        import hypothesmith
    except ImportError:
        return st.nothing()
    source = hypothesmith.from_grammar(auto_target=False)  # targeting is slow: ~3 s an example
    if RANDOM:
        source = source | hypothesmith.from_node()
    return source.map(lambda code: HEADER + code)


#: Built on first draw: hypothesmith compiles its grammar with lark (seconds), which every
#: xdist worker would otherwise pay while collecting.
GRAMMAR = st.deferred(grammar)
HAS_HYPOTHESMITH = importlib.util.find_spec("hypothesmith") is not None


def check_findings(findings: list[Finding], text: str | None, path: str) -> None:
    """Well-formed findings: a known code, 1-based positions, fixes that fit the text."""
    lines = None
    if text is not None:
        lines = re.split(r"\r\n|\r|\n", text)
    for finding in findings:
        assert re.fullmatch(r"IPL\d{3}", finding.code)
        assert finding.path == path
        assert finding.start.line >= 1 and finding.start.column >= 1
        assert finding.end >= finding.start or finding.code == "IPL999"
        assert "\n" not in finding.message
        if finding.fix is None or lines is None:
            continue
        for edit in finding.fix.edits:
            assert edit.start <= edit.end
            assert edit.end.line <= len(lines)
            assert edit.end.column <= len(lines[edit.end.line - 1]) + 1


def check_fix(text: str) -> None:
    """The fixer never breaks a file: the result parses whenever the input did."""
    result = fix_text(text, "m.py", unsafe=True)
    if not result.changed:
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ast.parse(result.after)
    again = fix_text(result.after, "m.py", unsafe=True)
    assert not again.applied or again.after != result.after


# --------------------------------------------------------------------------- the engine


@fuzz(100)
@given(st.binary(max_size=3000))
def test_engine_random_bytes(data: bytes) -> None:
    check_findings(lint_bytes(data, "m.py"), None, "m.py")
    check_findings(lint_bytes(HEADER.encode() + data, "m.py"), None, "m.py")


@fuzz(100)
@given(SOUP)
def test_engine_token_soup(text: str) -> None:
    check_findings(lint_source(text, "m.py"), text, "m.py")


@fuzz(60)
@given(mutated())
def test_engine_and_fixer_on_mutated_corpus(text: str) -> None:
    check_findings(lint_source(text, "m.py"), text, "m.py")
    check_fix(text)


@pytest.mark.skipif(not HAS_HYPOTHESMITH, reason="hypothesmith is not installed")
@fuzz(40)
@given(GRAMMAR)
def test_engine_and_fixer_on_grammar_generated_python(text: str) -> None:
    check_findings(lint_source(text, "m.py"), text, "m.py")
    check_fix(text)


# --------------------------------------------------------------------------- the command


def run_cli(args: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(args)
    return code, out.getvalue(), err.getvalue()


def check_output(fmt: str, out: str) -> None:
    if fmt == "text":  # finding lines, then the summary line (``Found ...`` or all passed)
        *findings, last = out.splitlines()
        assert all(FINDING_LINE.match(line) for line in findings), out
        assert re.match(r"All checks passed!$|Found \d+ finding", last), out
    elif fmt in ("json", "sarif", "lsp"):
        if out.strip():
            json.loads(out)
        else:
            assert fmt != "sarif"
    elif fmt == "github":
        assert all(line.startswith("::") for line in out.splitlines()), out


@fuzz(60)
@given(
    st.one_of(mutated().map(str.encode), st.binary(max_size=500), SOUP.map(str.encode)),
    st.sampled_from(FORMATS),
    st.sampled_from(((), ("--fix",), ("--fix", "--unsafe-fixes"), ("--diff",))),
)
def test_cli_in_every_format(data: bytes, fmt: str, fixing: tuple[str, ...]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        (root / "pyproject.toml").write_bytes(b"")
        target = root / "m.py"
        target.write_bytes(data)
        args = ["--no-cache", "--jobs", "1", "--format", fmt, *fixing, str(target)]
        code, out, err = run_cli(args)
        assert code in (0, 1, 2), (code, err)
        assert "internal error" not in err, err
        if "--diff" not in fixing:
            check_output(fmt, out)
        after = target.read_bytes()
        assert sorted(p.name for p in root.iterdir()) == ["m.py", "pyproject.toml"]
        if "--fix" not in fixing:
            assert after == data
        elif after != data:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                ast.parse(decode(after).text)


# --------------------------------------------------------------------------- the language server


class LspSession:
    """``inplace-lint lsp`` over stdio with a minimal JSON-RPC client."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "inplace_lint", "lsp"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self.messages: queue.Queue[dict[str, Any]] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self.request(1, "initialize", {"processId": None, "rootUri": None, "capabilities": {}})
        self.notify("initialized", {})
        self.next_id = 2

    def _send(self, message: dict[str, Any]) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def _read(self) -> None:
        stream = self.proc.stdout
        assert stream is not None
        while True:
            length = None
            while True:
                line = stream.readline()
                if not line:
                    return
                if line in (b"\r\n", b"\n"):
                    break
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            assert length is not None
            self.messages.put(json.loads(stream.read(length)))

    def notify(self, method: str, params: dict[str, Any]) -> None:
        self._send({"method": method, "params": params})

    def request(self, ident: int, method: str, params: dict[str, Any] | None) -> dict[str, Any]:
        self._send({"id": ident, "method": method, "params": params})
        return self.wait(lambda m: m.get("id") == ident and "method" not in m)

    def wait(self, match: Any, timeout: float = 30.0) -> dict[str, Any]:
        while True:
            message = self.messages.get(timeout=timeout)
            if message.get("method") == "workspace/configuration":
                self._send({"id": message["id"], "result": [None]})
                continue
            if "id" in message and "method" in message:  # other server requests: accept
                self._send({"id": message["id"], "result": None})
                continue
            if match(message):
                return message

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.request(self.next_id, "shutdown", None)
            self.notify("exit", {})
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


@pytest.fixture(scope="module")
def lsp() -> Any:
    pytest.importorskip("pygls")
    session = LspSession()
    yield session
    session.close()


def test_language_server_survives_junk(lsp: LspSession) -> None:
    """Every document gets well-formed diagnostics and the server keeps answering."""
    counter = iter(range(10**9))

    @fuzz(40)
    @given(st.one_of(mutated(), SOUP, st.text(max_size=300)))
    def document(text: str) -> None:
        uri = f"file:///fuzz/doc{next(counter)}.py"
        lsp.notify(
            "textDocument/didOpen",
            {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}},
        )
        published = lsp.wait(
            lambda m: (
                m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri
            )
        )
        lines = re.split(r"\r\n|\r|\n", text)
        for diagnostic in published["params"]["diagnostics"]:
            assert re.fullmatch(r"IPL\d{3}", diagnostic["code"])
            assert 0 <= diagnostic["range"]["start"]["line"] <= len(lines)
        lsp.notify("textDocument/didClose", {"textDocument": {"uri": uri}})

    document()
    assert lsp.proc.poll() is None
