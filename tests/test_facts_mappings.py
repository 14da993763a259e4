"""Values that are no tensors by how the code uses them, and rows a loop writes one at a time.

- ``records["acc"] += preds.tolist()``: no tensor takes a string index, so ``records`` is a
  mapping and the entry is written in place only if it is known to be a tensor (s3prl's
  downstream experts, untuned run 16).
- ``for k, v in self.prev.items(): self.prev[k] = v.detach()``: only a mapping has
  ``items``; replacing its entries writes no tensor (ptlflow's ``prev_preds``).
- ``warp(x[i][None, :n])`` in ``for i in range(...)``: the helper writes a part of row ``i``;
  the next iteration reads row ``i + 1`` (s3prl's ``TimeWarp``).

Each program runs under torch.
"""

from __future__ import annotations

import pytest

from tests.programs import codes, run

RECORDS = """
import torch
import torch.nn as nn


class Expert(nn.Module):
    def __init__(self):
        super().__init__()
        self.model = nn.Linear(4, 3)

    def forward(self, features, labels, records=None):
        logits = self.model(features)
        loss = nn.functional.cross_entropy(logits, labels)
        records["acc"] += (logits.argmax(-1) == labels).float().tolist()
        records["loss"].append(loss.item())
        return loss
"""
CALLER = """
records = {"acc": [], "loss": []}
loss = Expert()(torch.randn(5, 4), torch.tensor([0, 1, 2, 0, 1]), records)
loss.backward()
"""

ENTRY = """
import torch

a = torch.randn(4, requires_grad=True)
out = {"h": torch.sigmoid(a)}
out["h"] += 1
out["h"].sum().backward()
"""


def test_a_string_keyed_entry_is_written_only_when_it_is_a_tensor() -> None:
    assert codes(RECORDS) == []  # no caller in the file: the module's forward alone
    assert run(RECORDS + CALLER)["records"]["acc"]  # type: ignore[index]
    assert codes(ENTRY) == [(6, "IPL001")]
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        run(ENTRY)


PREDS = """
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(3, 2)
        self.prev = None

    def forward(self, x):
        return {"flows": torch.sigmoid(self.net(x))}

    def validation_step(self, x):
        preds = self(x)
        self.prev = preds
        for k, v in self.prev.items():
            self.prev[k] = v.detach()
        return preds


model = Model()
preds = model.validation_step(torch.randn(4, 3))
"""


def test_a_value_with_items_is_a_mapping() -> None:
    assert codes(PREDS) == []
    namespace = run(PREDS)
    assert not namespace["preds"]["flows"].requires_grad  # type: ignore[index]


ROWS = """
import torch


def warp(x):
    x[:, :2] = 0.0
    return x


def forward(x):
    ys = x.new_zeros(x.size())
    for i in range(x.size(0)):
        ys[i] = warp(x[i][None, :3])[0]
    return ys


x = torch.arange(24.0).view(2, 3, 4)
ys = forward(x)
AFTER
"""


def test_a_loop_writing_one_row_at_a_time_reads_the_next_row_unwritten() -> None:
    assert codes(ROWS.replace("AFTER", "")) == []
    after = ROWS.replace("AFTER", "first = x[0].sum()")
    write = after.splitlines().index("    x[:, :2] = 0.0") + 1
    assert codes(after) == [(write, "IPL004")]  # row 0 read again after the loop
    namespace = run(after)
    assert float(namespace["first"]) != float(sum(range(12)))  # type: ignore[arg-type]
