"""Pass A: catch writes to tensors that autograd saved for backward, as they happen.

A ``TorchDispatchMode`` sees every aten op and learns from its schema which arguments it writes
(``alias_info.is_write``: ``self`` of ``relu_``, ``out=``, tensor lists of ``_foreach_add_``).
``saved_tensors_hooks`` record each tensor autograd saves, keyed by storage (views of one base
count together), with its version at save time and the user's line that saved it. Installing
the hooks switches off autograd's own version check, so the unpack hook does it again, and
names the line that wrote. A write that reaches a saved tensor through another version counter
(``x.data``) moves no version: backward then silently uses the new values; that is reported
when backward unpacks the tensor. Records hold a detached alias (no reference cycle), so they
die with their graph; ops run by backward itself are ignored, except writes that a custom
``backward`` makes from user code.

Pass A must never let a failing program pass: every saved tensor's version is checked when it
is unpacked, whatever its type (tensor subclasses included; a wrapper subclass whose alias does
not share the version counter is checked on the tensor itself), as autograd would. A failing
unpack does not stop backward at once: the error is held until the backward call returns, so
every write that backward would trip over is reported, then raised as torch raises it.
"""

from __future__ import annotations

import re
import sys
import weakref
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from inplace_lint.dynamic import sites
from inplace_lint.dynamic.coverage import follow_this_thread
from inplace_lint.dynamic.sites import Site

__all__ = ["Detector", "Hit", "ModuleSites", "track_modules"]

#: Signals that the redone version check raised (so the error is ours to attribute).
VERSION_ERROR = "one of the variables needed for gradient computation has been modified by an"


@dataclass
class Write:
    """One in-place write that reached saved storage."""

    site: Site | None
    op: str
    #: Where the in-place module doing the write was built (``nn.ReLU(inplace=True)``).
    module_site: Site | None
    module_path: str | None
    overlaps: bool
    before: int
    #: Called straight from user code (not from inside a torch function or kernel).
    direct: bool = True
    after: int | None = None
    #: Made by a custom ``autograd.Function``'s ``backward`` as autograd ran it.
    in_backward: bool = False


@dataclass
class Hit:
    """A confirmed hazard found by pass A."""

    kind: str  # "raises" (the version moved) or "silent" (changed without a version bump)
    write: Write
    saved_site: Site | None
    saved_op: str
    shape: tuple[int, ...]
    saved_version: int
    version: int
    #: For a write that autograd refused as it ran (a view of a hook's output, ...): its error.
    refused: str = ""

    @property
    def sites(self) -> tuple[Site, ...]:
        """Where to report it: the line that built an in-place module (``inplace=True``, what
        to change) before the line whose call ran it, else the write's line."""
        found = [s for s in (self.write.module_site, self.write.site) if s is not None]
        return tuple(found)

    def evidence(self) -> str:
        if self.refused:
            module = f" in {self.write.module_path}(inplace=True)" if self.write.module_path else ""
            return f"{self.write.op}{module} raises as it writes: {self.refused}"
        saved = f"saved by {self.saved_op}"
        if self.saved_site is not None:
            saved += f" at line {self.saved_site.line}"
        elsewhere = self.write.site is not None and self.saved_site is not None
        if elsewhere and self.saved_site.path != self.write.site.path:  # type: ignore[union-attr]
            saved += f" of {self.saved_site.short().rsplit(':', 1)[0]}"  # type: ignore[union-attr]
        what = f"{self.write.op} wrote a tensor of shape {list(self.shape)} {saved}"
        if self.kind == "raises":
            return (
                f"{what}; backward fails: 'modified by an inplace operation' "
                f"(version {self.version}, expected {self.saved_version})"
            )
        return f"{what} without a version bump: backward silently used the new values"


class _Saved:
    """What the pack hook returns: a detached alias plus where and when it was saved."""

    __slots__ = (
        "__weakref__",
        "key",
        "op",
        "owner",
        "shape",
        "site",
        "span",
        "tensor",
        "version",
        "writes",
    )

    def __init__(self, tensor: torch.Tensor, site: Site | None, key: int | None) -> None:
        self.tensor = tensor.detach()
        self.version = tensor._version
        #: The saved tensor itself, kept only where its alias has a version counter of its own
        #: (wrapper subclasses), so that its version can still be checked.
        self.owner = tensor if _own_dispatch(tensor) else None
        self.site = site
        self.key = key
        self.span = _span(tensor) if key is not None else (0, 0)
        self.op = "an op"
        self.shape = tuple(tensor.shape)
        self.writes: list[Write] = []


def _own_dispatch(tensor: Any) -> bool:
    """Whether ``tensor`` is a wrapper subclass (its own ``__torch_dispatch__``)."""
    dispatch = getattr(type(tensor), "__torch_dispatch__", None)
    return dispatch is not None and dispatch is not torch.Tensor.__torch_dispatch__


def _storage_key(tensor: Any) -> int | None:
    """The storage a tensor (or plain subclass, ``tv_tensors.Image``) addresses; ``None`` for
    wrapper subclasses, sparse, meta and storage-less tensors."""
    if not isinstance(tensor, torch.Tensor) or _own_dispatch(tensor):
        return None
    if tensor.layout != torch.strided or tensor.device.type == "meta":
        return None
    try:
        storage = torch.Tensor.untyped_storage(tensor)
    except Exception:  # tensors without storage (nested, functional)
        return None
    return int(storage._cdata)


def _span(tensor: torch.Tensor) -> tuple[int, int]:
    """The byte range of the storage that ``tensor`` can address."""
    size = tensor.element_size()
    start = tensor.storage_offset() * size
    if tensor.numel() == 0:
        return (start, start)
    extent = sum((n - 1) * abs(s) for n, s in zip(tensor.shape, tensor.stride(), strict=True))
    return (start, start + (extent + 1) * size)


#: Storages up to this many elements get the exact element test; larger ones keep the byte
#: ranges (a conservative answer: they may share elements).
_EXACT_ELEMENTS = 1 << 22


def _shares_elements(
    a: torch.Tensor, span_a: tuple[int, int], b: torch.Tensor, span_b: tuple[int, int]
) -> bool:
    """Whether two tensors on one storage address a common element. Overlapping byte ranges
    are not enough for strided views: ``cache[:, :4]`` spans batch 0's rows 4-5, which
    ``cache[:, 4:6]`` writes, without holding them. Tested exactly (offsets of both laid over
    one index range) where the storage is small enough and both have one element size."""
    if not (span_a[0] < span_b[1] and span_b[0] < span_a[1]):
        return False
    size = a.element_size()
    if size != b.element_size() or (a.is_contiguous() and b.is_contiguous()):
        return True  # contiguous ranges that overlap share elements
    count = max(span_a[1], span_b[1]) // size
    if count > _EXACT_ELEMENTS:
        return True
    with torch.no_grad():
        index = torch.arange(count, device=a.device)
        mine = torch.as_strided(index, a.shape, a.stride(), a.storage_offset()).reshape(-1)
        theirs = torch.as_strided(index, b.shape, b.stride(), b.storage_offset()).reshape(-1)
        return bool(torch.isin(mine, theirs).any())


def _written(func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[torch.Tensor]:
    """The tensors ``func`` writes, by its schema (positional, keyword-only, tensor lists)."""
    positions = _WRITES.get(func)
    if positions is None:
        positions = []
        for index, arg in enumerate(func._schema.arguments):
            if arg.alias_info is not None and arg.alias_info.is_write:
                positions.append((index, arg.name, arg.kwarg_only))
        _WRITES[func] = positions
    found: list[torch.Tensor] = []
    for index, name, kwarg_only in positions:
        value = kwargs.get(name) if kwarg_only or index >= len(args) else args[index]
        if isinstance(value, torch.Tensor):
            found.append(value)
        elif isinstance(value, list | tuple):
            found.extend(v for v in value if isinstance(v, torch.Tensor))
    return found


_WRITES: dict[Any, list[tuple[int, str, bool]]] = {}


class ModuleSites:
    """Where each module was built, and the stack of modules running now."""

    def __init__(self) -> None:
        self.built: weakref.WeakKeyDictionary[torch.nn.Module, Site] = weakref.WeakKeyDictionary()
        #: modules whose ``inplace`` a user line set to True after building them
        self.flagged: weakref.WeakKeyDictionary[torch.nn.Module, Site] = weakref.WeakKeyDictionary()
        self.stack: list[torch.nn.Module] = []
        #: Told of an in-place module whose forward raised.
        self.on_error: Callable[[torch.nn.Module, BaseException], None] | None = None

    def site_of(self, module: torch.nn.Module | None) -> Site | None:
        """Where the module was made in-place: the line that set ``module.inplace = True``
        after building it (``for m in net.modules(): m.inplace = True``), else where it was
        built."""
        if module is None:
            return None
        return self.flagged.get(module) or self.built.get(module)

    def running_inplace(self) -> torch.nn.Module | None:
        if self.stack and getattr(self.stack[-1], "inplace", False) is True:
            return self.stack[-1]
        return None


@contextmanager
def track_modules(tracker: ModuleSites) -> Iterator[ModuleSites]:
    """Record module construction sites and keep a stack of running modules."""
    original_init = torch.nn.Module.__init__

    def init(self: torch.nn.Module, *args: Any, **kwargs: Any) -> None:
        original_init(self, *args, **kwargs)
        if self not in tracker.built:
            site = sites.user_site(2)
            if site is not None:
                tracker.built[self] = site

    def pre(module: torch.nn.Module, _args: Any) -> None:
        tracker.stack.append(module)

    def post(module: torch.nn.Module, _args: Any, _out: Any) -> None:
        error = sys.exc_info()[1]  # set when forward raised (an always-call hook)
        if error is not None and tracker.on_error is not None and module.__dict__.get("inplace"):
            tracker.on_error(module, error)
        if tracker.stack and tracker.stack[-1] is module:
            tracker.stack.pop()

    original_setattr = torch.nn.Module.__setattr__

    def setattr_(self: torch.nn.Module, name: str, value: Any) -> None:
        original_setattr(self, name, value)
        if name == "inplace" and value is True and self in tracker.built:
            site = sites.user_site(2)
            if site is not None and site != tracker.built[self]:
                tracker.flagged[self] = site

    torch.nn.Module.__init__ = init  # type: ignore[method-assign]
    torch.nn.Module.__setattr__ = setattr_  # type: ignore[method-assign]
    handles = [
        torch.nn.modules.module.register_module_forward_pre_hook(pre),
        torch.nn.modules.module.register_module_forward_hook(post, always_call=True),
    ]
    try:
        yield tracker
    finally:
        torch.nn.Module.__init__ = original_init  # type: ignore[method-assign]
        torch.nn.Module.__setattr__ = original_setattr  # type: ignore[method-assign]
        for handle in handles:
            handle.remove()


class _Mode(TorchDispatchMode):
    @classmethod
    def _should_skip_dynamo(cls) -> bool:
        """torch wraps a mode's handler in ``torch._dynamo.disable`` when this is true, which
        imports all of dynamo (1-2 s of CPU) at the first op; pass A runs eager code, so the
        wrapper is kept only where dynamo is loaded already (the target may compile)."""
        return "torch._dynamo" in sys.modules

    def __init__(self, detector: Detector) -> None:
        super().__init__()
        self.detector = detector

    def __torch_dispatch__(
        self, func: Any, types: Any, args: tuple[Any, ...] = (), kwargs: Any = None
    ) -> Any:
        kwargs = kwargs or {}
        follow_this_thread()  # autograd's device thread on CUDA runs user backward code too
        detector = self.detector
        if detector.pending:
            detector.settle()
        written = _written(func, args, kwargs)
        # ops of backward formulas are torch's; a custom ``backward`` is user code
        if written and (torch._C._current_autograd_node() is None or sites.called_from_user(2)):
            detector.on_write(func, written)
        return func(*args, **kwargs)


@dataclass
class Detector:
    """Pass A; use as a context manager around the user's forward and backward."""

    modules: ModuleSites = field(default_factory=ModuleSites)
    hits: list[Hit] = field(default_factory=list)
    by_storage: dict[int, list[weakref.ref[_Saved]]] = field(default_factory=dict)
    pending: list[tuple[_Saved, Write]] = field(default_factory=list)
    #: Version errors held per running backward call (innermost last).
    held: list[list[RuntimeError]] = field(default_factory=list)
    _stack: ExitStack | None = None

    # -- hooks

    def pack(self, tensor: torch.Tensor) -> _Saved:
        if torch._C._current_autograd_node() is not None:
            return _Saved(tensor, None, None)
        if self.pending:
            self.settle()
        key = _storage_key(tensor)
        saved = _Saved(tensor, sites.user_site(2) if key is not None else None, key)
        if key is not None:
            refs = self.by_storage.setdefault(key, [])
            if len(refs) > 64:
                refs[:] = [r for r in refs if r() is not None]
            refs.append(weakref.ref(saved))
        return saved

    def unpack(self, saved: _Saved) -> torch.Tensor:
        if self.pending:
            self.settle()
        tensor = saved.tensor
        version = (saved.owner if saved.owner is not None else tensor)._version
        if version != saved.version:
            self._version_moved(saved, version)
            return tensor
        if saved.key is None or not saved.writes:
            return tensor
        silent = [w for w in saved.writes if w.overlaps and w.direct and w.after == w.before]
        if silent:
            hit = Hit("silent", silent[0], saved.site, saved.op, saved.shape, version, version)
            self._add(hit)
            saved.writes.clear()
        return tensor

    def _version_moved(self, saved: _Saved, version: int) -> None:
        """Record the hazard (when the write was seen) and the error autograd would raise;
        the error is raised when the backward call returns (at once outside one)."""
        node = torch._C._current_autograd_node()
        if node is not None:
            saved.op = _node_name(node)
        where = ""
        if saved.writes:
            moved = [w for w in saved.writes if w.after is None or w.after != w.before]
            # The first write that moved the version, and every later one written straight
            # from user code (``att[:, 0] = 0`` then ``att[:, -1] = 0``); an in-place module
            # that later runs on the same alias (``x += y`` then ``self.relu(x)``) only writes
            # it because the first write kept the alias.
            writes = moved or saved.writes[:1]
            for write in writes[:1] + [w for w in writes[1:] if w.direct and not w.module_site]:
                hit = Hit(
                    "raises", write, saved.site, saved.op, saved.shape, saved.version, version
                )
                self._add(hit)
            first = (moved or saved.writes)[0]
            where = f" (written at {first.site.short()})" if first.site else ""
        tensor = saved.tensor
        error = RuntimeError(
            f"{VERSION_ERROR} inplace operation: [{tensor.type()} {list(tensor.shape)}], "
            f"saved by {saved.op}, is at version {version}; expected version "
            f"{saved.version} instead{where}"
        )
        if not self.held:
            raise error
        self.held[-1].append(error)

    def _add(self, hit: Hit) -> None:
        key = (hit.kind, hit.sites)
        if all((h.kind, h.sites) != key for h in self.hits):
            self.hits.append(hit)

    # -- writes

    def on_write(self, func: Any, written: list[torch.Tensor]) -> None:
        site_done = False
        site: Site | None = None
        direct = sites.called_from_user(3)
        in_backward = torch._C._current_autograd_node() is not None
        module = self.modules.running_inplace()
        for tensor in written:
            key = _storage_key(tensor)
            refs = self.by_storage.get(key) if key is not None else None
            if not refs:
                continue
            span = _span(tensor)
            for ref in refs:
                saved = ref()
                if saved is None or saved.tensor is tensor:
                    continue
                if not site_done:
                    site = sites.user_site(3)
                    site_done = True
                overlaps = _shares_elements(tensor, span, saved.tensor, saved.span)
                write = Write(
                    site,
                    _op_name(func),
                    self.modules.site_of(module),
                    type(module).__name__ if module is not None else None,
                    overlaps,
                    saved.tensor._version,
                    direct,
                    in_backward=in_backward,
                )
                saved.writes.append(write)
                self.pending.append((saved, write))

    def refused(self, module: torch.nn.Module, error: BaseException) -> None:
        """An in-place module whose write autograd refused as it ran (its output is a view
        made by a hook, ...): report it at the line that built the module (``inplace=True``),
        which the traceback cannot show."""
        built = self.modules.site_of(module)
        if built is None or not isinstance(error, RuntimeError):
            return
        if not re.search("inplace|in-place", str(error), re.IGNORECASE):
            return
        text = " ".join(str(error).split())
        write = Write(None, "the in-place write", built, type(module).__name__, True, 0)
        self._add(Hit("raises", write, None, "", (), 0, 0, refused=text[:200]))

    def settle(self) -> None:
        """Read versions after the writing ops returned (autograd bumps them afterwards)."""
        for saved, write in self.pending:
            write.after = saved.tensor._version
        self.pending.clear()

    # -- context

    def __enter__(self) -> Detector:
        sites.is_user_file.cache_clear()
        sites._skipped_roots.cache_clear()
        stack = ExitStack()
        self.modules.on_error = self.refused
        stack.enter_context(track_modules(self.modules))
        stack.enter_context(torch.autograd.graph.saved_tensors_hooks(self.pack, self.unpack))
        stack.enter_context(_Mode(self))
        stack.enter_context(_holding(self))
        self._stack = stack
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._stack is not None
        self._stack.close()
        self.settle()
        self._stack = None


@contextmanager
def _holding(detector: Detector) -> Iterator[None]:
    """Run each backward call to its end, then raise the first version error it held."""
    import torch.autograd as autograd

    original = autograd._engine_run_backward

    def run_backward(*args: Any, **kwargs: Any) -> Any:
        detector.held.append([])
        try:
            result = original(*args, **kwargs)
        except Exception:
            errors = detector.held.pop()
            if errors:
                raise errors[0] from None
            raise
        errors = detector.held.pop()
        if errors:
            raise errors[0]
        return result

    autograd._engine_run_backward = run_backward
    try:
        yield
    finally:
        autograd._engine_run_backward = original


def _flat(value: Any) -> Iterator[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, list | tuple):
        for item in value:
            if isinstance(item, torch.Tensor):
                yield item


def _op_name(func: Any) -> str:
    name = str(getattr(func, "__name__", func))
    base = name.split(".")[0]
    return f"aten.{base}"


def _node_name(node: Any) -> str:
    """``SigmoidBackward0`` -> ``sigmoid``; custom functions keep their class name."""
    name = type(node).__name__
    trimmed = re.sub(r"Backward\d*$", "", name)
    if trimmed == name or trimmed == "":
        return name
    return re.sub(r"(?<!^)(?=[A-Z])", "_", trimmed).lower()
