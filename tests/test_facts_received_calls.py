"""A method called on a receiver of unknown type runs in the grad mode of its call sites even
when several classes of the file define it (untuned run 26, llm-compressor's
``expert.copy_from_experts_module(experts, index)`` under ``@torch.no_grad()``, three expert
classes defining the method: ten false leaf writes). The programs are run with torch.
"""

from __future__ import annotations

from programs import behave, codes, run

EXPERTS = """
import torch
import torch.nn as nn


class ExpertMLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 4)

    def copy_from_experts_module(self, experts, index):
        self.proj.weight.copy_(experts.weight[index])


class GatedExpertMLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.gate = nn.Linear(4, 4)

    def copy_from_experts_module(self, experts, index):
        self.gate.weight.copy_(experts.weight[index])


class LinearExperts(nn.ModuleList):
    @classmethod
    {decorator}
    def from_experts_module(cls, experts):
        self = cls([ExpertMLP() for _ in range(2)])
        for index in range(2):
            expert = self[index]
            expert.copy_from_experts_module(experts, index)
        return self


class Fused(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(2, 4, 4))


experts = LinearExperts.from_experts_module(Fused())
"""


def test_a_method_of_several_classes_called_only_under_no_grad() -> None:
    safe = EXPERTS.format(decorator="@torch.no_grad()")
    hazard = EXPERTS.format(decorator="")
    assert codes(safe) == []
    assert (12, "IPL003") in codes(hazard)
    run(safe)
    behave(hazard, match="leaf Variable that requires grad")
