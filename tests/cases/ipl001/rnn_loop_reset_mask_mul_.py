# label: hazard raises
# why: in iteration t the reset mask is applied in place to h, the tanh output saved in iteration t-1 (and saved as input of wh)
import torch
import torch.nn as nn

torch.manual_seed(0)


class ResetRNN(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.wx = nn.Linear(dim, dim)
        self.wh = nn.Linear(dim, dim, bias=False)

    def forward(self, xs, keep):
        h = torch.zeros(xs.shape[1], xs.shape[2])
        for t in range(xs.shape[0]):
            h.mul_(keep[t])  # <-- IPL001
            h = torch.tanh(self.wx(xs[t]) + self.wh(h))
        return h


rnn = ResetRNN(4)
xs = torch.randn(4, 2, 4)
keep = (torch.rand(4, 2, 1) > 0.3).float()
h_last = rnn(xs, keep)
loss = h_last.sum()
loss.backward()
