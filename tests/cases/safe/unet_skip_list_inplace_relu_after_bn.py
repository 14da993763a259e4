# label: safe
# why: the U-Net encoder appends post-activation maps to the skip list; every in-place ReLU acts on a fresh BatchNorm output, and max-pool/cat only read the skips after the write.
import torch
import torch.nn as nn
import torch.nn.functional as F


def double_conv(cin, cout):
    return nn.Sequential(
        nn.Conv2d(cin, cout, 3, padding=1, bias=False),
        nn.BatchNorm2d(cout),
        nn.ReLU(inplace=True),
        nn.Conv2d(cout, cout, 3, padding=1, bias=False),
        nn.BatchNorm2d(cout),
        nn.ReLU(inplace=True),
    )


class TinyUNet(nn.Module):
    def __init__(self, in_ch=1, base=4, depth=2, num_classes=2):
        super().__init__()
        chans = [base * 2 ** i for i in range(depth + 1)]
        self.inc = double_conv(in_ch, chans[0])
        self.downs = nn.ModuleList(double_conv(chans[i], chans[i + 1]) for i in range(depth))
        self.ups = nn.ModuleList(
            nn.ConvTranspose2d(chans[i + 1], chans[i], 2, stride=2) for i in reversed(range(depth))
        )
        self.up_convs = nn.ModuleList(double_conv(2 * chans[i], chans[i]) for i in reversed(range(depth)))
        self.outc = nn.Conv2d(chans[0], num_classes, 1)

    def forward(self, x):
        skips = []
        h = self.inc(x)
        for down in self.downs:
            skips.append(h)
            h = down(F.max_pool2d(h, 2))
        for up, conv in zip(self.ups, self.up_convs):
            h = up(h)
            h = conv(torch.cat([skips.pop(), h], dim=1))
        return self.outc(h)


torch.manual_seed(0)
model = TinyUNet()
x = torch.randn(1, 1, 8, 8)
target = torch.randint(0, 2, (1, 8, 8))
out = model(x)
loss = F.cross_entropy(out, target)
loss.backward()
