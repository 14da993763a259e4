# label: hazard raises
# why: with add_self_loops=False gcn_norm returns `mul_(adj_t, ...)` applied to the caller's own adjacency, so conv2 rescales in place the very adj_t that conv1's propagation matmul saved for backward (and the caller's graph is silently renormalized on every call).
# source: https://github.com/pyg-team/pytorch_geometric/commit/5d28811a5cbd73eda15eeb050ca0b46bb34b99dd
import torch
from torch import Tensor
from torch.nn import Parameter

torch.manual_seed(0)


# dense stand-ins for the torch_sparse helpers used by gcn_norm
def fill_diag(adj_t, fill_value):
    return adj_t + fill_value * torch.eye(adj_t.size(0))


def sum(adj_t, dim):
    return adj_t.sum(dim=dim)


def mul_(adj_t, other):
    return adj_t.mul_(other)


def matmul(adj_t, x):
    return adj_t @ x


def gcn_norm(adj_t, improved=False, add_self_loops=True):
    fill_value = 2. if improved else 1.
    if add_self_loops:
        adj_t = fill_diag(adj_t, fill_value)
    deg = sum(adj_t, dim=1)
    deg_inv_sqrt = deg.pow_(-0.5)
    deg_inv_sqrt.masked_fill_(deg_inv_sqrt == float('inf'), 0.)
    adj_t = mul_(adj_t, deg_inv_sqrt.view(-1, 1))  # <-- IPL004, IPL001
    adj_t = mul_(adj_t, deg_inv_sqrt.view(1, -1))
    return adj_t


class GCNConv(torch.nn.Module):
    def __init__(self, in_channels: int, out_channels: int, add_self_loops: bool = True):
        super().__init__()
        self.add_self_loops = add_self_loops
        self.weight = Parameter(torch.randn(in_channels, out_channels) * 0.3)
        self.bias = Parameter(torch.zeros(out_channels))

    def forward(self, x: Tensor, adj_t: Tensor) -> Tensor:
        adj_t = gcn_norm(adj_t, add_self_loops=self.add_self_loops)
        x = x @ self.weight
        out = matmul(adj_t, x)
        return out + self.bias


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = GCNConv(8, 16, add_self_loops=False)
        self.conv2 = GCNConv(16, 4, add_self_loops=False)

    def forward(self, x, adj_t):
        x = torch.relu(self.conv1(x, adj_t))
        return self.conv2(x, adj_t)


def main():
    num_nodes = 10
    adj = (torch.rand(num_nodes, num_nodes) < 0.3).float()
    adj_t = ((adj + adj.t()) > 0).float() + torch.eye(num_nodes)
    x = torch.randn(num_nodes, 8)
    y = torch.randint(0, 4, (num_nodes,))
    model = Net()
    out = model(x, adj_t)
    loss = torch.nn.functional.cross_entropy(out, y)
    loss.backward()
    return loss.detach(), model.conv1.weight.grad, adj_t


loss, conv1_grad, adj_after = main()
