"""Project mode: a helper in one file of the run judged at its callers in another.

Each package is written to a scratch folder, linted as a run of several files (the API the
command line uses, in one process and in a pool) and run with torch in a child interpreter:
the hazards raise or read a changed value, the look-alikes run and agree.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from inplace_lint.cache import Cache
from inplace_lint.config import Config
from inplace_lint.project import build_views
from inplace_lint.runner import lint_files

UTILS = """
import torch


def add_bias(h, b):
    h += b
    return h.mean()


def masked_logits(logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    logits[~mask] = -1e9
    return torch.softmax(logits, dim=-1)
"""

TRAIN = """
import torch
from {module} import add_bias{alias}


def step(w):
    y = torch.sigmoid(w)
    m = {name}({arg}, 1.0)
    loss = m + y.sum()
    loss.backward()


step(torch.randn(3, requires_grad=True))
"""

HEAD = """
import torch
from .utils import masked_logits


def head(q, k, mask):
    scores = q @ k.t()
    return masked_logits(scores, mask)


q = torch.randn(2, 4, requires_grad=True)
head(q, torch.randn(3, 4), torch.rand(2, 3) > 0.5).sum().backward()
"""


#: the line of the call to the helper in TRAIN, as written to disk
CALL = textwrap.dedent(TRAIN).lstrip().splitlines().index("    m = {name}({arg}, 1.0)") + 1


#: ``masked_logits`` writes its argument and no file of these runs calls it: still reported
UNCALLED = ("pkg/utils.py", 10, "IPL004")


def _package(root: Path, files: dict[str, str]) -> list[tuple[Path, str]]:
    for name, source in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(source).lstrip())
    return [(root / name, name) for name in sorted(files) if name.endswith(".py")]


def _findings(files: list[tuple[Path, str]], jobs: int = 1, cache: Cache | None = None) -> set:
    results = lint_files(files, Config(), jobs=jobs, cache=cache)
    return {(r.path, f.line, f.code) for r in results for f in r.findings}


def _runs(root: Path, module: str) -> subprocess.CompletedProcess[str]:
    pytest.importorskip("torch")
    return subprocess.run(
        [sys.executable, "-c", f"import {module}"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
    )


def _train(module: str = ".utils", alias: str = "", arg: str = "y") -> str:
    name = alias.split()[-1] if alias else "add_bias"
    return TRAIN.format(module=module, alias=alias, name=name, arg=arg)


def test_a_helper_writing_a_saved_tensor_is_reported_at_the_call(tmp_path: Path) -> None:
    files = _package(
        tmp_path,
        {"pkg/__init__.py": "", "pkg/utils.py": UTILS, "pkg/train.py": _train()},
    )
    assert _findings(files) == {("pkg/train.py", CALL, "IPL001"), UNCALLED}
    (message,) = [
        f.message
        for r in lint_files(files, Config())
        for f in r.findings
        if r.path == "pkg/train.py"
    ]
    assert "`add_bias()` (defined in pkg/utils.py, line 4)" in message
    # each file alone: the caller cannot see the write, the helper has no caller to judge by
    by_name = dict((display, (path, display)) for path, display in files)
    assert _findings([by_name["pkg/train.py"]]) == set()
    assert _findings([by_name["pkg/utils.py"]]) == {UNCALLED}
    ran = _runs(tmp_path, "pkg.train")
    assert "modified by an inplace operation" in ran.stderr


def test_a_caller_passing_a_copy_is_clean_and_the_helper_is_judged_there(
    tmp_path: Path,
) -> None:
    files = _package(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/utils.py": UTILS,
            "pkg/train.py": _train(arg="y.clone()"),
            "pkg/head.py": HEAD,
        },
    )
    alone = _findings([f for f in files if f[1] == "pkg/utils.py"])
    assert UNCALLED in alone  # no caller to judge by
    assert _findings(files) == set()
    for module in ("pkg.train", "pkg.head"):
        assert _runs(tmp_path, module).returncode == 0


def test_imports_resolve_through_reexports_aliases_and_script_folders(tmp_path: Path) -> None:
    package = _package(
        tmp_path / "a",
        {
            "pkg/__init__.py": "from .utils import add_bias\n",
            "pkg/utils.py": UTILS,
            "pkg/train.py": _train(module="pkg", alias=" as bias"),
        },
    )
    assert _findings(package) == {("pkg/train.py", CALL, "IPL001"), UNCALLED}
    assert "modified by an inplace operation" in _runs(tmp_path / "a", "pkg.train").stderr
    scripts = _package(tmp_path / "b", {"utils.py": UTILS, "train.py": _train(module="utils")})
    assert _findings(scripts) == {("train.py", CALL, "IPL001"), ("utils.py", 10, "IPL004")}
    assert "modified by an inplace operation" in _runs(tmp_path / "b", "train").stderr


def test_a_definition_of_the_same_name_in_the_caller_wins(tmp_path: Path) -> None:
    own = _train().replace(
        "\n\ndef step", "\n\ndef add_bias(h, b):\n    return (h + b).mean()\n\n\ndef step"
    )
    files = _package(tmp_path, {"pkg/__init__.py": "", "pkg/utils.py": UTILS, "pkg/train.py": own})
    assert {f for f in _findings(files) if f[0] == "pkg/train.py"} == set()
    assert _runs(tmp_path, "pkg.train").returncode == 0


def test_the_pool_and_the_cache_see_the_other_files(tmp_path: Path) -> None:
    files = _package(
        tmp_path, {"pkg/__init__.py": "", "pkg/utils.py": UTILS, "pkg/train.py": _train()}
    )
    assert _findings(files, jobs=2) == {("pkg/train.py", CALL, "IPL001"), UNCALLED}
    cache = Cache(tmp_path / "cache")
    assert _findings(files, cache=cache) == {("pkg/train.py", CALL, "IPL001"), UNCALLED}
    # the helper stops writing: the caller's cached findings must not survive
    (tmp_path / "pkg/utils.py").write_text(
        textwrap.dedent(UTILS).lstrip().replace("h += b", "h = h + b")
    )
    assert _findings(files, cache=cache) == {UNCALLED}
    assert cache.stats.hits >= 1


def test_views_are_empty_for_one_file_and_for_unparsable_helpers(tmp_path: Path) -> None:
    files = _package(tmp_path, {"pkg/__init__.py": "", "pkg/utils.py": UTILS})
    assert build_views(files) == {}
    # a string whose lines start at the margin: the definition cannot be cut out by layout
    broken = UTILS.replace("    h += b\n", '    note = """\nstray\n"""\n    h += b\n')
    files = _package(tmp_path, {"pkg/utils.py": broken, "pkg/train.py": _train()})
    views = build_views(files)
    assert all(not v.foreign for v in views.values())


def test_the_command_line_reads_a_folder_as_one_project(tmp_path: Path) -> None:
    from cli_runner import in_process

    _package(tmp_path, {"pkg/__init__.py": "", "pkg/utils.py": UTILS, "pkg/train.py": _train()})
    code, out, _ = in_process(tmp_path, ["--isolated", "--no-cache", "--jobs", "1", "pkg"])
    lines = out.decode().splitlines()
    assert code == 1 and lines[0].startswith(f"pkg/train.py:{CALL}:") and "IPL001" in lines[0]
    code, out, _ = in_process(tmp_path, ["--isolated", "--no-cache", "pkg/train.py"])
    assert code == 0 and out.decode().strip() == "All checks passed!"


BOXES = """
def to_xyxy(b):
    b[:, 2] = b[:, 0] + b[:, 2]
    return b
"""
SURE = """
import torch
from boxes import to_xyxy

boxes = torch.rand(3, 4)
corners = to_xyxy(boxes)
widths = boxes[:, 2]
"""
UNKNOWN = """
from boxes import to_xyxy


def convert(boxes):
    corners = to_xyxy(boxes)
    widths = boxes[:, 2]
    return corners, widths
"""


def test_another_files_helper_writes_only_what_is_known_to_be_a_tensor(tmp_path: Path) -> None:
    """A value of no known kind (a parameter that may hold an array or a list) is not taken
    for a tensor the helper writes; ``torch.rand`` is, and the later read sees the write."""
    files = _package(tmp_path, {"boxes.py": BOXES, "sure.py": SURE, "unknown.py": UNKNOWN})
    found = _findings(files)
    assert {(path, code) for path, _, code in found} == {("sure.py", "IPL004")}
    check = "import sure, torch; print(torch.equal(sure.widths, sure.corners[:, 2]))"
    ran = subprocess.run(
        [sys.executable, "-c", check], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert ran.stdout.strip() == "True"  # the 'widths' read sees the corners written


def test_fix_keeps_a_finding_another_files_helper_makes(tmp_path: Path) -> None:
    """The helper's write has no fix at the call: ``--fix`` leaves it, still reported."""
    from cli_runner import in_process

    _package(tmp_path, {"pkg/__init__.py": "", "pkg/utils.py": UTILS, "pkg/train.py": _train()})
    args = ["--isolated", "--no-cache", "--jobs", "1", "--fix", "--unsafe-fixes", "pkg"]
    code, out, _ = in_process(tmp_path, args)
    lines = out.decode().splitlines()
    assert code == 1 and any(line.startswith(f"pkg/train.py:{CALL}:") for line in lines)
