"""The ``inplace-lint`` command: check (the default), rules, rule, lsp and confirm."""

from __future__ import annotations

import argparse
import fnmatch
import os
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from inplace_lint import __version__, catalogue
from inplace_lint.autofix import Dropped, FixReport, fix_results, verify_results
from inplace_lint.checks import PARSE_ERROR
from inplace_lint.config import Config, ConfigError, find_pyproject, load_config
from inplace_lint.engine import FileResult, lint_bytes
from inplace_lint.finding import Finding
from inplace_lint.project import build_views
from inplace_lint.report import FORMATS, render
from inplace_lint.report.text import format_finding, statistics, summary
from inplace_lint.runner import default_jobs, lint_files, open_cache
from inplace_lint.terminal import COLOR_CHOICES, Progress, ReportSink, progress_wanted, use_color

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


HELP_USAGE = """\
inplace-lint [check] [options] [PATH ...]
       inplace-lint rules | rule CODE | lsp | confirm TARGET ..."""
HELP_COMMANDS = """\
commands:
  check [PATH ...]   lint files and folders, recursively over *.py (the default command;
                     with no PATH it lints the current folder, - reads standard input)
  rules              list the rules
  rule CODE          print a rule's page
  lsp                serve the Language Server Protocol over stdin/stdout
  confirm TARGET...  run code under torch to confirm or refute findings (executes the code)

'inplace-lint COMMAND -h' shows a command's own help.
exit codes: 0 no findings, 1 findings, 2 usage, configuration or file errors.
"""
RULES_HELP = "usage: inplace-lint rules\n\nList every rule: code, name, on or opt-in, summary.\n"
RULE_HELP = (
    "usage: inplace-lint rule CODE\n\n"
    "Print the page of rule CODE (e.g. IPL001): what it finds, why, examples, its fix.\n"
)
LSP_HELP = (
    "usage: inplace-lint lsp\n\n"
    "Serve the Language Server Protocol over stdin/stdout: diagnostics as you type, quick\n"
    "fixes, hover. Needs the lsp extra (from the clone: pip install '.[lsp]').\n"
)
HELP_FLAGS = ("-h", "--help")


def _parser() -> _Parser:
    parser = _Parser(
        prog="inplace-lint",
        usage=HELP_USAGE,
        description="Find in-place autograd hazards in PyTorch code.",
        epilog=HELP_COMMANDS,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "paths", nargs="*", metavar="PATH", help="files or folders (default: .); - for stdin"
    )
    _selection_options(parser)
    _output_options(parser)
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
    parser.add_argument("-V", "--version", action="version", version=f"inplace-lint {__version__}")
    return parser


def _selection_options(parser: _Parser) -> None:
    """What to check: codes, configuration, excludes."""
    parser.add_argument("--select", type=_codes, help="only these codes or prefixes (comma list)")
    parser.add_argument("--extend-select", type=_codes, help="add these codes or prefixes")
    parser.add_argument("--ignore", type=_codes, help="skip these codes or prefixes")
    parser.add_argument("--config", type=Path, help="use this pyproject.toml")
    parser.add_argument("--isolated", action="store_true", help="ignore pyproject.toml files")
    parser.add_argument(
        "--force-exclude",
        action="store_true",
        help="apply exclude/extend-exclude to files named on the command line too (pre-commit)",
    )
    parser.add_argument("--stdin-filename", help="the name to report for - (stdin)")


def _output_options(parser: _Parser) -> None:
    """How the report looks and where it goes."""
    parser.add_argument(
        "--format", choices=FORMATS, default="text", help="output format (default: text)"
    )
    parser.add_argument(
        "--output-file", type=Path, metavar="PATH", help="write the report to PATH, not stdout"
    )
    parser.add_argument(
        "--color",
        choices=COLOR_CHOICES,
        default="auto",
        help="colour text output: auto (a terminal; FORCE_COLOR, NO_COLOR), always, never",
    )
    parser.add_argument(
        "-q", "--quiet", action="store_true", help="print the findings only: no summary, progress"
    )
    parser.add_argument("--statistics", action="store_true", help="count findings per code")
    parser.add_argument("--exit-zero", action="store_true", help="exit 0 even with findings")
    parser.add_argument(
        "--assume-grad",
        action="store_true",
        help="also report saved-tensor overwrites in functions no caller here is seen calling, "
        "certain if their tensor inputs require grad",
    )
    parser.add_argument("--show-source", action="store_true", help="print the line with a caret")


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
    helps = {"rules": RULES_HELP, "rule": RULE_HELP, "lsp": LSP_HELP}
    if command in helps and any(arg in HELP_FLAGS for arg in args):
        sys.stdout.write(helps[command])
        return EXIT_CLEAN
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
    config = config.with_cli(ns.select, ns.ignore, ns.extend_select)
    return replace(config, assume_grad=True) if ns.assume_grad else config


@dataclass
class _Run:
    """What one ``check`` run has gathered: results, stdin's lines, and errors reported."""

    results: list[FileResult] = field(default_factory=list)
    stdin_lines: dict[str, list[str] | None] = field(default_factory=dict)
    stdin_data: dict[str, bytes] = field(default_factory=dict)
    errors: int = 0

    def error(self, message: str) -> None:
        """Report a one-line error on standard error; the run will exit 2."""
        _error(message)
        self.errors += 1


def _check(ns: argparse.Namespace) -> int:
    if not ns.paths:  # as ruff: the current folder, or stdin when it has a name
        ns.paths = ["-"] if ns.stdin_filename else ["."]
    if ns.show_source and ns.format != "text":
        raise UsageError(f"--show-source needs --format text, not {ns.format}")
    if (ns.fix or ns.diff) and "-" in ns.paths:
        raise UsageError("--fix and --diff rewrite files, not standard input")
    sink = ReportSink(ns.output_file)
    problem = sink.check_writable()
    if problem is not None:
        raise UsageError(problem)
    config = _load(ns)
    run = _Run()
    pending = _gather(ns, config, run)
    anchors = [Path(p) for p in ns.paths if p != "-"]
    cache = open_cache(config, anchors, ns.no_cache, ns.cache_dir)
    progress = Progress(len(pending), progress_wanted(ns.quiet))
    views = build_views(pending)  # read once: the lint and the fixes' verification share it
    try:
        jobs = ns.jobs or default_jobs()
        run.results.extend(lint_files(pending, config, jobs, cache, progress.advance, views=views))
    finally:
        progress.close()
    known = {pending[index][1]: view for index, view in views.items()}
    fixed: int | None = None
    if ns.fix or ns.diff:
        report = fix_results(
            run.results, config, unsafe=ns.unsafe_fixes, write=not ns.diff, views=known
        )
        for message in report.errors:
            run.error(message)
        if report.dropped and not ns.quiet:
            _report_dropped(report.dropped)
        if ns.diff:
            return _report_diff(ns, sink, report, run)
        run.results, fixed = report.results, report.fixed
        if report.fixed and ns.format != "text" and not ns.quiet:  # text says it in the summary
            done = f"fixed {report.fixed} finding(s) in {report.files} file(s)"
            if report.held_back:
                done += f" ({report.held_back} more with --unsafe-fixes)"
            print(f"inplace-lint: {done}", file=sys.stderr)
    elif ns.format in ("json", "sarif", "lsp") or (ns.format == "text" and not ns.quiet):
        # these reports offer fixes (the text one counts them): only the verified ones
        run.results = verify_results(run.results, config, run.stdin_data, known)
    findings: list[Finding] = []
    for result in run.results:
        if result.error is not None:
            run.error(result.error)
        findings.extend(result.findings)
    findings.sort(key=Finding.sort_key)
    _report(ns, sink, findings, run, fixed)
    if run.errors or any(f.code == PARSE_ERROR for f in findings):
        return EXIT_ERROR
    if findings and not ns.exit_zero:
        return EXIT_FINDINGS
    return EXIT_CLEAN


def _gather(ns: argparse.Namespace, config: Config, run: _Run) -> list[tuple[Path, str]]:
    """Lint standard input now; return the files to lint, each once, as (path, display)."""
    checked: set[str] = set()  # a file named twice (``src src/a.py``) is reported once
    pending: list[tuple[Path, str]] = []  # linted together, across --jobs processes
    for raw in ns.paths:
        if raw == "-":
            name = ns.stdin_filename or "<stdin>"
            if ns.force_exclude and ns.stdin_filename and config.is_excluded(Path(name)):
                continue
            data = sys.stdin.buffer.read()
            run.stdin_lines[name] = _source_lines(data)
            run.stdin_data[name] = data
            codes = config.codes_for(name)
            run.results.append(FileResult(name, tuple(lint_bytes(data, name, codes))))
            continue
        try:
            os.lstat(raw)
        except (FileNotFoundError, NotADirectoryError):
            run.error(f"path does not exist: {raw}")
            continue
        except OSError as exc:  # e.g. a parent folder that cannot be searched
            run.error(f"cannot read {raw}: {exc.strerror or exc}")
            continue
        unreadable: list[str] = []
        for file, display in _discover(Path(raw), raw, config, unreadable, ns.force_exclude):
            if os.path.abspath(file) not in checked:
                checked.add(os.path.abspath(file))
                pending.append((file, display))
        for message in unreadable:
            run.error(message)
    return pending


def _report_diff(ns: argparse.Namespace, sink: ReportSink, report: FixReport, run: _Run) -> int:
    """``--diff``: the patch on stdout (or --output-file), ``Would fix N findings.`` on stderr."""
    sink.stream.write("".join(report.diffs))
    _close(sink, run)
    if report.fixed and not ns.quiet:
        would = f"Would fix {report.fixed} finding{'' if report.fixed == 1 else 's'}"
        hidden = report.held_back
        print(
            f"{would} ({hidden} more with --unsafe-fixes)." if hidden else f"{would}.",
            file=sys.stderr,
        )
    return EXIT_ERROR if run.errors else EXIT_FINDINGS if report.diffs else EXIT_CLEAN


def _report_dropped(dropped: Sequence[Dropped]) -> None:
    """On standard error: how many fixes failed verification, then one line each with why."""
    count = len(dropped)
    fixes = "1 fix" if count == 1 else f"{count} fixes"
    print(f"inplace-lint: {fixes} failed verification, not applied:", file=sys.stderr)
    for item in dropped:
        print(f"  {item.line()}", file=sys.stderr)


def _report(
    ns: argparse.Namespace,
    sink: ReportSink,
    findings: list[Finding],
    run: _Run,
    fixed: int | None,
) -> None:
    """The report in its format; for text the statistics and the summary line follow."""
    out = sink.stream
    if ns.format != "text":

        def lines_of(path: str) -> list[str] | None:
            return run.stdin_lines[path] if path in run.stdin_lines else _read_lines(path)

        paths = [r.path for r in run.results]
        out.write(render(ns.format, findings, paths, not run.errors, lines_of))
        if ns.statistics:  # machine formats keep stdout parseable
            for line in statistics(findings):
                print(line, file=sys.stderr)
        _close(sink, run)
        return
    color = use_color(ns.color, sys.stdout, to_file=ns.output_file is not None)
    sources = dict(run.stdin_lines)  # stdin cannot be read again from disk
    for finding in findings:
        lines = None
        if ns.show_source:
            if finding.path not in sources:
                sources[finding.path] = _read_lines(finding.path)
            lines = sources[finding.path]
        out.write(format_finding(finding, lines, color) + "\n")
    if ns.statistics:
        out.writelines(line + "\n" for line in statistics(findings))
    if not ns.quiet:
        unsafe = ns.unsafe_fixes
        line = summary(findings, unsafe_fixes=unsafe, fixed=fixed, errors=run.errors, color=color)
        out.write(line + "\n")
    _close(sink, run)


def _close(sink: ReportSink, run: _Run) -> None:
    try:
        sink.close()
    except BrokenPipeError:
        raise
    except OSError as exc:
        run.error(f"cannot write --output-file {sink.path}: {exc.strerror or exc}")


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
    path: Path, display: str, config: Config, unreadable: list[str], force_exclude: bool = False
) -> Iterator[tuple[Path, str]]:
    """Python files under ``path``: explicit files always, directories recursively.

    With ``force_exclude`` (ruff's ``--force-exclude``, which pre-commit needs since it names
    every file) an excluded file or folder named here is skipped like one found by the walk.
    Directories that cannot be listed are added to ``unreadable`` as one-line messages.
    """
    if force_exclude and config.is_excluded(path):
        return

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
