# label: safe
# why: the fix clones distances (as was already done for deltas) before filling the out-of-cutoff pairs with NaN, so the norm output saved for backward is left untouched.
# source: https://github.com/openmm/NNPOps/pull/91
import math

import torch

torch.manual_seed(0)


def get_neighbor_pairs(positions, cutoff, max_num_neighbors=-1):
    num_atoms = positions.size(0)
    num_all_pairs = num_atoms * (num_atoms - 1) // 2

    indices = torch.arange(0, num_all_pairs, dtype=torch.int64)
    rows = (((8 * indices + 1).double().sqrt() + 1) / 2).floor().long()
    rows -= (rows * (rows - 1) > 2 * indices).long()
    columns = indices - torch.div(rows * (rows - 1), 2, rounding_mode="floor")

    neighbors = torch.vstack((rows, columns))
    deltas = positions[rows] - positions[columns]
    distances = torch.linalg.vector_norm(deltas, dim=1)

    if max_num_neighbors == -1:
        mask = distances > cutoff
        neighbors[:, mask] = -1
        deltas = deltas.clone()  # Break an autograd loop
        distances = distances.clone()
        deltas[mask, :] = math.nan
        distances[mask] = math.nan

    return neighbors, deltas, distances


def main():
    positions = (torch.rand(12, 3) * 3.0).requires_grad_()
    neighbors, deltas, distances = get_neighbor_pairs(positions, cutoff=1.5)
    valid = neighbors[0] >= 0
    total = distances[valid].sum()
    total.backward()
    return positions.grad.clone(), distances.detach()


grad, distances = main()
