# label: safe
# why: in-place ReLU follows BatchNorm (which does not save its output) and the residual is added in place after the last read of the conv branch output.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class BasicBlock(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv1 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(c)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(c)

    def forward(self, x):
        identity = x
        out = self.conv1(x)
        out = self.bn1(out)
        out = self.relu(out)
        out = self.conv2(out)
        out = self.bn2(out)
        out += identity
        out = self.relu(out)
        return out


block = BasicBlock(2)
head = nn.Linear(2, 3)
x = torch.randn(3, 2, 4, 4)
y = torch.tensor([0, 2, 1])

feat = block(x)
logits = head(F.adaptive_avg_pool2d(feat, 1).flatten(1))
loss = F.cross_entropy(logits, y)
loss.backward()
