# label: hazard raises
# why: the left branch ends in nn.ReLU(inplace=True), whose output ReLU saves for backward, and the block then does `out += residual` on that very tensor.
# source: https://github.com/pytorch/pytorch/issues/5687
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ResidualBlock(nn.Module):
    def __init__(self, ch_in, ch_out, shortcut=None):
        super(ResidualBlock, self).__init__()
        self.left = nn.Sequential(
            nn.Conv2d(ch_in, 8, 3, 1, 1),
            nn.ReLU(inplace=True),
            nn.Conv2d(8, ch_out, 3, 1, 1),
            nn.ReLU(inplace=True),
        )
        self.right = shortcut

    def forward(self, x):
        out = self.left(x)
        residual = x if self.right is None else self.right(x)
        out += residual  # <-- IPL001: out is the saved result of the last in-place ReLU
        return F.relu(out, inplace=False)


class ContentWeightedCNN(nn.Module):
    def __init__(self):
        super(ContentWeightedCNN, self).__init__()
        self.encoder = nn.Sequential(
            nn.Conv2d(3, 8, 4, 2, 1),
            nn.ReLU(inplace=True),
            ResidualBlock(8, 8),
            nn.Conv2d(8, 4, 3, 1, 1),
            nn.Sigmoid(),
        )
        self.decoder = nn.Sequential(
            nn.Conv2d(4, 8, 3, 1, 1),
            ResidualBlock(8, 8),
            nn.PixelShuffle(2),
            nn.Conv2d(2, 3, 3, 1, 1),
        )

    def forward(self, x):
        return self.decoder(self.encoder(x))


model = ContentWeightedCNN()
img = torch.rand(2, 3, 8, 8)
rec = model(img)
loss = F.mse_loss(rec, img)
loss.backward()
