# label: safe
# why: mmaction2's ResNet BasicBlock does `out += identity` on the output of norm2 and then an inplace ReLU; BatchNorm saves its input (not its output) and AddBackward saves nothing, and the inplace ReLUs only touch fresh norm/add outputs, so TSN training backprops correctly.
# source: https://github.com/open-mmlab/mmaction2/commit/d688d5de5042cf60e477cbeb5d62ee9e0fd23632
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class BasicBlock(nn.Module):
    expansion = 1

    def __init__(self, inplanes, planes, stride=1, dilation=1, downsample=None, style="pytorch"):
        super().__init__()
        assert style in ["pytorch", "caffe"]
        self.conv1 = nn.Conv2d(inplanes, planes, kernel_size=3, stride=stride, padding=dilation, dilation=dilation, bias=False)
        self.norm1 = nn.BatchNorm2d(planes)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(planes, planes, kernel_size=3, stride=1, padding=1, dilation=1, bias=False)
        self.norm2 = nn.BatchNorm2d(planes)
        self.downsample = downsample
        self.style = style
        self.stride = stride
        self.dilation = dilation

    def forward(self, x):
        identity = x

        out = self.conv1(x)
        out = self.norm1(out)
        out = self.relu(out)

        out = self.conv2(out)
        out = self.norm2(out)

        if self.downsample is not None:
            identity = self.downsample(x)

        out += identity
        out = self.relu(out)

        return out


def make_res_layer(block, inplanes, planes, blocks, stride=1):
    downsample = None
    if stride != 1 or inplanes != planes * block.expansion:
        downsample = nn.Sequential(
            nn.Conv2d(inplanes, planes * block.expansion, kernel_size=1, stride=stride, bias=False),
            nn.BatchNorm2d(planes * block.expansion),
        )
    layers = [block(inplanes, planes, stride, downsample=downsample)]
    inplanes = planes * block.expansion
    for _ in range(1, blocks):
        layers.append(block(inplanes, planes, 1))
    return nn.Sequential(*layers)


class ResNet(nn.Module):
    def __init__(self, stage_blocks=(1, 2), base_channels=8):
        super().__init__()
        self.conv1 = nn.Conv2d(3, base_channels, kernel_size=7, stride=2, padding=3, bias=False)
        self.bn1 = nn.BatchNorm2d(base_channels)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
        self.res_layers = []
        inplanes = base_channels
        for i, num_blocks in enumerate(stage_blocks):
            planes = base_channels * 2**i
            res_layer = make_res_layer(BasicBlock, inplanes, planes, num_blocks, stride=1 if i == 0 else 2)
            inplanes = planes * BasicBlock.expansion
            layer_name = f"layer{i + 1}"
            self.add_module(layer_name, res_layer)
            self.res_layers.append(layer_name)
        self.feat_dim = inplanes

    def forward(self, x):
        x = self.conv1(x)
        x = self.bn1(x)
        x = self.relu(x)
        x = self.maxpool(x)
        for layer_name in self.res_layers:
            res_layer = getattr(self, layer_name)
            x = res_layer(x)
        return x


class TSNHead(nn.Module):
    def __init__(self, num_classes, in_channels, num_segments):
        super().__init__()
        self.num_segments = num_segments
        self.avg_pool = nn.AdaptiveAvgPool2d((1, 1))
        self.dropout = nn.Dropout(p=0.4)
        self.fc_cls = nn.Linear(in_channels, num_classes)

    def forward(self, x, num_segs):
        x = self.avg_pool(x)  # [N * num_segs, in_channels, 1, 1]
        x = x.reshape((-1, num_segs) + x.shape[1:])  # [N, num_segs, in_channels, 1, 1]
        x = x.mean(dim=1)  # AvgConsensus
        x = self.dropout(x.view(x.size(0), -1))
        return self.fc_cls(x)


class Recognizer2D(nn.Module):
    def __init__(self, num_classes=5, num_segments=3):
        super().__init__()
        self.backbone = ResNet()
        self.cls_head = TSNHead(num_classes, self.backbone.feat_dim, num_segments)

    def forward_train(self, imgs, labels):
        batches = imgs.shape[0]
        imgs = imgs.reshape((-1,) + imgs.shape[2:])
        num_segs = imgs.shape[0] // batches
        x = self.backbone(imgs)
        cls_score = self.cls_head(x, num_segs)
        return F.cross_entropy(cls_score, labels), cls_score


model = Recognizer2D()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
imgs = torch.randn(2, 3, 3, 32, 32)  # N, num_segs, C, H, W
labels = torch.tensor([1, 4])
loss_cls, cls_score = model.forward_train(imgs, labels)
optimizer.zero_grad()
loss_cls.backward()
conv1_grad = model.backbone.conv1.weight.grad.clone()
layer2_grad = model.backbone.layer2[0].conv2.weight.grad.clone()
optimizer.step()
loss_cls = loss_cls.detach()
cls_score = cls_score.detach()
