# label: hazard raises
# why: `identity` is the block input x that conv1 saved (and the stem's ReLU output); `identity += out` modifies it, so backward raises
import torch
import torch.nn as nn

torch.manual_seed(0)


class BasicBlock(nn.Module):
    def __init__(self, ch=8):
        super().__init__()
        self.conv1 = nn.Conv2d(ch, ch, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(ch)
        self.conv2 = nn.Conv2d(ch, ch, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(ch)
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x):
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        identity += out  # <-- IPL001
        return self.relu(identity)


stem = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU(inplace=True))
block = BasicBlock()
fc = nn.Linear(8, 3)
images = torch.randn(2, 3, 8, 8)
logits = fc(block(stem(images)).mean((2, 3)))
loss = nn.functional.cross_entropy(logits, torch.tensor([0, 2]))
loss.backward()
grad_conv1 = block.conv1.weight.grad.clone()
grad_stem = stem[0].weight.grad.clone()
