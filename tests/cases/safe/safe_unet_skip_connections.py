# label: safe
# why: U-Net encoder outputs are stored in a skip list *after* their in-place ReLU and are only read later via torch.cat; nothing writes to a stored skip afterwards.
import torch
import torch.nn as nn
import torch.nn.functional as F


class DoubleConv(nn.Sequential):
    def __init__(self, in_ch, out_ch):
        super().__init__(
            nn.Conv2d(in_ch, out_ch, 3, padding=1, bias=False),
            nn.BatchNorm2d(out_ch),
            nn.ReLU(inplace=True),
            nn.Conv2d(out_ch, out_ch, 3, padding=1, bias=False),
            nn.BatchNorm2d(out_ch),
            nn.ReLU(inplace=True),
        )


class Up(nn.Module):
    def __init__(self, in_ch, out_ch):
        super().__init__()
        self.up = nn.ConvTranspose2d(in_ch, in_ch // 2, 2, stride=2)
        self.conv = DoubleConv(in_ch, out_ch)

    def forward(self, x1, x2):
        x1 = self.up(x1)
        diff_y = x2.size(2) - x1.size(2)
        diff_x = x2.size(3) - x1.size(3)
        x1 = F.pad(x1, [diff_x // 2, diff_x - diff_x // 2, diff_y // 2, diff_y - diff_y // 2])
        return self.conv(torch.cat([x2, x1], dim=1))


class UNet(nn.Module):
    def __init__(self, in_ch=1, base=4, n_classes=2):
        super().__init__()
        self.inc = DoubleConv(in_ch, base)
        self.downs = nn.ModuleList([DoubleConv(base, base * 2), DoubleConv(base * 2, base * 4)])
        self.ups = nn.ModuleList([Up(base * 4, base * 2), Up(base * 2, base)])
        self.outc = nn.Conv2d(base, n_classes, 1)

    def forward(self, x):
        skips = []
        x = self.inc(x)
        for down in self.downs:
            skips.append(x)
            x = down(F.max_pool2d(x, 2))
        for up in self.ups:
            x = up(x, skips.pop())
        return self.outc(x)


torch.manual_seed(0)
unet = UNet()
image = torch.randn(2, 1, 8, 8)
target = torch.randint(0, 2, (2, 8, 8))
logits = unet(image)
loss = F.cross_entropy(logits, target)
loss.backward()
