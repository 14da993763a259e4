# label: hazard raises no-twin
# why: the node/edge embeddings are computed once outside the training loop, so retain_graph=True keeps their graph alive across epochs while optimizer.step() updates the embedding weights in place, and the next backward reaches them at a newer version.
# source: https://github.com/dmlc/dgl/issues/4285
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class GraphTransformerLayer(nn.Module):
    def __init__(self, dim, num_heads=2):
        super().__init__()
        self.num_heads = num_heads
        self.Q = nn.Linear(dim, dim)
        self.K = nn.Linear(dim, dim)
        self.V = nn.Linear(dim, dim)
        self.proj_e = nn.Linear(dim, dim)
        self.O_h = nn.Linear(dim, dim)

    def forward(self, src, dst, h, e):
        n, d = h.shape
        Q_h = self.Q(h).view(n, self.num_heads, -1)
        K_h = self.K(h).view(n, self.num_heads, -1)
        V_h = self.V(h).view(n, self.num_heads, -1)
        proj_e = self.proj_e(e).view(-1, self.num_heads, d // self.num_heads)
        score = (K_h[src] * Q_h[dst] * proj_e).sum(-1, keepdim=True) / (d // self.num_heads) ** 0.5
        score = torch.exp(score.clamp(-5, 5))
        wV = torch.zeros_like(V_h).index_add(0, dst, V_h[src] * score)
        z = torch.zeros(n, self.num_heads, 1).index_add(0, dst, score)
        h_out = (wV / (z + 1e-6)).view(n, d)
        return h + F.relu(self.O_h(h_out))


class GraphTransformerNet(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.layers = nn.ModuleList([GraphTransformerLayer(dim) for _ in range(2)])
        self.MLP_layer = nn.Linear(dim, 1)

    def forward(self, src, dst, h, e, lp_pe):
        h = h + lp_pe
        for conv in self.layers:
            h = conv(src, dst, h, e)
        return self.MLP_layer(h)


num_nodes, dim = 6, 8
src = torch.tensor([0, 1, 2, 3, 4, 5, 0, 2])
dst = torch.tensor([1, 2, 3, 4, 5, 0, 3, 5])
embedding_h = nn.Sequential(nn.Linear(3, dim), nn.ReLU(), nn.Linear(dim, dim))
embedding_e = nn.Sequential(nn.Linear(2, dim), nn.ReLU(), nn.Linear(dim, dim))
embedding_lap_pos_enc = nn.Linear(4, dim)
model = GraphTransformerNet(dim)
params = list(model.parameters()) + list(embedding_h.parameters()) + list(embedding_e.parameters()) + list(embedding_lap_pos_enc.parameters())
optimizer = torch.optim.Adam(params, lr=1e-3)

h = embedding_h(torch.randn(num_nodes, 3))
e = embedding_e(torch.randn(src.numel(), 2))
node_label = torch.randn(num_nodes, 1)
criteria = nn.MSELoss()
for n in range(3):
    lp_pe = embedding_lap_pos_enc(torch.randn(num_nodes, 4))
    out = model(src, dst, h, e, lp_pe)
    loss = criteria(node_label, out)
    optimizer.zero_grad()
    loss.backward(retain_graph=True)
    optimizer.step()  # <-- IPL001: updates embedding_h/embedding_e weights saved by the graph of h and e, reused next epoch
