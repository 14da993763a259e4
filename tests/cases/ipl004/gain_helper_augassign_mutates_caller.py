# label: hazard silent
# why: `feat *= g` inside apply_gain is an in-place multiply of the caller's tensor, so the skip path below sees the boosted features
import torch
import torch.nn as nn

torch.manual_seed(0)


def apply_gain(feat, g):
    feat *= g  # <-- IPL004
    return feat


class Fuse(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(4, 4)
        self.head = nn.Linear(4, 2)
        self.skip = nn.Linear(4, 2)

    def forward(self, x):
        h = self.enc(x)
        boosted = apply_gain(h, 2.0)
        return self.head(boosted) + self.skip(h)


model = Fuse()
x = torch.randn(5, 4)
out = model(x)
loss = out.pow(2).sum()
loss.backward()
