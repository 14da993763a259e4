"""``requires_grad_`` with a flag that is not written out: the tensor may require grad or not.

``t.requires_grad_(requires_grad)`` copies a caller's setting (MONAI's ``switch_endianness``
restores whatever the input had); only a literal ``True`` (or no argument) makes a leaf that
certainly requires grad, whose in-place write torch refuses.
"""

from __future__ import annotations

import textwrap

import pytest
from programs import behave, codes, run

PROGRAM = """
import torch


def rebuild(data, flag):
    out = torch.zeros(3).requires_grad_({flag})
    out[0] = 1.0
    return out


rebuild(torch.ones(3), False)
"""


def _program(flag: str) -> str:
    return textwrap.dedent(PROGRAM).format(flag=flag)


@pytest.mark.parametrize("flag", ["", "True", "requires_grad=True"])
def test_a_literal_flag_makes_a_leaf_that_requires_grad(flag: str) -> None:
    assert codes(_program(flag)) == [(7, "IPL003")]


@pytest.mark.parametrize("flag", ["False", "flag", "requires_grad=data.requires_grad"])
def test_a_flag_not_written_out_is_not_taken_for_true(flag: str) -> None:
    assert codes(_program(flag)) == []


def test_torch_refuses_the_write_only_when_the_flag_is_true() -> None:
    behave(_program("True"), _program("flag"), match="leaf Variable that requires grad")


OPTIONAL_MASK = """
import torch


def get_log_likelihood(logprobs, actions=None, mask=None):
    if mask is not None:
        logprobs[~mask] = 0
    return logprobs.sum(1)


torch.manual_seed(0)
logits = torch.randn(2, 3)
outputs = torch.log_softmax(logits, -1)
before = outputs.clone()
ll = get_log_likelihood(outputs, None, {mask})
after = outputs.exp()
"""


def test_a_write_under_a_none_test_happens_only_when_the_call_passes_a_value() -> None:
    """rl4co's ``get_log_likelihood(outputs, actions, mask=None)``: the write under ``if mask
    is not None:`` never runs for that call; with a mask passed it writes the caller's
    tensor, which the caller reads again."""
    line = OPTIONAL_MASK.splitlines().index("        logprobs[~mask] = 0") + 1
    assert codes(OPTIONAL_MASK.format(mask="mask=None")) == []
    masked = OPTIONAL_MASK.format(mask="mask=torch.tensor([[True, False, True]] * 2)")
    assert codes(masked) == [(line, "IPL004")]
    torch = pytest.importorskip("torch")
    none, written = run(OPTIONAL_MASK.format(mask="mask=None")), run(masked)
    assert torch.equal(none["before"], none["outputs"])  # type: ignore[arg-type]
    assert not torch.equal(written["before"], written["outputs"])  # type: ignore[arg-type]


FORWARDED_MASK = """
import torch


class Encoder(torch.nn.Module):
    def forward(self, x, padding_mask=None):
        return self.extract_features(x, padding_mask)

    def extract_features(self, x, padding_mask=None):
        if padding_mask is not None:
            x[padding_mask] = 0
        return x * 2


x = torch.randn(2, 3)
before = x.clone()
y = Encoder()(x{mask})
seen = x.sum()
"""


def test_a_none_test_passes_through_a_forwarded_parameter() -> None:
    """wav2vec2's ``forward(x, padding_mask=None)`` handing its own ``padding_mask`` to
    ``extract_features``: the write keeps its test, now on ``forward``'s parameter, so a
    call without a mask writes nothing and a call with one writes the caller's ``x``."""
    line = FORWARDED_MASK.splitlines().index("            x[padding_mask] = 0") + 1
    assert codes(FORWARDED_MASK.format(mask="")) == []
    masked = FORWARDED_MASK.format(mask=", padding_mask=torch.tensor([[True, False, True]] * 2)")
    assert codes(masked) == [(line, "IPL004")]
    torch = pytest.importorskip("torch")
    plain, written = run(FORWARDED_MASK.format(mask="")), run(masked)
    assert torch.equal(plain["before"], plain["x"])  # type: ignore[arg-type]
    assert not torch.equal(written["before"], written["x"])  # type: ignore[arg-type]


OWNER_FLAG = """
import torch


class RandomMixup(torch.nn.Module):
    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, batch):
        if not self.inplace:
            batch = batch.clone()
        batch_rolled = batch.roll(1, 0)
        batch.mul_(0.7).add_(batch_rolled, alpha=0.3)
        return batch


image = torch.randn(4, 3)
before = image.clone()
mixed = RandomMixup()(image)
clean = image.sum()
"""


def test_a_copy_unless_the_owner_opted_into_in_place_mode_keeps_the_callers_tensor() -> None:
    """torchvision's ``RandomMixup``: ``if not self.inplace: batch = batch.clone()`` leaves
    the caller's tensor on the in-place path only, which its owner chose when it built the
    module; the default module mixes a copy and the caller's later read sees its own."""
    assert codes(OWNER_FLAG) == []
    torch = pytest.importorskip("torch")
    ran = run(OWNER_FLAG)
    assert torch.equal(ran["before"], ran["image"])  # type: ignore[arg-type]
