"""Shared set-up for the suite: import paths, one torch thread, results shared in a session.

* The package and ``tests/harness.py`` are importable however pytest is started.
* torch runs tiny tensors here, where extra threads only spin: ``OMP_NUM_THREADS`` defaults to
  1 (for this process and every child it starts), which made the torch tests several times
  faster on a busy 2-core machine. Set it yourself to override.
* Work several test modules need is done once a session: torch runs of the catalogue examples
  and their twins (``torch_runs``), libcst parses of repository files (``libcst_parse``), the
  pre-commit hook's environment (``precommit_home``).
* Under pytest-xdist (``-n``, on by default in pyproject.toml) each test module runs whole on
  one worker, and modules that share session work run on the same one (``_SHARED``), so no
  session or module fixture is computed twice. The grouping is this file's own scheduler
  (``pytest_xdist_make_scheduler``): xdist's ``loadgroup`` marks a test's group by editing its
  node id, which pytest 9 no longer reads, so under it every test was scheduled alone and the
  shared work was done on both workers.
* Under CI (``CI=true``) a test skipped because torch cannot be imported fails instead: the dev
  install pins torch, so a missing torch there is a broken install, not an optional extra.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Generator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

_TESTS = Path(__file__).resolve().parent
for _path in (_TESTS.parent, _TESTS):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

os.environ.setdefault("OMP_NUM_THREADS", "1")

from harness import TorchRuns  # noqa: E402  (needs the path set above)

#: pytest's own ``pytester`` runs whole pytest sessions in process (the dynamic checker's
#: pytest plugin is tested through it).
pytest_plugins = ("pytester",)

if TYPE_CHECKING:
    import libcst as cst

#: The reason ``pytest.importorskip("torch")`` gives when torch is missing.
TORCH_SKIP = "could not import 'torch'"
_INSTALL = "install the dev extra: pip install -e '.[dev]'"


def under_ci() -> bool:
    """True when the CI variable says so, as GitHub Actions and most CI services set it."""
    return os.environ.get("CI", "").strip().lower() in ("true", "1", "yes")


#: Under CI: the modules whose collection was skipped because torch is missing.
_TORCH_SKIPPED: list[str] = []


def _torch_skip(report: Any) -> bool:
    return bool(report.skipped) and under_ci() and TORCH_SKIP in str(report.longrepr)


#: Modules that share a session fixture run on one xdist worker, under one group name.
_SHARED = {
    "test_examples_torch": "torch_runs",
    "test_fix": "torch_runs",
    "test_from_ast": "libcst_parse",
    "test_reparse": "libcst_parse",
    "test_precommit": "precommit_home",
    "test_readme_precommit": "precommit_home",
}


#: Modules whose tests share no module or session fixture worth keeping: their tests are
#: spread over the workers one by one (the dynamic checker's case runs are the longest part).
_SPREAD = {"test_dynamic"}


def work_unit(nodeid: str) -> str:
    """The unit of work a test is scheduled in: its module's shared group, its module, or
    (for ``_SPREAD``) the test alone."""
    module = Path(nodeid.split("::", 1)[0]).stem
    if module in _SPREAD:
        return nodeid
    return _SHARED.get(module, module)


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """xdist's scope scheduling over :func:`work_unit`: whole units to one worker, the units
    with most tests first (xdist's reordering), single tests last to even out the end."""
    from xdist.scheduler import LoadScopeScheduling

    class WorkUnits(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return work_unit(nodeid)

    return WorkUnits(config, log)


def pytest_collectreport(report: pytest.CollectReport) -> None:
    """A module skipped for torch stays a skip (a collection error would stop the run), and
    is counted; the session then fails (below). Under xdist the controller sees the workers'
    skipped collections through this hook too."""
    if _torch_skip(report) and report.nodeid not in _TORCH_SKIPPED:
        _TORCH_SKIPPED.append(report.nodeid)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator:
    """A test (or its fixture) skipped for torch fails instead."""
    report = yield
    if report.when in ("setup", "call") and _torch_skip(report):
        report.outcome = "failed"
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else report.longrepr
        report.longrepr = f"torch is missing under CI=true: {_INSTALL} ({reason})"
    return report


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if _TORCH_SKIPPED and exitstatus in (pytest.ExitCode.OK, pytest.ExitCode.NO_TESTS_COLLECTED):
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if _TORCH_SKIPPED:
        terminalreporter.write_line(
            f"FAILED: torch is missing under CI=true ({_INSTALL}); "
            f"modules skipped for it: {', '.join(_TORCH_SKIPPED)}",
            red=True,
        )


@pytest.fixture
def work(tmp_path: Path) -> Path:
    """A scratch folder whose empty pyproject.toml stops the search for configuration (a
    module may define its own ``work`` with other contents)."""
    (tmp_path / "pyproject.toml").write_text("", encoding="utf-8")
    return tmp_path


@pytest.fixture(scope="session")
def precommit_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One PRE_COMMIT_HOME for the session: pre-commit builds the hook's environment for this
    repository at one commit once, and every test that runs the hook from this checkout reuses
    it (pre-commit's own store, keyed by repository and commit, locked for concurrent use)."""
    return tmp_path_factory.mktemp("pre-commit-home")


@pytest.fixture(scope="session")
def torch_runs() -> TorchRuns:
    """Each distinct example source and twin run once under torch for the whole session."""
    pytest.importorskip("torch")
    from inplace_lint.dynamic.twin import out_of_place_twin

    return TorchRuns(out_of_place_twin)


@pytest.fixture(scope="session")
def libcst_parse() -> Callable[[Path], tuple[str, cst.Module]]:
    """``parse(path)``: the file's text and libcst's own parse of it, parsed once a session.

    libcst trees are immutable, so test modules may share them (test_from_ast, test_reparse).
    """
    import libcst as cst

    memo: dict[Path, tuple[str, cst.Module]] = {}

    def parse(path: Path) -> tuple[str, cst.Module]:
        if path not in memo:
            text = path.read_text(encoding="utf-8")
            memo[path] = (text, cst.parse_module(text))
        return memo[path]

    return parse
