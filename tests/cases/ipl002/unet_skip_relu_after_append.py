# label: hazard silent
# why: the encoder stores the pre-activation map in the skip list and then applies ReLU in place, so the decoder concatenates the activated map instead.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class TinyUNet(nn.Module):
    def __init__(self, c=4):
        super().__init__()
        self.enc1 = nn.Conv2d(3, c, 3, padding=1)
        self.enc2 = nn.Conv2d(c, 2 * c, 3, padding=1)
        self.up = nn.ConvTranspose2d(2 * c, c, 2, stride=2)
        self.dec = nn.Conv2d(2 * c, c, 3, padding=1)
        self.head = nn.Conv2d(c, 1, 1)

    def forward(self, x):
        skips = []
        h = self.enc1(x)
        skips.append(h)
        h = F.relu(h, inplace=True)  # <-- IPL002: the skip list holds the same tensor
        h = F.max_pool2d(h, 2)
        h = F.relu(self.enc2(h))
        h = self.up(h)
        h = torch.cat([h, skips.pop()], dim=1)
        return self.head(F.relu(self.dec(h)))


net = TinyUNet()
img = torch.randn(2, 3, 8, 8)
mask_logits = net(img)
loss = F.binary_cross_entropy_with_logits(mask_logits, (img[:, :1] > 0).float())
loss.backward()
