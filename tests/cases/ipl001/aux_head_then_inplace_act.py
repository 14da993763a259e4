# label: hazard raises
# why: the auxiliary Linear saved x (its input) for the weight gradient; the inplace ReLU module then overwrites x
import torch
import torch.nn as nn

torch.manual_seed(0)


class TwoHeads(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Linear(6, 12)
        self.aux_head = nn.Linear(12, 2)
        self.act = nn.ReLU(inplace=True)
        self.head = nn.Linear(12, 3)

    def forward(self, inp):
        x = self.stem(inp)
        aux = self.aux_head(x)
        x = self.act(x)  # <-- IPL001
        return self.head(x), aux


model = TwoHeads()
inp = torch.randn(4, 6)
main_out, aux_out = model(inp)
loss = main_out.sum() + 0.4 * aux_out.sum()
loss.backward()
