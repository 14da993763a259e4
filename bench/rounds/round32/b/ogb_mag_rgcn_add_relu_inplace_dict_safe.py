# label: safe no-twin
# why: the OGB MAG R-GCN example accumulates relation messages with `out_dict[key[2]].add_(out)` into the root Linear outputs and applies `F.relu_(x)` to each node type before dropout; Linear and in-place add save no output, so the in-place ReLU overwrites nothing autograd needs and node classification trains (the later `F.relu` rewrite was cleanup). (no-twin: `F.dropout(x, ...)` deliberately reads the ReLU-ed `x`, so an out-of-place rewrite would change the model.)
# source: https://github.com/snap-stanford/ogb/commit/62340383456ab8ce9b7b6645d9a8a5f1574d17ab
import copy

import torch
import torch.nn.functional as F
from torch.nn import Parameter, ModuleDict, ModuleList, Linear, ParameterDict

torch.manual_seed(0)


class RGCNConv(torch.nn.Module):
    def __init__(self, in_channels, out_channels, node_types, edge_types):
        super(RGCNConv, self).__init__()

        self.in_channels = in_channels
        self.out_channels = out_channels

        self.node_types = node_types
        self.edge_types = edge_types

        # `ModuleDict` does not allow tuples :(
        self.rel_lins = ModuleDict({
            f'{key[0]}_{key[1]}_{key[2]}': Linear(in_channels, out_channels, bias=False)
            for key in edge_types
        })

        self.root_lins = ModuleDict({
            key: Linear(in_channels, out_channels, bias=True)
            for key in node_types
        })

    def forward(self, x_dict, adj_t_dict):
        out_dict = {}
        for key in self.node_types:
            out_dict[key] = self.root_lins[key](x_dict[key])

        for key in self.edge_types:
            key_str = f'{key[0]}_{key[1]}_{key[2]}'
            x = x_dict[key[0]]
            adj_t = adj_t_dict[key]
            # mean aggregation over incoming edges (row-normalised dense adjacency)
            out = self.rel_lins[key_str](adj_t @ x)
            out_dict[key[2]].add_(out)

        return out_dict


class RGCN(torch.nn.Module):
    def __init__(self, in_channels, hidden_channels, out_channels, num_layers,
                 dropout, num_nodes_dict, x_types, edge_types, out_type):
        super(RGCN, self).__init__()

        self.out_type = out_type

        node_types = list(num_nodes_dict.keys())

        self.embs = ParameterDict({
            key: Parameter(torch.Tensor(num_nodes_dict[key], hidden_channels))
            for key in sorted(set(node_types).difference(set(x_types)))
        })

        self.lins = ModuleDict(
            {key: Linear(in_channels, hidden_channels)
             for key in x_types})

        self.convs = ModuleList()
        for _ in range(num_layers - 1):
            self.convs.append(
                RGCNConv(hidden_channels, hidden_channels, node_types, edge_types))

        # We only need to consider output node types in the last layer.
        edge_types = [keys for keys in edge_types if keys[2] == out_type]

        self.convs.append(
            RGCNConv(hidden_channels, out_channels, [out_type], edge_types))

        self.dropout = dropout

        self.reset_parameters()

    def reset_parameters(self):
        for emb in self.embs.values():
            torch.nn.init.xavier_uniform_(emb)

    def forward(self, x_dict, adj_t_dict):
        x_dict = copy.copy(x_dict)

        for key, x in x_dict.items():
            x_dict[key] = self.lins[key](x)

        for key, emb in self.embs.items():
            x_dict[key] = emb

        for conv in self.convs[:-1]:
            x_dict = conv(x_dict, adj_t_dict)
            for key, x in x_dict.items():
                x_dict[key] = F.relu_(x)
                x_dict[key] = F.dropout(x, p=self.dropout, training=self.training)
        out = self.convs[-1](x_dict, adj_t_dict)[self.out_type]
        return out.log_softmax(dim=-1)


def train(model, x_dict, adj_t_dict, y_true, train_idx, optimizer):
    model.train()

    optimizer.zero_grad()
    out = model(x_dict, adj_t_dict)
    loss = F.nll_loss(out[train_idx], y_true[train_idx].squeeze())
    loss.backward()
    optimizer.step()

    return loss.detach()


def row_normalised(dst_n, src_n, p=0.3):
    adj = (torch.rand(dst_n, src_n) < p).float()
    deg = adj.sum(-1, keepdim=True).clamp(min=1)
    return adj / deg


def main():
    num_nodes_dict = {'paper': 12, 'author': 8, 'field_of_study': 5}
    edge_types = [
        ('author', 'writes', 'paper'),
        ('paper', 'cites', 'paper'),
        ('paper', 'has_topic', 'field_of_study'),
        ('paper', 'rev_writes', 'author'),
    ]
    adj_t_dict = {key: row_normalised(num_nodes_dict[key[2]], num_nodes_dict[key[0]]) for key in edge_types}
    x_dict = {'paper': torch.randn(12, 7)}
    y_true = torch.randint(0, 3, (12, 1))
    train_idx = torch.arange(8)

    model = RGCN(7, 16, 3, num_layers=3, dropout=0.5, num_nodes_dict=num_nodes_dict,
                 x_types=['paper'], edge_types=edge_types, out_type='paper')
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    losses = torch.stack([train(model, x_dict, adj_t_dict, y_true, train_idx, optimizer) for _ in range(3)])
    return losses, model.embs['author'].detach().clone()


losses, author_emb = main()
