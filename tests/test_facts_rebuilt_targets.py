"""A read of the written tensor inside a later assignment to the very target its in-place
result was assigned to rebuilds that target from it, and wants it as written (round 32,
OGB's MAG R-GCN: ``x_dict[key] = F.relu_(x)`` then ``x_dict[key] = F.dropout(x, ...)``). The
same read assigned anywhere else still reads a value that changed. The programs are run with
torch.
"""

from __future__ import annotations

from programs import codes, run

RGCN = """
import torch
import torch.nn.functional as F


def activate(x_dict, out):
    for key, x in x_dict.items():
        x_dict[key] = {relu}(x)
        {target} = F.dropout(x, p=0.5, training=False)
    return x_dict, out


torch.manual_seed(0)
x_dict = {{"paper": torch.randn(3, 2), "author": torch.randn(2, 2)}}
out = {{}}
result, kept = activate(x_dict, out)
"""


def test_a_read_rebuilding_the_same_target_wants_the_new_value() -> None:
    source = RGCN.format(relu="F.relu_", target="x_dict[key]")
    assert codes(source) == []
    scope = run(source)
    assert all((t >= 0).all() for t in scope["result"].values())  # type: ignore[attr-defined]


def test_the_read_assigned_elsewhere_is_still_stale() -> None:
    hazard = RGCN.format(relu="F.relu_", target="out[key]")
    assert codes(hazard) == [(8, "IPL002")]
    twin = run(RGCN.format(relu="F.relu", target="out[key]"))
    changed = run(hazard)
    assert not changed["kept"]["paper"].equal(twin["kept"]["paper"])  # type: ignore[index]
