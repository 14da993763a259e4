# label: hazard raises
# why: the learnable temperature is an nn.Parameter (a leaf); clamping it in place in forward without torch.no_grad() raises
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ContrastiveHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Linear(6, 4)
        self.temperature = nn.Parameter(torch.tensor(0.07))

    def forward(self, a, b):
        za = F.normalize(self.encoder(a), dim=1)
        zb = F.normalize(self.encoder(b), dim=1)
        t = self.temperature
        t.clamp_(min=0.01)  # <-- IPL003
        return za @ zb.t() / t


model = ContrastiveHead()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
a = torch.randn(8, 6)
b = a + 0.05 * torch.randn(8, 6)
for step in range(2):
    logits = model(a, b)
    loss = F.cross_entropy(logits, torch.arange(8))
    opt.zero_grad()
    loss.backward()
    opt.step()
