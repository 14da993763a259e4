# label: hazard raises
# why: feats[0] is the same tensor as the first sigmoid output (saved by SigmoidBackward and fed to the next block)
import torch
import torch.nn as nn

torch.manual_seed(0)


class Pyramid(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList([nn.Linear(6, 6) for _ in range(3)])

    def forward(self, x):
        feats = []
        for blk in self.blocks:
            x = torch.sigmoid(blk(x))
            feats.append(x)
        feats[0].mul_(0.5)  # <-- IPL001
        return sum(f.sum() for f in feats)


model = Pyramid()
x = torch.randn(2, 6)
loss = model(x)
loss.backward()
