# label: safe
# why: the distillation backbone applies F.relu out of place at the start of each block and adds the residual in place into the fresh bn output, so the stored pre-ReLU features stay intact
# source: https://github.com/clovaai/overhaul-distillation/blob/93bbcd2bf2bf07a50e57291e0fb8fc62b127bfe8/ImageNet/models/ResNet.py
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def conv3x3(in_planes, out_planes, stride=1):
    return nn.Conv2d(in_planes, out_planes, kernel_size=3, stride=stride, padding=1, bias=False)


class BasicBlock(nn.Module):
    expansion = 1

    def __init__(self, inplanes, planes, stride=1, downsample=None):
        super().__init__()
        self.conv1 = conv3x3(inplanes, planes, stride)
        self.bn1 = nn.BatchNorm2d(planes)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = conv3x3(planes, planes)
        self.bn2 = nn.BatchNorm2d(planes)
        self.downsample = downsample

    def forward(self, x):
        x = F.relu(x)
        residual = x
        out = self.conv1(x)
        out = self.bn1(out)
        out = self.relu(out)
        out = self.conv2(out)
        out = self.bn2(out)
        if self.downsample is not None:
            residual = self.downsample(x)
        out += residual
        return out


class ResNet(nn.Module):
    def __init__(self, num_classes=5, width=4):
        super().__init__()
        self.conv1 = nn.Conv2d(3, width, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.relu = nn.ReLU(inplace=True)
        self.layer1 = BasicBlock(width, width)
        self.layer2 = BasicBlock(width, width * 2, stride=2, downsample=nn.Sequential(
            nn.Conv2d(width, width * 2, 1, stride=2, bias=False), nn.BatchNorm2d(width * 2)))
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(width * 2, num_classes)

    def extract_feature(self, x, preReLU=False):
        x = self.relu(self.bn1(self.conv1(x)))
        feat1 = self.layer1(x)
        feat2 = self.layer2(feat1)
        x = self.avgpool(F.relu(feat2))
        out = self.fc(x.view(x.size(0), -1))
        if not preReLU:
            feat1 = F.relu(feat1)
            feat2 = F.relu(feat2)
        return [feat1, feat2], out


def distillation_loss(source, target, margin):
    target = torch.max(target, margin)
    loss = F.mse_loss(source, target, reduction="none")
    loss = loss * ((source > target) | (target > 0)).float()
    return loss.sum()


t_net = ResNet().eval()
s_net = ResNet()
connectors = nn.ModuleList([nn.Conv2d(4, 4, 1), nn.Conv2d(8, 8, 1)])
margins = [torch.full((1, 4, 1, 1), -0.5), torch.full((1, 8, 1, 1), -0.5)]

images = torch.randn(2, 3, 8, 8)
labels = torch.tensor([1, 4])
with torch.no_grad():
    t_feats, t_out = t_net.extract_feature(images, preReLU=True)
s_feats, s_out = s_net.extract_feature(images, preReLU=True)
loss_distill = 0
for i in range(len(s_feats)):
    loss_distill = loss_distill + distillation_loss(connectors[i](s_feats[i]), t_feats[i].detach(), margins[i]) / 2 ** (1 - i)
loss = F.cross_entropy(s_out, labels) + 1e-3 * loss_distill
loss.backward()
