# label: hazard raises
# why: the bond vector is divided in place by its own norm, but torch.norm saved that vector (and its result) for backward, so differentiating the angle energy w.r.t. the conformer fails.
# source: https://github.com/openforcefield/smee/pull/9 (pre-fix smirnoffee/potentials/valence.py, fixed in commit 177b9dbb1311f848a36644bf6d40dab813782d0d)
import torch

torch.manual_seed(0)

_POTENTIAL_ENERGY_FUNCTIONS = {}


def potential_energy_function(handler_type, energy_expression):
    def _decorator(func):
        _POTENTIAL_ENERGY_FUNCTIONS.update({(handler_type, energy_expression): func})
        return func

    return _decorator


@potential_energy_function("Bonds", "k/2*(r-length)**2")
def evaluate_harmonic_bond_energy(conformer, atom_indices, parameters):
    if len(atom_indices) == 0:
        return torch.zeros(1)

    distances = torch.norm(
        conformer[atom_indices[:, 1]] - conformer[atom_indices[:, 0]], dim=1
    )

    return (0.5 * parameters[:, 0] * (distances - parameters[:, 1]) ** 2).sum()


@potential_energy_function("Angles", "k/2*(theta-angle)**2")
def evaluate_harmonic_angle_energy(conformer, atom_indices, parameters):
    if len(atom_indices) == 0:
        return torch.zeros(1)

    vector_ab = conformer[atom_indices[:, 1]] - conformer[atom_indices[:, 0]]
    vector_ab /= torch.norm(vector_ab, dim=1).unsqueeze(1)  # <-- IPL001

    vector_ac = conformer[atom_indices[:, 1]] - conformer[atom_indices[:, 2]]
    vector_ac /= torch.norm(vector_ac, dim=1).unsqueeze(1)  # <-- IPL001

    angles = torch.rad2deg(torch.acos((vector_ab * vector_ac).sum(dim=1)))

    return (0.5 * parameters[:, 0] * (angles - parameters[:, 1]) ** 2).sum()


def evaluate_system_energy(conformer, parameters_by_handler):
    total_energy = torch.zeros(1)
    for (handler_type, expression), (atom_indices, parameters) in parameters_by_handler.items():
        energy_function = _POTENTIAL_ENERGY_FUNCTIONS[(handler_type, expression)]
        total_energy = total_energy + energy_function(conformer, atom_indices, parameters)
    return total_energy


def main():
    conformer = torch.tensor(
        [[0.0, 0.0, 0.0], [1.0, 0.1, 0.0], [1.2, 1.1, 0.1], [2.1, 1.3, 0.9]]
    ) + 0.05 * torch.randn(4, 3)
    conformer.requires_grad_(True)

    parameters_by_handler = {
        ("Bonds", "k/2*(r-length)**2"): (
            torch.tensor([[0, 1], [1, 2], [2, 3]]),
            torch.tensor([[400.0, 1.0], [400.0, 1.1], [350.0, 1.0]]),
        ),
        ("Angles", "k/2*(theta-angle)**2"): (
            torch.tensor([[0, 1, 2], [1, 2, 3]]),
            torch.tensor([[100.0, 109.5], [90.0, 120.0]]),
        ),
    }

    energy = evaluate_system_energy(conformer, parameters_by_handler)
    forces = -torch.autograd.grad(energy.sum(), conformer)[0]
    return energy.detach(), forces


energy, forces = main()
