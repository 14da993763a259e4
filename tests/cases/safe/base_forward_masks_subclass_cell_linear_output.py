# label: safe
# why: the only subclass returns a linear projection, which saved its input and not its output, so masking the output in place is harmless.
import torch
import torch.nn as nn

torch.manual_seed(0)


class BaseRNN(nn.Module):
    def forward_cell(self, x):
        raise NotImplementedError()

    def forward(self, x, lens):
        out = self.forward_cell(x)
        pad = torch.arange(x.size(1)).unsqueeze(0) >= lens.unsqueeze(1)
        out.masked_fill_(pad.unsqueeze(-1), 0.0)
        return out


class GatedCell(BaseRNN):
    def __init__(self, dim):
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    def forward_cell(self, x):
        return self.proj(torch.sigmoid(x))


model = GatedCell(3)
y = model(torch.randn(2, 4, 3), torch.tensor([4, 2]))
y.sum().backward()
