# label: hazard raises
# why: the learned adjacency is the ReLU output of E E^T, saved by ReluBackward; the two fill_diagonal_ calls rewrite it in place (version 2 vs expected 0), so backward fails
# source: https://github.com/tamps2gcnets/TAMP_S2GCNets/issues/1 (file TAMP_S2GCNets_model/PeMSD3/TAMPGCN.py @ f35e7968cbbc88b2b58edeadec4bc380579853bb)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class TAMPSTGCN(nn.Module):
    def __init__(self, dim_in, dim_out, link_len, embed_dim):
        super().__init__()
        self.link_len = link_len
        self.weights_pool = nn.Parameter(torch.randn(embed_dim, link_len, dim_in, dim_out) * 0.1)
        self.bias_pool = nn.Parameter(torch.zeros(embed_dim, dim_out))

    def forward(self, x, node_embeddings, stay_cost):
        # S1: Laplacian construction
        node_num = node_embeddings.shape[0]
        initial_S = F.relu(torch.mm(node_embeddings, node_embeddings.transpose(0, 1)))  # (N, N)
        initial_S.fill_diagonal_(0)  # <-- IPL001: ReLU output saved for backward is modified in place
        initial_S.fill_diagonal_(stay_cost)  # <-- IPL001: ReLU output saved for backward is modified in place
        S = F.softmax(initial_S, dim=1)
        S = S / torch.sum(S, dim=1)
        support_set = [torch.eye(node_num), S]
        # S2: Laplacian link
        for k in range(2, self.link_len):
            support_set.append(torch.mm(S, support_set[k - 1]))
        supports = torch.stack(support_set, dim=0)
        # S4: spatial graph convolution
        weights = torch.einsum("nd,dkio->nkio", node_embeddings, self.weights_pool)
        bias = torch.matmul(node_embeddings, self.bias_pool)
        x_s = torch.einsum("knm,bmc->bknc", supports, x).permute(0, 2, 1, 3)
        x_sconv = torch.einsum("bnki,nkio->bno", x_s, weights)
        return x_sconv + bias


class TAMPGCNET(nn.Module):
    def __init__(self, num_nodes, dim_in=2, dim_out=4, embed_dim=3, horizon=2):
        super().__init__()
        self.node_embeddings = nn.Parameter(torch.randn(num_nodes, embed_dim))
        self.gcn = TAMPSTGCN(dim_in, dim_out, link_len=3, embed_dim=embed_dim)
        self.end_conv = nn.Linear(dim_out, horizon)

    def forward(self, x):
        h = self.gcn(x, self.node_embeddings, stay_cost=0.1)
        return self.end_conv(torch.relu(h))


model = TAMPGCNET(num_nodes=5)
x = torch.randn(2, 5, 2)
target = torch.randn(2, 5, 2)
loss = F.l1_loss(model(x), target)
loss.backward()
