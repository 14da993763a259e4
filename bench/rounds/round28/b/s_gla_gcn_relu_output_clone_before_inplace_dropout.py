# label: safe
# why: the fix from the issue returns self.relu(x).clone() from TCN_GCN_unit, so nn.Dropout(inplace=True) overwrites a private copy and the output saved by ReluBackward stays intact.
# source: https://github.com/bruceyo/GLA-GCN/issues/5
import math

import torch
import torch.nn as nn

torch.manual_seed(0)


def edge2mat(link, num_node):
    A = torch.zeros(num_node, num_node)
    for i, j in link:
        A[j, i] = 1
    return A


def normalize_digraph(A):
    Dl = A.sum(0)
    Dn = torch.diag(torch.where(Dl > 0, Dl.reciprocal(), torch.zeros_like(Dl)))
    return A @ Dn


class Graph:
    def __init__(self, num_node=5):
        self_link = [(i, i) for i in range(num_node)]
        inward = [(1, 0), (2, 1), (3, 0), (4, 3)]
        outward = [(j, i) for (i, j) in inward]
        I = edge2mat(self_link, num_node)
        self.A = torch.stack((I, normalize_digraph(edge2mat(inward, num_node)),
                              normalize_digraph(edge2mat(outward, num_node))))


class unit_tcn(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size=3, stride=1):
        super().__init__()
        pad = (kernel_size - 1) // 2
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size=(kernel_size, 1),
                              padding=(pad, 0), stride=(stride, 1))
        self.bn = nn.BatchNorm2d(out_channels)

    def forward(self, x):
        return self.bn(self.conv(x))


class unit_gcn(nn.Module):
    def __init__(self, in_channels, out_channels, A, num_subset=3):
        super().__init__()
        self.PA = nn.Parameter(torch.full_like(A, 1e-6))
        self.A = A
        self.num_subset = num_subset
        self.conv_d = nn.ModuleList(nn.Conv2d(in_channels, out_channels, 1) for _ in range(num_subset))
        self.down = (lambda x: x) if in_channels == out_channels else nn.Conv2d(in_channels, out_channels, 1)
        self.bn = nn.BatchNorm2d(out_channels)
        self.relu = nn.ReLU()

    def forward(self, x):
        N, C, T, V = x.size()
        A = self.A + self.PA
        y = None
        for i in range(self.num_subset):
            A2 = x.reshape(N, C * T, V)
            z = self.conv_d[i](torch.matmul(A2, A[i]).view(N, C, T, V))
            y = z + y if y is not None else z
        y = self.bn(y)
        y = y + self.down(x)
        return self.relu(y)


class TCN_GCN_unit(nn.Module):
    def __init__(self, in_channels, out_channels, A, stride=1, residual=True):
        super().__init__()
        self.gcn1 = unit_gcn(in_channels, out_channels, A)
        self.tcn1 = unit_tcn(out_channels, out_channels, stride=stride)
        self.relu = nn.ReLU()
        if not residual:
            self.residual = lambda x: 0
        elif in_channels == out_channels and stride == 1:
            self.residual = lambda x: x
        else:
            self.residual = unit_tcn(in_channels, out_channels, kernel_size=1, stride=stride)

    def forward(self, x):
        x = self.tcn1(self.gcn1(x)) + self.residual(x)
        return self.relu(x).clone()


class S_AGCN(nn.Module):
    def __init__(self, filter_widths=(3, 3), channels=8, dropout=0.25):
        super().__init__()
        A = Graph().A
        self.filter_widths = filter_widths
        self.drop = nn.Dropout(dropout, inplace=True)
        self.expand_gcn = TCN_GCN_unit(2, channels, A)
        layers_tcngcn = []
        for fw in filter_widths:
            layers_tcngcn.append(TCN_GCN_unit(channels, channels, A))
            layers_tcngcn.append(TCN_GCN_unit(channels, channels, A, stride=fw, residual=False))
        self.layers_tcngcn = nn.ModuleList(layers_tcngcn)
        self.fc = nn.Conv1d(channels, 3, 1)

    def _forward_blocks(self, x):
        x = self.expand_gcn(x)
        for i, fw in enumerate(self.filter_widths):
            res = x[:, :, fw // 2::fw, :]
            x = self.drop(self.layers_tcngcn[2 * i](x))
            x = self.drop(self.layers_tcngcn[2 * i + 1](x))
            x = res + x
        N, C, T, V = x.shape
        pose_3d = torch.zeros(N, 3, V)
        for v in range(V):
            pose_joint_3d = self.fc(x[:, :, :, v].mean(2).view(N, -1, 1))
            pose_3d[:, :, v] = pose_joint_3d.view(N, -1)
        return pose_3d


def main():
    model = S_AGCN()
    model.train()
    inputs_2d = torch.randn(2, 2, 9, 5)
    inputs_3d = torch.randn(2, 3, 5)
    predicted_3d_pos = model._forward_blocks(inputs_2d)
    loss_3d_pos = (predicted_3d_pos - inputs_3d).norm(dim=1).mean()
    loss_3d_pos.backward()
    return loss_3d_pos, model.fc.weight.grad


loss, grad = main()
