# label: hazard silent
# why: the encoder stores the conv output in the skip list and then applies relu_ to it, so the decoder reads the activated tensor instead of the pre-activation skip
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class TinyUNet(nn.Module):
    def __init__(self, ch=4):
        super().__init__()
        self.enc1 = nn.Conv2d(1, ch, 3, padding=1)
        self.enc2 = nn.Conv2d(ch, ch, 3, padding=1)
        self.dec = nn.Conv2d(2 * ch, ch, 3, padding=1)
        self.head = nn.Conv2d(ch, 1, 1)

    def forward(self, x):
        skips = []
        h = self.enc1(x)
        skips.append(h)
        h.relu_()  # <-- IPL002
        h = F.max_pool2d(h, 2)
        h = F.relu(self.enc2(h))
        h = F.interpolate(h, scale_factor=2, mode="nearest")
        h = torch.cat([h, skips.pop()], dim=1)
        h = F.relu(self.dec(h))
        return self.head(h)


net = TinyUNet()
img = torch.randn(2, 1, 8, 8)
pred = net(img)
loss = F.mse_loss(pred, torch.zeros_like(pred))
loss.backward()
enc1_grad = net.enc1.weight.grad
