"""An attribute that code outside a plain class makes require grad (schnetpack, round 34):

``System.__init__`` stores ``self.positions = torch.rand(...)``, which needs no grad, and
``wrap_positions`` overwrites what ``torch.linalg.solve`` saved with ``masked_scatter_``.
Read alone that is harmless; but ``main`` calls ``system.positions.requires_grad_(True)``
(forces need the gradient) before ``system.wrap_positions()``, so the solve does save for a
graph and the energy's backward raises. The fact: a ``requires_grad_(True)`` (or
``requires_grad = True``) on an attribute of an instance of a same-file plain class makes
the class's methods read that attribute as a leaf that requires grad. The same method under
``torch.no_grad()`` is clean. The programs run with torch.
"""

from __future__ import annotations

import pytest
from programs import behave, codes

SYSTEM = """
import torch


class System:
    def __init__(self, n_atoms):
        self.positions = torch.rand(1, n_atoms, 3) * 5.0 - 0.5
        self.cells = 4.0 * torch.eye(3).repeat(1, 1, 1)
        self.pbc = torch.tensor([True, True, False])

    def wrap_positions(self, eps=1e-6):
        cells, positions = self.cells.transpose(1, 2), self.positions.transpose(1, 2)
        inv_positions = torch.linalg.solve(cells, positions)
        inv_positions = inv_positions.transpose(1, 2)
        periodic = torch.masked_select(inv_positions, self.pbc) % 1.0
        inv_positions.masked_scatter_(self.pbc, periodic)
        self.positions = torch.matmul(inv_positions, self.cells)


def main():
    system = System(5)
    {enable}
    {wrap}
    energy = (system.positions ** 2).sum()
    energy.backward()


main()
"""

WRAP = "system.wrap_positions()"
NO_GRAD_WRAP = "with torch.no_grad():\n        system.wrap_positions()"


@pytest.mark.parametrize(
    "enable", ["system.positions.requires_grad_(True)", "system.positions.requires_grad = True"]
)
def test_a_method_overwrites_what_a_solve_saved_for_an_attribute_made_to_require_grad(
    enable: str,
) -> None:
    hazard = SYSTEM.format(enable=enable, wrap=WRAP)
    assert codes(hazard) == [(16, "IPL001")]
    safe = SYSTEM.format(enable=enable, wrap=NO_GRAD_WRAP).replace(
        "energy.backward()", "print(energy)"
    )
    assert codes(safe) == []
    behave(hazard, safe)


def test_without_the_outside_grad_the_method_is_clean() -> None:
    source = SYSTEM.format(enable="pass", wrap=WRAP).replace("energy.backward()", "print(energy)")
    assert codes(source) == []
    behave(SYSTEM.format(enable="system.positions.requires_grad_(True)", wrap=WRAP), source)
