# label: hazard silent
# why: modified_rel_dist is only another name for rel_dist, so masked_fill_ with the neighbor and bond masks writes max_value and 0. into rel_dist itself, and neighbor_rel_dist gathered later from rel_dist feeds those masking values instead of real distances into the radial network.
# source: https://github.com/lucidrains/se3-transformer-pytorch/commit/52deee1aee112f73dbd74efabbbba44296d3fb57 (fix bug where rel dist may contain masking values used for ranking neighbors)
import torch
import torch.nn as nn

torch.manual_seed(0)


def exists(val):
    return val is not None


def get_max_value(t):
    return torch.finfo(t.dtype).max


def remove_self(t):
    b, n = t.shape[0], t.shape[1]
    exclude_self_mask = ~torch.eye(n, dtype=torch.bool)
    return t.masked_select(exclude_self_mask[None]).reshape(b, n, n - 1)


def batched_index_select(values, indices, dim=1):
    value_dims = values.shape[(dim + 1):]
    values_shape, indices_shape = map(lambda t: list(t.shape), (values, indices))
    indices = indices[(..., *((None,) * len(value_dims)))]
    indices = indices.expand(*((-1,) * len(indices_shape)), *value_dims)
    value_expand_len = len(indices_shape) - (dim + 1)
    values = values[(*((slice(None),) * dim), *((None,) * value_expand_len), ...)]
    value_expand_shape = [-1] * len(values.shape)
    expand_slice = slice(dim, (dim + value_expand_len))
    value_expand_shape[expand_slice] = indices.shape[expand_slice]
    values = values.expand(*value_expand_shape)
    dim += value_expand_len
    return values.gather(dim, indices)


class SE3Transformer(nn.Module):
    def __init__(self, dim=8, num_neighbors=3, valid_radius=1e5):
        super().__init__()
        self.num_neighbors = num_neighbors
        self.valid_radius = valid_radius
        self.radial = nn.Sequential(nn.Linear(1, 16), nn.ReLU(), nn.Linear(16, dim))
        self.to_out = nn.Linear(dim, dim)

    def forward(self, feats, coors, neighbor_mask=None, sparse_neighbor_mask=None):
        b, n, _ = feats.shape
        neighbors = self.num_neighbors
        valid_radius = self.valid_radius

        exclude_self_mask = ~torch.eye(n, dtype=torch.bool)[None]
        indices = torch.arange(n)[None, :, None].expand(b, n, n)
        rel_pos = coors[:, :, None, :] - coors[:, None, :, :]
        indices = indices.masked_select(exclude_self_mask).reshape(b, n, n - 1)
        rel_pos = rel_pos.masked_select(exclude_self_mask[..., None]).reshape(b, n, n - 1, 3)

        rel_dist = rel_pos.norm(dim=-1)

        # rel_dist gets modified using adjacency or neighbor mask

        modified_rel_dist = rel_dist
        max_value = get_max_value(modified_rel_dist)

        if exists(neighbor_mask):
            neighbor_mask = remove_self(neighbor_mask)
            modified_rel_dist.masked_fill_(~neighbor_mask, max_value)  # <-- IPL002

        if exists(sparse_neighbor_mask):
            sparse_neighbor_mask = remove_self(sparse_neighbor_mask)
            modified_rel_dist.masked_fill_(sparse_neighbor_mask, 0.)  # <-- IPL002

        total_neighbors = int(min(neighbors, n - 1))
        dist_values, nearest_indices = modified_rel_dist.topk(total_neighbors, dim=-1, largest=False)
        neighbor_mask = dist_values <= valid_radius

        neighbor_rel_dist = batched_index_select(rel_dist, nearest_indices, dim=2)
        neighbor_indices = batched_index_select(indices, nearest_indices, dim=2)

        radial_weights = self.radial(neighbor_rel_dist[..., None])
        neighbor_feats = batched_index_select(feats, neighbor_indices.reshape(b, -1), dim=1).reshape(b, n, total_neighbors, -1)
        messages = (neighbor_feats * radial_weights).masked_fill(~neighbor_mask[..., None], 0.)
        return self.to_out(messages.sum(dim=2))


def main():
    model = SE3Transformer()
    feats = torch.randn(2, 6, 8)
    coors = torch.randn(2, 6, 3)
    neighbor_mask = torch.rand(2, 6, 6) > 0.3
    adj = torch.zeros(6, 6, dtype=torch.bool)
    for i in range(5):
        adj[i, i + 1] = adj[i + 1, i] = True
    sparse_neighbor_mask = adj[None].expand(2, 6, 6)
    out = model(feats, coors, neighbor_mask=neighbor_mask, sparse_neighbor_mask=sparse_neighbor_mask)
    out.sum().backward()
    return out.detach(), model.radial[0].weight.grad.clone()


out, grad = main()
