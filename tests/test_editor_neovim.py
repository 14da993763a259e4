"""A real editor drives ``inplace-lint lsp``: headless Neovim, configured from docs/editors.md.

Neovim opens a file with two hazards using the client configuration that docs/editors.md gives
for the installed version (unchanged), waits for the server's diagnostics, asks for the hover,
applies the ``Fix IPL001`` quick fix through ``vim.lsp.buf.code_action()`` as a user would pick
it, and waits for the diagnostics of the fixed buffer. A Lua driver records what the editor saw
in a JSON file; the assertions are here.

Where ``nvim`` is missing the test is skipped, except under CI (``CI=true``), where ``.ci/run``
installs Debian's package and a missing editor is a failure.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pygls")

from inplace_lint import catalogue
from inplace_lint.lsp.hover import HOVER_LIMIT

ROOT = Path(__file__).resolve().parent.parent
EDITORS = ROOT / "docs" / "editors.md"
TIMEOUT = 120

MODEL = textwrap.dedent(
    """\
    import torch
    from torch import nn


    class Gate(nn.Module):
        def __init__(self, dim):
            super().__init__()
            self.proj = nn.Linear(dim, dim)

        def forward(self, x, mask):
            attn = torch.softmax(self.proj(x), dim=-1)
            attn.masked_fill_(mask, 0.0)
            gate = torch.sigmoid(self.proj(x))
            gate.mul_(2)
            return attn * gate
    """
)

#: The Lua driver: everything an editor user does, recorded into $IPL_RESULT as JSON.
DRIVER = r"""
local result = { steps = {} }
local out = os.getenv("IPL_RESULT")
local encode = (vim.json and vim.json.encode) or vim.fn.json_encode

local function finish()
  local file = assert(io.open(out, "w"))
  file:write(encode(result))
  file:close()
  vim.cmd("qall!")
end

local function code_of(d)
  if d.code ~= nil then return d.code end
  local lsp = d.user_data and d.user_data.lsp
  return lsp and lsp.code or nil
end

local function snapshot(buf)
  local found = {}
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    table.insert(found, {
      line = d.lnum, col = d.col, code = code_of(d), source = d.source, message = d.message,
    })
  end
  table.sort(found, function(a, b) return a.line < b.line end)
  return found
end

local function wait_for(what, condition)
  if not vim.wait(60000, condition, 20) then error("timed out waiting for " .. what) end
  table.insert(result.steps, what)
end

local function drive()
  local buf = vim.api.nvim_get_current_buf()
  result.filetype = vim.bo[buf].filetype
  result.version = vim.version and vim.version() or nil
  wait_for("diagnostics", function() return #vim.diagnostic.get(buf) >= 2 end)
  result.before = snapshot(buf)
  local first = result.before[1]

  local params = {
    textDocument = { uri = vim.uri_from_bufnr(buf) },
    position = { line = first.line, character = first.col + 2 },
  }
  local replies = vim.lsp.buf_request_sync(buf, "textDocument/hover", params, 20000) or {}
  for _, reply in pairs(replies) do
    if reply.result and reply.result.contents then
      result.hover = reply.result.contents.value
    end
  end

  -- the user puts the cursor on the first finding and picks "Fix IPL001" from the menu
  vim.api.nvim_win_set_cursor(0, { first.line + 1, first.col })
  local tick = vim.api.nvim_buf_get_changedtick(buf)
  vim.ui.select = function(items, opts, on_choice)
    local format = opts.format_item or tostring
    result.offered = {}
    local chosen = nil
    for index, item in ipairs(items) do
      local title = format(item)
      table.insert(result.offered, title)
      if chosen == nil and title:find("Fix IPL001", 1, true) then chosen = index end
    end
    if chosen then on_choice(items[chosen], chosen) else on_choice(nil, nil) end
  end
  vim.lsp.buf.code_action()
  wait_for("the quick fix's edit", function()
    return vim.api.nvim_buf_get_changedtick(buf) ~= tick
  end)
  wait_for("diagnostics of the fixed buffer", function()
    return #vim.diagnostic.get(buf) == 1
  end)
  result.after = snapshot(buf)
  result.text = table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), "\n") .. "\n"
end

local ok, err = pcall(drive)
if not ok then result.error = tostring(err) end
finish()
"""


def _nvim() -> str:
    """The nvim executable; a skip where there is none, a failure under CI."""
    found = shutil.which("nvim")
    if found is not None:
        return found
    if os.environ.get("CI", "").lower() in ("true", "1", "yes"):
        pytest.fail("nvim not found under CI: .ci/run installs it (apt-get install neovim)")
    pytest.skip("nvim not found: install Neovim (Debian: apt-get install neovim) to run this")


def _version(nvim: str) -> tuple[int, int]:
    first = subprocess.run(
        [nvim, "--version"], capture_output=True, text=True, timeout=60, check=True
    ).stdout.splitlines()[0]
    match = re.search(r"v(\d+)\.(\d+)", first)
    assert match is not None, first
    return int(match.group(1)), int(match.group(2))


def neovim_config(version: tuple[int, int]) -> str:
    """The Lua block docs/editors.md gives for Neovim ``version``.

    Each ``### Neovim X.Y ...`` heading holds one block; the newest heading not above the
    installed version applies.
    """
    text = EDITORS.read_text(encoding="utf-8")
    blocks: list[tuple[tuple[int, int], str]] = []
    for match in re.finditer(r"^### Neovim (\d+)\.(\d+)[^\n]*\n(.*?)(?=^#)", text, re.M | re.S):
        code = re.search(r"```lua\n(.*?)```", match.group(3), re.S)
        assert code is not None, f"no lua block under {match.group(0).splitlines()[0]!r}"
        blocks.append(((int(match.group(1)), int(match.group(2))), code.group(1)))
    fitting = [(since, lua) for since, lua in blocks if since <= version]
    assert fitting, f"docs/editors.md has no Neovim configuration for {version}"
    return max(fitting)[1]


def test_the_documented_configs_cover_every_neovim_since_0_7() -> None:
    """0.7 (Debian 12), 0.8-0.10 (``vim.lsp.start``) and 0.11+ (``vim.lsp.config``)."""
    assert "vim.lsp.start_client" in neovim_config((0, 7))
    assert "vim.lsp.start(" in neovim_config((0, 9))
    assert "vim.fs.root" not in neovim_config((0, 9))  # vim.fs.root is new in 0.10
    assert "vim.lsp.enable" in neovim_config((0, 11))
    assert neovim_config((0, 12)) == neovim_config((0, 11))


def _server_on_path(folder: Path) -> Path:
    """A folder holding an ``inplace-lint`` that runs this checkout with this interpreter."""
    folder.mkdir()
    script = folder / "inplace-lint"
    script.write_text(
        f'#!/bin/sh\nexec "{sys.executable}" -m inplace_lint "$@"\n', encoding="utf-8"
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return folder


def _run_neovim(nvim: str, tmp_path: Path) -> dict[str, Any]:
    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text("[tool.inplace-lint]\n", encoding="utf-8")
    (project / "gate.py").write_text(MODEL, encoding="utf-8")
    init = tmp_path / "init.lua"
    init.write_text(neovim_config(_version(nvim)), encoding="utf-8")
    driver = tmp_path / "driver.lua"
    driver.write_text(DRIVER, encoding="utf-8")
    result = tmp_path / "result.json"
    home = tmp_path / "home"
    env = {
        **os.environ,
        "PATH": f"{_server_on_path(tmp_path / 'bin')}{os.pathsep}{os.environ.get('PATH', '')}",
        "PYTHONPATH": str(ROOT),
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / "config"),
        "XDG_DATA_HOME": str(home / "data"),
        "XDG_STATE_HOME": str(home / "state"),
        "XDG_CACHE_HOME": str(home / "cache"),
        "IPL_RESULT": str(result),
    }
    command = [nvim, "--headless", "-n", "-i", "NONE", "-u", str(init)]
    command += ["-c", f"luafile {driver}", "gate.py"]
    proc = subprocess.run(
        command,
        cwd=project,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert result.exists(), f"nvim wrote no result (exit {proc.returncode}): {proc.stderr}"
    recorded: dict[str, Any] = json.loads(result.read_text(encoding="utf-8"))
    if "error" in recorded:
        steps = ", ".join(recorded["steps"]) or "nothing"
        offered = recorded.get("offered")
        pytest.fail(f"in Neovim: {recorded['error']} (done: {steps}; menu: {offered})")
    return recorded


def test_neovim_shows_the_findings_and_applies_the_quick_fix(tmp_path: Path) -> None:
    nvim = _nvim()
    seen = _run_neovim(nvim, tmp_path)
    assert seen["filetype"] == "python"
    # the diagnostics as Neovim holds them (0-based lines and columns)
    assert [(d["line"], d["col"], d["code"], d["source"]) for d in seen["before"]] == [
        (11, 8, "IPL001", "inplace-lint"),
        (13, 8, "IPL001", "inplace-lint"),
    ]
    assert "`attn.masked_fill_()` overwrites `attn`" in seen["before"][0]["message"]
    # the hover: the finding, the rule's summary and a link, not the whole rule page
    hover = seen["hover"]
    assert hover.startswith("**IPL001** (saved-for-backward): `attn.masked_fill_()`")
    assert catalogue.description("IPL001") in hover
    assert catalogue.url("IPL001") in hover
    assert len(hover) <= HOVER_LIMIT
    # the code action menu, then the buffer after the chosen fix, and the server's new findings
    assert seen["offered"] == [
        "Fix IPL001: Replace `attn.masked_fill_(...)` with `attn = attn.masked_fill(...)`",
        "Add `# noqa: IPL001`",
    ]
    assert seen["text"] == MODEL.replace(
        "attn.masked_fill_(mask, 0.0)", "attn = attn.masked_fill(mask, 0.0)"
    )
    assert [(d["line"], d["code"]) for d in seen["after"]] == [(13, "IPL001")]
    assert seen["steps"] == [
        "diagnostics",
        "the quick fix's edit",
        "diagnostics of the fixed buffer",
    ]
