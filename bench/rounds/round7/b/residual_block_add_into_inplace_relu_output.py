# label: hazard raises
# why: self.left ends with nn.ReLU(inplace=True), whose backward needs its own output, and ResidualBlock.forward then does out += residual on that very output.
# source: https://github.com/pytorch/pytorch/issues/5687
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ResidualBlock(nn.Module):
    def __init__(self, ch_in, ch_out, shortcut=None):
        super(ResidualBlock, self).__init__()
        self.left = nn.Sequential(
            nn.Conv2d(ch_in, 8, 3, 1, 1),  # ch_in, ch_out, kernel_size, stride, pad
            nn.ReLU(inplace=True),
            nn.Conv2d(8, ch_out, 3, 1, 1),
            nn.ReLU(inplace=True),
        )
        self.right = shortcut

    def forward(self, x):
        out = self.left(x)
        residual = x if self.right is None else self.right(x)
        out += residual  # <-- IPL001: overwrites the ReLU output that ReLU's backward needs
        return F.relu(out, inplace=False)


class ContentWeightedCNN(nn.Module):
    def __init__(self):
        super(ContentWeightedCNN, self).__init__()
        self.encoder = nn.Sequential(
            nn.Conv2d(3, 8, 3, 2, 1),
            nn.ReLU(inplace=True),
            self.make_layer(ResidualBlock, 8, 8, 2),
            nn.Conv2d(8, 4, 1, 1, 0),
            nn.Sigmoid(),
        )

    def make_layer(self, block, ch_in, ch_out, block_num):
        layers = []
        for i in range(block_num):
            layers.append(block(ch_in, ch_out))
        return nn.Sequential(*layers)

    def forward(self, x):
        return self.encoder(x)


model = ContentWeightedCNN()
x = torch.randn(2, 3, 16, 16)
out = model(x)
loss = F.mse_loss(out, torch.rand_like(out))
loss.backward()
