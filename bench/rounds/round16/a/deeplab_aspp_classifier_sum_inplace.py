# label: safe
# why: the ASPP classifier accumulates branch outputs with `+=` into the first dilated conv's output, and convolution backward never needs its own output, so the in-place sum is harmless.
# source: https://github.com/wasidennis/AdaptSegNet/issues/60
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Classifier_Module(nn.Module):
    def __init__(self, inplanes, dilation_series, padding_series, num_classes):
        super(Classifier_Module, self).__init__()
        self.conv2d_list = nn.ModuleList()
        for dilation, padding in zip(dilation_series, padding_series):
            self.conv2d_list.append(
                nn.Conv2d(inplanes, num_classes, kernel_size=3, stride=1, padding=padding, dilation=dilation, bias=True))

        for m in self.conv2d_list:
            nn.init.normal_(m.weight, 0, 0.01)

    def forward(self, x):
        out = self.conv2d_list[0](x)
        for i in range(len(self.conv2d_list) - 1):
            out += self.conv2d_list[i + 1](x)
        return out


class ResNetMulti(nn.Module):
    def __init__(self, num_classes):
        super(ResNetMulti, self).__init__()
        self.conv1 = nn.Conv2d(3, 8, kernel_size=3, stride=2, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(8, affine=True)
        self.relu = nn.ReLU(inplace=True)
        self.layer5 = Classifier_Module(8, [1, 2, 3, 4], [1, 2, 3, 4], num_classes)
        self.layer6 = Classifier_Module(8, [1, 2, 3, 4], [1, 2, 3, 4], num_classes)

    def forward(self, x):
        x = self.conv1(x)
        x = self.bn1(x)
        x = self.relu(x)
        x1 = self.layer5(x)
        x2 = self.layer6(x)
        return x1, x2


model = ResNetMulti(num_classes=3)
images = torch.randn(2, 3, 16, 16)
labels = torch.randint(0, 3, (2, 16, 16))
interp = nn.Upsample(size=(16, 16), mode='bilinear', align_corners=True)
pred1, pred2 = model(images)
pred1 = interp(pred1)
pred2 = interp(pred2)
loss_seg1 = F.cross_entropy(pred1, labels)
loss_seg2 = F.cross_entropy(pred2, labels)
loss = loss_seg2 + 0.1 * loss_seg1
loss.backward()
