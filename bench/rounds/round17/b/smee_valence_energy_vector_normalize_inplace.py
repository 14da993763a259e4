# label: hazard raises
# why: each bond vector is normalised in place with /= by its own norm, but torch.norm saved that vector for backward, so the force-field energy cannot be differentiated w.r.t. the parameters or coordinates.
# source: https://github.com/SimonBoothroyd/smee/commit/177b9dbb1311f848a36644bf6d40dab813782d0d
import torch

torch.manual_seed(0)


def evaluate_harmonic_angle_energy(conformer, atom_indices, parameters):
    if len(atom_indices) == 0:
        return torch.zeros(1)
    vector_ab = conformer[atom_indices[:, 1]] - conformer[atom_indices[:, 0]]
    vector_ab /= torch.norm(vector_ab, dim=1).unsqueeze(1)  # <-- IPL001: norm saved vector_ab for backward
    vector_ac = conformer[atom_indices[:, 1]] - conformer[atom_indices[:, 2]]
    vector_ac /= torch.norm(vector_ac, dim=1).unsqueeze(1)  # <-- IPL001: norm saved vector_ac for backward
    angles = torch.rad2deg(torch.acos((vector_ab * vector_ac).sum(dim=1)))
    return (0.5 * parameters[:, 0] * (angles - parameters[:, 1]) ** 2).sum()


def _evaluate_cosine_torsion_energy(conformer, atom_indices, parameters):
    if len(atom_indices) == 0:
        return torch.zeros(1)
    vector_ab = conformer[atom_indices[:, 0]] - conformer[atom_indices[:, 1]]
    vector_cb = conformer[atom_indices[:, 2]] - conformer[atom_indices[:, 1]]
    vector_cd = conformer[atom_indices[:, 2]] - conformer[atom_indices[:, 3]]
    vector_ab_cross_cb = torch.cross(vector_ab, vector_cb, dim=1)
    vector_cb_cross_cd = torch.cross(vector_cb, vector_cd, dim=1)
    vector_ab_cross_cb /= torch.norm(vector_ab_cross_cb, dim=1).unsqueeze(1)  # <-- IPL001: norm saved the cross product for backward
    vector_cb_cross_cd /= torch.norm(vector_cb_cross_cd, dim=1).unsqueeze(1)  # <-- IPL001: norm saved the cross product for backward
    cos_phi = (vector_ab_cross_cb * vector_cb_cross_cd).sum(dim=1)
    phi = torch.acos(cos_phi)
    phi *= torch.where((vector_ab * vector_cb_cross_cd).sum(dim=1) < 0, -1.0, 1.0)
    return (parameters[:, 0] / parameters[:, 3] * (1.0 + torch.cos(parameters[:, 1] * phi - torch.deg2rad(parameters[:, 2])))).sum()


POTENTIALS = {
    "Angles": evaluate_harmonic_angle_energy,
    "ProperTorsions": _evaluate_cosine_torsion_energy,
}

conformer = torch.randn(5, 3, requires_grad=True)
indices = {"Angles": torch.tensor([[0, 1, 2], [1, 2, 3], [2, 3, 4]]), "ProperTorsions": torch.tensor([[0, 1, 2, 3], [1, 2, 3, 4]])}
parameters = {
    "Angles": torch.tensor([[100.0, 109.5], [120.0, 110.0], [90.0, 115.0]], requires_grad=True),
    "ProperTorsions": torch.tensor([[1.0, 3.0, 0.0, 1.0], [0.5, 2.0, 180.0, 1.0]], requires_grad=True),
}
energy = sum(POTENTIALS[name](conformer, indices[name], parameters[name]) for name in POTENTIALS)
energy.backward()
