"""pytest support: a fixture that asserts a model has no confirmed in-place hazards, and
``pytest --inplace-confirm``, which runs every test under pass A.

Registered through the ``pytest11`` entry point when inplace-lint is installed (or add
``pytest_plugins = ["inplace_lint.dynamic.pytest_plugin"]`` to a top-level conftest.py)::

    def test_model_is_inplace_safe(no_inplace_hazards):
        no_inplace_hazards(MyModel(), torch.randn(2, 3, 32, 32))

``pytest --inplace-confirm`` runs the call phase of every test under pass A (the dynamic
checker's write detector: an in-place write to a tensor autograd saved, found when backward
unpacks it) and lists the confirmed hazards, with ``file:line`` and the first test that hit
each, in a section at the end of the run. Test outcomes are unchanged;
``--inplace-confirm=fail`` also fails each test that hit a hazard. A test that never saves a
tensor for backward costs only the detector's dispatch hook. Works with pytest-xdist (hits
travel in the reports' ``user_properties``).

Limits: the call phase only (a forward run in a fixture and backward in the test is not
seen); no twins (pass B needs a target it can re-run), so a hazard that only changes values
without any write reaching saved storage is not reported here; use ``inplace-lint confirm``.
torch is imported only when the fixture is used, or with ``--inplace-confirm`` in a session
that already imported it.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Generator
from typing import Any

import pytest

__all__ = ["assert_no_inplace_hazards", "no_inplace_hazards"]

#: The ``user_properties`` names a test's hits and its pass-A statistics travel under.
HIT, SAVED = "inplace_confirm", "inplace_confirm_saved"


def assert_no_inplace_hazards(
    fn_or_module: Any,
    *example_inputs: Any,
    loss: Callable[[Any], Any] | None = None,
    **example_kwargs: Any,
) -> Any:
    """Run the dynamic checker; fail with its confirmed lines if any hazard is confirmed.
    Keyword inputs go to the model (``attention_mask=...``)."""
    from inplace_lint.dynamic import confirm

    report = confirm(fn_or_module, *example_inputs, loss=loss, **example_kwargs)
    if report.confirmed:
        lines = "\n".join(c.line() for c in report.confirmed)
        pytest.fail(f"confirmed in-place hazards:\n{lines}", pytrace=False)
    return report


@pytest.fixture
def no_inplace_hazards() -> Callable[..., Any]:
    """``no_inplace_hazards(model, *inputs, loss=None)`` fails the test on a confirmed hazard."""
    return assert_no_inplace_hazards


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("inplace-lint")
    group.addoption(
        "--inplace-confirm",
        action="store_const",
        const="report",
        dest="inplace_confirm",
        help="run every test under inplace-lint's pass A and list confirmed in-place hazards "
        "(file:line) at the end; outcomes are unchanged",
    )
    group.addoption(
        "--inplace-confirm=fail",
        action="store_const",
        const="fail",
        dest="inplace_confirm",
        help="as --inplace-confirm, and fail each test that hit a hazard",
    )


def pytest_configure(config: pytest.Config) -> None:
    mode = config.getoption("inplace_confirm", None)
    if mode:
        config.pluginmanager.register(PassAHarness(mode, config), "inplace-lint-confirm")


class PassAHarness:
    """The hooks of ``--inplace-confirm``; registered only when it is given."""

    def __init__(self, mode: str, config: pytest.Config) -> None:
        self.mode = mode
        self.config = config
        self.found: dict[str, list[str]] = {}  # confirmed line -> test ids that hit it
        self.tests = 0
        self.saved = 0
        self.files: dict[str, Any] = {}  # path -> static findings, for codes (per process)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Generator[None, Any, Any]:
        if "torch" not in sys.modules:  # a test session without torch: nothing to watch
            return (yield)
        from inplace_lint.dynamic.passa import Detector

        detector = Detector()
        failed = False
        try:
            with detector:
                result = yield
        except BaseException:
            failed = True
            raise
        finally:
            lines = self._lines(detector)
            item.user_properties.append((SAVED, bool(detector.by_storage or detector.hits)))
            item.user_properties.extend((HIT, line) for line in lines)
            if lines and self.mode == "fail" and not failed:
                shown = "\n".join(lines)
                pytest.fail(f"inplace-lint confirmed in-place hazards:\n{shown}", pytrace=False)
        return result

    def _lines(self, detector: Any) -> list[str]:
        from inplace_lint.checks import code_for_evidence
        from inplace_lint.dynamic.static import display

        lines: list[str] = []
        for hit in detector.hits:
            if not hit.sites:
                continue
            site = hit.sites[0]
            kind = "raises" if hit.kind == "raises" else "silent"
            code = self._static_code(site) or code_for_evidence(kind)
            lines.append(f"{site.at(display(site.path))}: {code} confirmed: {hit.evidence()}")
        return lines

    def _static_code(self, site: Any) -> str | None:
        """The code of a static finding at the site's statement, if the file has one."""
        if site.path not in self.files:
            from inplace_lint.dynamic.static import lint_reached

            try:
                self.files[site.path] = lint_reached([site.path])
            except Exception:  # the report must not fail the run
                self.files[site.path] = []
        for finding in self.files[site.path]:
            first, last = finding.statement_lines or (finding.line, finding.line)
            if min(first, finding.line) <= site.line <= max(last, finding.line):
                return str(finding.code)
        return None

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when != "call":
            return
        properties = dict.fromkeys(name for name, _ in report.user_properties)
        if SAVED not in properties:
            return
        self.tests += 1
        for name, value in report.user_properties:
            if name == SAVED and value:
                self.saved += 1
            elif name == HIT:
                self.found.setdefault(str(value), []).append(report.nodeid)

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        tests = f"{self.tests} test(s) ran under pass A, {self.saved} saved tensors for backward"
        if not self.found:
            terminalreporter.write_line(f"inplace-lint: no in-place hazard confirmed ({tests})")
            return
        count = len(self.found)
        terminalreporter.section(f"inplace-lint: {count} confirmed in-place hazard(s)")
        for line, tests_hit in sorted(self.found.items()):
            more = f" and {len(tests_hit) - 1} more" if len(tests_hit) > 1 else ""
            terminalreporter.write_line(f"{line} [{tests_hit[0]}{more}]")
        terminalreporter.write_line(f"({tests})")
