# label: hazard raises
# why: getNeighborPairs writes NaN into the distances tensor in place for pairs beyond the cutoff, but distances is the output of the norm that autograd saved to compute its backward, so the gradient w.r.t. positions fails.
# source: https://github.com/openmm/NNPOps/issues/84
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
        deltas[mask, :] = math.nan
        distances[mask] = math.nan  # <-- IPL001

    return neighbors, deltas, distances


def main():
    positions = (torch.rand(12, 3) * 3.0).requires_grad_()
    neighbors, deltas, distances = get_neighbor_pairs(positions, cutoff=1.5)
    valid = neighbors[0] >= 0
    total = distances[valid].sum()
    total.backward()
    return positions.grad.clone(), distances.detach()


grad, distances = main()
