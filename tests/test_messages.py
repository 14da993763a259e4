"""The exact words of findings whose wording once misled (issue 19), through the real CLI.

- IPL002 on a chained call (``x.mul_(lam).add_(x[idx])``) names the chain, not a binding that
  never happened; a result bound to a new name or passed on keeps its own reason.
- IPL005 names ``grad_output`` once, says "the incoming gradient" for another name, and names the
  alias a write goes through.
- IPL004 says through which name the caller reads its tensor again when that is not the name it
  passed (an alias, a view, a container), instead of naming it as if it were the tensor passed.

One ``inplace-lint`` process checks all of them.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

CHAINS = """\
import torch


def chained(x, lam, idx):
    return x.mul_(lam).add_(x[idx])


def chained_twice(x, lam):
    return x.mul_(lam).add_(1).add_(x)


def bound(x, lam):
    y = x.mul_(lam).add_(1)
    return y - x


def passed(x, lam):
    y = torch.stack([x.mul_(lam)])
    return y, x + 1
"""

BACKWARDS = """\
import torch


class ClassicRelu(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return input.clamp(min=0)

    @staticmethod
    def backward(ctx, grad_output):
        (input,) = ctx.saved_tensors
        grad_output[input < 0] = 0
        return grad_output


class AliasRelu(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return input.clamp(min=0)

    @staticmethod
    def backward(ctx, grad_output):
        (input,) = ctx.saved_tensors
        grad_input = grad_output
        grad_input[input < 0] = 0
        return grad_input


class ShortNames(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return input * 2

    @staticmethod
    def backward(ctx, g):
        (input,) = ctx.saved_tensors
        g.mul_(2)
        return g * input.mul_(2)
"""

#: The caller keeps ``raw = logits`` and reads ``raw``: the message used to say it "reads `raw`
#: again" after passing `logits`, as if `raw` were some other tensor.
CALLERS = """\
import torch


def top_k_filter(logits, k):
    kth = torch.topk(logits, k, dim=-1).values[..., -1, None]
    logits.masked_fill_(logits < kth, -float("inf"))
    return logits


def sample(logits, k):
    raw = logits
    filtered = top_k_filter(logits, k)
    return torch.softmax(filtered, -1), torch.log_softmax(raw, -1)


def scale(t):
    t.mul_(2)
    return t


def step(x):
    out = scale(x)
    return out + 1, x
"""

EXPECTED = [
    "backwards.py:13:9: IPL005 subscript assignment writes in place to `grad_output` in "
    "backward; clone() it first, other consumers of the gradient see the change",
    "backwards.py:27:9: IPL005 subscript assignment writes in place to `grad_output` (through "
    "`grad_input`) in backward; clone() it first, other consumers of the gradient see the change",
    "backwards.py:40:9: IPL005 `g.mul_()` writes in place to the incoming gradient `g` in "
    "backward; clone() it first, other consumers of the gradient see the change",
    "backwards.py:41:20: IPL005 `input.mul_()` writes in place to saved tensor `input` in "
    "backward; clone() it first, other consumers of the tensor see the change",
    "callers.py:6:5: IPL004 `.masked_fill_()` in `top_k_filter()` mutates argument `logits` in "
    "place; the caller passes `logits` (line 12) and reads it again through `raw`, which shares "
    "its data, at line 13, expecting the old value",
    "callers.py:17:5: IPL004 `.mul_()` in `scale()` mutates argument `t` in place; the caller "
    "passes `x` (line 22) and reads `x` again at line 23, expecting the old value",
    "chains.py:5:12: IPL002 `x.mul_()` changes `x` in place, but `x` reads its old value again "
    "at line 5 (`.add_()` is chained on the in-place result as if it were a new tensor)",
    "chains.py:9:12: IPL002 `x.mul_()` changes `x` in place, but `x` reads its old value again "
    "at line 9 (`.add_()` is chained on the in-place result as if it were a new tensor)",
    "chains.py:13:9: IPL002 `x.mul_()` changes `x` in place, but `x` reads its old value again "
    "at line 14 (the in-place result was bound to a new name)",
    "chains.py:18:22: IPL002 `x.mul_()` changes `x` in place, but `x` reads its old value again "
    "at line 19 (the in-place result is used as a new tensor)",
]


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    root = tmp_path_factory.mktemp("messages")
    (root / "pyproject.toml").write_text("", encoding="utf-8")
    for name, source in (
        ("chains.py", CHAINS),
        ("backwards.py", BACKWARDS),
        ("callers.py", CALLERS),
    ):
        (root / name).write_text(source, encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, "-m", "inplace_lint", "--no-cache", "-q", "."],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 1 and proc.stderr == "", proc.stderr
    return [line.removeprefix("./") for line in proc.stdout.splitlines()]


@pytest.mark.parametrize("expected", EXPECTED, ids=lambda line: line.split(" IPL")[0])
def test_message_words(report: list[str], expected: str) -> None:
    assert expected in report, "\n".join(report)


def test_no_other_findings(report: list[str]) -> None:
    assert report == EXPECTED


def test_no_message_names_a_role_twice(report: list[str]) -> None:
    """``writes in place to grad_output `grad_output```: the role and the name said twice."""
    assert not any("grad_output `grad_output`" in line for line in report)
    chains = [line for line in report if line.startswith(("chains.py:5:", "chains.py:9:"))]
    assert len(chains) == 2 and not any("bound to a new name" in line for line in chains)
