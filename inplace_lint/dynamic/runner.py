"""Run a subject (a script, a build function, a training step, a model) once, seeded.

A run can flip one source site to its out-of-place twin: sites in the subject's own file are
flipped by executing the file's twin source (``inplace_lint.dynamic.twin``, which keeps line
numbers); sites in other files by swapping the ``__code__`` of the live functions that hold
them for the twin's code (restored afterwards). Each run records the user lines it executed.
"""

from __future__ import annotations

import builtins
import copy
import functools
import math
import os
import random
import sys
import types
import warnings
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, ExitStack, contextmanager
from dataclasses import dataclass, field
from inspect import CO_OPTIMIZED
from pathlib import Path
from types import CodeType
from typing import Any

import torch

from inplace_lint.dynamic.coverage import Coverage
from inplace_lint.dynamic.device import onto_device
from inplace_lint.dynamic.passa import Detector, Hit
from inplace_lint.dynamic.state import StateGuard
from inplace_lint.dynamic.twin import out_of_place_twin

__all__ = ["BadInput", "Outcome", "Subject", "as_the_user_runs", "compare", "environment", "run"]


class BadInput(Exception):
    """The target cannot be run for a reason that is not an in-place hazard."""


@dataclass
class Outcome:
    """What one run produced."""

    error: BaseException | None = None
    values: dict[str, torch.Tensor] = field(default_factory=dict)
    hits: list[Hit] = field(default_factory=list)
    lines: set[tuple[str, int]] = field(default_factory=set)
    files: set[str] = field(default_factory=set)
    flipped: bool = True
    #: the random generators' states when the run ended (``rng_state``)
    rng: bytes = b""

    @property
    def ok(self) -> bool:
        return self.error is None


# --------------------------------------------------------------------------- subjects


class Subject:
    """Something to run repeatedly; ``source`` replaces the text of ``path`` when given."""

    label: str = ""
    path: str | None = None
    seed: int = 0
    #: Set by ``execute``: whether the subject built ``(model, inputs)`` and drove it.
    builds: bool = False

    def execute(self, source: str | None) -> dict[str, torch.Tensor]:
        raise NotImplementedError

    @contextmanager
    def guarded(self) -> Iterator[None]:
        """Around one run: capture the state the run can reach, put it back afterwards."""
        guard = self.__dict__.get("_guard")
        if guard is None:
            fresh = self.path if hasattr(self, "source") else None  # re-executed each run
            # a model given with its inputs runs as a deep copy: only a step reaches state
            step = getattr(self, "target", None) if getattr(self, "is_step", False) else None
            guard = self._guard = StateGuard(fresh, step)
        guard.capture()
        try:
            yield
        finally:
            guard.restore()

    def build(self, source: str | None) -> tuple[Any, tuple[Any, ...], dict[str, Any]] | None:
        """The model and inputs, for subjects that have them (the fx route)."""
        return None

    loss: Callable[[Any], torch.Tensor] | None = None


def _read(path: str) -> str:
    from inplace_lint.source import decode

    return decode(Path(path).read_bytes()).text


class ScriptSubject(Subject):
    """``confirm path.py``: the file runs as ``__main__``, a zero-argument training step."""

    def __init__(self, path: str, seed: int = 0) -> None:
        self.path = os.path.abspath(path)
        self.label = path
        self.seed = seed
        try:
            self.source = _read(self.path)
            compile(self.source, self.path, "exec")
        except (OSError, ValueError, SyntaxError) as exc:
            raise BadInput(f"cannot load {path}: {exc}") from exc

    def execute(self, source: str | None) -> dict[str, torch.Tensor]:
        code = compile(source or self.source, self.path, "exec")
        namespace: dict[str, Any] = {
            "__name__": "__main__",
            "__file__": self.path,
            "__builtins__": builtins,
        }
        argv = sys.argv[:]
        sys.argv = [self.path]
        try:
            exec(code, namespace)
        finally:
            sys.argv = argv
            self.namespace = namespace
        return namespace_snapshot(namespace)


class FunctionSubject(Subject):
    """``file.py::name`` or ``pkg.mod:name``: a build function or a zero-argument step."""

    def __init__(self, path: str, name: str, module_name: str, label: str, seed: int = 0) -> None:
        self.path = os.path.abspath(path)
        self.name = name
        self.module_name = module_name
        self.label = label
        self.seed = seed
        try:
            self.source = _read(self.path)
        except (OSError, ValueError) as exc:
            raise BadInput(f"cannot read {path}: {exc}") from exc

    def _function(self, source: str | None) -> Callable[[], Any]:
        module = types.ModuleType(self.module_name)
        module.__file__ = self.path
        if "." in self.module_name:
            module.__package__ = self.module_name.rpartition(".")[0]
        old = sys.modules.get(self.module_name)
        sys.modules[self.module_name] = module
        try:
            exec(compile(source or self.source, self.path, "exec"), module.__dict__)
        except BaseException as exc:
            raise _Load(exc) from exc
        finally:
            if old is not None:
                sys.modules[self.module_name] = old
            else:
                sys.modules.pop(self.module_name, None)
        value: Any = module
        for part in self.name.split("."):
            if not hasattr(value, part):
                raise BadInput(f"{self.label}: {self.path} has no attribute {self.name!r}")
            value = getattr(value, part)
        if not callable(value):
            raise BadInput(f"{self.label}: {self.name!r} is not callable")
        return value  # type: ignore[no-any-return]

    def build(self, source: str | None) -> tuple[Any, tuple[Any, ...], dict[str, Any]] | None:
        result = _call_target(self._function(source), self.label)
        return _as_build(result)

    def execute(self, source: str | None) -> dict[str, torch.Tensor]:
        result = _call_target(self._function(source), self.label)
        built = _as_build(result)
        self.builds = built is not None
        if built is not None:
            return drive(*built, loss=self.loss)
        return result_snapshot(result)


class ObjectSubject(Subject):
    """The Python API: a model (or callable) with example inputs, or a zero-argument step."""

    def __init__(
        self,
        target: Any,
        inputs: tuple[Any, ...],
        loss: Callable[[Any], torch.Tensor] | None,
        seed: int = 0,
        kwargs: dict[str, Any] | None = None,
    ) -> None:
        self.target = target
        self.inputs = inputs
        self.kwargs = dict(kwargs or {})
        self.loss = loss
        self.seed = seed
        where = _source_file(target)
        self.path = where
        self.label = getattr(target, "__qualname__", type(target).__qualname__)

    @property
    def is_step(self) -> bool:
        """A zero-argument step (or build function) rather than a model with inputs."""
        no_inputs = not self.inputs and not self.kwargs
        return no_inputs and not isinstance(self.target, torch.nn.Module)

    def build(self, source: str | None) -> tuple[Any, tuple[Any, ...], dict[str, Any]] | None:
        if self.is_step:
            return _as_build(self.target())
        model = self.target
        if isinstance(model, torch.nn.Module):
            model = copy.deepcopy(model)
        args, kwargs = _split_inputs(self.inputs)
        return model, args, {**kwargs, **self.kwargs}

    def execute(self, source: str | None) -> dict[str, torch.Tensor]:
        if self.is_step:
            result = self.target()
            built = _as_build(result)
            self.builds = built is not None
            if built is not None:
                return drive(*built, loss=self.loss)
            return result_snapshot(result)
        built = self.build(None)
        assert built is not None
        self.builds = True
        return drive(*built, loss=self.loss)


class _Load(Exception):
    """The target module raised while it was executed."""


def _source_file(target: Any) -> str | None:
    import inspect

    obj = target if not isinstance(target, torch.nn.Module) else type(target)
    try:
        found = inspect.getsourcefile(obj)
    except (TypeError, OSError):
        return None
    return os.path.abspath(found) if found else None


def _call_target(function: Callable[[], Any], label: str) -> Any:
    return function()


def _as_build(result: Any) -> tuple[Any, tuple[Any, ...], dict[str, Any]] | None:
    """``(model_or_callable, example_inputs)`` -> ``(model, args, kwargs)``; else ``None``."""
    if not (isinstance(result, tuple | list) and len(result) == 2):
        return None
    model, inputs = result
    if isinstance(model, torch.Tensor) or not callable(model):
        return None
    args, kwargs = _split_inputs(inputs)
    return model, args, kwargs


def _split_inputs(inputs: Any) -> tuple[tuple[Any, ...], dict[str, Any]]:
    if isinstance(inputs, dict):
        return (), dict(inputs)
    if isinstance(inputs, tuple | list):
        if len(inputs) == 1 and isinstance(inputs[0], tuple | list):
            return tuple(inputs[0]), {}
        return tuple(inputs), {}
    return (inputs,), {}


# --------------------------------------------------------------------------- driving a model


def _clone(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        copied = value.detach().clone()
        return copied.requires_grad_(value.requires_grad) if value.is_leaf else copied
    if isinstance(value, list | tuple):
        return type(value)(_clone(v) for v in value)
    if isinstance(value, dict):
        return {k: _clone(v) for k, v in value.items()}
    return value


def _tensors(value: Any, prefix: str) -> Iterator[tuple[str, torch.Tensor]]:
    if isinstance(value, torch.Tensor):
        yield prefix, value
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            yield from _tensors(item, f"{prefix}[{index}]")
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _tensors(item, f"{prefix}[{key!r}]")
    elif hasattr(value, "__dataclass_fields__") or hasattr(value, "_fields"):
        for key in getattr(value, "_fields", None) or value.__dataclass_fields__:
            yield from _tensors(getattr(value, key), f"{prefix}.{key}")


def default_loss(output: Any) -> torch.Tensor:
    """A seeded random projection of every float output (a plain sum hides softmax grads)."""
    generator = torch.Generator().manual_seed(1234)
    total: torch.Tensor | None = None
    for _, tensor in _tensors(output, "output"):
        if not (tensor.is_floating_point() or tensor.is_complex()) or not tensor.requires_grad:
            continue
        # the generator is the CPU's: under ``--device cuda`` the default device is not
        weight = torch.randn(tensor.shape, generator=generator, dtype=torch.float32, device="cpu")
        term = (tensor.real if tensor.is_complex() else tensor) * weight.to(tensor.device)
        total = term.sum() if total is None else total + term.sum()
    if total is None:
        raise BadInput("the model's output has no tensor that requires grad")
    return total


def drive(
    model: Any,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    loss: Callable[[Any], torch.Tensor] | None = None,
) -> dict[str, torch.Tensor]:
    """Forward, loss, backward; snapshot outputs, input gradients and parameter gradients."""
    args, kwargs = _clone(args), _clone(kwargs)
    model, args, kwargs = onto_device((model, args, kwargs))  # --device: no-op without it
    output = model(*args, **kwargs)
    value = loss(output) if loss is not None else default_loss(output)
    if not isinstance(value, torch.Tensor) or value.numel() != 1:
        raise BadInput("the loss must be a tensor with one element")
    value.backward()
    values: dict[str, torch.Tensor] = {}
    for name, tensor in _tensors(output, "output"):
        _keep(values, name, tensor)
    for name, tensor in _tensors((args, kwargs), "input"):
        if tensor.is_leaf:
            _keep(values, f"{name}.grad", tensor.grad)
        _keep(values, f"{name} (after the run)", tensor)  # the model may write its inputs
    if isinstance(model, torch.nn.Module):
        for name, param in model.named_parameters():
            _keep(values, f"{name}.grad", param.grad)
    return values


def _keep(values: dict[str, torch.Tensor], key: str, tensor: Any) -> None:
    if isinstance(tensor, torch.Tensor) and tensor.layout == torch.strided:
        values[key] = tensor.detach().clone()


def namespace_snapshot(namespace: dict[str, Any]) -> dict[str, torch.Tensor]:
    """Tensors, gradients and module gradients reachable from module-level names."""
    values: dict[str, torch.Tensor] = {}
    for name, value in namespace.items():
        if name.startswith("__"):
            continue
        if isinstance(value, torch.Tensor):
            _keep(values, name, value)
            if value.is_leaf or value.retains_grad:
                _keep(values, f"{name}.grad", value.grad)
        elif isinstance(value, torch.nn.Module):
            for pname, param in value.named_parameters():
                _keep(values, f"{name}.{pname}.grad", param.grad)
    return values


def result_snapshot(result: Any) -> dict[str, torch.Tensor]:
    """What a training step returned: tensors (and leaf gradients) and modules' gradients."""
    values: dict[str, torch.Tensor] = {}
    items = result if isinstance(result, list | tuple) else [result]
    for index, item in enumerate(items):
        if isinstance(item, torch.nn.Module):
            for pname, param in item.named_parameters():
                _keep(values, f"result[{index}].{pname}.grad", param.grad)
            continue
        for name, tensor in _tensors(item, f"result[{index}]"):
            _keep(values, name, tensor)
            if tensor.is_leaf:
                _keep(values, f"{name}.grad", tensor.grad)
    return values


def compare(
    a: dict[str, torch.Tensor], b: dict[str, torch.Tensor]
) -> tuple[float, str | None, bool]:
    """Largest absolute difference, the name where it is, and whether it exceeds tolerance.

    Entries compare as close when ``|a - b| <= 1e-6 + 1e-5 * |b|`` elementwise; NaNs in the
    same places count as equal; a shape change is an infinite difference.
    """
    worst, where, differs = 0.0, None, False
    for key in sorted(a.keys() & b.keys()):
        left, right = a[key], b[key]
        if left.shape != right.shape or left.dtype != right.dtype:
            return math.inf, key, True
        if left.numel() == 0:
            continue
        if left.is_complex():
            left, right = torch.view_as_real(left), torch.view_as_real(right)
        left, right = left.to(torch.float64), right.to(torch.float64)
        nan = left.isnan() & right.isnan()
        same = (left == right) | nan
        diff = torch.where(same, torch.zeros_like(left), (left - right).abs())
        diff = torch.where(diff.isnan(), torch.full_like(diff, math.inf), diff)
        big = float(diff.max())
        if bool((diff > 1e-6 + 1e-5 * right.abs().nan_to_num(0.0)).any()):
            differs = True
        if big > worst:
            worst, where = big, key
    return worst, where, differs


# --------------------------------------------------------------------------- flipping sites


def _function_codes(code: CodeType) -> Iterator[CodeType]:
    """Outermost function bodies under ``code`` (looking inside class bodies)."""
    for const in code.co_consts:
        if isinstance(const, CodeType):
            if const.co_flags & CO_OPTIMIZED:
                yield const
            else:
                yield from _function_codes(const)


def _code_lines(code: CodeType) -> set[int]:
    lines = {line for _, _, line in code.co_lines() if line is not None}
    for const in code.co_consts:
        if isinstance(const, CodeType):
            lines |= _code_lines(const)
    return lines


def _live_functions(path: str) -> Iterator[types.FunctionType]:
    """Functions defined in ``path`` reachable from its loaded modules (methods included)."""
    seen: set[int] = set()

    def walk(value: Any, depth: int) -> Iterator[types.FunctionType]:
        if id(value) in seen or depth > 4:
            return
        seen.add(id(value))
        if isinstance(value, staticmethod | classmethod):
            value = value.__func__
        if isinstance(value, property):
            for part in (value.fget, value.fset, value.fdel):
                if part is not None:
                    yield from walk(part, depth + 1)
            return
        if isinstance(value, types.FunctionType):
            if os.path.abspath(value.__code__.co_filename) == path:
                yield value
            wrapped = getattr(value, "__wrapped__", None)
            if wrapped is not None:
                yield from walk(wrapped, depth + 1)
            return
        if isinstance(value, type) and getattr(value, "__module__", None) is not None:
            for item in list(vars(value).values()):
                yield from walk(item, depth + 1)
            return
        wrapped = getattr(value, "__wrapped__", None)
        if callable(value) and isinstance(wrapped, types.FunctionType):
            yield from walk(wrapped, depth + 1)

    for module in list(sys.modules.values()):
        file = getattr(module, "__file__", None)
        if not file or os.path.abspath(file) != path:
            continue
        for item in list(vars(module).values()):
            yield from walk(item, 0)


@contextmanager
def swapped(path: str, line: int) -> Iterator[bool]:
    """Run the twin of ``path`` at ``line`` by swapping the code of the live function."""
    try:
        source = _read(path)
        twin = _twin(source, frozenset({line}))
    except Exception:
        yield False
        return
    if twin == source:
        yield False
        return
    twin_code = compile(twin, path, "exec")
    targets = [c for c in _function_codes(twin_code) if line in _code_lines(c)]
    if not targets:
        yield False
        return
    target = targets[0]
    key = (target.co_qualname, target.co_firstlineno)
    done: list[tuple[types.FunctionType, CodeType]] = []
    for function in _live_functions(path):
        code = function.__code__
        if (code.co_qualname, code.co_firstlineno) != key:
            continue
        if code.co_freevars != target.co_freevars:
            continue
        done.append((function, code))
        function.__code__ = target
    try:
        yield bool(done)
    finally:
        for function, code in done:
            function.__code__ = code


# --------------------------------------------------------------------------- one run


def _seed(seed: int) -> None:
    """``torch.manual_seed``; only the CPU generator when torch has no accelerator, where the
    rest of ``manual_seed`` only queues lazy seeds for absent backends, formatting the
    caller's stack for each (milliseconds under a deep stack)."""
    accelerator = getattr(torch, "accelerator", None)
    if accelerator is not None and not accelerator.is_available():
        torch.default_generator.manual_seed(seed)
    else:
        torch.manual_seed(seed)


def _deterministic(mode: bool, warn_only: bool) -> None:
    """``torch.use_deterministic_algorithms`` without importing inductor when nothing has.

    The public function imports ``torch._inductor.config`` (and with it ``torch._dynamo``) to
    set inductor's copy of the flag: seconds of start-up for every ``confirm`` run, and once
    ``torch._dynamo`` is loaded torch wraps each dispatch mode's handler in
    ``torch._dynamo.disable``. When inductor is not loaded there is no copy to keep in step, so
    only the kernels' flag is set; once it is loaded (the user's code compiles) the public
    function is used.
    """
    setter = getattr(torch._C, "_set_deterministic_algorithms", None)
    if "torch._inductor.config" in sys.modules or setter is None:
        torch.use_deterministic_algorithms(mode, warn_only=warn_only)
    else:
        setter(mode, warn_only=warn_only)


#: Whether runs switch deterministic algorithms on (the innermost ``as_the_user_runs`` wins).
_DETERMINISTIC = [True]


@contextmanager
def as_the_user_runs() -> Iterator[None]:
    """Runs inside keep the user's ``use_deterministic_algorithms`` setting. torch changes
    what some ops save when it is on: on CUDA, ``F.pad(mode="replicate")``, bilinear and
    trilinear ``interpolate`` and ``max_pool3d`` switch to decompositions whose backward
    needs no input values, so a write that makes the program raise does not under the
    setting. Whether a program raises is judged as the user runs it; only runs whose values
    are compared (the reference and twins of a program that runs) switch the setting on."""
    _DETERMINISTIC.append(False)
    try:
        yield
    finally:
        _DETERMINISTIC.pop()


@contextmanager
def _quiet_and_restored(seed: int) -> Iterator[None]:
    grad = torch.is_grad_enabled()
    dtype = torch.get_default_dtype()
    cwd = os.getcwd()
    deterministic = torch.are_deterministic_algorithms_enabled()
    warn_only = torch.is_deterministic_algorithms_warn_only_enabled()
    random.seed(seed)
    _seed(seed)
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        numpy.random.seed(seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if _DETERMINISTIC[-1]:  # deterministic kernels where torch has them, to compare runs
            _deterministic(True, warn_only=True)
        try:
            yield
        finally:
            _deterministic(deterministic, warn_only=warn_only)
            torch.set_grad_enabled(grad)
            torch.set_default_dtype(dtype)
            os.chdir(cwd)


@contextmanager
def environment(subject: Subject) -> Iterator[None]:
    """Seeded, warnings off, global state restored, the subject's folder on ``sys.path``."""
    with _quiet_and_restored(subject.seed):
        folder = os.path.dirname(subject.path) if subject.path is not None else None
        if folder is not None:
            sys.path.insert(0, folder)
        try:
            yield
        finally:
            if folder is not None:
                _remove_path(folder)


@functools.lru_cache(maxsize=16)
def _twin(source: str, lines: frozenset[int]) -> str:
    """The out-of-place twin of ``source`` on ``lines``; confirming cascading sites asks for
    the twin of the same confirmed lines once per candidate."""
    return out_of_place_twin(source, lines=set(lines))


def run(
    subject: Subject,
    flip: tuple[str, int] | None = None,
    detect: bool = False,
    cover: bool = False,
    also: frozenset[int] = frozenset(),
    watch: AbstractContextManager[object] | None = None,
    guard: frozenset[int] = frozenset(),
    skip: frozenset[int] = frozenset(),
) -> Outcome:
    """One seeded run; ``flip`` makes one site out of place; ``detect`` adds pass A;
    ``watch`` is entered around the run (a recorder); ``guard``: lines of a subject run from
    its source that run under ``torch.no_grad()`` (``no_grad_lines``); ``skip``: lines of it
    that do not run (``skip_lines``).

    ``also`` flips more lines of the same file with it, where the subject is a script run
    from its source (the live-code route flips one line).
    """
    outcome = Outcome()
    source: str | None = None
    with ExitStack() as stack:
        if flip is not None:
            path, line = flip
            if subject.path is not None and path == subject.path and hasattr(subject, "source"):
                source = _twin(subject.source, frozenset({line, *also}))
                rest = also - {line}
                before = _twin(subject.source, rest) if rest else None
                outcome.flipped = source != (before or subject.source)
            else:
                outcome.flipped = stack.enter_context(swapped(path, line))
            if not outcome.flipped:
                return outcome
        if guard and hasattr(subject, "source"):
            source = no_grad_lines(source or subject.source, guard)
        if skip and hasattr(subject, "source"):
            source = skip_lines(source or subject.source, skip)
        stack.enter_context(environment(subject))
        stack.enter_context(subject.guarded())
        detector = stack.enter_context(Detector()) if detect else None
        coverage = stack.enter_context(Coverage(subject.path).active()) if cover else None
        if watch is not None:
            stack.enter_context(watch)
        try:
            outcome.values = subject.execute(source)
        except BadInput:
            raise
        except _Load as exc:
            raise BadInput(
                f"{subject.label}: importing the target raised {_describe(exc.__cause__ or exc)}"
            ) from None
        except (Exception, SystemExit) as exc:
            outcome.error = exc
        finally:
            outcome.rng = rng_state()
            if coverage is not None:
                outcome.lines = coverage.lines()
            if detector is not None:
                outcome.hits = detector.hits
    if isinstance(outcome.error, SystemExit) and outcome.error.code in (0, None):
        outcome.error = None
    outcome.files = {path for path, _ in outcome.lines}
    return outcome


def no_grad_lines(source: str, lines: frozenset[int]) -> str:
    """``source`` with the simple statements that start on ``lines`` run under
    ``torch.no_grad()``, on the same line (``with ...: statement``), so line numbers stay.
    Lines where that would not compile are left as they are."""
    prefix = 'with __import__("torch").no_grad(): '
    return _rewrite_lines(source, lines, lambda body: prefix + body)


def skip_lines(source: str, lines: frozenset[int]) -> str:
    """``source`` with the one-line simple statements on ``lines`` replaced by ``pass`` (line
    numbers kept); a line where that would not compile is left as it is."""
    return _rewrite_lines(
        source, lines, lambda body: "pass" + ("\n" if body.endswith("\n") else "")
    )


def _rewrite_lines(source: str, lines: frozenset[int], rewrite: Callable[[str], str]) -> str:
    """``source`` with each of ``lines`` (its text after the indentation) rewritten, one line
    at a time; a rewrite after which the source no longer compiles is undone."""
    text = source.splitlines(keepends=True)
    for line in sorted(lines):
        if not 1 <= line <= len(text):
            continue
        old = text[line - 1]
        body = old.lstrip(" \t")
        text[line - 1] = old[: len(old) - len(body)] + rewrite(body)
        try:
            compile("".join(text), "<rewritten>", "exec")
        except SyntaxError:
            text[line - 1] = old
    return "".join(text)


def flippable(source: str, line: int) -> bool:
    """Whether the out-of-place twin of ``source`` at ``line`` changes anything."""
    return _twin(source, frozenset({line})) != source


def rng_state() -> bytes:
    """torch's CPU generator state, and each initialised CUDA device's: two runs that end
    with different states drew different random numbers (an in-place dropout on CUDA draws
    its mask by another kernel than the out-of-place one), so their values cannot be
    compared."""
    states = [torch.get_rng_state()]
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        states.extend(torch.cuda.get_rng_state_all())
    return b"".join(bytes(state.tolist()) for state in states)  # uint8; numpy may be absent


def _remove_path(folder: str) -> None:
    if folder in sys.path:
        sys.path.remove(folder)


def _describe(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    if len(text) > 300:
        text = text[:297] + "..."
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
