"""A test that a name holds a list, tuple or dict (``isinstance(x, (tuple, list))``, or a
same-file predicate that makes that test of its parameter) says, in the arm it guards, that
``x[i] = y`` stores into a Python container, not into a tensor. Other type tests say nothing.
Every program is run with torch.
"""

from __future__ import annotations

from programs import codes, run

PAIRED = """
import torch
import torch.nn as nn


def _is_pair(x):
    if isinstance(x, (tuple, list)) and len(x) >= 2:
        return True


class PairedCrop(nn.Module):
    def forward(self, imgs):
        if _is_pair(imgs):
            for i in range(len(imgs)):
                imgs[i] = imgs[i][:, :2]
            return imgs
        return imgs[:, :2]
"""

CALL = """
x = torch.ones(3, 3, requires_grad=True)
pair = [x * 1, x * 2]
out = PairedCrop()(pair)
sum(o.sum() for o in out).backward()
"""


def test_a_predicate_helper_says_the_argument_is_a_list() -> None:
    """pyiqa's paired transforms (untuned run 14): ``imgs`` is the pair of images."""
    assert codes(PAIRED) == []
    scope = run(PAIRED + CALL)
    assert scope["pair"][0].shape == (3, 2)  # the list was meant to change, not a tensor
    assert scope["x"].grad.sum().item() == 18.0


def test_an_isinstance_test_says_so_too() -> None:
    inline = PAIRED.replace("if _is_pair(imgs):", "if isinstance(imgs, (list, tuple)):")
    assert codes(inline) == []
    assert run(inline + CALL)["pair"][1].shape == (3, 2)


def test_other_tests_say_nothing() -> None:
    """A test for a tensor type, a mixed tuple of types, or the ``else`` arm."""
    tensor = PAIRED.replace("imgs[i] = imgs[i][:, :2]", "imgs[i] = 0").replace(
        "if _is_pair(imgs):", "if isinstance(imgs, torch.Tensor):"
    )
    mixed = tensor.replace("torch.Tensor)", "(torch.Tensor, list))")
    negated = tensor.replace("isinstance(imgs, torch.Tensor)", "not isinstance(imgs, list)")
    for source in (tensor, mixed, negated):
        assert codes(source) == [(15, "IPL004")], source
    scope = run(tensor + "t = torch.ones(3, 3)\nPairedCrop()(t)\n")
    assert scope["t"].sum().item() == 0.0  # the caller's tensor changed


ANCHORED = """
import torch


def _anchor_output(out, anchor_tensor):
    anchor = 0.0 * anchor_tensor.reshape(-1)[0]
    if isinstance(out, torch.Tensor):
        return out + anchor
    if len(out) > 0:
        out[0] = out[0] + anchor
    return out


def reduce(x, parts):
    reduced = x * 2
    return _anchor_output(reduced, x), _anchor_output(parts, x)
"""


def test_after_a_tensor_arm_that_returns_the_name_holds_no_tensor() -> None:
    """deepinv's ``_anchor_output_to_input_graph`` (untuned run 13): ``out[0] = ...`` runs
    only for a list; a tensor took the earlier return. The helper's summary agrees."""
    assert codes(ANCHORED) == []
    call = "x = torch.ones(2, requires_grad=True)\nt, ps = reduce(x, [x * 3])\n"
    scope = run(ANCHORED + call)
    (scope["t"].sum() + scope["ps"][0].sum()).backward()
    assert scope["x"].grad.tolist() == [5.0, 5.0]
    negated = ANCHORED.replace(
        "if isinstance(out, torch.Tensor):\n        return out + anchor\n    if",
        "if not isinstance(out, torch.Tensor) and",
    )
    assert codes(negated) == []
