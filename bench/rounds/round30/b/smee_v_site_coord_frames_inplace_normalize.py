# label: hazard raises
# why: `xy_plane /= torch.norm(xy_plane, ...)` and `z_hat /= z_hat_norm` normalize in place tensors that torch.norm (and torch.cross) saved for backward, so differentiating a force loss through the virtual-site frames fails.
# source: https://github.com/openforcefield/smee/pull/127 (commit 7b318b584f269fe820cf61cc0e78b1426dbc46f4)
from collections import namedtuple

import torch

torch.manual_seed(0)
torch.set_default_dtype(torch.float64)

VSiteKey = namedtuple("VSiteKey", ["orientation_atom_indices"])
VSiteMap = namedtuple("VSiteMap", ["keys", "parameter_idxs"])
VSiteParams = namedtuple("VSiteParams", ["weights", "local_coords"])


def tensor_like(data, other):
    return torch.tensor(data, dtype=other.dtype, device=other.device)


def _build_v_site_coord_frames(v_sites, conformer, force_field):
    weights = [force_field.weights[idx] for idx in v_sites.parameter_idxs]
    stacked_frames = [[], [], [], []]

    for key, weight in zip(v_sites.keys, weights, strict=True):
        parent_coords = conformer[:, key.orientation_atom_indices, :]
        weighted_coords = torch.transpose((torch.transpose(parent_coords, 1, 2) @ weight.T), 1, 2)

        origin = weighted_coords[:, 0, :]

        xy_plane = weighted_coords[:, 1:, :]
        xy_plane /= torch.norm(xy_plane, dim=-1).unsqueeze(-1)  # <-- IPL001

        x_hat = xy_plane[:, 0, :]

        z_hat = torch.cross(x_hat, xy_plane[:, 1, :], dim=-1)
        z_hat_norm = torch.norm(z_hat, dim=-1).unsqueeze(-1)
        z_hat_norm = torch.where(
            torch.isclose(z_hat_norm, tensor_like(0.0, other=z_hat_norm)),
            tensor_like(1.0, other=z_hat_norm),
            z_hat_norm,
        )
        z_hat /= z_hat_norm  # <-- IPL001

        y_hat = torch.cross(z_hat, x_hat, dim=-1)
        y_hat_norm = torch.norm(y_hat, dim=-1).unsqueeze(-1)
        y_hat_norm = torch.where(
            torch.isclose(y_hat_norm, tensor_like(0.0, other=y_hat_norm)),
            tensor_like(1.0, other=y_hat_norm),
            y_hat_norm,
        )
        y_hat /= y_hat_norm  # <-- IPL001

        stacked_frames[0].append(origin)
        stacked_frames[1].append(x_hat)
        stacked_frames[2].append(y_hat)
        stacked_frames[3].append(z_hat)

    return torch.stack([torch.stack(frames, dim=1) for frames in stacked_frames], dim=1)


def add_v_site_coords(v_sites, conformer, force_field):
    local_frames = _build_v_site_coord_frames(v_sites, conformer, force_field)
    local_coords = torch.stack([force_field.local_coords[idx] for idx in v_sites.parameter_idxs])
    v_site_coords = local_frames[:, 0] + (
        local_coords[None, :, 0:1] * local_frames[:, 1]
        + local_coords[None, :, 1:2] * local_frames[:, 2]
        + local_coords[None, :, 2:3] * local_frames[:, 3]
    )
    return torch.cat([conformer, v_site_coords], dim=1)


def main():
    # TIP4P-like water: one v-site placed from O, H1, H2
    weights = torch.tensor([[1.0, 0.0, 0.0], [-1.0, 1.0, 0.0], [-1.0, 0.0, 1.0]])
    local_coords = torch.tensor([0.15, 0.05, 0.0])
    force_field = VSiteParams(weights=[weights], local_coords=[local_coords])
    v_sites = VSiteMap(keys=[VSiteKey(orientation_atom_indices=[0, 1, 2])], parameter_idxs=[0])

    conformer = torch.tensor([[[0.0, 0.0, 0.0], [0.96, 0.0, 0.0], [-0.24, 0.93, 0.0]]])
    conformer.requires_grad_(True)
    charges = torch.tensor([0.0, 0.52, 0.52, -1.04])
    probe = torch.tensor([2.5, 1.0, 0.5])

    coords = add_v_site_coords(v_sites, conformer, force_field)
    energy = (charges / torch.norm(coords[0] - probe, dim=-1)).sum()
    forces = -torch.autograd.grad(energy, conformer, create_graph=True)[0]
    force_loss = (forces - 0.1).pow(2).sum()
    force_loss.backward()
    return force_loss.detach(), conformer.grad


force_loss, conformer_grad = main()
