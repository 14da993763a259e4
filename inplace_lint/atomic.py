"""Replace a file atomically: write beside it, flush to disk, rename over it.

Shared by ``--fix`` (which also checks that the file did not change during the run) and
``--output-file``. The cache keeps its own cheaper writer: it neither fsyncs nor keeps modes.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Callable
from pathlib import Path


def replace_file(
    target: Path,
    data: bytes,
    mode: int,
    *,
    suffix: str,
    unchanged: Callable[[], bool] | None = None,
) -> bool:
    """Write ``data`` to a temporary file beside ``target`` (fsynced, with permission bits
    ``mode``) and rename it over ``target``. ``unchanged``, asked just before the rename,
    can refuse it: then nothing is written and the result is False. An ``OSError`` is
    raised as it comes; the temporary file never outlives a failure."""
    handle, temporary = tempfile.mkstemp(
        dir=target.parent, prefix=f".{target.name}.", suffix=suffix
    )
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(temporary, mode)
        if unchanged is not None and not unchanged():
            os.unlink(temporary)
            return False
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    return True
