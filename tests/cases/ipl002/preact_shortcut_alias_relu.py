# label: hazard silent
# why: the shortcut is meant to carry the pre-activation BN output, but it is just an alias of `h`, so `h.relu_()` silently turns the shortcut into the activated tensor.
import torch
import torch.nn as nn


class PreActStem(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)

    def forward(self, x):
        h = self.bn1(self.conv1(x))
        shortcut = h
        h.relu_()  # <-- IPL002: `shortcut` aliases h and is read below
        h = self.bn2(self.conv2(h))
        return h + shortcut


torch.manual_seed(0)
stem = PreActStem(3, 4)
head = nn.Linear(4, 2)
images = torch.randn(2, 3, 6, 6)
feat = stem(images)
logits = head(feat.mean((2, 3)))
loss = nn.functional.cross_entropy(logits, torch.tensor([1, 0]))
loss.backward()
