# label: hazard raises
# why: every block of the ModuleList adds into the same `x`; the first block's Linear saved x for backward
import torch
import torch.nn as nn

torch.manual_seed(0)


class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)

    def forward(self, h, skip):
        h += skip  # <-- IPL001
        return self.fc(h)


class Ensemble(nn.Module):
    def __init__(self, dim, n):
        super().__init__()
        blocks = []
        for _ in range(n):
            blocks.append(Block(dim))
        self.blocks = nn.ModuleList(blocks)

    def forward(self, x, skip):
        outs = [block(x, skip) for block in self.blocks]
        for block in self.blocks:
            outs.append(block(x, skip))
        return torch.stack(outs).sum(0)


net = Ensemble(4, 2)
x = torch.randn(3, 4) * 1.0
skip = torch.randn(3, 4)
loss = net(x, skip).sum()
loss.backward()
