"""Pass B's torch.fx route: traced twins where the model traces faithfully, else source twins."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("torch")

import torch

from inplace_lint.dynamic import confirm
from inplace_lint.dynamic.core import check
from inplace_lint.dynamic.fxroute import MODULE, RENAME, FxRoute, prepare
from inplace_lint.dynamic.report import Report
from inplace_lint.dynamic.runner import Subject, run
from inplace_lint.dynamic.targets import subject_for

MODELS = """\
import torch
import torch.nn.functional as F
from torch import nn


class StaleRelu(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        h = self.fc(x)
        skip = h
        h = F.relu(h, inplace=True)  # stale
        return h + skip


class TwoActs(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.bn = nn.BatchNorm1d(4)
        self.act1 = nn.ReLU(inplace=True)  # act1 built
        self.act2 = nn.ReLU(inplace=True)  # act2 built

    def forward(self, x):
        a = self.act1(torch.sigmoid(self.fc(x)))  # after sigmoid
        b = self.act2(self.bn(self.fc(x)))  # after batchnorm
        return a + b


class AfterNorm(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.bn = nn.BatchNorm1d(4)
        self.act = nn.ReLU(inplace=True)

    def forward(self, x):
        return self.act(self.bn(self.fc(x))) * 2  # norm then act


class Branchy(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        h = self.fc(x)
        if x.sum() > 0:
            h = h * 2
        skip = h
        h = F.relu(h, inplace=True)  # branchy stale
        return h + skip


class Residual(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 4)
        self.fc2 = nn.Linear(4, 4)

    def forward(self, x):
        out = self.fc1(x)
        identity = out
        out += self.fc2(x)  # residual
        return out * identity


class Methods(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        h = self.fc(x)
        g = torch.relu_(h)  # function
        k = g.sigmoid_()  # method
        h.mul_(2)  # statement
        return k


def stale():
    return StaleRelu(), torch.randn(3, 4)


def two_acts():
    return TwoActs(), torch.randn(3, 4)


def after_norm():
    return AfterNorm(), torch.randn(3, 4)


def branchy():
    return Branchy(), torch.ones(3, 4)


def residual():
    return Residual(), torch.randn(3, 4)


def methods():
    return Methods(), torch.randn(3, 4)
"""


def _line(marker: str) -> int:
    (number,) = [n for n, text in enumerate(MODELS.splitlines(), 1) if f"# {marker}" in text]
    return number


@pytest.fixture
def models(tmp_path: Path) -> Path:
    path = tmp_path / "models.py"
    path.write_text(MODELS, encoding="utf-8")
    return path


def _check(models: Path, name: str) -> Report:
    return check(subject_for(f"{models}::{name}"), codes=["IPL001", "IPL002"])


def _route(models: Path, name: str) -> tuple[Subject, FxRoute]:
    subject = subject_for(f"{models}::{name}")
    base = run(subject)
    route, reason = prepare(subject, base)
    assert route is not None, reason
    return subject, route


def test_fx_route_confirms_inplace_relu_stale_read(models: Path) -> None:
    report = _check(models, "stale")
    (hit,) = report.confirmed
    assert (hit.site.line, hit.code, hit.kind) == (_line("stale"), "IPL002", "silent")
    assert hit.how == "torch.fx twin" and hit.evidence.endswith("(torch.fx twin)")
    assert report.notes == []


def test_inplace_relu_modules_after_sigmoid_and_after_batchnorm(models: Path) -> None:
    report = _check(models, "two_acts")
    assert {(c.site.line, c.code) for c in report.confirmed} == {(_line("after sigmoid"), "IPL001")}
    assert report.notes == []
    # The traced graph flips the module call and maps the constructor line to the same call.
    subject, route = _route(models, "two_acts")
    path = str(models.resolve())
    for call, built in (("after sigmoid", "act1 built"), ("after batchnorm", "act2 built")):
        flips = route.flips(path, _line(call))
        assert flips is not None and [f.how for f in flips] == [MODULE]
        assert route.flips(path, _line(built)) == flips
    base = run(subject)
    assert base.error is not None and "modified by an inplace operation" in str(base.error)
    sigmoid, batchnorm = (
        route.flips(path, _line("after sigmoid")),
        route.flips(path, _line("after batchnorm")),
    )
    assert sigmoid is not None and batchnorm is not None
    assert route.run(sigmoid).ok  # flipping the hazard removes the error
    assert route.run(batchnorm).error is not None  # flipping the safe one does not


def test_inplace_relu_after_batchnorm_twin_matches(models: Path) -> None:
    subject, route = _route(models, "after_norm")
    base = run(subject)
    assert base.ok
    flips = route.flips(str(models.resolve()), _line("norm then act"))
    assert flips is not None and [f.how for f in flips] == [MODULE]
    twin = route.run(flips)
    assert twin.ok and twin.values.keys() == base.values.keys()
    for key, value in base.values.items():
        torch.testing.assert_close(twin.values[key], value)
    assert _check(models, "after_norm").ok


def test_untraceable_model_falls_back_to_source_twin(models: Path) -> None:
    report = _check(models, "branchy")
    (hit,) = report.confirmed
    assert (hit.site.line, hit.code) == (_line("branchy stale"), "IPL002")
    assert hit.how == "twin" and "torch.fx" not in hit.evidence
    (note,) = report.notes
    assert "torch.fx cannot trace the model" in note


def test_iadd_hazard_refuses_the_traced_graph(models: Path) -> None:
    report = _check(models, "residual")
    (hit,) = report.confirmed
    assert (hit.site.line, hit.code, hit.how) == (_line("residual"), "IPL002", "twin")
    (note,) = report.notes
    assert "traced graph differs from the eager run" in note


def test_method_and_function_twins(models: Path) -> None:
    _, route = _route(models, "methods")
    path = str(models.resolve())
    (function,) = route.flips(path, _line("function")) or []
    assert function.how == RENAME and function.twin is torch.relu  # never clamp
    (method,) = route.flips(path, _line("method")) or []
    assert (method.how, method.twin) == (RENAME, "sigmoid")
    # a statement rebinds its variable in the source twin, which a graph cannot express
    assert route.flips(path, _line("statement")) is None


class Stale(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = torch.nn.Linear(4, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.fc(x)
        skip = h
        h = torch.nn.functional.relu(h, inplace=True)
        return h + skip


def test_api_model_goes_through_fx() -> None:
    report = confirm(Stale(), torch.randn(3, 4))
    (hit,) = report.confirmed
    assert hit.how == "torch.fx twin" and hit.code == "IPL002"
