"""The shared table of out-of-place forms (``inplace_lint.outofplace``) and its derivations.

The expected sets below are the hand-kept copies the autofix and the twin had before the
forms were derived from the generated op table: a regenerated table that changes them
changes what both rewriters do, and should be looked at.
"""

from __future__ import annotations

import subprocess
import sys

import libcst as cst
import pytest

from inplace_lint.outofplace import (
    Form,
    binary_form,
    function_out_of_place,
    inplace_position,
    method_chain,
    method_form,
    needs_parens,
    positional_inplace,
)

#: The ``inplace`` positions both rewriters typed by hand before issue 15.
HAND_POSITIONS = {
    **dict.fromkeys(("ReLU", "ReLU6", "SELU", "SiLU", "Mish", "Hardswish", "Hardsigmoid"), 0),
    **dict.fromkeys(("ELU", "CELU", "LeakyReLU", "Dropout", "Dropout1d", "Dropout2d"), 1),
    **dict.fromkeys(("Dropout3d", "AlphaDropout", "FeatureAlphaDropout"), 1),
    **dict.fromkeys(("Hardtanh", "Threshold", "RReLU"), 2),
    **dict.fromkeys(("relu", "relu6", "selu", "silu", "mish", "hardswish", "hardsigmoid"), 1),
    **dict.fromkeys(("elu", "celu", "leaky_relu"), 2),
    **dict.fromkeys(("hardtanh", "threshold", "dropout", "dropout1d", "dropout2d"), 3),
    **dict.fromkeys(("dropout3d", "alpha_dropout", "feature_alpha_dropout"), 3),
    "rrelu": 4,
}

#: The twin's hand list of methods rewritten as ``recv.clone().name_(...)``.
HAND_CLONE = {
    "apply_", "bernoulli_", "cauchy_", "exponential_", "fill_", "fill_diagonal_", "geometric_",
    "log_normal_", "map_", "map2_", "normal_", "random_", "uniform_", "zero_",
}  # fmt: skip


def test_inplace_positions_come_from_the_table() -> None:
    from inplace_lint.facts.ops import inplace_flag_positions

    assert dict(inplace_flag_positions()) == HAND_POSITIONS
    assert inplace_position("ReLU") == 0 and inplace_position("relu") == 1
    assert inplace_position("sigmoid") is None


def test_clone_forms_match_the_old_hand_list() -> None:
    from inplace_lint.facts.ops import load_table

    derived = {n for n in load_table().inplace_methods if method_form(n) is Form.CLONE}
    assert derived == HAND_CLONE


@pytest.mark.parametrize(
    ("name", "form"),
    [
        ("add_", Form.RENAME),
        ("relu_", Form.RENAME),
        ("update_", Form.RENAME),  # not a torch method: renamed all the same
        ("zero_", Form.CLONE),
        ("normal_", Form.CLONE),
        ("bernoulli_", Form.CLONE),  # its stem computes something else
        ("copy_", Form.COPY),
        ("requires_grad_", None),
        ("resize_", None),
        ("set_", None),
        ("_coalesced_", None),
        ("__iadd__", None),
        ("add", None),
        ("_", None),
    ],
)
def test_method_form(name: str, form: Form | None) -> None:
    assert method_form(name) is form


def test_function_out_of_place() -> None:
    assert function_out_of_place("relu_") == "relu"
    assert function_out_of_place("zero_") == "zeros_like"


@pytest.mark.parametrize(
    ("source", "binary"),
    [("x += y", "+"), ("x -= y", "-"), ("x **= y", "**"), ("x >>= y", ">>"), ("x @= y", None)],
)
def test_binary_form(source: str, binary: str | None) -> None:
    statement = cst.parse_statement(source + "\n")
    assert isinstance(statement, cst.SimpleStatementLine)
    aug = statement.body[0]
    assert isinstance(aug, cst.AugAssign)
    found = binary_form(aug.operator)
    assert (found[1] if found else None) == binary


def test_positional_inplace_and_parens() -> None:
    call = cst.parse_expression("F.leaky_relu(x, 0.1, True)")
    assert isinstance(call, cst.Call)
    flag = positional_inplace(call, "leaky_relu")
    assert flag is not None and isinstance(flag.value, cst.Name) and flag.value.value == "True"
    assert positional_inplace(call, "relu") is not None  # position 1: the 0.1
    assert positional_inplace(call, "hardtanh") is None  # position 3: not given
    assert needs_parens(cst.parse_expression("a + b"))
    assert not needs_parens(cst.parse_expression("(a + b)"))
    assert not needs_parens(cst.parse_expression("f(a)"))


def test_method_chain() -> None:
    call = cst.parse_expression("h.add(1).mul_(2).add_(3)")
    assert isinstance(call, cst.Call)
    methods, root = method_chain(call, lambda name: name.endswith("_"))
    assert [m.attr.value for m in methods] == ["mul_", "add_"]
    assert isinstance(root, cst.Call)
    methods, root = method_chain(call, lambda name: True)
    assert [m.attr.value for m in methods] == ["add", "mul_", "add_"]
    assert isinstance(root, cst.Name) and root.value == "h"


def test_the_twin_and_the_forms_import_no_torch() -> None:
    code = (
        "import sys\n"
        "import inplace_lint.dynamic.twin, inplace_lint.outofplace, inplace_lint.fix\n"
        "print('torch' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
