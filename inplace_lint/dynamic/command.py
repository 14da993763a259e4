"""``inplace-lint confirm TARGET...``: the command line of the dynamic checker."""

from __future__ import annotations

import argparse
import sys
import warnings
from collections.abc import Sequence
from typing import Any

__all__ = ["main"]

DESCRIPTION = """\
Run each TARGET with real torch and confirm or refute in-place hazards.

confirm is the only inplace-lint command that executes user code: it imports and runs the
targets you name (and whatever they import), like running them with python. Use it only on
code you trust.

TARGET forms:
  path/to/file.py            run the file as __main__, as a zero-argument training step
  path/to/file.py::name      call name(); it returns (model_or_callable, example_inputs),
                             or is a zero-argument step that runs forward and backward itself
                             and returns the tensors that matter (outputs, losses, gradients)
  package.module:name        the same, for an importable module

Output: one line per confirmed hazard (path:line:col: CODE confirmed: evidence), then the
status of every static finding in the files the run executed: confirmed, not confirmed (it
ran and its out-of-place twin matched, within tolerance and the run-to-run noise),
inconclusive (it ran, but the runs cannot decide: the twin raises too, could not be built,
or there was nothing to compare; a script leaves its tensors at module level, or use
file.py::name) or not reached.
Exit codes: 0 nothing confirmed (inconclusive findings included), 1 a hazard confirmed (even
when another target failed), 2 bad input and nothing confirmed (a target that cannot be
imported or built, a run that fails without an in-place cause, a target past --timeout, or a
--device that is not available).
"""


class _Usage(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise _Usage(message)


def _parser() -> _Parser:
    parser = _Parser(
        prog="inplace-lint confirm",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("targets", nargs="+", metavar="TARGET", help="what to run (see above)")
    parser.add_argument("--seed", type=int, default=0, help="seed for torch and random (0)")
    parser.add_argument(
        "--graph",
        metavar="OUT",
        help="draw the graph around each confirmed hazard to OUT (.dot; .svg needs graphviz)",
    )
    parser.add_argument(
        "--select", help="static rule codes whose findings are checked (default: configured)"
    )
    parser.add_argument(
        "--confirmed-only", action="store_true", help="print confirmed hazards only"
    )
    parser.add_argument(
        "--device",
        help="run every target on this torch device (cuda, cuda:1, cpu); default: where the "
        "target puts itself",
    )
    parser.add_argument(
        "--timeout",
        type=_seconds,
        metavar="SECONDS",
        help="give up on a target after SECONDS of wall-clock time (exit 2); default: none",
    )
    parser.add_argument(
        "--no-cache", action="store_true", help="lint the files it ran without the static cache"
    )
    return parser


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds: {text!r}")
    return value


def _error(message: str) -> None:
    print(f"inplace-lint: error: {' '.join(message.split())}", file=sys.stderr)


def main(argv: Sequence[str]) -> int:
    """Run ``confirm``; 1 confirmed (in any target), else 2 bad input, else 0. Never a
    traceback."""
    try:
        ns = _parser().parse_args(list(argv))
    except _Usage as exc:
        _error(str(exc))
        return 2
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # e.g. torch's note that numpy is missing
            import torch  # noqa: F401
    except ImportError:
        _error(
            "confirm needs torch: pip install torch (or, from the clone, pip install '.[dynamic]')"
        )
        return 2
    from inplace_lint.dynamic.graph import write_graphs

    codes = None
    if ns.select:
        from inplace_lint.config import ConfigError, validate_codes

        try:
            codes = _expand(validate_codes(ns.select.replace(" ", ",").split(","), "--select"))
        except ConfigError as exc:
            _error(str(exc))
            return 2
    device = None
    if ns.device:
        from inplace_lint.dynamic.device import DeviceError, resolve

        try:
            device = resolve(ns.device)
        except DeviceError as exc:
            _error(str(exc))
            return 2
    confirmed = failed = False
    reports = []
    for index, target in enumerate(ns.targets):
        try:
            report = _one(target, ns, codes, device)
        except _LostDevice:
            _skip_rest(target, ns.targets[index + 1 :])
            failed = True
            break
        if report is None:
            failed = True
            continue
        reports.append(report)
        lines = report.lines() if not ns.confirmed_only else report.lines()[: len(report.confirmed)]
        for line in lines:
            print(line)
        confirmed = confirmed or bool(report.confirmed)
    sys.stdout.flush()
    if ns.graph:
        note = write_graphs(reports, ns.graph)
        if note:
            print(f"inplace-lint: {note}", file=sys.stderr)
    if confirmed:  # a hazard found in one target is never hidden by another's bad input
        return 1
    return 2 if failed else 0


class _LostDevice(Exception):
    """A target's CUDA error left the process unable to run anything more on the GPU."""


def _skip_rest(target: str, rest: list[str]) -> None:
    """Say, on one line, which targets are not run after ``target`` lost the CUDA context."""
    if rest:
        _error(
            f"{target} left the CUDA context unusable (a device-side error), so "
            f"{len(rest)} more target(s) are not run: {', '.join(rest)}; run them in a new "
            "process"
        )


def _first_line(exc: BaseException) -> str:
    """The first line of ``exc``'s message (CUDA errors add lines of advice)."""
    text = str(exc).strip().splitlines()
    return text[0] if text else ""


def _one(target: str, ns: argparse.Namespace, codes: list[str] | None, device: Any) -> Any:
    """One target's report, or None after its one-line error (bad input, timeout, crash)."""
    from inplace_lint.dynamic.core import check
    from inplace_lint.dynamic.device import lost_device
    from inplace_lint.dynamic.limits import TargetTimeout
    from inplace_lint.dynamic.progress import Progress
    from inplace_lint.dynamic.runner import BadInput
    from inplace_lint.dynamic.targets import subject_for
    from inplace_lint.terminal import progress_wanted

    progress = Progress(target, progress_wanted(quiet=False))
    try:
        return check(
            subject_for(target, ns.seed),
            graph=bool(ns.graph),
            codes=codes,
            device=device,
            timeout=ns.timeout,
            phase=progress.phase,
            cache=not ns.no_cache,
        )
    except BadInput as exc:
        progress.close()
        _error(str(exc))
        if lost_device(exc):
            raise _LostDevice from exc
    except TargetTimeout as exc:
        progress.close()
        _error(f"{target}: {exc} (--timeout {ns.timeout:g}); nothing is reported for it")
    except KeyboardInterrupt:
        progress.close()
        raise
    except BaseException as exc:  # a broken target must never show our traceback
        progress.close()
        _error(f"{target}: {type(exc).__name__}: {_first_line(exc)}")
        if lost_device(exc):
            raise _LostDevice from exc
    finally:
        progress.close()
    return None


def _expand(codes: list[str]) -> list[str]:
    from inplace_lint.checks import all_rules

    return [r.code for r in all_rules() if any(r.code.startswith(c) or c == "ALL" for c in codes)]
