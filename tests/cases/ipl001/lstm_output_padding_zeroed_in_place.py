# label: hazard raises
# why: the encoder zeroes the padded steps of the LSTM's output in place, but nn.LSTM saved that output for its backward.
import torch
import torch.nn as nn

torch.manual_seed(0)


class Encoder(nn.Module):
    def __init__(self, dim=4, hidden=5):
        super().__init__()
        self.rnn = nn.LSTM(dim, hidden, batch_first=True)
        self.out = nn.Linear(hidden, 2)

    def forward(self, x, lengths):
        outputs, (h, c) = self.rnn(x)
        pad = torch.arange(x.size(1)).unsqueeze(0) >= lengths.unsqueeze(1)
        outputs.masked_fill_(pad.unsqueeze(-1), 0.0)  # <-- IPL001: nn.LSTM saved its output
        return self.out(outputs).sum(1)


encoder = Encoder()
scores = encoder(torch.randn(3, 6, 4), torch.tensor([6, 4, 2]))
scores.sum().backward()
