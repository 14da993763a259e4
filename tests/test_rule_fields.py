"""Every setting of a rule lives on its ``Rule``; line references in messages are placed late."""

from __future__ import annotations

import libcst as cst

from inplace_lint import catalogue
from inplace_lint.checks import PARSE_ERROR, LineOf, RawFinding, all_rules, code_for_evidence
from inplace_lint.engine import _apply_precedence, _place
from inplace_lint.positions import module_positions
from inplace_lint.screen import may_contain_hazard

CODES = {rule.code for rule in all_rules()}


def test_rule_fields_name_known_codes() -> None:
    for rule in all_rules():
        assert set(rule.supersedes) <= CODES - {rule.code}
        assert rule.severity in ("error", "warning")
        assert not rule.safe_fix or rule.fix == "out-of-place"
    for evidence in ("raises", "silent", "leaf-error", "autograd-error"):
        assert code_for_evidence(evidence) in CODES  # type: ignore[arg-type]


def test_parse_error_is_described_like_a_rule() -> None:
    assert catalogue.described(PARSE_ERROR) is catalogue.PARSE_ERROR_CODE
    assert catalogue.every_code()[-1].code == PARSE_ERROR
    assert catalogue.rule_name(PARSE_ERROR) == "cannot-parse"
    assert catalogue.severity("ipl008") == "warning"
    assert catalogue.severity("IPL123") == "error" and catalogue.rule_name("IPL123") == ""


def test_line_references_are_filled_in_when_placed() -> None:
    module = cst.parse_module("a = 1\nb = 2\n\nc = 3\n")
    first, _, third = (statement.body[0] for statement in module.body)  # type: ignore[attr-defined]
    elsewhere = cst.Name("x")  # a node with no position
    message = (
        "set at line ",
        LineOf(first),
        ", read  at line ",
        LineOf(third),
        ", ",
        LineOf(elsewhere),
    )
    raw = RawFinding("IPL002", third, None, message, ((first, "set here"),))
    assert list(raw.references()) == [first, third, elsewhere]
    [placed] = _place([raw], "m.py", module_positions(module))
    assert placed.message == "set at line 1, read at line 4, ?"
    assert placed.line == 4 and [r.position.line for r in placed.related] == [1]


def test_precedence_reads_rule_fields() -> None:
    node = cst.Name("x")
    raw = [RawFinding(code, node, None, code) for code in ("IPL004", "IPL002", "IPL001")]
    assert [item.code for item in _apply_precedence(raw)] == ["IPL001"]


def test_screen_words_come_from_the_rules() -> None:
    text = "import torch\ny = torch.clamp(x, min=0)\n"
    assert may_contain_hazard(text, {"IPL008"}) and may_contain_hazard(text)
    assert not may_contain_hazard(text, {"IPL001"})
