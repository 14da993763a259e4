# label: hazard raises
# why: x is the output of F.relu (ReluBackward0 saves its result), and the multipole upward pass writes a node slice of x in place with x[a:b] = conv(...), so relu's saved output is at a newer version when backward runs.
# source: https://github.com/neuraloperator/graph-pde/issues/6
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class DenseNet(nn.Module):
    def __init__(self, layers, nonlinearity):
        super(DenseNet, self).__init__()
        self.layers = nn.ModuleList()
        for j in range(len(layers) - 1):
            self.layers.append(nn.Linear(layers[j], layers[j + 1]))
        self.nonlinearity = nonlinearity()

    def forward(self, x):
        for j, l in enumerate(self.layers):
            x = l(x)
            if j != len(self.layers) - 1:
                x = self.nonlinearity(x)
        return x


class NNConv(nn.Module):
    """Edge-conditioned convolution with mean aggregation (reduced torch_geometric.nn.NNConv)."""

    def __init__(self, in_channels, out_channels, nn_kernel, root_weight=False):
        super(NNConv, self).__init__()
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.nn = nn_kernel
        self.root = nn.Linear(in_channels, out_channels, bias=False) if root_weight else None

    def forward(self, x, edge_index, edge_attr):
        src, dst = edge_index
        weight = self.nn(edge_attr).view(-1, self.in_channels, self.out_channels)
        msg = torch.bmm(x[src].unsqueeze(1), weight).squeeze(1)
        out = torch.zeros(x.size(0), self.out_channels).index_add(0, dst, msg)
        deg = torch.zeros(x.size(0)).index_add(0, dst, torch.ones(dst.size(0))).clamp(min=1)
        out = out / deg.unsqueeze(-1)
        if self.root is not None:
            out = out + self.root(x)
        return out


class MKGN(nn.Module):
    def __init__(self, width, ker_width, depth, ker_in, points, level, in_width=1):
        super(MKGN, self).__init__()
        self.depth = depth
        self.level = level
        self.points = [0]
        index = 0
        for point in points:
            index = index + point
            self.points.append(index)
        self.fc_in = nn.Linear(in_width, width)
        self.conv_down_list = nn.ModuleList(
            [NNConv(width, width, DenseNet([ker_in, ker_width, width ** 2], nn.ReLU)) for _ in range(1, level)])
        self.conv_list = nn.ModuleList(
            [NNConv(width, width, DenseNet([ker_in, ker_width, width ** 2], nn.ReLU), root_weight=True) for _ in range(level)])
        self.conv_up_list = nn.ModuleList(
            [NNConv(width, width, DenseNet([ker_in, ker_width, width ** 2], nn.ReLU)) for _ in range(1, level)])
        self.fc_out1 = nn.Linear(width, ker_width)
        self.fc_out2 = nn.Linear(ker_width, 1)

    def forward(self, data):
        x = self.fc_in(data["x"])
        for t in range(self.depth):
            # downward
            for l in range(self.level - 1):
                e_idx, e_attr = data["edge_index_down"][l], data["edge_attr_down"][l]
                x = x + self.conv_down_list[l](x, e_idx, e_attr)
                x = F.relu(x)
            # upward
            for l in reversed(range(self.level)):
                e_idx, e_attr = data["edge_index_mid"][l], data["edge_attr_mid"][l]
                x[self.points[l]:self.points[l + 1]] = self.conv_list[l](x[self.points[l]:self.points[l + 1]].clone(), e_idx, e_attr)  # <-- IPL001
                if l > 0:
                    e_idx, e_attr = data["edge_index_up"][l - 1], data["edge_attr_up"][l - 1]
                    x = x + self.conv_up_list[l - 1](x, e_idx, e_attr)
                    x = F.relu(x)
        x = F.relu(self.fc_out1(x[:self.points[1]]))
        return self.fc_out2(x)


def random_edges(n_src, n_dst, n_edges, ker_in, offset_dst=0):
    src = torch.randint(0, n_src, (n_edges,))
    dst = torch.randint(0, n_dst, (n_edges,)) + offset_dst
    return torch.stack([src, dst]), torch.randn(n_edges, ker_in)


def main():
    m = [8, 4]
    ker_in = 6
    n = sum(m)
    data = {"x": torch.randn(n, 6)}
    data["edge_index_down"], data["edge_attr_down"] = zip(random_edges(n, n, 20, ker_in))
    mid = [random_edges(m[0], m[0], 12, ker_in), random_edges(m[1], m[1], 6, ker_in)]
    data["edge_index_mid"] = [e for e, _ in mid]
    data["edge_attr_mid"] = [a for _, a in mid]
    data["edge_index_up"], data["edge_attr_up"] = zip(random_edges(n, n, 20, ker_in))
    y = torch.randn(m[0], 1)

    model = MKGN(width=4, ker_width=8, depth=2, ker_in=ker_in, points=m, level=2, in_width=6)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
    optimizer.zero_grad()
    out = model(data)
    l2 = torch.norm(out.view(-1) - y.view(-1)) / torch.norm(y.view(-1))
    l2.backward()
    grads = [p.grad.clone() for p in model.parameters()]
    optimizer.step()
    return l2.detach(), grads


loss, grads = main()
