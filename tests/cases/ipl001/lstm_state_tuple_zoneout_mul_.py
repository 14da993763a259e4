# label: hazard raises
# why: c is unpacked from the state tuple and decayed in place, but in the previous step the cell's LayerNorm saved that very cell state
import torch
import torch.nn as nn

torch.manual_seed(0)


class LayerNormLSTMCell(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.gates = nn.Linear(2 * dim, 4 * dim)
        self.ln_c = nn.LayerNorm(dim)

    def forward(self, x, state):
        h, c = state
        i, f, g, o = self.gates(torch.cat([x, h], -1)).chunk(4, -1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        h = torch.sigmoid(o) * torch.tanh(self.ln_c(c))
        return h, c


cell = LayerNormLSTMCell(3)
xs = torch.randn(3, 2, 3)
state = (torch.zeros(2, 3), torch.zeros(2, 3))
for t in range(xs.shape[0]):
    h, c = state
    c.mul_(0.9)  # <-- IPL001
    state = cell(xs[t], (h, c))
loss = state[0].sum()
loss.backward()
