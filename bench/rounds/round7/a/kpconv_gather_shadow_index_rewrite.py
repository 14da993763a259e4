# label: hazard raises
# why: gather() rewrites the shadow neighbour indices in place (`idx[idx == -1] = ...`) on the caller's neighbors_indices, but the first gather already saved an expanded view of that index tensor for backward.
# source: https://github.com/torch-points3d/torch-points3d/issues/552
import torch

torch.manual_seed(0)


def gather(x, idx, method=2):
    """https://discuss.pytorch.org/t/how-to-select-index-over-two-dimension/10098/3
    x : Input tensor [N, D]
    idx : Indexes of the neighbours [M, K]
    """
    idx[idx == -1] = x.shape[0] - 1  # <-- IPL001, IPL004: rewrites the caller's index tensor, already saved by the previous gather  # Shadow point
    if method == 0:
        return x[idx]
    elif method == 2:
        for i, ni in enumerate(idx.size()[1:]):
            x = x.unsqueeze(i + 1)
            new_s = list(x.size())
            new_s[i + 1] = ni
            x = x.expand(new_s)
        n = len(idx.size())
        for i, di in enumerate(x.size()[n:]):
            idx = idx.unsqueeze(i + n)
            new_s = list(idx.size())
            new_s[i + n] = di
            idx = idx.expand(new_s)
        return x.gather(0, idx)
    raise ValueError("Unknown method")


def KPConv_ops(query_points, support_points, neighbors_indices, features, K_points, K_values, KP_extent):
    # Add a fake point in the last row for shadow neighbors
    shadow_point = torch.ones_like(support_points[:1, :]) * 1e6
    support_points = torch.cat([support_points, shadow_point], dim=0)

    # Get neighbor points [n_points, n_neighbors, dim]
    neighbors = gather(support_points, neighbors_indices)

    # Center every neighborhood
    neighbors = neighbors - query_points.unsqueeze(1)

    # Get all difference matrices [n_points, n_neighbors, n_kpoints, dim]
    neighbors.unsqueeze_(2)
    differences = neighbors - K_points

    # Get the square distances [n_points, n_neighbors, n_kpoints]
    sq_distances = torch.sum(differences ** 2, dim=3)

    # linear influence
    all_weights = torch.clamp(1 - torch.sqrt(sq_distances + 1e-9) / KP_extent, min=0.0)
    all_weights = torch.transpose(all_weights, 1, 2)

    # Add a zero feature for shadow neighbors
    features = torch.cat([features, torch.zeros_like(features[:1, :])], 0)

    # Get the features of each neighborhood [n_points, n_neighbors, in_fdim]
    neighborhood_features = gather(features, neighbors_indices)

    # Apply distance weights [n_points, n_kpoints, in_fdim]
    weighted_features = torch.matmul(all_weights, neighborhood_features)

    # Apply network weights [n_kpoints, n_points, out_fdim]
    weighted_features = weighted_features.permute(1, 0, 2)
    kernel_outputs = torch.matmul(weighted_features, K_values)

    # Convolution sum to get [n_points, out_fdim]
    return torch.sum(kernel_outputs, dim=0)


class KPConvLayer(torch.nn.Module):
    def __init__(self, num_inputs, num_outputs, point_influence=1.0, n_kernel_points=5):
        super().__init__()
        self.kernel_radius = 1.5 * point_influence
        self.point_influence = point_influence
        self.K_points = torch.nn.Parameter(torch.randn(n_kernel_points, 3) * 0.5, requires_grad=False)
        self.weight = torch.nn.Parameter(torch.randn(n_kernel_points, num_inputs, num_outputs) * 0.1)

    def forward(self, query_points, support_points, neighbors, x):
        return KPConv_ops(query_points, support_points, neighbors, x, self.K_points, self.weight, self.point_influence)


pos = torch.tensor([[0., 0., 0.], [0.5, 0.5, 0.5], [1., 1., 1.]], requires_grad=True)
x = torch.rand(3, 4)
neighbors = torch.tensor([[0, 1, -1], [1, 0, 2], [2, 1, -1]])
layer = KPConvLayer(4, 6)
out = layer(pos, pos, neighbors, x)
out.sum().backward()
