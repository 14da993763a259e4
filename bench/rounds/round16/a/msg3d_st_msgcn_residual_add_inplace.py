# label: hazard raises
# why: ST_MSGCN adds the residual with `out += res` onto the MLP output, which is the output of a ReLU that ReLU's backward still needs.
# source: https://github.com/open-mmlab/mmaction2/commit/bc90644705513813b322643b5dc8fb58d22174f1
import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)


def k_adjacency(A, k, with_self=False, self_factor=1):
    I = np.eye(len(A), dtype=A.dtype)
    if k == 0:
        return I
    Ak = np.minimum(np.linalg.matrix_power(A + I, k), 1) - np.minimum(np.linalg.matrix_power(A + I, k - 1), 1)
    if with_self:
        Ak += (self_factor * I)
    return Ak


def normalize_digraph(A, dim=0):
    Dl = np.sum(A, dim)
    h, w = A.shape
    Dn = np.zeros((w, w))
    for i in range(w):
        if Dl[i] > 0:
            Dn[i, i] = Dl[i] ** (-1)
    return np.dot(A, Dn)


def build_activation_layer(act_cfg):
    return nn.ReLU()


class MLP(nn.Module):

    def __init__(self, in_channels, out_channels, act_cfg=dict(type='ReLU'), dropout=0):
        super().__init__()
        channels = [in_channels] + out_channels
        self.layers = nn.ModuleList()
        for i in range(1, len(channels)):
            if dropout > 1e-3:
                self.layers.append(nn.Dropout(p=dropout))
            self.layers.append(nn.Conv2d(channels[i - 1], channels[i], kernel_size=1))
            self.layers.append(nn.BatchNorm2d(channels[i]))
            if act_cfg:
                self.layers.append(build_activation_layer(act_cfg))

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


class ST_MSGCN(nn.Module):

    def __init__(self, in_channels, out_channels, A, num_scales, window_size, residual=False, dropout=0,
                 act_cfg=dict(type='ReLU')):
        super().__init__()
        self.num_scales = num_scales
        self.window_size = window_size
        A = self.build_st_graph(A, window_size)

        A_scales = [k_adjacency(A, k, with_self=True) for k in range(num_scales)]
        A_scales = np.stack([normalize_digraph(g) for g in A_scales])

        self.register_buffer('A', torch.Tensor(A_scales))
        self.V = len(A)

        self.PA = nn.Parameter(self.A.clone())
        nn.init.uniform_(self.PA, -1e-6, 1e-6)

        self.mlp = MLP(in_channels * num_scales, [out_channels], dropout=dropout, act_cfg=act_cfg)

        # Residual connection
        if not residual:
            self.residual = lambda x: 0
        elif (in_channels == out_channels):
            self.residual = lambda x: x
        else:
            self.residual = MLP(in_channels, [out_channels], act_cfg=None)

        self.act = build_activation_layer(act_cfg)

    def build_st_graph(self, A, window_size):
        if not isinstance(A, np.ndarray):
            A = A.data.cpu().numpy()
        assert len(A.shape) == 2 and A.shape[0] == A.shape[1]
        V = len(A)
        A_with_I = A + np.eye(V, dtype=A.dtype)
        A_large = np.tile(A_with_I, (window_size, window_size)).copy()
        return A_large

    def forward(self, x):
        N, C, T, V = x.shape
        A = self.A + self.PA

        # Perform Graph Convolution
        res = self.residual(x)
        agg = torch.einsum('kvu,nctv->nkctu', A, x)
        agg = agg.reshape(N, self.num_scales * C, T, V)
        out = self.mlp(agg)
        out += res  # <-- IPL001: in-place add on the ReLU output saved for backward
        return self.act(out)


num_node = 5
edges = [(0, 1), (1, 2), (2, 3), (3, 4)]
A = np.zeros((num_node, num_node), dtype=np.float32)
for i, j in edges:
    A[i, j] = A[j, i] = 1

window_size = 3
gcn3d = ST_MSGCN(in_channels=4, out_channels=6, A=A, num_scales=2, window_size=window_size, residual=True)
skeleton_windows = torch.randn(2, 4, 4, num_node * window_size)
out = gcn3d(skeleton_windows)
loss = out.mean()
loss.backward()
