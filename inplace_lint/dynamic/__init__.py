"""The dynamic checker: run a model with real torch and confirm in-place hazards.

This is the only part of inplace-lint that imports torch (lazily, when a function below is
called) and the only part that executes user code.

    from inplace_lint.dynamic import confirm
    report = confirm(model, torch.randn(2, 3, 32, 32))
    assert report.ok, report.text()
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from inplace_lint.dynamic.report import Report

__all__ = ["confirm", "confirm_target"]


def confirm(
    fn_or_module: Any,
    *example_inputs: Any,
    loss: Callable[[Any], Any] | None = None,
    seed: int = 0,
    graph: bool = False,
    **example_kwargs: Any,
) -> Report:
    """Run ``fn_or_module`` and return a report of confirmed in-place hazards.

    With example inputs (positional, and keyword inputs such as a Hugging Face model's
    ``attention_mask=``), ``fn_or_module`` is a model (or callable): it runs forward on a deep
    copy, ``loss(output)`` (default: a seeded random projection of the outputs), backward.
    Without inputs it is a zero-argument training step, or a function returning
    ``(model, example_inputs)``; the models, gradients and optimizers it reaches are put back
    after each run. Raises ``inplace_lint.dynamic.runner.BadInput`` when the target cannot
    run for a reason that is not an in-place hazard.
    """
    from inplace_lint.dynamic.core import check
    from inplace_lint.dynamic.runner import ObjectSubject

    subject = ObjectSubject(fn_or_module, example_inputs, loss, seed, example_kwargs)
    return check(subject, graph=graph)


def confirm_target(target: str, seed: int = 0, graph: bool = False) -> Report:
    """The ``confirm`` command for one TARGET: ``file.py``, ``file.py::name`` or ``mod:name``."""
    from inplace_lint.dynamic.core import check
    from inplace_lint.dynamic.targets import subject_for

    return check(subject_for(target, seed), graph=graph)
