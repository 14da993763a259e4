# label: safe
# why: the reusable neighbour buffer is rewritten in place each message pass, but aggregate_message only ever sees a clone of it, so the tensors saved by the previous pass are never overwritten.
# source: https://github.com/edvardlindelof/graph-neural-networks-for-drug-discovery/blob/f2ba3fb713defe76feed65ece9ce0e1029c6e684/gnn/aggregation_mpnn.py
import torch
from torch import nn

torch.manual_seed(0)


class AggregationMPNN(nn.Module):
    def __init__(self, node_features, edge_features, message_size, message_passes, out_features):
        super(AggregationMPNN, self).__init__()
        self.node_features = node_features
        self.edge_features = edge_features
        self.message_size = message_size
        self.message_passes = message_passes
        self.out_features = out_features

    def aggregate_message(self, nodes, node_neighbours, edges, mask):
        raise NotImplementedError

    def update(self, nodes, messages):
        raise NotImplementedError

    def readout(self, hidden_nodes, input_nodes, node_mask):
        raise NotImplementedError

    def forward(self, adjacency, nodes, edges):
        edge_batch_batch_indices, edge_batch_node_indices, edge_batch_neighbour_indices = adjacency.nonzero().unbind(-1)
        node_batch_batch_indices, node_batch_node_indices = adjacency.sum(-1).nonzero().unbind(-1)
        node_batch_adj = adjacency[node_batch_batch_indices, node_batch_node_indices, :]

        node_batch_size = node_batch_batch_indices.shape[0]
        node_degrees = node_batch_adj.sum(-1).long()
        max_node_degree = node_degrees.max()
        node_batch_node_neighbours = torch.zeros(node_batch_size, max_node_degree, self.node_features)
        node_batch_edges = torch.zeros(node_batch_size, max_node_degree, self.edge_features)
        node_batch_neighbour_neighbour_indices = torch.cat([torch.arange(i) for i in node_degrees])
        edge_batch_node_batch_indices = torch.cat(
            [i * torch.ones(degree) for i, degree in enumerate(node_degrees)]
        ).long()
        node_batch_node_neighbour_mask = torch.zeros(node_batch_size, max_node_degree)
        node_batch_node_neighbour_mask[edge_batch_node_batch_indices, node_batch_neighbour_neighbour_indices] = 1
        node_batch_edges[edge_batch_node_batch_indices, node_batch_neighbour_neighbour_indices, :] = \
            edges[edge_batch_batch_indices, edge_batch_node_indices, edge_batch_neighbour_indices, :]

        hidden_nodes = nodes.clone()

        for i in range(self.message_passes):
            node_batch_nodes = hidden_nodes[node_batch_batch_indices, node_batch_node_indices, :]
            node_batch_node_neighbours[edge_batch_node_batch_indices, node_batch_neighbour_neighbour_indices, :] = \
                hidden_nodes[edge_batch_batch_indices, edge_batch_neighbour_indices, :]

            messages = self.aggregate_message(
                node_batch_nodes, node_batch_node_neighbours.clone(), node_batch_edges, node_batch_node_neighbour_mask
            )
            hidden_nodes[node_batch_batch_indices, node_batch_node_indices, :] = self.update(node_batch_nodes, messages)

        node_mask = (adjacency.sum(-1) != 0)
        output = self.readout(hidden_nodes, nodes, node_mask)
        return output


class AttentionENNS2V(AggregationMPNN):
    def __init__(self, node_features, edge_features, message_size, message_passes, out_features):
        super(AttentionENNS2V, self).__init__(node_features, edge_features, message_size, message_passes, out_features)
        self.enn = nn.Linear(edge_features, node_features * message_size, bias=False)
        self.att_enn = nn.Linear(node_features + edge_features, message_size, bias=False)
        self.gru = nn.GRUCell(input_size=message_size, hidden_size=node_features, bias=False)
        self.out_nn = nn.Linear(node_features, out_features, bias=False)

    def aggregate_message(self, nodes, node_neighbours, edges, mask):
        BIG_NEGATIVE = -1e6
        max_node_degree = node_neighbours.shape[1]
        enn_output = self.enn(edges)
        matrices = enn_output.view(-1, max_node_degree, self.message_size, self.node_features)
        message_terms = torch.matmul(matrices, node_neighbours.unsqueeze(-1)).squeeze(-1)
        att_enn_output = self.att_enn(torch.cat([edges, node_neighbours], dim=2))
        energies = att_enn_output.view(-1, max_node_degree, self.message_size)
        energy_mask = (1 - mask).float() * BIG_NEGATIVE
        weights = torch.softmax(energies + energy_mask.unsqueeze(-1), dim=1)
        return (weights * message_terms).sum(1)

    def update(self, nodes, messages):
        return self.gru(messages, nodes)

    def readout(self, hidden_nodes, input_nodes, node_mask):
        graph_embeddings = (hidden_nodes * node_mask.unsqueeze(-1)).sum(1)
        return self.out_nn(graph_embeddings)


def main():
    model = AttentionENNS2V(node_features=5, edge_features=3, message_size=4, message_passes=3, out_features=1)
    adjacency = torch.tensor([[[0, 1, 1], [1, 0, 0], [1, 0, 0]],
                              [[0, 1, 0], [1, 0, 1], [0, 1, 0]]]).float()
    nodes = torch.randn(2, 3, 5, requires_grad=True)
    edges = torch.randn(2, 3, 3, 3)
    target = torch.randn(2, 1)
    output = model(adjacency, nodes, edges)
    loss = ((output - target) ** 2).mean()
    loss.backward()
    return loss.detach(), nodes.grad, model.gru.weight_hh.grad


loss, nodes_grad, gru_grad = main()
