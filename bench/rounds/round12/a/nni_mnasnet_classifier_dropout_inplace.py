# label: hazard raises
# why: the classifier's Dropout(inplace=True) rewrites the pooled features that the preceding F.relu saved for its backward
# source: https://github.com/microsoft/nni/pull/4614
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

_BN_MOMENTUM = 1 - 0.9997


class RegularConv(nn.Module):
    def __init__(self, kernel_size, in_ch, out_ch, skip, exp_ratio, stride):
        super().__init__()
        self.skip = skip
        self.conv = nn.Conv2d(in_ch, out_ch, kernel_size, padding=kernel_size // 2, stride=stride, bias=False)
        self.relu = nn.ReLU(inplace=True)
        self.bn = nn.BatchNorm2d(out_ch, momentum=_BN_MOMENTUM)

    def forward(self, x):
        out = self.bn(self.relu(self.conv(x)))
        if self.skip == 'identity':
            out = out + x
        return out


class MobileConv(nn.Module):
    def __init__(self, kernel_size, in_ch, out_ch, skip, exp_ratio, stride):
        super().__init__()
        self.skip = skip
        mid_ch = in_ch * exp_ratio
        self.layers = nn.Sequential(
            nn.Conv2d(in_ch, mid_ch, 1, bias=False),
            nn.BatchNorm2d(mid_ch, momentum=_BN_MOMENTUM),
            nn.ReLU(inplace=True),
            nn.Conv2d(mid_ch, mid_ch, kernel_size, padding=(kernel_size - 1) // 2,
                      stride=stride, groups=mid_ch, bias=False),
            nn.BatchNorm2d(mid_ch, momentum=_BN_MOMENTUM),
            nn.ReLU(inplace=True),
            nn.Conv2d(mid_ch, out_ch, 1, bias=False),
            nn.BatchNorm2d(out_ch, momentum=_BN_MOMENTUM))

    def forward(self, x):
        out = self.layers(x)
        if self.skip == 'identity':
            out = out + x
        return out


OPS = {'RegularConv': RegularConv, 'MobileConv': MobileConv}


class MNASNet(nn.Module):
    def __init__(self, choices, num_classes=5, dropout=0.2):
        super().__init__()
        layers = [
            nn.Conv2d(3, 8, 3, padding=1, stride=2, bias=False),
            nn.BatchNorm2d(8, momentum=_BN_MOMENTUM),
            nn.ReLU(inplace=True),
        ]
        in_ch = 8
        for op_type, out_ch, stride in choices:
            skip = 'identity' if (stride == 1 and in_ch == out_ch) else 'no'
            layers.append(OPS[op_type](3, in_ch, out_ch, skip, 3, stride))
            in_ch = out_ch
        layers += [
            nn.Conv2d(in_ch, 32, 1, padding=0, stride=1, bias=False),
            nn.BatchNorm2d(32, momentum=_BN_MOMENTUM),
            nn.ReLU(inplace=True),
        ]
        self.layers = nn.Sequential(*layers)
        self.classifier = nn.Sequential(nn.Dropout(p=dropout, inplace=True),  # <-- IPL001: in-place dropout on the F.relu output saved for backward
                                        nn.Linear(32, num_classes))

    def forward(self, x):
        x = self.layers(x)
        x = x.mean([2, 3])
        x = F.relu(x)
        return self.classifier(x)


model = MNASNet([('RegularConv', 8, 1), ('MobileConv', 12, 2)])
images = torch.randn(4, 3, 16, 16)
labels = torch.tensor([0, 1, 2, 3])
loss = F.cross_entropy(model(images), labels)
loss.backward()
