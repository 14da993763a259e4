# label: safe
# why: with the project default activation="softplus" the shortcut hidden += conv_input adds in place into the softplus output, but softplus saves only its input for backward (and the last conv output comes straight from a Linear), so nothing saved is overwritten.
# source: https://github.com/DeepGraphLearning/ConfGF/issues/6
from typing import Callable

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class SumReadout(nn.Module):
    """Sum readout operator over graphs with variadic sizes."""

    def forward(self, data, input):
        output = torch.zeros(data["num_graphs"], input.size(-1)).index_add(0, data["batch"], input)
        return output


class MultiLayerPerceptron(nn.Module):
    def __init__(self, input_dim, hidden_dims, activation="relu", dropout=0):
        super(MultiLayerPerceptron, self).__init__()
        self.dims = [input_dim] + hidden_dims
        if isinstance(activation, str):
            self.activation = getattr(F, activation)
        else:
            self.activation = None
        self.layers = nn.ModuleList()
        for i in range(len(self.dims) - 1):
            self.layers.append(nn.Linear(self.dims[i], self.dims[i + 1]))

    def forward(self, input):
        x = input
        for i, layer in enumerate(self.layers):
            x = layer(x)
            if i < len(self.layers) - 1:
                if self.activation:
                    x = self.activation(x)
        return x


class GINEConv(nn.Module):
    def __init__(self, nn: Callable, eps: float = 0., train_eps: bool = False, activation="softplus"):
        super(GINEConv, self).__init__()
        self.nn = nn
        if isinstance(activation, str):
            self.activation = getattr(F, activation)
        else:
            self.activation = None
        self.register_buffer('eps', torch.Tensor([eps]))

    def propagate(self, edge_index, x, edge_attr):
        src, dst = edge_index
        msg = self.message(x[0][src], edge_attr)
        return torch.zeros(x[1].size(0), msg.size(-1)).index_add(0, dst, msg)

    def forward(self, x, edge_index, edge_attr=None):
        if isinstance(x, torch.Tensor):
            x = (x, x)
        out = self.propagate(edge_index, x=x, edge_attr=edge_attr)
        x_r = x[1]
        if x_r is not None:
            out += (1 + self.eps) * x_r
        return self.nn(out)

    def message(self, x_j, edge_attr):
        if self.activation:
            return self.activation(x_j + edge_attr)
        else:
            return x_j + edge_attr


class GraphIsomorphismNetwork(torch.nn.Module):
    def __init__(self, hidden_dim, num_convs=3, activation="softplus", readout="sum", short_cut=False,
                 concat_hidden=False):
        super(GraphIsomorphismNetwork, self).__init__()
        self.hidden_dim = hidden_dim
        self.num_convs = num_convs
        self.short_cut = short_cut
        self.concat_hidden = concat_hidden
        if isinstance(activation, str):
            self.activation = getattr(F, activation)
        else:
            self.activation = None
        self.convs = nn.ModuleList()
        for i in range(self.num_convs):
            self.convs.append(GINEConv(MultiLayerPerceptron(hidden_dim, [hidden_dim, hidden_dim],
                                                            activation=activation), activation=activation))
        self.readout = SumReadout()

    def forward(self, data, node_attr, edge_attr):
        hiddens = []
        conv_input = node_attr  # (num_node, hidden)
        for conv_idx, conv in enumerate(self.convs):
            hidden = conv(conv_input, data["edge_index"], edge_attr)
            if conv_idx < len(self.convs) - 1 and self.activation is not None:
                hidden = self.activation(hidden)
            assert hidden.shape == conv_input.shape
            if self.short_cut and hidden.shape == conv_input.shape:
                hidden += conv_input
            hiddens.append(hidden)
            conv_input = hidden
        if self.concat_hidden:
            node_feature = torch.cat(hiddens, dim=-1)
        else:
            node_feature = hiddens[-1]
        graph_feature = self.readout(data, node_feature)
        return {"graph_feature": graph_feature, "node_feature": node_feature}


def main():
    hidden_dim, num_nodes, num_edges = 8, 12, 30
    node_emb = nn.Embedding(10, hidden_dim)
    edge_emb = nn.Embedding(4, hidden_dim)
    data = {"atom_type": torch.randint(0, 10, (num_nodes,)), "edge_type": torch.randint(0, 4, (num_edges,)),
            "edge_index": torch.randint(0, num_nodes, (2, num_edges)),
            "batch": torch.tensor([0] * 6 + [1] * 6), "num_graphs": 2}
    model = GraphIsomorphismNetwork(hidden_dim, num_convs=3, activation="softplus", short_cut=True, concat_hidden=True)
    out = model(data, node_emb(data["atom_type"]), edge_emb(data["edge_type"]))
    loss = out["graph_feature"].pow(2).mean()
    loss.backward()
    return loss.detach(), [p.grad.clone() for p in model.parameters()]


loss, grads = main()
