# label: hazard raises
# why: GCNLayer adds the residual into the ReLU output with +=, but F.relu saved that output for its backward
# source: https://github.com/Veason-silverbullet/NNR/issues/3
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class GCNLayer(nn.Module):
    def __init__(self, in_dim, out_dim, residual=False, layer_norm=False):
        super(GCNLayer, self).__init__()
        self.residual = residual
        self.layer_norm = layer_norm
        if self.residual and in_dim != out_dim:
            raise Exception('To facilitate residual connection, in_dim must equal to out_dim')
        self.W = nn.Linear(in_features=in_dim, out_features=out_dim, bias=True)
        if self.layer_norm:
            self.layer_normalization = nn.LayerNorm(normalized_shape=[out_dim])

    def forward(self, feature, graph):
        out = self.W(torch.bmm(graph, feature))  # [batch_size, node_num, feature_num]
        if self.layer_norm:
            out = self.layer_normalization(out)
        out = F.relu(out)
        if self.residual:
            out += feature  # <-- IPL001: in-place add into the ReLU output that ReluBackward saved
        return out


class GCN(nn.Module):
    def __init__(self, in_dim, out_dim, hidden_dim=0, num_layers=1, dropout=0.1, residual=False, layer_norm=False):
        super(GCN, self).__init__()
        self.num_layers = num_layers
        self.gcn_layers = []
        if self.num_layers == 1:
            self.gcn_layers.append(GCNLayer(in_dim, out_dim, residual=residual, layer_norm=layer_norm))
        else:
            self.dropout = nn.Dropout(dropout, inplace=True)
            self.gcn_layers.append(GCNLayer(in_dim, hidden_dim, residual=residual, layer_norm=layer_norm))
            for i in range(1, self.num_layers - 1):
                self.gcn_layers.append(GCNLayer(hidden_dim, hidden_dim, residual=residual, layer_norm=layer_norm))
            self.gcn_layers.append(GCNLayer(hidden_dim, out_dim, residual=residual, layer_norm=layer_norm))
        self.gcn_layers = nn.ModuleList(self.gcn_layers)

    def forward(self, feature, graph):
        out = feature
        for i in range(self.num_layers - 1):
            out = self.dropout(self.gcn_layers[i](out, graph))
        out = self.gcn_layers[self.num_layers - 1](out, graph)
        return out


class UserEncoder(nn.Module):
    def __init__(self, news_dim=8):
        super().__init__()
        self.gcn = GCN(news_dim, news_dim, hidden_dim=news_dim, num_layers=2, dropout=0.0, residual=True)
        self.affine = nn.Linear(news_dim, 1)

    def forward(self, news_representation, graph):
        h = self.gcn(news_representation, graph)
        return self.affine(h).squeeze(-1).mean(-1)


encoder = UserEncoder()
news = torch.randn(2, 5, 8)
graph = torch.softmax(torch.randn(2, 5, 5), dim=-1)
logits = encoder(news, graph)
loss = F.binary_cross_entropy_with_logits(logits, torch.tensor([1.0, 0.0]))
loss.backward()
