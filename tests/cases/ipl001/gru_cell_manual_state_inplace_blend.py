# label: hazard raises
# why: the candidate state n is blended in place with mul_/add_, but tanh saved n for its backward.
import torch
import torch.nn as nn


class ManualGRUCell(nn.Module):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.hidden_size = hidden_size
        self.x2h = nn.Linear(input_size, 3 * hidden_size)
        self.h2h = nn.Linear(hidden_size, 3 * hidden_size)

    def forward(self, x, h):
        gx = self.x2h(x)
        gh = self.h2h(h)
        rx, zx, nx = gx.chunk(3, dim=1)
        rh, zh, nh = gh.chunk(3, dim=1)
        r = torch.sigmoid(rx + rh)
        z = torch.sigmoid(zx + zh)
        n = torch.tanh(nx + r * nh)
        # h' = (1 - z) * n + z * h, computed without extra buffers
        n.mul_(1 - z).add_(z * h)  # <-- IPL001
        return n


class GRUEncoder(nn.Module):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.cell = ManualGRUCell(input_size, hidden_size)
        self.hidden_size = hidden_size

    def forward(self, seq):
        h = seq.new_zeros(seq.shape[1], self.hidden_size)
        for t in range(seq.shape[0]):
            h = self.cell(seq[t], h)
        return h


torch.manual_seed(0)
encoder = GRUEncoder(input_size=4, hidden_size=6)
seq = torch.randn(3, 2, 4)
out = encoder(seq)
loss = out.sum()
loss.backward()
