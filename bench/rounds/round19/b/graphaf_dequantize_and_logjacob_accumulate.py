# label: safe
# why: the dequantization noise is added in place to fresh clones of the inputs, and x_log_jacob += ... only updates the output of log() (log saves its input), so no saved tensor is overwritten
# source: https://github.com/divelab/DIG/blob/9092c1bc38759ee4b52d6cb5ccdb58f5b464377b/dig/ggraph/method/GraphAF/model/graphflow.py
import math

import torch
import torch.nn as nn

torch.manual_seed(0)


class STNet(nn.Module):
    def __init__(self, in_dim, out_dim):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(in_dim, 8), nn.Tanh(), nn.Linear(8, 2 * out_dim))

    def forward(self, h):
        s, t = self.net(h).chunk(2, dim=-1)
        return torch.sigmoid(s) + 0.5, t


class MaskedGraphAF(nn.Module):
    def __init__(self, num_node_type=3, num_edge_type=2, num_flow_layer=2, st_type="exp"):
        super().__init__()
        self.num_node_type = num_node_type
        self.num_edge_type = num_edge_type
        self.num_flow_layer = num_flow_layer
        self.st_type = st_type
        self.emb = nn.Linear(num_node_type, 6)
        self.node_st_net = nn.ModuleList([STNet(6, num_node_type) for _ in range(num_flow_layer)])
        self.edge_st_net = nn.ModuleList([STNet(12, num_edge_type) for _ in range(num_flow_layer)])

    def _graph_emb(self, x, adj):
        h = torch.tanh(self.emb(x))  # (B, N, 6)
        h = h + torch.einsum("bkij,bjd->bid", adj, h) / adj.shape[1]
        graph_emb_node = h.reshape(-1, h.shape[-1])
        n = h.shape[1]
        pairs = torch.cat([h.unsqueeze(2).expand(-1, -1, n, -1), h.unsqueeze(1).expand(-1, n, -1, -1)], dim=-1)
        iu = torch.triu_indices(n, n, offset=1)
        graph_node_emb_edge = pairs[:, iu[0], iu[1]].reshape(-1, 12)
        return graph_emb_node, graph_node_emb_edge

    def forward(self, x, adj, x_deq, adj_deq):
        batch_size = x.size(0)
        graph_emb_node, graph_node_emb_edge = self._graph_emb(x, adj)
        x_deq = x_deq.view(-1, self.num_node_type)
        adj_deq = adj_deq.view(-1, self.num_edge_type)

        for i in range(self.num_flow_layer):
            node_s, node_t = self.node_st_net[i](graph_emb_node)
            if self.st_type == "exp":
                node_s = node_s.exp()
                x_deq = (x_deq + node_t) * node_s
            else:
                x_deq = x_deq * node_s + node_t
            if i == 0:
                x_log_jacob = (torch.abs(node_s) + 1e-20).log()
            else:
                x_log_jacob += (torch.abs(node_s) + 1e-20).log()

            edge_s, edge_t = self.edge_st_net[i](graph_node_emb_edge)
            if self.st_type == "exp":
                edge_s = edge_s.exp()
                adj_deq = (adj_deq + edge_t) * edge_s
            else:
                adj_deq = adj_deq * edge_s + edge_t
            if i == 0:
                adj_log_jacob = (torch.abs(edge_s) + 1e-20).log()
            else:
                adj_log_jacob += (torch.abs(edge_s) + 1e-20).log()

        x_deq = x_deq.view(batch_size, -1)
        adj_deq = adj_deq.view(batch_size, -1)
        x_log_jacob = x_log_jacob.view(batch_size, -1).sum(-1)
        adj_log_jacob = adj_log_jacob.view(batch_size, -1).sum(-1)
        return [x_deq, adj_deq], [x_log_jacob, adj_log_jacob]


class GraphFlowModel(nn.Module):
    def __init__(self, max_size=4, node_dim=3, bond_dim=2, deq_coeff=0.9):
        super().__init__()
        self.deq_coeff = deq_coeff
        self.latent_node_length = max_size * node_dim
        self.latent_edge_length = (max_size * (max_size - 1) // 2) * bond_dim
        self.flow_core_edge_masks = torch.triu(torch.ones(max_size, max_size, dtype=torch.bool), diagonal=1)
        self.constant_pi = nn.Parameter(torch.Tensor([math.pi]), requires_grad=False)
        self.prior_ln_var = nn.Parameter(torch.zeros(1), requires_grad=False)
        self.flow_core = MaskedGraphAF(node_dim, bond_dim)

    def forward(self, inp_node_features, inp_adj_features):
        inp_node_features_cont = inp_node_features.clone()
        inp_adj_features_cont = inp_adj_features[:, :, self.flow_core_edge_masks].clone()
        inp_adj_features_cont = inp_adj_features_cont.permute(0, 2, 1).contiguous()

        inp_node_features_cont += self.deq_coeff * torch.rand(inp_node_features_cont.size())
        inp_adj_features_cont += self.deq_coeff * torch.rand(inp_adj_features_cont.size())
        z, logdet = self.flow_core(inp_node_features, inp_adj_features, inp_node_features_cont, inp_adj_features_cont)
        return z, logdet

    def log_prob(self, z, logdet):
        logdet[0] = logdet[0] - self.latent_node_length
        logdet[1] = logdet[1] - self.latent_edge_length
        ll_node = -1 / 2 * (torch.log(2 * self.constant_pi) + self.prior_ln_var + torch.exp(-self.prior_ln_var) * (z[0] ** 2))
        ll_node = ll_node.sum(-1)
        ll_edge = -1 / 2 * (torch.log(2 * self.constant_pi) + self.prior_ln_var + torch.exp(-self.prior_ln_var) * (z[1] ** 2))
        ll_edge = ll_edge.sum(-1)
        ll_node += logdet[0]
        ll_edge += logdet[1]
        return -(torch.mean(ll_node + ll_edge) / (self.latent_edge_length + self.latent_node_length))


model = GraphFlowModel()
node_features = torch.nn.functional.one_hot(torch.randint(0, 3, (2, 4)), 3).float()
adj_features = (torch.rand(2, 2, 4, 4) > 0.6).float()
z, logdet = model(node_features, adj_features)
loss = model.log_prob(z, logdet)
loss.backward()
