"""Time from ``textDocument/didChange`` to ``textDocument/publishDiagnostics`` in the server.

Builds a realistic model file of about 2,000 lines from the code in ``examples/`` (every
example's classes and functions, renamed per copy so that nothing is redefined, under one
import block), starts ``inplace-lint lsp`` as a subprocess, opens the file as an unsaved buffer
and then, round after round, types an edit (a comment line inserted into a ``forward``, then
removed again; each round's text is new, so the server cannot reuse an earlier lint) and waits
for the diagnostics of that version.

The measured time is the JSON-RPC round trip and the lint. The server lints an edit at once
when the document's previous lint began at least one debounce window ago (as it did between
these rounds: each round waits for the last one's diagnostics), and gathers quicker edits into
one lint at the end of the window; ``--debounce-ms`` sets the window. Between edits the server
keeps the libcst statements of unchanged top-level statements (``inplace_lint.reparse``). The
lint alone in this process is reported beside it, from scratch and with that reuse, and
``--profile`` prints where the time of a lint with reuse goes.

Usage::

    .venv/bin/python bench/lsp_latency.py                 # 2,000 lines, 7 rounds
    .venv/bin/python bench/lsp_latency.py --rounds 15 --lines 4000
    .venv/bin/python bench/lsp_latency.py --file bench/.corpora/timm-1.0.31/timm/models/resnet.py
    .venv/bin/python bench/lsp_latency.py --profile       # also cProfile one lint
"""

from __future__ import annotations

import argparse
import ast
import cProfile
import json
import os
import pstats
import queue
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
EXAMPLES = ROOT / "examples"
sys.path.insert(0, str(ROOT))

from inplace_lint.engine import lint_source  # noqa: E402
from inplace_lint.lsp.server import DEBOUNCE_SECONDS  # noqa: E402
from inplace_lint.reparse import StatementReuse  # noqa: E402


def build_model(min_lines: int) -> str:
    """One module of at least ``min_lines`` lines made of the examples' definitions."""
    imports: set[str] = set()
    bodies: list[tuple[str, str, list[str]]] = []
    for path in sorted(EXAMPLES.glob("*.py")):
        text = path.read_text(encoding="utf-8")
        tree = ast.parse(text)
        names: list[str] = []
        first_line: int | None = None
        for node in tree.body:
            if isinstance(node, ast.Import | ast.ImportFrom):
                if not (isinstance(node, ast.ImportFrom) and node.module == "__future__"):
                    imports.add(ast.get_source_segment(text, node) or "")
                continue
            if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
                continue  # the module docstring
            if isinstance(node, ast.FunctionDef | ast.ClassDef):
                names.append(node.name)
            if first_line is None:
                decorators = getattr(node, "decorator_list", [])
                first_line = min([node.lineno, *(d.lineno for d in decorators)])
        if first_line is not None:
            body = "\n".join(text.splitlines()[first_line - 1 :])
            bodies.append((path.stem, body, names))
    out = ['"""A large model file assembled from examples/ for the latency bench."""', ""]
    out += ["from __future__ import annotations", "", *sorted(imports)]
    copy = 0
    while True:
        for stem, body, names in bodies:
            if names:
                pattern = re.compile(r"\b(" + "|".join(map(re.escape, names)) + r")\b")
                body = pattern.sub(lambda m, k=copy: f"{m.group(1)}_{k}", body)
            out += ["", "", f"# ---- {stem}.py, copy {copy} ----", body]
            if sum(part.count("\n") + 1 for part in out) >= min_lines:
                return "\n".join(out) + "\n"
        copy += 1


class Server:
    """``inplace-lint lsp`` over pipes, with arrival times of everything it sends."""

    def __init__(self, cwd: Path) -> None:
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        self.process = subprocess.Popen(
            [sys.executable, "-m", "inplace_lint", "lsp"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            cwd=cwd,
            env=env,
        )
        self.inbox: queue.Queue[tuple[float, dict[str, Any]]] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self._next_id = 0

    def _read(self) -> None:
        stream = self.process.stdout
        assert stream is not None
        while True:
            length = 0
            while True:
                header = stream.readline()
                if not header:
                    return
                if not header.strip():
                    break
                name, _, value = header.decode("ascii").partition(":")
                if name.lower() == "content-length":
                    length = int(value)
            body = stream.read(length)
            self.inbox.put((time.perf_counter(), json.loads(body)))

    def send(self, method: str, params: Any, request: bool = False) -> int | None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params}
        ident = None
        if request:
            self._next_id += 1
            ident = message["id"] = self._next_id
        body = json.dumps(message).encode("utf-8")
        assert self.process.stdin is not None
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
        self.process.stdin.flush()
        return ident

    def wait(self, match: Any, timeout: float = 120.0) -> tuple[float, dict[str, Any]]:
        deadline = time.monotonic() + timeout
        while True:
            arrived, message = self.inbox.get(timeout=max(deadline - time.monotonic(), 0.01))
            if match(message):
                return arrived, message

    def request(self, method: str, params: Any) -> dict[str, Any]:
        ident = self.send(method, params, request=True)
        return self.wait(lambda m: m.get("id") == ident and "method" not in m)[1]

    def close(self) -> None:
        self.request("shutdown", None)
        self.send("exit", None)
        self.process.wait(timeout=30)


def published(uri: str, version: int) -> Any:
    def match(message: dict[str, Any]) -> bool:
        params = message.get("params") or {}
        return (
            message.get("method") == "textDocument/publishDiagnostics"
            and params.get("uri") == uri
            and params.get("version") == version
        )

    return match


def _typed(lines: list[str], anchor: int, indent: str, version: int) -> str:
    """The model with one comment line typed into the first forward(), as a round does."""
    typed = [f"{indent}# adjust the scale here ({version})"]
    return "\n".join([*lines[: anchor + 1], *typed, *lines[anchor + 1 :]])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=2000, help="model file size (default 2000)")
    parser.add_argument(
        "--file", type=Path, help="time edits to this file instead (into its first forward)"
    )
    parser.add_argument("--rounds", type=int, default=7, help="edits to time (default 7)")
    parser.add_argument(
        "--debounce-ms", type=float, help=f"override the debounce ({DEBOUNCE_SECONDS * 1000:g} ms)"
    )
    parser.add_argument("--profile", action="store_true", help="cProfile one in-process lint")
    args = parser.parse_args()

    text = build_model(args.lines) if args.file is None else args.file.read_text("utf-8")
    lines = text.split("\n")
    # a line inside a forward() to type into: the first "def forward" body line
    anchor = next(i for i, line in enumerate(lines) if line.strip().startswith("def forward"))
    indent = " " * (len(lines[anchor + 1]) - len(lines[anchor + 1].lstrip()))

    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        uri = (root / "big_model.py").as_uri()  # never written: the server lints the buffer
        server = Server(root)
        options = {} if args.debounce_ms is None else {"debounceMs": args.debounce_ms}
        server.request(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": root.as_uri(),
                "capabilities": {},
                "initializationOptions": options,
            },
        )
        server.send("initialized", {})
        started = time.perf_counter()
        server.send(
            "textDocument/didOpen",
            {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}},
        )
        arrived, first = server.wait(published(uri, 1))
        count = len(first["params"]["diagnostics"])
        print(
            f"model: {len(lines) - 1} lines, {count} diagnostics; open -> diagnostics "
            f"{(arrived - started) * 1000:.0f} ms"
        )
        timings: list[float] = []
        for version in range(2, args.rounds + 2):
            insert = version % 2 == 0
            where = {"line": anchor + 1, "character": 0}
            end = {"line": anchor + 2, "character": 0} if not insert else where
            typed = f"{indent}# adjust the scale here ({version})\n" if insert else ""
            change = {"range": {"start": where, "end": end}, "text": typed}
            sent = time.perf_counter()
            server.send(
                "textDocument/didChange",
                {
                    "textDocument": {"uri": uri, "version": version},
                    "contentChanges": [change],
                },
            )
            arrived, message = server.wait(published(uri, version))
            timings.append((arrived - sent) * 1000)
            print(
                f"  round {version - 1}: {timings[-1]:.0f} ms "
                f"({len(message['params']['diagnostics'])} diagnostics)"
            )
        server.close()

    engine: list[float] = []
    cpu: list[float] = []
    for _ in range(3):
        start, start_cpu = time.perf_counter(), time.process_time()
        lint_source(text, "big_model.py")
        engine.append((time.perf_counter() - start) * 1000)
        cpu.append((time.process_time() - start_cpu) * 1000)
    reuse = StatementReuse()
    lint_source(text, "big_model.py", reuse=reuse)
    reused: list[float] = []
    for version in range(3):
        edited = _typed(lines, anchor, indent, version)
        start = time.perf_counter()
        lint_source(edited, "big_model.py", reuse=reuse)
        reused.append((time.perf_counter() - start) * 1000)
    window = DEBOUNCE_SECONDS * 1000 if args.debounce_ms is None else args.debounce_ms
    print(
        f"didChange -> publishDiagnostics: median {statistics.median(timings):.0f} ms "
        f"(min {min(timings):.0f}, max {max(timings):.0f}, {len(timings)} rounds, "
        f"debounce window {window:g} ms)"
    )
    print(
        f"lint_source alone, in process: median {statistics.median(engine):.0f} ms wall, "
        f"{statistics.median(cpu):.0f} ms CPU (wall >> CPU means the machine is busy); "
        f"after an edit, reusing unchanged statements: {statistics.median(reused):.0f} ms"
    )
    if args.profile:
        lint_source(text, "big_model.py", reuse=reuse)
        edited = _typed(lines, anchor, indent, 99)
        profile = cProfile.Profile()
        profile.runcall(lint_source, edited, "big_model.py", reuse=reuse)
        pstats.Stats(profile).sort_stats("cumulative").print_stats(25)
    return 0


if __name__ == "__main__":
    sys.exit(main())
