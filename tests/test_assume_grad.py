"""``--assume-grad``: hazards of functions no caller here is seen calling, certain when their
tensor inputs require grad, reported only on request and saying so.

Each program is linted through the command line (in process) and run with torch: the hazard
raises once a caller passes a tensor that requires grad, the look-alike runs.
"""

from __future__ import annotations

from pathlib import Path

from cli_runner import in_process, write
from programs import behave

HELPER = """
import torch


def gated(h, w):
    y = torch.sigmoid(h @ w)
    y{write}
    return y
"""
IN_PLACE = ".mul_(2)"
OUT_OF_PLACE = " = y * 2"
CALLER = """
h = torch.randn(2, 3, requires_grad=True)
gated(h, torch.randn(3, 4)).sum().backward()
"""


def _lint(root: Path, *args: str) -> tuple[int, list[str]]:
    code, out, err = in_process(root, ["--no-cache", "-q", *args])
    assert err == b""
    return code, out.decode().splitlines()


def test_an_uncalled_helper_is_reported_only_when_asked_and_says_why(tmp_path: Path) -> None:
    write(
        tmp_path, {"h.py": HELPER.format(write=IN_PLACE), "s.py": HELPER.format(write=OUT_OF_PLACE)}
    )
    assert _lint(tmp_path, "--isolated", "h.py", "s.py") == (0, [])
    code, lines = _lint(tmp_path, "--isolated", "--assume-grad", "h.py", "s.py")
    assert code == 1 and len(lines) == 1
    assert lines[0].startswith("h.py:7:5: IPL001 `y.mul_()` overwrites `y`")
    assert lines[0].endswith(
        "(if `h` or `w` requires grad: no caller in this run shows whether it does)"
    )
    behave(HELPER.format(write=IN_PLACE) + CALLER, HELPER.format(write=OUT_OF_PLACE) + CALLER)


def test_a_helper_the_file_calls_or_passes_on_is_left_to_its_callers(tmp_path: Path) -> None:
    called = (
        HELPER.format(write=IN_PLACE) + "\n\nout = gated(torch.randn(2, 3), torch.randn(3, 4))\n"
    )
    passed = HELPER.format(write=IN_PLACE) + "\n\nKERNELS = {'gated': gated}\n"
    write(tmp_path, {"c.py": called, "p.py": passed})
    assert _lint(tmp_path, "--isolated", "--assume-grad", ".") == (0, [])
    behave(HELPER.format(write=IN_PLACE) + CALLER, called)


def test_the_config_key_and_the_cache(tmp_path: Path) -> None:
    write(tmp_path, {"h.py": HELPER.format(write=IN_PLACE), "pyproject.toml": ""})
    assert in_process(tmp_path, ["-q", "h.py"])[0] == 0  # fills the cache without the option
    (tmp_path / "pyproject.toml").write_text("[tool.inplace-lint]\nassume-grad = true\n")
    code, out, _ = in_process(tmp_path, ["-q", "h.py"])
    assert code == 1 and b"requires grad: no caller" in out
    (tmp_path / "pyproject.toml").write_text('[tool.inplace-lint]\nassume-grad = "yes"\n')
    code, out, err = in_process(tmp_path, ["-q", "h.py"])
    assert (code, out) == (2, b"")
    assert err.decode().strip().endswith("assume-grad must be true or false, got 'yes'")


def test_fix_and_its_report_see_the_opt_in_findings(tmp_path: Path) -> None:
    """``--fix`` lints as the run did: the opt-in finding is fixed (out of place) and counted,
    not lost from the report; the fixed helper runs and its caller's backward works."""
    write(tmp_path, {"h.py": HELPER.format(write=IN_PLACE)})
    code, out, _ = in_process(
        tmp_path, ["--isolated", "--no-cache", "--assume-grad", "--fix", "h.py"]
    )
    assert out.decode().strip().endswith("Found 1 finding (1 fixed, 0 remaining).")
    fixed = (tmp_path / "h.py").read_text()
    assert "y = y.mul(2)" in fixed and code == 0
    behave(HELPER.format(write=IN_PLACE) + CALLER, fixed + CALLER)


def test_a_helper_another_file_of_the_run_calls_is_left_to_that_caller(tmp_path: Path) -> None:
    """Project mode: ``train.py`` calls ``gated`` on tensors without grad, so the helper has
    a caller in the run and nothing is assumed of it; linted alone it is assumed."""
    call = "out = gated(torch.randn(2, 3), torch.randn(3, 4))\n"
    caller = "import torch\nfrom h import gated\n\n" + call
    write(tmp_path, {"h.py": HELPER.format(write=IN_PLACE), "train.py": caller})
    assert _lint(tmp_path, "--isolated", "--assume-grad", "h.py", "train.py") == (0, [])
    code, lines = _lint(tmp_path, "--isolated", "--assume-grad", "h.py")
    assert code == 1 and len(lines) == 1
    behave(HELPER.format(write=IN_PLACE) + CALLER, HELPER.format(write=IN_PLACE) + call)


ANGLE = """
import torch


def angle_energy(conformer, parameters):
    vector_ab = conformer[1:] - conformer[:-1]
    vector_ab /= torch.norm(vector_ab, dim=1).unsqueeze(1)
    return (parameters * vector_ab).sum()
"""


def test_the_message_names_the_parameters_the_write_needs(tmp_path: Path) -> None:
    """smee's angle energy (round 27): the write needs ``conformer`` to require grad, so the
    message names it and not ``parameters`` (which only scales the result)."""
    write(tmp_path, {"a.py": ANGLE})
    code, lines = _lint(tmp_path, "--assume-grad", "a.py")
    assert code == 1 and len(lines) == 1
    assert "(if `conformer` requires grad:" in lines[0]
    caller = (
        "\nc = torch.randn(4, 3, requires_grad=True)\n"
        "angle_energy(c, torch.ones(3, 3)).backward()\n"
    )
    behave(ANGLE + caller, ANGLE.replace("vector_ab /=", "vector_ab = vector_ab /") + caller)
