# label: safe
# why: the fix masks the diagonal out of place (adj_mat = adj_mat.masked_fill(self_mask, False)), so every layer sees the caller's adjacency unchanged and sizes its sparse neighborhood the same way.
# source: https://github.com/lucidrains/egnn-pytorch/commit/e7a8b8c802838179c39e767d39332c06c02207ba (adj_mat.masked_fill_ replaced by out-of-place masked_fill on a cloned adjacency)
import torch
import torch.nn as nn

torch.manual_seed(0)


def exists(val):
    return val is not None


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


class EGNN(nn.Module):
    def __init__(self, dim, m_dim=8, only_sparse_neighbors=True, num_nearest_neighbors=1, valid_radius=float('inf')):
        super().__init__()
        edge_input_dim = (dim * 2) + 1
        self.edge_mlp = nn.Sequential(nn.Linear(edge_input_dim, edge_input_dim * 2), nn.SiLU(), nn.Linear(edge_input_dim * 2, m_dim), nn.SiLU())
        self.node_norm = nn.LayerNorm(dim)
        self.node_mlp = nn.Sequential(nn.Linear(dim + m_dim, dim * 2), nn.SiLU(), nn.Linear(dim * 2, dim))
        self.coors_mlp = nn.Sequential(nn.Linear(m_dim, m_dim * 4), nn.SiLU(), nn.Linear(m_dim * 4, 1))
        self.num_nearest_neighbors = num_nearest_neighbors
        self.only_sparse_neighbors = only_sparse_neighbors
        self.valid_radius = valid_radius

    def forward(self, feats, coors, adj_mat=None):
        b, n, d = feats.shape
        num_nearest, valid_radius = self.num_nearest_neighbors, self.valid_radius

        rel_coors = coors[:, :, None, :] - coors[:, None, :, :]
        rel_dist = (rel_coors ** 2).sum(dim=-1, keepdim=True)

        ranking = rel_dist[..., 0].clone()

        if exists(adj_mat):
            if len(adj_mat.shape) == 2:
                adj_mat = adj_mat[None].expand(b, n, n)

            if self.only_sparse_neighbors:
                num_nearest = int(adj_mat.float().sum(dim=-1).max().item())
                valid_radius = 0

            self_mask = torch.eye(n, dtype=torch.bool)[None]

            ranking.masked_fill_(self_mask, -1.)
            adj_mat = adj_mat.masked_fill(self_mask, False)
            ranking.masked_fill_(adj_mat, 0.)

        nbhd_ranking, nbhd_indices = ranking.topk(num_nearest, dim=-1, largest=False)
        nbhd_mask = nbhd_ranking <= valid_radius

        rel_coors = batched_index_select(rel_coors, nbhd_indices, dim=2)
        rel_dist = batched_index_select(rel_dist, nbhd_indices, dim=2)
        feats_j = batched_index_select(feats, nbhd_indices, dim=1)
        feats_i = feats[:, :, None, :].expand_as(feats_j)

        edge_input = torch.cat((feats_i, feats_j, rel_dist), dim=-1)
        m_ij = self.edge_mlp(edge_input)

        coor_weights = self.coors_mlp(m_ij)[..., 0]
        coor_weights = coor_weights.masked_fill(~nbhd_mask, 0.)
        coors_out = torch.einsum('b i j, b i j c -> b i c', coor_weights, rel_coors) + coors

        m_ij = m_ij.masked_fill(~nbhd_mask[..., None], 0.)
        m_i = m_ij.sum(dim=-2)
        node_mlp_input = torch.cat((self.node_norm(feats), m_i), dim=-1)
        node_out = self.node_mlp(node_mlp_input) + feats
        return node_out, coors_out


class EGNN_Network(nn.Module):
    def __init__(self, *, depth, dim, num_tokens=None, **kwargs):
        super().__init__()
        self.token_emb = nn.Embedding(num_tokens, dim) if exists(num_tokens) else None
        self.layers = nn.ModuleList([EGNN(dim=dim, **kwargs) for _ in range(depth)])

    def forward(self, feats, coors, adj_mat=None):
        if exists(self.token_emb):
            feats = self.token_emb(feats)
        for layer in self.layers:
            feats, coors = layer(feats, coors, adj_mat=adj_mat)
        return feats, coors


def main():
    net = EGNN_Network(depth=3, dim=8, num_tokens=5, only_sparse_neighbors=True)
    feats = torch.randint(0, 5, (2, 6))
    coors = torch.randn(2, 6, 3)
    i = torch.arange(6)
    adj_mat = (i[:, None] - i[None, :]).abs() <= 1  # chain bonds, self-loops included
    adj_mat = adj_mat[None].repeat(2, 1, 1)
    feats_out, coors_out = net(feats, coors, adj_mat=adj_mat)
    loss = feats_out.pow(2).mean() + coors_out.pow(2).mean()
    loss.backward()
    return feats_out.detach(), coors_out.detach(), net.layers[0].edge_mlp[0].weight.grad.clone()


feats_out, coors_out, grad = main()
