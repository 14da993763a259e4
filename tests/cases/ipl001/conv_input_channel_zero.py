# label: hazard raises
# why: conv saves its input, and zeroing channel 0 of feat afterwards writes into that saved tensor through a view.
import torch
import torch.nn as nn

torch.manual_seed(0)


class TwoStage(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 4, 3, padding=1)
        self.body = nn.Conv2d(4, 4, 3, padding=1)

    def forward(self, img):
        feat = self.stem(img)
        out = self.body(feat)
        # ablate the first stem channel for the skip path
        feat[:, 0] = 0.0  # <-- IPL001: body conv saved feat
        return out + feat


net = TwoStage()
img = torch.randn(2, 3, 6, 6)
y = net(img)
y.mean().backward()
