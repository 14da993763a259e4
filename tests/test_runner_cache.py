"""``--jobs`` and the findings cache: same output in parallel, hits skip analysis, self-healing."""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

import pytest

from inplace_lint import cli, engine
from inplace_lint.cache import CACHE_DIR_NAME, Cache, folder_fingerprint
from inplace_lint.config import Config
from inplace_lint.finding import Finding, Position, Related
from inplace_lint.runner import STATS_ENV, cache_root, lint_files

ROOT = Path(__file__).resolve().parents[1]
HAZARD = """\
import torch
a = torch.randn(4, requires_grad=True)
x = torch.sigmoid(a)
x.mul_(2)
x.sum().backward()
"""
CLEAN = "import torch\nx = torch.randn(4)\ny = torch.relu(x)\n"


def _build(project: Path) -> Path:
    """A project with a pyproject.toml and a mix of hazardous, clean and broken files (56:
    enough for two workers and two concurrent runs to interleave, few enough that the seven
    full lints in separate processes stay cheap)."""
    shutil.copytree(ROOT / "examples", project / "src" / "examples")
    for group in ("ipl007",):
        shutil.copytree(ROOT / "tests" / "cases" / group, project / "src" / "cases" / group)
    (project / "src" / "hazard.py").write_text(HAZARD)
    (project / "src" / "clean.py").write_text(CLEAN)
    (project / "src" / "broken.py").write_text("import torch\nx.add_(1\n")
    (project / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    return project


@dataclass(frozen=True)
class Template:
    """The tree, built and linted once a session in this process; tests lint copies of it.

    ``expected``: what ``--jobs 1 --statistics .`` prints from ``src/`` with an empty cache,
    every file linted (exit code, stdout); ``warm``: the copy it ran in, whose cache now holds
    every file's entry.
    Both come from this process, as do the runs compared with them: a subprocess started later
    would run the sources as they are then (another engineer's edit in this working tree).
    """

    cold: Path
    warm: Path
    expected: tuple[int, str]


def _main(args: list[str], cwd: Path) -> tuple[int, str]:
    """``cli.main(args)`` in ``cwd``: exit code and standard output."""
    out = io.StringIO()
    with contextlib.chdir(cwd), contextlib.redirect_stdout(out):
        code = cli.main(args)
    return code, out.getvalue()


@pytest.fixture(scope="session")
def template(tmp_path_factory: pytest.TempPathFactory) -> Template:
    cold = _build(tmp_path_factory.mktemp("template") / "proj")
    warm = tmp_path_factory.mktemp("template") / "proj"
    shutil.copytree(cold, warm)
    expected = _main(["--jobs", "1", "--statistics", "."], warm / "src")  # every file a miss
    assert _entries(warm / CACHE_DIR_NAME)
    return Template(cold, warm, expected)


@pytest.fixture(scope="session")
def by_a_process(template: Template) -> tuple[int, str]:
    """What a ``--no-cache --jobs 1 --statistics .`` process prints from ``src/``: the tests
    that run processes compare with it."""
    code, out, _ = _run("--no-cache", "--jobs", "1", "--statistics", ".", cwd=template.cold / "src")
    return code, out


@pytest.fixture
def tree(template: Template, tmp_path: Path) -> Path:
    """A fresh copy of the template tree, no cache."""
    return Path(shutil.copytree(template.cold, tmp_path / "proj"))


@pytest.fixture
def warm_tree(template: Template, tmp_path: Path) -> Path:
    """A fresh copy of the template tree with its full cache."""
    return Path(shutil.copytree(template.warm, tmp_path / "proj"))


def _cli(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "inplace_lint", "check", *args],
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _run(*args: str, cwd: Path, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    process = _cli(*args, cwd=cwd, env=env)
    out, err = process.communicate(timeout=300)
    assert "Traceback" not in err
    return process.returncode, out, err


def _entries(cache: Path) -> list[Path]:
    return sorted(cache.glob("v*/*.json"))


def _count_analyses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Record every file the engine analyses in this process (``--jobs 1``)."""
    seen: list[str] = []
    real = engine.lint_path

    def counting(
        path: Path, display: str, config: Config, project: object = None
    ) -> engine.FileResult:
        seen.append(display)
        return real(path, display, config, project)  # type: ignore[arg-type]

    monkeypatch.setattr(engine, "lint_path", counting)
    return seen


def test_jobs_two_prints_exactly_what_jobs_one_prints(
    tree: Path, by_a_process: tuple[int, str]
) -> None:
    one = by_a_process  # --no-cache --jobs 1 --statistics, run once a session
    two = _run("--no-cache", "--jobs", "2", "--statistics", ".", cwd=tree / "src")
    assert one == two[:2]
    assert one[0] == 2  # broken.py
    assert one[1].count("\n") > 30
    assert not (tree / CACHE_DIR_NAME).exists()


def test_jobs_validation(tmp_path: Path) -> None:
    for bad in ("-1", "two"):
        code, out, err = _run("--jobs", bad, ".", cwd=tmp_path)
        assert code == 2 and "--jobs" in err and out == ""


def test_second_run_is_served_from_the_cache(
    tree: Path,
    template: Template,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tree / "src")  # the cache goes to the project root, not the cwd
    seen = _count_analyses(monkeypatch)
    first = cli.main(["--jobs", "1", "--statistics", "."])
    out_first = capsys.readouterr().out
    assert (first, out_first) == template.expected
    files = len(seen)
    assert files > 50
    cache = tree / CACHE_DIR_NAME
    assert not (tree / "src" / CACHE_DIR_NAME).exists()
    assert len(_entries(cache)) == files
    assert (cache / ".gitignore").read_text().strip().endswith("*")
    stamps = {p: p.stat().st_mtime_ns for p in _entries(cache)}

    seen.clear()
    second = cli.main(["--jobs", "1", "--statistics", "."])
    assert (second, capsys.readouterr().out) == (first, out_first)
    assert seen == []  # nothing analysed
    assert {p: p.stat().st_mtime_ns for p in _entries(cache)} == stamps  # nothing rewritten


def test_cache_follows_content_and_config(
    warm_tree: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    tree = warm_tree
    monkeypatch.chdir(tree / "src")
    seen = _count_analyses(monkeypatch)
    cli.main(["--jobs", "1", "."])
    capsys.readouterr()
    assert seen == []  # the copied cache serves every file
    assert (tree / CACHE_DIR_NAME).is_dir() and not (tree / "src" / CACHE_DIR_NAME).exists()

    Path("clean.py").write_text(HAZARD)  # content change: only this file again
    assert cli.main(["--jobs", "1", "."]) == 2
    assert seen == ["clean.py"]
    assert "clean.py:4:1: IPL001" in capsys.readouterr().out

    seen.clear()
    cli.main(["--jobs", "1", "--ignore", "IPL002", "."])  # other codes: every file again
    capsys.readouterr()
    assert len(seen) > 50

    seen.clear()
    (tree / "pyproject.toml").write_text(
        '[tool.inplace-lint.per-file-ignores]\n"hazard.py" = ["IPL001"]\n'
    )
    cli.main(["--jobs", "1", "."])  # per-file-ignores: a new key for hazard.py only
    assert "hazard.py" not in capsys.readouterr().out
    assert seen == ["hazard.py"]


def test_damaged_entries_are_ignored_and_rewritten(
    warm_tree: Path,
    template: Template,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    tree = warm_tree
    monkeypatch.chdir(tree / "src")
    expected = template.expected
    entries = _entries(tree / CACHE_DIR_NAME)
    damage = [
        b"",
        b"{",
        b"\x00\xff garbage",
        b"[]",
        b'{"format": 1, "key": "someone-else", "findings": []}',
        json.dumps({"format": 1, "key": "?", "findings": [{"s": "x"}]}).encode(),
    ]
    hazard_entry = next(
        e for e in entries if b"IPL001" in e.read_bytes() and b'"m"' in e.read_bytes()
    )
    # half of them, every kind of damage; chosen among the others, because entry names hash
    # the package's sources and so their order changes with every edit to the linter
    others = [e for e in entries if e != hazard_entry]
    for index, entry in enumerate(others[: (len(entries) + 1) // 2]):
        data = damage[index % len(damage)]
        if b'"key": "?"' in data:
            data = data.replace(b'"?"', json.dumps(entry.stem).encode())
        entry.write_bytes(data)
    payload = json.loads(hazard_entry.read_bytes())
    payload["findings"][0]["s"] = ["1", 1]  # well-formed JSON, wrong types
    hazard_entry.write_text(json.dumps(payload))

    seen = _count_analyses(monkeypatch)
    assert (cli.main(["--jobs", "1", "--statistics", "."]), capsys.readouterr().out) == expected
    assert len(seen) == (len(entries) + 1) // 2 + 1
    seen.clear()
    assert (cli.main(["--jobs", "1", "--statistics", "."]), capsys.readouterr().out) == expected
    assert seen == []  # healed


def test_two_concurrent_runs_share_one_cache(tree: Path, by_a_process: tuple[int, str]) -> None:
    expected = by_a_process
    env = {STATS_ENV: "1"}
    src = tree / "src"
    for _ in range(2):  # first both cold, then both warm
        runs = [_cli("--jobs", "2", "--statistics", ".", cwd=src, env=env) for _ in range(2)]
        for process in runs:
            out, err = process.communicate(timeout=300)
            assert (process.returncode, out) == expected
            assert "0 damaged" in err and "Traceback" not in err
    code, out, err = _run("--jobs", "2", "--statistics", ".", cwd=src, env=env)
    assert (code, out) == expected
    assert " 0 misses" in err and "0 writes" in err
    assert not list((tree / CACHE_DIR_NAME).rglob(".tmp-*"))


def test_concurrent_writers_never_expose_a_partial_entry(tmp_path: Path) -> None:
    finding = Finding("a.py", Position(3, 1), Position(3, 9), "IPL001", "m" * 5000)
    findings = tuple(
        Finding(
            "a.py",
            Position(n, 1),
            Position(n, 2),
            "IPL002",
            f"message {n} " * 50,
            (Related(Position(1, 1), "saved here"),),
            statement_lines=(n, n + 1),
        )
        for n in range(1, 40)
    )
    caches = [Cache(tmp_path / "c") for _ in range(4)]
    key = caches[0].key(b"data", "a.py", {"IPL001"})
    caches[0].put(key, (finding, *findings))
    stop = threading.Event()

    def write(cache: Cache) -> None:
        while not stop.is_set():
            cache.put(key, (finding, *findings))

    threads = [threading.Thread(target=write, args=(c,)) for c in caches[:2]]
    for thread in threads:
        thread.start()
    try:
        for _ in range(300):
            assert caches[2].get(key, "a.py") == (finding, *findings)
    finally:
        stop.set()
        for thread in threads:
            thread.join()
    assert caches[2].stats.damaged == 0


def test_stdin_is_never_cached(tree: Path) -> None:
    process = subprocess.run(
        [sys.executable, "-m", "inplace_lint", "check", "-", "--stdin-filename", "src/x.py"],
        cwd=tree,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        input=HAZARD,
        capture_output=True,
        text=True,
        check=False,
    )
    assert process.returncode == 1 and "src/x.py:4:1: IPL001" in process.stdout
    assert not (tree / CACHE_DIR_NAME).exists()


def test_cache_dir_option_and_default_exclude(tmp_path: Path) -> None:
    tree = tmp_path / "proj"
    (tree / "src").mkdir(parents=True)
    (tree / "src" / "hazard.py").write_text(HAZARD)
    (tree / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    code, out, _ = _run("--cache-dir", "elsewhere", "--jobs", "1", "src/hazard.py", cwd=tree)
    assert code == 1 and _entries(tree / "elsewhere")
    assert not (tree / CACHE_DIR_NAME).exists()
    # a .py file inside the cache folder is never linted when its parent is searched
    (tree / "elsewhere" / "planted.py").write_text(HAZARD)
    (tree / CACHE_DIR_NAME).mkdir()
    (tree / CACHE_DIR_NAME / "planted.py").write_text(HAZARD)
    _, out, _ = _run("--no-cache", ".", cwd=tree)
    assert f"{CACHE_DIR_NAME}/planted.py" not in out
    assert "src/hazard.py:4:1: IPL001" in out and "elsewhere/planted.py:4:1: IPL001" in out


def test_cache_root_is_the_project_root(tree: Path, tmp_path: Path) -> None:
    config = Config()
    assert cache_root(config, [tree / "src" / "examples"]) == tree
    lone = tmp_path / "lone"
    lone.mkdir()
    assert cache_root(config, [lone / "missing.py"]) == Path.cwd()


def test_fingerprint_changes_with_the_package_sources(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    (package / "facts").mkdir(parents=True)
    (package / "facts" / "dataflow.py").write_text("x = 1\n")
    (package / "__pycache__").mkdir()
    (package / "__pycache__" / "a.pyc").write_bytes(b"1")
    before = folder_fingerprint(package)
    (package / "__pycache__" / "a.pyc").write_bytes(b"2")
    assert folder_fingerprint(package) == before  # bytecode does not count
    (package / "facts" / "dataflow.py").write_text("x = 2\n")
    assert folder_fingerprint(package) != before


def test_lint_files_keeps_the_input_order(warm_tree: Path) -> None:
    """Cache hits (served first) and misses (linted after) come back in the order given."""
    src = warm_tree / "src"
    files = sorted(src.rglob("*.py"), reverse=True)
    changed = files[::7]
    for path in changed:
        path.write_text(path.read_text() + "# changed\n")
    pairs = [(f, f.relative_to(src).as_posix()) for f in files]
    cache = Cache(warm_tree / CACHE_DIR_NAME)
    results = lint_files(pairs, Config(), jobs=1, cache=cache)
    assert [r.path for r in results] == [display for _, display in pairs]
    assert (cache.stats.hits, cache.stats.misses) == (len(files) - len(changed), len(changed))


def test_a_file_over_its_time_budget_is_not_cached(tmp_path: Path) -> None:
    slow = "import torch\nh = torch.sigmoid(torch.randn(3, requires_grad=True))\n"
    slow += "".join(f"y{i} = h * {i}\n" for i in range(4000)) + "h.mul_(2)\n"
    (tmp_path / "slow.py").write_text(slow)
    (tmp_path / "ok.py").write_text(HAZARD)
    budget = {"INPLACE_LINT_TIME_BUDGET": "0.05"}
    code, out, _ = _run("--jobs", "2", "--cache-dir", "c", ".", cwd=tmp_path, env=budget)
    assert code == 2
    assert "slow.py:1:1: IPL999" in out and "ok.py:4:1: IPL001" in out
    assert len(_entries(tmp_path / "c")) == 1  # ok.py only: the budget verdict depends on load
