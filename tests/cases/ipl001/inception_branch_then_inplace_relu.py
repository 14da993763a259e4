# label: hazard raises
# why: branch1 (a conv) saved x as its input; the inplace ReLU module applied to x afterwards overwrites it before the pool branch
import torch
import torch.nn as nn

torch.manual_seed(0)


class MixedBlock(nn.Module):
    def __init__(self, cin):
        super().__init__()
        self.stem = nn.Conv2d(3, cin, 3, padding=1)
        self.branch1 = nn.Conv2d(cin, 4, 1)
        self.relu = nn.ReLU(inplace=True)
        self.branch_pool = nn.Conv2d(cin, 4, 1)

    def forward(self, img):
        x = self.stem(img)
        b1 = self.branch1(x)
        x = self.relu(x)  # <-- IPL001
        bp = self.branch_pool(nn.functional.avg_pool2d(x, 3, stride=1, padding=1))
        return torch.cat([b1, bp], dim=1)


block = MixedBlock(6)
img = torch.randn(2, 3, 8, 8)
loss = block(img).mean()
loss.backward()
