# label: hazard raises no-twin
# why: __init__ turns every ReLU and Dropout in place after building the heads; in each head the in-place Dropout then overwrites the ReLU output that ReLU saved for backward.
import torch
import torch.nn as nn

torch.manual_seed(0)


class Heads(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 6, 3, padding=1), nn.BatchNorm2d(6), nn.ReLU())
        self.head = nn.Sequential(nn.Conv2d(6, 4, 1), nn.ReLU(), nn.Dropout(0.2), nn.Conv2d(4, 1, 1))
        for m in self.modules():
            if isinstance(m, (nn.ReLU, nn.Dropout)):
                m.inplace = True  # <-- IPL001: the head's Dropout now writes the ReLU's saved output

    def forward(self, x):
        return self.head(self.stem(x))


model = Heads().train()
out = model(torch.randn(2, 3, 8, 8))
out.mean().backward()
