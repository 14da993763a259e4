# label: safe
# why: messages are scatter-added into a fresh zeros buffer and the degree clamp/division is done in place on tensors nothing has saved
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class MeanConv(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.lin_self = nn.Linear(d_in, d_out)
        self.lin_nbr = nn.Linear(d_in, d_out)

    def forward(self, x, edge_index):
        src, dst = edge_index
        msg = self.lin_nbr(x)[src]
        agg = torch.zeros(x.shape[0], msg.shape[1])
        agg.index_add_(0, dst, msg)
        deg = torch.zeros(x.shape[0]).index_add_(0, dst, torch.ones(dst.shape[0]))
        deg.clamp_(min=1.0)
        agg /= deg[:, None]
        out = self.lin_self(x) + agg
        return F.relu(out, inplace=True)


x = torch.randn(5, 4)
edges = torch.tensor([[0, 1, 1, 2, 3, 4], [1, 0, 2, 3, 4, 3]])
conv1, conv2 = MeanConv(4, 6), MeanConv(6, 2)
h = conv2(conv1(x, edges), edges)
loss = h.logsumexp(-1).mean()
loss.backward()
nbr_grad = conv1.lin_nbr.weight.grad
