# label: hazard silent
# why: ranking is a view of rel_dist, so the masked_fill_ calls that prepare the nearest-neighbour ranking also write the masking values (1e5, -1, 0) into rel_dist, which is then fed to the edge MLP.
# source: https://github.com/lucidrains/egnn-pytorch/commit/878dd8e47754edb50658d79f2a8e1d412448dc26
import torch
from torch import nn, broadcast_tensors

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
    def __init__(self, dim, m_dim=8, num_nearest_neighbors=0, valid_radius=float("inf")):
        super().__init__()
        edge_input_dim = (dim * 2) + 1
        self.edge_mlp = nn.Sequential(nn.Linear(edge_input_dim, edge_input_dim * 2), nn.SiLU(),
                                      nn.Linear(edge_input_dim * 2, m_dim), nn.SiLU())
        self.node_mlp = nn.Sequential(nn.Linear(dim + m_dim, dim * 2), nn.SiLU(), nn.Linear(dim * 2, dim))
        self.coors_mlp = nn.Sequential(nn.Linear(m_dim, m_dim * 4), nn.SiLU(), nn.Linear(m_dim * 4, 1))
        self.num_nearest_neighbors = num_nearest_neighbors
        self.valid_radius = valid_radius

    def forward(self, feats, coors, mask=None, adj_mat=None):
        b, n, d = feats.shape
        num_nearest, valid_radius = self.num_nearest_neighbors, self.valid_radius
        use_nearest = num_nearest > 0
        rel_coors = coors.unsqueeze(2) - coors.unsqueeze(1)
        rel_dist = (rel_coors ** 2).sum(dim=-1, keepdim=True)
        if use_nearest:
            ranking = rel_dist[..., 0]
            if exists(mask):
                rank_mask = mask[:, None, :] * mask[:, None, :]
                ranking.masked_fill_(~rank_mask, 1e5)  # <-- IPL002: ranking is a view of rel_dist, which is read again below
            if exists(adj_mat):
                if len(adj_mat.shape) == 2:
                    adj_mat = adj_mat.clone().unsqueeze(0).expand(b, n, n)
                self_mask = torch.eye(n, dtype=torch.bool).unsqueeze(0)
                adj_mat = adj_mat.masked_fill(self_mask, False)
                ranking.masked_fill_(self_mask, -1.)  # <-- IPL002: writes -1 into rel_dist through the ranking view
                ranking.masked_fill_(adj_mat, 0.)  # <-- IPL002: writes 0 into rel_dist through the ranking view
            nbhd_ranking, nbhd_indices = ranking.topk(num_nearest, dim=-1, largest=False)
            nbhd_mask = nbhd_ranking <= valid_radius
            rel_coors = batched_index_select(rel_coors, nbhd_indices, dim=2)
            rel_dist = batched_index_select(rel_dist, nbhd_indices, dim=2)
            feats_j = batched_index_select(feats, nbhd_indices, dim=1)
        else:
            feats_j = feats.unsqueeze(1)
        feats_i = feats.unsqueeze(2)
        feats_i, feats_j = broadcast_tensors(feats_i, feats_j)
        edge_input = torch.cat((feats_i, feats_j, rel_dist), dim=-1)
        m_ij = self.edge_mlp(edge_input)
        if exists(mask):
            mask_i = mask.unsqueeze(-1)
            mask_j = batched_index_select(mask, nbhd_indices, dim=1) if use_nearest else mask.unsqueeze(1)
            mask = (mask_i * mask_j) & nbhd_mask if use_nearest else mask_i * mask_j
        coor_weights = self.coors_mlp(m_ij).squeeze(-1)
        if exists(mask):
            coor_weights.masked_fill_(~mask, 0.)
        coors_out = torch.einsum("bij,bijc->bic", coor_weights, rel_coors) + coors
        if exists(mask):
            m_ij = m_ij.masked_fill(~mask.unsqueeze(-1), 0.)
        m_i = m_ij.sum(dim=-2)
        node_out = self.node_mlp(torch.cat((feats, m_i), dim=-1)) + feats
        return node_out, coors_out


layer = EGNN(dim=4, num_nearest_neighbors=3)
feats = torch.randn(1, 5, 4)
coors = torch.randn(1, 5, 3, requires_grad=True)
mask = torch.tensor([[True, True, True, True, False]])
adj_mat = torch.tensor([[0, 1, 0, 0, 1], [1, 0, 1, 0, 0], [0, 1, 0, 1, 0], [0, 0, 1, 0, 1], [1, 0, 0, 1, 0]]).bool()
feats_out, coors_out = layer(feats, coors, mask=mask, adj_mat=adj_mat)
loss = feats_out.sum() + coors_out.pow(2).sum()
loss.backward()
