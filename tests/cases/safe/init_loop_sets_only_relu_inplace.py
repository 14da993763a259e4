# label: safe
# why: only the ReLUs are turned in place; each writes a BatchNorm or convolution output that nothing saved, and the Dropout stays out of place.
import torch
import torch.nn as nn

torch.manual_seed(0)


class Heads(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 6, 3, padding=1), nn.BatchNorm2d(6), nn.ReLU())
        self.head = nn.Sequential(nn.Conv2d(6, 4, 1), nn.ReLU(), nn.Dropout(0.2), nn.Conv2d(4, 1, 1))
        for m in self.modules():
            if isinstance(m, nn.ReLU):
                m.inplace = True

    def forward(self, x):
        return self.head(self.stem(x))


model = Heads().train()
out = model(torch.randn(2, 3, 8, 8))
out.mean().backward()
