# label: safe
# why: skip features are concatenated (copied) before the decoder's in-place ReLU, which acts on a BatchNorm output nothing else reads
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class UpBlock(nn.Module):
    def __init__(self, in_ch, skip_ch, out_ch):
        super().__init__()
        self.conv = nn.Conv2d(in_ch + skip_ch, out_ch, 3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(out_ch)

    def forward(self, x, skip):
        x = F.interpolate(x, size=skip.shape[-2:], mode="bilinear", align_corners=False)
        x = torch.cat([x, skip], dim=1)
        x = self.bn(self.conv(x))
        F.relu(x, inplace=True)
        return x


enc1 = nn.Conv2d(1, 4, 3, padding=1)
enc2 = nn.Conv2d(4, 8, 3, stride=2, padding=1)
up = UpBlock(8, 4, 4)
head = nn.Conv2d(4, 2, 1)

img = torch.randn(2, 1, 8, 8)
s1 = F.relu(enc1(img))
bottleneck = F.relu(enc2(s1))
d1 = up(bottleneck, s1)
logits = head(d1)
target = torch.randint(0, 2, (2, 8, 8))
loss = F.cross_entropy(logits, target) + s1.mean()
loss.backward()
enc1_grad = enc1.weight.grad
