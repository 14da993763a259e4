"""A dict whose every entry a loop replaces holds none of its old values (composer's trainer,
untuned run 32):

``for k, loss in microbatch_loss_dict.items(): microbatch_loss_dict[k] = loss.detach().clone()
...`` replaces each logged loss by a copy before ``microbatch_loss.mul_(...)`` scales the loss
for backward, so the dict the step returns holds the unscaled copies. The entries were taken to
still hold the loss, and the return was reported as a stale read. Without the loop, the dict
does hold the loss, and the logged value is the scaled one. The programs run with torch.
"""

from __future__ import annotations

from programs import codes, run

STEP = """
import torch


def train_step(model, x):
    out = model(x)
    loss = out.pow(2).mean()
    loss_dict = {{"total": loss}}
    for k, v in loss_dict.items():
        {body}
    loss.mul_(0.5)
    loss.backward()
    return loss.detach(), loss_dict


torch.manual_seed(0)
loss, logged = train_step(torch.nn.Linear(3, 1), torch.randn(4, 3))
"""


def test_the_returned_dict_holds_the_copies_the_loop_put_there() -> None:
    safe = STEP.format(body="loss_dict[k] = v.detach().clone()")
    assert codes(safe) == []
    hazard = STEP.format(body="print(k)")
    assert codes(hazard) == [(11, "IPL002")]
    copied, aliased = run(safe), run(hazard)
    assert float(copied["logged"]["total"]) == 2 * float(copied["loss"])  # type: ignore[index]
    assert float(aliased["logged"]["total"].detach()) == float(aliased["loss"])  # type: ignore[index]
