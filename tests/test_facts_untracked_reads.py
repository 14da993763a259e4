"""Reads autograd does not record, and objects that are modules because they have parameters.

``tensor.data.copy_(v); tensor.data.mul_(std)``: the second line reads ``tensor`` only through
``.data``, which no graph sees, so it is no use of the hidden write's result. A helper that
iterates ``module.parameters()`` was given a module, not a tensor, so returning it is no read
of a graph tensor. Both shapes come from weight initialisers (dgllife ``truncated_normal_``,
coqui-tts ``zero_module``, untuned run 7); the reads that do reach a graph stay findings.
"""

from __future__ import annotations

from tests.programs import codes, run

INIT_HELPERS = """
import torch
import torch.nn as nn


def truncated_normal(tensor, mean=0.0, std=1.0):
    tmp = tensor.new_empty(tensor.shape + (4,)).normal_()
    valid = (tmp < 2) & (tmp > -2)
    ind = valid.max(-1, keepdim=True)[1]
    tensor.data.copy_(tmp.gather(-1, ind).squeeze(-1))
    tensor.data.mul_(std).add_(mean)


def zero_module(module):
    for p in module.parameters():
        p.detach().zero_()
    return module


layer = zero_module(nn.Linear(3, 3))
head = nn.Linear(3, 2)
truncated_normal(head.weight, std=0.1)
out = head(layer(torch.randn(4, 3))).sum()
out.backward()
"""

GRAPH_READ = """
import torch

lin = torch.nn.Linear(3, 3)
h = lin(torch.randn(2, 3))
h.data.mul_(2)
h.data.add_(1)
y = (h * h).sum()
y.backward()
"""


def test_reads_through_data_or_detach_are_no_graph_use() -> None:
    assert codes(INIT_HELPERS) == []
    run(INIT_HELPERS)


def test_a_later_graph_read_is_still_found() -> None:
    assert codes(GRAPH_READ) == [(6, "IPL007"), (7, "IPL007")]
