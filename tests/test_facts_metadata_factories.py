"""``torch.zeros_like(x)`` (and every factory the op table's probe finds reading only the
shape, dtype and device of its tensor) does not read ``x``'s values: after an in-place write,
it is no stale read of them. Every program is run with torch.
"""

from __future__ import annotations

from programs import codes, run

ATTACK = """
import torch


def update_if_better(adv_img, mask, final_advs):
    final_advs[mask] = adv_img[mask]


def perturb(x, steps):
    x = x.clone()
    final_advs = x
    x_atanh = x * 2
    for _ in range(steps):
        delta = torch.zeros_like(x)
        adv_img = x_atanh + delta + 1
        update_if_better(adv_img, adv_img > 1.5, final_advs)
    return final_advs
"""


def test_a_like_factory_reads_only_the_shape() -> None:
    """advertorch's Carlini-Wagner attack (untuned run 15): ``final_advs`` is ``x``, updated
    in place, and the next step reads ``x`` only through ``torch.zeros_like(x)``."""
    assert codes(ATTACK) == []
    scope = run(ATTACK + "out = perturb(torch.ones(3), 2)\n")
    assert scope["out"].tolist() == [3.0, 3.0, 3.0]  # x_atanh + 1 where it beat 1.5


def test_a_read_of_the_values_is_still_stale() -> None:
    reads = ATTACK.replace("delta = torch.zeros_like(x)", "delta = x * 0")
    assert [code for _, code in codes(reads)] == ["IPL004"]
