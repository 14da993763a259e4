# label: safe
# why: GraphMAE's in-place writes hit a clone of the input features, the bias-free encoder_to_decoder output (mm does not save its result) and the rsub result raised with pow_, none of which a backward formula needs afterwards.
# source: https://github.com/THUDM/GraphMAE/issues/21
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def sce_loss(x, y, alpha=3):
    x = F.normalize(x, p=2, dim=-1)
    y = F.normalize(y, p=2, dim=-1)
    loss = (1 - (x * y).sum(dim=-1)).pow_(alpha)
    loss = loss.mean()
    return loss


class GCNLayer(nn.Module):
    def __init__(self, in_dim, out_dim, activation=True):
        super().__init__()
        self.fc = nn.Linear(in_dim, out_dim)
        self.activation = activation

    def forward(self, adj, x):
        h = adj @ self.fc(x)
        return F.prelu(h, torch.tensor([0.25])) if self.activation else h


class PreModel(nn.Module):
    def __init__(self, in_dim, num_hidden, mask_rate=0.5):
        super().__init__()
        self._mask_rate = mask_rate
        self.encoder = GCNLayer(in_dim, num_hidden)
        self.decoder = GCNLayer(num_hidden, in_dim, activation=False)
        self.enc_mask_token = nn.Parameter(torch.zeros(1, in_dim))
        self.encoder_to_decoder = nn.Linear(num_hidden, num_hidden, bias=False)
        self.criterion = sce_loss

    def encoding_mask_noise(self, adj, x, mask_rate=0.3):
        num_nodes = x.shape[0]
        perm = torch.randperm(num_nodes, device=x.device)
        num_mask_nodes = int(mask_rate * num_nodes)
        mask_nodes = perm[:num_mask_nodes]
        keep_nodes = perm[num_mask_nodes:]
        out_x = x.clone()
        token_nodes = mask_nodes
        out_x[mask_nodes] = 0.0
        out_x[token_nodes] += self.enc_mask_token
        return adj, out_x, (mask_nodes, keep_nodes)

    def mask_attr_prediction(self, adj, x):
        use_adj, use_x, (mask_nodes, keep_nodes) = self.encoding_mask_noise(adj, x, self._mask_rate)
        enc_rep = self.encoder(use_adj, use_x)
        # ---- attribute reconstruction ----
        rep = self.encoder_to_decoder(enc_rep)
        # re-mask
        rep[mask_nodes] = 0
        recon = self.decoder(use_adj, rep)
        x_init = x[mask_nodes]
        x_rec = recon[mask_nodes]
        return self.criterion(x_rec, x_init)


num_nodes = 8
adj = (torch.rand(num_nodes, num_nodes) > 0.6).float() + torch.eye(num_nodes)
adj = adj / adj.sum(1, keepdim=True)
feats = torch.randn(num_nodes, 5)
model = PreModel(in_dim=5, num_hidden=6)
loss = model.mask_attr_prediction(adj, feats)
loss.backward()
