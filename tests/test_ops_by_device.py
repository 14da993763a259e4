"""Tests for ``tools/ops_by_device.py`` and the isolated mode of ``tools/gen_torch_ops.py``.

The comparison is checked on two small hand-made tables. The generator tests run a few
probes (``--only``) in this process and in subprocess workers and expect the same table, and
a worker that crashes to cost only the probe that crashed it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
TOOLS = ROOT / "tools"
GENERATOR = TOOLS / "gen_torch_ops.py"
COMPARE = TOOLS / "ops_by_device.py"
sys.path.insert(0, str(TOOLS))

import ops_by_device  # noqa: E402


def _table(**sections: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "torch_version": "2.11.0",
        "functions": {},
        "methods": {},
        "modules": {},
        "inplace_methods": [],
        "view_methods": [],
        "view_functions": [],
        "factory_functions": [],
    }
    return {**base, **sections}


def _function(saves: list[str], view: bool = False) -> dict[str, Any]:
    return {"params": ["input"], "saves": saves, "view": view, "inplace": False}


def _module(saves_input: bool, saves_result: bool) -> dict[str, Any]:
    return {
        "saves_input": saves_input,
        "saves_result": saves_result,
        "inplace_param": None,
        "has_parameters": True,
    }


CPU = _table(
    functions={"torch.relu": _function(["result"]), "torch.cpu_only": _function([])},
    modules={"torch.nn.LSTMCell": _module(True, False), "torch.nn.ReLU": _module(False, True)},
    module_args={"torch.nn.GRUCell": {"saves": ["input"], "train": True}},
    view_methods=["t", "view"],
)
CUDA = _table(
    functions={"torch.relu": _function(["result"]), "torch.cuda_only": _function(["input"])},
    modules={"torch.nn.LSTMCell": _module(True, True), "torch.nn.ReLU": _module(False, True)},
    module_args={"torch.nn.GRUCell": {"saves": ["hx", "input"], "train": True}},
    view_methods=["view"],
    device="cuda",
    device_info={"type": "cuda", "name": "Some GPU"},
    skipped_probes={"function:torch.crashes": "killed by SIGSEGV"},
)


def test_diff_names_each_difference_per_device() -> None:
    diff = ops_by_device.diff_tables(CPU, CUDA)
    assert diff["devices"] == ["cpu", "cuda"]
    assert diff["torch_version"] == "2.11.0"
    assert diff["functions"] == {
        "torch.cpu_only": {"present": {"cpu": True, "cuda": False}},
        "torch.cuda_only": {"present": {"cpu": False, "cuda": True}},
    }
    assert diff["modules"] == {"torch.nn.LSTMCell": {"saves_result": {"cpu": False, "cuda": True}}}
    assert diff["module_args"] == {
        "torch.nn.GRUCell": {"saves": {"cpu": ["input"], "cuda": ["hx", "input"]}}
    }
    assert diff["methods"] == {}
    assert diff["view_methods"] == {"cpu": ["t"], "cuda": []}
    assert diff["inplace_methods"] == {}
    assert diff["device_info"] == {"cuda": {"type": "cuda", "name": "Some GPU"}}
    assert diff["skipped_probes"] == {"cuda": {"function:torch.crashes": "killed by SIGSEGV"}}
    text = "\n".join(ops_by_device.describe(diff))
    assert "torch.nn.LSTMCell  saves_result: cpu=false cuda=true" in text
    assert "torch.cuda_only: only on cuda" in text


def test_merge_is_the_union_with_the_differences_recorded() -> None:
    merged = ops_by_device.merge_tables(CPU, CUDA)
    assert set(merged["functions"]) == {"torch.relu", "torch.cpu_only", "torch.cuda_only"}
    assert merged["modules"]["torch.nn.LSTMCell"]["saves_result"] is True
    assert merged["modules"]["torch.nn.LSTMCell"]["saves_input"] is True
    assert merged["module_args"]["torch.nn.GRUCell"]["saves"] == ["hx", "input"]
    assert merged["view_methods"] == ["t", "view"]
    assert merged["device_differences"] == ops_by_device.diff_tables(CPU, CUDA)
    for key in ("device", "device_info", "skipped_probes"):
        assert key not in merged
    assert CPU["modules"]["torch.nn.LSTMCell"]["saves_result"] is False  # inputs untouched


def test_ship_keeps_field_differences_both_devices_measured() -> None:
    """The overlay the linter ships: no entry present on one device only, no detail section."""
    overlay = ops_by_device.ship_overlay(ops_by_device.diff_tables(CPU, CUDA))
    assert overlay["devices"] == ["cpu", "cuda"]
    assert overlay["modules"] == {
        "torch.nn.LSTMCell": {"saves_result": {"cpu": False, "cuda": True}}
    }
    assert overlay["functions"] == {} and overlay["methods"] == {}
    assert "module_args" not in overlay and "skipped_probes" not in overlay


def test_identical_tables_have_no_differences() -> None:
    diff = ops_by_device.diff_tables(CPU, CPU, ("cpu", "cpu2"))
    for section in (*ops_by_device.ENTRY_SECTIONS, *ops_by_device.LIST_SECTIONS):
        assert diff[section] == {}, section


def _write(path: Path, table: dict[str, Any]) -> Path:
    path.write_text(json.dumps(table))
    return path


def test_command_line_writes_the_diff_and_the_union(tmp_path: Path) -> None:
    cpu, cuda = _write(tmp_path / "cpu.json", CPU), _write(tmp_path / "cuda.json", CUDA)
    diff, union = tmp_path / "diff.json", tmp_path / "union.json"
    command = [sys.executable, str(COMPARE), str(cpu), str(cuda), "--output", str(diff)]
    ship = tmp_path / "ship.json"
    done = subprocess.run(
        [*command, "--merge", str(union), "--ship", str(ship)],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "torch.nn.GRUCell  saves" in done.stdout
    assert json.loads(diff.read_text()) == ops_by_device.diff_tables(CPU, CUDA)
    assert json.loads(union.read_text()) == ops_by_device.merge_tables(CPU, CUDA)
    assert json.loads(ship.read_text())["modules"] == {
        "torch.nn.LSTMCell": {"saves_result": {"cpu": False, "cuda": True}}
    }


def test_command_line_refuses_mixed_versions_and_the_shipped_table(tmp_path: Path) -> None:
    cpu = _write(tmp_path / "cpu.json", CPU)
    other = _write(tmp_path / "other.json", {**CUDA, "torch_version": "2.13.0"})
    assert ops_by_device.main([str(cpu), str(other)]) == 2
    cuda = _write(tmp_path / "cuda.json", CUDA)
    with pytest.raises(SystemExit):
        ops_by_device.main([str(cpu), str(cuda), "--merge", str(ops_by_device.SHIPPED)])


# --------------------------------------------------------------------------------------------
# The generator: isolated probes give the same table; a crash costs one probe
# --------------------------------------------------------------------------------------------

ONLY = "relu,LSTMCell,GRUCell"


def _generate(
    output: Path, *options: str, only: str = ONLY, env: dict[str, str] | None = None
) -> dict[str, Any]:
    command = [sys.executable, str(GENERATOR), "--only", only, "--output", str(output), *options]
    subprocess.run(command, check=True, cwd=ROOT, timeout=300, env=env)
    return json.loads(output.read_text())


@pytest.fixture(scope="module")
def in_process(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("torch")
    output = tmp_path_factory.mktemp("gen") / "in_process.json"
    _generate(output, "--detail")
    return output


def test_isolated_probes_write_the_same_table(in_process: Path, tmp_path: Path) -> None:
    isolated = tmp_path / "isolated.json"
    table = _generate(isolated, "--detail", "--isolate", "--batch-size", "4", "--jobs", "2")
    assert isolated.read_text() == in_process.read_text()
    assert {"torch.relu", "torch.nn.functional.relu"} <= set(table["functions"])
    assert {"torch.nn.LSTMCell", "torch.nn.GRUCell"} <= set(table["modules"])
    assert "hx[1]" in table["module_args"]["torch.nn.LSTMCell"]["saves"]


def test_a_crashing_probe_is_skipped_not_fatal(in_process: Path, tmp_path: Path) -> None:
    env = {**os.environ, "OPPROBE_TEST_FAULTS": "crash:function:torch.relu"}
    options = ("--isolate", "--batch-size", "20", "--jobs", "1")
    table = _generate(tmp_path / "crashed.json", *options, only="relu", env=env)
    assert table["skipped_probes"] == {"function:torch.relu": "killed by SIGSEGV"}
    expected = json.loads(in_process.read_text())
    assert table["functions"] == {
        name: entry for name, entry in expected["functions"].items() if name != "torch.relu"
    }
    assert table["methods"] == expected["methods"]
