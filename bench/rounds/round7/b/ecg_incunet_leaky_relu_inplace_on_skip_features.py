# label: hazard raises
# why: each encoder/decoder stage of IncUNet starts with nn.LeakyReLU(0.2, inplace=True), which overwrites the previous stage's output: a ReLU result that ReLU's backward needs and that the decoder also concatenates as a skip connection.
# source: https://github.com/acrarshin/RPNet/pull/6
import torch
import torch.nn as nn

torch.manual_seed(0)


class IncResBlock(nn.Module):
    def __init__(self, inplanes, planes, convstr=1, convsize=5, convpadding=2):
        super(IncResBlock, self).__init__()
        self.Inputconv1x1 = nn.Conv1d(inplanes, planes, kernel_size=1, stride=1, bias=False)
        self.conv1_1 = nn.Sequential(
            nn.Conv1d(inplanes, planes // 4, kernel_size=convsize, stride=convstr, padding=convpadding),
            nn.BatchNorm1d(planes // 4))
        self.conv1_2 = nn.Sequential(
            nn.Conv1d(inplanes, planes // 4, kernel_size=1, stride=convstr, padding=0, bias=False),
            nn.BatchNorm1d(planes // 4),
            nn.LeakyReLU(0.2, inplace=True),
            nn.Conv1d(planes // 4, planes // 4, kernel_size=convsize + 2, stride=convstr, padding=convpadding + 1),
            nn.BatchNorm1d(planes // 4))
        self.relu = nn.ReLU()

    def forward(self, x):
        residual = self.Inputconv1x1(x)
        c1 = self.conv1_1(x)
        c2 = self.conv1_2(x)
        out = torch.cat([c1, c2, c1, c2], 1)
        out += residual
        out = self.relu(out)
        return out


class IncUNet(nn.Module):
    def __init__(self, in_channels=1, ch=8):
        super(IncUNet, self).__init__()
        self.e1 = nn.Sequential(
            nn.Conv1d(in_channels, ch, kernel_size=4, stride=2, padding=1),
            nn.BatchNorm1d(ch),
            nn.LeakyReLU(0.2, inplace=True),
            IncResBlock(ch, ch))
        self.e2 = nn.Sequential(
            nn.LeakyReLU(0.2, inplace=True),  # <-- IPL001, IPL002: overwrites en1, a ReLU output that is also a skip input
            nn.Conv1d(ch, 2 * ch, kernel_size=4, stride=2, padding=1),
            nn.BatchNorm1d(2 * ch),
            IncResBlock(2 * ch, 2 * ch))
        self.e2add = nn.Sequential(
            nn.Conv1d(2 * ch, 2 * ch, kernel_size=3, stride=1, padding=1),
            nn.BatchNorm1d(2 * ch))
        self.e3 = nn.Sequential(
            nn.LeakyReLU(0.2, inplace=True),  # <-- IPL002: overwrites en2add, concatenated again by the decoder
            nn.Conv1d(2 * ch, 4 * ch, kernel_size=4, stride=2, padding=1),
            nn.BatchNorm1d(4 * ch),
            IncResBlock(4 * ch, 4 * ch))
        self.d1 = nn.Sequential(
            nn.LeakyReLU(0.2, inplace=True),  # <-- IPL001: overwrites en3, a ReLU output saved for backward
            nn.ConvTranspose1d(4 * ch, 2 * ch, kernel_size=4, stride=2, padding=1),
            nn.BatchNorm1d(2 * ch),
            IncResBlock(2 * ch, 2 * ch))
        self.d2 = nn.Sequential(
            nn.LeakyReLU(0.2, inplace=True),
            nn.ConvTranspose1d(4 * ch, 2 * ch, kernel_size=3, stride=1, padding=1),
            nn.BatchNorm1d(2 * ch))
        self.d3 = nn.Sequential(
            nn.LeakyReLU(0.2, inplace=True),
            nn.ConvTranspose1d(4 * ch, ch, kernel_size=4, stride=2, padding=1),
            nn.BatchNorm1d(ch))
        self.out_l = nn.Sequential(
            nn.LeakyReLU(0.2, inplace=True),
            nn.ConvTranspose1d(2 * ch, in_channels, kernel_size=4, stride=2, padding=1))

    def forward(self, x):
        en1 = self.e1(x)
        en2 = self.e2(en1)
        en2add = self.e2add(en2)
        en3 = self.e3(en2add)
        de1_ = self.d1(en3)
        de1 = torch.cat([en2add, de1_], 1)
        de2_ = self.d2(de1)
        de2 = torch.cat([en2, de2_], 1)
        de3_ = self.d3(de2)
        de3 = torch.cat([en1, de3_], 1)
        return self.out_l(de3)


model = IncUNet()
ecg = torch.randn(2, 1, 32)
target = (torch.rand(2, 1, 32) > 0.9).float()
out = model(ecg)
loss = nn.functional.smooth_l1_loss(out, target)
loss.backward()
