# label: safe
# why: MobileNetV3 stem: Hardswish(inplace=True) after BatchNorm and Hardsigmoid gate; batch-norm saves its input so the inplace activation is fine
import torch
import torch.nn as nn

torch.manual_seed(0)

stem = nn.Sequential(
    nn.Conv2d(3, 8, 3, stride=2, padding=1, bias=False),
    nn.BatchNorm2d(8),
    nn.Hardswish(inplace=True),
    nn.Conv2d(8, 8, 3, padding=1, groups=8, bias=False),
    nn.BatchNorm2d(8),
    nn.ReLU(inplace=True),
)
gate = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Conv2d(8, 8, 1), nn.Hardsigmoid(inplace=True))

x = torch.randn(2, 3, 8, 8)
feat = stem(x)
out = feat * gate(feat)
loss = out.mean()
loss.backward()
