# label: safe
# why: DeletionLayer overwrites the masked rows of the GCN output in place, but that output is only consumed afterwards (nothing saved it), and the parameter hooks that mask the deletion-weight gradients with grad.mul_ act on the fresh gradient of a leaf that nothing else reads
# source: https://github.com/mims-harvard/GNNDelete/blob/0e3a5cef11236b91bdb12a7ac9c7d2d01be5492d/framework/models/deletion.py (with freeze_unused_weights from framework/trainer/)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class GCNConv(nn.Module):
    # dense stand-in for torch_geometric's GCNConv: D^-1/2 (A + I) D^-1/2 X W + b
    def __init__(self, in_dim, out_dim):
        super().__init__()
        self.lin = nn.Linear(in_dim, out_dim, bias=False)
        self.bias = nn.Parameter(torch.zeros(out_dim))

    def forward(self, x, edge_index):
        n = x.size(0)
        adj = torch.eye(n)
        adj[edge_index[0], edge_index[1]] = 1.0
        deg = adj.sum(1)
        norm = deg.pow(-0.5)
        adj = norm.view(-1, 1) * adj * norm.view(1, -1)
        return adj @ self.lin(x) + self.bias


class GCN(nn.Module):
    def __init__(self, args):
        super().__init__()
        self.conv1 = GCNConv(args['in_dim'], args['hidden_dim'])
        self.conv2 = GCNConv(args['hidden_dim'], args['out_dim'])

    def decode(self, z, pos_edge_index, neg_edge_index=None):
        if neg_edge_index is not None:
            edge_index = torch.cat([pos_edge_index, neg_edge_index], dim=-1)
        else:
            edge_index = pos_edge_index
        logits = (z[edge_index[0]] * z[edge_index[1]]).sum(dim=-1)
        return logits


class DeletionLayer(nn.Module):
    def __init__(self, dim, mask):
        super().__init__()
        self.dim = dim
        self.mask = mask
        self.deletion_weight = nn.Parameter(torch.ones(dim, dim) / 1000)

    def forward(self, x, mask=None):
        '''Only apply deletion operator to the local nodes identified by mask'''

        if mask is None:
            mask = self.mask

        if mask is not None:
            x[mask] = torch.matmul(x[mask], self.deletion_weight)

        return x


class GCNDelete(GCN):
    def __init__(self, args, mask_1hop=None, mask_2hop=None, **kwargs):
        super().__init__(args)
        self.deletion1 = DeletionLayer(args['hidden_dim'], mask_1hop)
        self.deletion2 = DeletionLayer(args['out_dim'], mask_2hop)

        self.conv1.requires_grad = False
        self.conv2.requires_grad = False

    def forward(self, x, edge_index, mask_1hop=None, mask_2hop=None):
        with torch.no_grad():
            x = self.conv1(x, edge_index)

        x = self.deletion1(x, mask_1hop)

        x = F.relu(x)

        x = self.conv2(x, edge_index)
        x = self.deletion2(x, mask_2hop)

        return x


def freeze_unused_weights(model, mask):
    grad_mask = torch.zeros_like(mask)
    grad_mask[mask] = 1

    model.deletion1.deletion_weight.register_hook(lambda grad: grad.mul_(grad_mask))
    model.deletion2.deletion_weight.register_hook(lambda grad: grad.mul_(grad_mask))


num_nodes, dim = 7, 4
args = {'in_dim': 5, 'hidden_dim': dim, 'out_dim': dim}
x = torch.randn(num_nodes, 5)
train_pos_edge_index = torch.tensor([[0, 1, 2, 3, 4, 5], [1, 2, 3, 4, 5, 6]])
df_mask = torch.tensor([False, True, False, False, True, False])
sdf_node_1hop_mask = torch.tensor([False, True, True, False, True, True, False])
sdf_node_2hop_mask = torch.tensor([True, True, True, True, True, True, False])

model = GCNDelete(args, mask_1hop=sdf_node_1hop_mask, mask_2hop=sdf_node_2hop_mask)
for p in list(model.conv1.parameters()) + list(model.conv2.parameters()):
    p.requires_grad = False
freeze_unused_weights(model, torch.eye(dim, dtype=torch.bool) | torch.rand(dim, dim).gt(0.5))
optimizer = torch.optim.Adam([model.deletion1.deletion_weight, model.deletion2.deletion_weight], lr=0.01)
loss_fct = nn.MSELoss()

with torch.no_grad():
    h = F.relu(model.conv1(x, train_pos_edge_index))
    z_ori = model.conv2(h, train_pos_edge_index)
    logits_ori = z_ori @ z_ori.t()

sdf_all_pair_without_df_mask = torch.zeros(num_nodes, num_nodes, dtype=torch.bool)
sdf_all_pair_without_df_mask[2, 0] = True
sdf_all_pair_without_df_mask[5, 3] = True

for epoch in range(2):
    model.train()
    z = model(x, train_pos_edge_index[:, ~df_mask])

    neg_edge_index = torch.tensor([[0, 6], [3, 2]])
    neg_size = int(df_mask.sum())
    df_logits = model.decode(z, train_pos_edge_index[:, df_mask], neg_edge_index)
    loss_e = loss_fct(df_logits[:neg_size], df_logits[neg_size:])

    logits_sdf = (z @ z.t())[sdf_all_pair_without_df_mask].sigmoid()
    loss_l = loss_fct(logits_sdf, logits_ori[sdf_all_pair_without_df_mask].sigmoid())

    alpha = 0.5
    loss = alpha * loss_e + (1 - alpha) * loss_l
    loss.backward()
    last_grad_1 = model.deletion1.deletion_weight.grad.clone()
    last_grad_2 = model.deletion2.deletion_weight.grad.clone()
    optimizer.step()
    optimizer.zero_grad()

deletion_weight_1 = model.deletion1.deletion_weight.detach().clone()
deletion_weight_2 = model.deletion2.deletion_weight.detach().clone()
