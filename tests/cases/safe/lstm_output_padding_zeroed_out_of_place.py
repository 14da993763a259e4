# label: safe
# why: the padded steps are zeroed out of place with masked_fill, so the output nn.LSTM saved keeps its values.
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
        outputs = outputs.masked_fill(pad.unsqueeze(-1), 0.0)
        outputs.mul_(0.5)
        return self.out(outputs).sum(1)


encoder = Encoder()
scores = encoder(torch.randn(3, 6, 4), torch.tensor([6, 4, 2]))
scores.sum().backward()
