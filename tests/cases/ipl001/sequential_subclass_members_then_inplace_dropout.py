# label: hazard raises
# why: the Sequential subclass builds its members through super().__init__(*modules) with a norm layer ending in an in-place ReLU that saves its output; the head's in-place Dropout2d then overwrites that output.
# source: https://github.com/bonlime/pytorch-tools/commit/251dee2d58545ca50c0a4766c6f35a107fac634d (shape of the bug, written again)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class NormAct(nn.Module):
    def __init__(self, channels, activation="relu"):
        super().__init__()
        self.bn = nn.BatchNorm2d(channels)
        self.activation = activation

    def forward(self, x):
        x = self.bn(x)
        return F.relu(x, inplace=True)


class ConvNormAct(nn.Sequential):
    def __init__(self, in_channels, out_channels, norm_layer=NormAct):
        modules = [
            nn.Conv2d(in_channels, out_channels, 3, padding=1, bias=False),
            norm_layer(out_channels, activation="relu"),
        ]
        super().__init__(*modules)


class Head(nn.Module):
    def __init__(self, channels, classes):
        super().__init__()
        self.block = ConvNormAct(channels, channels)
        self.dropout = nn.Dropout2d(0.2, inplace=True)
        self.classifier = nn.Conv2d(channels, classes, 1)

    def forward(self, x):
        x = self.block(x)
        x = self.dropout(x)  # <-- IPL001
        return self.classifier(x)


head = Head(4, 3)
out = head(torch.randn(2, 4, 8, 8))
out.sum().backward()
