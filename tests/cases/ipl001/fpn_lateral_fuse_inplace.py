# label: hazard raises
# why: the lateral 1x1 conv saved the backbone feature c3 as its input; adding the upsampled top-down path into c3 in place corrupts it
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class TinyFPN(nn.Module):
    def __init__(self, ch=4, out_ch=4):
        super().__init__()
        self.stem = nn.Conv2d(3, ch, 3, padding=1)
        self.down = nn.Conv2d(ch, ch, 3, stride=2, padding=1)
        self.lat3 = nn.Conv2d(ch, out_ch, 1)
        self.lat4 = nn.Conv2d(ch, out_ch, 1)
        self.smooth = nn.Conv2d(out_ch, out_ch, 3, padding=1)

    def forward(self, img):
        c3 = self.stem(img)
        c4 = self.down(c3)
        p4 = self.lat4(c4)
        p3 = self.lat3(c3)
        top = F.interpolate(p4, size=c3.shape[-2:], mode="nearest")
        c3 += top  # <-- IPL001
        p3 = self.smooth(c3 + p3)
        return p3, p4


fpn = TinyFPN()
img = torch.randn(1, 3, 8, 8)
p3, p4 = fpn(img)
loss = p3.mean() + p4.pow(2).mean()
loss.backward()
stem_grad = fpn.stem.weight.grad
