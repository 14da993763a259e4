# label: safe
# why: the new cell state c is the output of an add (not saved) and tanh saves its own output, so clamping c in place right after it is used is fine; next step reads the clamped c.
import torch
import torch.nn as nn

torch.manual_seed(0)


class ClippedLSTMCell(nn.Module):
    def __init__(self, inp, hid, clip=0.5):
        super().__init__()
        self.ih = nn.Linear(inp, 4 * hid)
        self.hh = nn.Linear(hid, 4 * hid, bias=False)
        self.clip = clip

    def forward(self, x, state):
        h, c = state
        i, f, g, o = (self.ih(x) + self.hh(h)).chunk(4, dim=-1)
        i, f, o = torch.sigmoid(i), torch.sigmoid(f), torch.sigmoid(o)
        g = torch.tanh(g)
        c = f * c + i * g
        h = o * torch.tanh(c)
        c.clamp_(-self.clip, self.clip)
        return h, c


cell = ClippedLSTMCell(3, 5)
xs = torch.randn(4, 2, 3)
state = (torch.zeros(2, 5), torch.zeros(2, 5))
hs = []
for t in range(xs.shape[0]):
    state = cell(xs[t], state)
    hs.append(state[0])
out = torch.stack(hs)
out.sum().backward()
