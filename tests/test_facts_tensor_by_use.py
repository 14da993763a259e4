"""A value passed where torch takes only a tensor is a tensor (the op table's
``tensor_params``, probed from torch by ``tools/gen_torch_ops.py``), so ``v /= n`` on it
afterwards writes in place. Round 27's smee angle energy (``vector_ab /= torch.norm(
vector_ab, dim=1).unsqueeze(1)``) and round 13's Megatron vocab-parallel cross entropy
(``torch.max(logits)`` then ``logits -= ...`` in a custom Function's forward) were missed
because nothing showed the name held a tensor rather than a Python number. The programs are
run with torch.
"""

from __future__ import annotations

from programs import behave, codes

from inplace_lint.checks import all_rules
from inplace_lint.engine import lint_source
from inplace_lint.facts.ops import load_table

ANGLE = """
import torch


def evaluate_harmonic_angle_energy(conformer, atom_indices, parameters):
    vector_ab = conformer[atom_indices[:, 1]] - conformer[atom_indices[:, 0]]
    {normalise}
    return (parameters * vector_ab).sum()
"""

CALLED = """
conformer = torch.randn(4, 3, requires_grad=True)
energy = evaluate_harmonic_angle_energy(
    conformer, torch.tensor([[0, 1], [2, 3]]), torch.ones(2, 3)
)
energy.backward()
"""

FUNCTION = """
import torch


class NormalizedLogits(torch.autograd.Function):
    @staticmethod
    def forward(ctx, logits):
        logits_max = torch.amax(logits, dim=-1, keepdim=True)
        {shift}
        ctx.save_for_backward(logits)
        return logits.clone()

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output


x = torch.randn(2, 5, requires_grad=True)
h = x.exp()
out = NormalizedLogits.apply(h)
(out * h).sum().backward()
"""


def _assumed(source: str) -> list[tuple[int, str]]:
    codes_ = frozenset(rule.code for rule in all_rules())
    return [(f.line, f.code) for f in lint_source(source, "t.py", codes_, assume_grad=True)]


def test_the_table_knows_which_parameters_only_a_tensor_fills() -> None:
    table = load_table()
    assert "input" in table.functions["torch.norm"].tensor_params
    assert "input" in table.functions["torch.exp"].tensor_params
    assert not table.functions["torch.pow"].tensor_params  # ``torch.pow(2.0, e)``
    assert "other" not in table.functions["torch.where"].tensor_params


def test_a_name_given_to_norm_is_a_tensor_so_its_division_is_in_place() -> None:
    hazard = ANGLE.format(normalise="vector_ab /= torch.norm(vector_ab, dim=1).unsqueeze(1)")
    safe = ANGLE.format(
        normalise="vector_ab = vector_ab / torch.norm(vector_ab, dim=1).unsqueeze(1)"
    )
    assert _assumed(hazard) == [(7, "IPL001")]
    assert _assumed(safe) == []
    assert codes(hazard + CALLED) == [(7, "IPL001")]
    behave(hazard + CALLED, safe + CALLED)


def test_a_function_input_given_to_a_reduction_is_a_tensor_written_in_forward() -> None:
    hazard = FUNCTION.format(shift="logits -= logits_max")
    safe = FUNCTION.format(shift="logits = logits - logits_max")
    assert codes(hazard) == [(9, "IPL005")]
    assert codes(safe) == []
    behave(hazard, safe)
