"""Source sites: map Python frames to the user's ``file:line:col``, skipping torch and us.

Nothing here imports torch; the skipped folders are found from ``sys.modules`` when asked.
"""

from __future__ import annotations

import os
import sys
import sysconfig
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from types import CodeType, FrameType, TracebackType

__all__ = ["Site", "frame_site", "is_user_file", "traceback_sites", "user_frames", "user_site"]


@dataclass(frozen=True, order=True)
class Site:
    """A place in a user's source file (absolute path, 1-based line and column)."""

    path: str
    line: int
    column: int = 1

    def at(self, display: str | None = None) -> str:
        return f"{display or self.path}:{self.line}:{self.column}"

    def short(self) -> str:
        return f"{os.path.basename(self.path)}:{self.line}"


@lru_cache(maxsize=1)
def _skipped_roots() -> tuple[str, ...]:
    roots = [os.path.dirname(os.path.dirname(os.path.abspath(__file__)))]  # inplace_lint/
    torch = sys.modules.get("torch")
    if torch is not None and getattr(torch, "__file__", None):
        roots.append(os.path.dirname(os.path.abspath(torch.__file__)))
    stdlib = sysconfig.get_paths().get("stdlib")
    if stdlib:
        roots.append(os.path.abspath(stdlib))
    return tuple(root + os.sep for root in roots)


@lru_cache(maxsize=4096)
def is_user_file(filename: str) -> bool:
    """Whether frames from ``filename`` belong to the user (not torch, stdlib or us)."""
    if not filename or filename.startswith("<"):
        return False
    path = os.path.abspath(filename)
    for root in _skipped_roots():
        if path.startswith(root):
            inside = path[len(root) :]
            # site-packages below the stdlib folder holds user libraries (timm, ...)
            if "site-packages" in inside.split(os.sep) or "dist-packages" in inside.split(os.sep):
                continue
            return False
    return True


_POSITIONS: dict[CodeType, list[tuple[int | None, int | None, int | None, int | None]]] = {}


def frame_site(frame: FrameType) -> Site:
    """The site of the instruction ``frame`` is executing, with its column when known."""
    code = frame.f_code
    line = frame.f_lineno or code.co_firstlineno
    column = 1
    positions = _POSITIONS.get(code)
    if positions is None:
        positions = list(code.co_positions())
        if len(_POSITIONS) > 20_000:
            _POSITIONS.clear()
        _POSITIONS[code] = positions
    index = frame.f_lasti // 2
    if 0 <= index < len(positions):
        start, _, col, _ = positions[index]
        if start == line and col is not None:
            column = col + 1
    return Site(os.path.abspath(code.co_filename), line, column)


#: torch's own files on the way from an op to a dispatch mode's handler: a default device
#: (``torch.set_default_device``, ``confirm --device``) adds a function mode in
#: ``utils/_device.py``, a tensor subclass's ``__torch_function__`` goes through
#: ``overrides.py``.
_DISPATCH_FILES = (
    os.path.join("torch", "_dynamo", "eval_frame.py"),
    os.path.join("torch", "_compile.py"),
    os.path.join("torch", "utils", "_python_dispatch.py"),
    os.path.join("torch", "utils", "_device.py"),
    os.path.join("torch", "overrides.py"),
    os.path.join("torch", "_ops.py"),
)


def called_from_user(depth: int = 1) -> bool:
    """Whether the nearest caller outside this package is user code (not torch's)."""
    own = _skipped_roots()[0]
    frame = _frame(depth)
    while frame is not None and (
        frame.f_code.co_filename.endswith(_DISPATCH_FILES)
        or os.path.abspath(frame.f_code.co_filename).startswith(own)
    ):
        frame = frame.f_back
    return frame is not None and is_user_file(frame.f_code.co_filename)


def user_frames(frame: FrameType | None) -> Iterator[FrameType]:
    """The user's frames from ``frame`` outwards."""
    while frame is not None:
        if is_user_file(frame.f_code.co_filename):
            yield frame
        frame = frame.f_back


def user_site(depth: int = 1) -> Site | None:
    """The innermost user site of the current call stack."""
    for frame in user_frames(_frame(depth)):
        return frame_site(frame)
    return None


def _frame(depth: int) -> FrameType | None:
    """``sys._getframe(depth)`` as the caller would call it, or None where the stack is not
    that deep: on
    CUDA, autograd runs backward in its own device thread, whose stack is a few frames."""
    try:
        return sys._getframe(depth + 1)
    except ValueError:
        return None


def traceback_sites(tb: TracebackType | None) -> list[Site]:
    """User sites of a traceback, innermost first."""
    found: list[Site] = []
    while tb is not None:
        frame = tb.tb_frame
        if is_user_file(frame.f_code.co_filename):
            line = tb.tb_lineno
            column = 1
            positions = list(frame.f_code.co_positions())
            index = tb.tb_lasti // 2
            if 0 <= index < len(positions) and positions[index][0] == line:
                col = positions[index][2]
                column = col + 1 if col is not None else 1
            found.append(Site(os.path.abspath(frame.f_code.co_filename), line, column))
        tb = tb.tb_next
    return found[::-1]
