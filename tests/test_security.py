"""The checked code is never imported or run, and configuration values are never evaluated.

Every planted file would create a marker file on import (or on any evaluation of a config
value); after running every face of the linter the marker must not exist.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import threading
from pathlib import Path
from typing import IO, Any

import pytest

HAZARD = (
    "import torch\na = torch.randn(4, requires_grad=True)\nh = torch.sigmoid(a)\n"
    "h.mul_(2)\nh.sum().backward()\n"
)


def evil(marker: Path) -> str:
    return HAZARD + f"open({str(marker)!r}, 'a').close()\nraise SystemExit(3)\n"


def plant(root: Path, marker: Path) -> None:
    """Hazards that also write the marker, in every file a careless tool might import.

    They sit in ``project/``, not in the working directory, where ``python -m`` itself would
    import a ``torch.py`` or ``libcst.py`` before the linter starts.
    """
    root = root / "project"
    for name in (
        "evil.py",
        "pkg/__init__.py",
        "conftest.py",
        "setup.py",
        "sitecustomize.py",
        "usercustomize.py",
        "torch.py",
        "inplace_lint.py",
        "libcst.py",
    ):
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(evil(marker), encoding="utf-8")
    (root / "pyproject.toml").write_text("", encoding="utf-8")


def run(cwd: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_no_face_of_the_linter_runs_the_code_it_checks(tmp_path: Path) -> None:
    marker = tmp_path / "MARKER"
    plant(tmp_path, marker)
    cli = ["-m", "inplace_lint", "--no-cache", "--jobs", "2"]
    for args in (
        [*cli, "."],
        [*cli, "--format", "json", "."],
        [*cli, "--format", "sarif", "."],
        [*cli, "--diff", "--unsafe-fixes", "."],
        [*cli, "--fix", "--unsafe-fixes", "."],
        [*cli, "-", "--stdin-filename", "project/evil.py"],
        ["-m", "inplace_lint", "rule", "IPL001"],
    ):
        proc = run(
            tmp_path,
            *[a.replace(".", "project") if a == "." else a for a in args],
            stdin=evil(marker),
        )
        assert proc.returncode in (0, 1, 2), (args, proc.stderr)
        assert "Traceback" not in proc.stderr, proc.stderr
        assert not marker.exists(), args
    assert "h = h.mul(2)" in (tmp_path / "project" / "evil.py").read_text(encoding="utf-8")


@pytest.mark.skipif(importlib.util.find_spec("flake8") is None, reason="flake8 not installed")
def test_the_flake8_plugin_does_not_run_the_code(tmp_path: Path) -> None:
    marker = tmp_path / "MARKER"
    plant(tmp_path, marker)
    proc = run(tmp_path, "-m", "flake8", "--select", "IPL", "project")
    assert "Traceback" not in proc.stderr, proc.stderr
    assert "IPL001" in proc.stdout
    assert not marker.exists()


@pytest.mark.skipif(importlib.util.find_spec("pygls") is None, reason="pygls not installed")
def test_the_language_server_does_not_run_the_code(tmp_path: Path) -> None:
    marker = tmp_path / "MARKER"
    plant(tmp_path, marker)
    uri = (tmp_path / "project" / "evil.py").as_uri()
    root = tmp_path.as_uri()
    messages = [
        {
            "id": 1,
            "method": "initialize",
            "params": {"rootUri": root, "capabilities": {}},
        },
        {"method": "initialized", "params": {}},
        {
            "method": "textDocument/didOpen",
            "params": {
                "textDocument": {
                    "uri": uri,
                    "languageId": "python",
                    "version": 1,
                    "text": evil(marker),
                }
            },
        },
        {"method": "textDocument/didSave", "params": {"textDocument": {"uri": uri}}},
        {"id": 2, "method": "shutdown", "params": None},
        {"method": "exit", "params": None},
    ]

    def frame(batch: list[dict[str, object]]) -> bytes:
        bodies = [json.dumps({"jsonrpc": "2.0", **message}).encode() for message in batch]
        return b"".join(b"Content-Length: %d\r\n\r\n" % len(b) + b for b in bodies)

    def read(stream: IO[bytes]) -> dict[str, Any]:
        headers = b""
        while not headers.endswith(b"\r\n\r\n"):
            byte = stream.read(1)
            assert byte, "the language server closed its output"
            headers += byte
        length = int(headers.split(b"Content-Length:")[1].split(b"\r\n")[0])
        reply: dict[str, Any] = json.loads(stream.read(length))
        return reply

    with (tmp_path / "stderr").open("w+b") as stderr:
        proc = subprocess.Popen(
            [sys.executable, "-m", "inplace_lint", "lsp"],
            cwd=tmp_path,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
        )
        watchdog = threading.Timer(120, proc.kill)  # a silent server fails the test, not hangs it
        watchdog.start()
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(frame(messages[:-2]))
        proc.stdin.flush()
        # the server started, and published its findings for the evil file before shutting down
        assert "capabilities" in read(proc.stdout)["result"]
        reply = read(proc.stdout)
        while reply.get("method") != "textDocument/publishDiagnostics":
            reply = read(proc.stdout)
        assert reply["params"]["uri"] == uri
        assert "IPL001" in [d["code"] for d in reply["params"]["diagnostics"]]
        proc.stdin.write(frame(messages[-2:]))
        proc.stdin.close()
        assert proc.wait(timeout=120) == 0
        watchdog.cancel()
        stderr.seek(0)
        assert b"Traceback" not in stderr.read()
    assert not marker.exists()


@pytest.mark.parametrize(
    "toml",
    [
        "[tool.inplace-lint]\nselect = [\"__import__('os').system('touch {m}')\"]\n",
        '[tool.inplace-lint]\nexclude = ["$(touch {m})", "`touch {m}`"]\n',
        "[tool.inplace-lint.per-file-ignores]\n\"open('{m}','w')\" = [\"IPL001\"]\n",
        '[tool.inplace-lint]\nextend-select = ["{{0.__init__.__globals__}}"]\n',
        "[tool.inplace-lint]\nignore = [\"%(open('{m}','w'))s\"]\n",
    ],
)
def test_configuration_values_are_data(tmp_path: Path, toml: str) -> None:
    marker = tmp_path / "MARKER"
    plant(tmp_path, marker)
    (tmp_path / "project" / "pyproject.toml").write_text(toml.format(m=marker), encoding="utf-8")
    proc = run(tmp_path, "-m", "inplace_lint", "--no-cache", "project/evil.py")
    assert proc.returncode in (1, 2) and "Traceback" not in proc.stderr, proc.stderr
    assert not marker.exists()
