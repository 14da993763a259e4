# label: safe
# why: masked_fill_ hits the freshly computed hidden state (an add output nothing saved) at the end of each step, before the next step reads it.
import torch
import torch.nn as nn

torch.manual_seed(0)


class GRULoop(nn.Module):
    def __init__(self, inp, hid):
        super().__init__()
        self.cell = nn.GRUCell(inp, hid)
        self.z = nn.Linear(inp, hid)
        self.hid = hid

    def forward(self, xs, done):
        h = torch.zeros(xs.shape[1], self.hid)
        outs = []
        for t in range(xs.shape[0]):
            n = self.cell(xs[t], h)
            z = torch.sigmoid(self.z(xs[t]))
            h = (1 - z) * n + z * h
            outs.append(torch.tanh(h))
            h.masked_fill_(done[t].unsqueeze(-1), 0.0)
        return torch.stack(outs)


rnn = GRULoop(3, 4)
xs = torch.randn(5, 2, 3)
done = torch.rand(5, 2) > 0.6
out = rnn(xs, done)
out.pow(2).sum().backward()
