"""``--format sarif``: a SARIF 2.1.0 log for GitHub code scanning and other SARIF viewers."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any
from urllib.parse import quote

from inplace_lint import __version__, catalogue
from inplace_lint.finding import Finding, Position

SCHEMA_URI = (
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
)
#: The base every repo-relative URI is resolved against (the directory inplace-lint ran in).
SRCROOT = "%SRCROOT%"


def _rule(code: str, name: str, summary: str, enabled: bool) -> dict[str, Any]:
    description = catalogue.description(code)
    page = catalogue.page(code)
    link = catalogue.url(code)
    return {
        "id": code,
        "name": name,
        "shortDescription": {"text": summary},
        "fullDescription": {"text": description},
        "help": {"text": f"{description} See {link}", "markdown": page or description},
        "helpUri": link,
        "defaultConfiguration": {"enabled": enabled, "level": catalogue.severity(code)},
        "properties": {"tags": ["pytorch", "autograd", "correctness"]},
    }


def rules() -> list[dict[str, Any]]:
    """One reportingDescriptor per code, IPL999 last."""
    return [_rule(r.code, r.name, r.summary, r.default) for r in catalogue.every_code()]


def artifact_location(path: str, root: Path) -> dict[str, Any]:
    """A URI relative to ``root`` (with ``uriBaseId``) for files under it, else absolute."""
    try:
        absolute = Path(os.path.abspath(path))
        relative = absolute.relative_to(root)
    except ValueError:
        return {"uri": absolute.as_uri()}
    return {"uri": quote(relative.as_posix()), "uriBaseId": SRCROOT}


def _region(start: Position, end: Position | None = None) -> dict[str, int]:
    region = {"startLine": start.line, "startColumn": start.column}
    if end is not None:
        region.update(endLine=end.line, endColumn=end.column)
    return region


def _result(finding: Finding, index: dict[str, int], root: Path) -> dict[str, Any]:
    where = artifact_location(finding.path, root)
    result: dict[str, Any] = {
        "ruleId": finding.code,
        "level": catalogue.severity(finding.code),
        "message": {"text": finding.message},
        "locations": [
            {
                "physicalLocation": {
                    "artifactLocation": where,
                    "region": _region(finding.start, finding.end),
                }
            }
        ],
    }
    if finding.code in index:
        result["ruleIndex"] = index[finding.code]
    if finding.related:
        result["relatedLocations"] = [
            {
                "id": number,
                "message": {"text": related.message},
                "physicalLocation": {
                    "artifactLocation": where,
                    "region": _region(related.position),
                },
            }
            for number, related in enumerate(finding.related, start=1)
        ]
    if finding.fix is not None:
        result["fixes"] = [
            {
                "description": {"text": finding.fix.description},
                "artifactChanges": [
                    {
                        "artifactLocation": where,
                        "replacements": [
                            {
                                "deletedRegion": _region(edit.start, edit.end),
                                "insertedContent": {"text": edit.text},
                            }
                            for edit in finding.fix.edits
                        ],
                    }
                ],
            }
        ]
    return result


def sarif_log(
    findings: Iterable[Finding], root: Path | None = None, successful: bool = True
) -> dict[str, Any]:
    """The SARIF log object: one run, every rule, one result per finding."""
    base = Path(os.path.abspath(root if root is not None else Path.cwd()))
    descriptors = rules()
    index = {rule["id"]: number for number, rule in enumerate(descriptors)}
    return {
        "$schema": SCHEMA_URI,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "inplace-lint",
                        "version": __version__,
                        "semanticVersion": __version__,
                        "informationUri": catalogue.REPO_URL,
                        "rules": descriptors,
                    }
                },
                "invocations": [{"executionSuccessful": successful}],
                "originalUriBaseIds": {SRCROOT: {"uri": base.as_uri().rstrip("/") + "/"}},
                "columnKind": "unicodeCodePoints",
                "results": [_result(f, index, base) for f in findings],
            }
        ],
    }


def render_sarif(
    findings: Iterable[Finding], root: Path | None = None, successful: bool = True
) -> str:
    """The SARIF log as indented JSON ending in a newline."""
    return json.dumps(sarif_log(findings, root, successful), indent=2, ensure_ascii=False) + "\n"
