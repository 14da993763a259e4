# label: hazard raises
# why: h.relu_() rewrites the tanh output that TanhBackward saved for the backward pass
import torch
import torch.nn as nn

torch.manual_seed(0)


class TinyCell(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.ih = nn.Linear(dim, dim)
        self.hh = nn.Linear(dim, dim, bias=False)

    def forward(self, x, h):
        h = torch.tanh(self.ih(x) + self.hh(h))
        h.relu_()  # <-- IPL001
        return h


cell = TinyCell(6)
xs = torch.randn(3, 2, 6)
state = torch.zeros(2, 6)
for step in range(xs.shape[0]):
    state = cell(xs[step], state)
loss = state.sum()
loss.backward()
