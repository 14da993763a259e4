# label: safe
# why: RESA clones the backbone feature map before its add_ loop, so the ReLU output the backbone saved is untouched, and each conv reads a gathered copy x[..., idx, :] rather than x itself.
# source: https://github.com/ZJULearning/resa/blob/14b0fea6a1ab4f45d8f9f22fb110c1b3e53cf12e/models/resa.py
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class BasicBlock(nn.Module):
    def __init__(self, planes):
        super().__init__()
        self.conv1 = nn.Conv2d(planes, planes, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(planes, planes, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)

    def forward(self, x):
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        out += identity
        out = self.relu(out)
        return out


class Backbone(nn.Module):
    def __init__(self, chan):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, chan, 3, stride=2, padding=1, bias=False),
                                  nn.BatchNorm2d(chan), nn.ReLU(inplace=True))
        self.layer = BasicBlock(chan)

    def forward(self, x):
        return self.layer(self.stem(x))


class RESA(nn.Module):
    def __init__(self, chan, height, width, iters=2, alpha=2.0, conv_stride=5):
        super().__init__()
        self.iter = iters
        self.alpha = alpha
        for i in range(self.iter):
            setattr(self, 'conv_d' + str(i), nn.Conv2d(chan, chan, (1, conv_stride), padding=(0, conv_stride // 2), bias=False))
            setattr(self, 'conv_u' + str(i), nn.Conv2d(chan, chan, (1, conv_stride), padding=(0, conv_stride // 2), bias=False))
            setattr(self, 'conv_r' + str(i), nn.Conv2d(chan, chan, (conv_stride, 1), padding=(conv_stride // 2, 0), bias=False))
            setattr(self, 'conv_l' + str(i), nn.Conv2d(chan, chan, (conv_stride, 1), padding=(conv_stride // 2, 0), bias=False))
            setattr(self, 'idx_d' + str(i), (torch.arange(height) + height // 2 ** (self.iter - i)) % height)
            setattr(self, 'idx_u' + str(i), (torch.arange(height) - height // 2 ** (self.iter - i)) % height)
            setattr(self, 'idx_r' + str(i), (torch.arange(width) + width // 2 ** (self.iter - i)) % width)
            setattr(self, 'idx_l' + str(i), (torch.arange(width) - width // 2 ** (self.iter - i)) % width)

    def forward(self, x):
        x = x.clone()
        for direction in ['d', 'u']:
            for i in range(self.iter):
                conv = getattr(self, 'conv_' + direction + str(i))
                idx = getattr(self, 'idx_' + direction + str(i))
                x.add_(self.alpha * F.relu(conv(x[..., idx, :])))
        for direction in ['r', 'l']:
            for i in range(self.iter):
                conv = getattr(self, 'conv_' + direction + str(i))
                idx = getattr(self, 'idx_' + direction + str(i))
                x.add_(self.alpha * F.relu(conv(x[..., idx])))
        return x


class ExistHead(nn.Module):
    def __init__(self, chan, num_classes, h, w):
        super().__init__()
        self.conv8 = nn.Conv2d(chan, num_classes, 1)
        self.fc9 = nn.Linear(num_classes * (h // 2) * (w // 2), 16)
        self.fc10 = nn.Linear(16, num_classes - 1)

    def forward(self, x):
        x = F.softmax(self.conv8(x), dim=1)
        x = F.avg_pool2d(x, 2, stride=2, padding=0)
        x = x.view(-1, x.numel() // x.shape[0])
        return torch.sigmoid(self.fc10(F.relu(self.fc9(x))))


chan, num_classes, H, W = 8, 5, 16, 32
backbone = Backbone(chan)
resa = RESA(chan, H // 2, W // 2)
decoder = nn.Conv2d(chan, num_classes, 1)
heads = ExistHead(chan, num_classes, H // 2, W // 2)

img = torch.randn(2, 3, H, W)
seg_gt = torch.randint(0, num_classes, (2, H // 2, W // 2))
exist_gt = torch.randint(0, 2, (2, num_classes - 1)).float()

fea = backbone(img)
fea = resa(fea)
seg = decoder(fea)
exist = heads(fea)
loss = F.cross_entropy(seg, seg_gt) + 0.1 * F.binary_cross_entropy(exist, exist_gt)
loss.backward()
