# label: hazard raises
# why: when the shortcut conv runs first it saves x, and the residual branch then opens with nn.ReLU(inplace=True) on the same x, so the shortcut's backward finds its input overwritten.
# source: https://github.com/pytorch/pytorch/issues/15428
import torch
import torch.nn as nn

torch.manual_seed(0)


class Block(nn.Module):
    def __init__(self, in_chan, out_chan, stride=1):
        super(Block, self).__init__()
        self.stride = stride
        self.in_chan = in_chan
        self.out_chan = out_chan
        self.residual = nn.Sequential(
            nn.ReLU(inplace=True),  # <-- IPL001: rectifies x in place after the shortcut conv saved it
            nn.Conv2d(in_chan, out_chan, 3, stride, 1, bias=False),
            nn.BatchNorm2d(out_chan),
            nn.ReLU(),
            nn.Conv2d(out_chan, out_chan, 3, 1, 1, bias=False),
        )
        self.shortcut = None
        if not stride == 1 or not in_chan == out_chan:
            self.shortcut = nn.Conv2d(in_chan, out_chan, 1, stride, bias=False)

    def forward(self, x):
        if not self.stride == 1 or not self.in_chan == self.out_chan:
            sc = self.shortcut(x)
        else:
            sc = x
        resd = self.residual(x)
        out = resd + sc
        return out


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.conv1 = nn.Conv2d(3, 4, 3, 1, 1)
        self.layer1 = Block(4, 8, stride=2)
        self.fc = nn.Linear(8, 2)

    def forward(self, x):
        x = self.conv1(x)
        x = self.layer1(x)
        return self.fc(x.mean((2, 3)))


net = Net()
inten = torch.randn(2, 3, 8, 8)
out = net(inten)
loss = out.sum()
loss.backward()
