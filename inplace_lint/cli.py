"""The ``inplace-lint`` command: ``check`` (the default), ``rules`` and ``rule CODE``."""

from __future__ import annotations

import argparse
import fnmatch
import os
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

from inplace_lint import __version__, catalogue
from inplace_lint.autofix import fix_results
from inplace_lint.checks import PARSE_ERROR
from inplace_lint.config import Config, ConfigError, find_pyproject, load_config
from inplace_lint.engine import FileResult, lint_bytes
from inplace_lint.finding import Finding
from inplace_lint.report import FORMATS, render
from inplace_lint.report.text import format_finding, statistics
from inplace_lint.runner import default_jobs, lint_files, open_cache

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
COMMANDS = ("check", "rules", "rule", "lsp", "confirm")


class UsageError(Exception):
    """Bad command-line usage; reported in one line with exit code 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(message)


def _jobs(value: str) -> int:
    """``--jobs N``: a count of processes; 0 means all cores."""
    try:
        count = int(value)
    except ValueError:
        count = -1
    if count < 0:
        raise argparse.ArgumentTypeError(f"expected a number of processes, got {value!r}")
    return count


def _codes(value: str) -> list[str]:
    return [part for part in value.replace(" ", ",").split(",") if part]


def _parser() -> _Parser:
    parser = _Parser(
        prog="inplace-lint",
        description="Find in-place autograd hazards in PyTorch code.",
        epilog="Commands: check PATH... (default), rules, rule CODE.",
    )
    parser.add_argument(
        "paths", nargs="*", metavar="PATH", help="files or directories; - for stdin"
    )
    parser.add_argument("--select", type=_codes, help="only these codes or prefixes (comma list)")
    parser.add_argument("--extend-select", type=_codes, help="add these codes or prefixes")
    parser.add_argument("--ignore", type=_codes, help="skip these codes or prefixes")
    parser.add_argument("--statistics", action="store_true", help="count findings per code")
    parser.add_argument("--exit-zero", action="store_true", help="exit 0 even with findings")
    parser.add_argument("--show-source", action="store_true", help="print the line with a caret")
    parser.add_argument(
        "--format", choices=FORMATS, default="text", help="output format (default: text)"
    )
    parser.add_argument("--stdin-filename", help="the name to report for - (stdin)")
    parser.add_argument("--config", type=Path, help="use this pyproject.toml")
    parser.add_argument("--isolated", action="store_true", help="ignore pyproject.toml files")
    parser.add_argument("--fix", action="store_true", help="apply safe fixes to the files")
    parser.add_argument("--diff", action="store_true", help="print fixes as a diff, write nothing")
    parser.add_argument(
        "--unsafe-fixes", action="store_true", help="with --fix/--diff, also apply unsafe fixes"
    )
    parser.add_argument(
        "--jobs", type=_jobs, default=0, metavar="N", help="processes (default: all cores)"
    )
    parser.add_argument("--no-cache", action="store_true", help="neither read nor write the cache")
    parser.add_argument(
        "--cache-dir", type=Path, help="cache folder (default: .inplace-lint-cache in the project)"
    )
    parser.add_argument("--version", action="version", version=f"inplace-lint {__version__}")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; never lets a traceback escape."""
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        return _dispatch(args)
    except UsageError as exc:
        _error(str(exc))
        return EXIT_ERROR
    except ConfigError as exc:
        _error(str(exc))
        return EXIT_ERROR
    except KeyboardInterrupt:
        _error("interrupted")
        return 130
    except BrokenPipeError:
        sys.stderr.close()
        return EXIT_ERROR
    except Exception as exc:
        _error(f"internal error: {type(exc).__name__}: {exc}")
        return EXIT_ERROR


def _error(message: str) -> None:
    print(f"inplace-lint: error: {' '.join(message.split())}", file=sys.stderr)


def _dispatch(args: list[str]) -> int:
    command = args[0] if args and args[0] in COMMANDS else "check"
    if args and args[0] in COMMANDS:
        args = args[1:]
    if command == "rules":
        return _list_rules(args)
    if command == "rule":
        return _show_rule(args)
    if command == "lsp":
        from inplace_lint.lsp import main as lsp_main  # pygls is imported only here

        return lsp_main(args)
    if command == "confirm":
        from inplace_lint.dynamic.command import main as confirm_main  # torch only here

        return confirm_main(args)
    return _check(_parser().parse_args(args))


def _list_rules(args: list[str]) -> int:
    if args:
        raise UsageError(f"'rules' takes no arguments, got {args[0]!r}")
    for rule in catalogue.every_code():
        state = "on" if rule.default else "opt-in"
        print(f"{rule.code}  {rule.name:<28} {state:<7} {rule.summary}")
    return EXIT_CLEAN


def _show_rule(args: list[str]) -> int:
    if len(args) != 1:
        raise UsageError("usage: inplace-lint rule CODE")
    code = args[0].upper()
    if catalogue.described(code) is None:
        raise UsageError(f"unknown rule {args[0]!r}; 'inplace-lint rules' lists them")
    text = catalogue.page(code)
    if text is None:
        raise UsageError(f"no catalogue page found for {code}")
    sys.stdout.write(text if text.endswith("\n") else text + "\n")
    return EXIT_CLEAN


def _load(ns: argparse.Namespace) -> Config:
    if ns.isolated:
        config = Config()
    elif ns.config is not None:
        if not ns.config.is_file():
            raise UsageError(f"config file not found: {ns.config}")
        config = load_config(ns.config)
    else:
        anchors = [Path(p) for p in ns.paths if p != "-"]
        if ns.stdin_filename:
            anchors.append(Path(ns.stdin_filename))
        start = anchors[0] if anchors else Path.cwd()
        while not os.path.exists(start) and start != start.parent:
            start = start.parent  # an unsaved --stdin-filename still finds its project
        if not os.path.exists(start):
            start = Path.cwd()
        config = load_config(find_pyproject(start))
    return config.with_cli(ns.select, ns.ignore, ns.extend_select)


def _check(ns: argparse.Namespace) -> int:
    if not ns.paths:
        raise UsageError("no paths given (try: inplace-lint check PATH...)")
    if ns.show_source and ns.format != "text":
        raise UsageError(f"--show-source needs --format text, not {ns.format}")
    config = _load(ns)
    results: list[FileResult] = []
    stdin_lines: dict[str, list[str] | None] = {}
    checked: set[str] = set()  # a file named twice (``src src/a.py``) is reported once
    pending: list[tuple[Path, str]] = []  # linted together below, across --jobs processes
    failed = False
    for raw in ns.paths:
        if raw == "-":
            name = ns.stdin_filename or "<stdin>"
            data = sys.stdin.buffer.read()
            stdin_lines[name] = _source_lines(data)
            codes = config.codes_for(name)
            results.append(FileResult(name, tuple(lint_bytes(data, name, codes))))
            continue
        path = Path(raw)
        try:
            os.lstat(raw)
        except (FileNotFoundError, NotADirectoryError):
            _error(f"path does not exist: {raw}")
            failed = True
            continue
        except OSError as exc:  # e.g. a parent folder that cannot be searched
            _error(f"cannot read {raw}: {exc.strerror or exc}")
            failed = True
            continue
        unreadable: list[str] = []
        for file, display in _discover(path, raw, config, unreadable):
            if os.path.abspath(file) not in checked:
                checked.add(os.path.abspath(file))
                pending.append((file, display))
        for message in unreadable:
            _error(message)
            failed = True
    anchors = [Path(p) for p in ns.paths if p != "-"]
    cache = open_cache(config, anchors, ns.no_cache, ns.cache_dir)
    results.extend(lint_files(pending, config, ns.jobs or default_jobs(), cache))
    if ns.fix or ns.diff:
        if "-" in ns.paths:
            raise UsageError("--fix and --diff rewrite files, not standard input")
        report = fix_results(results, config, unsafe=ns.unsafe_fixes, write=not ns.diff)
        for message in report.errors:
            _error(message)
        failed = failed or bool(report.errors)
        if ns.diff:
            sys.stdout.write("".join(report.diffs))
            sys.stdout.flush()
            return EXIT_ERROR if failed else EXIT_FINDINGS if report.diffs else EXIT_CLEAN
        results = report.results
        if report.fixed:
            fixed = f"fixed {report.fixed} finding(s) in {report.files} file(s)"
            print(f"inplace-lint: {fixed}", file=sys.stderr)
    findings: list[Finding] = []
    for result in results:
        if result.error is not None:
            _error(result.error)
            failed = True
        findings.extend(result.findings)
    findings.sort(key=Finding.sort_key)
    if ns.format == "text":
        _print(findings, ns.show_source, stdin_lines)
    else:
        _render(ns.format, findings, [r.path for r in results], not failed, stdin_lines)
    if ns.statistics:  # machine formats keep stdout parseable
        for line in statistics(findings):
            print(line, file=sys.stdout if ns.format == "text" else sys.stderr)
    if failed or any(f.code == PARSE_ERROR for f in findings):
        return EXIT_ERROR
    if findings and not ns.exit_zero:
        return EXIT_FINDINGS
    return EXIT_CLEAN


def _print(
    findings: list[Finding], show_source: bool, stdin_lines: dict[str, list[str] | None]
) -> None:
    cache = dict(stdin_lines)  # stdin cannot be read again from disk
    out = sys.stdout
    for finding in findings:
        lines = None
        if show_source:
            if finding.path not in cache:
                cache[finding.path] = _read_lines(finding.path)
            lines = cache[finding.path]
        out.write(format_finding(finding, lines) + "\n")
    out.flush()


def _render(
    fmt: str,
    findings: list[Finding],
    paths: list[str],
    successful: bool,
    stdin_lines: dict[str, list[str] | None],
) -> None:
    def lines_of(path: str) -> list[str] | None:
        return stdin_lines[path] if path in stdin_lines else _read_lines(path)

    sys.stdout.write(render(fmt, findings, paths, successful, lines_of))
    sys.stdout.flush()


def _read_lines(path: str) -> list[str] | None:
    try:
        return _source_lines(Path(path).read_bytes())
    except OSError:
        return None


def _source_lines(data: bytes) -> list[str] | None:
    """Lines as Python numbers them: only \\n, \\r\\n and \\r end a line (not \\f or U+2028)."""
    try:
        from inplace_lint.source import decode

        text = decode(data).text
    except Exception:
        return None
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def _discover(
    path: Path, display: str, config: Config, unreadable: list[str]
) -> Iterator[tuple[Path, str]]:
    """Python files under ``path``: explicit files always, directories recursively.

    Directories that cannot be listed are added to ``unreadable`` as one-line messages.
    """

    def shown(file: str | Path) -> str:
        relative = os.path.relpath(file, path)
        return os.path.normpath(
            os.path.join(display, relative) if display not in (".", "./") else relative
        )

    def walk_error(exc: OSError) -> None:
        where = shown(exc.filename) if exc.filename is not None else display
        unreadable.append(f"cannot read {where}: {exc.strerror or exc}")

    if not os.path.isdir(path):  # a file, or a dangling or looping symlink: lint_path says why
        yield path, display
        return
    named_excluded = config.is_excluded(path)

    def excluded(item: Path) -> bool:
        """Excluded, judging a folder named on the command line only by what lies below it."""
        if not config.is_excluded(item):
            return False
        if not named_excluded:
            return True
        below = Path(os.path.relpath(item, path)).parts
        return any(fnmatch.fnmatch(part, pattern) for part in below for pattern in config.exclude)

    seen: set[tuple[int, int]] = set()
    for root, dirs, files in os.walk(path, onerror=walk_error, followlinks=False):
        root_path = Path(root)
        try:
            stat = root_path.stat()
        except OSError:
            continue
        if (stat.st_dev, stat.st_ino) in seen:
            dirs[:] = []
            continue
        seen.add((stat.st_dev, stat.st_ino))
        dirs[:] = sorted(
            d
            for d in dirs
            if not excluded(root_path / d)
            and not os.path.exists(os.path.join(root, d, "pyvenv.cfg"))  # False on EACCES too
        )
        for name in sorted(files):
            if not name.endswith((".py", ".ipynb")):  # notebooks too, as ruff does
                continue
            file = root_path / name
            if excluded(file):
                continue
            yield file, shown(file)
