"""What the other files of a run tell one file (project mode; built by ``project.py``).

Plain frozen values, so they travel to worker processes and into cache keys.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass


@dataclass(frozen=True)
class ForeignFunction:
    """A function of another file of the run that this file imports and calls."""

    local: str  # the name this file calls it by
    name: str  # its name where it is defined
    display: str  # the defining file, as the run names it
    line: int  # the line of its ``def`` there
    source: str  # its definition, decorators included
    imports: str  # the import statements of its file (the torch names its body uses)
    #: "class" for a module class whose instances this file builds and calls (its source is
    #: the whole class; its ``forward`` is what is summarised), else "function"
    kind: str = "function"


@dataclass(frozen=True)
class ProjectView:
    """What the other files of the run say to one file (see the module docstring)."""

    foreign: tuple[ForeignFunction, ...] = ()
    #: this file's top-level functions that another file of the run imports, calls and judges,
    #: and ``Class.forward`` for its classes whose instances another file builds and calls
    called_elsewhere: frozenset[str] = frozenset()
    #: this file's top-level functions that other files of the run call, with the grad
    #: modes of those calls (True: grad on)
    modes_elsewhere: tuple[tuple[str, tuple[bool, ...]], ...] = ()

    def digest(self) -> bytes:
        """A key part for the cache: the findings of a file depend on its view too."""
        h = hashlib.blake2b(digest_size=16)
        for f in self.foreign:
            for part in (f.local, f.name, f.display, str(f.line), f.source, f.imports, f.kind):
                h.update(part.encode("utf-8", "surrogateescape") + b"\0")
        h.update(",".join(sorted(self.called_elsewhere)).encode())
        h.update(repr(self.modes_elsewhere).encode())
        return h.digest()
