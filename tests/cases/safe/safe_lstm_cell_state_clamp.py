# label: safe
# why: the cell state is an add output (nothing saved) and is clamped in place before tanh or the next step's multiply read it; the hidden mask is applied out of place.
import torch
import torch.nn as nn

torch.manual_seed(0)


class ClippedLSTM(nn.Module):
    def __init__(self, input_size, hidden_size, cell_clip=1.0):
        super().__init__()
        self.hidden_size = hidden_size
        self.gates = nn.Linear(input_size + hidden_size, 4 * hidden_size)
        self.cell_clip = cell_clip

    def forward(self, seq, mask):
        batch = seq.size(1)
        h = seq.new_zeros(batch, self.hidden_size)
        c = seq.new_zeros(batch, self.hidden_size)
        outputs = []
        for x_t in seq:
            i, f, g, o = self.gates(torch.cat([x_t, h], dim=1)).chunk(4, dim=1)
            c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
            c.clamp_(-self.cell_clip, self.cell_clip)
            h = torch.sigmoid(o) * torch.tanh(c)
            h = h * mask
            outputs.append(h)
        return torch.stack(outputs)


lstm = ClippedLSTM(3, 5, cell_clip=0.3)
seq = torch.randn(6, 2, 3) * 3
mask = torch.bernoulli(torch.full((2, 5), 0.7))
out = lstm(seq, mask)
out.sum().backward()
