# label: hazard raises
# why: with JK='sum' the GIN model calls unsqueeze_ on every layer's node representations, but the hidden layers' outputs are ReLU results that ReluBackward saved for backward, so the in-place reshape bumps their version and loss.backward() fails.
# source: https://github.com/awslabs/dgl-lifesci/commit/6516166ea5ebf4f14ddab6b35126ae27cd3b9784 (pre-fix python/dgllife/model/gnn/gin.py, GIN.forward JK 'max'/'sum')
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Graph:
    def __init__(self, src, dst, num_nodes):
        self.src = src
        self.dst = dst
        self.num_nodes = num_nodes

    def update_all_u_add_e_sum(self, node_feats, edge_feats):
        # g.update_all(fn.u_add_e('feat', 'feat', 'm'), fn.sum('m', 'feat'))
        m = node_feats[self.src] + edge_feats
        return torch.zeros(self.num_nodes, node_feats.shape[1]).index_add(0, self.dst, m)


class GINLayer(nn.Module):
    def __init__(self, num_edge_emb_list, emb_dim, batch_norm=True, activation=None):
        super(GINLayer, self).__init__()
        self.mlp = nn.Sequential(
            nn.Linear(emb_dim, 2 * emb_dim),
            nn.ReLU(),
            nn.Linear(2 * emb_dim, emb_dim)
        )
        self.edge_embeddings = nn.ModuleList()
        for num_emb in num_edge_emb_list:
            self.edge_embeddings.append(nn.Embedding(num_emb, emb_dim))
        self.bn = nn.BatchNorm1d(emb_dim) if batch_norm else None
        self.activation = activation

    def forward(self, g, node_feats, categorical_edge_feats):
        edge_embeds = []
        for i, feats in enumerate(categorical_edge_feats):
            edge_embeds.append(self.edge_embeddings[i](feats))
        edge_embeds = torch.stack(edge_embeds, dim=0).sum(0)
        feat = g.update_all_u_add_e_sum(node_feats, edge_embeds)
        node_feats = self.mlp(feat)
        if self.bn is not None:
            node_feats = self.bn(node_feats)
        if self.activation is not None:
            node_feats = self.activation(node_feats)
        return node_feats


class GIN(nn.Module):
    def __init__(self, num_node_emb_list, num_edge_emb_list, num_layers=5, emb_dim=300, JK='last', dropout=0.5):
        super(GIN, self).__init__()
        self.num_layers = num_layers
        self.JK = JK
        self.dropout = nn.Dropout(dropout)
        self.node_embeddings = nn.ModuleList()
        for num_emb in num_node_emb_list:
            self.node_embeddings.append(nn.Embedding(num_emb, emb_dim))
        self.gnn_layers = nn.ModuleList()
        for layer in range(num_layers):
            if layer == num_layers - 1:
                self.gnn_layers.append(GINLayer(num_edge_emb_list, emb_dim))
            else:
                self.gnn_layers.append(GINLayer(num_edge_emb_list, emb_dim, activation=F.relu))

    def forward(self, g, categorical_node_feats, categorical_edge_feats):
        node_embeds = []
        for i, feats in enumerate(categorical_node_feats):
            node_embeds.append(self.node_embeddings[i](feats))
        node_embeds = torch.stack(node_embeds, dim=0).sum(0)

        all_layer_node_feats = [node_embeds]
        for layer in range(self.num_layers):
            node_feats = self.gnn_layers[layer](g, all_layer_node_feats[layer], categorical_edge_feats)
            node_feats = self.dropout(node_feats)
            all_layer_node_feats.append(node_feats)

        if self.JK == 'concat':
            final_node_feats = torch.cat(all_layer_node_feats, dim=1)
        elif self.JK == 'last':
            final_node_feats = all_layer_node_feats[-1]
        elif self.JK == 'max':
            all_layer_node_feats = [h.unsqueeze_(0) for h in all_layer_node_feats]  # <-- IPL001
            final_node_feats = torch.max(torch.cat(all_layer_node_feats, dim=0), dim=0)[0]
        elif self.JK == 'sum':
            all_layer_node_feats = [h.unsqueeze_(0) for h in all_layer_node_feats]  # <-- IPL001
            final_node_feats = torch.sum(torch.cat(all_layer_node_feats, dim=0), dim=0)
        else:
            return ValueError("Expect self.JK to be 'concat', 'last', 'max' or 'sum', got {}".format(self.JK))
        return final_node_feats


def main():
    g = Graph(src=torch.tensor([0, 1, 1, 2, 2, 3, 3, 4]), dst=torch.tensor([1, 0, 2, 1, 3, 2, 4, 3]), num_nodes=5)
    model = GIN(num_node_emb_list=[6, 3], num_edge_emb_list=[4, 3], num_layers=3, emb_dim=8, JK='sum', dropout=0.0)
    readout = nn.Linear(8, 1)
    atom_feats = [torch.tensor([0, 1, 2, 3, 4]), torch.tensor([0, 1, 0, 2, 1])]
    bond_feats = [torch.tensor([0, 0, 1, 1, 2, 2, 3, 3]), torch.tensor([0, 1, 0, 1, 2, 2, 1, 0])]
    node_feats = model(g, atom_feats, bond_feats)
    pred = readout(node_feats.sum(0, keepdim=True))
    loss = F.mse_loss(pred, torch.tensor([[1.5]]))
    loss.backward()
    return loss.detach(), model.node_embeddings[0].weight.grad


loss, node_emb_grad = main()
