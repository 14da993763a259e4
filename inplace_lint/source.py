"""Turn a file's bytes into text the way Python itself would (BOM, PEP 263 cookie)."""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass

_COOKIE = re.compile(rb"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)")


class DecodeError(Exception):
    """The bytes cannot be decoded; the message says why in one line."""


@dataclass(frozen=True)
class SourceText:
    """Decoded text plus what is needed to write it back byte for byte."""

    text: str
    encoding: str
    bom: bool


def detect_encoding(data: bytes) -> tuple[str, bool]:
    """The encoding named by a BOM or a PEP 263 cookie on line 1 or 2, else utf-8."""
    bom = data.startswith(codecs.BOM_UTF8)
    if bom:
        return "utf-8", True
    lines = data.split(b"\n", 2)
    for index, line in enumerate(lines[:2]):
        match = _COOKIE.match(line)
        if match:
            name = match.group(1).decode("ascii", "replace")
            try:
                return codecs.lookup(name).name, False
            except LookupError as exc:
                raise DecodeError(f"unknown encoding {name!r} in coding cookie") from exc
        if index == 0 and line.strip() and not line.lstrip().startswith(b"#"):
            break
    return "utf-8", False


def decode(data: bytes) -> SourceText:
    """Decode source bytes; raise DecodeError with a one-line reason on failure."""
    encoding, bom = detect_encoding(data)
    payload = data[len(codecs.BOM_UTF8) :] if bom else data
    try:
        text = payload.decode(encoding)
    except UnicodeDecodeError as exc:
        line = payload[: exc.start].count(b"\n") + 1
        raise DecodeError(f"cannot decode as {encoding} (line {line}): {exc.reason}") from exc
    return SourceText(text=text, encoding=encoding, bom=bom)
