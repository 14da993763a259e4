"""Tests for the torch op table ``inplace_lint/data/torch_ops.json``.

The table is generated from real torch autograd by ``tools/gen_torch_ops.py``. The freshness
test regenerates it (only when torch is importable); the spot checks need only the JSON.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
TABLE_PATH = ROOT / "inplace_lint" / "data" / "torch_ops.json"
GENERATOR = ROOT / "tools" / "gen_torch_ops.py"

F = "torch.nn.functional"
LIST_SECTIONS = (
    "inplace_methods",
    "view_methods",
    "view_functions",
    "factory_functions",
    "metadata_factories",
    "uninitialized",
    "overwrites",
    "module_wrappers",
    "tensor_attributes",
    "tensor_properties",
    "fresh_functions",
    "fresh_methods",
    "receiver_methods",
    "outofplace_twins",
    "fresh_modules",
    "passing_modules",
)
TOP_LEVEL_KEYS = {"torch_version", "functions", "methods", "modules", *LIST_SECTIONS}


@pytest.fixture(scope="module")
def table() -> dict[str, Any]:
    return json.loads(TABLE_PATH.read_text())


def test_table_matches_generator(tmp_path: Path, table: dict[str, Any]) -> None:
    torch = pytest.importorskip("torch")
    if torch.__version__.split("+")[0] != table["torch_version"]:
        pytest.skip(f"table was generated with torch {table['torch_version']}")
    fresh = tmp_path / "torch_ops.json"
    subprocess.run(
        [sys.executable, str(GENERATOR), "--output", str(fresh)], check=True, cwd=ROOT, timeout=600
    )
    regenerated = json.loads(fresh.read_text())
    stale = sorted(key for key in TOP_LEVEL_KEYS if regenerated.get(key) != table.get(key))
    assert not stale, f"stale sections {stale}; run: python tools/gen_torch_ops.py"
    assert fresh.read_text() == TABLE_PATH.read_text()


def test_layout_is_stable(table: dict[str, Any]) -> None:
    assert set(table) == TOP_LEVEL_KEYS
    assert TABLE_PATH.read_text() == json.dumps(table, indent=1, sort_keys=True) + "\n"
    for section in LIST_SECTIONS:
        assert table[section] == sorted(set(table[section])), section
    for section in ("functions", "methods"):
        for name, entry in table[section].items():
            assert entry["saves"] == sorted(entry["saves"]), name
            assert {"params", "saves", "view", "inplace"} <= set(entry), name
    for name, entry in table["functions"].items():
        assert "inplace_param" in entry, name
        assert ("saves_out_of_place" in entry) == (entry["inplace_param"] is not None), name
    for name, entry in table["modules"].items():
        assert {"saves_input", "saves_result", "inplace_param", "has_parameters"} <= set(entry)
        has_mode_keys = "saves_input_out_of_place" in entry and "saves_result_out_of_place" in entry
        assert has_mode_keys == (entry["inplace_param"] is not None), name


@pytest.mark.parametrize(
    ("function", "saves"),
    [
        ("torch.sigmoid", ["result"]),
        ("torch.tanh", ["result"]),
        ("torch.exp", ["result"]),
        ("torch.softmax", ["result"]),
        (f"{F}.softmax", ["result"]),
        ("torch.special.expit", ["result"]),
        ("torch.mul", ["input", "other"]),
        ("torch.matmul", ["input", "other"]),
        ("torch.pow", ["input"]),
        ("torch.add", []),
        (f"{F}.linear", ["input", "weight"]),
        (f"{F}.conv2d", ["input", "weight"]),
    ],
)
def test_function_saves(table: dict[str, Any], function: str, saves: list[str]) -> None:
    assert table["functions"][function]["saves"] == saves


def test_relu_saves_result_in_both_modes(table: dict[str, Any]) -> None:
    relu = table["functions"][f"{F}.relu"]
    assert relu["saves_out_of_place"] == ["result"]
    assert relu["saves"] == ["result"]
    assert relu["inplace_param"] == {"name": "inplace", "index": 1}
    assert relu["inplace"] is False


def test_batch_norm_saves_input_not_result(table: dict[str, Any]) -> None:
    saves = table["functions"][f"{F}.batch_norm"]["saves"]
    assert "input" in saves
    assert "result" not in saves


def test_function_params(table: dict[str, Any]) -> None:
    functions = table["functions"]
    assert functions["torch.mul"]["params"] == ["input", "other"]
    assert functions[f"{F}.conv2d"]["params"][:3] == ["input", "weight", "bias"]
    assert table["methods"]["mul_"]["params"] == ["self", "other"]


@pytest.mark.parametrize(
    ("module", "key", "value"),
    [
        ("torch.nn.ReLU", "saves_result", True),
        ("torch.nn.Conv2d", "saves_result", False),
        ("torch.nn.BatchNorm2d", "saves_result", False),
        ("torch.nn.Sigmoid", "saves_result", True),
        ("torch.nn.Linear", "saves_input", True),
    ],
)
def test_module_saves(table: dict[str, Any], module: str, key: str, value: bool) -> None:
    assert table["modules"][module][key] is value


def test_module_inplace_param(table: dict[str, Any]) -> None:
    relu = table["modules"]["torch.nn.ReLU"]
    assert relu["inplace_param"] == {"name": "inplace", "index": 0}
    assert relu["has_parameters"] is False
    assert table["modules"]["torch.nn.Conv2d"]["has_parameters"] is True


def test_inplace_and_view_lists(table: dict[str, Any]) -> None:
    assert {"mul_", "relu_"} <= set(table["inplace_methods"])
    assert "requires_grad_" not in table["inplace_methods"]
    assert {"view", "transpose"} <= set(table["view_methods"])
    assert "torch.transpose" in table["view_functions"]
    assert {"torch.zeros", "torch.zeros_like"} <= set(table["factory_functions"])
    assert "torch.zeros_like" in table["metadata_factories"]
    assert not {"torch.tensor", "torch.as_tensor"} & set(table["metadata_factories"])
    assert table["methods"]["mul_"]["inplace"] is True
    assert table["methods"]["transpose"]["view"] is True


def test_a_module_returning_a_tuple_says_which_output_it_saved(table: dict[str, Any]) -> None:
    """``out, (h, c) = nn.LSTM(...)(x)``: the graph saved ``out`` (writing it in place makes
    backward raise); modules returning one tensor carry no such key."""
    assert table["modules"]["torch.nn.LSTM"]["saved_outputs"] == [0]
    assert "saved_outputs" not in table["modules"]["torch.nn.ReLU"]
    torch = pytest.importorskip("torch")
    lstm = torch.nn.LSTM(3, 4, batch_first=True)
    out, _ = lstm(torch.randn(2, 5, 3))
    out.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.sum().backward()


def test_a_tuple_returning_module_records_its_length(table: dict[str, Any]) -> None:
    """``h, c = nn.LSTMCell(...)(x)`` unpacks two outputs, ``out, (h, c) = lstm(x)`` too."""
    assert table["modules"]["torch.nn.LSTMCell"]["outputs"] == 2
    assert table["modules"]["torch.nn.LSTM"]["outputs"] == 2
    assert "outputs" not in table["modules"]["torch.nn.Linear"]


CELL_STATE_WRITE = """\
import torch
from torch import nn

cell = nn.LSTMCell(4, 5)
h1, c1 = cell(torch.rand(2, 4))
c1.mul_(0.5)
(h1.sum() + c1.sum()).backward()
"""


def test_device_overlay_adds_what_cuda_kernels_save() -> None:
    """The shipped overlay (probed on a GPU): the fused ``LSTMCell`` saves its new cell state
    and cuDNN's ``GRU``/``RNN`` their output on CUDA only; the linter reads the union and
    names the device in the message. ``LSTM`` saves its output on both devices."""
    from inplace_lint.engine import lint_source
    from inplace_lint.facts.ops import load_table

    modules = load_table().modules
    assert modules["torch.nn.LSTMCell"].device_outputs == (1,)
    assert modules["torch.nn.LSTMCell"].device_saves == "cuda"
    assert {modules[m].device_outputs for m in ("torch.nn.GRU", "torch.nn.RNN")} == {(0,)}
    assert modules["torch.nn.LSTM"].device_outputs == ()
    (finding,) = lint_source(CELL_STATE_WRITE, "cell.py")
    assert (finding.code, finding.line) == ("IPL001", 6)
    assert "nn.LSTMCell on CUDA" in finding.message


def test_device_overlay_applies_only_where_the_cpu_side_still_matches() -> None:
    """An overlay from another torch version is ignored for an entry the CPU table has changed."""
    from inplace_lint.facts.ops import ModuleInfo, with_devices

    info = ModuleInfo(True, False, None, True, True, False)
    overlay = {
        "devices": ["cpu", "cuda"],
        "modules": {"torch.nn.X": {"saved_outputs": {"cpu": None, "cuda": [1]}}},
    }
    merged = with_devices({"torch.nn.X": info}, overlay, {"torch.nn.X": {}})
    assert merged["torch.nn.X"].saved_outputs == (1,)
    assert merged["torch.nn.X"].device_outputs == (1,)
    stale = with_devices({"torch.nn.X": info}, overlay, {"torch.nn.X": {"saved_outputs": [0]}})
    assert stale["torch.nn.X"] == info


def test_saves_alone_names_inputs_kept_for_their_own_gradient(table: dict[str, Any]) -> None:
    """``x.gather(1, i)`` keeps ``x`` although only ``x`` needs grad; ``a * b`` keeps ``b``
    only for ``a``'s gradient, so ``mul`` lists none. Checked against torch here."""
    assert table["methods"]["gather"]["saves_alone"] == ["self"]
    assert "saves_alone" not in table["functions"]["torch.mul"]
    torch = pytest.importorskip("torch")
    x = torch.randn(3, 4, requires_grad=True) * 1
    picked = x.gather(1, torch.zeros(3, 1, dtype=torch.long))
    x.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        picked.sum().backward()
    a = torch.randn(3, requires_grad=True) * 1
    product = a * torch.randn(3)
    a.add_(1)
    product.sum().backward()  # ``a`` was not kept


GATHERED = """\
import torch

w = torch.randn(3, 4, requires_grad=True)
c = w * 2
picked = c.gather(1, torch.zeros(3, 1, dtype=torch.long))
c += 1
picked.sum().backward()
"""


def test_a_write_to_what_gather_kept_is_found() -> None:
    from inplace_lint.engine import lint_source

    (finding,) = lint_source(GATHERED, "g.py")
    assert (finding.code, finding.line) == ("IPL001", 6)
    assert "gather" in finding.message


@pytest.mark.parametrize(
    ("section", "present", "absent"),
    [
        # new storage in every configuration probed
        ("fresh_functions", ["torch.add", f"{F}.relu", f"{F}.conv2d", "torch.zeros"], []),
        # ``F.dropout(x, training=False)`` and ``torch.as_tensor(x)`` hand ``x`` back; the
        # identity ``einsum("ij", x)`` is a view
        ("fresh_functions", [], [f"{F}.dropout", "torch.as_tensor", "torch.einsum"]),
        ("fresh_methods", ["sum", "argmax", "size", "item", "clone"], ["contiguous", "to"]),
        # ``x.double()`` on a double tensor is ``x``, as ``x.float()`` on a float one
        ("receiver_methods", ["view", "contiguous", "to", "float", "double", "type_as"], []),
        ("outofplace_twins", ["clamp_", "add_", "masked_fill_", "div_"], ["t_", "fill_"]),
        # ``x.eq_(y)`` keeps ``x``'s dtype, ``x.eq(y)`` returns bools: no twin
        ("outofplace_twins", [], ["eq_", "squeeze_", "copy_"]),
        ("fresh_modules", ["torch.nn.Linear", "torch.nn.ReLU"], ["torch.nn.Dropout"]),
        ("passing_modules", ["torch.nn.Dropout", "torch.nn.Identity", "torch.nn.Flatten"], []),
    ],
)
def test_aliasing_sections(
    table: dict[str, Any], section: str, present: list[str], absent: list[str]
) -> None:
    assert set(present) <= set(table[section])
    assert not set(absent) & set(table[section])


def test_probes_that_run_while_assembling_are_isolated_units(tmp_path: Path) -> None:
    """Every probe runs as a unit in the isolated workers, also ``overwrites`` and the
    factories' metadata check: run in the parent while the table was assembled, a CUDA
    device-side assert there (``bernoulli_`` given a probability outside [0, 1]) took the
    whole CUDA table down on an H200. Checked here on the CPU through the isolated path."""
    pytest.importorskip("torch")
    out = tmp_path / "part.json"
    names = "fill_,zero_,add_,zeros,zeros_like"
    command = [sys.executable, str(GENERATOR), "--isolate", "--only", names, "--output", str(out)]
    subprocess.run(command, check=True, cwd=ROOT, timeout=300, capture_output=True)
    part = json.loads(out.read_text())
    assert part["overwrites"] == ["fill_", "zero_"]
    assert part["metadata_factories"] == ["torch.zeros_like"]
    assert part["factory_functions"] == ["torch.zeros", "torch.zeros_like"]
    sys.path.insert(0, str(ROOT / "tools"))
    from opprobe import units

    assert "overwrites:bernoulli_" in units.all_units()


RMS_WEIGHT_WRITE = """\
import torch
import torch.nn.functional as F

p = torch.ones(4, requires_grad=True)
w = p * 1
y = F.rms_norm(torch.rand(2, 4), (4,), w)
w.mul_(0.5)
y.sum().backward()
"""


def test_device_overlay_adds_what_cuda_functions_keep() -> None:
    """Probed on an H200 (torch 2.11): the fused CUDA ``rms_norm`` keeps its weight when only
    the weight needs grad; the CPU kernel does not. The program runs clean on this CPU and
    raises on CUDA (``bench/CUDA.md``); the finding names the device."""
    torch = pytest.importorskip("torch")
    from inplace_lint.engine import lint_source
    from inplace_lint.facts.ops import load_table

    info = load_table().functions["torch.nn.functional.rms_norm"]
    assert (info.device_alone, info.device_saves) == (frozenset({"weight"}), "cuda")
    (finding,) = lint_source(RMS_WEIGHT_WRITE, "rms.py")
    assert (finding.code, finding.line) == ("IPL001", 7)
    assert "F.rms_norm on CUDA" in finding.message
    namespace: dict[str, Any] = {}
    exec(compile(RMS_WEIGHT_WRITE, "rms.py", "exec"), namespace)  # clean on the CPU
    assert namespace["p"].grad.shape == (4,) and torch.isfinite(namespace["p"].grad).all()


def test_function_overlay_applies_only_where_the_cpu_side_still_matches() -> None:
    from inplace_lint.facts.ops import OpInfo, with_op_devices

    info = OpInfo(("input", "weight"), frozenset({"input", "weight"}), False, False, None, None)
    info = OpInfo(**{**info.__dict__, "saves_alone": frozenset({"input"})})
    overlay = {
        "devices": ["cpu", "cuda"],
        "functions": {"f": {"saves_alone": {"cpu": ["input"], "cuda": ["input", "weight"]}}},
    }
    merged = with_op_devices({"f": info}, overlay, {"f": {"saves_alone": ["input"]}}, "functions")
    assert merged["f"].saves_alone == {"input", "weight"}
    assert merged["f"].device_alone == {"weight"}
    stale = with_op_devices({"f": info}, overlay, {"f": {"saves_alone": []}}, "functions")
    assert stale["f"] == info
    present = {"devices": ["cpu", "cuda"], "functions": {"f": {"present": {"cpu": True}}}}
    assert with_op_devices({"f": info}, present, {"f": {}}, "functions")["f"] == info
