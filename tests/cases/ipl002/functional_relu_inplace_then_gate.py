# label: hazard silent
# why: nnf.relu(..., inplace=True) overwrites feat, so the gate branch that reads feat afterwards sees relu(feat) instead of the pre-activation it was designed for.
import torch
import torch.nn as nn
import torch.nn.functional as nnf

torch.manual_seed(0)


class GatedHead(nn.Module):
    def __init__(self, d_in, d):
        super().__init__()
        self.fc = nn.Linear(d_in, d)
        self.gate = nn.Linear(d, d)
        self.out = nn.Linear(d, 3)

    def forward(self, x):
        feat = self.fc(x)
        act = nnf.relu(feat, inplace=True)  # <-- IPL002: feat is read again by the gate
        g = torch.sigmoid(self.gate(feat))
        return self.out(act * g)


head = GatedHead(6, 8)
x = torch.randn(5, 6)
target = torch.tensor([0, 1, 2, 1, 0])
logits = head(x)
loss = nnf.cross_entropy(logits, target)
loss.backward()
