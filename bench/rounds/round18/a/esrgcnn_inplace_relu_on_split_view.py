# label: hazard raises
# why: the shared nn.ReLU(inplace=True) is applied to `remain1`, one of the views returned by torch.split, and autograd forbids in-place writes to outputs of multi-view functions.
# source: https://github.com/hellloxiaotian/ESRGCNN/issues/9 (esrgcnn/model/esrgcnn.py at 8e25b69ad46d775b7f69932f3968e04c2052f8d8)
import torch
import torch.nn as nn

torch.manual_seed(0)


class MFCModule(nn.Module):
    def __init__(self, in_channels, out_channels, gropus=1):
        super(MFCModule, self).__init__()
        kernel_size = 3
        padding = 1
        features = 8
        features1 = 6
        distill_rate = 0.25
        self.distilled_channels = int(features * distill_rate)
        self.remaining_channels = int(features - self.distilled_channels)
        self.conv1_1 = nn.Sequential(nn.Conv2d(in_channels=features, out_channels=features, kernel_size=kernel_size, padding=padding, groups=1, bias=False))
        self.conv1_2 = nn.Sequential(nn.Conv2d(in_channels=features1, out_channels=features, kernel_size=kernel_size, padding=padding, groups=1, bias=False))
        self.conv1_3 = nn.Sequential(nn.Conv2d(in_channels=features, out_channels=features, kernel_size=3, padding=1, groups=1, bias=False), nn.ReLU(inplace=True))
        self.ReLU = nn.ReLU(inplace=True)

    def forward(self, input):
        out1_c = self.conv1_1(input)
        dit1, remain1 = torch.split(out1_c, (self.distilled_channels, self.remaining_channels), dim=1)
        out1_r = self.ReLU(remain1)  # <-- IPL001: in-place ReLU on a view returned by torch.split
        out2_c = self.conv1_2(out1_r)
        dit2, remain2 = torch.split(out2_c, (self.distilled_channels, self.remaining_channels), dim=1)
        remain2 = remain2 + remain1
        dit = dit1 + dit2
        out_t = torch.cat([dit, remain2], dim=1)
        out_r = self.ReLU(out_t)
        out3_r = self.conv1_3(out_r)
        return input + out3_r


class Net(nn.Module):
    def __init__(self, **kwargs):
        super(Net, self).__init__()
        features = 8
        self.conv1_1 = nn.Sequential(nn.Conv2d(3, features, 3, padding=1, bias=False), nn.ReLU(inplace=True))
        self.b1 = MFCModule(features, features)
        self.b2 = MFCModule(features, features)
        self.conv3 = nn.Sequential(nn.Conv2d(features, 3, 3, padding=1, bias=False))

    def forward(self, x, scale):
        x1 = self.conv1_1(x)
        b1 = self.b1(x1)
        b2 = self.b2(b1)
        return self.conv3(b2)


refiner = Net(scale=2)
lr = torch.randn(2, 3, 8, 8)
hr = torch.randn(2, 3, 8, 8)
sr = refiner(lr, 2)
loss = nn.L1Loss()(sr, hr)
loss.backward()
