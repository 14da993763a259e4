# label: hazard raises
# why: relu_ is applied to the conv output (the batch-norm input, saved by BatchNormBackward) instead of to the bn output
import torch
import torch.nn as nn

torch.manual_seed(0)


class ConvBN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 4, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(4)

    def forward(self, x):
        out = self.conv1(x)
        y = self.bn1(out)
        out.relu_()  # <-- IPL001
        return y + out


model = ConvBN()
x = torch.randn(2, 3, 6, 6)
loss = model(x).sum()
loss.backward()
