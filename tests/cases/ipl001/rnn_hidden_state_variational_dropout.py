# label: hazard raises
# why: the hidden state produced by tanh (which saves its output) is multiplied in place by a dropout mask.
import torch
import torch.nn as nn

torch.manual_seed(0)


class ManualRNN(nn.Module):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.hidden_size = hidden_size
        self.ih = nn.Linear(input_size, hidden_size)
        self.hh = nn.Linear(hidden_size, hidden_size, bias=False)

    def forward(self, seq, mask):
        h = seq.new_zeros(seq.size(1), self.hidden_size)
        outputs = []
        for x_t in seq:
            h = torch.tanh(self.ih(x_t) + self.hh(h))
            h *= mask  # <-- IPL001: tanh saved h for backward
            outputs.append(h)
        return torch.stack(outputs)


rnn = ManualRNN(3, 6)
sequence = torch.randn(4, 2, 3)
keep = torch.bernoulli(torch.full((2, 6), 0.8)) / 0.8
outputs = rnn(sequence, keep)
loss = outputs[-1].sum()
loss.backward()
