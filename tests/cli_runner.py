"""Run the ``inplace-lint`` command line in this process, as ``python -m inplace_lint`` would;
and ``write``, which lays out the scratch files such tests lint.

Most command-line tests are about what the command decides (options, configuration, formats),
not about the process around it; starting an interpreter for each of them cost the suite
hundreds of seconds (issue 19). ``in_process`` calls ``inplace_lint.cli.main`` with the
working folder, standard input, standard streams and environment a child process would
have, and gives back the exit status and both streams as bytes. What only a real process
shows (a closed pipe, a terminal, signals, ``--jobs`` workers dying, the entry point itself)
is still tested with a real process, in test_cli.py and test_cli_habits.py.

Limits: one run at a time (the streams, the folder and the environment are this process's);
a run that never returns hangs the test.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path


@contextlib.contextmanager
def _environment(changes: Mapping[str, str | None]) -> Iterator[None]:
    """``os.environ`` with ``changes`` (``None`` removes a name), put back afterwards."""
    saved = {name: os.environ.get(name) for name in changes}
    try:
        for name, value in changes.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def _stream(data: bytes = b"") -> io.TextIOWrapper:
    """A text stream over bytes, with a ``buffer`` as real standard streams have."""
    return io.TextIOWrapper(_Captured(data), encoding="utf-8", write_through=True)


def in_process(
    cwd: Path,
    args: Sequence[str],
    stdin: bytes = b"",
    env: Mapping[str, str | None] | None = None,
) -> tuple[int, bytes, bytes]:
    """``inplace-lint ARGS`` run in ``cwd``: (exit status, standard output, standard error)."""
    from inplace_lint.cli import main

    streams = (sys.stdin, sys.stdout, sys.stderr)
    folder = os.getcwd()
    stdout, stderr = _stream(), _stream()
    sys.stdin, sys.stdout, sys.stderr = _stream(stdin), stdout, stderr
    try:
        with _environment(env or {}):
            os.chdir(cwd)
            try:
                code = main(list(args))
            except SystemExit as exit_:  # argparse's own usage errors and --help
                code = exit_.code if isinstance(exit_.code, int) else 1
    finally:
        os.chdir(folder)
        sys.stdin, sys.stdout, sys.stderr = streams
    return code, _contents(stdout), _contents(stderr)


class _Captured(io.BytesIO):
    """Bytes that stay readable after the command closes the stream (as it does on EPIPE)."""

    def close(self) -> None:
        self.kept = self.getvalue()
        super().close()

    def contents(self) -> bytes:
        return getattr(self, "kept", b"") if self.closed else self.getvalue()


def _contents(stream: io.TextIOWrapper) -> bytes:
    buffer = stream.buffer
    assert isinstance(buffer, _Captured)
    if not stream.closed:
        stream.flush()
    return buffer.contents()


def write(root: Path, files: Mapping[str, str | bytes]) -> None:
    """Create ``files`` (relative path -> text or bytes) under ``root``."""
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
