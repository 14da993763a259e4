"""``--format json|sarif|github|lsp``: run the real command, validate against the schemas."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from cli_runner import in_process

from inplace_lint import catalogue
from inplace_lint.checks import all_rules
from inplace_lint.finding import Edit, Finding, Fix, Position, Related
from inplace_lint.report.github import escape_data, escape_property, render_github
from inplace_lint.report.json_format import render_json, schema
from inplace_lint.report.sarif import render_sarif

ROOT = Path(__file__).resolve().parent.parent
SARIF_SCHEMA = json.loads((ROOT / "tests" / "data" / "sarif-schema-2.1.0.json").read_text("utf-8"))
FORMATS = ("json", "sarif", "github", "lsp")

#: IPL001 on line 4 (column 1, related: line 3) and opt-in IPL008 on line 6 (column 5).
HAZARD = """\
import torch
a = torch.randn(4, requires_grad=True)
x = torch.sigmoid(a)
x.mul_(2)
x.sum().backward()
r = a.clamp(min=0)
"""
CLEAN = "import torch\nx = torch.randn(4)\nx.add_(1)\n"
BROKEN = "import torch\nx = torch.randn(4)\nx.add_(1\n"
FIXED = Finding(
    path="pkg/m.py",
    start=Position(4, 1),
    end=Position(4, 10),
    code="IPL001",
    message="`x.mul_()` overwrites `x`",
    related=(Related(Position(3, 5), "saved for backward by torch.sigmoid here"),),
    fix=Fix("use x = x.mul(2)", (Edit(Position(4, 1), Position(4, 10), "x = x.mul(2)"),), False),
)


def run(cwd: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    """``inplace-lint --no-cache ARGS`` in ``cwd``, in this process (tests/cli_runner.py)."""
    argv = ["--no-cache", *args]
    code, out, err = in_process(cwd, argv, stdin.encode())
    proc = subprocess.CompletedProcess(argv, code, out.decode(), err.decode())
    assert "Traceback" not in proc.stderr + proc.stdout, proc.stderr
    return proc


@pytest.fixture
def work(tmp_path: Path) -> Path:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "hazard.py").write_text(HAZARD, encoding="utf-8")
    (tmp_path / "pkg" / "clean.py").write_text(CLEAN, encoding="utf-8")
    return tmp_path


def validate_sarif(log: dict[str, Any]) -> None:
    jsonschema.Draft7Validator(SARIF_SCHEMA).validate(log)


def validate_json(report: list[dict[str, Any]]) -> None:
    jsonschema.Draft202012Validator(schema()).validate(report)


def test_json_output_follows_its_schema(work: Path) -> None:
    proc = run(work, "--format", "json", "--extend-select", "IPL008", "pkg")
    assert proc.returncode == 1, proc.stderr
    report = json.loads(proc.stdout)
    validate_json(report)
    first, second = report
    assert first == {
        "path": "pkg/hazard.py",
        "line": 4,
        "column": 1,
        "end_line": 4,
        "end_column": 10,
        "code": "IPL001",
        "name": "saved-for-backward",
        "message": first["message"],
        "severity": "error",
        "url": catalogue.url("IPL001"),
        "related": first["related"],
        "fix": first["fix"],  # attached by inplace_lint.fix; its shape is in the schema
    }
    assert first["message"].startswith("`x.mul_()` overwrites `x` in place")
    assert first["related"][0] == {
        "line": 3,
        "column": 5,
        "message": "saved for backward by torch.sigmoid here",
    }
    assert (second["code"], second["line"], second["column"]) == ("IPL008", 6, 5)
    assert second["severity"] == "warning" and second["name"] == "clamp-as-relu"


def test_json_schema_in_the_docs_is_the_shipped_schema() -> None:
    page = (ROOT / "docs" / "json-output.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```json\n(.*?)```", page, re.S)
    schemas = [json.loads(b) for b in blocks if '"$schema"' in b]
    assert schemas == [schema()]
    jsonschema.Draft202012Validator.check_schema(schema())


def test_a_fix_is_serialised_in_json_and_sarif() -> None:
    report = json.loads(render_json([FIXED]))
    validate_json(report)
    assert report[0]["fix"] == {
        "description": "use x = x.mul(2)",
        "safe": False,
        "edits": [
            {
                "start_line": 4,
                "start_column": 1,
                "end_line": 4,
                "end_column": 10,
                "text": "x = x.mul(2)",
            }
        ],
    }
    log = json.loads(render_sarif([FIXED]))  # relative to the working directory
    validate_sarif(log)
    (fix,) = log["runs"][0]["results"][0]["fixes"]
    (change,) = fix["artifactChanges"]
    assert change["artifactLocation"] == {"uri": "pkg/m.py", "uriBaseId": "%SRCROOT%"}
    assert change["replacements"] == [
        {
            "deletedRegion": {"startLine": 4, "startColumn": 1, "endLine": 4, "endColumn": 10},
            "insertedContent": {"text": "x = x.mul(2)"},
        }
    ]


def test_sarif_output_is_valid_sarif_2_1_0(work: Path) -> None:
    proc = run(work, "--format", "sarif", "--extend-select", "IPL008", "pkg")
    assert proc.returncode == 1, proc.stderr
    log = json.loads(proc.stdout)
    validate_sarif(log)
    (sarif_run,) = log["runs"]
    rules = sarif_run["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == [r.code for r in all_rules()] + ["IPL999"]
    for rule in rules[:-1]:
        page = (ROOT / "rules" / f"{rule['id']}.md").read_text(encoding="utf-8")
        assert rule["help"]["markdown"] == page
        assert rule["fullDescription"]["text"] == " ".join(page.split("\n\n")[1].split())
        assert rule["helpUri"] == catalogue.url(rule["id"])
    assert sarif_run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == work.resolve().as_uri() + "/"
    first, second = sarif_run["results"]
    assert first["ruleId"] == "IPL001" and rules[first["ruleIndex"]]["id"] == "IPL001"
    assert first["level"] == "error" and second["level"] == "warning"
    location = first["locations"][0]["physicalLocation"]
    assert location["artifactLocation"] == {"uri": "pkg/hazard.py", "uriBaseId": "%SRCROOT%"}
    assert location["region"] == {"startLine": 4, "startColumn": 1, "endLine": 4, "endColumn": 10}
    related = first["relatedLocations"][0]
    assert [r["id"] for r in first["relatedLocations"]] == list(
        range(1, len(first["relatedLocations"]) + 1)
    )
    assert related["physicalLocation"]["region"] == {"startLine": 3, "startColumn": 5}
    assert "saved for backward" in related["message"]["text"]
    assert sarif_run["invocations"] == [{"executionSuccessful": True}]


def test_sarif_uri_outside_the_working_directory_is_absolute(work: Path) -> None:
    inner = work / "inner"
    inner.mkdir()
    proc = run(inner, "--format", "sarif", str(work / "pkg" / "hazard.py"))
    log = json.loads(proc.stdout)
    validate_sarif(log)
    where = log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert where == {"uri": (work / "pkg" / "hazard.py").resolve().as_uri()}


def test_github_annotations(work: Path) -> None:
    odd = work / "pkg" / "odd,name:100%.py"
    odd.write_text(HAZARD, encoding="utf-8")
    proc = run(work, "--format", "github", "--extend-select", "IPL008", "pkg")
    assert proc.returncode == 1, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == (
        "::error file=pkg/hazard.py,line=4,col=1,endLine=4,endColumn=10,"
        f"title=IPL001 saved-for-backward::{escape_data(json_message(work, 'IPL001'))}"
    )
    assert lines[1].startswith(
        "::warning file=pkg/hazard.py,line=6,col=5,endLine=6,endColumn=19,"
        "title=IPL008 clamp-as-relu::`a.clamp(min=0)`"
    )
    assert lines[2].startswith("::error file=pkg/odd%2Cname%3A100%25.py,line=4,col=1,")
    assert len(lines) == 4


def json_message(work: Path, code: str) -> str:
    report = json.loads(run(work, "--format", "json", "pkg/hazard.py").stdout)
    return next(f["message"] for f in report if f["code"] == code)


def test_github_escaping() -> None:
    assert escape_data("50% done\r\nnext: a,b") == "50%25 done%0D%0Anext: a,b"
    assert escape_property("a,b:c%d\ne") == "a%2Cb%3Ac%25d%0Ae"
    weird = Finding("x.py", Position(1, 1), Position(1, 2), "IPL001", "line one\nline two 100%")
    assert render_github([weird]).endswith("::line one%0Aline two 100%25\n")


def test_lsp_output_maps_uris_to_diagnostics(work: Path) -> None:
    proc = run(work, "--format", "lsp", "--extend-select", "IPL008", "pkg")
    assert proc.returncode == 1, proc.stderr
    report = json.loads(proc.stdout)
    hazard = (work / "pkg" / "hazard.py").resolve().as_uri()
    clean = (work / "pkg" / "clean.py").resolve().as_uri()
    assert report[clean] == []
    first, second = report[hazard]
    assert first["range"] == {
        "start": {"line": 3, "character": 0},
        "end": {"line": 3, "character": 9},
    }
    assert first["code"] == "IPL001" and first["source"] == "inplace-lint"
    assert first["codeDescription"]["href"] == catalogue.url("IPL001")
    assert first["relatedInformation"][0]["location"]["range"]["start"] == {
        "line": 2,
        "character": 4,
    }
    assert first["severity"] == 1  # error
    assert second["code"] == "IPL008" and second["severity"] == 2  # warning


def test_lsp_columns_count_utf16_units(work: Path) -> None:
    source = HAZARD.replace("x.mul_(2)", "y = '\U0001f600'; x.mul_(2)")
    (work / "pkg" / "hazard.py").write_text(source, encoding="utf-8")
    report = json.loads(run(work, "--format", "lsp", "pkg/hazard.py").stdout)
    (diagnostic,) = report[(work / "pkg" / "hazard.py").resolve().as_uri()]
    # "y = '<emoji>'; " is 9 code points and 10 UTF-16 units.
    assert diagnostic["range"]["start"] == {"line": 3, "character": 10}
    text = json.loads(run(work, "--format", "json", "pkg/hazard.py").stdout)
    assert text[0]["column"] == 10


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_stays_well_formed_with_parse_errors_and_missing_paths(
    work: Path, fmt: str
) -> None:
    (work / "pkg" / "broken.py").write_text(BROKEN, encoding="utf-8")
    proc = run(work, "--format", fmt, "pkg", "missing.py")
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == ["inplace-lint: error: path does not exist: missing.py"]
    if fmt == "github":
        lines = proc.stdout.splitlines()
        assert lines[0].startswith("::error file=pkg/broken.py,line=3,")
        assert "title=IPL999 cannot-parse::cannot parse" in lines[0]
        assert all(re.fullmatch(r"::(error|warning) [^:]+::.+", line) for line in lines)
        return
    report = json.loads(proc.stdout)
    if fmt == "json":
        validate_json(report)
        assert report[0]["code"] == "IPL999" and report[0]["url"] == catalogue.url("IPL999")
    elif fmt == "sarif":
        validate_sarif(report)
        results = report["runs"][0]["results"]
        assert results[0]["ruleId"] == "IPL999"
        assert report["runs"][0]["invocations"] == [{"executionSuccessful": False}]
    else:
        diagnostics = report[(work / "pkg" / "broken.py").resolve().as_uri()]
        assert [d["code"] for d in diagnostics] == ["IPL999"]


@pytest.mark.parametrize("fmt", FORMATS)
def test_formats_on_stdin_and_on_no_findings(work: Path, fmt: str) -> None:
    proc = run(work, "--format", fmt, "-", "--stdin-filename", "pkg/new.py", stdin=HAZARD)
    assert proc.returncode == 1, proc.stderr
    assert "pkg/new.py" in proc.stdout
    clean = run(work, "--format", fmt, "pkg/clean.py")
    assert clean.returncode == 0, clean.stderr
    if fmt == "github":
        assert clean.stdout == ""
    elif fmt == "json":
        assert json.loads(clean.stdout) == []
    elif fmt == "sarif":
        log = json.loads(clean.stdout)
        validate_sarif(log)
        assert log["runs"][0]["results"] == []
    else:
        assert json.loads(clean.stdout) == {(work / "pkg" / "clean.py").resolve().as_uri(): []}


def test_statistics_go_to_stderr_with_a_machine_format(work: Path) -> None:
    proc = run(work, "--format", "json", "--statistics", "pkg")
    assert len(json.loads(proc.stdout)) == 1
    assert re.fullmatch(r"1\s+IPL001 saved-for-backward\n", proc.stderr)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--format", "xml"], "argument --format: invalid choice: 'xml'"),
        (["--format", "json", "--show-source"], "--show-source needs --format text"),
        (["--select", "IPL1"], "--select: unknown rule code or prefix 'IPL1'"),
        (["--ignore", "E501"], "--ignore: unknown rule code or prefix 'E501'"),
        (["--extend-select", "IPL08"], "--extend-select: unknown rule code or prefix 'IPL08'"),
    ],
)
def test_bad_options_are_one_line_and_exit_2(work: Path, args: list[str], message: str) -> None:
    proc = run(work, *args, "pkg")
    assert proc.returncode == 2
    assert proc.stdout == ""
    (line,) = proc.stderr.splitlines()
    assert line.startswith("inplace-lint: error: ") and message in line


def test_prefixes_are_valid_codes(work: Path) -> None:
    proc = run(work, "--format", "json", "--select", "IPL00", "--ignore", "IPL0", "pkg")
    assert proc.returncode == 0 and json.loads(proc.stdout) == []
    proc = run(work, "--format", "json", "--select", "ipl00", "pkg")
    assert [f["code"] for f in json.loads(proc.stdout)] == ["IPL001"]
