"""Malformed traffic to ``inplace-lint lsp``, spoken byte for byte over the server's stdio.

pytest-lsp's client only sends well-formed messages, so these tests frame JSON-RPC by hand.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pygls")

ROOT = Path(__file__).resolve().parent.parent
TIMEOUT = 30.0
SOURCE = """\
import torch
from torch import nn


class Gate(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        gate = torch.sigmoid(self.proj(x))
        gate.mul_(2)
        return gate
"""


class RawServer:
    """The server process, with a thread that parses its framed replies into a queue."""

    def __init__(self, root: Path) -> None:
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        self.process = subprocess.Popen(
            [sys.executable, "-m", "inplace_lint", "lsp"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
            cwd=root,
        )
        self.replies: queue.Queue[dict[str, Any] | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        stream = self.process.stdout
        assert stream is not None
        while True:
            length = None
            while True:
                header = stream.readline()
                if not header:
                    self.replies.put(None)
                    return
                if not header.strip():
                    break
                name, _, value = header.decode("ascii").partition(":")
                if name.lower() == "content-length":
                    length = int(value)
            assert length is not None
            self.replies.put(json.loads(stream.read(length)))

    def send_bytes(self, body: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
        self.process.stdin.flush()

    def send(self, message: dict[str, Any]) -> None:
        self.send_bytes(json.dumps(message).encode("utf-8"))

    def expect(self, predicate: Any) -> dict[str, Any]:
        """The next reply that matches ``predicate``; others (log messages) are skipped."""
        while True:
            reply = self.replies.get(timeout=TIMEOUT)
            assert reply is not None, "the server closed its output"
            if predicate(reply):
                return reply

    def answer(self, ident: Any) -> dict[str, Any]:
        return self.expect(lambda r: "method" not in r and r.get("id", "absent") == ident)

    def close(self) -> None:
        if self.process.poll() is None:
            self.send({"jsonrpc": "2.0", "id": "bye", "method": "shutdown"})
            self.answer("bye")
            self.send({"jsonrpc": "2.0", "method": "exit"})
            self.process.wait(timeout=TIMEOUT)


@pytest.fixture
def server(tmp_path: Path):
    raw = RawServer(tmp_path)
    raw.send(
        {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {"processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {}},
        }
    )
    assert "capabilities" in raw.answer(0)["result"]
    raw.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
    yield raw
    raw.close()
    assert raw.process.returncode == 0


def _hover(ident: int, uri: str, line: int, character: int) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": ident,
        "method": "textDocument/hover",
        "params": {
            "textDocument": {"uri": uri},
            "position": {"line": line, "character": character},
        },
    }


def test_malformed_messages_get_json_rpc_errors_and_the_server_keeps_serving(
    server: RawServer, tmp_path: Path
) -> None:
    uri = (tmp_path / "gate.py").as_uri()
    server.send(
        {
            "jsonrpc": "2.0",
            "method": "textDocument/didOpen",
            "params": {
                "textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": SOURCE}
            },
        }
    )
    published = server.expect(lambda r: r.get("method") == "textDocument/publishDiagnostics")
    assert [d["code"] for d in published["params"]["diagnostics"]] == ["IPL001"]

    # params that do not fit the method
    server.send({"jsonrpc": "2.0", "id": 1, "method": "textDocument/hover", "params": {"x": 1}})
    assert server.answer(1)["error"]["code"] == -32602
    server.send({"jsonrpc": "2.0", "id": 2, "method": "textDocument/codeAction", "params": 7})
    assert server.answer(2)["error"]["code"] == -32602
    # an unknown method
    server.send({"jsonrpc": "2.0", "id": 3, "method": "inplace-lint/nothing", "params": {}})
    assert server.answer(3)["error"]["code"] == -32601
    # not JSON at all, and JSON that is not a request
    server.send_bytes(b'{"jsonrpc": "2.0", "id": 4, "method": ')
    assert server.answer(None)["error"]["code"] == -32700
    server.send_bytes(b"[1, 2, 3]")
    assert server.answer(None)["error"]["code"] == -32600
    server.send({"id": 5, "method": "textDocument/hover"})  # no "jsonrpc"
    assert server.answer(5)["error"]["code"] == -32600
    server.send_bytes(b"\xff\xfe not utf-8")
    assert server.answer(None)["error"]["code"] == -32700
    # a notification with bad params is dropped (notifications get no answer)
    server.send({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {"y": 2}})

    # still serving: a real request is answered
    server.send(_hover(6, uri, 11, 9))
    hover = server.answer(6)
    assert "IPL001" in hover["result"]["contents"]["value"]
    server.send(_hover(7, uri, 0, 0))
    assert server.answer(7)["result"] is None


def test_the_server_never_runs_the_code_it_lints(server: RawServer, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    text = f"{SOURCE}\nopen({str(marker)!r}, 'w').close()\nraise SystemExit(3)\n"
    uri = (tmp_path / "side_effect.py").as_uri()
    server.send(
        {
            "jsonrpc": "2.0",
            "method": "textDocument/didOpen",
            "params": {
                "textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}
            },
        }
    )
    # the server started and linted the file: the hazard in it is reported
    published = server.expect(lambda r: r.get("method") == "textDocument/publishDiagnostics")
    assert published["params"]["uri"] == uri
    assert [d["code"] for d in published["params"]["diagnostics"]] == ["IPL001"]
    server.send(_hover(1, uri, 11, 9))
    assert "IPL001" in server.answer(1)["result"]["contents"]["value"]
    assert not marker.exists()


def test_a_null_byte_is_one_ipl999(server: RawServer, tmp_path: Path) -> None:
    uri = (tmp_path / "nul.py").as_uri()
    text = "import torch\nx = torch.ones(2)\nx.add_(1)\x00\n"
    server.send(
        {
            "jsonrpc": "2.0",
            "method": "textDocument/didOpen",
            "params": {
                "textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}
            },
        }
    )
    reply = server.expect(lambda r: r.get("method") == "textDocument/publishDiagnostics")
    (diagnostic,) = reply["params"]["diagnostics"]
    assert diagnostic["code"] == "IPL999" and diagnostic["range"]["start"]["line"] == 2
    assert "null byte" in diagnostic["message"]


def test_the_module_entry_point_has_help_and_refuses_arguments(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "inplace_lint.lsp"]
    shown = subprocess.run(
        [*command, "--help"], capture_output=True, text=True, env=env, timeout=TIMEOUT
    )
    assert shown.returncode == 0 and shown.stderr == ""
    assert shown.stdout.startswith("usage: python -m inplace_lint.lsp\n")
    assert "docs/editors.md" in shown.stdout
    refused = subprocess.run(
        [*command, "--stdio"], capture_output=True, text=True, env=env, timeout=TIMEOUT
    )
    assert refused.returncode == 2 and refused.stdout == ""
    assert refused.stderr == "inplace-lint: error: 'lsp' takes no arguments, got '--stdio'\n"
    # an editor that goes away (its end of stdin closed) ends the server quietly
    ended = subprocess.run(command, input=b"", capture_output=True, env=env, timeout=TIMEOUT)
    assert (ended.returncode, ended.stdout, ended.stderr) == (0, b"", b"")
