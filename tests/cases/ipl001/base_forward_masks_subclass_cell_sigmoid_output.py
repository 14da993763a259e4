# label: hazard raises
# why: the base class's forward masks whatever the subclass's cell returns, in place; the only subclass returns a sigmoid, whose backward needs the output it saved.
import torch
import torch.nn as nn

torch.manual_seed(0)


class BaseRNN(nn.Module):
    def forward_cell(self, x):
        raise NotImplementedError()

    def forward(self, x, lens):
        out = self.forward_cell(x)
        pad = torch.arange(x.size(1)).unsqueeze(0) >= lens.unsqueeze(1)
        out.masked_fill_(pad.unsqueeze(-1), 0.0)  # <-- IPL001: sigmoid saved its output
        return out


class GatedCell(BaseRNN):
    def __init__(self, dim):
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    def forward_cell(self, x):
        return torch.sigmoid(self.proj(x))


model = GatedCell(3)
y = model(torch.randn(2, 4, 3), torch.tensor([4, 2]))
y.sum().backward()
