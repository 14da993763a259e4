# label: hazard silent
# why: GNNLayer.update/edge_update do x += ... and edge_attr += ... on the tensors the caller passed in, and T4c22GNN kept node_emb_pre_gnn/edge_emb_pre_gnn as aliases of those same tensors, so the final skip connection adds the post-GNN embeddings instead of the pre-GNN ones.
# source: https://github.com/dmgirdyuk/NeurIPS2022-traffic4cast/blob/main/t4c22/core/models/baselines.py
from typing import Tuple

import torch
from torch import Tensor, nn

torch.manual_seed(0)


class MessagePassing(nn.Module):
    """Minimal torch_geometric.nn.MessagePassing: sum aggregation, x_i/x_j lifting, edge_updater."""

    def __init__(self, node_dim=-2, aggr="sum"):
        super().__init__()
        self.node_dim = node_dim
        self.aggr = aggr

    def propagate(self, edge_index, x, edge_attr):
        src, dst = edge_index
        x_j = torch.index_select(x, 0, src)
        x_i = torch.index_select(x, 0, dst)
        msg = self.message(x_i=x_i, x_j=x_j, edge_attr=edge_attr)
        out = torch.zeros(x.size(0), msg.size(-1)).index_add(0, dst, msg)
        return self.update(out, x=x)

    def edge_updater(self, edge_index, x, edge_attr):
        src, dst = edge_index
        x_j = torch.index_select(x, 0, src)
        x_i = torch.index_select(x, 0, dst)
        return self.edge_update(x_i=x_i, x_j=x_j, edge_attr=edge_attr)


class GNNLayer(MessagePassing):  # noqa
    def __init__(self, in_features: int, out_features: int, dropout: float = 0.0):
        super().__init__(node_dim=-2, aggr="sum")
        self.message_net = nn.Sequential(
            nn.Linear(3 * in_features, out_features), nn.LayerNorm(out_features), nn.Dropout(p=dropout), nn.GELU())
        self.node_update_net = nn.Sequential(
            nn.Linear(2 * in_features, out_features), nn.LayerNorm(out_features), nn.Dropout(p=dropout), nn.GELU())
        self.edge_update_net = nn.Sequential(
            nn.Linear(3 * in_features, out_features), nn.LayerNorm(out_features), nn.Dropout(p=dropout), nn.GELU())

    def forward(self, x: Tensor, edge_index: Tensor, edge_attr: Tensor) -> Tuple[Tensor, Tensor]:
        x = self.propagate(edge_index, x=x, edge_attr=edge_attr)
        edge_attr = self.edge_updater(edge_index, x=x, edge_attr=edge_attr)
        return x, edge_attr

    def message(self, x_i: Tensor, x_j: Tensor, edge_attr: Tensor) -> Tensor:  # noqa
        message = self.message_net(torch.cat((x_i, x_j, edge_attr), dim=-1))
        return message

    def update(self, message: Tensor, x: Tensor) -> Tensor:  # noqa
        x += self.node_update_net(torch.cat((x, message), dim=-1))  # <-- IPL004
        return x

    def edge_update(self, x_i: Tensor, x_j: Tensor, edge_attr: Tensor) -> Tensor:  # noqa
        edge_attr += self.edge_update_net(torch.cat((edge_attr, x_i, x_j), dim=-1))  # <-- IPL004
        return edge_attr


class T4c22GNN(torch.nn.Module):
    def __init__(self, in_node_features, in_edge_features, hidden_features_gnn, hidden_final, out_features,
                 gnn_layer_num=3, dropout=0.0):
        super().__init__()
        self.node_emb_mlp = nn.Sequential(
            nn.Linear(in_node_features, hidden_features_gnn), nn.BatchNorm1d(hidden_features_gnn), nn.GELU())
        self.edge_emb_numer_mlp = nn.Sequential(
            nn.Linear(in_edge_features, hidden_features_gnn), nn.BatchNorm1d(hidden_features_gnn), nn.GELU())
        self.node_gnn_layers = torch.nn.ModuleList(
            modules=[GNNLayer(hidden_features_gnn, hidden_features_gnn) for _ in range(gnn_layer_num)])
        self.final_aggregation_layer = nn.Sequential(
            nn.Linear(3 * hidden_features_gnn, hidden_final), nn.BatchNorm1d(hidden_final), nn.GELU(),
            nn.Linear(hidden_final, out_features))

    def forward(self, data) -> Tensor:
        edge_index: Tensor = data["edge_index"]
        node_emb = self.node_emb_mlp(data["x"])
        edge_emb = self.edge_emb_numer_mlp(data["edge_attr"])
        node_emb_pre_gnn, edge_emb_pre_gnn = node_emb, edge_emb

        for i, layer in enumerate(self.node_gnn_layers):
            node_emb, edge_emb = layer(x=node_emb, edge_index=edge_index, edge_attr=edge_emb)

        node_emb += node_emb_pre_gnn
        edge_emb += edge_emb_pre_gnn

        node_emb_i = torch.index_select(node_emb, 0, data["edge_index"][0])
        node_emb_j = torch.index_select(node_emb, 0, data["edge_index"][1])
        general_emb = torch.cat((node_emb_i, node_emb_j, edge_emb), dim=-1)
        return self.final_aggregation_layer(general_emb)


def main():
    num_nodes, num_edges = 10, 24
    data = {"x": torch.randn(num_nodes, 4), "edge_index": torch.randint(0, num_nodes, (2, num_edges)),
            "edge_attr": torch.randn(num_edges, 3)}
    y = torch.randint(0, 3, (num_edges,))
    model = T4c22GNN(4, 3, hidden_features_gnn=8, hidden_final=8, out_features=3)
    out = model(data)
    loss = nn.functional.cross_entropy(out, y)
    loss.backward()
    grads = [p.grad.clone() for p in model.parameters()]
    return out.detach(), loss.detach(), grads


out, loss, grads = main()
