"""A pytest fixture that asserts a model has no confirmed in-place hazards.

Registered through the ``pytest11`` entry point when inplace-lint is installed (or add
``pytest_plugins = ["inplace_lint.dynamic.pytest_plugin"]`` to a top-level conftest.py)::

    def test_model_is_inplace_safe(no_inplace_hazards):
        no_inplace_hazards(MyModel(), torch.randn(2, 3, 32, 32))

torch is imported only when the fixture is used.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

__all__ = ["assert_no_inplace_hazards", "no_inplace_hazards"]


def assert_no_inplace_hazards(
    fn_or_module: Any, *example_inputs: Any, loss: Callable[[Any], Any] | None = None
) -> Any:
    """Run the dynamic checker; fail with its confirmed lines if any hazard is confirmed."""
    from inplace_lint.dynamic import confirm

    report = confirm(fn_or_module, *example_inputs, loss=loss)
    if report.confirmed:
        lines = "\n".join(c.line() for c in report.confirmed)
        pytest.fail(f"confirmed in-place hazards:\n{lines}", pytrace=False)
    return report


@pytest.fixture
def no_inplace_hazards() -> Callable[..., Any]:
    """``no_inplace_hazards(model, *inputs, loss=None)`` fails the test on a confirmed hazard."""
    return assert_no_inplace_hazards
