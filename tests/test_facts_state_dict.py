"""``state_dict()`` returns the module's own tensors: a snapshot kept in a name goes stale when
an optimizer step (or ``load_state_dict``) updates the module in place (IPL002, at the update).

Each program runs under torch: the hazard's "best" weights equal the final ones, which is the
silent bug; ``copy.deepcopy`` and a snapshot retaken after every step keep it apart.
"""

from __future__ import annotations

import pytest

from tests.programs import codes, run

TRAIN = """
import copy
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Linear(3, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.5)
best = None
for epoch in range(3):
    loss = model(torch.randn(4, 3)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    if epoch == 0:
        best = {SNAPSHOT}
kept = best["weight"].clone()
final = model.weight.detach().clone()
"""

HAZARD = TRAIN.replace("{SNAPSHOT}", "model.state_dict()")
COPIED = TRAIN.replace("{SNAPSHOT}", "copy.deepcopy(model.state_dict())")
RETAKEN = HAZARD.replace("    if epoch == 0:\n        best", "    best")


def test_a_state_dict_kept_across_optimizer_steps_is_stale() -> None:
    assert codes(HAZARD) == [(14, "IPL002")]
    scope = run(HAZARD)
    assert bool((scope["kept"] == scope["final"]).all())  # the "best" weights moved


@pytest.mark.parametrize("source", [COPIED, RETAKEN], ids=["deepcopy", "retaken"])
def test_a_copied_or_retaken_snapshot_is_not(source: str) -> None:
    assert codes(source) == []
    run(source)


TRAINER = """
import torch
import torch.nn as nn

torch.manual_seed(0)


class Trainer:
    def __init__(self, model):
        self.model = model
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.5)

    def step(self, x):
        loss = self.model(x).pow(2).mean()
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()

    def fit(self):
        best = None
        for epoch in range(3):
            self.step(torch.randn(4, 3))
            if epoch == 0:
                best = self.model.state_dict()
        self.model.load_state_dict(best)


model = nn.Linear(3, 2)
trainer = Trainer(model)
trainer.fit()
"""


def test_the_model_a_trainer_steps_is_the_one_it_snapshots() -> None:
    assert codes(TRAINER) == [(17, "IPL002")]
    run(TRAINER)


SELF_LOAD = """
import torch
import torch.nn as nn

model = nn.Linear(3, 2)
state = model.state_dict()
model.load_state_dict(state)
first = state["weight"].clone()
"""


def test_loading_a_module_s_own_state_dict_writes_nothing_new() -> None:
    assert codes(SELF_LOAD) == []
    run(SELF_LOAD)
